"""Invariants: language.md §14 (the Pool reference's, and content-and-reload.md §4 for the
blocks: each pool's ledger against the holds' block tables, through `ledgercheck`; links'
lanes and reloading holds, §3), checked after every event.

Two checks of the same invariants, with the same words:

- `check(state)`, the full count: reads the whole state and returns the first broken
  invariant as a `Violation`, or None. It is the reference (tests hold the other to it)
  and names the violation when one is found.
- `check_event(state, watch)`, the per-event check the engine runs: it reads what the
  event touched (the holds the rules recorded in the `Watch`, the blocks, entries and
  tables each ledger noted) and compares each pool's figures with those the watch keeps
  by deltas, so an event costs what it changed plus O(1) per pool and stage member. It
  runs one check per concern (`CONCERNS`: the holds, queues, stages, links, reloads in
  flight and sessions here; the ledgers' blocks in `ledgercheck`).

Neither changes what the simulation reads (the per-event check empties the ledgers' notes
of what changed), so they can run after any event, at any moment of an action; halting
on a violation is the engine's business (`Engine.check_now`).
"""

from __future__ import annotations

from collections.abc import Callable

from pooltui.lang.words import number
from pooltui.sim import ledgercheck
from pooltui.sim.events import Violation
from pooltui.sim.state import S_FOREVER, S_RELOADING, Hold, PoolState, Session, StageState, State
from pooltui.sim.watch import PREEMPTED, QUEUED, Watch, start

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


def _queue(p: PoolState) -> Violation:
    return Violation(
        "queue", f"{p.label}: a preempted hold sits behind a policy-ordered one", p.label
    )


def hold_violation(
    p: PoolState, sess: Session, h: Hold, size: int, computed: int, steady: bool = False
) -> Violation | None:
    """A hold's own invariants; `steady`: its figures are the fast mode's lazy ones (its
    table's size then lags behind, and is not compared)."""
    bs = h.table.blocks
    if len(bs) != -(-size // p.block):
        return Violation(
            "allocated",
            f"{p.label}: {sess.name} holds {size} units in {len(bs)} blocks",
            p.label,
            tuple(bs),
        )
    if not steady and h.table.size != size:
        return Violation(
            "allocated",
            f"{p.label}: {sess.name} holds {size} units but its table {h.table.size}",
            p.label,
            tuple(bs),
        )
    if computed > size and not h.queued:
        return Violation(
            "computed",
            f"{p.label}: {sess.name} has computed {computed} > size {size}",
            p.label,
            tuple(bs),
        )
    if h.reserve is not None and size > h.reserve:
        return Violation(
            "reserve",
            f"{p.label}: {sess.name} holds {size} units > reserve {number(h.reserve)}",
            p.label,
            tuple(bs),
        )
    return None


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
    # A reload's own words first: a loading block counted as registered breaks §4 too.
    v = links_and_reloads(s)
    if v is not None:
        return v
    v = ledgercheck.violation(s)  # every block of every pool (content-and-reload.md §4)
    if v is not None:
        return v
    for p in s.pools:
        seen = 0
        for h in p.queue:
            if h.preempted:
                if seen:
                    return _queue(p)
            else:
                seen += 1
    for sess in s.live.values():
        for h in sess.holds:
            size, computed = h.size, h.computed
            lazy = steady is not None and h.key in steady
            if steady is not None and lazy:
                computed, size = steady[h.key]
            v = hold_violation(s.pools[h.pool], sess, h, size, computed, lazy)
            if v is not None:
                return v
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


def links_and_reloads(s: State) -> Violation | None:
    """Each link's lanes (no more jobs in service than lanes; none waiting while a lane is
    free), and content-and-reload.md §3 and §4 for reloads: a reloading hold is admitted,
    its session stands still (reloading) and is no stage's resident, nor waits for a seat
    or has tokens; it has exactly one reload job and every reload job names a reloading
    hold; its computed is its hit + the units it reloads, within its size, and only its
    hit's blocks are registered (the loading ones cannot be hit yet)."""
    v = _lanes(s)
    if v is not None or s.counters["reloads"] == 0:
        return v  # (no reload ever started: no hold can be reloading, no job names one)
    held = [(sess, h) for sess in s.live.values() for h in sess.holds if h.reloading]
    return _reloads(s, held, every=True)


def _lanes(s: State) -> Violation | None:
    for st in s.stages:
        if st.kind != "link":
            continue
        if len(st.jobs) > st.lanes:
            return Violation("lanes", f"{st.label}: {len(st.jobs)} jobs on {st.lanes} lanes")
        if st.waiting_jobs and len(st.jobs) < st.lanes:
            return Violation("lanes", f"{st.label}: jobs wait while a lane is free")
    return None


def _reloads(s: State, held: list[tuple[Session, Hold]], every: bool) -> Violation | None:
    """The reloading holds `held` against the links' reload jobs; `every`: `held` is every
    reloading hold, so a job naming none of them is a violation too."""
    jobs: dict[int, int] = {}  # hold key -> reload jobs naming it
    for st in s.stages:
        if st.kind == "link":
            for queue in (st.jobs, st.waiting_jobs):
                for job in queue:
                    if job.kind == "reload":
                        jobs[job.hold] = jobs.get(job.hold, 0) + 1
    seated: set[int] = set()
    for st in s.stages:
        seated.update(st.residents)
        seated.update(st.joining)
        seated.update(st.scheduled)
    for sess, h in held:
        p = s.pools[h.pool]
        if jobs.pop(h.key, 0) != 1:
            return Violation(
                "reload", f"{p.label}: {sess.name}'s reload has not exactly one job", p.label
            )
        where = f"{p.label}: {sess.name} is reloading"
        if h.queued or sess.state not in (S_RELOADING, S_FOREVER):
            return Violation("reload", f"{where} but is {sess.state}", p.label)
        if sess.sid in seated:
            return Violation("reload", f"{where} and is a resident of a stage", p.label)
        hit = h.computed - h.reload_units
        t = h.table
        if h.reload_units <= 0 or hit < 0 or hit % p.block or h.computed > h.size:
            return Violation(
                "reload",
                f"{where} {h.reload_units} units past a hit of {hit}, size {h.size}",
                p.label,
                tuple(t.blocks),
            )
        if t.nreg != hit // p.block:
            return Violation(
                "reload",
                f"{where}: {t.nreg} blocks registered, its hit is {hit // p.block}",
                p.label,
                tuple(t.blocks),
            )
    if jobs and every:
        return Violation("reload", "a reload job names no reloading hold")
    return None


def reloads_in_flight(s: State, w: Watch) -> Violation | None:
    """The reloads in flight (`accounting` calls it once a reload has started): the
    touched holds update the watch's set of reloading ones, and while that set is not
    empty each of its holds is checked against the links' jobs. A reload job only appears
    when its hold starts reloading (a touched hold), so a run without reloads in flight
    pays nothing more."""
    reloading, live = w.reloading, s.live
    for h in w.holds.values():
        if h.reloading:
            reloading[h.key] = h
        else:
            reloading.pop(h.key, None)
    if not reloading:
        return None
    held: list[tuple[Session, Hold]] = []
    for key, h in list(reloading.items()):
        sess = live.get(h.sid)
        if sess is None or h not in sess.holds:  # its session ended (the end of the run)
            del reloading[key]
        else:
            held.append((sess, h))
    return _reloads(s, held, every=len(held) == len(reloading))


def named(s: State, w: Watch, steady: Steady | None = None) -> Violation | None:
    """A per-event check found a violation: the full count's first one, or None (and the
    watch counted again) when the full count finds none."""
    full = check(s, steady)
    if full is None:
        resync(s, w)
    return full


def resync(s: State, w: Watch) -> None:
    """Count the whole state again into `w` (its sums no longer matched the state's); the
    ledgers' figures are counted again at the next check."""
    fresh = start(s)
    w.holds.clear()
    w.seen, w.front = fresh.seen, fresh.front
    w.ledgers = fresh.ledgers
    w.resyncs += 1


def accounting(s: State, w: Watch, steady: Steady | None) -> Violation | None:
    """Capacity, holds, queues, stages and sessions (language.md §14), links' lanes and
    reloads in flight (§3): the reloading holds and the touched holds, then every pool's
    and stage member's figures in O(1)."""
    counters = s.counters
    if counters["reloads"]:  # (first: it reads the touched holds, which the next empties)
        v = reloads_in_flight(s, w)
        if v is not None:
            return v
    if w.grown or w.advanced:
        v = _grown_and_advanced(s, w, steady)
        if v is not None:
            return v
    if w.holds:
        v = _touched_holds(s, w, steady)
        if v is not None:
            return v
    for p in s.pools:
        n = p.nblocks
        if n is not None:
            L = p.ledger
            used = L.allocated + L.cached
            if used * p.block > p.cap or len(L.free) + L.fresh + used != n:
                return _capacity(p)
    for st in s.stages:
        if st.kind == "step":
            if len(st.residents) > st.seats or st.budget_left < 0:
                return _stage(st)
        elif len(st.jobs) > st.lanes or (st.waiting_jobs and len(st.jobs) < st.lanes):
            return _lanes(s)
    if counters["arrived"] != len(s.live) + counters["ended"]:
        return _sessions(s)
    return None


def _grown_and_advanced(s: State, w: Watch, steady: Steady | None) -> Violation | None:
    """The holds touched by one change alone, checked for what that change can break: a
    grown hold's blocks, its table's size and its reserve (its computed prefix stands
    within the size it had); an advanced one's computed prefix within its size. (A hold
    that also left meanwhile was recorded as such: `_touched_holds` sees to it.) What
    breaks is named by the full count; in the fast mode, whose steady residents' figures
    are lazy, each is checked as any change."""
    grown, advanced = w.grown, w.advanced
    if steady is not None:
        holds = w.holds
        for h in grown:
            holds[h.key] = h
        for h in advanced:
            holds[h.key] = h
        grown.clear()
        advanced.clear()
        return None
    pools = s.pools
    block = pools[0].block if len(pools) == 1 else 0  # (one pool: its block, read once)
    broken: Hold | None = None
    for h in grown:
        size, t = h.size, h.table
        if (
            t.size != size
            or len(t.blocks) != -(-size // (block or pools[h.pool].block))
            or (h.reserve is not None and size > h.reserve)
        ):
            broken = h
            break
    if broken is None:
        for h in advanced:
            if h.computed > h.size and not h.queued:
                broken = h
                break
    grown.clear()
    advanced.clear()
    return None if broken is None else _hold_broken(s, broken)


def _hold_broken(s: State, h: Hold) -> Violation:
    """That h's figures broke (a signal: the caller's full count names what broke)."""
    p = s.pools[h.pool]
    sess = s.live.get(h.sid)
    name = sess.name if sess is not None else f"hold {h.key}"
    return Violation("allocated", f"{p.label}: {name}'s figures broke", p.label)


def _touched_holds(s: State, w: Watch, steady: Steady | None) -> Violation | None:
    """Each touched hold: its own invariants (if still held), and its change of place
    counted into the queue's sums. A hold that entered a queue (or changed its kind
    there) must stand in the queue's part for its kind: preempted ones first."""
    live, pools, seen = s.live, s.pools, w.seen
    entered: list[Hold] = []
    for h in w.holds.values():
        sess = live.get(h.sid)
        if sess is not None and h in sess.holds:
            # `hold_violation`'s tests, inline: this runs for each hold an event touched.
            size, t, queued = h.size, h.table, h.queued
            figures = None if steady is None else steady.get(h.key)
            if figures is None:
                if (
                    len(t.blocks) != -(-size // pools[h.pool].block)
                    or t.size != size
                    or (h.computed > size and not queued)
                    or (h.reserve is not None and size > h.reserve)
                ):
                    return hold_violation(pools[h.pool], sess, h, size, h.computed)
            else:  # the fast mode's lazy figures: its table's size lags behind
                computed, size = figures
                if (
                    len(t.blocks) != -(-size // pools[h.pool].block)
                    or (computed > size and not queued)
                    or (h.reserve is not None and size > h.reserve)
                ):
                    return hold_violation(pools[h.pool], sess, h, size, computed, True)
            if not queued:
                if h.key not in seen:
                    continue  # (most: an admitted hold that was not queued either)
                code = 0
            else:
                code = PREEMPTED if h.preempted else QUEUED
        elif h.table.blocks:  # a hold that left holds no blocks (the ledgers' check trusts it)
            return _left_holding(pools[h.pool], h)
        else:
            code = 0
        old = seen.get(h.key, 0)
        if code == old:
            continue
        if code:
            seen[h.key] = code
        else:
            del seen[h.key]
        w.front[h.pool] += (code == PREEMPTED) - (old == PREEMPTED)
        if code:
            entered.append(h)
    w.holds.clear()
    for h in entered:
        if not _in_its_part(pools[h.pool].queue, h, w.front[h.pool]):
            return _queue(pools[h.pool])
    return None


def _left_holding(p: PoolState, h: Hold) -> Violation:
    bs = h.table.blocks
    return Violation(
        "count", f"{p.label}: hold {h.key} left its session holding {len(bs)} blocks", p.label
    )


def _in_its_part(q: list[Hold], h: Hold, front: int) -> bool:
    """Whether h stands among the first `front` holds (a preempted one) or after them.
    Looked for from the end it enters at (the head, the tail): O(1) when it is there.
    With exactly `front` preempted holds in the queue and each that entered in its part,
    the preempted ones are all in front (the rest kept their order)."""
    if h.preempted:
        return any(q[i] is h for i in range(min(front, len(q))))
    return any(q[i] is h for i in range(len(q) - 1, front - 1, -1))


def ledgers(s: State, w: Watch, steady: Steady | None) -> Violation | None:
    """Each pool's blocks (content-and-reload.md §4): what each ledger noted as changed,
    against the figures the watch keeps (`ledgercheck`)."""
    return ledgercheck.violation(s, w.ledgers)


# The per-event checks, one per concern, in order.
CONCERNS: list[Callable[[State, Watch, Steady | None], Violation | None]] = [
    accounting,
    ledgers,
]
