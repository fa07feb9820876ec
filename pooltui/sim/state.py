"""Simulation state: plain data only (slots classes, lists, dicts, numbers, strings).

Everything here pickles, which is how checkpoints are taken and restored. No closures, no
IR: statements are referred to by (body id, position), pools and stages by index.

Each class is marked `serializable` for the compiled build (mypyc, `POOLTUI_COMPILE=1`):
a compiled class pickles only with that mark (and, in mypyc as it is, with interpreted
subclasses allowed; without it the attributes come back unset). In the pure-Python build
the mark does nothing.

Owns the state's shape only: no rules. The engine's modules change it (each its own part,
see docs/architecture.md); the fast mode keeps its own figures beside it, not in it.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from typing import Any

from mypy_extensions import mypyc_attr

Number = int | float

# Session states (plain words in snapshots come from these).
S_ACTIVE = "active"  # executing statements (transient)
S_QUEUED = "queued"
S_RESIDENT = "resident"
S_GROW_WAIT = "grow-wait"
S_SLEEPING = "sleeping"
S_SENDING = "sending"
S_SEAT_WAIT = "seat-wait"  # its run waits for a seat on a full step stage
S_FOREVER = "forever"  # a wait (or a send) that never ends: it never wakes
S_DONE = "done"
S_REJECTED = "rejected"

# Frame kinds.
F_TOP = 0
F_PLAIN = 1
F_REPEAT = 2
F_HOLD = 3


@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)
class Hold:
    __slots__ = (
        "admit_order",
        "admitted_at",
        "computed",
        "context",
        "enq_seq",
        "enq_time",
        "key",
        "nblocks",
        "phys",
        "pool",
        "preempted",
        "queued",
        "reserve",
        "sid",
        "size",
        "stmt",
    )

    def __init__(self, key: int, sid: int, pool: int, stmt: tuple[int, int]) -> None:
        self.key = key
        self.sid = sid
        self.pool = pool  # global pool member number
        self.stmt = stmt  # (body id, position) of the `hold` statement
        self.size = 0
        self.nblocks = 0
        self.phys: list[int] = []
        self.computed = 0
        self.context = 0
        self.reserve: Number | None = None
        self.admit_order = -1
        self.admitted_at = 0.0
        self.enq_time = 0.0
        self.enq_seq = 0
        self.preempted = False
        self.queued = False


@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)
class Entry:
    """A cache entry: a session's released prefix in one pool member."""

    __slots__ = ("attrs", "last", "nblocks", "order", "phys", "serial", "sid", "spilled", "units")

    def __init__(self, sid: int, units: int, nblocks: int, phys: list[int], last: float) -> None:
        self.sid = sid
        self.units = units
        self.nblocks = nblocks
        self.phys = phys
        self.last = last
        self.order = 0  # release order in this pool
        self.attrs: dict[str, Number] = {}  # as they were at the last release
        self.serial = 0
        self.spilled = False


@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)
class Run:
    """A session's current `run` statement on a step stage."""

    __slots__ = (
        "full",
        "h",
        "hold",
        "kind",
        "phase",
        "stage",
        "steps",
        "target",
        "tokens",
    )

    def __init__(self, stage: int, kind: str, target: int, hold: Hold) -> None:
        self.stage = stage  # global stage member number
        self.kind = kind  # "prefill" | "decode"
        self.target = target  # prefill: T units; decode: N steps
        self.steps = 0
        self.h = hold  # the hold the run works on
        self.hold = hold.key
        self.tokens = 0  # planned this iteration
        self.full = False  # this iteration's decode tokens make a whole step
        self.phase = "waiting"


@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)
class Session:
    __slots__ = (
        "admits",
        "arrived",
        "attrs",
        "cls",
        "counter",
        "first_token",
        "frames",
        "holds",
        "index",
        "name",
        "rng_key",
        "run",
        "serial",
        "sid",
        "state",
        "waiting_for",
    )

    def __init__(self, sid: int, cls: int, index: int, name: str, rng_key: int) -> None:
        self.sid = sid
        self.cls = cls
        self.index = index
        self.name = name
        self.rng_key = rng_key
        self.counter = 0
        self.serial = -1
        self.arrived = 0.0
        self.attrs: dict[str, Number] = {}
        self.frames: list[list[Any]] = []  # [kind, body id, pc, extra]
        self.holds: list[Hold] = []
        self.run: Run | None = None
        self.state = S_ACTIVE
        self.waiting_for = ""
        self.first_token: float | None = None
        self.admits: list[tuple[float, float]] = []  # (enqueued, admitted) per admission


@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)
class PoolState:
    __slots__ = (
        "allocated",
        "area",
        "area_t",
        "block",
        "cached",
        "cap",
        "decl",
        "entries",
        "free",
        "fresh",
        "label",
        "member",
        "nblocks",
        "next_order",
        "queue",
        "stage",
        "waiting_grows",
    )

    def __init__(self, decl: int, member: int, label: str, cap: Number, block: int | None) -> None:
        self.decl = decl
        self.member = member
        self.label = label
        self.cap = cap
        self.block = block or 1
        finite = not math.isinf(cap)
        self.nblocks: int | None = int(cap) // self.block if finite else None
        self.allocated = 0  # blocks
        self.cached = 0  # blocks
        # Free physical blocks: the ids given back, a stack (the last given back is reused
        # first), above the ids never used yet, kept as a count (`fresh`, the lowest of
        # them), so a pool costs memory for the blocks it has used, not for its cap. This
        # is exactly the old stack of every id with the lowest on top.
        self.free: list[int] = []
        self.fresh = 0
        # sid -> entry, in release order (an OrderedDict: the LRU end is O(1) to reach)
        self.entries: OrderedDict[int, Entry] = OrderedDict()
        self.queue: list[Hold] = []  # preempted first (latest first), then by enqueue
        self.next_order = 0
        self.stage: int | None = None  # global stage member of `admit via`
        self.waiting_grows: list[int] = []
        self.area = 0.0  # integral of allocated units over time
        self.area_t = 0.0

    def free_blocks(self) -> Number:
        return self.nfree() if self.nblocks is not None else math.inf

    def nfree(self) -> int:
        """Free blocks of a finite pool: given back, plus never used."""
        return len(self.free) + (self.nblocks or 0) - self.fresh

    def pop_free(self) -> int:
        """The next free block: the last given back, else the lowest never used."""
        if self.free:
            return self.free.pop()
        self.fresh += 1
        return self.fresh - 1

    def pop_free_n(self, n: int) -> list[int]:
        """The next n free blocks, in the order n `pop_free` calls would give them."""
        free = self.free
        k = min(n, len(free))
        out = free[len(free) - k :]
        del free[len(free) - k :]
        out.reverse()
        if k < n:
            out.extend(range(self.fresh, self.fresh + n - k))
            self.fresh += n - k
        return out


@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)
class StageState:
    __slots__ = (
        "budget",
        "budget_left",
        "busy",
        "decl",
        "exclusive",
        "iter_end",
        "iter_start",
        "iteration",
        "jobs",
        "joining",
        "kind",
        "label",
        "lanes",
        "member",
        "memory",
        "planning",
        "preempted",
        "rate",
        "residents",
        "scheduled",
        "seats",
        "waiting_jobs",
        "whole",
    )

    def __init__(self, decl: int, member: int, label: str, kind: str) -> None:
        self.decl = decl
        self.member = member
        self.label = label
        self.kind = kind
        self.budget: Number = math.inf
        self.seats: Number = math.inf
        self.whole = False
        self.exclusive = False
        self.residents: list[int] = []  # sids, by admission order of the run's hold
        self.joining: list[int] = []  # sids whose run waits for a seat, in asking order
        self.memory: list[int] = []  # global pool members served, declaration order
        self.busy = False
        self.planning = False
        self.iteration = 0
        self.iter_start = 0.0
        self.iter_end = 0.0
        self.budget_left: Number = math.inf
        self.preempted = False
        self.scheduled: list[int] = []  # sids with tokens in the current iteration
        # links
        self.rate: Number = 1.0
        self.lanes = 1
        self.jobs: list[Job] = []
        self.waiting_jobs: list[Job] = []


@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)
class Job:
    __slots__ = ("attrs", "end", "kind", "link", "sid", "source", "start", "tier", "units", "work")

    def __init__(self, kind: str, link: int, sid: int, work: Number) -> None:
        self.kind = kind  # "spill" | "send"
        self.link = link
        self.sid = sid
        self.work = work
        self.start: float | None = None
        self.end: float | None = None
        self.units = 0
        self.tier = -1
        self.source = -1
        self.attrs: dict[str, Number] = {}


@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)
class State:
    __slots__ = (
        "arrive_next",
        "class_counts",
        "counters",
        "error",
        "finished",
        "halted",
        "heap",
        "hit_units",
        "live",
        "n_events",
        "next_admit",
        "next_enq",
        "next_hold",
        "next_serial",
        "now",
        "pools",
        "progress",
        "seq",
        "settled",
        "stages",
        "violation",
    )

    def __init__(self) -> None:
        self.now = 0.0
        self.seq = 0
        self.heap: list[tuple[Any, ...]] = []
        self.settled = False
        self.finished = False
        self.halted: str | None = None
        self.error: Any = None  # a Diagnostic
        self.violation: Any = None  # a Violation
        self.n_events = 0
        self.progress = 0  # n_events at the last clock move, arrival or end (livelock guard)
        self.pools: list[PoolState] = []
        self.stages: list[StageState] = []
        self.live: dict[int, Session] = {}
        self.next_serial = 0
        self.next_hold = 1
        self.next_admit = 0
        self.next_enq = 0
        self.arrive_next: list[int] = []  # per class: arrivals put on the heap so far
        self.class_counts: list[list[int]] = []  # per class: [arrived, done, rejected]
        self.counters: dict[str, int] = {
            "preemptions": 0,
            "evictions": 0,
            "evicted_units": 0,
            "spills": 0,
            "drops": 0,
            "iterations": 0,
            "ended": 0,
            "arrived": 0,
            "peak_live": 0,
        }
        self.hit_units = [0, 0]  # units hit, units asked (at admissions)
