"""What each event changed, kept for the per-event invariant check (`invariants.check_event`).

The rules that change a hold (its blocks, size, computed prefix, reserve or place in a
queue) or a cache entry record it here, in a small set the next check reads and clears
(`hold`, `entry`: one call after the change, before the next event). Beside those sets the
`Watch` keeps what the check counted so far: each pool's allocated and cached blocks as
sums of their holds' and entries' blocks, and how many preempted holds each queue has.
They change by deltas, so an event's check costs what the event touched, and the global
sums of language.md §14 are compared with the pool's own counters in O(1).

A `Watch` belongs to an engine with invariants on (`Engine.watch`; None otherwise, when
recording is one attribute test): it is not simulation state, so checkpoints do not carry
it, and an engine made on a restored state starts its own by a full count (`start`).
Owns the sets and the kept sums; it reads the state and writes nothing there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pooltui.sim.state import Hold, PoolState, State

if TYPE_CHECKING:
    from pooltui.sim.engine import Engine

# A hold's place, as the watch saw it: not queued, queued, queued after a preemption.
OUT, QUEUED, PREEMPTED = 0, 1, 2


class Watch:
    __slots__ = ("allocated", "cached", "entries", "front", "holds", "resyncs", "seen", "seen_e")

    def __init__(self, npools: int) -> None:
        self.holds: dict[int, Hold] = {}  # touched since the last check, by key
        self.entries: dict[tuple[int, int], None] = {}  # touched (pool, sid)
        # What the check counted: a live hold's key -> its blocks * 4 + its place (only
        # holds with blocks or in a queue); an entry's (pool, sid) -> its blocks.
        self.seen: dict[int, int] = {}
        self.seen_e: dict[tuple[int, int], int] = {}
        self.allocated = [0] * npools  # the holds' blocks, by pool
        self.cached = [0] * npools  # the entries' blocks, by pool
        self.front = [0] * npools  # preempted holds in each queue
        self.resyncs = 0  # counted again after a change nobody recorded (a bug: tests see it)


def place(h: Hold) -> int:
    return (PREEMPTED if h.preempted else QUEUED) if h.queued else OUT


def start(s: State) -> Watch:
    """A watch that has counted the whole state `s` (an engine's first, or after a count
    disagreed with it)."""
    w = Watch(len(s.pools))
    for sess in s.live.values():
        for h in sess.holds:
            code = h.nblocks * 4 + place(h)
            if code:
                w.seen[h.key] = code
            w.allocated[h.pool] += h.nblocks
            if h.queued and h.preempted:
                w.front[h.pool] += 1
    for i, p in enumerate(s.pools):
        for sid, e in p.entries.items():
            if e.nblocks:
                w.seen_e[(i, sid)] = e.nblocks
            w.cached[i] += e.nblocks
    return w


# ---------------------------------------------------------------- recording (the rules call these)
def hold(eng: Engine, h: Hold) -> None:
    """Hold `h` changed (call after the change, before the next event)."""
    w = eng.watch
    if w is not None:
        w.holds[h.key] = h


def entry(eng: Engine, p: PoolState, sid: int) -> None:
    """Session `sid`'s cache entry in pool `p` changed, appeared or went."""
    w = eng.watch
    if w is not None:
        w.entries[(eng.pool_base[p.decl] + p.member, sid)] = None
