"""content-and-reload.md §4 for each pool's ledger: the full check, and the same checked
after every event at the cost of what the event changed.

Owns `check` (the oracle: every block, entry, hash and table, O(ids ever used)), `Shadow`
(one pool's figures as the last check left them: each block's count and whether it was
registered, the totals they make, each entry's length), `check_touched` (the blocks,
entries, hashes and tables the ledger noted as changed since, `Ledger.tb` / `te` / `th` /
`tt`, checked and the shadow brought up to date; then forgotten) and `Shadows` with
`check_state`, which the invariant check calls once per event for all pools (the engine's
`Watch` carries the shadows). The two must agree (tests/sim/test_ledger.py,
tests/sim/test_ledger_check.py, tests/sim/test_watch.py). It reads the ledgers and the
holds' tables and writes only the shadows and the touched sets; it never emits.
"""

from __future__ import annotations

from collections.abc import Iterable

from pooltui.sim.events import Violation
from pooltui.sim.ledger import NONE, Ledger, Table
from pooltui.sim.state import State


def check(ledger: Ledger, holds: Iterable[Table]) -> str | None:
    """content-and-reload.md §4 for one pool: a message naming the first broken
    invariant, or None. `holds` are all the tables in this pool."""
    L, n = ledger, len(ledger.ref)
    if not (len(L.bhash) == len(L.bcontent) == len(L.bidx) == len(L.bentry) == len(L.owner) == n):
        return "per-block arrays differ in length"
    holders: dict[int, list[int]] = {}  # held blocks only: a pool's used ids may be many
    for t in holds:
        if len(t.blocks) != L.nb(t.size):
            return f"hold {t.hid}: {t.size} units in {len(t.blocks)} blocks, not {L.nb(t.size)}"
        if len(set(t.blocks)) != len(t.blocks):
            return f"hold {t.hid}: a block twice in its table"
        if t.nreg > len(t.blocks):
            return f"hold {t.hid}: {t.nreg} blocks registered of {len(t.blocks)}"
        for j, b in enumerate(t.blocks):
            if not 0 <= b < n:
                return f"hold {t.hid}: block {b} was never allocated"
            holders.setdefault(b, []).append(t.hid)
            if j < t.nreg and L.bhash[b] != t.content.block_hash(j, L.block):
                return f"hold {t.hid}: block {j} (#{b}) is not registered with its content"
            if L.bidx[b] != j:  # a block sits at its own index in every table holding it
                return f"hold {t.hid}: block {j} (#{b}) is block {L.bidx[b]} of its content"
    # One pass over the ids: counts and holders (said first), what registered blocks hold
    # (said after the entries and the hash table, as the order of the invariants goes).
    ref, bhash, owner, sharers = L.ref, L.bhash, L.owner, L.sharers
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
            if owner[b] != NONE or b in sharers:
                recorded = [] if owner[b] == NONE else [owner[b]]
                recorded += sharers.get(b, {})
                return f"block {b}: holders {recorded}, but [] hold it"
            if h != NONE:
                cached += 1
        if h != NONE and content_broken is None:
            content = L.bcontent[b]
            if content is None or content.block_hash(L.bidx[b], L.block) != h:
                content_broken = f"block {b}: registered hash differs from its content's"
            elif b not in L.table.get(h, ()):
                content_broken = f"block {b}: registered but not in the hash table"
    if allocated != L.allocated:
        return f"allocated is {L.allocated} blocks but {allocated} have a count"
    if cached != L.cached:
        return f"cached is {L.cached} blocks but {cached} registered blocks have count 0"
    for order, e in L.entries.items():
        if e.order != order or not e.blocks:
            return f"entry {order}: misfiled or empty"
        for b in e.blocks:
            if L.bentry[b] != order or L.ref[b] != 0 or L.bhash[b] == NONE:
                return f"entry {order}: block {b} is not a cached block of it"
    in_entries = sum(len(e.blocks) for e in L.entries.values())
    if in_entries != cached:
        return f"entries hold {in_entries} blocks but {cached} are cached"
    for h, bs in L.table.items():
        if len(bs) == 1:
            if bhash[bs[0]] == h:
                continue
        elif not bs:
            return "an empty copy list in the hash table"
        elif all(bhash[b] == h for b in bs) and len(set(bs)) == len(bs):
            continue
        return f"hash table lists block {bs} under a hash one is not registered with"
    if content_broken is not None:
        return content_broken
    dups = sum(len(bs) - 1 for bs in L.table.values())
    if dups != L.dups:
        return f"dups is {L.dups} but the hash table has {dups}"
    if len(set(L.free)) != len(L.free):
        return "a block twice on the free stack"
    for b in L.free:
        if b >= n or L.ref[b] != 0 or L.bhash[b] != NONE:
            return f"block {b} is on the free stack but in use"
    if len(L.free) + allocated + cached != n:
        return f"{len(L.free)} free + {allocated} allocated + {cached} cached ≠ {n} used ids"
    if L.total >= 0 and allocated + cached > L.total:
        return f"allocated + cached = {allocated + cached} > {L.total} blocks"
    if L.total >= 0 and (L.fresh + n != L.total or L.fresh < 0):
        return f"fresh {L.fresh} + {n} used ids ≠ {L.total} blocks"
    return None


class Shadow:
    """A pool's figures as the last check saw them, kept up to date from what changed:
    per block ids ever used, its count × 2 + 1 if registered; the blocks with a count,
    the registered blocks at count 0, the registered blocks, the sum of the counts; each
    entry's length and their sum."""

    __slots__ = ("allocated", "cached", "elen", "esum", "ledger", "refs", "registered", "seen")

    def __init__(self, L: Ledger) -> None:
        self.ledger = L  # the ledger it follows (a shadow is never moved to another)
        self.seen = [r * 2 + (h != NONE) for r, h in zip(L.ref, L.bhash, strict=False)]
        self.allocated = sum(1 for r in L.ref if r > 0)
        self.cached = sum(1 for c in self.seen if c == 1)
        self.registered = sum(c & 1 for c in self.seen)
        self.refs = sum(L.ref)
        self.elen = {o: len(e.blocks) for o, e in L.entries.items()}
        self.esum = sum(self.elen.values())

    def note(self, b: int, code: int) -> None:
        """Block b is now `code` (count × 2 + registered): the totals follow."""
        old = self.seen[b]
        if old == code:
            return
        for c, sign in ((old, -1), (code, 1)):
            ref, reg = c >> 1, c & 1
            self.refs += sign * ref
            self.registered += sign * reg
            if ref > 0:
                self.allocated += sign
            elif reg:
                self.cached += sign
        self.seen[b] = code


def check_touched(L: Ledger, sh: Shadow, tables: dict[int, Table]) -> str | None:
    """What `check` says, looking only at what changed since the last call (the ledger's
    touched sets, which it empties) and at figures kept in `sh`. `tables`: every table in
    this pool, by hold id. The same messages as `check` where it can tell the same."""
    n = len(L.ref)
    try:
        if not (len(L.bhash) == len(L.bcontent) == len(L.bidx) == len(L.bentry) == n):
            return "per-block arrays differ in length"
        if len(L.owner) != n:
            return "per-block arrays differ in length"
        if len(sh.seen) < n:  # ids used for the first time since: they were free
            sh.seen.extend([0] * (n - len(sh.seen)))
        return _touched(L, sh, tables, n)
    finally:
        L.untouched()


def _touched(L: Ledger, sh: Shadow, tables: dict[int, Table], n: int) -> str | None:
    # Tables first (as `check`): their lengths, the blocks they gained, the registrations.
    for hid, t in L.tt.items():
        if len(t.blocks) != L.nb(t.size):
            return f"hold {hid}: {t.size} units in {len(t.blocks)} blocks, not {L.nb(t.size)}"
        if t.blocks and tables.get(hid) is not t:
            return f"hold {hid}: holds {len(t.blocks)} blocks but is no hold of this pool"
        if t.nreg > len(t.blocks):
            return f"hold {hid}: {t.nreg} blocks registered of {len(t.blocks)}"
        for j in range(L.tlo[hid], min(L.thi[hid], len(t.blocks))):
            b = t.blocks[j]
            if not 0 <= b < n:
                return f"hold {hid}: block {b} was never allocated"
            if j < t.nreg and L.bhash[b] != t.content.block_hash(j, L.block):
                return f"hold {hid}: block {j} (#{b}) is not registered with its content"
            if L.bidx[b] != j:  # a block sits at its own index in every table holding it
                return f"hold {hid}: block {j} (#{b}) is block {L.bidx[b]} of its content"
            if L.owner[b] != hid and hid not in L.sharers.get(b, {}):
                return f"hold {hid}: block {j} (#{b}) does not count it as a holder"
    # Blocks: what they hold, who holds them, where they are; the totals follow.
    for b in L.tb:
        ref, h = L.ref[b], L.bhash[b]
        if h != NONE:
            content = L.bcontent[b]
            if content is None or content.block_hash(L.bidx[b], L.block) != h:
                return f"block {b}: registered hash differs from its content's"
            if b not in L.table.get(h, ()):
                return f"block {b}: registered but not in the hash table"
        more = L.sharers.get(b)
        if ref <= 0:
            if ref < 0 or L.owner[b] != NONE or more:
                return f"block {b}: count {ref}, but holders {[L.owner[b], *(more or ())]}"
        else:
            holders = [L.owner[b], *(more or ())]
            j = L.bidx[b]
            for hid in holders:
                holder = tables.get(hid)
                if holder is None or j >= len(holder.blocks) or holder.blocks[j] != b:
                    return f"block {b}: count {ref} names hold {hid}, which does not hold it"
            if ref != len(holders):
                return f"block {b}: count {ref}, but {len(holders)} tables hold it"
        o = L.bentry[b]
        if ref == 0 and h != NONE:
            if o not in L.entries:
                return f"entry {o} of cached block {b} does not exist"
        elif o != NONE:
            return f"entry {o} lists block {b}, which is not cached"
        sh.note(b, ref * 2 + (h != NONE))
    for order in L.te:
        e = L.entries.get(order)
        sh.esum -= sh.elen.pop(order, 0)
        if e is None:
            continue
        if e.order != order or not e.blocks:
            return f"entry {order}: misfiled or empty"
        for b in e.blocks:
            if L.bentry[b] != order or L.ref[b] != 0 or L.bhash[b] == NONE:
                return f"entry {order}: block {b} is not a cached block of it"
        sh.elen[order] = len(e.blocks)
        sh.esum += len(e.blocks)
    for h in L.th:
        copies = L.table.get(h)
        if copies is None:
            continue
        if not copies:
            return "an empty copy list in the hash table"
        if any(L.bhash[b] != h for b in copies) or len(set(copies)) != len(copies):
            return f"hash table lists block {copies} under a hash one is not registered with"
    return _totals(L, sh, tables, n)


def _totals(L: Ledger, sh: Shadow, tables: dict[int, Table], n: int) -> str | None:
    if sh.allocated != L.allocated:
        return f"allocated is {L.allocated} blocks but {sh.allocated} have a count"
    if sh.cached != L.cached:
        return f"cached is {L.cached} blocks but {sh.cached} registered blocks have count 0"
    if sh.esum != sh.cached:
        return f"entries hold {sh.esum} blocks but {sh.cached} are cached"
    if sh.registered - len(L.table) != L.dups:
        return f"dups is {L.dups} but the hash table has {sh.registered - len(L.table)}"
    held = sum(len(t.blocks) for t in tables.values())
    if held != sh.refs:
        return f"block counts add up to {sh.refs}, but the tables hold {held} blocks"
    if len(L.free) + sh.allocated + sh.cached != n:
        return f"{len(L.free)} free + {sh.allocated} allocated + {sh.cached} cached ≠ {n} used ids"
    if L.total >= 0 and sh.allocated + sh.cached > L.total:
        return f"allocated + cached = {sh.allocated + sh.cached} > {L.total} blocks"
    if L.total >= 0 and (L.fresh + n != L.total or L.fresh < 0):
        return f"fresh {L.fresh} + {n} used ids ≠ {L.total} blocks"
    return None


class Shadows:
    """The shadows of one engine's pools (not simulation state: an engine's `Watch` holds
    them, and a new engine builds them again, from one full check)."""

    __slots__ = ("shadows",)

    def __init__(self) -> None:
        self.shadows: list[Shadow | None] = []


def tables_by_pool(s: State) -> list[dict[int, Table]]:
    """Every hold's table, by pool member and hold id."""
    out: list[dict[int, Table]] = [{} for _ in s.pools]
    for sess in s.live.values():
        for h in sess.holds:
            out[h.pool][h.key] = h.table
    return out


def check_state(s: State, watch: Shadows | None = None) -> tuple[int, str] | None:
    """The first pool whose ledger breaks §4, with the message, or None. Without
    `watch`, the full check of every pool (writes nothing); with it, what changed since
    its last call (the first call, and any after a broken one, checks all in full)."""
    tables = tables_by_pool(s)
    if watch is None:
        for pi, p in enumerate(s.pools):
            broken = check(p.ledger, tables[pi].values())
            if broken is not None:
                return pi, broken
        return None
    shadows = watch.shadows
    while len(shadows) < len(s.pools):
        shadows.append(None)
    for pi, p in enumerate(s.pools):
        L = p.ledger
        L.track = True
        sh = shadows[pi]
        if sh is None or sh.ledger is not L:
            broken = check(L, tables[pi].values())
            L.untouched()
            shadows[pi] = Shadow(L) if broken is None else None
        else:
            broken = check_touched(L, sh, tables[pi])
            if broken is not None:
                shadows[pi] = None
        if broken is not None:
            return pi, broken
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
