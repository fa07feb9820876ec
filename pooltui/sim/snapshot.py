"""Snapshots: immutable views of the simulation at one event, safe to hand to another thread.

`Simulation.snapshot()` builds one. Nothing in here refers to live simulator objects: a
snapshot taken at event 40 still says the same after the simulation has moved on.
Sessions are named `class[index]` and carry a stable `session_id` (the same number for the
same session everywhere it appears, so a view can colour it consistently).

Owns the public view types only; building them is `views`'s business.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, overload

from pooltui.lang.ir import Span
from pooltui.sim.events import Event

Number = int | float


@dataclass(frozen=True, slots=True)
class BlockOwner:
    """Who a physical block belongs to: a hold (allocated) or a cache entry (cached)."""

    kind: Literal["hold", "cached"]
    session: str
    session_id: int
    rank: int | None = None  # cached: eviction rank, 0 is the next entry to go


class Cells(Sequence[int]):
    """The owner number of every block of a pool, kept only for the blocks in use, so a
    pool of a billion blocks costs what its used blocks cost. `cells[i]` is 0 for a free
    block. Read-only: built once per snapshot, never changed after."""

    __slots__ = ("_n", "_used")

    def __init__(self, n: int, used: dict[int, int]) -> None:
        self._n = n
        self._used = used

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, i: int) -> int: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[int]: ...
    def __getitem__(self, i: int | slice) -> int | Sequence[int]:
        if isinstance(i, slice):
            return tuple(self._used.get(j, 0) for j in range(*i.indices(self._n)))
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError(i)
        return self._used.get(i, 0)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Cells):
            return self._n == other._n and self._used == other._used
        return tuple(self) == tuple(other) if isinstance(other, Sequence) else NotImplemented

    def __hash__(self) -> int:
        return hash((self._n, tuple(sorted(self._used.items()))))

    def __repr__(self) -> str:
        return f"Cells({self._n}, {dict(sorted(self._used.items()))})"


@dataclass(frozen=True, slots=True)
class BlockMap:
    """The physical block map of one pool member.

    `cells[i]` is 0 when block i is free, else k > 0: block i belongs to `owners[k - 1]`.
    A block is `unit` units (the pool's `block`, or 1 for a pool without one)."""

    nblocks: int
    unit: int
    cells: Sequence[int]
    owners: tuple[BlockOwner, ...]

    def owner(self, i: int) -> BlockOwner | None:
        k = self.cells[i]
        return self.owners[k - 1] if k else None


@dataclass(frozen=True, slots=True)
class HoldView:
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


@dataclass(frozen=True, slots=True)
class QueueItemView:
    """A waiting hold, in selection order (position 0 is the next one tried)."""

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


@dataclass(frozen=True, slots=True)
class ResidentView:
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
    kind: Literal["spill", "send"]
    session: str
    session_id: int
    work: Number
    start: float | None  # None while queued
    end: float | None
    progress: float  # 0..1 at the snapshot's time
    units: int | None = None  # spill: units being written
    tier: str | None = None  # spill: the tier pool member


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
    attrs: tuple[tuple[str, Number], ...]
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


@dataclass(frozen=True, slots=True)
class Violation:
    """An invariant of language.md §8 that broke, with the pool and blocks involved."""

    invariant: str
    message: str
    pool: str | None = None
    blocks: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Snapshot:
    time: float
    event_index: int  # index of the last event applied; -1 before the first
    events_total: int  # events recorded so far (the log may run ahead of the cursor)
    last_event: Event | None
    pools: tuple[PoolView, ...]
    stages: tuple[StageView, ...]
    sessions: tuple[SessionView, ...]  # live sessions, by session_id
    counts: Counts
    finished: bool  # nothing more can happen
    halted: str | None  # why the simulation stopped: a violation, a failed check, ...
    violation: Violation | None

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
