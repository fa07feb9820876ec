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
from typing import Any, Final

from mypy_extensions import mypyc_attr

from pooltui.sim.content import Content
from pooltui.sim.ledger import Ledger, Table

Number = int | float

# Session states (plain words in snapshots come from these).
S_ACTIVE: Final = "active"  # executing statements (transient)
S_QUEUED: Final = "queued"
S_RESIDENT: Final = "resident"
S_GROW_WAIT: Final = "grow-wait"
S_SLEEPING: Final = "sleeping"
S_SENDING: Final = "sending"
S_SEAT_WAIT: Final = "seat-wait"  # its run waits for a seat on a full step stage
S_RELOADING: Final = "reloading"  # admitted, its reload in flight (content-and-reload.md §3)
S_FOREVER: Final = "forever"  # a wait (or a send) that never ends: it never wakes
S_DONE: Final = "done"
S_REJECTED: Final = "rejected"

# Frame kinds.
F_TOP: Final = 0
F_PLAIN: Final = 1
F_REPEAT: Final = 2
F_HOLD: Final = 3


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
        "pool",
        "preempted",
        "queued",
        "reload_units",
        "reloading",
        "reserve",
        "sid",
        "size",
        "stmt",
        "table",
    )

    def __init__(
        self, key: int, sid: int, pool: int, stmt: tuple[int, int], content: Content
    ) -> None:
        self.key = key
        self.sid = sid
        self.pool = pool  # global pool member number
        self.stmt = stmt  # (body id, position) of the `hold` statement
        self.size = 0
        # Its block table in its pool's ledger, with its content (built at its first
        # attempt and kept for its life, preemptions included).
        self.table = Table(key, content)
        self.computed = 0
        self.context = 0
        self.reserve: Number | None = None
        self.admit_order = -1
        self.admitted_at = 0.0
        self.enq_time = 0.0
        self.enq_seq = 0
        self.preempted = False
        self.queued = False
        # Admitted, its reload in flight: not a resident, not a victim; its computed is
        # its hit + reload_units, the blocks past its hit unregistered until they land.
        self.reloading = False
        self.reload_units = 0


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
        "priv_hi",
        "released",
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
        # Its attributes as they were at its last release: one dict, shared by its cache
        # entries (and its spills' landed ones) and updated in place at each release, so an
        # ended session's entries all read its last release's (the Pool reference, evict).
        self.released: dict[str, Number] = {}
        self.frames: list[list[Any]] = []  # [kind, body id, pc, extra]
        self.holds: list[Hold] = []
        self.run: Run | None = None
        self.state = S_ACTIVE
        self.waiting_for = ""
        self.first_token: float | None = None
        self.admits: list[tuple[float, float]] = []  # (enqueued, admitted) per admission
        # Per pool member: the end of the furthest block of this session's private stream
        # registered there (the fast mode's steady residents register only past it).
        self.priv_hi: dict[int, int] = {}


@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)
class PoolState:
    __slots__ = (
        "area",
        "area_t",
        "block",
        "cap",
        "decl",
        "label",
        "ledger",
        "member",
        "nblocks",
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
        # The blocks: free ids (a count of never-used ones), reference counts, registered
        # content, the cache entries (one per release) and the holds' tables' blocks.
        self.ledger = Ledger(self.nblocks, self.block)
        self.queue: list[Hold] = []  # preempted first (latest first), then by enqueue
        self.stage: int | None = None  # global stage member of `admit via`
        self.waiting_grows: list[int] = []
        self.area = 0.0  # integral of allocated units over time
        self.area_t = 0.0

    @property
    def allocated(self) -> int:  # blocks with a count of at least one
        return self.ledger.allocated

    @property
    def cached(self) -> int:  # registered blocks with a count of zero
        return self.ledger.cached

    def free_blocks(self) -> Number:
        """Blocks that are neither allocated nor cached."""
        return self.nfree() if self.nblocks is not None else math.inf

    def nfree(self) -> int:
        """Free blocks of a finite pool: given back, plus never used."""
        L = self.ledger
        return len(L.free) + L.fresh


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
        "jobs_done",
        "joining",
        "kind",
        "label",
        "lanes",
        "link_busy",
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
        self.link_busy = 0.0  # seconds of lane time of the jobs that ended (end - start)
        self.jobs_done = [0, 0, 0]  # jobs that ended: spills, reloads, sends


@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)
class Job:
    __slots__ = (
        "attrs",
        "content",
        "end",
        "hold",
        "js",
        "kind",
        "link",
        "queued_at",
        "serial",
        "sid",
        "source",
        "start",
        "tier",
        "tiers",
        "units",
        "work",
    )

    def __init__(self, kind: str, link: int, sid: int, work: Number) -> None:
        self.kind = kind  # "spill" | "reload" | "send"
        self.link = link
        self.sid = sid
        self.work = work
        self.start: float | None = None
        self.end: float | None = None
        self.units = 0
        self.tier = -1
        self.source = -1
        self.attrs: dict[str, Number] = {}
        self.serial = 0
        # spill: the content spilled and the tier's block indices of it to write
        self.content: Content | None = None
        self.js: list[int] = []
        # reload: the hold it loads for (key), the tiers read ((pool member, units), chain
        # order) and when it was submitted (`took` counts the wait for a lane too)
        self.hold = -1
        self.tiers: tuple[tuple[int, int], ...] = ()
        self.queued_at = 0.0


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
            "reloads": 0,
            "reloaded_units": 0,
            "iterations": 0,
            "ended": 0,
            "arrived": 0,
            "peak_live": 0,
        }
        # At admissions: units hit (reloaded ones too), units asked, hit units on blocks
        # held by other holds (the `admit` event's `shared`), hit units on blocks other
        # sessions computed, units to be reloaded from tiers.
        self.hit_units = [0, 0, 0, 0, 0]
