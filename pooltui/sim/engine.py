"""The engine: one simulation's tables, state and recorder, and the hooks the fast mode
overrides.

An action is one thing popped from the heap (an iteration's end, a link job landing, a wake,
an arrival) or one settle of the current instant (`loop`). An action may record several
events; each event is recorded right after the state change it describes, so stopping after
any event (`stop_after`) leaves exactly the state that event describes. That is how the
debugger shows the middle of an action without the engine keeping generators.

The simulator is split by concern, one module each (docs/architecture.md draws them):

    loop         the heap, the clock, settling an instant, checks, deadlock
    interpreter  a session's statements: proceed, hold, run, grow, send, wait, repeat, if
    admit        queue order and admission; a hold's plan, release and rejection
    blocks       a pool's block accounting: allocation, give-back, entries, eviction
    links        spills, reloads and sends: link jobs
    reloads      a hold's continuation loaded back from its pool's tiers
    grow         growth and preemption
    runs         a run's residency on a step stage and the token rule
    iterations   planning, starting and ending iterations
    invariants   language.md §14: the per-event check, and the full count it answers to
    watch        what each event changed (recorded by the rules, read by the check)
    members      pool and stage members, the expressions' environment
    why          the sentences attached to events

This module owns the `Engine` object (what every module's functions take first), the
recording of events (`emit`), and the methods a mode may override; it keeps no simulation
logic of its own. It may not hold fast-mode switches: those live in `fast`.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable
from typing import Any, Final

from pooltui.lang.errors import SpecRuntimeError
from pooltui.lang.exprs import to_units
from pooltui.lang.ir import NO_SPAN, ArriveEvery, Attr, Draw, Expr, Span
from pooltui.lang.words import number, seconds
from pooltui.sim import (
    blocks,
    grow,
    interpreter,
    invariants,
    iterations,
    links,
    loop,
    members,
    reloads,
    runs,
    watch,
)
from pooltui.sim.codes import MAX_STILL, Halt, Number, StopReplay
from pooltui.sim.eventlog import EventLog
from pooltui.sim.events import Event, Violation
from pooltui.sim.ledger import CacheEntry, Evicted
from pooltui.sim.members import Env
from pooltui.sim.rng import stream_key
from pooltui.sim.state import Hold as HoldState
from pooltui.sim.state import Job, PoolState, Session, StageState, State
from pooltui.sim.tables import SessionDecl, Tables
from pooltui.sim.watch import Watch

__all__ = ["Engine", "Env", "Halt", "Schedule", "Stats", "StopReplay"]


# How a class's arrivals are produced (`Schedule`).
A_EVERY: Final = 0  # `arrive every`: each time is the last plus session i's gap, drawn when due
A_SAME: Final = 1  # `arrive at` reading no draw and no column: one time for every session
A_LAZY: Final = 2  # `arrive at` whose times are non-decreasing by index: evaluated when due
A_SORTED: Final = 3  # any other `arrive at`: every time computed once and sorted
MAX_SORTED: Final = 10_000_000  # sessions of one class an unsorted `arrive at` may have
LAST_ARRIVAL_PASS: Final = 1_000_000  # drawn `every` gaps summed for `last_arrival`, at most


def _reads_row_or_draw(expr: object, kinds: tuple[type, ...] = (Draw, Attr)) -> bool:
    """Whether an arrival expression reads a draw or a column (else it is one number);
    with `kinds` (Draw,), whether it draws."""
    if isinstance(expr, kinds):
        return True
    for name in getattr(expr, "__slots__", ()):
        value = getattr(expr, name, None)
        if isinstance(value, tuple):
            if any(_reads_row_or_draw(v, kinds) for v in value):
                return True
        elif (
            value is not None
            and not isinstance(value, str | int | float)
            and _reads_row_or_draw(value, kinds)
        ):
            return True
    return False


class Schedule:
    """How each class's sessions arrive: not simulation state, shared by every replay.

    Arrivals are produced one at a time, when the previous one of the class is due (the
    heap holds one per class), so a class of a billion sessions starts at once and costs
    nothing until its sessions arrive. What is pending lives in the state: the class's
    position (`State.arrive_next`) and, on the heap, the next arrival's (index, counter).
    Only an `arrive at` whose times are not in index order needs them all first
    (`A_SORTED`, at most MAX_SORTED sessions: a located error above)."""

    def __init__(self, tables: Tables, *, empty: bool = False) -> None:
        """`empty`: no arrivals at all (a simulation halted before its start)."""
        self.tables = tables
        self.seed = tables.program.seed
        self.env = Env(None)
        self.mode: list[int] = []
        self.count: list[int] = []
        self.same: list[float] = []  # A_SAME: the time
        self.times: list[array[float]] = []  # A_SORTED: times in arrival order
        self.order: list[array[int]] = []  # A_SORTED: the index of each
        self.last: list[float | None] = []  # the last arrival, when known
        self.draws: list[bool] = []  # whether the arrival expression draws
        self._last: float | bool | None = False  # `last_arrival`, once computed
        for sd in tables.sessions:
            self._add(sd, empty)

    def _add(self, sd: SessionDecl, empty: bool) -> None:
        n = 0 if empty else sd.ir.count
        self.count.append(n)
        self.same.append(0.0)
        self.times.append(array("d"))
        self.order.append(array("q"))
        self.last.append(None)
        c = len(self.mode)
        expr = sd.ir.arrive.gap if isinstance(sd.ir.arrive, ArriveEvery) else sd.ir.arrive.at
        self.draws.append(_reads_row_or_draw(expr, (Draw,)))
        if sd.every:
            self.mode.append(A_EVERY)
            return
        if not n or not _reads_row_or_draw(expr):
            self.mode.append(A_SAME)
            if n:
                self.same[c] = self.last[c] = self.value(c, 0, 0.0)[0]
            return
        if n > MAX_SORTED:
            raise SpecRuntimeError(
                f"{sd.ir.name}: `arrive at` of {n:,} sessions whose times are drawn or read "
                f"from a source must be computed and sorted before the run, which is done for "
                f"at most {MAX_SORTED:,} sessions: use `arrive every`, or fewer sessions",
                sd.ir.arrive.span,
            )
        # Every time, checked; in index order already (a trace's timestamps), they are
        # evaluated again when due and nothing is kept.
        times = array("d", (self.value(c, i, 0.0)[0] for i in range(n)))
        monotone = all(times[i] <= times[i + 1] for i in range(n - 1))
        self.last[c] = max(times) if n else None
        if monotone:
            self.mode.append(A_LAZY)
            return
        self.mode.append(A_SORTED)
        order = sorted(range(n), key=times.__getitem__)  # stable: ties by index
        self.order[c] = array("q", order)
        self.times[c] = array("d", (times[i] for i in order))

    def value(self, c: int, index: int, before: float) -> tuple[float, int]:
        """Session `index` of class c: its arrival time (`before` + its gap for `every`)
        and its stream's counter after the arrival expression's draws."""
        sd = self.tables.sessions[c]
        # Its stream only if the expression draws (its counter stays 0 otherwise).
        key = stream_key(self.seed, sd.ir.name, index) if self.draws[c] else 0
        session = Session(-1, sd.order, index, "", key)
        if sd.ir.source is not None:
            session.attrs = dict(zip(sd.columns, sd.ir.source.rows[index], strict=False))
        value = sd.arrive(self.env.bind(session, None, 0.0))
        span = sd.ir.arrive.span
        if not isinstance(value, int | float) or math.isnan(value) or value < 0:
            what = "gap" if sd.every else "arrival time"
            raise SpecRuntimeError(
                f"{sd.ir.name}[{index}]: the {what} is {number(value)}, not a time ≥ 0", span
            )
        t = before + value if sd.every else float(value)
        if math.isinf(t):
            raise SpecRuntimeError(f"{sd.ir.name}[{index}]: the arrival time is inf", span)
        return float(t), session.counter

    def arrival(self, c: int, pos: int, before: float) -> tuple[float, int, int]:
        """The class's pos-th arrival: (time, index, counter). `before` is the time of the
        class's previous arrival (`every` adds a gap to it)."""
        mode = self.mode[c]
        if mode == A_SORTED:
            index = self.order[c][pos]
            return self.times[c][pos], index, self.value(c, index, 0.0)[1]
        if mode == A_SAME:
            return self.same[c], pos, 0
        t, counter = self.value(c, pos, before)
        return t, pos, counter

    def last_arrival(self) -> float | None:
        """When the last session is due (a progress bar's end), if it can be known cheaply:
        None when some class's gaps are drawn over more than LAST_ARRIVAL_PASS sessions."""
        if self._last is False:
            try:
                self._last = self._last_arrival()
            except SpecRuntimeError:  # a bad gap: the run says so when it is due
                self._last = None
        return None if isinstance(self._last, bool) else self._last

    def _last_arrival(self) -> float | None:
        best: float | None = None
        for c, sd in enumerate(self.tables.sessions):
            n = self.count[c]
            last = self.last[c]
            if self.mode[c] == A_EVERY and n:
                assert isinstance(sd.ir.arrive, ArriveEvery)
                drawn = _reads_row_or_draw(sd.ir.arrive.gap)
                if n > LAST_ARRIVAL_PASS and drawn:
                    return None
                gap = self.value(c, 0, 0.0)[0]
                if n > LAST_ARRIVAL_PASS:
                    last = gap * n
                else:
                    t = 0.0
                    for i in range(n):
                        t = self.value(c, i, t)[0] if drawn else t + gap
                    last = t
            if last is not None:
                best = last if best is None else max(best, last)
        return best


def livelock(eng: Engine, span: Span | None, session: Session | None) -> None:
    """MAX_STILL events at one instant and nobody arrived or ended: the spec loops without
    moving (a `repeat` of `wait (0)`, say). A located runtime error, at what the looping
    event comes from."""
    if span is None and session is not None:
        span = eng.t.sessions[session.cls].ir.span
    raise SpecRuntimeError(
        f"{eng.still_limit:,} events at t={seconds(eng.s.now)} without the clock moving or a "
        "session arriving or ending: the spec loops without progress (a livelock)",
        span if span is not None else NO_SPAN,
    )


class Stats:
    """Figures for `pooltui run`'s summary. Not simulation state: replays keep their own.
    Samples are packed doubles: 24 bytes per finished session for the three of them."""

    def __init__(self, nclasses: int) -> None:
        self.latency: list[array[float]] = [array("d") for _ in range(nclasses)]
        self.queueing: list[array[float]] = [array("d") for _ in range(nclasses)]
        self.ttft: list[array[float]] = [array("d") for _ in range(nclasses)]


class Engine:
    def __init__(
        self,
        tables: Tables,
        schedule: Schedule,
        state: State,
        *,
        invariants: bool = True,
        stats: Stats | None = None,
        events: EventLog | None = None,
        record: bool = True,
    ) -> None:
        self.t = tables
        self.sched = schedule
        self.s = state
        self.invariants = invariants
        # What each event changed, for the per-event check (None: nothing is recorded;
        # the ledgers then note nothing either).
        self.watch: Watch | None = watch.start(state) if invariants else None
        if not invariants:
            for p in state.pools:
                p.ledger.track = False
                p.ledger.untouched()
        self.stats = stats or Stats(len(tables.sessions))
        self.events: EventLog = events if events is not None else EventLog()
        self.record = record
        self.keep = True  # append events to `events` (headless runs stream them instead)
        self.admitting = -1  # the session being admitted in an iteration (transient)
        self.departures = 0  # residents that left a stage so far (`serve_residents`)
        self.stop_after: int | None = None
        self.still_limit = MAX_STILL  # the livelock guard's N (a test may lower it)
        self.env = Env(self)
        self.on_event: Callable[[Event], None] | None = None
        self.last: tuple[Any, ...] | None = None  # the last unrecorded event's makings
        self.pool_base: list[int] = []
        self.stage_base: list[int] = []
        n = 0
        for pd in tables.pools:
            self.pool_base.append(n)
            n += pd.ir.count
        n = 0
        for sd in tables.stages:
            self.stage_base.append(n)
            n += sd.ir.count
        self.configure()

    def configure(self) -> None:
        """Settings a mode derives from the tables (the fast mode's; none here). A hook,
        not a constructor override: the compiled build (mypyc) cannot forward a
        constructor's arguments to a compiled base class."""

    # ------------------------------------------------------------------ driving
    @staticmethod
    def initial_state(tables: Tables) -> State:
        return members.initial_state(tables)

    def start(self) -> None:
        """Put each class's first arrival on the heap."""
        loop.start(self)

    def advance(self) -> bool:
        """Run one action. False when nothing more can happen (finished or halted)."""
        return loop.advance(self)

    def is_over(self) -> bool:
        return loop.is_over(self)

    # ------------------------------------------------------------------ events
    def emit(
        self,
        moment: str,
        why: str | Callable[[], str],
        session: Session | None = None,
        pool: PoolState | None = None,
        name: str | None = None,
        stage: StageState | None = None,
        others: tuple[str, ...] = (),
        units: int | None = None,
        blocks: tuple[int, ...] = (),
        span: Span | None = None,
        data: tuple[tuple[str, Any], ...] = (),
    ) -> None:
        """Record one event, right after the state change it describes."""
        s = self.s
        index = s.n_events
        if index - s.progress >= self.still_limit:
            livelock(self, span, session)
        s.n_events += 1
        if self.record:
            sid, cls = None, None
            if session is not None:
                sid, cls = session.sid, self.t.sessions[session.cls].ir.name
            elif name is not None:
                sid, cls = members.sid_by_name(self, name)
            text = why if isinstance(why, str) else why()
            who = session.name if session is not None else name
            plabel = pool.label if pool is not None else None
            slabel = stage.label if stage is not None else None
            if self.keep:
                self.events.add(s.now, moment, text, who, sid, cls, plabel, slabel, others,
                                units, blocks, span, data)  # fmt: skip
            if self.on_event is not None:
                self.on_event(Event(index, s.now, moment, text, who, sid, cls, plabel, slabel,
                                    others, units, blocks, span, data))  # fmt: skip
        else:  # kept unworded: `last_event` words it if a halt asks for it
            self.last = (index, s.now, moment, why, session, pool, name, stage, others, units,
                         blocks, span, data)  # fmt: skip
        self.event_done()
        if self.stop_after is not None and s.n_events >= self.stop_after:
            raise StopReplay()

    def last_event(self) -> Event | None:
        """The last event, when it is the last counted (made on demand when nothing records
        events: for a halt's message). Its words are made now: right for the event that
        halted the run, the state being as that event left it."""
        if self.record:
            n = len(self.events)
            return self.events[n - 1] if self.keep and n and n == self.s.n_events else None
        last = self.last
        if last is None or last[0] != self.s.n_events - 1:
            return None
        index, now, moment, why, session, pool, name, stage, others, units, blocks, span, data = (
            last
        )
        sid, cls = None, None
        if session is not None:
            sid, cls = session.sid, self.t.sessions[session.cls].ir.name
        elif name is not None:
            sid, cls = members.sid_by_name(self, name)
        return Event(
            index,
            now,
            moment,
            why if isinstance(why, str) else why(),
            session.name if session is not None else name,
            sid,
            cls,
            pool.label if pool is not None else None,
            stage.label if stage is not None else None,
            others,
            units,
            blocks,
            span,
            data,
        )

    def batchable(self, n: int) -> bool:
        """Whether n events may be emitted after all the changes they describe were made
        (as one step of the ledger): nothing looks at the state between events (no
        per-event invariant check) and none of them can end the run (`stop_after`, the
        livelock guard). The fast mode checks invariants per action."""
        s = self.s
        return (
            not self.invariants
            and self.stop_after is None
            and s.n_events + n - 1 - s.progress < self.still_limit
        )

    def count_unrecorded(self, n: int) -> bool:
        """Count n events without making them when nothing records events (the caller
        checked `batchable`); False (nothing counted) when they are recorded."""
        if self.record:
            return False
        self.s.n_events += n
        return True

    def event_done(self) -> None:
        """After each event: the invariants are checked (a mode may check per action)."""
        if self.invariants:
            self.check_now()

    def action_done(self) -> None:
        """After each action (the per-event mode has checked every event already)."""

    def check_now(self) -> None:
        v = self.check_invariants()
        if v is not None:
            self.s.violation = v
            self.s.halted = f"invariant broken: {v.message}"
            raise Halt()

    def check_invariants(self) -> Violation | None:
        if self.watch is None:
            return invariants.check(self.s)
        return invariants.check_event(self.s, self.watch)

    # ------------------------------------------------------------------ evaluation
    def value_of(self, expr: Expr, sess: Session | None, hold: HoldState | None = None) -> Number:
        # Every evaluation binds the env first, so a stale session is never drawn from.
        return self.t.fn(expr)(self.env.bind(sess, hold, self.s.now))

    def units(self, value: Number, span: Span, what: str) -> int:
        """A number of units from an expression (the language's one rule, `to_units`):
        rounded up; negative, inf or past 2^53 is a located runtime error."""
        return to_units(value, span, what)

    # ------------------------------------------------------------------ calls upward
    # A concern module calls only the modules below it (docs/architecture.md); where a
    # rule must hand back to a higher one (the session goes on, an action is scheduled, an
    # evicted prefix spills), it goes through these, so no two modules import each other.
    def push(self, t: float, prio: int, sub: int, kind: str, a: Any = None, b: Any = None) -> None:
        loop.push(self, t, prio, sub, kind, a, b)

    def push_arrival(self, c: int) -> None:
        loop.push_arrival(self, c)

    def proceed(self, sess: Session) -> None:
        interpreter.proceed(self, sess)

    def end_session(self, sess: Session, how: str) -> None:
        interpreter.end_session(self, sess, how)

    def wake(self, sess: Session) -> None:
        interpreter.wake(self, sess)

    def grow_to(
        self, sess: Session, h: HoldState, new_size: int, span: Span, st: StageState | None
    ) -> str:
        return grow.grow_to(self, sess, h, new_size, span, st)

    def maybe_spill(self, p: PoolState, e: CacheEntry, gone: list[Evicted], name: str) -> None:
        links.maybe_spill(self, p, e, gone, name)

    def land_reload(self, lk: StageState, job: Job) -> None:
        reloads.land(self, lk, job)

    # ------------------------------------------------------------------ a mode's hooks
    # The per-event rules; the fast mode overrides these to keep its steady residents.
    def evict(self, p: PoolState, nblocks: int) -> None:
        blocks.evict(self, p, nblocks)

    def join_stage(self, sess: Session, st: StageState) -> None:
        runs.join_stage(self, sess, st)

    def leave_stage(self, sess: Session) -> None:
        runs.leave_stage(self, sess)

    def preempt(self, h: HoldState, grower: Session, p: PoolState, need: int) -> None:
        grow.preempt(self, h, grower, p, need)

    def start_iteration(self, st: StageState) -> bool:
        return iterations.start_iteration(self, st)

    def iteration_end(self, st: StageState, duration: float, fused: int) -> float:
        """When the iteration just planned ends (fast mode may run several as one)."""
        return self.s.now + duration

    def iteration_event(self, st: StageState, tokens: int, admitted: list[str], preempted: bool,
                        duration: float, prefills: int, decodes: int) -> None:  # fmt: skip
        """The `iteration` event (the fast mode records none)."""
        iterations.iteration_event(
            self, st, tokens, admitted, preempted, duration, prefills, decodes
        )

    def end_iteration(self, st: StageState) -> None:
        iterations.end_iteration(self, st)

    def grow_event(self, sess: Session, p: PoolState, new_size: int, need: int,
                   added: list[int], span: Span) -> None:  # fmt: skip
        """The `grow` event (the fast mode records none)."""
        grow.grow_event(self, sess, p, new_size, need, added, span)
