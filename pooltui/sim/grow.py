"""Growth and preemption: a hold growing by more units (a `grow` statement, or a run's
tokens), waiting when there is no room, and preempting (`preempt lifo`) the most recently
admitted resident of the pool's stage to make room.

Owns the grow-wait list of a pool and the preemption of a hold. Blocks are found through
`blocks`; a preempted hold re-enters its pool's queue here, and leaves its stage's plan.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pooltui.lang.errors import SpecRuntimeError
from pooltui.lang.ir import Grow, Span
from pooltui.lang.words import number
from pooltui.sim import admit, blocks, members, watch, why
from pooltui.sim.state import S_ACTIVE, S_GROW_WAIT, S_QUEUED, PoolState, Session, StageState
from pooltui.sim.state import Hold as HoldState

if TYPE_CHECKING:
    from pooltui.sim.engine import Engine


def grow_to(
    eng: Engine, sess: Session, h: HoldState, new_size: int, span: Span, st: StageState | None
) -> str:
    """Grow h to new_size units. 'ok', 'wait' (no room), 'self' (preempted itself),
    'rejected'. With preempt lifo, preempts residents of the pool's stage."""
    p = eng.s.pools[h.pool]
    if new_size <= h.size:
        return "ok"
    if new_size > p.cap or (h.reserve is not None and new_size > h.reserve):
        limit = "cap" if new_size > p.cap else "reserve"
        lim = p.cap if limit == "cap" else h.reserve
        assert lim is not None
        admit.reject(
            eng,
            sess,
            h,
            p,
            f"growing to {new_size} units would pass its {limit} ({number(lim)})",
            new_size,
        )
        return "rejected"
    need = blocks.nb(p, new_size) - len(h.table.blocks)
    if not preempt_for(eng, sess, h, p, need):
        return "self"
    if need > blocks.available(p):
        if sess.state != S_GROW_WAIT and (sess.run is None or sess.run.phase != "grow-wait"):
            eng.emit(
                "grow-wait",
                lambda: why.grow_waits(sess.name, new_size, p, need),
                session=sess,
                pool=p,
                units=new_size,
                span=span,
            )
        return "wait"
    added = blocks.extend_to(eng, p, h, new_size)
    h.size = new_size
    if need or p.block == 1:
        eng.grow_event(sess, p, new_size, need, added, span)
    return "ok"


def grow_event(
    eng: Engine, sess: Session, p: PoolState, new_size: int, need: int, added: list[int],
    span: Span,
) -> None:  # fmt: skip
    """The `grow` event of a hold just grown to new_size units (`added`: its new blocks)."""
    eng.emit(
        "grow",
        lambda: why.grew(sess.name, p.label, new_size, need, p.block),
        session=sess,
        pool=p,
        units=new_size,
        blocks=tuple(added),
        span=span,
        data=(("added_blocks", need),),
    )


def preempt_for(eng: Engine, sess: Session, h: HoldState, p: PoolState, need: int) -> bool:
    """With preempt lifo, preempt the most recently admitted residents of p's stage until
    `need` more blocks of p can be found for hold h. False when h itself was preempted."""
    if need <= blocks.available(p):
        return True
    if eng.t.pools[p.decl].ir.preempt != "lifo" or p.stage is None:
        return True
    while need > blocks.available(p):
        victim = lifo_victim(eng, p)
        if victim is None:
            break
        eng.preempt(victim, sess, p, need)
        if victim is h:
            return False
    return True


def lifo_victim(eng: Engine, p: PoolState) -> HoldState | None:
    """The most recently admitted hold on p whose session is a resident of p's stage (a
    reloading hold's session never is one: content-and-reload.md §3)."""
    assert p.stage is not None
    st = eng.s.stages[p.stage]
    pi = eng.s.pools.index(p)
    best: HoldState | None = None
    for sid in st.residents:
        sess = eng.s.live[sid]
        for h in sess.holds:
            if h.pool != pi or h.queued or h.reloading:
                continue
            if best is None or h.admit_order > best.admit_order:
                best = h
    return best


def preempt(eng: Engine, h: HoldState, grower: Session, p: PoolState, need: int) -> None:
    """Preempt hold `h` so `grower` can grow: it leaves its stage, its computed prefix
    stays cached, and it re-enters the head of its pool's queue."""
    s = eng.s
    victim = s.live[h.sid]
    st = s.stages[p.stage] if p.stage is not None else None
    free_before, cached_before = p.nfree(), p.cached
    if victim.run is not None and st is not None:
        if victim.sid in st.scheduled:  # its tokens this iteration are given back
            st.scheduled.remove(victim.sid)
            st.budget_left += victim.run.tokens
        victim.run.tokens = 0
        victim.run.phase = "waiting"
        if victim.sid in st.residents:
            st.residents.remove(victim.sid)
            eng.departures += 1
    # Counted before the counts go down, and only for a recorded why (as a release's).
    stay, others = blocks.held_by_others(p, h) if eng.record else (0, 0)
    cached_units, kept = blocks.let_go(eng, victim, h)
    h.computed = 0
    h.preempted = True
    victim.state = S_QUEUED
    victim.waiting_for = f"queued on {p.label} (preempted)"
    s.counters["preemptions"] += 1
    if st is not None:
        st.preempted = True
    eng.emit(
        "preempt",
        lambda: why.preempted(
            victim.name,
            None if victim is grower else grower.name,
            p.label,
            need,
            free_before,
            cached_before,
            st.label if st is not None else None,
            cached_units,
            stay,
            others,
        ),
        session=victim,
        pool=p,
        stage=st,
        others=(grower.name,),
        units=cached_units,
        blocks=tuple(kept),
        span=members.hold_stmt(eng, h).span,
        data=(("cached", cached_units), ("grower", grower.name)),
    )
    # It re-enters the head of the queue, ahead of policy keys (Pool reference).
    h.queued = True
    h.enq_time = s.now
    h.enq_seq = s.next_enq
    s.next_enq += 1
    p.queue.insert(0, h)
    watch.hold(eng, h)
    eng.emit(
        "enqueue",
        lambda: why.requeued(victim.name, p.label),
        session=victim,
        pool=p,
        span=members.hold_stmt(eng, h).span,
        data=(("preempted", True),),
    )


def grow_stmt(eng: Engine, sess: Session, stmt: Grow) -> bool:
    """`grow POOL (N)`: True when done, False when the session waits."""
    h = next(
        (x for x in reversed(sess.holds)
         if eng.t.pools[eng.s.pools[x.pool].decl].ir.name == stmt.pool),
        None,
    )  # fmt: skip
    if h is None:
        raise SpecRuntimeError(f"grow {stmt.pool}: the session holds no {stmt.pool}", stmt.span)
    n = eng.units(eng.value_of(stmt.amount, sess, h), stmt.span, "the growth")
    r = grow_to(eng, sess, h, h.size + n, stmt.span, None)
    if r == "ok":
        if sess.state == S_GROW_WAIT:
            sess.state = S_ACTIVE
            p = eng.s.pools[h.pool]
            if sess.sid in p.waiting_grows:
                p.waiting_grows.remove(sess.sid)
        return True
    if r == "wait":
        p = eng.s.pools[h.pool]
        sess.state = S_GROW_WAIT
        sess.waiting_for = f"waiting to grow on {p.label}"
        if sess.sid not in p.waiting_grows:
            p.waiting_grows.append(sess.sid)
    return False


def retry_grows(eng: Engine, p: PoolState) -> bool:
    """Sessions waiting to grow on `p` try again (at settle). True when one moved."""
    moved = False
    for sid in list(p.waiting_grows):
        sess = eng.s.live.get(sid)
        if sess is None:
            p.waiting_grows.remove(sid)
            continue
        stmt = members.current_stmt(eng, sess)
        if not isinstance(stmt, Grow):  # pragma: no cover
            p.waiting_grows.remove(sid)
            continue
        if grow_stmt(eng, sess, stmt):
            moved = True
            sess.frames[-1][2] += 1
            eng.proceed(sess)
    return moved
