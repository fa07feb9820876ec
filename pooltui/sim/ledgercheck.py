"""content-and-reload.md §4 for each pool's ledger: the full check, and the same checked
after every event at the cost of what the event changed.

Owns `check` (the oracle: every block, entry, hash and table, O(ids ever used)),
`LiveTables` (a pool's tables by hold id without a walk of the live holds) and `Shadows`
with `check_state`, which the invariant check calls once per event for all pools (the
engine's `Watch` carries the shadows): each pool's changes through
`ledgertouched.check_touched` against its `Shadow`, so an event costs what it changed;
the live holds are walked only by a full check. The two must agree (tests/sim/
test_ledger.py, tests/sim/test_ledger_check.py, tests/sim/test_watch.py, tests/sim/
test_ledger_kept.py). It reads the ledgers and the holds' tables and writes only the
shadows and the touched sets; it never emits.
"""

from __future__ import annotations

from collections.abc import Iterable

from pooltui.sim.events import Violation
from pooltui.sim.ledger import NONE, Ledger, Table
from pooltui.sim.ledgertouched import Shadow, check_touched
from pooltui.sim.ledgerwords import copies_broken
from pooltui.sim.state import State


def check(ledger: Ledger, holds: Iterable[Table]) -> str | None:
    """content-and-reload.md §4 for one pool: a message naming the first broken
    invariant, or None. `holds` are all the tables in this pool."""
    L, n = ledger, len(ledger.ref)
    if not (len(L.bhash) == len(L.bcontent) == len(L.bidx) == len(L.bentry) == len(L.owner) == n):
        return "per-block arrays differ in length"
    # (The ledger's fields read once: this walks every block, after each event in the
    # tests that hold the per-event check to it.)
    ref, bhash, owner, sharers, bidx = L.ref, L.bhash, L.owner, L.sharers, L.bidx
    bcontent, table, more, block = L.bcontent, L.table, L.more, L.block
    holders: dict[int, list[int]] = {}  # held blocks only: a pool's used ids may be many
    for t in holds:
        blocks, hid, nreg, content = t.blocks, t.hid, t.nreg, t.content
        if len(blocks) != L.nb(t.size):
            return f"hold {hid}: {t.size} units in {len(blocks)} blocks, not {L.nb(t.size)}"
        if len(set(blocks)) != len(blocks):
            return f"hold {hid}: a block twice in its table"
        if nreg > len(blocks):
            return f"hold {hid}: {nreg} blocks registered of {len(blocks)}"
        for j, b in enumerate(blocks):
            if not 0 <= b < n:
                return f"hold {hid}: block {b} was never allocated"
            got = holders.get(b)
            if got is None:
                holders[b] = [hid]
            else:
                got.append(hid)
            if j < nreg and bhash[b] != content.block_hash(j, block):
                return f"hold {hid}: block {j} (#{b}) is not registered with its content"
            if bidx[b] != j:  # a block sits at its own index in every table holding it
                return f"hold {hid}: block {j} (#{b}) is block {bidx[b]} of its content"
    # One pass over the ids: counts and holders (said first), what registered blocks hold
    # (said after the entries and the hash table, as the order of the invariants goes).
    allocated = cached = 0
    content_broken: str | None = None
    for b in range(n):
        r, h = ref[b], bhash[b]
        if r:
            hs = holders.get(b, [])
            if r != len(hs):
                return f"block {b}: count {r}, but {len(hs)} tables hold it"
            if r > 1 or owner[b] != hs[0] or b in sharers:
                recorded = [] if owner[b] == NONE else [owner[b]]
                recorded += sharers.get(b, {})
                if sorted(recorded) != sorted(hs):
                    return f"block {b}: holders {recorded}, but {hs} hold it"
            allocated += 1
        else:
            if b in holders:
                return f"block {b}: count {r}, but {len(holders[b])} tables hold it"
            if b in sharers:  # (its owner is stale: it says nothing at count 0)
                return f"block {b}: holders {list(sharers[b])}, but [] hold it"
            if h != NONE:
                cached += 1
        if h != NONE and content_broken is None:
            c = bcontent[b]
            if c is None or c.block_hash(bidx[b], block) != h:
                content_broken = f"block {b}: registered hash differs from its content's"
            elif table.get(h) != b and b not in more.get(h, ()):
                content_broken = f"block {b}: registered but not in the hash table"
    if allocated != L.allocated:
        return f"allocated is {L.allocated} blocks but {allocated} have a count"
    if cached != L.cached:
        return f"cached is {L.cached} blocks but {cached} registered blocks have count 0"
    bentry = L.bentry
    for order, e in L.entries.items():
        if e.order != order or not e.blocks:
            return f"entry {order}: misfiled or empty"
        for b in e.blocks:
            if not 0 <= b < n or bentry[b] != order or ref[b] != 0 or bhash[b] == NONE:
                return f"entry {order}: block {b} is not a cached block of it"
    in_entries = sum(len(e.blocks) for e in L.entries.values())
    if in_entries != cached:
        return f"entries hold {in_entries} blocks but {cached} are cached"
    # With no copies anywhere (most ledgers) each listed block registered with its hash
    # is one pass in C; else, or when one is not (or is no block: past the arrays, or
    # negative, which bhash[-1] would read), hash by hash (`copies_broken`, the words).
    firsts = list(table.values())
    if (
        more
        or not 0 <= min(firsts, default=0) <= max(firsts, default=0) < n
        or list(map(bhash.__getitem__, firsts)) != list(table)
    ):
        for h, first in table.items():
            broken = copies_broken(bhash, h, first, more.get(h))
            if broken is not None:
                return broken
    for h in more.keys() - table.keys():
        return copies_broken(bhash, h, None, more[h])
    if content_broken is not None:
        return content_broken
    dups = sum(map(len, more.values()))
    if dups != L.dups:
        return f"dups is {L.dups} but the hash table has {dups}"
    if len(set(L.free)) != len(L.free):
        return "a block twice on the free stack"
    for b in L.free:
        if b >= n or ref[b] != 0 or bhash[b] != NONE:
            return f"block {b} is on the free stack but in use"
    if len(L.free) + allocated + cached != n:
        return f"{len(L.free)} free + {allocated} allocated + {cached} cached ≠ {n} used ids"
    if L.total >= 0 and allocated + cached > L.total:
        return f"allocated + cached = {allocated + cached} > {L.total} blocks"
    if L.total >= 0 and (L.fresh + n != L.total or L.fresh < 0):
        return f"fresh {L.fresh} + {n} used ids ≠ {L.total} blocks"
    return None


class Shadows:
    """The shadows of one engine's pools (not simulation state: an engine's `Watch` holds
    them, and a new engine builds them again, from one full check)."""

    __slots__ = ("lookups", "ready", "shadows")

    def __init__(self) -> None:
        self.shadows: list[Shadow | None] = []
        self.lookups: list[LiveTables | None] = []  # each shadow's pool's tables
        # Each pool's (ledger, shadow, tables) while every pool has a shadow: the check
        # after each event then only makes sure the ledgers are still the same.
        self.ready: list[tuple[Ledger, Shadow, LiveTables]] | None = None


def tables_by_pool(s: State) -> list[dict[int, Table]]:
    """Every hold's table, by pool member and hold id (the full check's: O(live holds))."""
    out: list[dict[int, Table]] = [{} for _ in s.pools]
    for sess in s.live.values():
        for h in sess.holds:
            out[h.pool][h.key] = h.table
    return out


class LiveTables:
    """Pool `pi`'s tables by hold id, found without walking the live holds: a table the
    ledger noted as changed is its hold's when its session (its content's sid) is live and
    holds it in this pool; any other is the one the shadow kept (a hold that leaves with
    blocks is the accounting check's to catch: invariants._touched_holds)."""

    __slots__ = ("changed", "kept", "live", "pi")

    def __init__(self, s: State, pi: int, sh: Shadow) -> None:
        self.live = s.live
        self.pi = pi
        self.changed = sh.ledger.tt
        self.kept = sh.tabs

    def get(self, hid: int, /) -> Table | None:
        t = self.changed.get(hid)
        if t is None:
            return self.kept.get(hid)
        sess = self.live.get(t.content.sid)
        if sess is not None:
            for h in sess.holds:
                if h.table is t:
                    return t if h.pool == self.pi and h.key == hid else None
        return None


_NOT_READY = (-1, "")  # `_check_ready` could not check: a pool's ledger is another


def _check_ready(
    s: State, watch: Shadows, ready: list[tuple[Ledger, Shadow, LiveTables]]
) -> tuple[int, str] | None:
    """`check_state` when every pool has its shadow: what it found; `_NOT_READY` when a
    pool's ledger is another (a restored state's): the caller sees to it."""
    pools, live = s.pools, s.live
    if len(ready) != len(pools):
        return _NOT_READY
    for pi in range(len(ready)):
        L, sh, lt = ready[pi]
        if pools[pi].ledger is not L or lt.live is not live:
            return _NOT_READY
        L.track = True
        broken = check_touched(L, sh, lt)
        if broken is not None:
            watch.shadows[pi] = None
            watch.ready = None
            return pi, broken
    return None


def check_state(s: State, watch: Shadows | None = None) -> tuple[int, str] | None:
    """The first pool whose ledger breaks §4, with the message, or None. Without
    `watch`, the full check of every pool (writes nothing); with it, what changed since
    its last call (the first call, and any after a broken one, checks all in full)."""
    if watch is None:
        tables = tables_by_pool(s)
        for pi, p in enumerate(s.pools):
            broken = check(p.ledger, tables[pi].values())
            if broken is not None:
                return pi, broken
        return None
    if watch.ready is not None:
        found = _check_ready(s, watch, watch.ready)
        if found is not _NOT_READY:
            return found
        watch.ready = None
    shadows, lookups = watch.shadows, watch.lookups
    while len(shadows) < len(s.pools):
        shadows.append(None)
        lookups.append(None)
    full: list[dict[int, Table]] | None = None  # walked only for a full check
    for pi, p in enumerate(s.pools):
        L = p.ledger
        L.track = True
        sh = shadows[pi]
        if sh is None or sh.ledger is not L:
            if full is None:
                full = tables_by_pool(s)
            broken = check(L, full[pi].values())
            L.untouched()
            sh = shadows[pi] = Shadow(L, full[pi].values()) if broken is None else None
            lookups[pi] = None if sh is None else LiveTables(s, pi, sh)
        else:
            lt = lookups[pi]
            if lt is None or lt.live is not s.live:  # (a shadow follows one state's pool)
                lt = lookups[pi] = LiveTables(s, pi, sh)
            broken = check_touched(L, sh, lt)
            if broken is not None:
                shadows[pi] = None
        if broken is not None:
            return pi, broken
    watch.ready = [
        (p.ledger, sh, lt)
        for p, sh, lt in zip(s.pools, shadows, lookups, strict=False)
        if sh is not None and lt is not None
    ]
    return None


def _kind(message: str) -> str:
    """The invariant a ledger's message names (content-and-reload.md §4)."""
    if message.startswith("allocated is"):
        return "allocated"
    if message.startswith(("cached is", "entr")):
        return "cached"
    if "count" in message and message.startswith("block"):
        return "count"
    if message.startswith("hold"):
        return "content" if "registered" in message or "of its content" in message else "table"
    if "registered" in message or "hash" in message or "dups" in message:
        return "content"
    if "allocated + cached" in message:
        return "capacity"
    return "blocks"


def violation(s: State, watch: Shadows | None = None) -> Violation | None:
    """`check_state` as a `Violation` naming the pool and the §4 invariant broken."""
    broken = check_state(s, watch)
    if broken is None:
        return None
    p = s.pools[broken[0]]
    return Violation(_kind(broken[1]), f"{p.label}: {broken[1]}", p.label)
