"""A pool's block ledger: content-addressed, reference-counted KV blocks (vLLM v1's
`BlockPool` + `KVCacheManager`), per content-and-reload.md §1, §2 and §4.

It owns one pool member's physical blocks (free ids, reference counts, registered hashes),
the table hash -> registered copies (`table` the first, `more` the others), the cache
entries (one per release), the holds' block tables (`Table`; its records are
`ledgertypes.py`'s); content identity is `content.py`'s; the fast mode's step of many
tables each growing by a block is `ledgerbatch.py`'s. It may not touch the engine, its
events, clock or policies: it never chooses what to evict (the caller orders `entries`),
never emits, and imports neither the engine nor textual nor rich. Plain data only
(pickled into debugger checkpoints); memory follows the blocks in use, not the cap:
never-used ids are a count (`fresh`), per-block arrays grow as ids are first used, content
is runs of pieces. While `track` is on it notes what each change touched, for the
invariant check (`ledgercheck`, which also holds the full §4 check).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final, cast

from mypy_extensions import mypyc_attr

from pooltui.sim.content import BUCKET, Content
from pooltui.sim.ledgertypes import Attrs, Number, indices
from pooltui.sim.ledgertypes import CacheEntry as CacheEntry  # the ledger's records, as before
from pooltui.sim.ledgertypes import Evicted as Evicted
from pooltui.sim.ledgertypes import Hit as Hit
from pooltui.sim.ledgertypes import Table as Table
from pooltui.sim.ledgertypes import spill_ranges as spill_ranges

NONE: Final = -1  # no hash / no entry / no holder
# Hot loops move ints between containers as `object`s (a cast, free when interpreted):
# compiled, an `int` is unboxed when read and boxed again, a new object past 256, when stored.
DIRTY_LIMIT: Final = 1 << 16  # hash buckets remembered as changed (then every cached run goes)
FREE, HELD, CACHED = "free", "held", "cached"  # block states in snapshots


@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)
class Ledger:
    """One pool member's blocks. `nblocks` None (or -1) is an infinite pool."""

    __slots__ = (
        "allocated",
        "bcontent",
        "bentry",
        "bhash",
        "bidx",
        "block",
        "cached",
        "dirty",
        "dup_registrations",
        "dups",
        "entries",
        "epoch",
        "floor",
        "free",
        "fresh",
        "more",
        "next_order",
        "owner",
        "ref",
        "repoch",
        "sharers",
        "table",
        "tb",
        "te",
        "tf",
        "th",
        "thi",
        "tlo",
        "total",
        "track",
        "tt",
    )

    def __init__(self, nblocks: int | None, block: int = 1) -> None:
        if block < 1:
            raise ValueError(f"block {block}")
        self.block = block
        self.total = -1 if nblocks is None or nblocks < 0 else nblocks  # -1: infinite
        self.fresh = max(self.total, 0)  # never-used ids (finite pools); next is len(ref)
        self.free: list[int] = []  # returned ids, a stack: last returned is reused first
        # Per-block arrays, as long as the highest id ever used + 1.
        self.ref: list[int] = []
        self.bhash: list[int] = []  # NONE when not registered
        self.bcontent: list[Content | None] = []  # whose content it holds (None when free)
        self.bidx: list[int] = []  # its block index in that content's chain
        # owner and bentry say something only while the block is held (count >= 1) or
        # cached (count 0, registered) respectively; otherwise they keep a stale value
        # (not cleared block by block: a store per block of each release and eviction).
        self.bentry: list[int] = []  # the entry (order) of a cached block
        self.owner: list[int] = []  # first holder (hold id) of a held block
        self.sharers: dict[int, dict[int, None]] = {}  # block -> other holders, in order
        # hash -> its first registered copy; `more`: hash -> the later copies, in
        # registration order, for the hashes that have more than one (few: an int per
        # hash, not a list, is what registration and eviction of most blocks cost).
        self.table: dict[int, int] = {}
        self.more: dict[int, list[int]] = {}
        self.entries: dict[int, CacheEntry] = {}  # order -> entry; least recent first
        self.allocated = 0  # blocks with count >= 1
        self.cached = 0  # registered blocks with count 0
        self.dups = 0  # registered blocks now that are not their hash's first copy
        self.dup_registrations = 0  # statistic: registrations that found a copy
        self.next_order = 0
        # Lookups are cached on their content (`Content.lk`): `epoch` counts batches of
        # unregistrations (a found run may shrink, a first copy change); `dirty`, by hash
        # bucket (`content.BUCKET`), the last one that touched it (a content's cached run
        # stands while none of its buckets changed since), kept since epoch `floor` only
        # (bounded); `repoch` counts changes of blocks' counts to or from zero.
        self.epoch = 0
        self.floor = 0
        self.dirty: dict[int, int] = {}
        self.repoch = 0
        # What changed since the last invariant check (`ledgertouched.check_touched`
        # consumes it; only while `track` is on): each block once, by what names it (a
        # table's span [tlo, thi) if it took or registered it, the new entry if a release
        # cached it, `tf` if evicted, else `tb`), entries (orders), hashes, tables.
        self.track = False
        self.tb: set[int] = set()
        self.tf: list[int] = []
        self.te: set[int] = set()
        self.th: set[int] = set()
        self.tt: dict[int, Table] = {}
        self.tlo: dict[int, int] = {}
        self.thi: dict[int, int] = {}

    def mark_table(self, t: Table, lo: int, hi: int) -> None:
        """Table t's blocks [lo, hi) changed, or its size (for the invariant check)."""
        hid = t.hid
        self.tt[hid] = t
        old = self.tlo.get(hid)
        if old is None:
            self.tlo[hid], self.thi[hid] = lo, hi
        else:
            self.tlo[hid] = min(old, lo)
            self.thi[hid] = max(self.thi[hid], hi)

    def untouched(self) -> None:
        """Forget what changed (the check has seen it, or nobody will)."""
        self.tb.clear()
        self.tf.clear()
        self.te.clear()
        self.th.clear()
        self.tt.clear()
        self.tlo.clear()
        self.thi.clear()

    @staticmethod
    def for_cap(cap: Number, block: int | None) -> Ledger:
        b = block or 1
        return Ledger(None if math.isinf(cap) else int(cap) // b, b)

    # ------------------------------------------------------------------ room
    def room(self) -> Number:
        """Blocks an allocation could get: free + never used + evictable cached."""
        return math.inf if self.total < 0 else len(self.free) + self.fresh + self.cached

    def fits(self, n_new: int, hit: Hit | None = None) -> bool:
        """Whether n_new blocks past `hit` fit: the hit's cached blocks are not room."""
        return n_new <= self.room() - (hit.cached if hit is not None else 0)

    def short(self, n: int) -> int:
        """Blocks to evict before n can be allocated (0 when free + fresh suffice)."""
        return 0 if self.total < 0 else max(0, n - len(self.free) - self.fresh)

    def nb(self, units: int) -> int:  # blocks for `units` units
        return -(-units // self.block)

    # ------------------------------------------------------------------ ids
    def _take(self, content: Content, index: int) -> int:
        if self.free:
            b = self.free.pop()
        else:
            if self.total >= 0:
                if self.fresh <= 0:
                    raise RuntimeError("ledger: no free block (evict first)")
                self.fresh -= 1
            b = len(self.ref)
            self.ref.append(0)
            self.bhash.append(NONE)
            self.bcontent.append(None)
            self.bidx.append(0)
            self.bentry.append(NONE)
            self.owner.append(NONE)
        self.bcontent[b] = content
        self.bidx[b] = index
        return b

    # ------------------------------------------------------------------ hits
    def lookup(self, content: Content, upto: int) -> Hit:
        """The hit for an attempt whose max(U, context) is `upto`: the longest run of leading
        registered blocks (first copies), at most floor((upto - 1) / block) blocks."""
        limit = (upto - 1) // self.block if upto >= 1 else 0
        if not self._cached_run(content):
            content.lk = self
            content.lk_blocks = []
            content.lk_n = -1
        content.lk_epoch = self.epoch
        found = content.lk_blocks
        table = self.table
        # Walk on from where the last lookup stopped (nothing it found was unregistered
        # since), one hash first (a waiting hold's run mostly stops there), then by
        # growing chunks of hashes.
        step = 1
        while len(found) < limit:
            lo = len(found)
            hi = min(limit, lo + step)
            copies = list(map(table.get, content.hashes(self.block, lo, hi)))
            try:
                stop = copies.index(None)
            except ValueError:
                stop = len(copies)
            found.extend(copies[:stop])  # type: ignore[arg-type]
            if stop < len(copies):
                break
            step *= 8
        out = Hit()
        n = min(limit, len(found))
        out.blocks = found[:n]
        out.units = n * self.block
        if content.lk_n != n or content.lk_repoch != self.repoch:
            content.lk_n = n
            content.lk_repoch = self.repoch
            content.lk_cached = list(map(self.ref.__getitem__, out.blocks)).count(0)
        out.cached = content.lk_cached
        out.shared = n - out.cached
        return out

    def _cached_run(self, content: Content) -> bool:
        """Whether the run of first copies cached on `content` still stands: nothing in the
        buckets of its hashes was unregistered since it was found."""
        if content.lk is not self or content.lk_epoch < self.floor:
            return False
        since = content.lk_epoch
        if since == self.epoch:
            return True
        dirty = self.dirty
        for bucket in content.buckets(self.block, len(content.lk_blocks)):
            if dirty.get(bucket, -1) > since:
                return False
        return True

    def dirtied(self) -> None:
        """A batch of unregistrations is over: keep `dirty` bounded."""
        if len(self.dirty) > DIRTY_LIMIT:
            self.dirty.clear()
            self.floor = self.epoch

    def acquire(self, t: Table, hit: Hit) -> None:
        """Put a hit into an empty table: cached blocks leave their entries (0 -> 1),
        held ones are shared (+1). Then `grow` the table to its size."""
        if t.blocks:
            raise RuntimeError("ledger: acquire into a table that holds blocks")
        hb = hit.blocks
        if NONE in map(self.bhash.__getitem__, hb):
            raise RuntimeError("ledger: stale hit (a block was evicted since)")
        ref, owner, hid = self.ref, cast("list[object]", self.owner), t.hid
        ho: object = hid
        leaving: dict[int, set[int]] = {}  # entry order -> its blocks the hit takes
        bentry = self.bentry
        for b in hb:
            if ref[b] == 0:
                order = bentry[b]
                got = leaving.get(order)
                if got is None:
                    leaving[order] = {b}
                else:
                    got.add(b)
                owner[b] = ho
                ref[b] = 1
            else:
                self.sharers.setdefault(b, {})[hid] = None
                ref[b] += 1
        for order, gone in leaving.items():
            e = self.entries[order]
            e.blocks = [b for b in e.blocks if b not in gone]
            if not e.blocks:
                del self.entries[order]
            self.cached -= len(gone)
            self.allocated += len(gone)
            self.repoch += 1
            if self.track:
                self.te.add(order)
        t.blocks = list(hb)
        t.nreg = len(hb)
        t.size = hit.units
        t.content.lk = None  # admitted: its lookup is done
        t.content.lk_blocks = []
        if self.track:  # (its blocks: by the table's span)
            self.mark_table(t, 0, len(t.blocks))

    def grow(self, t: Table, size: int) -> list[int]:
        """Grow t to `size` units: the new blocks (from the free stack, then never-used
        ids). The caller evicts first (`short`); raises when there is no free block."""
        need = self.nb(size) - len(t.blocks)
        if need > 0 and self.short(need) > 0:
            raise RuntimeError(f"ledger: {need} blocks wanted, evict {self.short(need)} first")
        start = len(t.blocks)
        if need <= 0:  # (the same blocks hold the larger size: nothing for the check)
            t.size = max(t.size, size)
            return []
        content, hid = t.content, t.hid
        free = self.free
        k = min(need, len(free))
        if k:  # the free stack's top first, as one pop after another
            ids = free[len(free) - k :]
            ids.reverse()
            del free[len(free) - k :]
            ref, bcontent = self.ref, self.bcontent
            owner, bidx = cast("list[object]", self.owner), cast("list[object]", self.bidx)
            js = indices(start, start + k) if k > 8 else range(start, start + k)
            ho: object = hid
            for b, j in zip(ids, cast("Sequence[object]", js), strict=True):
                bcontent[b] = content
                bidx[b] = j
                owner[b] = ho
                ref[b] = 1
        else:
            ids = []
        m = need - k
        if m:  # never-used ids, in increasing order
            if self.total >= 0:
                self.fresh -= m
            first = len(self.ref)
            ids.extend(range(first, first + m))
            self.ref.extend([1] * m)
            self.bhash.extend([NONE] * m)
            self.bcontent.extend([content] * m)
            self.bidx.extend(indices(start + k, start + need))
            self.bentry.extend([NONE] * m)
            self.owner.extend([hid] * m)
        self.allocated += need
        t.blocks.extend(ids)
        t.size = max(t.size, size)
        if self.track:
            self.mark_table(t, start, len(t.blocks))
        return ids

    def register(self, t: Table, computed: int) -> tuple[int, int]:
        """The tokens taken complete t's blocks below `computed` units: register each not
        yet registered under its hash (a copy appended in registration order).
        Returns (blocks registered, of which duplicates)."""
        block = self.block
        last = min(computed // block, len(t.blocks))
        lo = t.nreg
        if last <= lo:
            return 0, 0
        content = t.content
        if last == lo + 1 and last * block > content.total:
            return 1, self.register_one(t, content.panc + last * block - content.total)
        n, dup = last - lo, 0
        hs = content.hashes(block, lo, last)
        ids = t.blocks[lo:last]
        table, bhash = self.table, cast("list[object]", self.bhash)
        for b, h in zip(ids, cast("list[object]", hs), strict=True):
            bhash[b] = h  # (bcontent, bidx were set when t took it)
        # One pass in C: each hash not registered yet gets b as its first copy; firsts
        # says, per block, the first copy its hash has now (b itself, or an older copy).
        firsts = list(map(table.setdefault, hs, ids))
        if firsts != ids:  # copies: appended after the first, in registration order
            more = self.more
            for b, h, first in zip(ids, hs, firsts, strict=True):
                if first != b:
                    copies = more.get(h)
                    if copies is None:
                        more[h] = [b]
                    else:
                        copies.append(b)
                    dup += 1
        if self.track:  # (each first copy: by the table's span; copies: their hashes too)
            if dup:
                self.th.update(hs)
            self.mark_table(t, lo, last)
        t.nreg = last
        self.dups += dup
        self.dup_registrations += dup
        return n, dup

    def register_one(self, t: Table, h: int) -> int:
        """Register t's next block, of its private stream (a decode step's, mostly), under
        its hash h (`Content.prefix_hash`: one addition; the caller checked that it is
        that block, `register`). Returns 1 if it is a duplicate."""
        blocks: list[object] = t.blocks  # type: ignore[assignment]  # (by NONE: objects)
        hashes: list[object] = self.bhash  # type: ignore[assignment]
        table: dict[object, object] = self.table  # type: ignore[assignment]
        j = t.nreg
        b, bo = t.blocks[j], blocks[j]  # the block, and the same as an object
        ho: object = h  # boxed once
        hashes[b] = ho
        t.nreg = j + 1
        if self.track:  # (a first copy: by the table's span; a copy, its hash too)
            self.mark_table(t, j, j + 1)
        if ho not in table:
            table[ho] = bo
            return 0
        if self.track:
            self.th.add(h)
        self.more.setdefault(h, []).append(b)
        self.dups += 1
        self.dup_registrations += 1
        return 1

    # ------------------------------------------------------------------ release
    def release(
        self, t: Table, now: float, attrs: Attrs = None, serial: int = 0, keep: bool = True
    ) -> CacheEntry | None:
        """Release (or preempt) t: each block's count goes down; those reaching 0 become
        cached if registered (this release's entry, chain order) or are freed. With
        keep=False (a dropped hold) they are all unregistered and freed. Empties t."""
        e = CacheEntry(self.next_order, t.content.sid, self.block, now, attrs, serial)
        e.content = t.content
        if self.track:
            self.mark_table(t, 0, 0)
        if keep:
            return self._release_kept(t, e)
        if self.track:
            self.tb.update(t.blocks)
        ref, bhash, owner, hid = self.ref, self.bhash, self.owner, t.hid
        freed: list[int] = []  # blocks left at count 0, chain order: all freed
        for b in t.blocks:
            r = ref[b] - 1
            ref[b] = r
            if r:
                self._unshare(b, hid)
            else:
                owner[b] = NONE
                if bhash[b] != NONE:
                    self._unregister(b)
                freed.append(b)
        if freed:  # the table's first freed block is reused first
            self.allocated -= len(freed)
            self.repoch += 1
            freed.reverse()
            bcontent = self.bcontent
            for b in freed:
                bcontent[b] = None
            self.free.extend(freed)
        t.blocks, t.size, t.nreg = [], 0, 0
        return None

    def _release_kept(self, t: Table, e: CacheEntry) -> CacheEntry | None:
        """`release` keeping what it registered, by parts rather than block by block: the
        blocks others share (registered, so among its first nreg: registration only
        extends a table's registered head) lose one holder; the rest go from count 1 to
        0, its registered ones becoming entry e (chain order), the others freed (the
        table's first freed block reused first), as the block-by-block walk leaves them."""
        blocks = t.blocks
        n = len(blocks)
        nreg = t.nreg
        ref, owner = self.ref, self.owner
        sharers = self.sharers
        hid = t.hid
        if not sharers:
            shared: set[int] | None = None
        elif len(sharers) < n:  # t holds b if it is b's first holder or among the others
            shared = {b for b, more in sharers.items() if hid in more or owner[b] == hid}
        else:
            shared = sharers.keys() & blocks
        if shared:
            for b in shared:  # each block's holders on their own: any order will do
                ref[b] -= 1
                more = sharers[b]
                if hid in more:
                    del more[hid]
                else:  # its first holder lets go: the next becomes the first
                    first = next(iter(more))
                    owner[b] = first
                    del more[first]
                if not more:
                    del sharers[b]
            # A block sits at its index in every table holding it: the shared ones are
            # among the first m (hits are leading runs), the rest is kept as it is.
            m = max([self.bidx[b] for b in shared]) + 1
            kept = [b for b in blocks[:m] if b not in shared]
            kept += blocks[m:nreg]
        else:
            kept = blocks[:nreg] if nreg < n else blocks
        if self.track:  # (those it caches: by their new entry)
            self.tb.update(shared or (), blocks[nreg:])
        if kept:
            bentry, order = cast("list[object]", self.bentry), cast(object, e.order)
            for b in kept:  # (owner goes stale: a cached block has none)
                ref[b] = 0
                bentry[b] = order
            e.blocks = kept
            self.cached += len(kept)
        if nreg < n:
            freed = blocks[nreg:]
            freed.reverse()
            bcontent = self.bcontent
            for b in freed:
                ref[b] = 0
                owner[b] = NONE
                bcontent[b] = None
            self.free.extend(freed)
        zero = len(kept) + n - nreg
        if zero:
            self.allocated -= zero
            self.repoch += 1
        t.blocks, t.size, t.nreg = [], 0, 0
        return self._file(e)

    def _unshare(self, b: int, hid: int) -> None:
        """Hold hid lets go of b, which others still hold."""
        more = self.sharers[b]
        if self.owner[b] == hid:
            hid = next(iter(more))  # the next holder becomes the first
            self.owner[b] = hid
        del more[hid]
        if not more:
            del self.sharers[b]

    def _file(self, e: CacheEntry) -> CacheEntry | None:
        if not e.blocks:
            return None
        self.next_order += 1
        self.entries[e.order] = e
        if self.track:
            self.te.add(e.order)
        return e

    def _unregister(self, b: int) -> None:
        self.epoch += 1
        h = self.bhash[b]
        self.dirty[h >> BUCKET] = self.epoch
        self.dirtied()
        self.drop_copy(h, b)
        self.bhash[b] = NONE
        if self.track:
            self.th.add(h)

    def drop_copy(self, h: int, b: int) -> None:
        """Copy b of hash h is unregistered: the next copy, if any, becomes the first."""
        copies = self.more.get(h)
        if copies is None:
            del self.table[h]
            return
        self.dups -= 1
        if self.table[h] == b:
            self.table[h] = copies.pop(0)
        else:
            copies.remove(b)
        if not copies:
            del self.more[h]

    def copies(self, h: int) -> list[int]:
        """The blocks registered under hash h, in registration order ([] if none)."""
        first = self.table.get(h)
        if first is None:
            return []
        return [first, *self.more.get(h, ())]

    # ------------------------------------------------------------------ eviction
    def lru(self) -> CacheEntry | None:
        """The least recently released entry (the first of `entries`)."""
        return next(iter(self.entries.values()), None)

    def touch(self, order: int, now: float) -> None:
        """Refresh an entry's `last` (a reload read it): it becomes the most recent."""
        e = self.entries.pop(order)
        e.last = now
        self.entries[order] = e
        if self.track:
            self.te.add(order)

    def evict(self, order: int, n: int) -> list[Evicted]:
        """Evict n blocks of entry `order`, tail first: unregister and free them. Returns
        them in eviction order with the content and units each held."""
        e = self.entries[order]  # (`evict_ids` refuses more than it has)
        bcontent, bidx, block = self.bcontent, self.bidx, self.block
        out: list[Evicted] = []
        for b in reversed(e.blocks[len(e.blocks) - n :]):
            content = bcontent[b]
            assert content is not None
            out.append(Evicted(b, content, bidx[b], block))
        self.evict_ids(order, n)
        return out

    def evict_ids(self, order: int, n: int) -> list[int]:
        """`evict`, returning only the blocks' ids (no spill needs their content)."""
        e = self.entries[order]
        eb = e.blocks
        if n > len(eb):
            raise RuntimeError(f"ledger: evict {n} of an entry of {len(eb)} blocks")
        cut = len(eb) - n
        out = eb[cut:]
        out.reverse()  # tail first
        del eb[cut:]
        table, bhash, bcontent = self.table, self.bhash, self.bcontent
        if self.track:
            self.th.update([bhash[b] for b in out])
        self.epoch += 1
        # The buckets their hashes fall in are dirty: the entry's blocks are blocks of its
        # content's chain, so those of the index span they cover (O(pieces), not a shift
        # and a set insertion per block; a bucket of a block between them is marked too,
        # which only costs a lookup its cached run).
        c = e.content
        if n > 8 and c is not None:
            marks = c.buckets_between(self.block, self.bidx[out[-1]], self.bidx[out[0]] + 1)
            self.dirty.update(dict.fromkeys(marks, self.epoch))
        else:  # a few blocks: each its own
            dirty, epoch = self.dirty, self.epoch
            for b in out:
                dirty[bhash[b] >> BUCKET] = epoch
        # (bentry goes stale: a free block has none; `Ledger.bentry`)
        if self.dups == 0:  # every hash has one copy: the evicted block
            hashes, tab = cast("list[object]", bhash), cast("dict[object, int]", table)
            for b in out:
                del tab[hashes[b]]
                bhash[b] = NONE
                bcontent[b] = None
        else:
            for b in out:
                self.drop_copy(bhash[b], b)
                bhash[b] = NONE
                bcontent[b] = None
        self.dirtied()
        self.cached -= n
        self.free.extend(out)
        if self.track:
            self.tf.extend(out)
            self.te.add(order)
        if not eb:
            del self.entries[order]
        return out

    def reachable(self, b: int) -> bool:
        """Whether a lookup walking from block 0 of its content would hit cached or held
        block b (every shorter prefix registered, and b its hash's first copy)."""
        if b >= len(self.ref) or self.bhash[b] == NONE:
            return False
        content = self.bcontent[b]
        assert content is not None
        if any(not self.has(content, j) for j in range(self.bidx[b])):
            return False
        return self.table[self.bhash[b]] == b

    # ------------------------------------------------------------------ spill tiers
    def whole_blocks(self, lo: int, hi: int) -> range:
        """This pool's block indices j whose units [j·B, (j+1)·B) lie inside [lo, hi)."""
        return range(-(-lo // self.block), hi // self.block)

    def spill_plan(self, content: Content, lo: int, hi: int) -> tuple[list[int], list[int]]:
        """A spilled range [lo, hi) of `content` in this (tier) pool's blocks:
        (block indices to write, block indices this pool already has registered)."""
        have = [j for j in self.whole_blocks(lo, hi) if self.has(content, j)]
        return [j for j in self.whole_blocks(lo, hi) if j not in have], have

    def has(self, content: Content, j: int) -> bool:
        """Whether this pool has block j of `content` registered."""
        return content.block_hash(j, self.block) in self.table

    def land(
        self, content: Content, js: list[int], now: float, attrs: Attrs = None, serial: int = 0
    ) -> CacheEntry | None:
        """Landed tier blocks (indices of `content` in this pool's blocks) become one cached
        entry, skipping those registered meanwhile. The caller evicts first (`short`)."""
        todo = [j for j in js if not self.has(content, j)]
        if self.short(len(todo)) > 0:
            raise RuntimeError(f"ledger: landing {len(todo)} blocks, evict first")
        e = CacheEntry(self.next_order, content.sid, self.block, now, attrs, serial)
        e.content = content
        e.spilled = True
        for j in sorted(set(todo)):
            b = self._take(content, j)
            self.bhash[b] = content.block_hash(j, self.block)
            self.table[self.bhash[b]] = b
            self.bentry[b] = e.order
            self.cached += 1
            e.blocks.append(b)
            if self.track:
                self.tb.add(b)
                self.th.add(self.bhash[b])
        return self._file(e)

    # ------------------------------------------------------------------ snapshots
    def state_of(self, b: int) -> str:
        if b >= len(self.ref) or (self.ref[b] == 0 and self.bhash[b] == NONE):
            return FREE
        return HELD if self.ref[b] > 0 else CACHED

    def holders(self, b: int) -> list[int]:
        """Hold ids of the tables holding b, first holder first."""
        if b >= len(self.ref) or self.ref[b] == 0:
            return []
        return [self.owner[b], *self.sharers.get(b, {})]

    def summary(self, b: int) -> str:
        """What block b holds: its piece keys and/or private session; '' when free."""
        content = self.bcontent[b] if b < len(self.ref) else None
        if content is None:
            return ""
        lo = self.bidx[b] * self.block
        return content.summary(lo, lo + self.block)

    def is_duplicate(self, b: int) -> bool:
        h = self.bhash[b] if b < len(self.ref) else NONE
        return h != NONE and self.table[h] != b
