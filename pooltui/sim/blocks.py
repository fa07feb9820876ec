"""Blocks, entries and eviction: a pool's block accounting, and its one home.

A pool's blocks live in its `Ledger` (`ledger.py`: content-addressed, reference-counted
blocks, content-and-reload.md §1, §2): this module is the engine's one user of it. It
looks a hold's content up (the hit), puts a hit into a hold's table and finds the blocks
past it (evicting cache by the pool's `evict` policy when the free ones do not suffice),
registers the blocks an iteration's tokens complete, releases a hold's table (its blocks
left at count zero become that release's cache entry), evicts entries tail first (each
eviction an `evict` event naming its blocks, then perhaps a spill) and lands spilled
blocks in a tier. Other modules change block figures only through the functions here. It
does not decide who is admitted, grown or preempted, and it touches no queue, stage or
session frame.
"""

from __future__ import annotations

from itertools import groupby
from typing import TYPE_CHECKING, Final

from pooltui.sim import ledgerbatch, members, watch, why
from pooltui.sim.codes import Number
from pooltui.sim.content import Content
from pooltui.sim.ledger import CacheEntry, Evicted, Hit, spill_ranges
from pooltui.sim.members import Env
from pooltui.sim.state import Hold as HoldState
from pooltui.sim.state import PoolState, Session

if TYPE_CHECKING:
    from pooltui.sim.engine import Engine

WHOLE: Final = 1 << 62  # a lookup bound past any chain the ledger can hold


def nb(p: PoolState, units: int) -> int:
    """Blocks that hold `units` units."""
    return -(-units // p.block)


def available(p: PoolState) -> Number:
    """Blocks an allocation could get: free, never used, and evictable cache."""
    return p.ledger.room()


# ---------------------------------------------------------------- hits
def longest(p: PoolState, content: Content) -> Hit:
    """E: the longest run of leading blocks of `content` the pool has registered (held by
    anyone, or cached), the first registered copy of each."""
    return p.ledger.lookup(content, WHOLE)


def capped(p: PoolState, found: Hit, upto: int) -> Hit:
    """`found` limited as a hit of an attempt whose max(U, context) is `upto`: never the
    hold's last unit, ⌊(upto − 1) / block⌋ blocks at most (vLLM's num_tokens − 1)."""
    n = (upto - 1) // p.block if upto >= 1 else 0
    if n >= len(found.blocks):
        return found
    out = Hit()
    out.blocks = found.blocks[:n]
    # found's cached blocks but those cut off (mostly its last one)
    out.cached = found.cached - list(map(p.ledger.ref.__getitem__, found.blocks[n:])).count(0)
    out.shared = n - out.cached
    out.units = n * p.block
    return out


def fits(p: PoolState, hit: Hit, grown: int, need: int) -> bool:
    """Whether a hold with `hit` can be admitted with `grown` units (and `need` units of
    headroom): the blocks past the hit fit in the room, of which the hit's cached blocks
    are no longer part."""
    n = max(nb(p, grown), nb(p, need)) - len(hit.blocks)
    return p.ledger.fits(n, hit)


def others(p: PoolState, hit: Hit, sid: int) -> int:
    """Units of `hit` on blocks another session computed."""
    n = 0
    # Runs of one content (its session's stream or not), grouped in C: a hit is a few
    # such runs of up to thousands of blocks.
    for c, run in groupby(map(p.ledger.bcontent.__getitem__, hit.blocks)):
        if c is not None and c.sid != sid:
            n += len(list(run))
    return n * p.block


# ---------------------------------------------------------------- a hold's blocks
def make_room(eng: Engine, p: PoolState, n: int) -> None:
    """Evict cache until `n` blocks can be taken from the free ones."""
    short = p.ledger.short(n)
    if short > 0:
        eng.evict(p, short)


def admit_blocks(eng: Engine, p: PoolState, h: HoldState, hit: Hit, size: int) -> list[int]:
    """The blocks of a hold being admitted with `size` units: the hit first (its cached
    blocks leave their entries, its held ones are shared), then new blocks past it
    (evicting cache as needed). Returns all its blocks, head first."""
    L = p.ledger
    t = h.table
    L.acquire(t, hit)
    h.size = t.size  # it holds its hit while blocks are found past it
    make_room(eng, p, nb(p, size) - len(t.blocks))
    L.grow(t, size)
    watch.hold(eng, h)
    return t.blocks


def extend_to(eng: Engine, p: PoolState, h: HoldState, size: int) -> list[int]:
    """Grow an admitted hold's table to `size` units (evicting cache if needed): the new
    blocks."""
    make_room(eng, p, nb(p, size) - len(h.table.blocks))
    w = eng.watch
    if w is not None:  # grown, and nothing else (the caller sets its size: grow.grow_to)
        w.grown.append(h)
    return p.ledger.grow(h.table, size)


def one_more_block(eng: Engine, p: PoolState, h: HoldState) -> None:
    """One more block for a hold (the fast mode's steady resident crossing into its next
    block); its table's size becomes its blocks' units."""
    make_room(eng, p, 1)
    p.ledger.grow(h.table, (len(h.table.blocks) + 1) * p.block)
    watch.hold(eng, h)


def register_each(p: PoolState, holds: list[HoldState], uptos: list[int],
                  sessions: list[Session]) -> None:  # fmt: skip
    """`register` for each hold in turn (holds[i] to uptos[i], of sessions[i])."""
    ledgerbatch.register_each(p.ledger, [h.table for h in holds], uptos)
    B = p.block
    for h, sess in zip(holds, sessions, strict=True):
        end = h.table.nreg * B
        if end > h.table.content.total and end > sess.priv_hi.get(h.pool, 0):
            sess.priv_hi[h.pool] = end


def one_more_each(eng: Engine, p: PoolState, holds: list[HoldState]) -> None:
    """`one_more_block` for each hold in turn, in one step of the ledger when nothing can
    tell the difference (lru eviction without spills, room for all of them, and the
    events may follow the changes: `Engine.batchable`); the same blocks, evictions and
    events."""
    L = p.ledger
    pd = eng.t.pools[p.decl]
    n = len(holds)
    if (
        pd.evict_keys is not None
        or pd.spill_when is not None
        or n > L.room()
        or not eng.batchable(n)
    ):
        for h in holds:
            one_more_block(eng, p, h)
        return
    gone = ledgerbatch.one_more_each(L, [h.table for h in holds])
    if eng.watch is not None:
        for h in holds:
            watch.hold(eng, h)
    if not gone:
        return
    k = len(gone) - 1
    if eng.count_unrecorded(k):  # all but the last (`Engine.emit` keeps the last one)
        eng.s.counters["evictions"] += k
        eng.s.counters["evicted_units"] += k * p.block
        gone = gone[k:]
    for _order, sid, b, left in gone:
        evict_event(eng, p, sid, (b,), left)


def register(p: PoolState, h: HoldState, upto: int, sess: Session | None) -> None:
    """An iteration takes the tokens that bring h to `upto` computed units: the blocks they
    complete are registered now (so a hold admitted later in this iteration hits them)."""
    L = p.ledger
    t = h.table
    if upto // p.block <= t.nreg:
        return
    L.register(t, upto)
    end = t.nreg * p.block
    if sess is not None and end > t.content.total:
        pi = h.pool
        if end > sess.priv_hi.get(pi, 0):
            sess.priv_hi[pi] = end


def held_by_others(p: PoolState, h: HoldState) -> tuple[int, int]:
    """(The blocks of h's table other holds hold too, those holds): what its release leaves
    allocated with them (content-and-reload.md §2). Found as the ledger's release finds
    them: through the pool's shared blocks, or h's table when it has fewer."""
    L = p.ledger
    sharers, owner, hid = L.sharers, L.owner, h.table.hid
    if not sharers:
        return 0, 0
    if len(sharers) < len(h.table.blocks):
        shared = [b for b, more in sharers.items() if hid in more or owner[b] == hid]
    else:
        shared = [b for b in h.table.blocks if b in sharers]
    others: set[int] = set()
    for b in shared:
        others.update(L.holders(b))
    others.discard(hid)
    return len(shared), len(others)


def let_go(eng: Engine, sess: Session, h: HoldState) -> tuple[int, list[int]]:
    """Release a hold (or preempt it): each of its blocks' counts goes down; the registered
    ones left at zero become this release's cache entry. Returns (its units, its blocks)."""
    p = eng.s.pools[h.pool]
    released = sess.released  # (its entries share it: each now reads this release's)
    released.clear()
    released.update(sess.attrs)
    e = p.ledger.release(h.table, eng.s.now, released, sess.serial)
    h.size = 0
    watch.hold(eng, h)
    if e is None:
        return 0, []
    return e.units, e.blocks


def drop(eng: Engine, p: PoolState, h: HoldState) -> None:
    """Free all of a hold's blocks without caching anything (its session was rejected);
    blocks other holds share stay with them."""
    p.ledger.release(h.table, eng.s.now, keep=False)
    h.size = 0


# ---------------------------------------------------------------- eviction
def evict_order(eng: Engine, p: PoolState) -> list[CacheEntry]:
    """Every entry, the first to go first."""
    pd = eng.t.pools[p.decl]
    entries = list(p.ledger.entries.values())
    if pd.evict_keys is None:
        return entries  # release order is insertion order
    keyed = [(entry_keys(eng, p, e), e.order, e) for e in entries]
    keyed.sort(key=lambda k: (k[0], k[1]))
    return [k[2] for k in keyed]


def entry_keys(eng: Engine, p: PoolState, e: CacheEntry) -> tuple[Number, ...]:
    """An entry's eviction keys (`evict by`), lowest first to go."""
    pd = eng.t.pools[p.decl]
    if pd.evict_keys is None:
        return (e.last, e.order)
    env = entry_env(eng, p, e, e.units)
    return tuple(f(env) for f in pd.evict_keys)


def entry_env(eng: Engine, p: PoolState, e: CacheEntry, size: int) -> Env:
    """The environment of an entry's keys and of its spill expressions: the attributes of
    the session that released it (now, if it still lives), the release's age and last."""
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


def next_to_evict(eng: Engine, p: PoolState) -> CacheEntry:
    """The entry that goes first: lru is release order (the dict's order); by keys is
    ascending keys, then release order."""
    pd = eng.t.pools[p.decl]
    L = p.ledger
    if pd.evict_keys is None:
        e = L.lru()
        if e is None:  # pragma: no cover - callers check available() first
            raise RuntimeError("evict: no cache left")
        return e
    best: tuple[tuple[Number, ...], int] | None = None
    chosen: CacheEntry | None = None
    for e in L.entries.values():
        k = (entry_keys(eng, p, e), e.order)
        if best is None or k < best:
            best, chosen = k, e
    if chosen is None:  # pragma: no cover - callers check available() first
        raise RuntimeError("evict: no cache left")
    return chosen


def evict(eng: Engine, p: PoolState, nblocks: int) -> None:
    """Evict `nblocks` cached blocks: entries in eviction order, each from its tail (the
    block furthest from unit 0 first), one `evict` event per entry touched."""
    pd = eng.t.pools[p.decl]
    L = p.ledger
    while nblocks > 0:
        e = next_to_evict(eng, p)
        take = min(nblocks, len(e.blocks))
        sid, order = e.sid, e.order
        gone = L.evict(order, take) if pd.spill_when is not None else None
        ids = L.evict_ids(order, take) if gone is None else [ev.block for ev in gone]
        nblocks -= take
        name = evict_event(eng, p, sid, tuple(ids), len(e.blocks))
        if gone is not None:
            eng.maybe_spill(p, e, gone, name)  # right after its eviction


def evict_event(eng: Engine, p: PoolState, sid: int, ids: tuple[int, ...], left: int) -> str:
    """Count an eviction of blocks `ids` from session sid's entry (`left` blocks left in it)
    and emit its `evict` event. Returns the entry's name."""
    s = eng.s
    units = len(ids) * p.block
    units_left = left * p.block
    s.counters["evictions"] += 1
    s.counters["evicted_units"] += units
    sess = s.live.get(sid)
    name = sess.name if sess is not None else members.sid_name(eng, sid)
    eng.emit(
        "evict",
        lambda: why.evicted(units, name, p.label, units_left),
        session=sess,
        pool=p,
        name=name,
        units=units,
        blocks=ids,
        data=(("entry", name), ("left", units_left)),
        span=eng.t.pools[p.decl].ir.span,
    )
    return name


# ---------------------------------------------------------------- reloads
def tier_run(tier: PoolState, content: Content, u: int) -> int:
    """Where the run of `content`'s blocks registered in `tier`, from the tier block that
    holds unit u on, ends (u when the tier has not that block). A tier block is named by
    the prefix up to its end, so having it is having that content; the tier blocks before
    it need not be there."""
    L = tier.ledger
    B = tier.block
    j = u // B
    while L.has(content, j):
        j += 1
    return max(u, j * B)


def touch(eng: Engine, tier: PoolState, content: Content, lo: int, hi: int) -> None:
    """A reload reads units [lo, hi) of `content` from `tier`: the entries holding those
    tier blocks become the most recently used (their `last` is now), each once, in chain
    order. The tier keeps its copies; blocks that holds hold have no entry to refresh."""
    L = tier.ledger
    B = tier.block
    seen: set[int] = set()
    for j in range(lo // B, -(-hi // B)):
        b = L.table.get(content.block_hash(j, B))  # the first copy
        if b is None:  # pragma: no cover - the walk found it at this instant
            continue
        order = L.bentry[b]
        if L.ref[b] == 0 and order not in seen:
            seen.add(order)
            L.touch(order, eng.s.now)


# ---------------------------------------------------------------- spills landing
def land(
    eng: Engine, tier: PoolState, content: Content, js: list[int], attrs: dict[str, Number],
    serial: int,
) -> CacheEntry | None:  # fmt: skip
    """Spilled blocks (indices `js` of `content` in the tier's blocks) land in `tier` as
    one cached entry, evicting the tier's cache first if needed; blocks the tier registered
    meanwhile are skipped. The caller checked that they fit."""
    L = tier.ledger
    todo = [j for j in js if not L.has(content, j)]
    make_room(eng, tier, len(todo))
    e = L.land(content, todo, eng.s.now, attrs, serial)
    if e is not None and e.blocks:
        sess = eng.s.live.get(content.sid)
        end = (max(todo) + 1) * tier.block
        if sess is not None and end > content.total:
            pi = eng.s.pools.index(tier)
            sess.priv_hi[pi] = max(sess.priv_hi.get(pi, 0), end)
    return e


def spill_plan(
    tier: PoolState, evicted: list[Evicted]
) -> list[tuple[Content, int, list[int], int]]:
    """The evicted blocks re-expressed in the tier's whole blocks, one range of one chain
    at a time: (content, the range's units, tier block indices to write, tier blocks it
    already has)."""
    out: list[tuple[Content, int, list[int], int]] = []
    for content, lo, hi in spill_ranges(evicted):
        write, have = tier.ledger.spill_plan(content, lo, hi)
        out.append((content, hi - lo, write, len(have)))
    return out
