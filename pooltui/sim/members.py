"""Members and the expressions' environment: which pool or stage member a reference names,
what a spec's queries (`kv.free`, `gpu.residents`, `argmin(...)`) read, session names, and
the initial state built from the tables.

Owns `Env`, the object compiled expressions read. Reads the state; never writes it (an
evaluation may draw from the session's stream, which is the stream's business).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pooltui.lang.errors import SpecRuntimeError
from pooltui.lang.exprs import normal
from pooltui.lang.ir import Hold, Ref, Stmt
from pooltui.lang.words import number
from pooltui.sim.codes import Number
from pooltui.sim.rng import Stream
from pooltui.sim.state import Hold as HoldState
from pooltui.sim.state import PoolState, Session, StageState, State
from pooltui.sim.tables import Tables

if TYPE_CHECKING:
    from pooltui.sim.engine import Engine


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
        return query(self.eng, name, kind, target, index)

    def argquery(self, fn: str, kind: str, family: str, query: str) -> int:
        assert self.eng is not None
        return argquery(self.eng, fn, kind, family, query)

    def draw(self, dist: str, args: list[Number]) -> Number:
        if self.session is None:
            raise ValueError("no session stream to draw from here")
        stream = Stream(self.session.rng_key, self.session.counter)
        value = stream.draw(dist, args)
        self.session.counter = stream.counter
        return normal(value)


def innermost(sess: Session) -> HoldState | None:
    """The hold a session's statements evaluate in: its innermost."""
    return sess.holds[-1] if sess.holds else None


def stage_member(eng: Engine, ref: Ref, sess: Session | None) -> StageState:
    decl = eng.t.stage_index[ref.name]
    count = eng.t.stages[decl].ir.count
    return eng.s.stages[eng.stage_base[decl] + member_index(eng, ref, count, sess)]


def pool_member(eng: Engine, ref: Ref, sess: Session | None) -> PoolState:
    decl = eng.t.pool_index[ref.name]
    count = eng.t.pools[decl].ir.count
    return eng.s.pools[eng.pool_base[decl] + member_index(eng, ref, count, sess)]


def member_index(eng: Engine, ref: Ref, count: int, sess: Session | None) -> int:
    if ref.index is None:
        return 0
    i = eng.value_of(ref.index, sess, innermost(sess) if sess is not None else None)
    if not float(i).is_integer() or not 0 <= i < count:
        raise SpecRuntimeError(
            f"{ref.name}[{number(i)}]: {ref.name} has members 0..{count - 1}", ref.span
        )
    return int(i)


def query(eng: Engine, name: str, kind: str, target: str, index: int | None) -> Number:
    if kind == "pool":
        decl = eng.t.pool_index[target]
        count = eng.t.pools[decl].ir.count
        i = index or 0
        if not 0 <= i < count:
            raise IndexError(f"{target}[{i}]: {target} has members 0..{count - 1}")
        p = eng.s.pools[eng.pool_base[decl] + i]
        if name == "cap":
            return normal(p.cap)
        if name == "allocated":
            return p.allocated * p.block
        if name == "cached":
            return p.cached * p.block
        if name == "free":
            return p.free_blocks() * p.block
        return len(p.queue)  # queued
    decl = eng.t.stage_index[target]
    count = eng.t.stages[decl].ir.count
    if index is None and count > 1 and eng.env.hold_pool >= 0:
        # A bare stage family inside a hold: the member its pool member is joined with.
        via = eng.s.pools[eng.env.hold_pool].stage
        base = eng.stage_base[decl]
        if via is not None and base <= via < base + count:
            index = via - base
    i = index or 0
    if not 0 <= i < count:
        raise IndexError(f"{target}[{i}]: {target} has members 0..{count - 1}")
    st = eng.s.stages[eng.stage_base[decl] + i]
    if name == "budget_left":
        return normal(st.budget_left if st.planning else st.budget)
    if name == "residents":
        return len(st.residents) if st.kind == "step" else len(st.jobs)
    return normal(st.seats - len(st.residents))  # seats_left


def argquery(eng: Engine, fn: str, kind: str, family: str, what: str) -> int:
    if kind == "pool":
        count = eng.t.pools[eng.t.pool_index[family]].ir.count
    else:
        count = eng.t.stages[eng.t.stage_index[family]].ir.count
    values = [query(eng, what, kind, family, i) for i in range(count)]
    best = min(values) if fn == "argmin" else max(values)
    return values.index(best)


def sid_by_name(eng: Engine, name: str) -> tuple[int | None, str | None]:
    cls, _, rest = name.partition("[")
    for sd in eng.t.sessions:
        if sd.ir.name == cls:
            index = int(rest[:-1]) if rest else 0
            return sd.sid_base + index, cls
    return None, None


def sid_name(eng: Engine, sid: int) -> str:
    for sd in eng.t.sessions:
        if sd.sid_base <= sid < sd.sid_base + sd.ir.count:
            i = sid - sd.sid_base
            return f"{sd.ir.name}[{i}]" if (sd.ir.family or sd.ir.source) else sd.ir.name
    return f"session {sid}"  # pragma: no cover


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


def hold_stmt(eng: Engine, h: HoldState) -> Hold:
    """The `hold` statement a hold executes."""
    stmt = eng.t.bodies[h.stmt[0]][h.stmt[1]]
    assert isinstance(stmt, Hold)
    return stmt


def current_stmt(eng: Engine, sess: Session) -> Stmt | None:
    """The statement the session stands at (None past its last)."""
    if not sess.frames:
        return None
    frame = sess.frames[-1]
    body = eng.t.bodies[frame[1]]
    return body[frame[2]] if frame[2] < len(body) else None
