"""content-and-reload.md §4 for one pool's ledger after every event, at the cost of what
the event changed: `check_touched` and the figures it keeps.

Owns `Shadow` (one pool's figures as the last check left them: each block's count and
registration, their totals, each entry's length and blocks, each table holding blocks by
hold id and its length) and `check_touched` (what the ledger noted as changed since,
`Ledger.tb` / `tf` / `te` / `th` / `tt`, checked, the shadow brought up to date, the notes
forgotten). Each block is looked at once, by what names it: the span of the table that
took or registered it (`_tables`), the new entry its release cached it in (`_new_entry`),
the evicted list (`_evicted`), each at the cost of its case; a block a case cannot vouch
for, and a block noted alone, get the whole block check (`_blocks`). It says what
`ledgercheck.check`, the oracle, says of the same changes (tests/sim/test_ledger_kept.py
breaks each case on purpose). It reads the ledger and the tables, and writes only the
shadow and the ledger's notes; it never emits.

Compiled (mypyc, `COMPILED`), a pass in C is a generic call a block, dearer than a native
loop: the parts loop there (`_span_native`, `_released_native`), only the hashes keep their
pass (tests/sim/test_ledger_paths.py runs both paths on the same states)."""

from __future__ import annotations

from collections.abc import Iterable
from operator import itemgetter
from typing import Final, Protocol, cast

from pooltui.sim.content import Content
from pooltui.sim.ledger import NONE, Ledger, Table
from pooltui.sim.ledgerwords import copies_broken, span_block, table_words

# Whether this module runs compiled (mypyc; the docstring says why it matters), set once
# at import; `__file__` read through globals(): older mypyc sets it after the body runs.
COMPILED: Final = not str(globals().get("__file__") or "").endswith(".py")


class Tables(Protocol):
    """A pool's tables by hold id (a dict, or `LiveTables`): the holds' own tables."""

    def get(self, hid: int, /) -> Table | None: ...


class Shadow:
    """A pool's figures as the last check saw them, kept up to date from what changed:
    per block ids ever used, its count × 2 + 1 if registered; the blocks with a count,
    the registered blocks at count 0, the registered blocks, the sum of the counts; each
    entry's length, blocks and the lengths' sum; each table holding blocks, its length
    (by hold id) and their sum."""

    __slots__ = (
        "allocated",
        "cached",
        "eblocks",
        "elen",
        "esum",
        "held",
        "ledger",
        "refs",
        "registered",
        "seen",
        "tabs",
        "tlen",
    )

    def __init__(self, L: Ledger, tables: Iterable[Table] = ()) -> None:
        self.ledger = L  # the ledger it follows (a shadow is never moved to another)
        self.seen = [r * 2 + (h != NONE) for r, h in zip(L.ref, L.bhash, strict=False)]
        self.allocated = sum(1 for r in L.ref if r > 0)
        self.cached = sum(1 for c in self.seen if c == 1)
        self.registered = sum(c & 1 for c in self.seen)
        self.refs = sum(L.ref)
        self.elen = {o: len(e.blocks) for o, e in L.entries.items()}
        self.esum = sum(self.elen.values())
        self.eblocks = {o: list(e.blocks) for o, e in L.entries.items()}  # as last seen
        # The tables' lengths as the ledger's holders give them (a sound ledger: each table
        # holding blocks is named once by each of its blocks), so a shadow needs no tables.
        tlen: dict[int, int] = {}
        for hid, r in zip(L.owner, L.ref, strict=True):
            if r > 0:  # (a block at count 0 has a stale owner)
                tlen[hid] = tlen.get(hid, 0) + 1
        for more in L.sharers.values():
            for hid in more:
                tlen[hid] = tlen.get(hid, 0) + 1
        self.tlen = tlen
        self.held = sum(tlen.values())
        # Hold id -> its table, for the tables holding blocks (`LiveTables` finds a holder
        # here): those given, then each noted as changed with blocks.
        self.tabs = {t.hid: t for t in tables if t.blocks}

    def moved(self, refs: int, registered: int, allocated: int, cached: int) -> None:
        """The totals follow a pass over blocks whose codes changed by these sums."""
        self.refs += refs
        self.registered += registered
        self.allocated += allocated
        self.cached += cached

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


def check_touched(L: Ledger, sh: Shadow, tables: Tables) -> str | None:
    """What `check` says, looking only at what changed since the last call (the ledger's
    touched sets, which it empties) and at figures kept in `sh`. `tables`: every table in
    this pool, by hold id (asked only for the ids the changes name). The same messages as
    `check` where it can tell the same. (This runs after every event: each part is a loop
    over what changed, with locals, the shadow's figures kept inline.)"""
    n = len(L.ref)
    tb, tt, te, th, tf = L.tb, L.tt, L.te, L.th, L.tf
    if not (tb or tt or te or th or tf):  # nothing noted (an event elsewhere)
        return _totals(L, sh, n)
    try:
        if not (
            len(L.bhash) == len(L.bcontent) == len(L.bidx) == len(L.bentry) == len(L.owner) == n
        ):
            return "per-block arrays differ in length"
        seen = sh.seen
        if len(seen) < n:  # ids used for the first time since: they were free
            seen.extend([0] * (n - len(seen)))
        # Each block once, by what names it, the common cases at their own cost (the
        # tables' spans, the new entries, the evicted); any other case, and the blocks
        # noted alone, by the whole block check (`_blocks`). What they hold, who holds
        # them, where they are; the totals follow.
        odd: list[int] = []
        if tt:
            broken = _tables(L, sh, tables, n, odd)
            if broken is not None:
                return broken
        if te:
            broken = _entries(L, sh, odd)
            if broken is not None:
                return broken
        if tf:
            _evicted(L, sh, odd)
        if tb:
            broken = _blocks(L, sh, tables, tb)
            if broken is not None:
                return broken
        if odd:
            broken = _blocks(L, sh, tables, odd)
            if broken is not None:
                return broken
        if th:
            broken = _hashes(L, th)
            if broken is not None:
                return broken
        return _totals(L, sh, n)
    finally:  # forget what changed (`Ledger.untouched`, only the sets that hold some)
        if tb:
            tb.clear()
        if tt:
            tt.clear()
            L.tlo.clear()
            L.thi.clear()
        if te:
            te.clear()
        if th:
            th.clear()
        if tf:
            tf.clear()


def _hashes(L: Ledger, th: set[int]) -> str | None:
    """The touched hashes: each one's copies, if any, registered with it (`copies_broken`).
    With no copies anywhere (most runs), many at once: each listed block's hash looked
    up in C, all unlisted (evicted) or all listing their own block."""
    table, more, bhash = L.table, L.more, L.bhash
    if not more and len(th) > 2:
        firsts = list(map(table.get, th))
        if firsts.count(None) == len(firsts):
            return None
        if None not in firsts:  # (an id past the arrays, or negative, is no block: the loop's)
            ids = cast("list[int]", firsts)
            inside = 0 <= min(ids) <= max(ids) < len(bhash)
            if inside and list(map(bhash.__getitem__, ids)) == list(th):
                return None
    for h in th:
        first = table.get(h)
        if h not in more and (first is None or (0 <= first < len(bhash) and bhash[first] == h)):
            continue  # (most: one copy, or none left)
        broken = copies_broken(bhash, h, first, more.get(h))
        if broken is not None:
            return broken
    return None


def _tables(L: Ledger, sh: Shadow, tables: Tables, n: int, odd: list[int]) -> str | None:
    """The touched tables (as `check`, first): their lengths, the blocks in their touched
    spans, the registrations; each one's length and their sum follow. A block in a span
    that this table alone holds, with this table's content, is checked here whole (what
    `_blocks` would check of it, from the table's side); any other goes to `odd`. (Each
    test is one condition on the way every table and block passes; `table_words` and
    `span_block` say what failed.)"""
    bhash, bidx, owner, sharers = L.bhash, L.bidx, L.owner, L.sharers
    block, tabs, tlen, tlo, thi = L.block, sh.tabs, sh.tlen, L.tlo, L.thi
    ref, bcontent, table, more, seen = L.ref, L.bcontent, L.table, L.more, sh.seen
    held = refs = registered = allocated = cached = 0  # the changes to the shadow's sums
    for hid, t in L.tt.items():
        blocks = t.blocks
        nt = len(blocks)
        lo, hi = tlo[hid], thi[hid]
        kept = tabs.get(hid)
        if (
            nt != -(-t.size // block)
            or t.nreg > nt
            or (kept is not t and nt and tables.get(hid) is not t)
        ):
            return table_words(L, t, nt)
        if lo == hi and nt and tlen.get(hid) == nt:
            continue  # only its size changed (its blocks, registrations, holders did not)
        nreg = t.nreg
        content = t.content
        bh = content.bh if content.bh_block == block else ()  # its hashes, when made
        total, panc = content.total, content.panc
        top = hi if hi < nt else nt
        if top - lo > 8 and not more:  # a long span (a prefill's): in C, if all is well
            moved = _span_in_c(L, seen, t, lo, top, n)
            if moved is not None:
                refs += moved[0]
                registered += moved[1]
                allocated += moved[2]
                cached += moved[3]
                top = lo
        for j in range(lo, top):
            b = blocks[j]
            if (
                not 0 <= b < n
                or bidx[b] != j
                or owner[b] != hid
                or ref[b] != 1
                or b in sharers
                or bcontent[b] is not content
            ):
                broken = span_block(L, t, j, b, n)
                if broken is not None:
                    return broken
                odd.append(b)  # (shared, say: the whole check looks at each holder)
                continue
            # Held by this table alone, at its index, of its content: its hash, if
            # registered, is its content's hash of block j (past its pieces:
            # `Content.prefix_hash`) and listed; its count, 1.
            h = bhash[b]
            if h == NONE:
                if j < nreg:
                    return span_block(L, t, j, b, n)
                code = 2
            else:
                end = (j + 1) * block
                if h != (
                    bh[j]
                    if j < len(bh)
                    else panc + end - total
                    if end > total
                    else content.block_hash(j, block)
                ):
                    if j < nreg:
                        return span_block(L, t, j, b, n)
                    odd.append(b)
                    continue
                if table.get(h) != b and b not in more.get(h, ()):
                    odd.append(b)
                    continue
                code = 3
            old = seen[b]
            if old != code:
                seen[b] = code
                refs += 1 - (old >> 1)
                registered += (code & 1) - (old & 1)
                if old < 2:
                    allocated += 1
                    if old:
                        cached -= 1
        old = tlen.get(hid, 0)
        if nt != old:
            held += nt - old
            if nt:
                tlen[hid] = nt
            else:
                del tlen[hid]
        if nt:
            if kept is not t:
                tabs[hid] = t
        elif kept is not None:
            del tabs[hid]
    sh.held += held
    sh.moved(refs, registered, allocated, cached)
    return None


def _span_in_c(
    L: Ledger, seen: list[int], t: Table, lo: int, top: int, n: int
) -> tuple[int, int, int, int] | None:
    """`_tables`' loop over t's blocks [lo, top) as passes in C, when each is what the loop
    finds most (held by t alone at its index, of its content; registered with its hash
    below t.nreg, unregistered past it; no copies anywhere): the shadow's codes set and
    the changes to its sums (refs, registered, allocated, cached); else None, the loop's."""
    if COMPILED:
        return _span_native(L, seen, t, lo, top, n)
    span = t.blocks[lo:top]
    m, r = top - lo, max(0, min(top, t.nreg) - lo)  # blocks, of which registered
    get = itemgetter(*span)
    hs = list(get(L.bhash))
    if (
        min(span) < 0
        or max(span) >= n
        or get(L.bidx) != tuple(range(lo, top))
        or get(L.owner).count(t.hid) != m
        or get(L.ref).count(1) != m
        or (L.sharers and not L.sharers.keys().isdisjoint(span))
        or get(L.bcontent).count(t.content) != m
        or hs.count(NONE) != m - r
        or (r and hs[:r] != t.content.hashes(L.block, lo, lo + r))
        or (r and list(map(L.table.get, hs[:r])) != span[:r])
    ):
        return None
    codes = get(seen)
    c0, c1, c2, c3 = codes.count(0), codes.count(1), codes.count(2), codes.count(3)
    if c0 + c1 + c2 + c3 != m:  # (a block held twice before: the loop's)
        return None
    for b in span[:r]:
        seen[b] = 3
    for b in span[r:]:
        seen[b] = 2
    return m - c2 - c3, r - c1 - c3, c0 + c1, -c1


def _span_native(
    L: Ledger, seen: list[int], t: Table, lo: int, top: int, n: int
) -> tuple[int, int, int, int] | None:
    """`_span_in_c` as one native loop, the compiled build's: the same blocks vouched for,
    the same changes; hashes read as the objects stored (an `int` read is boxed anew)."""
    blocks, bidx, owner, ref, bcontent = t.blocks, L.bidx, L.owner, L.ref, L.bcontent
    hid, content, sharers = t.hid, t.content, L.sharers
    reg = min(top, t.nreg)  # [lo, reg) registered, [reg, top) not
    want = cast("list[object]", content.hashes(L.block, lo, reg) if reg > lo else [])
    bhash, table = cast("list[object]", L.bhash), cast("dict[object, int]", L.table)
    c0 = c1 = c2 = c3 = 0  # the blocks' codes before
    for j in range(lo, top):
        b = blocks[j]
        if (
            not 0 <= b < n
            or bidx[b] != j
            or owner[b] != hid
            or ref[b] != 1
            or bcontent[b] is not content
            or (sharers and b in sharers)
        ):
            return None
        h = bhash[b]
        if j < reg:
            first = table.get(h)
            if first is None or first != b or h != want[j - lo]:
                return None
        elif h != NONE:
            return None
        code = seen[b]
        if code == 0:
            c0 += 1
        elif code == 1:
            c1 += 1
        elif code == 2:
            c2 += 1
        elif code == 3:
            c3 += 1
        else:  # (a block held twice before: the loop's)
            return None
    for j in range(lo, top):
        seen[blocks[j]] = 3 if j < reg else 2
    r = max(0, reg - lo)
    return top - lo - c2 - c3, r - c1 - c3, c0 + c1, -c1


def _blocks(L: Ledger, sh: Shadow, tables: Tables, blocks: Iterable[int]) -> str | None:
    """The whole check of each of `blocks`; the shadow's per-block codes and totals follow
    (`Shadow.note`)."""
    ref, bhash, bidx, owner, sharers = L.ref, L.bhash, L.bidx, L.owner, L.sharers
    bcontent, bentry, entries, table = L.bcontent, L.bentry, L.entries, L.table
    block, tabs, seen = L.block, sh.tabs, sh.seen
    refs = registered = allocated = cached = 0  # changes to the shadow's totals
    try:
        for b in blocks:
            r, h = ref[b], bhash[b]
            if h != NONE:
                content = bcontent[b]
                if content is None:
                    return f"block {b}: registered hash differs from its content's"
                j = bidx[b]
                bh = content.bh  # (its block hashes, when made for this block size)
                if (bh[j] if content.bh_block == block and 0 <= j < len(bh) else -1) != h and (
                    content.block_hash(j, block) != h  # (of a negative j: -1, no block of it)
                ):
                    return f"block {b}: registered hash differs from its content's"
                if table.get(h) != b and b not in L.more.get(h, ()):
                    return f"block {b}: registered but not in the hash table"
                code = r * 2 + 1
            else:
                code = r * 2
            if r > 0:
                # A table that holds blocks is kept by hold id (checked a hold of this
                # pool when it came to hold them); any other is asked for.
                j = bidx[b]
                hid = owner[b]
                holder = tabs.get(hid) or tables.get(hid)
                if holder is None or j >= len(holder.blocks) or holder.blocks[j] != b:
                    return f"block {b}: count {r} names hold {hid}, which does not hold it"
                if b in sharers:
                    more = sharers[b]
                    for hid in more:
                        holder = tabs.get(hid) or tables.get(hid)
                        if holder is None or j >= len(holder.blocks) or holder.blocks[j] != b:
                            return f"block {b}: count {r} names hold {hid}, which does not hold it"
                    if r != 1 + len(more):
                        return f"block {b}: count {r}, but {1 + len(more)} tables hold it"
                elif r != 1:
                    return f"block {b}: count {r}, but 1 tables hold it"
                # (its entry is stale: an entry listing it is the entries' check's)
            else:
                if r < 0 or b in sharers:  # (the owner of a block at count 0 is stale)
                    others = list(sharers.get(b, ()))
                    return f"block {b}: count {r}, but holders {others}"
                if h != NONE and bentry[b] not in entries:
                    return f"entry {bentry[b]} of cached block {b} does not exist"
            old = seen[b]
            if old != code:
                seen[b] = code
                refs += r - (old >> 1)
                registered += (code & 1) - (old & 1)
                if old > 1:
                    allocated -= 1
                elif old:
                    cached -= 1
                if r:
                    allocated += 1
                elif code:
                    cached += 1
        return None
    finally:
        sh.moved(refs, registered, allocated, cached)


def _entries(L: Ledger, sh: Shadow, odd: list[int]) -> str | None:
    """The touched entries: the blocks each lists that are new to it or changed since (the
    others were cached blocks of it at the last check, and unchanged still are); their
    lengths and block lists follow. An entry that only lost blocks from its tail (an
    eviction) keeps its list, cut; only its touched blocks are looked at again. The blocks
    of a new entry (a release's, whose blocks the ledger notes by it) are checked here
    whole (`_new_entry`)."""
    ref, bhash, bentry, entries = L.ref, L.bhash, L.bentry, L.entries
    elen, eblocks, tb = sh.elen, sh.eblocks, L.tb
    for order in L.te:
        e = entries.get(order)
        if e is None:  # (gone: its length leaves the sum)
            sh.esum -= elen.pop(order, 0)
            eblocks.pop(order, None)
            continue
        before = eblocks.get(order)
        blocks = e.blocks
        if e.order != order or not blocks:
            return f"entry {order}: misfiled or empty"
        n = len(blocks)
        look: Iterable[int]
        if before is None:
            look, kept = blocks, list(blocks)
        else:
            if n < len(before):  # (cut first: no copy; a block cut is new to it if listed)
                del before[n:]
            if before == blocks:  # its tail went, or nothing: the rest as it was
                look = tb.intersection(blocks) if tb else ()
                kept = before
            else:
                now = set(blocks)
                look, kept = (now - set(before)) | (now & tb), list(blocks)
        # Each looked-at block cached in this entry: counted in C (compiled: a loop), worded.
        nl = len(look)
        fine = True
        try:  # (an id past the arrays is no cached block: worded below)
            if nl > 1 and not COMPILED:
                get = itemgetter(*look)
                fine = get(bentry).count(order) == get(ref).count(0) == nl
                fine = fine and NONE not in get(bhash)
            elif nl:
                for b in look:
                    if bentry[b] != order or ref[b] != 0 or bhash[b] == NONE:
                        fine = False
                        break
        except IndexError:
            fine = False
        if not fine:
            for b in blocks:  # the first, in the full check's words
                if not 0 <= b < len(bentry) or bentry[b] != order or ref[b] or bhash[b] == NONE:
                    return f"entry {order}: block {b} is not a cached block of it"
        if before is None:
            _new_entry(L, sh, blocks, odd)
        if kept is not before:
            eblocks[order] = kept
        sh.esum += n - elen.get(order, 0)
        elen[order] = n
    return None


def _new_entry(L: Ledger, sh: Shadow, blocks: list[int], odd: list[int]) -> None:
    """The blocks of an entry new since the last check, each found a cached block of it
    (`_entries`): what `_blocks` would check of each, from its content; a block it cannot
    vouch for goes to `odd`. The shadow's codes and totals follow."""
    bhash, bidx, bcontent, table, more = L.bhash, L.bidx, L.bcontent, L.table, L.more
    block, seen = L.block, sh.seen
    if L.sharers and not L.sharers.keys().isdisjoint(blocks):  # (cached: no holders)
        odd.extend(blocks)
        return
    n = len(blocks)
    if n > 8 and not more:  # a release's: its content's blocks 0.. in chain order, in C
        if COMPILED and _released_native(L, sh, blocks):
            return
        get = itemgetter(*blocks)
        cs, js, hs = get(bcontent), get(bidx), list(get(bhash))
        c, j0 = cs[0], js[0]
        if (
            isinstance(c, Content)
            and cs.count(c) == n
            and js == tuple(range(j0, j0 + n))
            and hs == c.hashes(block, j0, j0 + n)
            and list(map(table.get, hs)) == blocks
            and get(seen).count(3) == n  # each held by one table, registered
        ):
            for b in blocks:
                seen[b] = 1
            sh.moved(-n, 0, -n, n)
            return
    refs = registered = allocated = cached = 0
    last: object = None
    bh: list[int] | tuple[()] = ()
    total = panc = 0
    for b in blocks:
        c = bcontent[b]
        if c is None:
            odd.append(b)
            continue
        if c is not last:
            last = c
            bh = c.bh if c.bh_block == block else ()
            total, panc = c.total, c.panc
        h, j = bhash[b], bidx[b]
        end = (j + 1) * block  # its content's hash of block j, as in `_tables`
        if h != (  # (of a negative j, `block_hash` says -1: no block of it)
            bh[j]
            if 0 <= j < len(bh)
            else panc + end - total
            if end > total
            else c.block_hash(j, block)
        ) or (table.get(h) != b and b not in more.get(h, ())):
            odd.append(b)
            continue
        old = seen[b]
        if old != 1:
            seen[b] = 1
            cached += 1
            refs -= old >> 1
            registered += 1 - (old & 1)
            if old:
                allocated -= 1
    sh.moved(refs, registered, allocated, cached)


def _released_native(L: Ledger, sh: Shadow, blocks: list[int]) -> bool:
    """`_new_entry`'s passes in C as native loops, the compiled build's (as `_span_native`):
    whether the blocks are their content's blocks j0.. in chain order, each registered
    with its hash and listed, held by one table before; if so the shadow follows."""
    bcontent, bidx, seen = L.bcontent, L.bidx, sh.seen
    c = bcontent[blocks[0]]
    j0, n = bidx[blocks[0]], len(blocks)
    for k in range(n):
        b = blocks[k]
        if bcontent[b] is not c or bidx[b] != j0 + k or seen[b] != 3:
            return False
    if c is None:
        return False
    want = cast("list[object]", c.hashes(L.block, j0, j0 + n))
    bhash, table = cast("list[object]", L.bhash), cast("dict[object, int]", L.table)
    for k in range(n):
        b = blocks[k]
        h = bhash[b]
        first = table.get(h)
        if first is None or first != b or h != want[k]:
            return False
    for b in blocks:
        seen[b] = 1
    sh.moved(-n, 0, -n, n)
    return True


def _evicted(L: Ledger, sh: Shadow, odd: list[int]) -> None:
    """The evicted blocks (`Ledger.tf`): free now (count 0, unregistered, no holders) each
    becomes so in the shadow; any other (taken again since, say) goes to `odd`. (Those
    of one eviction were cached blocks at the last check, mostly: tested in C at once.)"""
    ref, bhash, sharers, seen, tf = L.ref, L.bhash, L.sharers, sh.seen, L.tf
    n = len(tf)
    if n == 1:  # (most: a decode step's one block) a cached block before, free now
        b = tf[0]
        if seen[b] == 1 and not ref[b] and bhash[b] == NONE and b not in sharers:
            seen[b] = 0
            sh.registered -= 1
            sh.cached -= 1
            return
    if (
        n > 1
        and not COMPILED
        and len(set(tf)) == n
        and (not sharers or sharers.keys().isdisjoint(tf))
    ):
        get = itemgetter(*tf)  # (each once: a block evicted, taken, evicted is the loop's)
        if get(seen).count(1) == n and get(bhash).count(NONE) == n and not any(get(ref)):
            for b in tf:
                seen[b] = 0
            sh.moved(0, -n, 0, -n)
            return
    refs = registered = allocated = cached = 0
    for b in tf:
        if ref[b] or bhash[b] != NONE or b in sharers:
            odd.append(b)
            continue
        old = seen[b]
        if old:
            seen[b] = 0
            registered -= old & 1
            if old == 1:
                cached -= 1
            else:
                refs -= old >> 1
                allocated -= 1
    sh.moved(refs, registered, allocated, cached)


def _totals(L: Ledger, sh: Shadow, n: int) -> str | None:
    allocated, cached, total = sh.allocated, sh.cached, L.total
    if (  # all at once (every event), then which one in words
        allocated == L.allocated
        and cached == L.cached == sh.esum
        and sh.registered - len(L.table) == L.dups
        and sh.held == sh.refs
        and len(L.free) + allocated + cached == n
        and (total < 0 or (allocated + cached <= total and L.fresh + n == total >= n))
    ):
        return None
    if sh.allocated != L.allocated:
        return f"allocated is {L.allocated} blocks but {sh.allocated} have a count"
    if sh.cached != L.cached:
        return f"cached is {L.cached} blocks but {sh.cached} registered blocks have count 0"
    if sh.esum != sh.cached:
        return f"entries hold {sh.esum} blocks but {sh.cached} are cached"
    if sh.registered - len(L.table) != L.dups:
        return f"dups is {L.dups} but the hash table has {sh.registered - len(L.table)}"
    if sh.held != sh.refs:
        return f"block counts add up to {sh.refs}, but the tables hold {sh.held} blocks"
    if len(L.free) + sh.allocated + sh.cached != n:
        return f"{len(L.free)} free + {sh.allocated} allocated + {sh.cached} cached ≠ {n} used ids"
    if L.total >= 0 and sh.allocated + sh.cached > L.total:
        return f"allocated + cached = {sh.allocated + sh.cached} > {L.total} blocks"
    if L.total >= 0 and (L.fresh + n != L.total or L.fresh < 0):
        return f"fresh {L.fresh} + {n} used ids ≠ {L.total} blocks"
    return None
