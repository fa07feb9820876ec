"""Snapshots: immutable views of the simulation at one event, safe to hand to another thread.

`Simulation.snapshot()` builds one. Nothing in here refers to live simulator objects: a
snapshot taken at event 40 still says the same after the simulation has moved on.
Sessions are named `class[index]` and carry a stable `session_id` (the same number for the
same session everywhere it appears, so a view can colour it consistently).

Owns the public view types only; building them is `views`'s business.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from itertools import compress
from typing import Literal, NamedTuple, overload

from pooltui.lang.ir import Span
from pooltui.sim.events import Event
from pooltui.sim.events import Violation as Violation  # its home is events.py

Number = int | float
# A queue's planned figures (units, need, hit) are worked out for its first positions only:
# as many as the Queue panel lists; in vLLM the waiting queue's head is all a step tries.
# A screen asks for fewer, the rows it shows (`Shown.queue`).
QUEUE_PLANNED = 200
# A session attribute: a number, or (read from a source) a string or a list of them.
AttrValue = Number | str | tuple[Number | str, ...]


class BlockOwner(NamedTuple):  # made in bulk: see QueueItemView
    """Who a physical block belongs to: a hold (allocated) or a cache entry (cached)."""

    kind: Literal["hold", "cached"]
    session: str
    session_id: int
    rank: int | None = None  # cached: eviction rank, 0 is the next entry to go


class Cells(Sequence[int]):
    """The owner number of every block of a pool (0: free), read from copies of the
    ledger's per-block lists (as long as the ids ever used) and the owner number of each
    holder and entry: a pool of a billion blocks costs what its used blocks cost, and a
    snapshot copies a few lists (a memcpy each) where a dict of the blocks in use took an
    insertion per block. A held block (count > 0) is its first holder's; a cached one
    (count 0, registered) its entry's. The ledger does not clear a block's holder or
    entry when it stops being held or cached: they are read only where they hold.
    Read-only: built once per snapshot."""

    __slots__ = ("_by_entry", "_by_hold", "_counts", "_entry", "_hashes", "_n", "_owner")

    def __init__(
        self,
        n: int,
        owner: Sequence[int],
        entry: Sequence[int],
        counts: Sequence[int],
        hashes: Sequence[int],
        by_hold: Mapping[int, int],
        by_entry: Mapping[int, int],
    ) -> None:
        self._n = n
        self._owner = owner  # per block ever used: its first holder's hold id
        self._entry = entry  # per block ever used: its cache entry's order
        self._counts = counts  # per block ever used: its reference count
        self._hashes = hashes  # per block ever used: its hash, -1 when not registered
        self._by_hold = by_hold  # hold id -> owner number
        self._by_entry = by_entry  # entry order -> owner number

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, i: int) -> int: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[int]: ...
    def __getitem__(self, i: int | slice) -> int | Sequence[int]:
        if isinstance(i, slice):
            start, stop, step = i.indices(self._n)
            if step != 1:
                return tuple(self._cell(j) for j in range(start, stop, step))
            return self._run(start, stop)
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError(i)
        return self._cell(i)

    def _run(self, start: int, stop: int) -> tuple[int, ...]:
        """Blocks [start, stop) at once (a row of the block map): one pass over the slices."""
        if stop <= start:
            return ()
        hold, entry = self._by_hold.get, self._by_entry.get
        used = [
            hold(o, 0) if c > 0 else entry(e, 0) if h != -1 else 0
            for o, e, c, h in zip(
                self._owner[start:stop],
                self._entry[start:stop],
                self._counts[start:stop],
                self._hashes[start:stop],
                strict=True,
            )
        ]
        return (*used, *(0,) * (stop - start - len(used)))

    def _cell(self, i: int) -> int:
        if i >= len(self._counts):
            return 0
        if self._counts[i] > 0:
            return self._by_hold.get(self._owner[i], 0)
        if self._hashes[i] != -1:
            return self._by_entry.get(self._entry[i], 0)
        return 0

    def used(self) -> dict[int, int]:
        """The blocks in use: block -> owner number."""
        return {i: k for i in range(len(self._counts)) if (k := self._cell(i))}

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Cells):
            return len(self) == len(other) and self.used() == other.used()
        return tuple(self) == tuple(other) if isinstance(other, Sequence) else NotImplemented

    def __hash__(self) -> int:
        return hash((self._n, tuple(sorted(self.used().items()))))

    def __repr__(self) -> str:
        return f"Cells({self._n}, {dict(sorted(self.used().items()))})"


class Registered(AbstractSet[int]):
    """The registered blocks, read from a copy of the ledger's per-block hashes (-1: not
    registered): a snapshot copies a list where a set would take an entry per block.
    Read-only."""

    __slots__ = ("_hashes",)

    def __init__(self, hashes: Sequence[int] = ()) -> None:
        self._hashes = hashes

    def __contains__(self, i: object) -> bool:
        return type(i) is int and 0 <= i < len(self._hashes) and self._hashes[i] != -1

    def __iter__(self) -> Iterator[int]:
        return compress(range(len(self._hashes)), [h != -1 for h in self._hashes])

    def __len__(self) -> int:
        return len(self._hashes) - self._hashes.count(-1)

    def __repr__(self) -> str:
        return f"Registered({set(self)!r})"


@dataclass(frozen=True, slots=True)
class BlockInfo:
    """One physical block: free, held or cached; its reference count (the holds that have
    it in their block table); what it holds (piece keys, or `private N` for session N's
    own stream, as `info`'s `private` says it when given; '' when free); its holders, first holder first; whether it is registered
    (others can hit it), whether it is a duplicate (another block registered the same
    content first) and whether it is landing (held by a hold whose reload is in flight:
    its content is on its way from a tier, and nobody can hit it yet)."""

    index: int
    state: Literal["free", "held", "cached"]
    count: int
    content: str
    holders: tuple[BlockOwner, ...]
    registered: bool
    duplicate: bool
    landing: bool = False


class BlockContents(Sequence[tuple[object, int]]):
    """Per block id (of the ids ever used): (its Content or None, its block index in that
    content). Two flat sequences, not a tuple of pairs: a snapshot copies them in C."""

    __slots__ = ("_contents", "_indices")

    def __init__(self, contents: Sequence[object], indices: Sequence[int]) -> None:
        self._contents = contents
        self._indices = indices

    def __len__(self) -> int:
        return len(self._contents)

    @overload
    def __getitem__(self, i: int) -> tuple[object, int]: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[tuple[object, int]]: ...
    def __getitem__(self, i: int | slice) -> tuple[object, int] | Sequence[tuple[object, int]]:
        if isinstance(i, slice):
            return tuple(zip(self._contents[i], self._indices[i], strict=True))
        return self._contents[i], self._indices[i]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, BlockContents):
            return list(self._contents) == list(other._contents) and list(self._indices) == list(
                other._indices
            )
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"BlockContents({list(self)!r})"


@dataclass(frozen=True, slots=True)
class BlockMap:
    """The physical block map of one pool member.

    `cells[i]` is 0 when block i is free, else k > 0: block i belongs to `owners[k - 1]`
    (for a block several holds share, the first of them). A block is `unit` units (the
    pool's `block`, or 1 for a pool without one).

    Per block, `info(i)` says more (state, count, content, holders): the figures behind
    it are kept for the blocks ever used only (`used`), so a map of a billion-block pool
    costs what its blocks in use cost, and reading a block costs the same for each.
    """

    nblocks: int
    unit: int
    cells: Sequence[int]
    owners: tuple[BlockOwner, ...]
    counts: Sequence[int] = ()  # reference counts of blocks 0 .. used-1
    sharers: Mapping[int, tuple[int, ...]] = field(default_factory=dict)  # block -> owners
    contents: Sequence[tuple[object, int]] = ()  # (Content or None, its block index)
    registered: AbstractSet[int] = frozenset()
    duplicates: frozenset[int] = frozenset()
    landing: frozenset[int] = frozenset()  # blocks a reload in flight is loading

    def owner(self, i: int) -> BlockOwner | None:
        k = self.cells[i]
        return self.owners[k - 1] if k else None

    @property
    def used(self) -> int:
        """Blocks 0 .. used-1 were ever used; the rest are free."""
        return len(self.contents)

    def count(self, i: int) -> int:
        return self.counts[i] if i < len(self.counts) else 0

    def holders(self, i: int) -> tuple[BlockOwner, ...]:
        """The holds holding block i, first holder first (none when free or cached)."""
        if self.count(i) == 0:
            return ()
        more = self.sharers.get(i)
        if more is not None:
            return tuple(self.owners[k - 1] for k in more)
        o = self.owner(i)
        return (o,) if o is not None else ()

    def state(self, i: int) -> Literal["free", "held", "cached"]:
        if self.count(i) > 0:
            return "held"
        return "cached" if i in self.registered else "free"

    def content(self, i: int, private: Callable[[int], str] | None = None) -> str:
        """Block i's piece keys and/or its private session (`private N`, or what `private`
        says of session N); '' when free."""
        if i >= len(self.contents):
            return ""
        c, j = self.contents[i]
        summary = getattr(c, "summary", None)
        if summary is None:
            return ""
        text: str = summary(j * self.unit, (j + 1) * self.unit, private)
        return text

    def info(self, i: int, private: Callable[[int], str] | None = None) -> BlockInfo:
        return BlockInfo(
            i,
            self.state(i),
            self.count(i),
            self.content(i, private),
            self.holders(i),
            i in self.registered,
            i in self.duplicates,
            i in self.landing,
        )


class HoldView(NamedTuple):  # made in bulk: see QueueItemView
    session: str
    session_id: int
    pool: str  # member label
    size: int  # units held
    blocks: int  # blocks held (size rounded up to the pool's block)
    computed: int
    context: int
    reserve: Number | None
    physical: tuple[int, ...]  # the physical blocks, head first (empty for cap inf)
    admitted_at: float
    admit_order: int  # admission order on the pool (lifo picks the largest resident)
    shared: int = 0  # of its blocks, those other holds hold too
    reloading: int = 0  # units its reload in flight is loading past its hit (0: none)


@dataclass(frozen=True, slots=True)
class EntryView:
    """A cache entry (a released prefix), in eviction order."""

    session: str
    session_id: int
    units: int
    blocks: int
    physical: tuple[int, ...]  # head first; eviction takes the tail first
    rank: int  # 0 goes first
    keys: tuple[Number, ...]  # lru: (release time, release order); by: the evaluated keys
    last: float  # time of the last release
    alive: bool  # the session still lives (keys read its current attributes)
    spilled: bool = False  # landed here by a spill


class QueueItemView(NamedTuple):
    """A waiting hold, in selection order (position 0 is the next one tried). A named
    tuple, not a frozen dataclass like most views: a snapshot makes one per queued hold
    (thousands), and a frozen dataclass's `__init__` costs five times a tuple's (so do
    the other views a snapshot makes in bulk: owners, holds, residents)."""

    session: str
    session_id: int
    position: int
    units: Number | None  # the header now (None when it cannot be evaluated yet)
    need: Number | None
    reserve: Number | None
    hit: int  # units its cache entry would give it now
    keys: tuple[Number, ...]  # fifo: (); by: the evaluated keys
    waited: float
    preempted: bool
    enqueued_at: float
    # False past the first positions the snapshot plans (`Snapshot.queue_planned`) unless
    # its session is shown: units, need and hit are not worked out (a long queue's tail; a
    # run's frames would spend most of their time on it)
    planned: bool = True
    # the session whose reload in flight is loading blocks this hold's reload would copy:
    # it waits for them to land (docs/language.md §5.7); None: it does not
    waits_for: str | None = None


@dataclass(frozen=True, slots=True)
class PoolView:
    name: str  # the declaration's name
    index: int | None  # member index in a family, else None
    label: str  # "kv" or "kv[2]"
    cap: Number  # units (math.inf for cap inf)
    block: int | None
    allocated: int
    cached: int
    free: Number  # units (math.inf for cap inf)
    nblocks: int | None  # None for cap inf
    blocks: BlockMap | None  # None for cap inf: show a bar instead of a grid
    holds: tuple[HoldView, ...]  # in admission order
    entries: tuple[EntryView, ...]  # in eviction order
    queue: tuple[QueueItemView, ...]  # in selection order
    evict: str  # "lru" or "by (...)"
    queue_policy: str  # "fifo" or "by (...)"
    preempt: str
    admit_via: str | None  # stage member label
    tier_of: tuple[str, ...]  # pools that spill into this one
    span: Span | None = None
    duplicates: int = 0  # registered blocks whose content another block registered first
    shared: int = 0  # blocks held by more than one hold

    def block_owner(self, block: int) -> BlockOwner | None:
        """Who block `block` belongs to; None when it is free, or no block of this pool."""
        m = self.blocks
        return m.owner(block) if m is not None and 0 <= block < m.nblocks else None


class ResidentView(NamedTuple):  # made in bulk: see QueueItemView
    session: str
    session_id: int
    phase: Literal["prefill", "decode", "recompute", "waiting"]
    tokens: int  # tokens this iteration (0 before the iteration takes them)
    computed: int
    context: int
    target: int  # prefill: T; decode: N steps
    steps_done: int  # decode steps done
    pool: str | None  # the pool member of the hold the run works on
    admit_order: int


@dataclass(frozen=True, slots=True)
class LinkJobView:
    kind: Literal["spill", "reload", "send"]
    session: str
    session_id: int
    work: Number
    start: float | None  # None while queued
    end: float | None
    progress: float  # 0..1 at the snapshot's time
    units: int | None = None  # spill: units being written; reload: units being loaded
    tier: str | None = None  # spill: the tier pool member
    tiers: tuple[tuple[str, int], ...] = ()  # reload: (tier, units) read, chain order
    pool: str | None = None  # reload: the pool member the units land in

    @property
    def what(self) -> str:
        """The job in words: `spill 48 units to dram`, `reload 48 units from dram to hbm`
        (`from dram and ssd …` when it reads two tiers), `send`."""
        units = f"{self.units} units" if self.units is not None else ""
        if self.kind == "spill":
            return f"spill {units} to {self.tier}"
        if self.kind == "reload":
            where = " and ".join(label for label, _ in self.tiers)
            return f"reload {units} from {where} to {self.pool}"
        return self.kind


@dataclass(frozen=True, slots=True)
class StageView:
    name: str
    index: int | None
    label: str
    kind: Literal["step", "link"]
    # step stages
    iteration: int = 0  # iterations started so far
    busy: bool = False  # an iteration is in flight
    iteration_start: float | None = None
    iteration_end: float | None = None
    budget: Number = 0
    budget_used: int = 0
    budget_left: Number = 0
    seats: Number = 0
    seats_left: Number = 0
    residents: tuple[ResidentView, ...] = ()
    preempted: bool = False  # the current iteration preempted
    memory: tuple[str, ...] = ()  # pool members this stage serves
    reloading: tuple[str, ...] = ()  # sessions whose hold on its memory is reloading
    # link stages
    rate: Number = 0
    lanes: int = 0
    jobs: tuple[LinkJobView, ...] = ()  # in service
    queued_jobs: tuple[LinkJobView, ...] = ()
    span: Span | None = None


@dataclass(frozen=True, slots=True)
class SessionView:
    name: str
    session_id: int
    session_class: str
    index: int
    serial: int
    state: str  # plain words: "queued on kv", "resident of gpu", "sleeping", "done", ...
    arrived: float
    attrs: tuple[tuple[str, AttrValue], ...]
    holds: tuple[HoldView, ...]  # innermost last
    span: Span | None  # the statement it is at


@dataclass(frozen=True, slots=True)
class Counts:
    arrived: int
    live: int
    done: int
    rejected: int
    preemptions: int
    evictions: int
    spills: int
    drops: int
    reloads: int = 0


@dataclass(frozen=True, slots=True)
class Shown:
    """The live sessions a screen shows whole: these, and the holder of each of these
    blocks (pool label, block) at the snapshot's event. A snapshot made for it has the
    views of those sessions only (the debugger shows one session at a time, the inspected
    one; the views of 2,000 live sessions were a third of a full GPU's snapshot)."""

    sessions: frozenset[int] = frozenset()
    blocks: tuple[tuple[str, int], ...] = ()
    # The queue positions (of each pool) whose planned figures are worked out: the rows a
    # Queue panel shows (at most QUEUE_PLANNED: `planned`; the shown sessions' always are).
    queue: int = QUEUE_PLANNED

    @property
    def planned(self) -> int:
        """The queue positions planned: `queue`, QUEUE_PLANNED at most."""
        return min(self.queue, QUEUE_PLANNED)


@dataclass(frozen=True, slots=True)
class Snapshot:
    time: float
    event_index: int  # index of the last event applied; -1 before the first
    events_total: int  # events recorded so far (the log may run ahead of the cursor)
    last_event: Event | None
    pools: tuple[PoolView, ...]
    stages: tuple[StageView, ...]
    sessions: tuple[SessionView, ...]  # live sessions, by session_id (those `shown` says)
    counts: Counts
    finished: bool  # nothing more can happen
    halted: str | None  # why the simulation stopped: a violation, a failed check, ...
    violation: Violation | None
    # The sessions it has the views of (those that are live), when made for a `Shown`:
    # its sessions and its blocks' holders then. None: every live session's.
    shown: frozenset[int] | None = None
    # The positions of each pool's queue planned (`Shown.queue`; the shown sessions' too).
    queue_planned: int = QUEUE_PLANNED

    def covers(self, session_id: int) -> bool:
        """Whether `sessions` says if this session is live (with its view if it is)."""
        return self.shown is None or session_id in self.shown

    def pool(self, label: str) -> PoolView:
        for p in self.pools:
            if p.label == label:
                return p
        raise KeyError(label)

    def stage(self, label: str) -> StageView:
        for s in self.stages:
            if s.label == label:
                return s
        raise KeyError(label)

    def session(self, name: str) -> SessionView | None:
        for s in self.sessions:
            if s.name == name:
                return s
        return None
