"""A hold's content and its identity (content-and-reload.md §1): pieces (key, units) end
to end, then the session's private stream; a block is named by the hash of the prefix up
to its end (vLLM's chained block hash), deterministic and 63-bit.

A piece's prefixes hash to consecutive numbers from the piece's anchor (a hash of the
prefix before it and the piece's key), so the hashes of a piece's blocks are one `range`,
made without hashing each block. Owns `Content` (with the caches the ledger keeps on it:
its block hashes for one block size, its last lookup) and the hash functions. Plain data;
imports nothing of the simulator.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_left
from collections.abc import Callable, Sequence
from typing import Final

from mypy_extensions import mypyc_attr

Key = int | float | str
BUCKET: Final = 20  # hashes >> BUCKET: a piece's blocks fall in one or two buckets

_MASK: Final = (1 << 64) - 1
_MASK63: Final = (1 << 63) - 1
_M62: Final = (1 << 62) - 1
_GOLDEN: Final = 0x9E3779B97F4A7C15


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


def anchor(prev: int, kh: int) -> int:
    """Where the prefix `prev` followed by the piece whose key hashes to kh starts: the
    prefix ending n units into that piece is anchor + n (a piece's blocks are a range of
    hashes, made without hashing each; 62-bit anchors keep every prefix hash 63-bit)."""
    return splitmix(prev ^ kh) & _M62


def chain(prev: int, kh: int, units: int) -> int:
    """The prefix hash `prev` followed by `units` units of the piece whose key hashes to kh."""
    return anchor(prev, kh) + units


# Memos of the two costly steps of a piece's anchor (`anchor`): an int key's hash, and the
# anchor of (prefix hash ^ key hash). A trace's requests repeat their prefixes' keys (a
# conversation's next turn, a shared system prompt): a dict lookup instead of a blake2b and
# a splitmix each. Pure functions' memos, so no state of a run; bounded (cleared when full).
_KEY_HASHES: Final[dict[int, int]] = {}
_ANCHORS: Final[dict[int, int]] = {}
MEMO_LIMIT: Final = 1 << 15

# Content's fields a checkpoint keeps (all but the block-hash cache).
_KEPT = (
    "anc",
    "ends",
    "hp",
    "keys",
    "khash",
    "lk",
    "lk_blocks",
    "lk_cached",
    "lk_epoch",
    "lk_n",
    "lk_repoch",
    "panc",
    "priv",
    "sid",
    "total",
)


@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)
class Content:
    """A hold's content: pieces (key, units) end to end from unit 0, then session sid's
    private stream. List keys stand for one piece per element. Immutable once built, but
    for caches: its block hashes for one block size, and its last lookup in a ledger."""

    __slots__ = (
        "anc",
        "bh",
        "bh_block",
        "ends",
        "hp",
        "keys",
        "khash",
        "lk",
        "lk_blocks",
        "lk_cached",
        "lk_epoch",
        "lk_n",
        "lk_repoch",
        "panc",
        "priv",
        "sid",
        "total",
    )

    def __init__(self, sid: int, pieces: Sequence[tuple[Key | list[Key], int]] = ()) -> None:
        self.sid = sid
        self.keys: list[Key] = []
        self.khash: list[int] = []
        self.ends: list[int] = []  # cumulative end of each piece
        self.anc: list[int] = []  # each piece's anchor (`anchor`)
        self.hp: list[int] = []  # prefix hash over pieces 0..k
        end, h = 0, ROOT
        blake2b = hashlib.blake2b
        if len(_ANCHORS) > MEMO_LIMIT or len(_KEY_HASHES) > MEMO_LIMIT:
            _ANCHORS.clear()
            _KEY_HASHES.clear()
        khs, ancs = _KEY_HASHES, _ANCHORS
        for key, units in pieces:
            if units <= 0:
                raise ValueError(f"a content piece of {units} units")
            for k in key if isinstance(key, list) else [key]:
                if type(k) is int:  # `key_hash` and `anchor`, inline: most keys are ints
                    kh = khs.get(k, -1)
                    if kh < 0:
                        d = blake2b(b"n\x00" + str(k).encode(), digest_size=8).digest()
                        kh = int.from_bytes(d, "little")
                        khs[k] = kh
                else:
                    kh = key_hash(k)
                x = h ^ kh
                a = ancs.get(x, -1)
                if a < 0:
                    z = (x + _GOLDEN) & _MASK  # splitmix(h ^ kh) & _M62
                    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
                    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
                    a = (z ^ (z >> 31)) & _M62
                    ancs[x] = a
                end += units
                h = a + units
                self.keys.append(k)
                self.khash.append(kh)
                self.ends.append(end)
                self.anc.append(a)
                self.hp.append(h)
        self.total = end  # units covered by pieces; the private stream follows
        self.priv = _digest(b"p", str(sid).encode())  # the private stream's key
        self.panc = anchor(h, self.priv)
        # Block hashes computed so far, for one block size (a hold's content is looked up
        # at every attempt and registered as its tokens are taken: each hash made once).
        self.bh: list[int] = []
        self.bh_block = 0
        # The last lookup in ledger `lk` (`Ledger.lookup`): the first copies of the leading
        # registered blocks it found, valid while the ledger unregistered nothing
        # (`lk_epoch`); of the first lk_n of them, lk_cached had count 0 (while no count
        # crossed zero: `lk_repoch`).
        self.lk: object | None = None
        self.lk_blocks: list[int] = []
        self.lk_epoch = -1
        self.lk_repoch = -1
        self.lk_n = -1
        self.lk_cached = 0

    def __getstate__(self) -> tuple[object, ...]:
        """Checkpoints leave out the block hashes (`bh`): a cache, made again as needed,
        and most of a checkpoint's bytes and time when many holds are live."""
        return tuple(getattr(self, name) for name in _KEPT)

    def __setstate__(self, state: tuple[object, ...]) -> None:
        for name, value in zip(_KEPT, state, strict=True):
            setattr(self, name, value)
        self.bh = []
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
            return self.panc + (n - self.total)
        k = bisect_left(self.ends, n)  # the piece holding unit n - 1
        return self.anc[k] + (n - (self.ends[k - 1] if k else 0))

    def hashes(self, block: int, lo: int, hi: int) -> list[int]:
        """The hashes of blocks [lo, hi) in a pool of block `block`."""
        if self.bh_block == 0:
            self.bh_block = block
        elif block != self.bh_block:
            return [self.prefix_hash((j + 1) * block) for j in range(lo, hi)]
        bh = self.bh
        total = self.total
        while len(bh) < hi:
            end = (len(bh) + 1) * block  # the first missing block's end
            last = hi * block
            if end > total:  # the private stream: one range
                bh.extend(range(self.panc + end - total, self.panc + last - total + 1, block))
                break
            k = bisect_left(self.ends, end)  # the piece it ends in: a range per piece
            start = self.ends[k - 1] if k else 0
            stop = min(self.ends[k], last)
            a = self.anc[k] - start
            bh.extend(range(a + end, a + stop + 1, block))
        return bh[lo:hi]

    def buckets(self, block: int, n: int) -> list[int]:
        """The hash buckets (hash >> BUCKET) of blocks [0, n) of a pool of block `block`: a
        couple per piece they reach, O(pieces)."""
        out: list[int] = []
        units = n * block
        start = 0
        for k, end in enumerate(self.ends):
            if start >= units:
                return out
            a = self.anc[k]
            out.extend(range((a + 1) >> BUCKET, ((a + min(end, units) - start) >> BUCKET) + 1))
            start = end
        if units > self.total:
            a = self.panc
            out.extend(range((a + 1) >> BUCKET, ((a + units - self.total) >> BUCKET) + 1))
        return out

    def buckets_between(self, block: int, lo: int, hi: int) -> list[int]:
        """The hash buckets of blocks [lo, hi) (a pool of block `block`), and perhaps a few
        more of the pieces they reach: O(pieces), not O(blocks)."""
        out: list[int] = []
        ulo, uhi = lo * block + 1, hi * block  # the units their prefixes end at
        ends, anc = self.ends, self.anc
        k = bisect_left(ends, ulo)  # the piece holding unit ulo - 1
        while k < len(ends) and ulo <= uhi:
            start = ends[k - 1] if k else 0
            a = anc[k] - start
            top = min(ends[k], uhi)
            out.extend(range((a + ulo) >> BUCKET, ((a + top) >> BUCKET) + 1))
            ulo = top + 1
            k += 1
        if ulo <= uhi:  # the private stream
            a = self.panc - self.total
            out.extend(range((a + ulo) >> BUCKET, ((a + uhi) >> BUCKET) + 1))
        return out

    def block_hash(self, j: int, block: int) -> int:
        """Block j's identity in a pool of block `block`: the prefix [0, (j + 1)·block).
        A negative j names no block: -1, no hash (the ledger checks compare a corrupt index)."""
        if j < 0:
            return -1
        if block == self.bh_block and j < len(self.bh):
            return self.bh[j]
        return self.hashes(block, j, j + 1)[0]

    def summary(self, lo: int, hi: int, private: Callable[[int], str] | None = None) -> str:
        """The keys of [lo, hi) (strings quoted) and/or the private session: `private N`,
        or what `private` says of session N (the debugger names it)."""
        out: list[str] = []
        k = bisect_left(self.ends, lo + 1)
        while k < len(self.keys) and (self.ends[k - 1] if k else 0) < hi:
            key = self.keys[k]
            word = repr(key) if isinstance(key, str) else str(key)
            if not out or out[-1] != word:
                out.append(word)
            k += 1
        if hi > self.total:
            out.append(f"private {self.sid}" if private is None else private(self.sid))
        return ", ".join(out)
