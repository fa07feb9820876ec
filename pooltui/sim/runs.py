"""Runs: a session's residency on a step stage (`run STAGE prefill|decode (n)`), and the
token rule (how many tokens a run takes in an iteration), written once here.

Owns a session's `run` and a stage's residents: joining, leaving, resuming after a
preemption, and serving a resident its tokens for the iteration being planned (growing
its hold through `grow`). It does not start or end iterations (`iterations`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pooltui.lang.errors import SpecRuntimeError
from pooltui.lang.ir import Run
from pooltui.sim import blocks, members
from pooltui.sim.codes import Number
from pooltui.sim.state import S_RESIDENT, S_SEAT_WAIT, PoolState, Session, StageState
from pooltui.sim.state import Hold as HoldState
from pooltui.sim.state import Run as RunState

if TYPE_CHECKING:
    from pooltui.sim.engine import Engine


def stage_of_run(eng: Engine, run: Run, sess: Session, hold_pool: PoolState | None) -> StageState:
    """The stage member a `run` statement runs on."""
    decl = eng.t.stage_index[run.stage.name]
    count = eng.t.stages[decl].ir.count
    if run.stage.index is None and count > 1 and hold_pool is not None:
        # A run on a pool family member uses the stage member it is joined with.
        pdecl = eng.t.pools[hold_pool.decl]
        m = hold_pool.member if pdecl.ir.count > 1 else 0
        return eng.s.stages[eng.stage_base[decl] + m]
    return eng.s.stages[eng.stage_base[decl] + members.member_index(eng, run.stage, count, sess)]


def run_hold(eng: Engine, sess: Session, st: StageState) -> HoldState:
    """The innermost hold whose pool is the stage's memory, else the innermost hold."""
    stage_n = eng.s.stages.index(st)
    for h in reversed(sess.holds):
        if eng.s.pools[h.pool].stage == stage_n:
            return h
    return sess.holds[-1]


def start_run(eng: Engine, sess: Session, stmt: Run) -> bool:
    """Begin a run. True when the session is now a resident (blocked)."""
    if not sess.holds:
        raise SpecRuntimeError("run outside a hold", stmt.span)
    inner = sess.holds[-1]
    st = stage_of_run(eng, stmt, sess, eng.s.pools[inner.pool])
    h = run_hold(eng, sess, st)
    amount = eng.value_of(stmt.amount, sess, h)
    what = "the prefill" if stmt.kind == "prefill" else "the decode steps"
    n = eng.units(amount, stmt.span, what)
    # What is computed is context (a prefill whose prompt is all hit has nothing to do,
    # but its context still reaches what it computed).
    h.context = max(h.context, h.computed)
    if (stmt.kind == "prefill" and h.computed >= n) or (stmt.kind == "decode" and n == 0):
        return False
    sess.run = RunState(eng.s.stages.index(st), stmt.kind, n, h)
    take_seat(eng, sess, st)
    return True


def take_seat(eng: Engine, sess: Session, st: StageState) -> None:
    """A run joins its stage, or, when the stage's seats are full (or others already wait
    for one), waits for a seat, first come first served (docs/decisions.md)."""
    if st.joining or len(st.residents) >= st.seats:
        st.joining.append(sess.sid)
        sess.state = S_SEAT_WAIT
        sess.waiting_for = f"waiting for a seat on {st.label}"
        return
    eng.join_stage(sess, st)


def seat_joiners(eng: Engine, st: StageState) -> bool:
    """Runs waiting for a seat join, in the order they asked, while seats are free
    (at settle). True when one joined."""
    moved = False
    while st.joining and len(st.residents) < st.seats:
        sess = eng.s.live[st.joining.pop(0)]
        eng.join_stage(sess, st)
        moved = True
    return moved


def join_stage(eng: Engine, sess: Session, st: StageState) -> None:
    """The session becomes a resident of `st`, in admission order of its run's hold."""
    assert sess.run is not None
    order = resident_order(eng, sess.sid)
    i = len(st.residents)
    while i > 0 and resident_order(eng, st.residents[i - 1]) > order:
        i -= 1
    st.residents.insert(i, sess.sid)
    sess.state = S_RESIDENT
    sess.waiting_for = ""
    sess.run.phase = "waiting"
    sess.run.tokens = 0
    if st.planning:  # admitted during this stage's admission: takes its tokens now
        serve(eng, st, sess)


def resume_run(eng: Engine, sess: Session) -> None:
    """A preempted session, re-admitted, goes back to the run it was in."""
    run = sess.run
    assert run is not None
    h = run.h
    if (run.kind == "prefill" and h.computed >= run.target) or (
        run.kind == "decode" and run.steps >= run.target
    ):
        # Its run had finished when it was preempted: go on past it.
        sess.run = None
        sess.frames[-1][2] += 1
        eng.proceed(sess)
        return
    take_seat(eng, sess, eng.s.stages[run.stage])


def leave_stage(eng: Engine, sess: Session) -> None:
    """The session's run is over (or dropped): it is no longer a resident."""
    if sess.run is None:
        return
    st = eng.s.stages[sess.run.stage]
    if sess.sid in st.residents:
        st.residents.remove(sess.sid)
        eng.departures += 1
    if sess.sid in st.joining:
        st.joining.remove(sess.sid)
    if sess.sid in st.scheduled:
        st.scheduled.remove(sess.sid)
    sess.run = None


def resident_order(eng: Engine, sid: int) -> int:
    """Residents are served in admission order of their run's hold."""
    sess = eng.s.live[sid]
    assert sess.run is not None
    return sess.run.h.admit_order


# ---------------------------------------------------------------- the token rule
def tokens_wanted(kind: str, target: int, h: HoldState) -> int:
    """Tokens a run wants this iteration: a prefill, the rest of its `target`; a decode
    step, one token past its context (more when it recomputes a context it lost)."""
    if kind == "prefill":
        return target - h.computed
    return h.context - h.computed + 1


def tokens_taken(want: int, left: Number, whole: bool) -> int | None:
    """The token rule: of `left` tokens of budget, a run takes all it wants if they fit,
    else what is left (a chunk); under `prefill whole` it takes all or nothing (None)."""
    if want <= 0 or left <= 0:
        return 0
    if want <= left:
        return want
    if whole:
        return None
    return int(left)


def serve(eng: Engine, st: StageState, sess: Session) -> str:
    """Plan a resident's tokens for this iteration. 'ok', 'skip', 'self' (it preempted
    itself: the residents' loop stops), 'gone' (rejected or preempted)."""
    run = sess.run
    assert run is not None
    h = run.h
    want = tokens_wanted(run.kind, run.target, h)
    take = tokens_taken(want, st.budget_left, st.whole)
    if not take:
        return "skip"
    # A decode step is whole when it takes all it wants; anything more than one token, or
    # a part of what it wants, recomputes context it lost.
    full = run.kind == "decode" and take == want
    phase = run.kind if run.kind == "prefill" else ("decode" if full and want == 1 else "recompute")
    stmt = members.current_stmt(eng, sess)
    span = stmt.span if stmt is not None else None
    r = eng.grow_to(sess, h, h.computed + take, span or members.hold_stmt(eng, h).span, st)
    if r == "self":
        return "self"
    if r == "rejected":
        return "gone"
    if r == "wait":
        run.phase = "grow-wait"
        return "skip"
    run.tokens = take
    run.full = full
    # The blocks these tokens complete are registered now (content-and-reload.md §2).
    blocks.register(eng.s.pools[h.pool], h, h.computed + take, sess)
    if st.exclusive and phase == "decode" and sess.sid == eng.admitting:
        # Under exclusive prefill a (re-)admitted hold's first step is its prefill,
        # even when its hit covers all it had computed (nano-vllm re-prefills it).
        phase = "recompute"
    run.phase = phase
    st.budget_left -= take
    st.scheduled.append(sess.sid)
    return "ok"
