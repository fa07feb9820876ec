"""Blocks, entries and eviction: a pool's block accounting, and its one home.

Owns a pool's `allocated`, `cached` and `free` figures and the physical block ids: taking
blocks for a hold (evicting cache first when needed), giving them back, turning a hold's
computed prefix into the session's cache entry, reusing an entry's blocks at admission,
landing a spilled prefix, and the eviction order. Other modules change these figures only
through the functions here. It does not decide who is admitted, grown or preempted, and
it touches no queue, stage or session frame.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from pooltui.sim import members, watch, why
from pooltui.sim.codes import Number
from pooltui.sim.members import Env
from pooltui.sim.state import Entry, PoolState, Session
from pooltui.sim.state import Hold as HoldState

if TYPE_CHECKING:
    from pooltui.sim.engine import Engine


def nb(p: PoolState, units: int) -> int:
    """Blocks that hold `units` units."""
    return -(-units // p.block)


def available(p: PoolState, protect: int | None = None) -> Number:
    """Blocks an allocation could get: free plus evictable cache."""
    if p.nblocks is None:
        return math.inf
    own = p.entries[protect].nblocks if protect is not None and protect in p.entries else 0
    return p.nfree() + p.cached - own


def take_blocks(eng: Engine, p: PoolState, n: int, protect: int | None) -> list[int]:
    """Allocate n blocks, evicting cache first if needed (but not `protect`'s entry)."""
    if p.nblocks is None:
        p.allocated += n
        return []
    have = p.nfree()
    if n > have:
        eng.evict(p, n - have, protect)
    p.allocated += n
    if n == 1:  # the common case: a decode crossing into its next block
        return [p.pop_free()]
    return p.pop_free_n(n)


def give_back(p: PoolState, phys: list[int], n: int) -> None:
    """Free n allocated blocks (their ids in `phys`, reused first)."""
    p.allocated -= n
    if p.nblocks is None:
        return
    p.free.extend(reversed(phys))


def evict_order(eng: Engine, p: PoolState, protect: int | None) -> list[Entry]:
    """Every entry but `protect`'s, the first to go first."""
    pd = eng.t.pools[p.decl]
    entries = [e for sid, e in p.entries.items() if sid != protect]
    if pd.evict_keys is None:
        return entries  # release order is insertion order
    keyed = [(entry_keys(eng, p, e), e.order, e) for e in entries]
    keyed.sort(key=lambda k: (k[0], k[1]))
    return [k[2] for k in keyed]


def entry_keys(eng: Engine, p: PoolState, e: Entry) -> tuple[Number, ...]:
    """An entry's eviction keys (`evict by`), lowest first to go."""
    pd = eng.t.pools[p.decl]
    if pd.evict_keys is None:
        return (e.last, e.order)
    env = entry_env(eng, p, e, e.units)
    return tuple(f(env) for f in pd.evict_keys)


def entry_env(eng: Engine, p: PoolState, e: Entry, size: int) -> Env:
    """The environment of an entry's keys and of its spill expressions."""
    sess = eng.s.live.get(e.sid)
    env = eng.env
    env.session = None  # evict keys and spill expressions may not draw
    env.attrs = sess.attrs if sess is not None else e.attrs
    env.serial = sess.serial if sess is not None else e.serial
    env.now = eng.s.now
    env.size = size
    env.age = eng.s.now - e.last
    env.last = e.last
    env.waiting = len(p.queue)
    env.hold_pool = eng.s.pools.index(p)
    return env


def next_to_evict(eng: Engine, p: PoolState, protect: int | None) -> Entry:
    """The entry that goes first: lru is release order (the dict's order); by keys is
    ascending keys, then release order."""
    pd = eng.t.pools[p.decl]
    if pd.evict_keys is None:
        for e in p.entries.values():
            if e.sid != protect:
                return e
        raise RuntimeError("evict: no cache left")  # pragma: no cover - callers check
    best: tuple[tuple[Number, ...], int] | None = None
    chosen: Entry | None = None
    for e in p.entries.values():
        if e.sid == protect:
            continue
        k = (entry_keys(eng, p, e), e.order)
        if best is None or k < best:
            best, chosen = k, e
    if chosen is None:  # pragma: no cover - callers check available() first
        raise RuntimeError("evict: no cache left")
    return chosen


def evict(eng: Engine, p: PoolState, nblocks: int, protect: int | None) -> None:
    """Evict `nblocks` blocks of cache, entries in eviction order, each from its tail."""
    pd = eng.t.pools[p.decl]
    s = eng.s
    while nblocks > 0:
        e = next_to_evict(eng, p, protect)
        take = min(nblocks, e.nblocks)
        gone = e.phys[len(e.phys) - take :] if p.nblocks is not None else []
        del e.phys[len(e.phys) - take :]
        units_before = e.units
        e.nblocks -= take
        e.units = min(e.units, e.nblocks * p.block)
        units = units_before - e.units
        p.cached -= take
        p.free.extend(reversed(gone))
        if e.nblocks == 0:
            del p.entries[e.sid]
        watch.entry(eng, p, e.sid)
        nblocks -= take
        s.counters["evictions"] += 1
        s.counters["evicted_units"] += units
        sess = s.live.get(e.sid)
        name = sess.name if sess is not None else members.sid_name(eng, e.sid)
        left = e.units
        eng.emit(
            "evict",
            lambda: why.evicted(units, name, p.label, left),
            session=sess,
            pool=p,
            name=name,
            units=units,
            blocks=tuple(gone),
            data=(("entry", name), ("left", left)),
            span=eng.t.pools[p.decl].ir.span,
        )
        if pd.spill_when is not None:
            eng.maybe_spill(p, e, units, name)  # right after its eviction


def add_entry(
    eng: Engine,
    p: PoolState,
    sid: int,
    units: int,
    nblocks: int,
    phys: list[int],
    attrs: dict[str, Number],
) -> Entry:
    """Cache `units` units in `nblocks` blocks (`phys`) as the session's entry."""
    old = p.entries.pop(sid, None)
    if old is not None:  # a newer release of the same session replaces it
        p.cached -= old.nblocks
        p.free.extend(reversed(old.phys))
    e = Entry(sid, units, nblocks, phys, eng.s.now)
    e.order = p.next_order
    p.next_order += 1
    e.attrs = attrs
    live = eng.s.live.get(sid)
    e.serial = live.serial if live is not None else (old.serial if old is not None else 0)
    p.entries[sid] = e
    p.cached += nblocks
    watch.entry(eng, p, sid)
    return e


# ---------------------------------------------------------------- a hold's blocks
def room_for(p: PoolState, hit: int, grown: int, need: int) -> bool:
    """Whether a hold that reuses `hit` units of its own entry can be admitted with
    `grown` units (and `need` units of headroom). Its own entry counts as available: the
    hit part is used, the rest is freed."""
    hit_blocks = hit // p.block
    avail = available(p) - hit_blocks
    return not (nb(p, grown) - hit_blocks > avail or nb(p, need) - hit_blocks > avail)


def admit_blocks(eng: Engine, p: PoolState, sess: Session, hit: int, size: int) -> list[int]:
    """The blocks of a hold being admitted with `size` units: first the part of the
    session's own entry past its `hit` is freed (an `evict` event), then new blocks are
    found (evicting other entries), then the hit part of the entry becomes the hold's."""
    entry = p.entries.get(sess.sid)
    hit_blocks = hit // p.block
    hit_phys: list[int] = []
    if entry is not None:
        hit_phys = entry.phys[:hit_blocks]
        rest = entry.phys[hit_blocks:]
        if entry.nblocks > hit_blocks:
            left = entry.units - hit
            p.cached -= entry.nblocks - hit_blocks
            del entry.phys[hit_blocks:]
            entry.nblocks = hit_blocks
            entry.units = hit
            p.free.extend(reversed(rest))
            watch.entry(eng, p, sess.sid)
            eng.s.counters["evictions"] += 1
            eng.emit(
                "evict",
                lambda: why.freed_own(left, sess.name, p.label, hit),
                session=sess,
                pool=p,
                units=left,
                blocks=tuple(rest),
                data=(("entry", sess.name), ("left", hit)),
                span=eng.t.pools[p.decl].ir.span,
            )
    new_phys = take_blocks(eng, p, nb(p, size) - hit_blocks, protect=sess.sid)
    if entry is not None:
        del p.entries[sess.sid]
        p.cached -= hit_blocks
        p.allocated += hit_blocks
        watch.entry(eng, p, sess.sid)
    return hit_phys + new_phys


def extend_hold(eng: Engine, p: PoolState, h: HoldState, n: int) -> list[int]:
    """`n` more blocks for an admitted hold (evicting cache if needed)."""
    added = take_blocks(eng, p, n, protect=None)
    h.phys.extend(added)
    h.nblocks += n
    watch.hold(eng, h)
    return added


def drop(p: PoolState, h: HoldState) -> None:
    """Free all of a hold's blocks without caching anything."""
    if h.nblocks:
        give_back(p, h.phys, h.nblocks)
    h.phys = []
    h.nblocks = 0
    h.size = 0


def let_go(eng: Engine, sess: Session, h: HoldState) -> tuple[int, list[int]]:
    """Free a hold, keeping its computed prefix in whole blocks as the session's cache
    entry (a release, or a preemption). Returns (units cached, their blocks)."""
    p = eng.s.pools[h.pool]
    keep = h.computed // p.block
    cached_units = keep * p.block
    kept = h.phys[:keep] if p.nblocks is not None else []
    p.allocated -= keep
    give_back(p, h.phys[keep:], h.nblocks - keep)
    if keep:
        add_entry(eng, p, sess.sid, cached_units, keep, kept, dict(sess.attrs))
    h.phys = []
    h.nblocks = 0
    h.size = 0
    watch.hold(eng, h)
    return cached_units, kept


def cache_spilled(
    eng: Engine, tier: PoolState, sid: int, units: int, n: int, attrs: dict[str, Number]
) -> tuple[Entry, list[int]]:
    """A spilled prefix of `units` units in `n` blocks lands in `tier`: appended to the
    session's entry there. Returns the entry and all its blocks."""
    phys = take_blocks(eng, tier, n, protect=sid)
    tier.allocated -= n  # the blocks are cache, not a hold
    old = tier.entries.pop(sid, None)
    if old is not None:
        tier.cached -= old.nblocks
        phys = old.phys + phys
        units += old.units
        n += old.nblocks
    e = add_entry(eng, tier, sid, units, n, phys, attrs)
    e.spilled = True
    return e, phys


# ---------------------------------------------------------------- the fast mode's lean paths
# The same state changes as the per-event paths above, counted but not described: the
# fast mode takes them when nothing records or checks events (`FastEngine.lean`).
def evict_lean(eng: Engine, p: PoolState, nblocks: int, protect: int | None) -> None:
    """`evict` for lru without spill when no event is recorded or checked: the same
    state changes, counted, with nothing to describe (the fast mode's headless runs)."""
    s = eng.s
    counters = s.counters
    entries = p.entries
    free = p.free
    block = p.block
    while nblocks > 0:
        for e in entries.values():
            if e.sid != protect:
                break
        else:  # pragma: no cover - callers check available() first
            raise RuntimeError("evict: no cache left")
        take = nblocks if nblocks < e.nblocks else e.nblocks
        phys = e.phys
        cut = len(phys) - take
        free.extend(reversed(phys[cut:]))  # tail first, as block-by-block eviction
        del phys[cut:]
        before = e.units
        e.nblocks -= take
        cap = e.nblocks * block
        if e.units > cap:
            e.units = cap
        p.cached -= take
        if e.nblocks == 0:
            del entries[e.sid]
        nblocks -= take
        counters["evictions"] += 1
        counters["evicted_units"] += before - e.units
        s.n_events += 1


def evict_blocks(eng: Engine, p: PoolState, m: int) -> list[int]:
    """m evictions of one block each (lru, in order), the blocks handed straight to
    the allocations that needed them; counted as m `evict` events."""
    s = eng.s
    entries = p.entries
    block = p.block
    out: list[int] = []
    units = 0
    while len(out) < m:
        e = next(iter(entries.values()))
        take = min(m - len(out), e.nblocks)
        phys = e.phys
        cut = len(phys) - take
        out.extend(reversed(phys[cut:]))
        del phys[cut:]
        before = e.units
        e.nblocks -= take
        if e.units > e.nblocks * block:
            e.units = e.nblocks * block
        units += before - e.units
        p.cached -= take
        if e.nblocks == 0:
            del entries[e.sid]
    s.counters["evictions"] += m
    s.counters["evicted_units"] += units
    s.n_events += m
    return out


def one_block_each(eng: Engine, p: PoolState, group: list[HoldState]) -> None:
    """Each hold in `group` (lru pool, no spill) gets one block, exactly as one
    `extend_hold(p, h, 1)` after another would give them: from the free stack's top while
    it lasts, then each from the next eviction."""
    p.allocated += len(group)
    k = 0
    while k < len(group) and p.nfree():
        h = group[k]
        h.phys.append(p.pop_free())
        h.nblocks += 1
        k += 1
    if k < len(group):
        for h, b in zip(group[k:], evict_blocks(eng, p, len(group) - k), strict=True):
            h.phys.append(b)
            h.nblocks += 1
