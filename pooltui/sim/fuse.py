"""The fast mode's fused stretches: how many blocks one may take, and its crossings in bulk.

A fused stretch (`fast.FastEngine.iteration_end`) stands for iterations in which only
steady decoding happens. In the per-event mode each of those iterations, after its
crossings, tries each of the stage's pools' queues again: a FIFO queue's head (`admit.
select`), and nothing after it, since a blocked attempt stops the queue and a pure stretch
starts from an iteration that admitted nobody. The stretch is exact only if every one of
those attempts fails as the one at its start did. It does, as long as the head's plan is
the same and the room it is measured against has not grown:

- the room (free + never used + cached blocks, `Ledger.room`) only shrinks: each crossing
  takes one block, a free one or one it evicts; nothing is released or admitted;
- the plan (`admit.plan_hold`) reads the budget left, the seats, the hold's own figures
  and E, the longest run of its content's registered blocks (`blocks.longest`). A pure
  stretch changes none but E, and E only by evicting one of E's own blocks: a lookup walks
  the chain's hashes taking each one's first copy, so evicting a later copy or any block
  of another chain leaves what it reads as it was. (The blocks a stretch registers are
  its steady residents' private ones, which no waiting hold's chain holds: `fast.py`.)
  With E the same, the hit, its cached part, the units, need and reserve are the same,
  and `fits` fails again with less room.

So while a hold waits, a stretch may evict cache up to, not including, the first block of
the head's E that eviction would reach (`room`). Under `evict lru` that order is known
in advance: entries in release order, each from its tail. Under `evict by` the keys are
worked out at each eviction and may read the clock: there a stretch takes only free blocks
while a hold waits.

`cross` gives a pool's crossing holds their next block each, as `blocks.one_more_block`
one after another would, evicting the same blocks in one pass per entry (the lean mode:
the evict events are counted, not made; the last one is made, for a halt's message).

A stretch stands for attempts only where they are all alike: `fusable` (no checks, no
spills, no attempt that reads the time) and `drawing` (holds whose attempt draws from
their session's stream: none may head a queue while a stretch runs).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pooltui.lang.ir import Draw, Hold, Run, Var
from pooltui.sim import admit, blocks, watch
from pooltui.sim.codes import Number
from pooltui.sim.state import Hold as HoldState
from pooltui.sim.state import PoolState
from pooltui.sim.tables import Tables

if TYPE_CHECKING:
    from pooltui.sim.engine import Engine


def _reads(expr: object, names: set[str]) -> bool:
    """Whether an expression reads any of the context variables `names` (or draws, when
    `names` holds "draw")."""
    if isinstance(expr, Var):
        return expr.name in names
    if isinstance(expr, Draw) and "draw" in names:
        return True
    for field in getattr(expr, "__slots__", ()):
        value = getattr(expr, field, None)
        if isinstance(value, tuple):
            if any(_reads(v, names) for v in value):
                return True
        elif (
            value is not None and not isinstance(value, str | int | float) and _reads(value, names)
        ):
            return True
    return False


def attempt_exprs(stmt: Hold) -> list[object]:
    """What an admission attempt of a `hold` statement evaluates: its header, and the
    amount of the run its body opens with (the tokens it would take)."""
    first = stmt.body[0] if stmt.body else None
    amount = first.amount if isinstance(first, Run) else None
    return [e for e in (stmt.units, stmt.need, stmt.reserve, amount) if e is not None]


def fusable(tables: Tables) -> bool:
    """Whether stretches may be fused at all: no checks; no spills (one started by a
    stretch's eviction would land in its middle); no attempt that reads the time."""
    timeless = not any(
        _reads(e, {"now", "waited"})
        for body in tables.bodies
        for stmt in body
        if isinstance(stmt, Hold)
        for e in attempt_exprs(stmt)
    )
    spills = any(pd.spill_when is not None for pd in tables.pools)
    return timeless and not tables.checks and not spills


def drawing(tables: Tables) -> set[tuple[int, int]]:
    """The `hold` statements (body, position) whose attempt draws: each attempt moves the
    session's stream (language.md §10), so a stretch may not stand for one."""
    return {
        (b, i)
        for b, body in enumerate(tables.bodies)
        for i, stmt in enumerate(body)
        if isinstance(stmt, Hold) and any(_reads(e, {"draw"}) for e in attempt_exprs(stmt))
    }


def guard(eng: Engine, p: PoolState, bound: int) -> tuple[Number, int | None]:
    """(blocks a fused stretch may take in pool p, the hash the queue head's lookup
    would take next: a stretch may not register it; None when no hold waits).
    `bound`: more blocks than the stretch could want."""
    L = p.ledger
    if not p.queue:
        return blocks.available(p), None
    content = admit.select(eng, p).table.content
    found = blocks.longest(p, content)
    after = content.block_hash(len(found.blocks), p.block)
    if L.total < 0:
        return blocks.available(p), after
    free = len(L.free) + L.fresh
    if eng.t.pools[p.decl].evict_keys is not None:
        return free, after
    ref, bentry = L.ref, L.bentry
    guarded = {b for b in found.blocks if ref[b] == 0}  # a held block is never evicted
    if not guarded:
        return free + L.cached, after
    touched = {bentry[b] for b in guarded}  # the entries holding them
    n = 0  # cached blocks evicted before the first of E
    for e in L.entries.values():
        k = len(e.blocks)
        if e.order in touched:  # tail first: the blocks after E's last one here go first
            i = k - 1
            while e.blocks[i] not in guarded:
                i -= 1
            return free + n + (k - 1 - i), after
        n += k
        if n >= bound:
            break
    return free + n, after


def cross(eng: Engine, p: PoolState, holds: list[HoldState]) -> None:
    """Each hold (steady residents crossing into their next block, in order) gets one
    block, as `blocks.one_more_block` one after another would give them: the free ones
    first (the stack's top first), then each hold the block it evicts. The evictions are
    taken entry by entry, tail first, and put on the free stack in the order the holds
    take them; each counts as its own `evict` event (one per crossing, of one block)."""
    L = p.ledger
    s = eng.s
    B = p.block
    n = len(holds)
    k = n if L.total < 0 else min(n, len(L.free) + L.fresh)
    for h in holds[:k]:
        L.grow(h.table, (len(h.table.blocks) + 1) * B)
        watch.hold(eng, h)
    rest = holds[k:]
    if not rest:
        return
    pd = eng.t.pools[p.decl]
    m = len(rest) - 1  # evicted in bulk; the last crossing's eviction is made as usual
    simple = pd.evict_keys is None and pd.spill_when is None
    # The livelock guard counts events without the clock moving: if it would stop the run
    # inside the batch, the crossings go one by one so it stops where it does per event.
    if not simple or s.n_events + m - s.progress >= eng.still_limit or m == 0:
        for h in rest:
            blocks.one_more_block(eng, p, h)
        return
    left = m
    while left:
        e = L.lru()
        assert e is not None  # the stretch counted the cache it evicts
        take = min(left, len(e.blocks))
        L.evict_ids(e.order, take)  # pushed tail first
        left -= take
    free = L.free
    top = free[len(free) - m :]
    top.reverse()  # the first evicted is popped first
    free[len(free) - m :] = top
    s.counters["evictions"] += m
    s.counters["evicted_units"] += m * B
    s.n_events += m
    for h in rest[:m]:
        L.grow(h.table, (len(h.table.blocks) + 1) * B)
        watch.hold(eng, h)
    blocks.one_more_block(eng, p, rest[m])
