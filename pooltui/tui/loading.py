"""Opening a spec for the debugger: compile it and build its simulation, or say why not in
the words `pooltui check` uses. Never a traceback."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from pooltui.tui.driver import SimLike


def load_spec(path: str) -> tuple[SimLike | None, str | None]:
    """(simulation, None) or (None, the errors exactly as `pooltui check` prints them)."""
    from pooltui.lang import SpecError

    try:
        import pooltui.lang as lang

        program = cast(Callable[[str], Any], lang.compile_file)(path)
    except SpecError as exc:
        return None, check_text(exc)
    except OSError as exc:
        return None, f"pooltui: cannot read '{path}': {exc.strerror or exc}"
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
