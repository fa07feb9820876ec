"""The ledger's records (`ledger.py`): a hold's block table, a lookup's hit, a cache entry
(the blocks one release left at count zero) and an evicted block with the content it held.
Plain data (pickled into debugger checkpoints); imports nothing of the simulator but
`content`.
"""

from __future__ import annotations

from mypy_extensions import mypyc_attr

from pooltui.sim.content import Content

Number = int | float
Attrs = dict[str, Number] | None


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
