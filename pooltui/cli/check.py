"""`pooltui check SPEC` and `pooltui ir SPEC`: compile, then a summary or the IR as JSON."""

from __future__ import annotations

import sys

from pooltui.cli.output import emit
from pooltui.lang.errors import SpecError, escaped
from pooltui.lang.ir import Program
from pooltui.lang.words import count


def summary(program: Program) -> str:
    """`1 pool (4 members), 1 stage, 1 session class, 2,000 sessions`."""

    def part(items: tuple[object, ...], word: str) -> str:
        n = len(items)
        members = sum(getattr(x, "count", 1) for x in items)
        text = count(n, word)
        return text + (f" ({members:,} members)" if members != n else "")

    sessions = sum(s.count for s in program.sessions)
    return ", ".join(
        [
            part(program.pools, "pool"),
            part(program.stages, "stage"),
            count(len(program.sessions), "session class", "session classes"),
            count(sessions, "session"),
        ]
    )


def compile_or_say(spec: str) -> Program | None:
    """The compiled spec, or None once its errors are printed (one line when it cannot be
    read; the located errors and their count otherwise)."""
    from pooltui.lang.frontend import cannot_read, compile_bytes, read_spec

    try:
        data = read_spec(spec)
    except OSError as exc:
        print(f"pooltui: {cannot_read(spec, exc)}", file=sys.stderr)
        return None
    import os

    try:
        return compile_bytes(data, spec, os.path.dirname(os.path.abspath(spec)))
    except SpecError as exc:
        print(exc.render(), file=sys.stderr)
        print(count(len(exc.diagnostics), "error"), file=sys.stderr)
        return None


def run_check(spec: str) -> int:
    program = compile_or_say(spec)
    if program is None:
        return 1
    emit(f"{escaped(spec)}: ok — {summary(program)}")
    return 0


def run_ir(spec: str, rows: bool = False) -> int:
    program = compile_or_say(spec)
    if program is None:
        return 1
    from pooltui.lang.irjson import dumps

    emit(dumps(program, rows=rows))
    return 0
