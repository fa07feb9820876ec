"""Test-only helpers: ways to break a simulation on purpose, to see the invariants halt it.

The one module that writes the state behind the engine's back, on purpose; nothing but
tests may use it.
"""

from __future__ import annotations

from pooltui.sim import watch
from pooltui.sim.simulation import Simulation
from pooltui.sim.state import Hold, PoolState


def break_pool(sim: Simulation, pool_label: str) -> None:
    """Corrupt a pool's accounting at the frontier: it claims one more allocated block than
    its holds hold (and one fewer free). The next event's invariant check halts the run."""
    for p in sim.state.pools:
        if p.label == pool_label:
            p.allocated += 1
            if p.nfree():
                p.pop_free()  # a block nobody holds, and not free either
            return
    raise KeyError(pool_label)


def changed_hold(sim: Simulation, h: Hold) -> None:
    """Record that hold `h` was changed behind the rules' back, as a rule records its own
    changes (`watch.hold`): the per-event check then looks at it."""
    watch.hold(sim.engine, h)


def changed_entry(sim: Simulation, p: PoolState, sid: int) -> None:
    """Record that session `sid`'s entry in pool `p` was changed behind the rules' back."""
    watch.entry(sim.engine, p, sid)
