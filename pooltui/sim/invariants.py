"""Invariants: language.md §14 (the Pool reference's), checked after every event.

Two checks of the same invariants, with the same words:

- `check(state)`, the full count: reads the whole state and returns the first broken
  invariant as a `Violation`, or None. It is the reference (tests hold the other to it)
  and names the violation when one is found.
- `check_event(state, watch)`, the per-event check the engine runs: it reads what the
  event touched (the holds and entries the rules recorded in the `Watch`) and compares
  each pool's counters with the sums the watch keeps by deltas, so an event costs what it
  changed plus O(1) per pool and stage member. It runs one check per concern (the block
  accounting here; another concern adds its own function to `CONCERNS`).

Both write nothing to the state, so they can run after any event, at any moment of an
action; halting on a violation is the engine's business (`Engine.check_now`).
"""

from __future__ import annotations

from collections.abc import Callable

from pooltui.lang.words import number
from pooltui.sim.snapshot import Violation
from pooltui.sim.state import Entry, Hold, PoolState, Session, StageState, State
from pooltui.sim.watch import OUT, PREEMPTED, QUEUED, Watch, start

Steady = dict[int, tuple[int, int]]


# ---------------------------------------------------------------- the words (shared by both)
def _capacity(p: PoolState) -> Violation | None:
    if p.nblocks is not None and (p.allocated + p.cached) * p.block > p.cap:
        return Violation(
            "capacity",
            f"{p.label}: allocated + cached = {(p.allocated + p.cached) * p.block} "
            f"units > cap {number(p.cap)}",
            p.label,
        )
    if p.nblocks is not None and p.nfree() + p.allocated + p.cached != p.nblocks:
        return Violation(
            "blocks",
            f"{p.label}: {p.nfree()} free + {p.allocated} allocated + {p.cached} "
            f"cached blocks ≠ {p.nblocks} blocks",
            p.label,
        )
    return None


def _cached(p: PoolState, counted: int) -> Violation:
    return Violation(
        "cached",
        f"{p.label}: cached is {p.cached} blocks but its entries hold {counted}",
        p.label,
        tuple(b for e in p.entries.values() for b in e.phys),
    )


def _whole(p: PoolState, e: Entry) -> Violation | None:
    if e.units != e.nblocks * p.block:
        return Violation(
            "cached",
            f"{p.label}: an entry of {e.units} units is not {e.nblocks} whole blocks",
            p.label,
            tuple(e.phys),
        )
    return None


def _queue(p: PoolState) -> Violation:
    return Violation(
        "queue", f"{p.label}: a preempted hold sits behind a policy-ordered one", p.label
    )


def hold_violation(
    p: PoolState, sess: Session, h: Hold, size: int, computed: int
) -> Violation | None:
    if h.nblocks != -(-size // p.block):
        return Violation(
            "allocated",
            f"{p.label}: {sess.name} holds {size} units in {h.nblocks} blocks",
            p.label,
            tuple(h.phys),
        )
    if computed > size and not h.queued:
        return Violation(
            "computed",
            f"{p.label}: {sess.name} has computed {computed} > size {size}",
            p.label,
            tuple(h.phys),
        )
    if h.reserve is not None and size > h.reserve:
        return Violation(
            "reserve",
            f"{p.label}: {sess.name} holds {size} units > reserve {number(h.reserve)}",
            p.label,
            tuple(h.phys),
        )
    return None


def _allocated(p: PoolState, counted: int) -> Violation:
    return Violation(
        "allocated",
        f"{p.label}: allocated is {p.allocated} blocks but the holds hold {counted}",
        p.label,
    )


def _stage(st: StageState) -> Violation | None:
    if st.kind != "step":
        return None
    if len(st.residents) > st.seats:
        return Violation(
            "seats", f"{st.label}: {len(st.residents)} residents > seats {number(st.seats)}"
        )
    if st.budget_left < 0:
        return Violation("budget", f"{st.label}: the iteration passed its budget")
    return None


def _sessions(s: State) -> Violation | None:
    if s.counters["arrived"] != len(s.live) + s.counters["ended"]:
        return Violation(
            "sessions",
            f"arrived {s.counters['arrived']} ≠ live {len(s.live)} + ended {s.counters['ended']}",
        )
    return None


# ---------------------------------------------------------------- the full count
def check(s: State, steady: Steady | None = None) -> Violation | None:
    """The first broken invariant in state `s`, or None.

    `steady` gives, by hold key, the (computed, size) of holds whose figures the fast
    mode keeps lazily (its steady residents): what the per-event mode would have."""
    for p in s.pools:
        v = _capacity(p)
        if v is not None:
            return v
        cached = sum(e.nblocks for e in p.entries.values())
        if cached != p.cached:
            return _cached(p, cached)
        for e in p.entries.values():
            v = _whole(p, e)
            if v is not None:
                return v
        seen = 0
        for h in p.queue:
            if h.preempted:
                if seen:
                    return _queue(p)
            else:
                seen += 1
    allocated = [0] * len(s.pools)
    for sess in s.live.values():
        for h in sess.holds:
            allocated[h.pool] += h.nblocks
            size, computed = h.size, h.computed
            if steady is not None and h.key in steady:
                computed, size = steady[h.key]
            v = hold_violation(s.pools[h.pool], sess, h, size, computed)
            if v is not None:
                return v
    for i, p in enumerate(s.pools):
        if allocated[i] != p.allocated:
            return _allocated(p, allocated[i])
    for st in s.stages:
        v = _stage(st)
        if v is not None:
            return v
    return _sessions(s)


# ---------------------------------------------------------------- the per-event check
def check_event(s: State, w: Watch, steady: Steady | None = None) -> Violation | None:
    """What the full count would say after this event, at the cost of what the event
    touched (see the module's docstring). Each concern's check consumes its part of the
    watch. When one finds a violation, the full count names it (the first in its order,
    as without the watch). When the full count finds none, the watch missed a change (a
    rule that did not record it): it counts again, and the check goes on."""
    for concern in CONCERNS:
        if concern(s, w, steady) is not None:
            v = named(s, w, steady)
            if v is not None:
                return v
    return None


def named(s: State, w: Watch, steady: Steady | None = None) -> Violation | None:
    """A per-event check found a violation: the full count's first one, or None (and the
    watch counted again) when the full count finds none."""
    full = check(s, steady)
    if full is None:
        resync(s, w)
    return full


def resync(s: State, w: Watch) -> None:
    """Count the whole state again into `w` (its sums no longer matched the state's)."""
    fresh = start(s)
    w.holds.clear()
    w.entries.clear()
    w.seen, w.seen_e = fresh.seen, fresh.seen_e
    w.allocated, w.cached, w.front = fresh.allocated, fresh.cached, fresh.front
    w.resyncs += 1


def accounting(s: State, w: Watch, steady: Steady | None) -> Violation | None:
    """Blocks, entries, holds, queues, stages and sessions (language.md §14): the touched
    holds and entries, then every pool's and stage member's counters in O(1)."""
    pools = s.pools
    if w.holds:
        v = _touched_holds(s, w, steady)
        if v is not None:
            return v
    if w.entries:
        v = _touched_entries(s, w)
        if v is not None:
            return v
    allocated, cached = w.allocated, w.cached
    for i in range(len(pools)):  # (an index loop: zip costs more here, every event)
        p = pools[i]
        n = p.nblocks
        if n is not None:
            used = p.allocated + p.cached
            if used * p.block > p.cap or len(p.free) + n - p.fresh + used != n:
                return _capacity(p)
        if cached[i] != p.cached:
            return _cached(p, cached[i])
        if allocated[i] != p.allocated:
            return _allocated(p, allocated[i])
    for st in s.stages:
        if st.kind == "step" and (len(st.residents) > st.seats or st.budget_left < 0):
            return _stage(st)
    counters = s.counters
    if counters["arrived"] != len(s.live) + counters["ended"]:
        return _sessions(s)
    return None


def _touched_holds(s: State, w: Watch, steady: Steady | None) -> Violation | None:
    """Each touched hold: its own invariants (if still held), and its change of blocks and
    of place counted into the pool's sums. A hold that entered a queue (or changed its
    kind there) must stand in the queue's part for its kind: preempted ones first."""
    live, pools, seen = s.live, s.pools, w.seen
    entered: list[Hold] = []
    for h in w.holds.values():
        sess = live.get(h.sid)
        code = 0
        if sess is not None and h in sess.holds:
            size, computed = h.size, h.computed
            if steady is not None:
                figures = steady.get(h.key)
                if figures is not None:
                    computed, size = figures
            # `_hold`'s tests, inline: this runs for each hold an event touched.
            nblocks, queued, reserve = h.nblocks, h.queued, h.reserve
            if (
                nblocks != -(-size // pools[h.pool].block)
                or (computed > size and not queued)
                or (reserve is not None and size > reserve)
            ):
                return hold_violation(pools[h.pool], sess, h, size, computed)
            code = nblocks * 4 + ((PREEMPTED if h.preempted else QUEUED) if queued else OUT)
        old = seen.get(h.key, 0)
        if code == old:
            continue
        if code:
            seen[h.key] = code
        else:
            del seen[h.key]
        w.allocated[h.pool] += (code >> 2) - (old >> 2)
        was, now = old & 3, code & 3
        if was != now:
            w.front[h.pool] += (now == PREEMPTED) - (was == PREEMPTED)
            if now:
                entered.append(h)
    w.holds.clear()
    for h in entered:
        if not _in_its_part(pools[h.pool].queue, h, w.front[h.pool]):
            return _queue(pools[h.pool])
    return None


def _in_its_part(q: list[Hold], h: Hold, front: int) -> bool:
    """Whether h stands among the first `front` holds (a preempted one) or after them.
    Looked for from the end it enters at (the head, the tail): O(1) when it is there.
    With exactly `front` preempted holds in the queue and each that entered in its part,
    the preempted ones are all in front (the rest kept their order)."""
    if h.preempted:
        return any(q[i] is h for i in range(min(front, len(q))))
    return any(q[i] is h for i in range(len(q) - 1, front - 1, -1))


def _touched_entries(s: State, w: Watch) -> Violation | None:
    """Each touched entry: whole blocks, and its change of blocks counted into the sum."""
    pools, seen = s.pools, w.seen_e
    for key in w.entries:
        p = pools[key[0]]
        e = p.entries.get(key[1])
        n = 0
        if e is not None:
            v = _whole(p, e)
            if v is not None:
                return v
            n = e.nblocks
        old = seen.get(key, 0)
        if n != old:
            if n:
                seen[key] = n
            else:
                del seen[key]
            w.cached[key[0]] += n - old
    w.entries.clear()
    return None


# The per-event checks, one per concern, in order.
CONCERNS: list[Callable[[State, Watch, Steady | None], Violation | None]] = [accounting]
