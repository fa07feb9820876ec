"""Classes 2 and 3 (issue 14): depth the user chooses, and many errors.

Constants defined by chains and cycles of any length, nesting of every construct, and
thousands of independent errors of each kind: each ends in exit 0 or located errors (all
of them reported, one per mistake), within the subprocess-free budget of a test.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .helpers import assert_clean, assert_located, cli


def _write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "spec.pool"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("n", [170, 2000])
@pytest.mark.parametrize("order", ["next_first", "next_last"])
def test_constant_chains(
    n: int, order: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """C0 = C1 + 1, C1 = C2 + 1, …, Cn = 1: C0 is n + 1, in either order of declaration."""
    lines = [f"const C{i} = C{i + 1} + 1;" for i in range(n)] + [f"const C{n} = 1;"]
    if order == "next_first":
        lines.reverse()
    path = _write(tmp_path, "\n".join(lines) + "\nsession s { wait (C0); }\n")
    o = cli(["run", path, "--quiet"], capsys)
    assert_clean(o)
    assert o.code == 0, o.text()
    assert f"simulated {n + 1}s" in o.out, o.text()


@pytest.mark.parametrize("n", [2, 170, 3000])
def test_constant_cycles(n: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A cycle through n constants is one error, naming the whole cycle."""
    lines = [f"const C{i} = C{(i + 1) % n} + 1;" for i in range(n)]
    path = _write(tmp_path, "\n".join(lines) + "\nsession s { wait (C0); }\n")
    o = cli(["check", path], capsys)
    assert_located(o, path)
    assert "error: constant 'C0' depends on itself: C0 → C1 → " in o.err, o.text()
    assert o.err.rstrip().endswith("1 error"), o.text()


NESTINGS = {
    "parentheses": lambda n: "session s { x = " + "(" * n + "1" + ")" * n + "; }",
    "unary": lambda n: "session s { x = " + "-" * n + "1; }",
    "binary": lambda n: "session s { x = " + " + ".join(["1"] * n) + "; }",
    "conditional": lambda n: "session s { x = " + "1 ? " * n + "1" + " : 2" * n + "; }",
    "calls": lambda n: "session s { x = " + "abs(" * n + "1" + ")" * n + "; }",
    "if_else_if": lambda n: "session s { " + "if (1) { } else " * n + "{ } }",
    "repeat": lambda n: "session s { " + "repeat (1) { " * n + "}" * n + " }",
    "holds": lambda n: "pool kv { }\nsession s { " + "hold kv (1) { " * n + "}" * n + " }",
    "constants": lambda n: "const A = " + "(" * n + "1" + ")" * n + ";\nsession s { }",
}


@pytest.mark.parametrize("kind", sorted(NESTINGS))
@pytest.mark.parametrize("n", [150, 3000])
def test_nesting(kind: str, n: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Shallow enough: it compiles; deeper than the limit: a located error, not a crash."""
    path = _write(tmp_path, NESTINGS[kind](n) + "\n")
    o = cli(["check", path], capsys)
    assert_clean(o)
    if o.code == 1:
        assert_located(o, path)
        return
    for argv in (["ir", path], ["run", path, "--quiet", "--events", "2000"]):
        o = cli(argv, capsys)  # the IR's JSON and the simulator's closures nest as deep
        assert_clean(o)
        assert o.code == 0, o.text()


MANY = {
    "unknown_names": lambda i: f"  x{i} = y{i};",
    "unknown_pools": lambda i: f"  hold p{i} (1) {{ }}",
    "unknown_functions": lambda i: f"  x{i} = f{i}(1);",
    "unknown_stages": lambda i: f"  hold kv (1) {{ run g{i} prefill (1); }}",
    "constants_assigned": lambda i: f"  C{i} = 1;",
}


@pytest.mark.parametrize("kind", sorted(MANY))
def test_thousands_of_errors(kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Thousands of independent mistakes: as many located errors (the checker is linear in
    them; 4,000 unknown names took 115 s when it was quadratic)."""
    n = 4000 if kind == "unknown_names" else 1000
    consts = "".join(f"const C{i} = {i};\n" for i in range(n)) if kind.startswith("const") else ""
    body = "\n".join(MANY[kind](i) for i in range(n))
    path = _write(
        tmp_path, f"{consts}pool kv {{ }}\nstage gpu step {{ }}\nsession s {{\n{body}\n}}\n"
    )
    o = cli(["check", path], capsys)
    assert_located(o, path)
    assert o.err.rstrip().endswith(f"{n:,} errors"), o.err[-300:]
