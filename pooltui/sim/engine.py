"""The engine: advances a `State` one action at a time, recording events.

An action is one thing popped from the heap (an iteration's end, a link job landing, a wake,
an arrival) or one settle of the current instant. An action may record several events; each
event is recorded right after the state change it describes, so stopping after any event
(`stop_after`) leaves exactly the state that event describes. That is how the debugger
shows the middle of an action without the engine keeping generators.
"""

from __future__ import annotations

import heapq
import math
from array import array
from collections.abc import Callable
from typing import Any

from pooltui.lang.errors import SpecRuntimeError
from pooltui.lang.exprs import normal
from pooltui.lang.ir import (
    Expr,
    Grow,
    Hold,
    If,
    Ref,
    Repeat,
    Run,
    Send,
    SetAttr,
    Span,
    Stmt,
    Wait,
)
from pooltui.sim.events import Event
from pooltui.sim.rng import Stream, stream_key
from pooltui.sim.snapshot import Violation
from pooltui.sim.state import (
    F_HOLD,
    F_PLAIN,
    F_REPEAT,
    F_TOP,
    S_ACTIVE,
    S_DONE,
    S_GROW_WAIT,
    S_QUEUED,
    S_REJECTED,
    S_RESIDENT,
    S_SENDING,
    S_SLEEPING,
    Entry,
    Job,
    PoolState,
    Session,
    StageState,
    State,
)
from pooltui.sim.state import Hold as HoldState
from pooltui.sim.state import Run as RunState
from pooltui.sim.tables import Tables

Number = int | float

# Heap priorities at one instant (decisions.md: time and order).
P_ITER_END = 0
P_LINK = 1
P_WAKE = 2
P_ARRIVE = 3

ADMITTED, BLOCKED, REJECTED = 1, 0, -1


class StopReplay(Exception):
    """Raised when a replay reaches `stop_after` events (the state is then that event's)."""


class Halt(Exception):
    """Raised inside an action when the simulation must stop (violation, check, deadlock)."""


def fmt(x: Number) -> str:
    """Numbers in plain words: integers without a point, others with up to 6 digits."""
    if isinstance(x, float):
        if math.isinf(x):
            return "inf"
        if x.is_integer() and abs(x) < 1e15:
            return str(int(x))
        return f"{x:.6g}"
    return str(x)


def fmt_t(t: float) -> str:
    return f"{t:.6g}s"


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
                        f"{sd.ir.name}[{i}]: the {what} is {fmt(value)}, not a time ≥ 0", span
                    )
                if math.isinf(value):
                    raise SpecRuntimeError(f"{sd.ir.name}[{i}]: the arrival time is inf", span)
                t = t + value if sd.every else float(value)
                times.append((float(t), i, session.counter, session.rng_key))
            times.sort()
            self.per_class.append(times)


class Env:
    """What compiled expressions read. Context variables are plain attributes; the engine
    sets the ones that mean something before each evaluation."""

    __slots__ = (
        "age",
        "attrs",
        "computed",
        "context",
        "decodes",
        "eng",
        "hold_pool",
        "last",
        "now",
        "prefills",
        "residents",
        "serial",
        "session",
        "size",
        "tokens",
        "waited",
        "waiting",
    )

    def __init__(self, eng: Engine | None) -> None:
        self.eng = eng
        self.attrs: dict[str, Number] = {}
        self.session: Session | None = None
        self.hold_pool = -1  # the pool member of the hold being evaluated (joins bare stages)
        self.now: float = 0.0
        self.serial = 0
        self.computed = 0
        self.context = 0
        self.waited = 0.0
        self.size = 0
        self.age = 0.0
        self.last = 0.0
        self.waiting = 0
        self.tokens = 0
        self.residents = 0
        self.prefills = 0
        self.decodes = 0

    def bind(self, session: Session | None, hold: HoldState | None, now: float) -> Env:
        self.session = session
        self.attrs = session.attrs if session is not None else {}
        self.now = now
        if session is not None:
            self.serial = session.serial
        if hold is not None:
            self.computed = hold.computed
            self.context = hold.context
            self.hold_pool = hold.pool
        elif session is not None and session.holds:
            self.hold_pool = session.holds[-1].pool
        else:
            self.hold_pool = -1
        return self

    def query(self, name: str, kind: str, target: str, index: int | None) -> Number:
        assert self.eng is not None
        return self.eng.query(name, kind, target, index)

    def argquery(self, fn: str, kind: str, family: str, query: str) -> int:
        assert self.eng is not None
        return self.eng.argquery(fn, kind, family, query)

    def draw(self, dist: str, args: list[Number]) -> Number:
        if self.session is None:
            raise ValueError("no session stream to draw from here")
        stream = Stream(self.session.rng_key, self.session.counter)
        value = stream.draw(dist, args)
        self.session.counter = stream.counter
        return normal(value)


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
        self.quiet: frozenset[str] = frozenset()  # moments not recorded (fast mode)
        self.lean = False  # nothing records or checks events: hot paths may just count them
        # The fast mode checks the invariants after each action, not each event: inside an
        # action it allocates fused iterations' blocks ahead of their steps.
        self.check_per_action = False
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

    # ------------------------------------------------------------------ set-up
    @staticmethod
    def initial_state(tables: Tables) -> State:
        s = State()
        for sd in tables.stages:
            for m, label in enumerate(sd.labels):
                st = StageState(sd.order, m, label, sd.ir.kind)
                st.budget = sd.ir.budget
                st.seats = sd.ir.seats
                st.budget_left = sd.ir.budget
                st.whole = sd.ir.prefill == "whole"
                st.exclusive = sd.ir.exclusive_prefill
                st.rate = sd.ir.rate
                st.lanes = sd.ir.lanes
                s.stages.append(st)
        stage_base = []
        n = 0
        for sd in tables.stages:
            stage_base.append(n)
            n += sd.ir.count
        for pd in tables.pools:
            for m, label in enumerate(pd.labels):
                p = PoolState(pd.order, m, label, pd.ir.cap, pd.ir.block)
                via = pd.stage_member[m]
                if via is not None:
                    p.stage = stage_base[via[0]] + via[1]
                    s.stages[p.stage].memory.append(len(s.pools))
                s.pools.append(p)
        for _ in tables.sessions:
            s.arrive_next.append(0)
            s.class_counts.append([0, 0, 0])
        return s

    def start(self) -> None:
        """Put each class's first arrival on the heap."""
        for c, times in enumerate(self.sched.per_class):
            if times:
                self._push_arrival(c)

    def _push_arrival(self, c: int) -> None:
        s = self.s
        pos = s.arrive_next[c]
        t, index = self.sched.per_class[c][pos][:2]
        self.push(t, P_ARRIVE, c * 1_000_000_000 + index, "arrive", c)

    def push(self, t: float, prio: int, sub: int, kind: str, a: Any = None, b: Any = None) -> None:
        s = self.s
        s.seq += 1
        heapq.heappush(s.heap, (t, prio, sub, s.seq, kind, a, b))

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
        if moment in self.quiet:
            return
        s = self.s
        index = s.n_events
        s.n_events += 1
        if self.record:
            sid_of, cls_of = None, None
            if session is None and name is not None:
                sid_of, cls_of = self.sid_by_name(name)
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
        if self.invariants and not self.check_per_action:
            self.check_now()
        if self.stop_after is not None and s.n_events >= self.stop_after:
            raise StopReplay()

    def check_now(self) -> None:
        v = self.check_invariants()
        if v is not None:
            self.s.violation = v
            self.s.halted = f"invariant broken: {v.message}"
            raise Halt()

    # ------------------------------------------------------------------ the loop
    def advance(self) -> bool:
        """Run one action. False when nothing more can happen (finished or halted)."""
        s = self.s
        if s.halted is not None or s.finished:
            return False
        try:
            heap = s.heap
            if heap and heap[0][0] <= s.now:
                self.process(heapq.heappop(heap))
                s.settled = False
            elif not s.settled:
                s.settled = True
                self.settle()
            elif not heap:
                if s.live:
                    self.deadlock()
                else:
                    s.finished = True
                    return False
            else:
                item = heapq.heappop(heap)
                self.advance_clock(item[0])
                self.process(item)
                s.settled = False
            if self.invariants and self.check_per_action:
                self.check_now()
        except Halt:
            return False
        except SpecRuntimeError as exc:
            s.error = exc.diagnostic()
            s.halted = f"runtime error: {exc.message}"
            return False
        return True

    def is_over(self) -> bool:
        """Nothing more can happen: finished, or nothing scheduled and nobody left (a last
        settle could only fail a check), whether or not a step has looked past the end."""
        s = self.s
        return s.finished or (not s.heap and not s.live and (s.settled or not self.t.checks))

    def advance_clock(self, t: float) -> None:
        s = self.s
        if t > s.now:
            for p in s.pools:  # utilisation integrals
                p.area += p.allocated * p.block * (t - p.area_t)
                p.area_t = t
            s.now = t

    def process(self, item: tuple[Any, ...]) -> None:
        kind = item[4]
        if kind == "end":
            self.end_iteration(self.s.stages[item[5]])
        elif kind == "link":
            self.finish_job(self.s.stages[item[5]], item[6])
        elif kind == "wake":
            sess = self.s.live.get(item[5])
            if sess is not None:
                self.wake(sess)
        elif kind == "arrive":
            self.arrive(item[5])

    # ------------------------------------------------------------------ settle
    def settle(self) -> None:
        """After every event at this instant: pools without a stage admit, waiting grows
        retry, idle stages start iterations, until nothing more moves; then the checks."""
        s = self.s
        moved = True
        rounds = 0
        while moved:
            rounds += 1
            moved = False
            for p in s.pools:
                if p.stage is None and p.queue and self.admit_loop(p, None):
                    moved = True
                if p.waiting_grows and self.retry_grows(p):
                    moved = True
            for st in s.stages:
                if st.kind == "step" and not st.busy and self.start_iteration(st):
                    moved = True
            if rounds > 100_000:  # pragma: no cover - a bug guard, not a spec error
                raise RuntimeError("settle does not converge")
        if s.heap and s.heap[0][0] <= s.now:
            s.settled = False  # zero-length iterations or waits at this instant
        self.run_checks()

    def run_checks(self) -> None:
        if not self.t.checks:
            return
        env = self.env.bind(None, None, self.s.now)
        for label, fn, span in self.t.checks:
            if not fn(env):
                self.s.halted = f"check failed: {label}"
                self.emit(
                    "check-failed",
                    lambda: f'check "{label}" failed at {fmt_t(self.s.now)}',
                    span=span,
                    data=(("label", label),),
                )
                raise Halt()

    # ------------------------------------------------------------------ sessions
    def arrive(self, c: int) -> None:
        s = self.s
        sd = self.t.sessions[c]
        pos = s.arrive_next[c]
        _t, index, counter, key = self.sched.per_class[c][pos]
        s.arrive_next[c] = pos + 1
        if pos + 1 < len(self.sched.per_class[c]):
            self._push_arrival(c)
        name = f"{sd.ir.name}[{index}]" if (sd.ir.family or sd.ir.source) else sd.ir.name
        sess = Session(sd.sid_base + index, c, index, name, key)
        sess.counter = counter
        if sd.ir.source is not None:
            sess.attrs = dict(zip(sd.columns, sd.ir.source.rows[index], strict=False))
        sess.serial = s.next_serial
        s.next_serial += 1
        sess.arrived = s.now
        sess.frames.append([F_TOP, sd.body_id, 0, None])
        s.live[sess.sid] = sess
        s.counters["arrived"] += 1
        if len(s.live) > s.counters["peak_live"]:
            s.counters["peak_live"] = len(s.live)
        s.class_counts[c][0] += 1
        self.emit(
            "arrive",
            lambda: f"{name} arrived (serial {sess.serial})",
            session=sess,
            span=sd.ir.span,
            data=(("serial", sess.serial),),
        )
        self.proceed(sess)

    def value_of(self, expr: Expr, sess: Session | None, hold: HoldState | None = None) -> Number:
        # Every evaluation binds the env first, so a stale session is never drawn from.
        return self.t.fn(expr)(self.env.bind(sess, hold, self.s.now))

    def units(self, value: Number, span: Span, what: str) -> int:
        if value < 0:
            raise SpecRuntimeError(f"{what} is {fmt(value)}, which is negative", span)
        if math.isinf(value) or math.isnan(value):
            raise SpecRuntimeError(f"{what} is {fmt(value)}, not a number of units", span)
        return math.ceil(value - 1e-9)

    def proceed(self, sess: Session) -> None:
        """Execute statements until the session blocks or ends."""
        t = self.t
        sess.state = S_ACTIVE
        while sess.frames:
            frame = sess.frames[-1]
            body = t.bodies[frame[1]]
            pc = frame[2]
            if pc >= len(body):
                if not self.close_frame(sess, frame):
                    return
                continue
            stmt = body[pc]
            if isinstance(stmt, SetAttr):
                sess.attrs[stmt.name] = self.value_of(stmt.value, sess, self.innermost(sess))
                frame[2] = pc + 1
            elif isinstance(stmt, Hold):
                self.enqueue(sess, stmt, (frame[1], pc))
                return
            elif isinstance(stmt, Run):
                if self.start_run(sess, stmt):
                    return
                frame[2] = pc + 1
            elif isinstance(stmt, Grow):
                if not self.grow_stmt(sess, stmt):
                    return
                frame[2] = pc + 1
            elif isinstance(stmt, Send):
                self.send(sess, stmt)
                return
            elif isinstance(stmt, Wait):
                secs = self.value_of(stmt.seconds, sess, self.innermost(sess))
                if secs < 0 or math.isnan(secs):
                    raise SpecRuntimeError(f"wait of {fmt(secs)} seconds", stmt.span)
                sess.state = S_SLEEPING
                sess.waiting_for = f"sleeping until {fmt_t(self.s.now + secs)}"
                self.push(self.s.now + secs, P_WAKE, sess.sid, "wake", sess.sid)
                return
            elif isinstance(stmt, Repeat):
                n = self.value_of(stmt.count, sess, self.innermost(sess))
                frame[2] = pc + 1
                count = math.floor(n + 1e-9)
                if count > 0:
                    sess.frames.append([F_REPEAT, t.body_of[id(stmt.body)], 0, count])
            elif isinstance(stmt, If):
                c = self.value_of(stmt.cond, sess, self.innermost(sess))
                frame[2] = pc + 1
                chosen = stmt.then if c else stmt.otherwise
                if chosen:
                    sess.frames.append([F_PLAIN, t.body_of[id(chosen)], 0, None])

    def close_frame(self, sess: Session, frame: list[Any]) -> bool:
        """A body ran out. False when the session stopped (ended)."""
        kind = frame[0]
        if kind == F_REPEAT and frame[3] > 1:
            frame[3] -= 1
            frame[2] = 0
            return True
        sess.frames.pop()
        if kind == F_HOLD:
            self.release(sess, frame[3])
        if kind == F_TOP:
            self.end_session(sess, "done")
            return False
        if sess.frames:
            sess.frames[-1][2] += 1 if kind == F_HOLD else 0
        return True

    def innermost(self, sess: Session) -> HoldState | None:
        return sess.holds[-1] if sess.holds else None

    def current_stmt(self, sess: Session) -> Stmt | None:
        if not sess.frames:
            return None
        frame = sess.frames[-1]
        body = self.t.bodies[frame[1]]
        return body[frame[2]] if frame[2] < len(body) else None

    def end_session(self, sess: Session, how: str) -> None:
        s = self.s
        for h in list(sess.holds):
            self.drop_hold(sess, h)
        sess.frames.clear()
        sess.state = S_DONE if how == "done" else S_REJECTED
        s.live.pop(sess.sid, None)
        s.counters["ended"] += 1
        cc = s.class_counts[sess.cls]
        if how == "done":
            cc[1] += 1
            self.stats.latency[sess.cls].append(s.now - sess.arrived)
        else:
            cc[2] += 1
        self.emit(
            "end",
            lambda: (
                f"{sess.name} {'finished' if how == 'done' else 'was rejected'} after "
                f"{fmt_t(s.now - sess.arrived)}"
            ),
            session=sess,
            data=(("how", how),),
            span=self.t.sessions[sess.cls].ir.span,
        )

    def wake(self, sess: Session) -> None:
        reason = "send" if sess.state == S_SENDING else "wait"
        stmt = self.current_stmt(sess)
        sess.state = S_ACTIVE
        sess.waiting_for = ""
        sess.frames[-1][2] += 1
        self.emit(
            "wake",
            lambda: (
                f"{sess.name} woke ({'its send landed' if reason == 'send' else 'its wait is over'})"
            ),
            session=sess,
            span=stmt.span if stmt is not None else None,
            data=(("reason", reason),),
        )
        self.proceed(sess)

    # ------------------------------------------------------------------ members
    def pool_member(self, ref: Ref, sess: Session | None) -> PoolState:
        decl = self.t.pool_index[ref.name]
        count = self.t.pools[decl].ir.count
        return self.s.pools[self.pool_base[decl] + self.member_index(ref, count, sess)]

    def member_index(self, ref: Ref, count: int, sess: Session | None) -> int:
        if ref.index is None:
            return 0
        i = self.value_of(ref.index, sess, self.innermost(sess) if sess is not None else None)
        if not float(i).is_integer() or not 0 <= i < count:
            raise SpecRuntimeError(
                f"{ref.name}[{fmt(i)}]: {ref.name} has members 0..{count - 1}", ref.span
            )
        return int(i)

    def query(self, name: str, kind: str, target: str, index: int | None) -> Number:
        if kind == "pool":
            decl = self.t.pool_index[target]
            count = self.t.pools[decl].ir.count
            i = index or 0
            if not 0 <= i < count:
                raise IndexError(f"{target}[{i}]: {target} has members 0..{count - 1}")
            p = self.s.pools[self.pool_base[decl] + i]
            if name == "cap":
                return normal(p.cap)
            if name == "allocated":
                return p.allocated * p.block
            if name == "cached":
                return p.cached * p.block
            if name == "free":
                return p.free_blocks() * p.block
            return len(p.queue)  # queued
        decl = self.t.stage_index[target]
        count = self.t.stages[decl].ir.count
        if index is None and count > 1 and self.env.hold_pool >= 0:
            # A bare stage family inside a hold: the member its pool member is joined with.
            via = self.s.pools[self.env.hold_pool].stage
            base = self.stage_base[decl]
            if via is not None and base <= via < base + count:
                index = via - base
        i = index or 0
        if not 0 <= i < count:
            raise IndexError(f"{target}[{i}]: {target} has members 0..{count - 1}")
        st = self.s.stages[self.stage_base[decl] + i]
        if name == "budget_left":
            return normal(st.budget_left if st.planning else st.budget)
        if name == "residents":
            return len(st.residents) if st.kind == "step" else len(st.jobs)
        return normal(st.seats - len(st.residents))  # seats_left

    def argquery(self, fn: str, kind: str, family: str, query: str) -> int:
        if kind == "pool":
            count = self.t.pools[self.t.pool_index[family]].ir.count
        else:
            count = self.t.stages[self.t.stage_index[family]].ir.count
        values = [self.query(query, kind, family, i) for i in range(count)]
        best = min(values) if fn == "argmin" else max(values)
        return values.index(best)

    # ------------------------------------------------------------------ pools: blocks
    @staticmethod
    def nb(p: PoolState, units: int) -> int:
        return -(-units // p.block)

    def available(self, p: PoolState, protect: int | None = None) -> Number:
        """Blocks an allocation could get: free plus evictable cache."""
        if p.nblocks is None:
            return math.inf
        own = p.entries[protect].nblocks if protect is not None and protect in p.entries else 0
        return len(p.free) + p.cached - own

    def take_blocks(self, p: PoolState, n: int, protect: int | None) -> list[int]:
        """Allocate n blocks, evicting cache first if needed (but not `protect`'s entry)."""
        if p.nblocks is None:
            p.allocated += n
            return []
        free = p.free
        if n > len(free):
            self.evict(p, n - len(free), protect)
        p.allocated += n
        if n == 1:  # the common case: a decode crossing into its next block
            return [free.pop()]
        out = free[len(free) - n :]  # the top n, in the order n pops would give them
        del free[len(free) - n :]
        out.reverse()
        return out

    def give_back(self, p: PoolState, phys: list[int], n: int) -> None:
        """Free n allocated blocks (their ids in `phys`, reused first)."""
        p.allocated -= n
        if p.nblocks is None:
            return
        p.free.extend(reversed(phys))

    def evict_order(self, p: PoolState, protect: int | None) -> list[Entry]:
        pd = self.t.pools[p.decl]
        entries = [e for sid, e in p.entries.items() if sid != protect]
        if pd.evict_keys is None:
            return entries  # release order is insertion order
        keyed = [(self.entry_keys(p, e), e.order, e) for e in entries]
        keyed.sort(key=lambda k: (k[0], k[1]))
        return [k[2] for k in keyed]

    def entry_keys(self, p: PoolState, e: Entry) -> tuple[Number, ...]:
        pd = self.t.pools[p.decl]
        if pd.evict_keys is None:
            return (e.last, e.order)
        env = self.entry_env(p, e, e.units)
        return tuple(f(env) for f in pd.evict_keys)

    def entry_env(self, p: PoolState, e: Entry, size: int) -> Env:
        sess = self.s.live.get(e.sid)
        env = self.env
        env.session = None  # evict keys and spill expressions may not draw
        env.attrs = sess.attrs if sess is not None else e.attrs
        env.serial = sess.serial if sess is not None else e.serial
        env.now = self.s.now
        env.size = size
        env.age = self.s.now - e.last
        env.last = e.last
        env.waiting = len(p.queue)
        env.hold_pool = self.s.pools.index(p)
        return env

    def next_to_evict(self, p: PoolState, protect: int | None) -> Entry:
        """The entry that goes first: lru is release order (the dict's order); by keys is
        ascending keys, then release order."""
        pd = self.t.pools[p.decl]
        if pd.evict_keys is None:
            for e in p.entries.values():
                if e.sid != protect:
                    return e
            raise RuntimeError("evict: no cache left")  # pragma: no cover - callers check
        best: tuple[tuple[Number, ...], int] | None = None
        chosen: Entry | None = None
        for e in p.entries.values():
            if e.sid == protect:
                continue
            k = (self.entry_keys(p, e), e.order)
            if best is None or k < best:
                best, chosen = k, e
        if chosen is None:  # pragma: no cover - callers check available() first
            raise RuntimeError("evict: no cache left")
        return chosen

    def evict(self, p: PoolState, nblocks: int, protect: int | None) -> None:
        """Evict `nblocks` blocks of cache, entries in eviction order, each from its tail."""
        pd = self.t.pools[p.decl]
        s = self.s
        if self.lean and pd.evict_keys is None and pd.spill_when is None and p.nblocks is not None:
            self.evict_lean(p, nblocks, protect)
            return
        while nblocks > 0:
            e = self.next_to_evict(p, protect)
            take = min(nblocks, e.nblocks)
            gone = e.phys[len(e.phys) - take :] if p.nblocks is not None else []
            del e.phys[len(e.phys) - take :]
            units_before = e.units
            e.nblocks -= take
            e.units = min(e.units, e.nblocks * p.block)
            units = units_before - e.units
            p.cached -= take
            p.free.extend(reversed(gone))
            if e.nblocks == 0:
                del p.entries[e.sid]
            nblocks -= take
            s.counters["evictions"] += 1
            s.counters["evicted_units"] += units
            sess = s.live.get(e.sid)
            name = sess.name if sess is not None else self.sid_name(e.sid)
            left = e.units
            self.emit(
                "evict",
                lambda: (
                    f"evicted {units} units of {name}'s cached prefix from {p.label} "
                    f"({'tail first' if left else 'the whole entry'}; {left} left) to make room"
                ),
                session=sess,
                pool=p,
                name=name,
                units=units,
                blocks=tuple(gone),
                data=(("entry", name), ("left", left)),
                span=self.t.pools[p.decl].ir.span,
            )
            if pd.spill_when is not None:
                self.maybe_spill(p, e, units, name)

    def evict_lean(self, p: PoolState, nblocks: int, protect: int | None) -> None:
        """`evict` for lru without spill when no event is recorded or checked: the same
        state changes, counted, with nothing to describe (the fast headless runs)."""
        s = self.s
        counters = s.counters
        entries = p.entries
        free = p.free
        block = p.block
        while nblocks > 0:
            for e in entries.values():
                if e.sid != protect:
                    break
            else:  # pragma: no cover - callers check available() first
                raise RuntimeError("evict: no cache left")
            take = nblocks if nblocks < e.nblocks else e.nblocks
            phys = e.phys
            cut = len(phys) - take
            free.extend(reversed(phys[cut:]))  # tail first, as block-by-block eviction
            del phys[cut:]
            before = e.units
            e.nblocks -= take
            cap = e.nblocks * block
            if e.units > cap:
                e.units = cap
            p.cached -= take
            if e.nblocks == 0:
                del entries[e.sid]
            nblocks -= take
            counters["evictions"] += 1
            counters["evicted_units"] += before - e.units
            s.n_events += 1

    def sid_by_name(self, name: str) -> tuple[int | None, str | None]:
        cls, _, rest = name.partition("[")
        for sd in self.t.sessions:
            if sd.ir.name == cls:
                index = int(rest[:-1]) if rest else 0
                return sd.sid_base + index, cls
        return None, None

    def sid_name(self, sid: int) -> str:
        for sd in self.t.sessions:
            if sd.sid_base <= sid < sd.sid_base + sd.ir.count:
                i = sid - sd.sid_base
                return f"{sd.ir.name}[{i}]" if (sd.ir.family or sd.ir.source) else sd.ir.name
        return f"session {sid}"  # pragma: no cover

    def add_entry(
        self,
        p: PoolState,
        sid: int,
        units: int,
        nblocks: int,
        phys: list[int],
        attrs: dict[str, Number],
    ) -> Entry:
        old = p.entries.pop(sid, None)
        if old is not None:  # a newer release of the same session replaces it
            p.cached -= old.nblocks
            p.free.extend(reversed(old.phys))
        e = Entry(sid, units, nblocks, phys, self.s.now)
        e.order = p.next_order
        p.next_order += 1
        e.attrs = attrs
        live = self.s.live.get(sid)
        e.serial = live.serial if live is not None else (old.serial if old is not None else 0)
        p.entries[sid] = e
        p.cached += nblocks
        return e

    # ------------------------------------------------------------------ spill
    def maybe_spill(self, p: PoolState, e: Entry, units: int, name: str) -> None:
        pd = self.t.pools[p.decl]
        assert pd.spill_when is not None and pd.spill_work is not None
        spill = pd.ir.spill
        assert spill is not None
        env = self.entry_env(p, e, units)
        if not pd.spill_when(env):
            return
        work = pd.spill_work(env)
        if work < 0:
            raise SpecRuntimeError(f"spill work is {fmt(work)}, which is negative", spill.span)
        tier = pd.spill_tier[p.member]
        link = pd.spill_link[p.member]
        assert tier is not None and link is not None
        tier_n = self.pool_base[tier[0]] + tier[1]
        link_n = self.stage_base[link[0]] + link[1]
        job = Job("spill", link_n, e.sid, work)
        job.units = units
        job.tier = tier_n
        job.source = self.s.pools.index(p)
        sess = self.s.live.get(e.sid)
        job.attrs = dict(sess.attrs) if sess is not None else dict(e.attrs)
        lk = self.s.stages[link_n]
        self.s.counters["spills"] += 1
        self.emit(
            "spill",
            lambda: (
                f"spilling {units} units of {name}'s prefix from {p.label} to "
                f"{self.s.pools[tier_n].label} over {lk.label} ({fmt(work)} work)"
            ),
            session=sess,
            pool=p,
            stage=lk,
            name=name,
            units=units,
            span=spill.span,
            data=(("tier", self.s.pools[tier_n].label), ("work", normal(work))),
        )
        self.submit(lk, job)

    def land_spill(self, job: Job) -> None:
        s = self.s
        tier = s.pools[job.tier]
        sess = s.live.get(job.sid)
        name = sess.name if sess is not None else self.sid_name(job.sid)
        # An entry is whole blocks of computed prefix: a part of a tier block is not kept.
        units = (job.units // tier.block) * tier.block
        n = self.nb(tier, units)
        if n == 0 or n > self.available(tier, protect=job.sid):
            s.counters["drops"] += 1
            self.emit(
                "spill-drop",
                lambda: (
                    f"dropped {job.units} units of {name}'s prefix: less than one block of "
                    f"{tier.label}"
                    if n == 0
                    else f"dropped {units} units of {name}'s prefix: {tier.label} cannot hold "
                    f"them even after evicting all its cache "
                    f"({self.available(tier, job.sid)} blocks could be had, {n} needed)"
                ),
                session=sess,
                pool=tier,
                name=name,
                units=units,
                span=self.t.pools[tier.decl].ir.span,
            )
            return
        phys = self.take_blocks(tier, n, protect=job.sid)
        tier.allocated -= n  # the blocks are cache, not a hold
        old = tier.entries.pop(job.sid, None)
        if old is not None:
            tier.cached -= old.nblocks
            phys = old.phys + phys
            units += old.units
            n += old.nblocks
        e = self.add_entry(tier, job.sid, units, n, phys, job.attrs)
        e.spilled = True
        self.emit(
            "spilled",
            lambda: f"{name}'s prefix landed in {tier.label}: its entry there is now {units} units",
            session=sess,
            pool=tier,
            name=name,
            units=units,
            blocks=tuple(phys),
            span=self.t.pools[tier.decl].ir.span,
        )

    # ------------------------------------------------------------------ links
    def submit(self, lk: StageState, job: Job) -> None:
        if len(lk.jobs) < lk.lanes:
            self.start_job(lk, job)
        else:
            lk.waiting_jobs.append(job)

    def start_job(self, lk: StageState, job: Job) -> None:
        now = self.s.now
        job.start = now
        job.end = now + job.work / lk.rate
        lk.jobs.append(job)
        self.push(job.end, P_LINK, self.s.stages.index(lk), "link", self.s.stages.index(lk), job)

    def finish_job(self, lk: StageState, job: Job) -> None:
        lk.jobs.remove(job)
        if lk.waiting_jobs:
            self.start_job(lk, lk.waiting_jobs.pop(0))
        if job.kind == "spill":
            self.land_spill(job)
        else:
            sess = self.s.live.get(job.sid)
            if sess is not None:
                self.wake(sess)

    def send(self, sess: Session, stmt: Send) -> None:
        decl = self.t.stage_index[stmt.link.name]
        count = self.t.stages[decl].ir.count
        lk = self.s.stages[self.stage_base[decl] + self.member_index(stmt.link, count, sess)]
        work = self.value_of(stmt.work, sess, self.innermost(sess))
        if work < 0 or math.isnan(work):
            raise SpecRuntimeError(f"send work is {fmt(work)}, which is negative", stmt.span)
        job = Job("send", self.s.stages.index(lk), sess.sid, work)
        sess.state = S_SENDING
        sess.waiting_for = f"sending on {lk.label}"
        self.emit(
            "send",
            lambda: (f"{sess.name} sends {fmt(work)} work over {lk.label}"
            + (f" (queued behind {len(lk.waiting_jobs) + len(lk.jobs) - lk.lanes + 1})"
               if len(lk.jobs) >= lk.lanes else "")),
            session=sess,
            stage=lk,
            span=stmt.span,
            data=(("work", normal(work)),),
        )  # fmt: skip
        self.submit(lk, job)

    # ------------------------------------------------------------------ holds: queue
    def enqueue(self, sess: Session, stmt: Hold, where: tuple[int, int]) -> None:
        s = self.s
        p = self.pool_member(stmt.pool, sess)
        h = HoldState(s.next_hold, sess.sid, s.pools.index(p), where)
        s.next_hold += 1
        h.enq_time = s.now
        h.enq_seq = s.next_enq
        s.next_enq += 1
        h.queued = True
        sess.holds.append(h)
        sess.state = S_QUEUED
        sess.waiting_for = f"queued on {p.label}"
        p.queue.append(h)
        self.emit(
            "enqueue",
            lambda: f"{sess.name} waits for {p.label} ({len(p.queue)} waiting)",
            session=sess,
            pool=p,
            span=stmt.span,
            data=(("preempted", False),),
        )
        # A hold that can never fit is rejected at once (Pool reference).
        plan = self.plan_hold(p, h, sess, None)
        h.computed = 0
        if plan is not None and plan[4] is not None:
            self.reject(sess, h, p, plan[4], plan[0])

    def hold_stmt(self, h: HoldState) -> Hold:
        stmt = self.t.bodies[h.stmt[0]][h.stmt[1]]
        assert isinstance(stmt, Hold)
        return stmt

    def plan_hold(
        self, p: PoolState, h: HoldState, sess: Session, st: StageState | None
    ) -> tuple[int, int, int, int, str | None] | None:
        """(size, hit, need, extra tokens' size, never-fit reason) for an attempt now."""
        stmt = self.hold_stmt(h)
        entry = p.entries.get(sess.sid)
        e_units = entry.units if entry is not None else 0
        h.computed = e_units
        size = self.units(self.value_of(stmt.units, sess, h), stmt.span, "the hold's units")
        hit = min(e_units, (max(size, h.context) // p.block) * p.block)
        if hit < e_units:
            h.computed = hit
            size = self.units(self.value_of(stmt.units, sess, h), stmt.span, "the hold's units")
        size = max(size, hit)  # a hold holds at least its hit
        need = 0
        if stmt.need is not None:
            need = self.units(self.value_of(stmt.need, sess, h), stmt.need.span, "need")
        reserve: Number | None = None
        if stmt.reserve is not None:
            reserve = self.value_of(stmt.reserve, sess, h)
        h.reserve = reserve
        biggest = max(size, need, reserve if reserve is not None else 0)
        if biggest > p.cap:
            what = "units" if biggest == size else ("need" if biggest == need else "reserve")
            return (
                size,
                hit,
                need,
                size,
                f"its {what} ({fmt(biggest)}) is above the cap ({fmt(p.cap)})",
            )
        if reserve is not None and size > reserve:
            return (
                size,
                hit,
                need,
                size,
                f"its units ({size}) are above its reserve ({fmt(reserve)})",
            )
        return (size, hit, need, size, None)

    def select(self, p: PoolState) -> HoldState:
        """The next hold to try: a preempted one first, else by the queue policy."""
        q = p.queue
        head = q[0]
        pd = self.t.pools[p.decl]
        if head.preempted or pd.queue_keys is None:
            return head
        best: tuple[tuple[Number, ...], int] | None = None
        chosen = head
        for h in q:
            k = (self.queue_keys(p, h), h.enq_seq)
            if best is None or k < best:
                best, chosen = k, h
        return chosen

    def queue_keys(self, p: PoolState, h: HoldState) -> tuple[Number, ...]:
        pd = self.t.pools[p.decl]
        if pd.queue_keys is None:
            return ()
        sess = self.s.live[h.sid]
        env = self.env.bind(sess, h, self.s.now)
        env.session = None  # queue keys may not draw
        env.waited = self.s.now - h.enq_time
        env.waiting = len(p.queue)
        return tuple(f(env) for f in pd.queue_keys)

    def admit_loop(self, p: PoolState, st: StageState | None) -> bool:
        """Admit from p's queue head of line until the selected hold does not fit."""
        moved = False
        while p.queue:
            if st is not None and (st.budget_left <= 0 or len(st.residents) >= st.seats):
                break
            h = self.select(p)
            r = self.try_admit(p, h, st)
            if r == BLOCKED:
                break
            moved = True
        return moved

    def first_run_tokens(
        self, h: HoldState, sess: Session, st: StageState, p: PoolState
    ) -> int | None:
        """Tokens the hold's first run on `st` would take now (None: it would wait)."""
        if sess.run is not None and self.hold_frame(sess, h) is not None:
            if self.s.stages[sess.run.stage] is not st:
                return 0
            kind, target, steps_left = (
                sess.run.kind,
                sess.run.target,
                sess.run.target - sess.run.steps,
            )
        else:
            stmt = self.hold_stmt(h)
            if not stmt.body or not isinstance(stmt.body[0], Run):
                return 0
            run = stmt.body[0]
            if self.stage_of_run(run, sess, p) is not st:
                return 0
            kind = run.kind
            what = "the prefill" if kind == "prefill" else "the decode steps"
            target = self.units(self.value_of(run.amount, sess, h), run.span, what)
            steps_left = target
        if kind == "prefill":
            want = target - h.computed
            if want <= 0:
                return 0
            take = min(want, st.budget_left)
            if st.whole and take < want:
                return None
            return int(take)
        if steps_left <= 0:
            return 0
        want = h.context - h.computed + 1
        if want <= st.budget_left:
            return want
        return None if st.whole else int(st.budget_left)

    def try_admit(self, p: PoolState, h: HoldState, st: StageState | None) -> int:
        s = self.s
        sess = s.live[h.sid]
        plan = self.plan_hold(p, h, sess, st)
        assert plan is not None
        size, hit, need, _, never = plan
        if never is not None:
            self.reject(sess, h, p, never, size)
            return REJECTED
        grown = size
        if st is not None:
            tokens = self.first_run_tokens(h, sess, st, p)
            if tokens is None:
                h.computed = 0
                return BLOCKED
            grown = max(size, h.computed + tokens)
        entry = p.entries.get(sess.sid)
        hit_blocks = hit // p.block
        # Its own entry counts as available: the hit part is used, the rest is freed.
        avail = self.available(p) - hit_blocks
        if self.nb(p, grown) - hit_blocks > avail or self.nb(p, need) - hit_blocks > avail:
            h.computed = 0
            return BLOCKED
        # Admit. First the part of its own entry past the hit is freed, then new blocks
        # are found (evicting other entries), and only then does the hold leave the queue.
        hit_phys: list[int] = []
        if entry is not None:
            hit_phys = entry.phys[:hit_blocks]
            rest = entry.phys[hit_blocks:]
            if entry.nblocks > hit_blocks:
                left = entry.units - hit
                p.cached -= entry.nblocks - hit_blocks
                del entry.phys[hit_blocks:]
                entry.nblocks = hit_blocks
                entry.units = hit
                p.free.extend(reversed(rest))
                self.s.counters["evictions"] += 1
                self.emit(
                    "evict",
                    lambda: (
                        f"freed {left} units of {sess.name}'s own cached prefix in {p.label}: "
                        f"past its hit of {hit}"
                    ),
                    session=sess,
                    pool=p,
                    units=left,
                    blocks=tuple(rest),
                    data=(("entry", sess.name), ("left", hit)),
                    span=self.t.pools[p.decl].ir.span,
                )
        new_blocks = self.nb(p, size) - hit_blocks
        new_phys = self.take_blocks(p, new_blocks, protect=sess.sid)
        p.queue.remove(h)
        h.queued = False
        if entry is not None:
            del p.entries[sess.sid]
            p.cached -= hit_blocks
            p.allocated += hit_blocks
        phys = hit_phys + new_phys
        h.computed = hit
        h.phys = phys
        h.size = size
        h.nblocks = self.nb(p, size)
        h.admit_order = s.next_admit
        s.next_admit += 1
        h.admitted_at = s.now
        was_preempted = h.preempted
        h.preempted = False
        self.stats.queueing[sess.cls].append(s.now - h.enq_time)
        s.hit_units[0] += hit
        s.hit_units[1] += max(size, hit)
        sess.waiting_for = ""
        frame = self.hold_frame(sess, h)
        if frame is None:
            # The parent frame stays at the `hold` until the hold is released.
            body = self.hold_stmt(h).body
            sess.frames.append([F_HOLD, self.t.body_of[id(body)], 0, h])
        self.emit(
            "admit",
            lambda: (
                f"admitted {sess.name} to {p.label}: {size} units"
                + (f", {hit} from its cached prefix" if hit else "")
                + (" (re-admitted after preemption)" if was_preempted else "")
                + (f"; {st.label} has {fmt(st.budget_left)} tokens of budget left" if st else "")
            ),
            session=sess,
            pool=p,
            stage=st,
            units=size,
            blocks=tuple(phys),
            span=self.hold_stmt(h).span,
            data=(("hit", hit), ("stage", st.label if st is not None else None)),
        )
        if frame is not None and sess.run is not None:
            # Re-admitted after preemption: resume the run it was in.
            self.resume_run(sess)
        else:
            self.proceed(sess)
        return ADMITTED

    def hold_frame(self, sess: Session, h: HoldState) -> list[Any] | None:
        for f in sess.frames:
            if f[0] == F_HOLD and f[3] is h:
                return f
        return None

    def reject(
        self, sess: Session, h: HoldState, p: PoolState, reason: str, units: int | None = None
    ) -> None:
        if h.queued:
            p.queue.remove(h)
            h.queued = False
        self.emit(
            "reject",
            lambda: f"rejected {sess.name} on {p.label}: {reason}, so it can never fit",
            session=sess,
            pool=p,
            units=units if units is not None else (h.size or None),
            span=self.hold_stmt(h).span,
            data=(("reason", reason),),
        )
        self.end_session(sess, "rejected")

    def drop_hold(self, sess: Session, h: HoldState) -> None:
        """Free a hold without caching (its session was rejected)."""
        p = self.s.pools[h.pool]
        if h.queued:
            p.queue.remove(h)
            h.queued = False
        if h.nblocks:
            self.give_back(p, h.phys, h.nblocks)
        h.phys = []
        h.nblocks = 0
        h.size = 0
        if h in sess.holds:
            sess.holds.remove(h)
        if sess.run is not None and sess.run.hold == h.key:
            self.leave_stage(sess)

    def let_go(self, sess: Session, h: HoldState) -> tuple[int, list[int]]:
        """Free a hold, keeping its computed prefix in whole blocks as the session's cache
        entry (a release, or a preemption). Returns (units cached, their blocks)."""
        p = self.s.pools[h.pool]
        keep = h.computed // p.block
        cached_units = keep * p.block
        kept = h.phys[:keep] if p.nblocks is not None else []
        p.allocated -= keep
        self.give_back(p, h.phys[keep:], h.nblocks - keep)
        if keep:
            self.add_entry(p, sess.sid, cached_units, keep, kept, dict(sess.attrs))
        h.phys = []
        h.nblocks = 0
        h.size = 0
        return cached_units, kept

    def release(self, sess: Session, h: HoldState) -> None:
        p = self.s.pools[h.pool]
        size = h.size
        cached_units, kept = self.let_go(sess, h)
        keep = len(kept) or cached_units
        sess.holds.remove(h)
        self.emit(
            "release",
            lambda: (
                f"{sess.name} released {size} units of {p.label}"
                + (f"; {cached_units} stay cached as its prefix" if keep else "")
            ),
            session=sess,
            pool=p,
            units=size,
            blocks=tuple(kept),
            span=self.hold_stmt(h).span,
            data=(("cached", cached_units),),
        )

    # ------------------------------------------------------------------ grow
    def grow_to(
        self, sess: Session, h: HoldState, new_size: int, span: Span, st: StageState | None
    ) -> str:
        """Grow h to new_size units. 'ok', 'wait' (no room), 'self' (preempted itself),
        'rejected'. With preempt lifo, preempts residents of the pool's stage."""
        p = self.s.pools[h.pool]
        if new_size <= h.size:
            return "ok"
        if new_size > p.cap or (h.reserve is not None and new_size > h.reserve):
            limit = "cap" if new_size > p.cap else "reserve"
            lim = p.cap if limit == "cap" else h.reserve
            assert lim is not None
            self.reject(
                sess,
                h,
                p,
                f"growing to {new_size} units would pass its {limit} ({fmt(lim)})",
                new_size,
            )
            return "rejected"
        need = self.nb(p, new_size) - h.nblocks
        pd = self.t.pools[p.decl]
        while need > self.available(p):
            if pd.ir.preempt != "lifo" or p.stage is None:
                break
            victim = self.lifo_victim(p)
            if victim is None:
                break
            self.preempt(victim, sess, p, need)
            if victim is h:
                return "self"
        if need > self.available(p):
            if sess.state != S_GROW_WAIT and (sess.run is None or sess.run.phase != "grow-wait"):
                self.emit(
                    "grow-wait",
                    lambda: (
                        f"{sess.name} waits to grow to {new_size} units: {p.label} has no room "
                        f"({len(p.free) if p.nblocks is not None else 'inf'} free, {p.cached} cached blocks; "
                        f"{need} needed)"
                    ),
                    session=sess,
                    pool=p,
                    units=new_size,
                    span=span,
                )
            return "wait"
        added = self.take_blocks(p, need, protect=None)
        h.phys.extend(added)
        h.nblocks += need
        h.size = new_size
        if need or p.block == 1:
            self.emit(
                "grow",
                lambda: (
                    f"{sess.name}'s hold on {p.label} grew to {new_size} units"
                    + (f" (+{need} block{'s' if need != 1 else ''})" if p.block > 1 else "")
                ),
                session=sess,
                pool=p,
                units=new_size,
                blocks=tuple(added),
                span=span,
                data=(("added_blocks", need),),
            )
        return "ok"

    def lifo_victim(self, p: PoolState) -> HoldState | None:
        """The most recently admitted hold on p whose session is a resident of p's stage."""
        assert p.stage is not None
        st = self.s.stages[p.stage]
        pi = self.s.pools.index(p)
        best: HoldState | None = None
        for sid in st.residents:
            sess = self.s.live[sid]
            for h in sess.holds:
                if (
                    h.pool == pi
                    and not h.queued
                    and (best is None or h.admit_order > best.admit_order)
                ):
                    best = h
        return best

    def preempt(self, h: HoldState, grower: Session, p: PoolState, need: int) -> None:
        s = self.s
        victim = s.live[h.sid]
        st = s.stages[p.stage] if p.stage is not None else None
        free_before, cached_before = len(p.free), p.cached
        if victim.run is not None and st is not None:
            if victim.sid in st.scheduled:  # its tokens this iteration are given back
                st.scheduled.remove(victim.sid)
                st.budget_left += victim.run.tokens
            victim.run.tokens = 0
            victim.run.phase = "waiting"
            if victim.sid in st.residents:
                st.residents.remove(victim.sid)
        cached_units, kept = self.let_go(victim, h)
        h.computed = 0
        h.preempted = True
        victim.state = S_QUEUED
        victim.waiting_for = f"queued on {p.label} (preempted)"
        s.counters["preemptions"] += 1
        if st is not None:
            st.preempted = True
        who = (
            f"{victim.name} is the most recently admitted resident of {st.label}"
            if st is not None
            else f"{victim.name} is the most recently admitted holder"
        )
        self.emit(
            "preempt",
            lambda: (
                f"preempted {victim.name}: {p.label} had no room for "
                f"{'its own' if victim is grower else grower.name + chr(39) + 's'} next "
                f"{'block' if need == 1 else f'{need} blocks'} ({free_before} free, {cached_before} cached); "
                f"{who}; {cached_units} units stay cached"
            ),
            session=victim,
            pool=p,
            stage=st,
            others=(grower.name,),
            units=cached_units,
            blocks=tuple(kept),
            span=self.hold_stmt(h).span,
            data=(("cached", cached_units), ("grower", grower.name)),
        )
        # It re-enters the head of the queue, ahead of policy keys (Pool reference).
        h.queued = True
        h.enq_time = s.now
        h.enq_seq = s.next_enq
        s.next_enq += 1
        p.queue.insert(0, h)
        self.emit(
            "enqueue",
            lambda: (
                f"{victim.name} re-enters the head of {p.label}'s queue to execute its hold again"
            ),
            session=victim,
            pool=p,
            span=self.hold_stmt(h).span,
            data=(("preempted", True),),
        )

    def grow_stmt(self, sess: Session, stmt: Grow) -> bool:
        """`grow POOL (N)`: True when done, False when the session waits."""
        h = next(
            (x for x in reversed(sess.holds)
             if self.t.pools[self.s.pools[x.pool].decl].ir.name == stmt.pool),
            None,
        )  # fmt: skip
        if h is None:
            raise SpecRuntimeError(f"grow {stmt.pool}: the session holds no {stmt.pool}", stmt.span)
        n = self.units(self.value_of(stmt.amount, sess, h), stmt.span, "the growth")
        r = self.grow_to(sess, h, h.size + n, stmt.span, None)
        if r == "ok":
            if sess.state == S_GROW_WAIT:
                sess.state = S_ACTIVE
                p = self.s.pools[h.pool]
                if sess.sid in p.waiting_grows:
                    p.waiting_grows.remove(sess.sid)
            return True
        if r == "wait":
            p = self.s.pools[h.pool]
            sess.state = S_GROW_WAIT
            sess.waiting_for = f"waiting to grow on {p.label}"
            if sess.sid not in p.waiting_grows:
                p.waiting_grows.append(sess.sid)
        return False

    def retry_grows(self, p: PoolState) -> bool:
        moved = False
        for sid in list(p.waiting_grows):
            sess = self.s.live.get(sid)
            if sess is None:
                p.waiting_grows.remove(sid)
                continue
            stmt = self.current_stmt(sess)
            if not isinstance(stmt, Grow):  # pragma: no cover
                p.waiting_grows.remove(sid)
                continue
            if self.grow_stmt(sess, stmt):
                moved = True
                sess.frames[-1][2] += 1
                self.proceed(sess)
        return moved

    # ------------------------------------------------------------------ runs
    def stage_of_run(self, run: Run, sess: Session, hold_pool: PoolState | None) -> StageState:
        decl = self.t.stage_index[run.stage.name]
        count = self.t.stages[decl].ir.count
        if run.stage.index is None and count > 1 and hold_pool is not None:
            # A run on a pool family member uses the stage member it is joined with.
            pdecl = self.t.pools[hold_pool.decl]
            m = hold_pool.member if pdecl.ir.count > 1 else 0
            return self.s.stages[self.stage_base[decl] + m]
        return self.s.stages[self.stage_base[decl] + self.member_index(run.stage, count, sess)]

    def run_hold(self, sess: Session, st: StageState) -> HoldState:
        """The innermost hold whose pool is the stage's memory, else the innermost hold."""
        stage_n = self.s.stages.index(st)
        for h in reversed(sess.holds):
            if self.s.pools[h.pool].stage == stage_n:
                return h
        return sess.holds[-1]

    def start_run(self, sess: Session, stmt: Run) -> bool:
        """Begin a run. True when the session is now a resident (blocked)."""
        if not sess.holds:
            raise SpecRuntimeError("run outside a hold", stmt.span)
        inner = sess.holds[-1]
        st = self.stage_of_run(stmt, sess, self.s.pools[inner.pool])
        h = self.run_hold(sess, st)
        amount = self.value_of(stmt.amount, sess, h)
        what = "the prefill" if stmt.kind == "prefill" else "the decode steps"
        n = self.units(amount, stmt.span, what)
        # What is computed is context (a prefill whose prompt is all hit has nothing to do,
        # but its context still reaches what it computed).
        h.context = max(h.context, h.computed)
        if (stmt.kind == "prefill" and h.computed >= n) or (stmt.kind == "decode" and n == 0):
            return False
        sess.run = RunState(self.s.stages.index(st), stmt.kind, n, h)
        self.join_stage(sess, st)
        return True

    def join_stage(self, sess: Session, st: StageState) -> None:
        assert sess.run is not None
        order = self.resident_order(sess.sid)
        i = len(st.residents)
        while i > 0 and self.resident_order(st.residents[i - 1]) > order:
            i -= 1
        st.residents.insert(i, sess.sid)
        sess.state = S_RESIDENT
        sess.waiting_for = ""
        sess.run.phase = "waiting"
        sess.run.tokens = 0
        if st.planning:  # admitted during this stage's admission: takes its tokens now
            self.serve(st, sess)

    def resume_run(self, sess: Session) -> None:
        run = sess.run
        assert run is not None
        h = run.h
        if (run.kind == "prefill" and h.computed >= run.target) or (
            run.kind == "decode" and run.steps >= run.target
        ):
            # Its run had finished when it was preempted: go on past it.
            sess.run = None
            sess.frames[-1][2] += 1
            self.proceed(sess)
            return
        self.join_stage(sess, self.s.stages[run.stage])

    def leave_stage(self, sess: Session) -> None:
        if sess.run is None:
            return
        st = self.s.stages[sess.run.stage]
        if sess.sid in st.residents:
            st.residents.remove(sess.sid)
        if sess.sid in st.scheduled:
            st.scheduled.remove(sess.sid)
        sess.run = None

    def resident_order(self, sid: int) -> int:
        sess = self.s.live[sid]
        assert sess.run is not None
        return sess.run.h.admit_order

    def plan_tokens(self, st: StageState, run: RunState, h: HoldState) -> tuple[int, bool, str]:
        """(tokens, whole step, phase) the run would take now."""
        left = st.budget_left
        if run.kind == "prefill":
            want = run.target - h.computed
            if want <= 0 or left <= 0:
                return 0, False, "prefill"
            take = min(want, left)
            if st.whole and take < want:
                return 0, False, "prefill"
            return int(take), False, "prefill"
        want = h.context - h.computed + 1
        phase = "recompute" if want > 1 else "decode"
        if left <= 0:
            return 0, False, phase
        if want <= left:
            return want, True, phase
        if st.whole:
            return 0, False, "recompute"
        return int(left), False, "recompute"

    def serve(self, st: StageState, sess: Session) -> str:
        """Plan a resident's tokens for this iteration. 'ok', 'skip', 'self' (it preempted
        itself: the residents' loop stops), 'gone' (rejected or preempted)."""
        run = sess.run
        assert run is not None
        h = run.h
        take, full, phase = self.plan_tokens(st, run, h)
        if take <= 0:
            return "skip"
        stmt = self.current_stmt(sess)
        span = stmt.span if stmt is not None else None
        r = self.grow_to(sess, h, h.computed + take, span or self.hold_stmt(h).span, st)
        if r == "self":
            return "self"
        if r == "rejected":
            return "gone"
        if r == "wait":
            run.phase = "grow-wait"
            return "skip"
        run.tokens = take
        run.full = full
        if st.exclusive and phase == "decode" and sess.sid == self.admitting:
            # Under exclusive prefill a (re-)admitted hold's first step is its prefill,
            # even when its hit covers all it had computed (nano-vllm re-prefills it).
            phase = "recompute"
        run.phase = phase
        st.budget_left -= take
        st.scheduled.append(sess.sid)
        return "ok"

    # ------------------------------------------------------------------ iterations
    def start_iteration(self, st: StageState) -> bool:
        """Plan and start one iteration of a step stage. False when it would do nothing."""
        s = self.s
        waiting = any(s.pools[pi].queue for pi in st.memory)
        if not st.residents and not waiting:
            return False
        st.planning = True
        st.budget_left = st.budget
        st.preempted = False
        st.scheduled = []
        admitted: list[str] = []
        n0 = s.n_events
        preempts0 = s.counters["preemptions"]
        try:
            if st.exclusive:
                # Prefill first (nano-vllm / v0): resident prefills, then admission as if
                # no decode ran; decodes only in an iteration that prefilled nothing.
                self.serve_residents(st, self.is_prefill)
                if not st.preempted:
                    admitted = self.admit_in_iteration(st)
                if not st.scheduled:
                    self.serve_residents(st, lambda sess: True)
            else:
                self.serve_residents(st, lambda sess: True)
                if not st.preempted:
                    admitted = self.admit_in_iteration(st)
        finally:
            st.planning = False
        preempted = s.counters["preemptions"] > preempts0
        return self.launch_iteration(st, admitted, preempted, n0)

    def launch_iteration(
        self,
        st: StageState,
        admitted: list[str],
        preempted: bool,
        n0: int,
        steady: int = 0,
        fused: int = 1,
    ) -> bool:
        """Start the planned iteration: its time, its end on the heap, its event.
        `steady` decodes were planned in bulk (fast mode); `fused` iterations of equal
        length run back to back as one (fast mode)."""
        s = self.s
        tokens = sum(self.planned(sid) for sid in st.scheduled) + steady
        if tokens == 0 and not admitted and not preempted:
            # Nothing moved: not an event; the stage sleeps until something changes.
            for sid in st.residents:
                r = s.live[sid].run
                if r is not None:
                    r.tokens = 0
            return s.n_events > n0
        st.iteration += 1
        s.counters["iterations"] += 1
        st.busy = True
        st.iter_start = s.now
        live = s.live
        runs = [live[sid].run for sid in st.scheduled]
        prefills = sum(1 for r in runs if r is not None and r.phase != "decode")
        decodes = len(runs) - prefills + steady
        duration = 0.0
        if tokens > 0:
            sd = self.t.stages[st.decl]
            if sd.time is None:
                duration = 1.0
            else:
                env = self.env.bind(None, None, s.now)
                env.tokens, env.residents = tokens, len(runs) + steady
                env.prefills, env.decodes = prefills, decodes
                duration = float(sd.time(env))
                if duration < 0 or math.isnan(duration) or math.isinf(duration):
                    assert sd.ir.time is not None
                    raise SpecRuntimeError(
                        f"the iteration time is {fmt(duration)}, not a duration", sd.ir.time.span
                    )
        st.iter_end = self.iteration_end(st, duration, fused)
        index = s.stages.index(st)
        self.push(st.iter_end, P_ITER_END, index, "end", index)
        if "iteration" in self.quiet:
            return True
        used = st.budget - st.budget_left if not math.isinf(st.budget) else tokens
        sched = [(live[sid].name, r.phase, r.tokens) for sid, r in zip(st.scheduled, runs, strict=True)
                 if r is not None]  # fmt: skip
        self.emit(
            "iteration",
            lambda: (
                f"{st.label} iteration {st.iteration}: {len(sched)} resident"
                f"{'s' if len(sched) != 1 else ''} take {tokens} tokens"
                + (f" of {fmt(st.budget)}" if not math.isinf(st.budget) else "")
                + (f" ({prefills} prefill, {decodes} decode)" if sched else "")
                + (f"; admitted {', '.join(admitted)}" if admitted else "")
                + ("; preempted, so no admission" if preempted else "")
                + f"; lasts {fmt_t(duration)}"
            ),
            stage=st,
            units=tokens,
            span=self.t.stages[st.decl].ir.span,
            data=(
                ("iteration", st.iteration),
                ("tokens", tokens),
                ("budget_used", normal(used)),
                ("budget_left", normal(st.budget_left)),
                ("scheduled", tuple(sched)),
                ("admitted", tuple(admitted)),
                ("preempted", preempted),
                ("duration", duration),
            ),
        )
        return True

    def iteration_end(self, st: StageState, duration: float, fused: int) -> float:
        """When the iteration just planned ends (fast mode may run several as one)."""
        return self.s.now + duration

    def planned(self, sid: int) -> int:
        run = self.s.live[sid].run
        return run.tokens if run is not None else 0

    def is_prefill(self, sess: Session) -> bool:
        run = sess.run
        assert run is not None
        if run.kind == "prefill":
            return True
        h = run.h
        return h.context > h.computed  # a recompute is a prefill

    def serve_residents(self, st: StageState, which: Callable[[Session], bool]) -> None:
        for sid in list(st.residents):
            if st.budget_left <= 0:
                break
            sess = self.s.live.get(sid)
            if sess is None or sess.run is None or sid not in st.residents or sid in st.scheduled:
                continue
            if not which(sess):
                continue
            if self.serve(st, sess) == "self":
                break

    def admit_in_iteration(self, st: StageState) -> list[str]:
        s = self.s
        admitted: list[str] = []
        for pi in st.memory:
            p = s.pools[pi]
            while p.queue and st.budget_left > 0 and len(st.residents) < st.seats:
                h = self.select(p)
                name = s.live[h.sid].name
                self.admitting = h.sid
                try:
                    r = self.try_admit(p, h, st)
                finally:
                    self.admitting = -1
                if r == BLOCKED:
                    break
                if r == ADMITTED:
                    admitted.append(name)
        return admitted

    def end_iteration(self, st: StageState) -> None:
        st.busy = False
        tokens, done = self.apply_tokens(st)
        self.emit(
            "iteration-end",
            lambda: (
                f"{st.label} iteration {st.iteration} ended: {tokens} tokens computed"
                + (f"; {len(done)} run{'s' if len(done) != 1 else ''} done" if done else "")
            ),
            stage=st,
            units=tokens,
            data=(("iteration", st.iteration), ("tokens", tokens)),
            span=self.t.stages[st.decl].ir.span,
        )
        self.finish_runs(st, done)

    def apply_tokens(self, st: StageState) -> tuple[int, list[Session]]:
        """Each scheduled run adds the tokens it took to its hold's computed prefix."""
        s = self.s
        done: list[Session] = []
        tokens = 0
        for sid in st.scheduled:
            sess = s.live.get(sid)
            if sess is None or sess.run is None:
                continue
            run = sess.run
            h = run.h
            tokens += run.tokens
            h.computed += run.tokens
            if run.kind == "prefill":
                h.context = max(h.context, h.computed)
                if h.computed >= run.target:
                    done.append(sess)
            elif run.full:
                h.context += 1
                run.steps += 1
                if run.steps >= run.target:
                    done.append(sess)
            if sess.first_token is None and (run.full or (run.kind == "prefill" and sess in done)):
                # vLLM samples the first token in the prefill's last step.
                sess.first_token = s.now
                self.stats.ttft[sess.cls].append(s.now - sess.arrived)
            run.tokens = 0
            run.full = False
            run.phase = "waiting"
        st.scheduled = []
        return tokens, done

    def finish_runs(self, st: StageState, done: list[Session]) -> None:
        """Finished runs leave the stage (all of them first: none is a resident any more,
        so none can be preempted by another's next statement); then, in resident order,
        each one's `run-done` and whatever its session does next."""
        s = self.s
        left: list[tuple[Session, str]] = []
        for sess in done:
            if sess.sid not in s.live or sess.state != S_RESIDENT or sess.run is None:
                continue  # rejected meanwhile
            left.append((sess, sess.run.kind))
            self.leave_stage(sess)
        for sess, kind in left:
            if sess.sid not in s.live:
                continue
            stmt = self.current_stmt(sess)
            self.emit(
                "run-done",
                lambda: f"{sess.name} finished its {kind} on {st.label}",
                session=sess,
                stage=st,
                span=stmt.span if stmt is not None else None,
                data=(("kind", kind),),
            )
            sess.frames[-1][2] += 1
            self.proceed(sess)

    # ------------------------------------------------------------------ deadlock
    def deadlock(self) -> None:
        s = self.s
        waits = []
        for sess in sorted(s.live.values(), key=lambda x: x.sid):
            waits.append((sess.name, self.waiting_for(sess)))
        s.halted = (
            "deadlock: "
            + "; ".join(f"{n} {w}" for n, w in waits[:5])
            + (f" (and {len(waits) - 5} more)" if len(waits) > 5 else "")
        )
        self.emit(
            "deadlock",
            lambda: (
                "nothing can ever move again: "
                + "; ".join(f"{n} {w}" for n, w in waits[:8])
                + (f"; and {len(waits) - 8} more" if len(waits) > 8 else "")
            ),
            others=tuple(n for n, _ in waits),
            data=(("waits", tuple(waits)),),
        )
        raise Halt()

    def waiting_for(self, sess: Session) -> str:
        s = self.s
        if sess.state == S_QUEUED:
            h = sess.holds[-1] if sess.holds else None
            for x in sess.holds:
                if x.queued:
                    h = x
            if h is not None:
                p = s.pools[h.pool]
                pos = p.queue.index(h) if h in p.queue else -1
                return (
                    f"waits in {p.label}'s queue (position {pos}; {len(p.free) if p.nblocks is not None else 'inf'} "
                    f"free and {p.cached} cached blocks)"
                )
        if sess.state == S_RESIDENT and sess.run is not None:
            st = s.stages[sess.run.stage]
            h = sess.run.h
            p = s.pools[h.pool]
            if sess.run.phase == "grow-wait":
                return f"waits to grow its hold on {p.label} (no room, nothing to preempt)"
            return (
                f"is a resident of {st.label} that cannot take its tokens "
                f"(budget {fmt(st.budget)}, {sess.run.kind} {sess.run.target})"
            )
        if sess.state == S_GROW_WAIT:
            return sess.waiting_for or "waits to grow"
        return sess.waiting_for or sess.state

    # ------------------------------------------------------------------ invariants
    def check_invariants(self) -> Violation | None:
        """language.md §8, after every event."""
        s = self.s
        for p in s.pools:
            if p.nblocks is not None and (p.allocated + p.cached) * p.block > p.cap:
                return Violation(
                    "capacity",
                    f"{p.label}: allocated + cached = {(p.allocated + p.cached) * p.block} "
                    f"units > cap {fmt(p.cap)}",
                    p.label,
                )
            if p.nblocks is not None and len(p.free) + p.allocated + p.cached != p.nblocks:
                return Violation(
                    "blocks",
                    f"{p.label}: {len(p.free)} free + {p.allocated} allocated + {p.cached} "
                    f"cached blocks ≠ {p.nblocks} blocks",
                    p.label,
                )
            cached = sum(e.nblocks for e in p.entries.values())
            if cached != p.cached:
                return Violation(
                    "cached",
                    f"{p.label}: cached is {p.cached} blocks but its entries hold {cached}",
                    p.label,
                    tuple(b for e in p.entries.values() for b in e.phys),
                )
            for e in p.entries.values():
                if e.units != e.nblocks * p.block:
                    return Violation(
                        "cached",
                        f"{p.label}: an entry of {e.units} units is not {e.nblocks} whole blocks",
                        p.label,
                        tuple(e.phys),
                    )
            seen = 0
            for h in p.queue:
                if h.preempted:
                    if seen:
                        return Violation(
                            "queue",
                            f"{p.label}: a preempted hold sits behind a policy-ordered one",
                            p.label,
                        )
                else:
                    seen += 1
        allocated = [0] * len(s.pools)
        for sess in s.live.values():
            for h in sess.holds:
                p = s.pools[h.pool]
                allocated[h.pool] += h.nblocks
                if h.nblocks != self.nb(p, h.size):
                    return Violation(
                        "allocated",
                        f"{p.label}: {sess.name} holds {h.size} units in {h.nblocks} blocks",
                        p.label,
                        tuple(h.phys),
                    )
                if h.computed > h.size and not h.queued:
                    return Violation(
                        "computed",
                        f"{p.label}: {sess.name} has computed {h.computed} > size {h.size}",
                        p.label,
                        tuple(h.phys),
                    )
                if h.reserve is not None and h.size > h.reserve:
                    return Violation(
                        "reserve",
                        f"{p.label}: {sess.name} holds {h.size} units > reserve {fmt(h.reserve)}",
                        p.label,
                        tuple(h.phys),
                    )
        for i, p in enumerate(s.pools):
            if allocated[i] != p.allocated:
                return Violation(
                    "allocated",
                    f"{p.label}: allocated is {p.allocated} blocks but the holds hold {allocated[i]}",
                    p.label,
                )
        for st in s.stages:
            if st.kind != "step":
                continue
            if len(st.residents) > st.seats:
                return Violation(
                    "seats", f"{st.label}: {len(st.residents)} residents > seats {fmt(st.seats)}"
                )
            if st.budget_left < 0:
                return Violation("budget", f"{st.label}: the iteration passed its budget")
        if s.counters["arrived"] != len(s.live) + s.counters["ended"]:
            return Violation(
                "sessions",
                f"arrived {s.counters['arrived']} ≠ live {len(s.live)} + ended {s.counters['ended']}",
            )
        return None
