"""Iterations: planning, starting and ending one iteration of a step stage.

Owns a stage's iteration: its plan (residents served in order, then admission from its
pools while budget and seats last; under `exclusive prefill`, prefills first), its
duration (the stage's `time`), its end on the heap, and applying the tokens it computed.
The token rule and residency are `runs`'s; admission is `admit`'s.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from pooltui.lang.errors import SpecRuntimeError
from pooltui.lang.exprs import normal
from pooltui.lang.words import number
from pooltui.sim import admit, interpreter, members, runs, why
from pooltui.sim.codes import ADMITTED, BLOCKED, DEFERRED, P_ITER_END
from pooltui.sim.state import S_RESIDENT, Hold, Session, StageState

if TYPE_CHECKING:
    from pooltui.sim.engine import Engine


def start_iteration(eng: Engine, st: StageState) -> bool:
    """Plan and start one iteration of a step stage. False when it would do nothing."""
    s = eng.s
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
            serve_residents(eng, st, is_prefill)
            if not st.preempted:
                admitted = admit_in_iteration(eng, st)
            if not st.scheduled:
                serve_residents(eng, st, lambda sess: True)
        else:
            serve_residents(eng, st, lambda sess: True)
            if not st.preempted:
                admitted = admit_in_iteration(eng, st)
    finally:
        st.planning = False
    preempted = s.counters["preemptions"] > preempts0
    return launch_iteration(eng, st, admitted, preempted, n0)


def launch_iteration(
    eng: Engine,
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
    s = eng.s
    live = s.live
    scheduled = [live[sid].run for sid in st.scheduled]
    tokens = steady
    prefills = 0
    for r in scheduled:
        if r is not None:
            tokens += r.tokens
            if r.phase != "decode":
                prefills += 1
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
    decodes = len(scheduled) - prefills + steady
    duration = 0.0
    if tokens > 0:
        sd = eng.t.stages[st.decl]
        if sd.time is None:
            duration = 1.0
        else:
            env = eng.env.bind(None, None, s.now)
            env.tokens, env.residents = tokens, len(scheduled) + steady
            env.prefills, env.decodes = prefills, decodes
            duration = float(sd.time(env))
            if duration < 0 or math.isnan(duration) or math.isinf(duration):
                assert sd.ir.time is not None
                raise SpecRuntimeError(
                    f"the iteration time is {number(duration)}, not a duration", sd.ir.time.span
                )
    st.iter_end = eng.iteration_end(st, duration, fused)
    index = s.stages.index(st)
    eng.push(st.iter_end, P_ITER_END, index, "end", index)
    eng.iteration_event(st, tokens, admitted, preempted, duration, prefills, decodes)
    return True


def iteration_event(
    eng: Engine,
    st: StageState,
    tokens: int,
    admitted: list[str],
    preempted: bool,
    duration: float,
    prefills: int,
    decodes: int,
) -> None:
    """The `iteration` event of the iteration just launched."""
    live = eng.s.live
    scheduled = [live[sid].run for sid in st.scheduled]
    used = st.budget - st.budget_left if not math.isinf(st.budget) else tokens
    sched = [(live[sid].name, r.phase, r.tokens) for sid, r in zip(st.scheduled, scheduled, strict=True)
             if r is not None]  # fmt: skip
    eng.emit(
        "iteration",
        lambda: why.iteration(
            st.label,
            st.iteration,
            len(sched),
            tokens,
            st.budget,
            prefills,
            decodes,
            admitted,
            preempted,
            duration,
        ),
        stage=st,
        units=tokens,
        span=eng.t.stages[st.decl].ir.span,
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


def is_prefill(sess: Session) -> bool:
    """Whether a resident's next tokens are a prefill (a recompute is one)."""
    run = sess.run
    assert run is not None
    if run.kind == "prefill":
        return True
    h = run.h
    return h.context > h.computed  # a recompute is a prefill


def serve_residents(eng: Engine, st: StageState, which: Callable[[Session], bool]) -> None:
    """Serve the residents that `which` picks, in resident order, while budget lasts.
    Who is still a resident and who was served before this pass are sets (a full GPU's
    256 residents asked of a list each were a fifth of the per-event mode's time): the
    residents' set is made again only after one left (`Engine.departures`); a sid asked
    is one of the list's at the start, so one that joined since is never asked, and only
    its own turn adds a sid to `scheduled`."""
    order = list(st.residents)
    still: set[int] | None = None  # None: nobody left since `order`
    departures = eng.departures
    served = set(st.scheduled)
    live = eng.s.live
    for sid in order:
        if st.budget_left <= 0:
            break
        if eng.departures != departures:  # a resident left (preempted, gone): who stays
            still, departures = set(st.residents), eng.departures
        sess = live.get(sid)
        if sess is None or sess.run is None or (still is not None and sid not in still):
            continue
        if sid in served:
            continue
        if not which(sess):
            continue
        if runs.serve(eng, st, sess) == "self":
            break


def admit_in_iteration(eng: Engine, st: StageState) -> list[str]:
    """Admission from the stage's pools while budget and seats last. The names admitted."""
    s = eng.s
    admitted: list[str] = []
    for pi in st.memory:
        p = s.pools[pi]
        passed: list[Hold] = []  # waiting for a reload in flight: the next ones are tried
        while (
            len(p.queue) > len(passed)
            and st.budget_left > 0
            and len(st.residents) + len(st.joining) < st.seats
        ):
            h = admit.select(eng, p, passed)
            name = s.live[h.sid].name
            eng.admitting = h.sid
            try:
                r = admit.try_admit(eng, p, h, st)
            finally:
                eng.admitting = -1
            if r == BLOCKED:
                break
            if r == DEFERRED:
                passed.append(h)
            elif r == ADMITTED:
                admitted.append(name)
    return admitted


def end_iteration(eng: Engine, st: StageState) -> None:
    """The iteration's tokens are computed; finished runs go on."""
    st.busy = False
    tokens, done = apply_tokens(eng, st)
    eng.emit(
        "iteration-end",
        lambda: why.iteration_ended(st.label, st.iteration, tokens, len(done)),
        stage=st,
        units=tokens,
        data=(("iteration", st.iteration), ("tokens", tokens)),
        span=eng.t.stages[st.decl].ir.span,
    )
    finish_runs(eng, st, done)


def apply_tokens(eng: Engine, st: StageState) -> tuple[int, list[Session]]:
    """Each scheduled run adds the tokens it took to its hold's computed prefix."""
    s = eng.s
    done: list[Session] = []
    tokens = 0
    w = eng.watch
    advanced = None if w is None else w.advanced  # (recorded inline: one per resident)
    for sid in st.scheduled:
        sess = s.live.get(sid)
        if sess is None or sess.run is None:
            continue
        run = sess.run
        h = run.h
        tokens += run.tokens
        h.computed += run.tokens
        if advanced is not None:
            advanced.append(h)
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
            eng.stats.ttft[sess.cls].append(s.now - sess.arrived)
        run.tokens = 0
        run.full = False
        run.phase = "waiting"
    st.scheduled = []
    return tokens, done


def finish_runs(eng: Engine, st: StageState, done: list[Session]) -> None:
    """Finished runs leave the stage (all of them first: none is a resident any more,
    so none can be preempted by another's next statement); then, in resident order,
    each one's `run-done` and whatever its session does next."""
    s = eng.s
    left: list[tuple[int, Session, str]] = []
    for sess in done:
        if sess.sid not in s.live or sess.state != S_RESIDENT or sess.run is None:
            continue  # rejected meanwhile
        left.append((runs.resident_order(eng, sess.sid), sess, sess.run.kind))
        eng.leave_stage(sess)
    # `done` is in scheduled order, which is not resident order when runs joined in this
    # iteration's admission (a resumed run keeps its older run hold: it sits earlier).
    left.sort(key=lambda x: x[0])
    for _, sess, kind in left:
        if sess.sid not in s.live:
            continue
        stmt = members.current_stmt(eng, sess)
        eng.emit(
            "run-done",
            lambda: why.run_done(sess.name, kind, st.label),
            session=sess,
            stage=st,
            span=stmt.span if stmt is not None else None,
            data=(("kind", kind),),
        )
        sess.frames[-1][2] += 1
        interpreter.proceed(eng, sess)
