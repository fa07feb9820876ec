"""What each event changed, kept for the per-event invariant check (`invariants.check_event`).

The rules that change a hold (its blocks, size, computed prefix, reserve or place in a
queue) record it here, in a small set the next check reads and clears (`hold`: one call
after the change, before the next event). The two changes every iteration makes to each
resident are recorded by what they changed, so the check looks only at the invariants
they can break: a hold grown (`grown`: more units, and the blocks for them) and a hold
whose computed prefix advanced (`advanced`), each appended by its one rule
(`blocks.extend_to`, `iterations.apply_tokens`) without a call per resident. Beside it
the `Watch` keeps what the check counted so far: how many preempted holds each queue
has, by deltas, so an event's check costs what the event touched. The blocks themselves
(counts, entries, registrations) are the ledgers' business: each ledger notes what its
own steps touch (`Ledger.track`), and the `Watch` carries the figures that check keeps
(`ledgers`, `ledgercheck.Shadows`).

A `Watch` belongs to an engine with invariants on (`Engine.watch`; None otherwise, when
recording is one attribute test): it is not simulation state, so checkpoints do not carry
it, and an engine made on a restored state starts its own by a full count (`start`).
Owns the set and the kept figures; it reads the state and writes nothing there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pooltui.sim.ledgercheck import Shadows
from pooltui.sim.state import Hold, State

if TYPE_CHECKING:
    from pooltui.sim.engine import Engine

# A hold's place, as the watch saw it: not queued, queued, queued after a preemption.
OUT, QUEUED, PREEMPTED = 0, 1, 2


class Watch:
    __slots__ = ("advanced", "front", "grown", "holds", "ledgers", "reloading", "resyncs", "seen")

    def __init__(self, npools: int) -> None:
        self.holds: dict[int, Hold] = {}  # touched since the last check, by key
        # Touched since the last check by one change alone (a hold may be listed twice):
        # its size grown with its table (nothing else), its computed prefix advanced.
        self.grown: list[Hold] = []
        self.advanced: list[Hold] = []
        # What the check counted: a queued hold's key -> its place (only holds in a queue).
        self.seen: dict[int, int] = {}
        self.front = [0] * npools  # preempted holds in each queue
        # The ledgers' figures (content-and-reload.md §4), built by a full check of each
        # ledger at the first check.
        self.ledgers = Shadows()
        self.reloading: dict[int, Hold] = {}  # holds whose reload is in flight, by key
        self.resyncs = 0  # counted again after a change nobody recorded (a bug: tests see it)


def place(h: Hold) -> int:
    return (PREEMPTED if h.preempted else QUEUED) if h.queued else OUT


def start(s: State) -> Watch:
    """A watch that has counted the whole state `s` (an engine's first, or after a count
    disagreed with it)."""
    w = Watch(len(s.pools))
    for sess in s.live.values():
        for h in sess.holds:
            code = place(h)
            if code:
                w.seen[h.key] = code
            if code == PREEMPTED:
                w.front[h.pool] += 1
            if h.reloading:
                w.reloading[h.key] = h
    return w


# ---------------------------------------------------------------- recording (the rules call these)
def hold(eng: Engine, h: Hold) -> None:
    """Hold `h` changed (call after the change, before the next event)."""
    w = eng.watch
    if w is not None:
        w.holds[h.key] = h
