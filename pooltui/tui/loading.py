"""Opening a spec for the debugger: compile it and build its simulation, or say why not in
the words `pooltui check` uses. Never a traceback. And compiling the expressions typed into
it (watches, breakpoint conditions) against the spec."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from pooltui.tui.driver import SimLike


def unreadable(path: str, error: str | None) -> bool:
    """Whether `load_spec`'s error says the spec could not even be read (missing, a
    directory, no permission), not that it does not compile."""
    from pooltui.lang.errors import escaped

    return error is not None and error.startswith(f"cannot read '{escaped(path)}': ")


def load_spec(path: str) -> tuple[SimLike | None, str | None]:
    """(simulation, None) or (None, the errors as `pooltui check` prints them; one that
    cannot be read without the `pooltui: ` of a command line: `cannot_read`, which
    `unreadable` tells)."""
    import os

    from pooltui.lang import SpecError
    from pooltui.lang.frontend import cannot_read, compile_bytes, read_spec

    try:
        data = read_spec(path)
    except OSError as exc:  # one line, as `pooltui check` says it
        return None, cannot_read(path, exc)
    try:
        program = compile_bytes(data, path, os.path.dirname(os.path.abspath(path)))
    except SpecError as exc:
        return None, check_text(exc)
    except OSError as exc:
        return None, cannot_read(path, exc)
    try:
        from pooltui.sim import Simulation

        return Simulation(program), None
    except SpecError as exc:
        return None, check_text(exc)
    except Exception as exc:  # never a traceback: say what failed
        return None, f"{path}: error: cannot start the simulation: {type(exc).__name__}: {exc}"


def check_text(exc: Any) -> str:
    """What `pooltui check` prints for a spec that does not compile: the located errors,
    then how many."""
    n = len(exc.diagnostics)
    return f"{exc.render()}\n{n:,} error{'' if n == 1 else 's'}"


def compile_expression(text: str, program: Any, *, watch: bool = False) -> Any:
    """A watch or a breakpoint condition compiled against `program`; its errors (a
    `SpecError`) name which it is."""
    import pooltui.lang as lang

    # The front end loads lazily (module __getattr__), so mypy sees an object here.
    compile_condition = cast(Callable[..., Any], lang.compile_condition)
    file, what = ("<watch>", "a watch") if watch else ("<condition>", "a breakpoint condition")
    return compile_condition(text, program, file, what=what)


def compile_watch(compile_watch_text: Callable[[str], Any], text: str) -> Any:
    """A kept watch compiled on a reloaded spec: its expression, or `Refused` with the new
    spec's first error, located in the watch's own text (`1:6: unknown pool 'kv'`)."""
    from pooltui.lang import SpecError
    from pooltui.lang.errors import SpecRuntimeError
    from pooltui.tui.commands import Refused

    try:
        return compile_watch_text(text)
    except SpecError as exc:
        first = exc.diagnostics[0]
        return Refused(SpecRuntimeError(first.message, first.span))
    except Exception as exc:  # never a traceback: its words
        return Refused(exc)
