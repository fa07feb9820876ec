"""The ledger's records (`ledger.py`): a hold's block table, a lookup's hit, a cache entry
(the blocks one release left at count zero) and an evicted block with the content it held
(and evicted blocks as the ranges of content a spill writes, `spill_ranges`; block
indices as shared int objects, `indices`).
Plain data (pickled into debugger checkpoints); imports nothing of the simulator but
`content`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from mypy_extensions import mypyc_attr

from pooltui.sim.content import Content

Number = int | float
Attrs = dict[str, Number] | None


# Block indices as shared int objects: a table's blocks past 256 would each make (and the
# block's last index free) an int of their own, most of what storing `bidx` costs.
_INDICES: list[int] = []
INDICES_LIMIT: Final = 1 << 16


def indices(lo: int, hi: int) -> list[int] | range:
    """range(lo, hi), from shared int objects where they are kept."""
    if hi > len(_INDICES):
        if hi > INDICES_LIMIT:
            return range(lo, hi)
        _INDICES.extend(range(len(_INDICES), hi))
    return _INDICES[lo:hi]


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

    __slots__ = (
        "attrs",
        "block",
        "blocks",
        "content",
        "last",
        "order",
        "serial",
        "sid",
        "spilled",
    )

    def __init__(
        self, order: int, sid: int, block: int, last: float, attrs: Attrs = None, serial: int = 0
    ) -> None:
        self.order = order  # release order in this pool; the key in Ledger.entries
        self.sid = sid
        self.block = block
        self.blocks: list[int] = []
        self.last = last  # release time (a reload's touch refreshes it)
        # The session's attributes as of its last release (`Session.released`: shared, not
        # copied; read by `evict by` and spills once the session has ended).
        self.attrs: dict[str, Number] = attrs if attrs is not None else {}
        self.serial = serial
        self.spilled = False  # landed from a spill
        # Whose content its blocks hold (the released hold's or the landed one's): block
        # j's hash is this content's block j whichever hold computed it.
        self.content: Content | None = None

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
