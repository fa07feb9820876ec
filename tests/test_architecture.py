"""The import contracts of the architecture (docs/architecture.md): the debugger and the
command line reach the simulator only through its public API (snapshots, events, history,
the run summary), never its engine, state or other private modules, however the import is
spelled; no module of the package imports another that imports it back (no cycle, however
long); the core never imports the UI layers; nothing in the package evaluates spec text."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "pooltui"
PUBLIC_SIM = {"pooltui.sim", "pooltui.sim.events", "pooltui.sim.snapshot", "pooltui.sim.summary"}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(PKG.rglob("*.py"))}


def _type_checking_only(node: ast.AST) -> bool:
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(path: Path) -> set[str]:
    """Every module `path` imports at run time (anywhere but under `if TYPE_CHECKING:`),
    with `from package import module` counted as importing the module itself."""
    this = _module_name(path)
    package = this if path.name == "__init__.py" else this.rpartition(".")[0]
    out: set[str] = set()

    def visit(node: ast.AST) -> None:
        if _type_checking_only(node):
            return
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolve against this module's package
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            named = [f"{base}.{alias.name}" for alias in node.names]
            out.update(n for n in named if n in MODULES)
            if any(n not in MODULES for n in named):
                out.add(base)  # a name defined in the package's __init__ (its façade)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return out


def _graph() -> dict[str, set[str]]:
    """The package's own import graph. Importing `a.b.c` runs `a` and `a.b` first, but a
    package's `__init__` importing its own submodules is the usual façade, not a cycle, so
    only the named module is an edge."""
    return {m: {i for i in _imports(p) if i in MODULES and i != m} for m, p in MODULES.items()}


def test_the_import_graph_sees_submodules_named_by_from_imports() -> None:
    # The spelling the old contract missed: `from pooltui.sim import engine`.
    assert "pooltui.sim.events" in _imports(MODULES["pooltui.sim"])


def test_tui_and_cli_use_only_the_public_simulator_api() -> None:
    offenders = []
    for name, path in MODULES.items():
        if not name.startswith(("pooltui.tui", "pooltui.cli")):
            continue
        for mod in _imports(path):
            if mod.startswith("pooltui.sim") and mod not in PUBLIC_SIM:
                offenders.append(f"{name} imports {mod}")
    assert offenders == []


def test_core_never_imports_the_ui_layers() -> None:
    for name, path in MODULES.items():
        if not name.startswith(("pooltui.lang", "pooltui.sim")):
            continue
        for mod in _imports(path):
            assert mod.split(".")[0] not in ("textual", "rich"), f"{name} imports {mod}"
            assert not mod.startswith(("pooltui.tui", "pooltui.cli")), f"{name} imports {mod}"


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm,
    iterative): each is an import cycle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    cycles: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(sorted(graph[root])))]
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while not component or component[-1] != node:
                    component.append(stack.pop())
                    on_stack.discard(component[-1])
                if len(component) > 1:
                    cycles.append(sorted(component))
    return cycles


def test_the_cycle_finder_finds_long_cycles_and_only_them() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"f"}, "f": set()}
    assert _cycles(graph) == [["a", "b", "c"]]


def test_no_import_cycles_in_the_package() -> None:
    assert _cycles(_graph()) == []


def test_no_eval_or_exec_in_the_package() -> None:
    for path in MODULES.values():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                assert node.func.id not in ("eval", "exec", "compile"), f"{path}:{node.lineno}"


def test_every_module_says_what_it_owns_and_stays_small() -> None:
    # One concern per module (docs/architecture.md): each opens with a docstring saying what
    # it owns, and none grows past 700 lines.
    missing = [name for name, path in MODULES.items() if not ast.get_docstring(_tree(path))]
    long = [
        f"{name} ({n} lines)"
        for name, path in MODULES.items()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > 700
    ]
    assert missing == [] and long == []


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))
