"""`Simulation`: the public face of the engine, with history (back, goto). STUB: being written."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pooltui.lang.ir import Expr, Program
from pooltui.sim.events import Event
from pooltui.sim.snapshot import Snapshot, Violation

Number = int | float


class Simulation:
    """Simulates `program`. One `step()` is one event.

    invariants: check language.md §8 after every event (a violation halts).
    history: keep checkpoints so back()/goto() work (off for headless speed runs).
    """

    program: Program

    def __init__(self, program: Program, *, invariants: bool = True, history: bool = True) -> None:
        raise NotImplementedError

    # --- moving forward
    def step(self) -> Event | None:
        """Apply the next event; return it (None when nothing more can happen or halted)."""
        raise NotImplementedError

    def step_iteration(self, stage: str | None = None) -> list[Event]:
        """Step until (and including) the next `iteration-end` (of `stage`, a member label,
        if given); stops early at a halt or the end."""
        raise NotImplementedError

    def run(self, until: float | None = None, events: int | None = None) -> None:
        """Step until simulated time would pass `until`, `events` more events, a halt or the end."""
        raise NotImplementedError

    def run_until(self, predicate: Callable[[Event], bool], limit: int | None = None) -> Event | None:
        """Step until an event satisfies `predicate` (returned), a halt, the end or `limit` steps."""
        raise NotImplementedError

    # --- moving back
    def back(self) -> Event | None:
        """Go back one event; return the event now current (None at the start)."""
        raise NotImplementedError

    def goto(self, index: int) -> None:
        """The state right after event `index` (-1: before the first event). Past the
        recorded log, simulates forward."""
        raise NotImplementedError

    # --- looking
    def snapshot(self) -> Snapshot:
        raise NotImplementedError

    def evaluate(self, expr: Expr) -> Number:
        """Evaluate a condition/watch (from pooltui.lang.compile_condition) now."""
        raise NotImplementedError

    @property
    def events(self) -> Sequence[Event]:
        """Every event recorded so far (the cursor may be behind the end after back())."""
        raise NotImplementedError

    @property
    def cursor(self) -> int:
        """Index of the last applied event; -1 at the start."""
        raise NotImplementedError

    @property
    def time(self) -> float:
        raise NotImplementedError

    @property
    def finished(self) -> bool:
        raise NotImplementedError

    @property
    def halted(self) -> str | None:
        """Why the simulation stopped: a violation, a failed check, a deadlock, a runtime error."""
        raise NotImplementedError

    @property
    def violation(self) -> Violation | None:
        raise NotImplementedError
