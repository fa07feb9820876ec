"""The program as the engine runs it: members resolved, bodies numbered, expressions compiled.

None of this is simulation state: it is built once per `Program` and shared by every replay,
so checkpoints never copy closures or IR.

Owns that read-only form of the program; it may not hold or touch simulation state.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pooltui.lang.content import ContentFn, compile_content
from pooltui.lang.exprs import compile_expr
from pooltui.lang.ir import (
    ArriveEvery,
    CPool,
    CSession,
    CStage,
    EvictBy,
    Expr,
    Hold,
    If,
    Program,
    QueueBy,
    Repeat,
    Span,
    Stmt,
)

Number = int | float
Compiled = Callable[[Any], Number]


def member_label(name: str, index: int, family: bool) -> str:
    return f"{name}[{index}]" if family else name


def _join(target_count: int, index: int) -> int:
    """N–N joins member for member; a family of one is shared by every member."""
    return index if target_count > 1 else 0


@dataclass(slots=True)
class StageDecl:
    ir: CStage
    order: int  # declaration order among stages
    labels: list[str]
    time: Compiled | None


@dataclass(slots=True)
class PoolDecl:
    ir: CPool
    order: int
    labels: list[str]
    evict_keys: list[Compiled] | None  # None: lru
    queue_keys: list[Compiled] | None  # None: fifo
    spill_work: Compiled | None
    spill_when: Compiled | None
    stage_member: list[tuple[int, int] | None]  # per member: (stage decl, member) of admit via
    spill_tier: list[tuple[int, int] | None]  # per member: (pool decl, member)
    spill_link: list[tuple[int, int] | None]  # per member: (stage decl, member)
    evict_text: str
    queue_text: str
    # `reload` (content-and-reload.md §3): its compiled work and predicate (None: always),
    # per member the link member and the spill chain's members, (pool decl, member) each.
    reload_work: Compiled | None = None
    reload_when: Compiled | None = None
    reload_link: list[tuple[int, int] | None] = field(default_factory=list)
    reload_tiers: list[list[tuple[int, int]]] = field(default_factory=list)


@dataclass(slots=True)
class SessionDecl:
    ir: CSession
    order: int
    body_id: int
    arrive: Compiled
    every: bool
    columns: tuple[str, ...]
    sid_base: int  # session ids of this class are sid_base + index


@dataclass(slots=True)
class Tables:
    program: Program
    stages: list[StageDecl]
    pools: list[PoolDecl]
    sessions: list[SessionDecl]
    bodies: list[tuple[Stmt, ...]]
    body_of: dict[int, int]  # id(stmt tuple) -> body id, for holds / repeats / ifs
    compiled: dict[int, Compiled] = field(default_factory=dict)  # id(Expr) -> closure
    stage_index: dict[str, int] = field(default_factory=dict)
    pool_index: dict[str, int] = field(default_factory=dict)
    checks: list[tuple[str, Compiled, Span]] = field(default_factory=list)
    contents: dict[int, ContentFn] = field(default_factory=dict)  # id(Hold) -> its content

    def content_fn(self, stmt: Hold) -> ContentFn:
        """A hold statement's `content` clause, compiled once."""
        key = id(stmt)
        f = self.contents.get(key)
        if f is None:
            f = compile_content(stmt.content)
            self.contents[key] = f
        return f

    def fn(self, expr: Expr) -> Compiled:
        key = id(expr)
        f = self.compiled.get(key)
        if f is None:
            f = compile_expr(expr)
            self.compiled[key] = f
        return f


def _key_text(kind: str, policy: object) -> str:
    if isinstance(policy, EvictBy | QueueBy):
        return f"by ({len(policy.keys)} key{'s' if len(policy.keys) != 1 else ''})"
    return kind


def reload_tables(t: Tables, pd: PoolDecl) -> None:
    """A pool's `reload`: its link member and its spill chain per member, each tier joined
    as the spill that reaches it is (a member's chain goes through the members its spills
    go to)."""
    r = pd.ir.reload
    if r is None:
        return
    pd.reload_work = t.fn(r.work)
    pd.reload_when = t.fn(r.when) if r.when is not None else None
    li = t.stage_index[r.via]
    for m in range(pd.ir.count):
        pd.reload_link.append((li, _join(t.stages[li].ir.count, m)))
        chain: list[tuple[int, int]] = []
        at: tuple[int, int] | None = (pd.order, m)
        for name in r.tiers:
            assert at is not None
            at = t.pools[at[0]].spill_tier[at[1]]
            assert at is not None and t.pools[at[0]].ir.name == name
            chain.append(at)
        pd.reload_tiers.append(chain)


def build_tables(program: Program) -> Tables:
    bodies: list[tuple[Stmt, ...]] = []
    body_of: dict[int, int] = {}

    def number(body: tuple[Stmt, ...]) -> int:
        bid = len(bodies)
        bodies.append(body)
        body_of[id(body)] = bid
        for stmt in body:
            if isinstance(stmt, Hold | Repeat):
                number(stmt.body)
            elif isinstance(stmt, If):
                number(stmt.then)
                number(stmt.otherwise)
        return bid

    t = Tables(program, [], [], [], bodies, body_of)
    for i, st in enumerate(program.stages):
        labels = [member_label(st.name, m, st.family) for m in range(st.count)]
        t.stages.append(StageDecl(st, i, labels, None))
        t.stage_index[st.name] = i
    for i, p in enumerate(program.pools):
        labels = [member_label(p.name, m, p.family) for m in range(p.count)]
        t.pools.append(PoolDecl(p, i, labels, None, None, None, None, [], [], [], "lru", "fifo"))
        t.pool_index[p.name] = i
    for sd in t.stages:
        sd.time = t.fn(sd.ir.time) if sd.ir.time is not None else None
    for pd in t.pools:
        p = pd.ir
        if isinstance(p.evict, EvictBy):
            pd.evict_keys = [t.fn(k) for k in p.evict.keys]
        if isinstance(p.queue, QueueBy):
            pd.queue_keys = [t.fn(k) for k in p.queue.keys]
        pd.evict_text = _key_text("lru", p.evict)
        pd.queue_text = _key_text("fifo", p.queue)
        for m in range(p.count):
            if p.admit_via is not None:
                si = t.stage_index[p.admit_via]
                pd.stage_member.append((si, _join(t.stages[si].ir.count, m)))
            else:
                pd.stage_member.append(None)
            if p.spill is not None:
                ti = t.pool_index[p.spill.tier]
                li = t.stage_index[p.spill.via]
                pd.spill_tier.append((ti, _join(t.pools[ti].ir.count, m)))
                pd.spill_link.append((li, _join(t.stages[li].ir.count, m)))
            else:
                pd.spill_tier.append(None)
                pd.spill_link.append(None)
        if p.spill is not None:
            pd.spill_work = t.fn(p.spill.work)
            pd.spill_when = t.fn(p.spill.when)
    for pd in t.pools:
        reload_tables(t, pd)
    sid = 0
    for i, s in enumerate(program.sessions):
        bid = number(s.body)
        every = isinstance(s.arrive, ArriveEvery)
        expr = s.arrive.gap if isinstance(s.arrive, ArriveEvery) else s.arrive.at
        cols = s.source.columns if s.source is not None else ()
        t.sessions.append(SessionDecl(s, i, bid, t.fn(expr), every, cols, sid))
        sid += s.count
    for c in program.checks:
        t.checks.append((c.label, t.fn(c.cond), c.span))
    return t
