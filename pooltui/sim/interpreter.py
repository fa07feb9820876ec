"""The session interpreter: a session's statements, executed until it blocks or ends.

Owns a session's frames and program counter and its life (arrival, waking, end). Each
statement that touches a pool, stage or link is handed to its module: `hold` to admit,
`run` to runs, `grow` to grow, `send` to links, `wait` to the loop's heap; assignments,
`repeat` and `if` are done here. It does no block accounting and plans no iteration.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from pooltui.lang.errors import SpecRuntimeError
from pooltui.lang.exprs import to_count
from pooltui.lang.ir import Grow, Hold, If, Repeat, Run, Send, SetAttr, Wait
from pooltui.lang.words import number, seconds
from pooltui.sim import admit, grow, links, members, runs, why
from pooltui.sim.codes import P_WAKE
from pooltui.sim.members import innermost
from pooltui.sim.rng import stream_key
from pooltui.sim.state import (
    F_HOLD,
    F_PLAIN,
    F_REPEAT,
    F_TOP,
    S_ACTIVE,
    S_DONE,
    S_FOREVER,
    S_REJECTED,
    S_SENDING,
    S_SLEEPING,
    Session,
)

if TYPE_CHECKING:
    from pooltui.sim.engine import Engine


def arrive(eng: Engine, c: int, index: int, counter: int) -> None:
    """Session `index` of class `c` arrives, its stream at `counter` (past the draws of
    its arrival); its class's next arrival is scheduled."""
    s = eng.s
    sd = eng.t.sessions[c]
    eng.push_arrival(c)
    name = f"{sd.ir.name}[{index}]" if (sd.ir.family or sd.ir.source) else sd.ir.name
    key = stream_key(eng.sched.seed, sd.ir.name, index)
    sess = Session(sd.sid_base + index, c, index, name, key)
    sess.counter = counter
    if sd.ir.source is not None:
        sess.attrs = dict(zip(sd.columns, sd.ir.source.rows[index], strict=False))
    sess.serial = s.next_serial
    s.next_serial += 1
    sess.arrived = s.now
    s.progress = s.n_events
    sess.frames.append([F_TOP, sd.body_id, 0, None])
    s.live[sess.sid] = sess
    s.counters["arrived"] += 1
    if len(s.live) > s.counters["peak_live"]:
        s.counters["peak_live"] = len(s.live)
    s.class_counts[c][0] += 1
    eng.emit(
        "arrive",
        lambda: why.arrived(name, sess.serial),
        session=sess,
        span=sd.ir.span,
        data=(("serial", sess.serial),),
    )
    proceed(eng, sess)


def proceed(eng: Engine, sess: Session) -> None:
    """Execute statements until the session blocks or ends."""
    t = eng.t
    s = eng.s
    sess.state = S_ACTIVE
    seen = s.n_events
    still = 0  # statements since the last event (the livelock guard)
    limit = eng.still_limit
    while sess.frames:
        if s.n_events != seen:
            seen = s.n_events
            still = 0
        still += 1
        frame = sess.frames[-1]
        body = t.bodies[frame[1]]
        pc = frame[2]
        if pc >= len(body):
            if not close_frame(eng, sess, frame):
                return
            continue
        stmt = body[pc]
        if still > limit:
            raise SpecRuntimeError(
                f"{limit:,} statements in a row without an event: the session loops "
                "without doing anything the simulation can see (a livelock)",
                stmt.span,
            )
        if isinstance(stmt, SetAttr):
            sess.attrs[stmt.name] = eng.value_of(stmt.value, sess, innermost(sess))
            frame[2] = pc + 1
        elif isinstance(stmt, Hold):
            admit.enqueue(eng, sess, stmt, (frame[1], pc))
            return
        elif isinstance(stmt, Run):
            if runs.start_run(eng, sess, stmt):
                return
            frame[2] = pc + 1
        elif isinstance(stmt, Grow):
            if not grow.grow_stmt(eng, sess, stmt):
                return
            frame[2] = pc + 1
        elif isinstance(stmt, Send):
            links.send(eng, sess, stmt)
            return
        elif isinstance(stmt, Wait):
            secs = eng.value_of(stmt.seconds, sess, innermost(sess))
            if secs < 0 or math.isnan(secs):
                raise SpecRuntimeError(f"wait of {number(secs)} seconds", stmt.span)
            until = eng.s.now + secs
            if math.isinf(until):
                # It sleeps forever: no wake (the clock never jumps to inf); it keeps
                # what it holds and the run may end with it still live.
                sess.state = S_FOREVER
                sess.waiting_for = "sleeping forever (a wait of inf seconds)"
                return
            sess.state = S_SLEEPING
            sess.waiting_for = f"sleeping until {seconds(until)}"
            eng.push(until, P_WAKE, sess.sid, "wake", sess.sid)
            return
        elif isinstance(stmt, Repeat):
            n = eng.value_of(stmt.count, sess, innermost(sess))
            frame[2] = pc + 1
            count = to_count(n, stmt.count.span, "the repeat count")
            if count > 0:
                sess.frames.append([F_REPEAT, t.body_of[id(stmt.body)], 0, count])
        elif isinstance(stmt, If):
            c = eng.value_of(stmt.cond, sess, innermost(sess))
            frame[2] = pc + 1
            chosen = stmt.then if c else stmt.otherwise
            if chosen:
                sess.frames.append([F_PLAIN, t.body_of[id(chosen)], 0, None])


def close_frame(eng: Engine, sess: Session, frame: list[Any]) -> bool:
    """A body ran out. False when the session stopped (ended)."""
    kind = frame[0]
    if kind == F_REPEAT and frame[3] > 1:
        frame[3] -= 1
        frame[2] = 0
        return True
    sess.frames.pop()
    if kind == F_HOLD:
        admit.release(eng, sess, frame[3])
    if kind == F_TOP:
        end_session(eng, sess, "done")
        return False
    if sess.frames:
        sess.frames[-1][2] += 1 if kind == F_HOLD else 0
    return True


def end_session(eng: Engine, sess: Session, how: str) -> None:
    """The session ends: 'done', or rejected (its holds are dropped, not cached)."""
    s = eng.s
    for h in list(sess.holds):
        admit.drop_hold(eng, sess, h)
    sess.frames.clear()
    sess.state = S_DONE if how == "done" else S_REJECTED
    s.live.pop(sess.sid, None)
    s.counters["ended"] += 1
    s.progress = s.n_events
    cc = s.class_counts[sess.cls]
    if how == "done":
        cc[1] += 1
        eng.stats.latency[sess.cls].append(s.now - sess.arrived)
    else:
        cc[2] += 1
    eng.emit(
        "end",
        lambda: why.ended(sess.name, how, s.now - sess.arrived),
        session=sess,
        data=(("how", how),),
        span=eng.t.sessions[sess.cls].ir.span,
    )


def wake(eng: Engine, sess: Session) -> None:
    """Its wait is over or its send landed: on to its next statement."""
    reason = "send" if sess.state == S_SENDING else "wait"
    stmt = members.current_stmt(eng, sess)
    sess.state = S_ACTIVE
    sess.waiting_for = ""
    sess.frames[-1][2] += 1
    eng.emit(
        "wake",
        lambda: why.woke(sess.name, reason),
        session=sess,
        span=stmt.span if stmt is not None else None,
        data=(("reason", reason),),
    )
    proceed(eng, sess)
