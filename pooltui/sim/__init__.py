"""The simulator: a deterministic, rewindable engine over a compiled `Program`.

Public API (the debugger, the command line and the tests use only these):

    sim = Simulation(program, invariants=True)
    sim.step() -> Event | None            # exactly one event; None when nothing more happens
    sim.step_iteration(stage=None)        # events up to and including the next `iteration-end`
    sim.run(until=T, events=N)            # stops early at a halt (violation, check, deadlock)
    sim.run_until(predicate)              # first event e with predicate(e) true (or None)
    sim.skip(n, whole=False)              # n events on, no `Event` made (whole: to an action end)
    sim.back() / sim.goto(index)          # history: state right after event `index`
    sim.probe(exprs)                      # conditions evaluated as each event happens
    sim.values_until(exprs, last)         # their values after each event up to `last`, one replay
    sim.events_reader()                   # `.upto(n)`: the first n events, for another thread
    sim.snapshot() -> Snapshot            # immutable; safe to hand to another thread
    sim.evaluate(expr) -> number          # a breakpoint condition / watch at the current state
    sim.events, sim.cursor, sim.time, sim.finished, sim.halted, sim.violation
    build_label() -> str                  # "pure Python" or "compiled (mypyc)"

State is plain data (no generators or threads inside), so it can be checkpointed and
replayed; `Simulation` is not thread-safe: one thread drives it at a time.
"""

from typing import TYPE_CHECKING, Any

from pooltui.sim.collector import hold_collector, release_collector
from pooltui.sim.compiled import build_label
from pooltui.sim.eventlog import EventLog
from pooltui.sim.events import HALTING, MOMENTS, Event, Violation
from pooltui.sim.simulation import Simulation
from pooltui.sim.summary import ClassSummary, PoolSummary, RunSummary

if TYPE_CHECKING:
    from pooltui.sim.snapshot import (
        BlockMap,
        BlockOwner,
        Counts,
        EntryView,
        HoldView,
        LinkJobView,
        PoolView,
        QueueItemView,
        ResidentView,
        SessionView,
        Shown,
        Snapshot,
        StageView,
    )

_SNAPSHOT = frozenset(
    {"BlockMap", "BlockOwner", "Counts", "EntryView", "HoldView", "LinkJobView", "PoolView",
     "QueueItemView", "ResidentView", "SessionView", "Shown", "Snapshot", "StageView"}
)  # fmt: skip


def __getattr__(name: str) -> Any:
    """The snapshot's types, loaded when first asked for (a headless run makes none)."""
    if name in _SNAPSHOT:
        from pooltui.sim import snapshot

        return getattr(snapshot, name)
    raise AttributeError(f"module 'pooltui.sim' has no attribute {name!r}")


__all__ = [
    "HALTING",
    "MOMENTS",
    "BlockMap",
    "BlockOwner",
    "ClassSummary",
    "Counts",
    "EntryView",
    "Event",
    "EventLog",
    "HoldView",
    "LinkJobView",
    "PoolSummary",
    "PoolView",
    "QueueItemView",
    "ResidentView",
    "RunSummary",
    "SessionView",
    "Shown",
    "Simulation",
    "Snapshot",
    "StageView",
    "Violation",
    "build_label",
    "hold_collector",
    "release_collector",
]
