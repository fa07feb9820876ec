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
    links        spills and sends: link jobs
    grow         growth and preemption
    runs         a run's residency on a step stage and the token rule
    iterations   planning, starting and ending iterations
    invariants   the pure check of language.md §8
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
from typing import Any

from pooltui.lang.errors import SpecRuntimeError
from pooltui.lang.ir import Expr, Span
from pooltui.lang.words import number
from pooltui.sim import blocks, grow, invariants, iterations, loop, members, runs
from pooltui.sim.codes import Halt, Number, StopReplay
from pooltui.sim.events import Event
from pooltui.sim.members import Env
from pooltui.sim.rng import stream_key
from pooltui.sim.snapshot import Violation
from pooltui.sim.state import Hold as HoldState
from pooltui.sim.state import PoolState, Session, StageState, State
from pooltui.sim.tables import Tables

__all__ = ["Engine", "Env", "Halt", "Schedule", "Stats", "StopReplay"]


class Schedule:
    """Arrival times of every session, computed once per program (not simulation state).

    Per class: a list of (time, index, stream counter after the arrival draw, stream key),
    sorted."""

    def __init__(self, tables: Tables) -> None:
        self.per_class: list[list[tuple[float, int, int, int]]] = []
        seed = tables.program.seed
        env = Env(None)
        for sd in tables.sessions:
            times: list[tuple[float, int, int, int]] = []
            t = 0.0
            rows = sd.ir.source.rows if sd.ir.source is not None else None
            for i in range(sd.ir.count):
                session = Session(-1, sd.order, i, "", stream_key(seed, sd.ir.name, i))
                if rows is not None:
                    session.attrs = dict(zip(sd.columns, rows[i], strict=False))
                value = sd.arrive(env.bind(session, None, 0.0))
                span = sd.ir.arrive.span
                if not isinstance(value, int | float) or math.isnan(value) or value < 0:
                    what = "gap" if sd.every else "arrival time"
                    raise SpecRuntimeError(
                        f"{sd.ir.name}[{i}]: the {what} is {number(value)}, not a time ≥ 0", span
                    )
                if math.isinf(value):
                    raise SpecRuntimeError(f"{sd.ir.name}[{i}]: the arrival time is inf", span)
                t = t + value if sd.every else float(value)
                times.append((float(t), i, session.counter, session.rng_key))
            times.sort()
            self.per_class.append(times)


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
        events: list[Event] | None = None,
        record: bool = True,
    ) -> None:
        self.t = tables
        self.sched = schedule
        self.s = state
        self.invariants = invariants
        self.stats = stats or Stats(len(tables.sessions))
        self.events: list[Event] = events if events is not None else []
        self.record = record
        self.keep = True  # append events to `events` (headless runs stream them instead)
        self.admitting = -1  # the session being admitted in an iteration (transient)
        self.stop_after: int | None = None
        self.env = Env(self)
        self.on_event: Callable[[Event], None] | None = None
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
        s.n_events += 1
        if self.record:
            sid_of, cls_of = None, None
            if session is None and name is not None:
                sid_of, cls_of = members.sid_by_name(self, name)
            ev = Event(
                index,
                s.now,
                moment,
                why if isinstance(why, str) else why(),
                session.name if session is not None else name,
                session.sid if session is not None else sid_of,
                self.t.sessions[session.cls].ir.name if session is not None else cls_of,
                pool.label if pool is not None else None,
                stage.label if stage is not None else None,
                others,
                units,
                blocks,
                span,
                data,
            )
            if self.keep:
                self.events.append(ev)
            if self.on_event is not None:
                self.on_event(ev)
        self.event_done()
        if self.stop_after is not None and s.n_events >= self.stop_after:
            raise StopReplay()

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
        return invariants.check(self.s)

    # ------------------------------------------------------------------ evaluation
    def value_of(self, expr: Expr, sess: Session | None, hold: HoldState | None = None) -> Number:
        # Every evaluation binds the env first, so a stale session is never drawn from.
        return self.t.fn(expr)(self.env.bind(sess, hold, self.s.now))

    def units(self, value: Number, span: Span, what: str) -> int:
        if value < 0:
            raise SpecRuntimeError(f"{what} is {number(value)}, which is negative", span)
        if math.isinf(value) or math.isnan(value):
            raise SpecRuntimeError(f"{what} is {number(value)}, not a number of units", span)
        return math.ceil(value - 1e-9)

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
