"""A pool's block ledger: content-addressed, reference-counted KV blocks (vLLM v1's
`BlockPool` + `KVCacheManager`), per content-and-reload.md §1, §2 and §4.

It owns one pool member's physical blocks (free ids, reference counts, registered hashes),
the table hash -> registered copies, the cache entries (one per release), the holds' block
tables (`Table`) and content identity (`Content`: a deterministic chained 63-bit hash).
It may not touch the engine, its events, clock or policies: it never chooses what to evict
(the caller orders `entries`), never emits, and imports neither the engine nor textual nor
rich. Plain data only (pickled into debugger checkpoints); memory follows the blocks in use,
not the cap: never-used ids are a count (`fresh`), per-block arrays grow as ids are first
used, and content is runs of pieces. While `track` is on it notes what each change touched,
for the invariant check (`ledgercheck`, which also holds the full §4 check).
"""

from __future__ import annotations

import hashlib
import math
from bisect import bisect_left
from collections.abc import Sequence

from mypy_extensions import mypyc_attr

Key = int | float | str
Number = int | float
Attrs = dict[str, Number] | None

NONE = -1  # no hash / no entry / no holder
FREE, HELD, CACHED = "free", "held", "cached"  # block states in snapshots

_MASK = (1 << 64) - 1
_MASK63 = (1 << 63) - 1
_GOLDEN = 0x9E3779B97F4A7C15


def splitmix(x: int) -> int:
    """splitmix64 (as pooltui.sim.rng): one step of the sequence, 64 bits."""
    z = (x + _GOLDEN) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def _digest(tag: bytes, body: bytes) -> int:
    return int.from_bytes(hashlib.blake2b(tag + b"\x00" + body, digest_size=8).digest(), "little")


def key_hash(key: Key) -> int:
    """A key's stable 64-bit hash, tagged by type: 3 and 3.0 are one number, "3" is not."""
    if isinstance(key, str):
        return _digest(b"s", key.encode("utf-8"))
    if isinstance(key, float) and not key.is_integer():
        return _digest(b"n", key.hex().encode())
    return _digest(b"n", str(int(key)).encode())


ROOT = _digest(b"r", b"pooltui") & _MASK63  # the hash of the empty prefix


def chain(prev: int, kh: int, units: int) -> int:
    """The prefix hash `prev` followed by `units` units of the piece whose key hashes to kh."""
    return splitmix(splitmix(prev ^ kh) ^ units) & _MASK63


@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)
class Content:
    """A hold's content: pieces (key, units) end to end from unit 0, then session sid's
    private stream. List keys stand for one piece per element. Immutable once built."""

    __slots__ = ("bh", "bh_block", "ends", "hp", "keys", "khash", "priv", "sid", "total")

    def __init__(self, sid: int, pieces: Sequence[tuple[Key | list[Key], int]] = ()) -> None:
        self.sid = sid
        self.keys: list[Key] = []
        self.khash: list[int] = []
        self.ends: list[int] = []  # cumulative end of each piece
        self.hp: list[int] = []  # prefix hash over pieces 0..k
        end, h = 0, ROOT
        for key, units in pieces:
            if units <= 0:
                raise ValueError(f"a content piece of {units} units")
            for k in key if isinstance(key, list) else [key]:
                kh = key_hash(k)
                end += units
                h = chain(h, kh, units)
                self.keys.append(k)
                self.khash.append(kh)
                self.ends.append(end)
                self.hp.append(h)
        self.total = end  # units covered by pieces; the private stream follows
        self.priv = _digest(b"p", str(sid).encode())  # the private stream's key
        # Block hashes computed so far, for one block size (a hold's content is looked up
        # at every attempt and registered block by block: each hash is computed once).
        self.bh: list[int] = []
        self.bh_block = 0

    def __eq__(self, other: object) -> bool:
        """The same content: the same session's stream after the same pieces."""
        if not isinstance(other, Content):
            return NotImplemented
        return self.sid == other.sid and self.keys == other.keys and self.ends == other.ends

    def __hash__(self) -> int:
        return hash((self.sid, self.total, len(self.keys)))

    def __repr__(self) -> str:  # no address: snapshots' reprs are compared across builds
        return f"Content(sid={self.sid}, keys={self.keys!r}, total={self.total})"

    def prefix_hash(self, n: int) -> int:
        """The hash of units [0, n), n >= 1: O(log pieces)."""
        if n > self.total:
            return chain(self.hp[-1] if self.hp else ROOT, self.priv, n - self.total)
        k = bisect_left(self.ends, n)  # the piece holding unit n - 1
        if n == self.ends[k]:
            return self.hp[k]  # canonical full-piece form
        start = self.ends[k - 1] if k else 0
        return chain(self.hp[k - 1] if k else ROOT, self.khash[k], n - start)

    def block_hash(self, j: int, block: int) -> int:
        """Block j's identity in a pool of block `block`: the prefix [0, (j + 1)·block)."""
        bh = self.bh
        if block == self.bh_block:
            if j < len(bh):
                return bh[j]
        elif self.bh_block == 0:
            self.bh_block = block
        else:
            return self.prefix_hash((j + 1) * block)
        while len(bh) <= j:
            bh.append(self.prefix_hash((len(bh) + 1) * block))
        return bh[j]

    def summary(self, lo: int, hi: int) -> str:
        """The keys of [lo, hi) (strings quoted) and/or the private session."""
        out: list[str] = []
        k = bisect_left(self.ends, lo + 1)
        while k < len(self.keys) and (self.ends[k - 1] if k else 0) < hi:
            key = self.keys[k]
            word = repr(key) if isinstance(key, str) else str(key)
            if not out or out[-1] != word:
                out.append(word)
            k += 1
        if hi > self.total:
            out.append(f"private {self.sid}")
        return ", ".join(out)


@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)
class Hit:
    """A lookup's result: the physical blocks of the hit, in chain order."""

    __slots__ = ("blocks", "cached", "shared", "units")

    def __init__(self) -> None:
        self.blocks: list[int] = []
        self.units = 0
        self.cached = 0  # hit blocks with count 0 (each takes one unit of room)
        self.shared = 0  # hit blocks held by other holds (cost nothing)


@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)
class Table:
    """A hold's block table in one pool."""

    __slots__ = ("blocks", "content", "hid", "nreg", "size")

    def __init__(self, hid: int, content: Content) -> None:
        self.hid = hid
        self.content = content
        self.blocks: list[int] = []  # physical ids, chain order
        self.size = 0  # units; len(blocks) == ceil(size / block)
        self.nreg = 0  # leading blocks registered with this content (the hit's first)


@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)
class CacheEntry:
    """The blocks one release (or one landed spill) left at count 0, chain order."""

    __slots__ = ("attrs", "block", "blocks", "last", "order", "serial", "sid", "spilled")

    def __init__(
        self, order: int, sid: int, block: int, last: float, attrs: Attrs = None, serial: int = 0
    ) -> None:
        self.order = order  # release order in this pool; the key in Ledger.entries
        self.sid = sid
        self.block = block
        self.blocks: list[int] = []
        self.last = last  # release time (a reload's touch refreshes it)
        self.attrs: dict[str, Number] = dict(attrs) if attrs is not None else {}
        self.serial = serial
        self.spilled = False  # landed from a spill

    @property
    def units(self) -> int:
        return len(self.blocks) * self.block


@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)
class Evicted:
    """An evicted block and the content it held: units [lo, hi) of `content`."""

    __slots__ = ("block", "content", "hi", "index", "lo")

    def __init__(self, block: int, content: Content, index: int, size: int) -> None:
        self.block = block
        self.content = content
        self.index = index
        self.lo = index * size
        self.hi = self.lo + size


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
        "dup_registrations",
        "dups",
        "entries",
        "free",
        "fresh",
        "next_order",
        "owner",
        "ref",
        "sharers",
        "table",
        "tb",
        "te",
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
        self.bentry: list[int] = []  # the entry (order) of a cached block, else NONE
        self.owner: list[int] = []  # first holder (hold id), NONE when count is 0
        self.sharers: dict[int, dict[int, None]] = {}  # block -> other holders, in order
        self.table: dict[int, list[int]] = {}  # hash -> copies in registration order
        self.entries: dict[int, CacheEntry] = {}  # order -> entry; least recent first
        self.allocated = 0  # blocks with count >= 1
        self.cached = 0  # registered blocks with count 0
        self.dups = 0  # registered blocks now that are not their hash's first copy
        self.dup_registrations = 0  # statistic: registrations that found a copy
        self.next_order = 0
        # What changed since the last invariant check (`ledgercheck.check_touched` consumes
        # it), kept only while `track` is on (the engine turns it on with invariants): the
        # blocks, entries (orders), hashes and tables (hid -> table, and the span of block
        # indices of each that changed, [tlo, thi)).
        self.track = False
        self.tb: set[int] = set()
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

    def _put(self, b: int) -> None:  # free an unregistered block
        self.bcontent[b] = None
        self.free.append(b)

    def _hold(self, b: int, hid: int) -> None:
        if self.ref[b] == 0:
            self.owner[b] = hid
        else:
            self.sharers.setdefault(b, {})[hid] = None
        self.ref[b] += 1

    def _unhold(self, b: int, hid: int) -> None:
        self.ref[b] -= 1
        more = self.sharers.get(b)
        if more is None:
            self.owner[b] = NONE
            return
        if self.owner[b] == hid:
            self.owner[b] = next(iter(more))  # the next holder becomes the first
            hid = self.owner[b]
        del more[hid]
        if not more:
            del self.sharers[b]

    # ------------------------------------------------------------------ hits
    def lookup(self, content: Content, upto: int) -> Hit:
        """The hit for an attempt whose max(U, context) is `upto`: the longest run of leading
        registered blocks (first copies), at most floor((upto - 1) / block) blocks."""
        out = Hit()
        for j in range((upto - 1) // self.block):  # none when upto < 1
            copies = self.table.get(content.block_hash(j, self.block))
            if copies is None:
                break
            b = copies[0]
            out.blocks.append(b)
            if self.ref[b] == 0:
                out.cached += 1
            else:
                out.shared += 1
        out.units = len(out.blocks) * self.block
        return out

    def acquire(self, t: Table, hit: Hit) -> None:
        """Put a hit into an empty table: cached blocks leave their entries (0 -> 1),
        held ones are shared (+1). Then `grow` the table to its size."""
        if t.blocks:
            raise RuntimeError("ledger: acquire into a table that holds blocks")
        for b in hit.blocks:
            if self.bhash[b] == NONE:
                raise RuntimeError(f"ledger: stale hit (block {b} was evicted since)")
            if self.ref[b] == 0:
                self._leave_entry(b)
                self.cached -= 1
                self.allocated += 1
            self._hold(b, t.hid)
            t.blocks.append(b)
        t.nreg = len(hit.blocks)
        t.size = hit.units
        if self.track:
            self.tb.update(hit.blocks)
            self.mark_table(t, 0, len(t.blocks))

    def _leave_entry(self, b: int) -> None:
        order = self.bentry[b]
        e = self.entries[order]
        e.blocks.remove(b)
        if not e.blocks:
            del self.entries[order]
        self.bentry[b] = NONE
        if self.track:
            self.te.add(order)

    def grow(self, t: Table, size: int) -> list[int]:
        """Grow t to `size` units: the new blocks (from the free stack, then never-used
        ids). The caller evicts first (`short`); raises when there is no free block."""
        need = self.nb(size) - len(t.blocks)
        if need > 0 and self.short(need) > 0:
            raise RuntimeError(f"ledger: {need} blocks wanted, evict {self.short(need)} first")
        start = len(t.blocks)
        for _ in range(need):
            b = self._take(t.content, len(t.blocks))
            self._hold(b, t.hid)
            self.allocated += 1
            t.blocks.append(b)
        t.size = max(t.size, size)
        if self.track:
            self.tb.update(t.blocks[start:])
            self.mark_table(t, start, len(t.blocks))
        return t.blocks[start:]

    def register(self, t: Table, computed: int) -> tuple[int, int]:
        """The tokens taken complete t's blocks below `computed` units: register each not
        yet registered under its hash (a copy appended in registration order).
        Returns (blocks registered, of which duplicates)."""
        last = min(computed // self.block, len(t.blocks))
        n, dup = max(0, last - t.nreg), 0
        for j in range(t.nreg, last):
            b = t.blocks[j]
            h = t.content.block_hash(j, self.block)
            self.bhash[b] = h  # (bcontent, bidx were set when t took it)
            copies = self.table.get(h)
            if copies is None:
                self.table[h] = [b]
            else:
                copies.append(b)
                dup += 1
            if self.track:
                self.tb.add(b)
                self.th.add(h)
        if self.track and n:
            self.mark_table(t, t.nreg, last)
        t.nreg = max(t.nreg, last)
        self.dups += dup
        self.dup_registrations += dup
        return n, dup

    # ------------------------------------------------------------------ release
    def release(
        self, t: Table, now: float, attrs: Attrs = None, serial: int = 0, keep: bool = True
    ) -> CacheEntry | None:
        """Release (or preempt) t: each block's count goes down; those reaching 0 become
        cached if registered (this release's entry, chain order) or are freed. With
        keep=False (a dropped hold) they are all unregistered and freed. Empties t."""
        e = CacheEntry(self.next_order, t.content.sid, self.block, now, attrs, serial)
        if self.track:
            self.tb.update(t.blocks)
            self.mark_table(t, 0, 0)
        freed: list[int] = []
        for b in t.blocks:
            self._unhold(b, t.hid)
            if self.ref[b] > 0:
                continue
            self.allocated -= 1
            if keep and self.bhash[b] != NONE:
                self.cached += 1
                self.bentry[b] = e.order
                e.blocks.append(b)
            else:
                if self.bhash[b] != NONE:
                    self._unregister(b)
                freed.append(b)
        for b in reversed(freed):  # the table's first freed block is reused first
            self._put(b)
        t.blocks, t.size, t.nreg = [], 0, 0
        return self._file(e)

    def _file(self, e: CacheEntry) -> CacheEntry | None:
        if not e.blocks:
            return None
        self.next_order += 1
        self.entries[e.order] = e
        if self.track:
            self.te.add(e.order)
        return e

    def _unregister(self, b: int) -> None:
        h = self.bhash[b]
        copies = self.table[h]
        if len(copies) > 1:
            self.dups -= 1
        copies.remove(b)
        if not copies:
            del self.table[h]
        self.bhash[b] = NONE
        if self.track:
            self.th.add(h)

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
        e = self.entries[order]
        if n > len(e.blocks):
            raise RuntimeError(f"ledger: evict {n} of an entry of {len(e.blocks)} blocks")
        out: list[Evicted] = []
        for _ in range(n):
            b = e.blocks.pop()
            content = self.bcontent[b]
            assert content is not None
            out.append(Evicted(b, content, self.bidx[b], self.block))
            self._unregister(b)
            self.bentry[b] = NONE
            self.cached -= 1
            self._put(b)
        if self.track:
            self.tb.update(ev.block for ev in out)
            self.te.add(order)
        if not e.blocks:
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
        return self.table[self.bhash[b]][0] == b

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
        e.spilled = True
        for j in sorted(set(todo)):
            b = self._take(content, j)
            self.bhash[b] = content.block_hash(j, self.block)
            self.table[self.bhash[b]] = [b]
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
        return h != NONE and self.table[h][0] != b


def spill_ranges(evicted: Sequence[Evicted]) -> list[tuple[Content, int, int]]:
    """Evicted blocks as ranges (content, lo, hi), lowest first, neighbours in one chain
    merged (the later block's content covers the earlier's units)."""
    out: list[tuple[Content, int, int]] = []
    for ev in sorted(evicted, key=lambda x: (x.lo, x.block)):
        for i in range(len(out) - 1, -1, -1):
            c, lo, hi = out[i]
            if hi == ev.lo and (c is ev.content or c.prefix_hash(hi) == ev.content.prefix_hash(hi)):
                out[i] = (ev.content, lo, ev.hi)
                break
        else:
            out.append((ev.content, ev.lo, ev.hi))
    return sorted(out, key=lambda r: r[1])
