"""The import contracts of the architecture (DEVELOPERS.md): the debugger and the command
line reach the simulator only through its public API (snapshots, events, history, the run
summary), never its engine or state; nothing in the package evaluates spec text."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "pooltui"
PUBLIC_SIM = {"pooltui.sim", "pooltui.sim.events", "pooltui.sim.snapshot", "pooltui.sim.summary"}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def test_tui_and_cli_use_only_the_public_simulator_api() -> None:
    offenders = []
    for part in ("tui", "cli"):
        for path in sorted((PKG / part).rglob("*.py")):
            for mod in _imports(path):
                if mod.startswith("pooltui.sim") and mod not in PUBLIC_SIM:
                    offenders.append(f"{path.relative_to(PKG)} imports {mod}")
    assert offenders == []


def test_core_never_imports_the_ui_layers() -> None:
    for part in ("lang", "sim"):
        for path in sorted((PKG / part).rglob("*.py")):
            for mod in _imports(path):
                root = mod.split(".")[0]
                assert root not in ("textual", "rich"), f"{path} imports {mod}"
                assert not mod.startswith(("pooltui.tui", "pooltui.cli")), f"{path} imports {mod}"


def test_no_eval_or_exec_in_the_package() -> None:
    for path in sorted(PKG.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                assert node.func.id not in ("eval", "exec", "compile"), f"{path}:{node.lineno}"
