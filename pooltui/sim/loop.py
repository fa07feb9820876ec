"""The loop: a heap of actions ordered by (time, priority, sub-order, sequence), the clock,
and settling an instant (SimPy-like, without generators).

Owns the heap, the clock and `settle`: after the actions at an instant, pools without a
stage admit, waiting grows retry and idle stages start iterations until nothing moves; then
the spec's checks run. It decides *when* things happen and hands each action to the module
whose concern it is; it changes no pool, hold or stage itself.
"""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING, Any

from pooltui.lang.errors import SpecRuntimeError
from pooltui.sim import admit, grow, interpreter, links, runs, why
from pooltui.sim.codes import P_ARRIVE, Halt
from pooltui.sim.state import S_FOREVER, S_QUEUED

if TYPE_CHECKING:
    from pooltui.sim.engine import Engine


def push(
    eng: Engine, t: float, prio: int, sub: int, kind: str, a: Any = None, b: Any = None
) -> None:
    """Schedule an action at time `t`. At one instant actions go by priority, then
    `sub` (declaration order), then the order they were pushed in."""
    s = eng.s
    s.seq += 1
    heapq.heappush(s.heap, (t, prio, sub, s.seq, kind, a, b))


def push_arrival(eng: Engine, c: int) -> None:
    """Schedule class `c`'s next arrival, if it has one, computed now: one per class on
    the heap at a time, so the heap stays small and a class of any size costs nothing
    until its sessions arrive. At one instant classes go in declaration order (`sub`);
    a class's own sessions come one after another."""
    s = eng.s
    pos = s.arrive_next[c]
    if pos >= eng.sched.count[c]:
        return
    # The previous arrival of the class is the one being processed now (`every` adds a
    # gap to its time).
    t, index, counter = eng.sched.arrival(c, pos, s.now if pos else 0.0)
    s.arrive_next[c] = pos + 1
    push(eng, t, P_ARRIVE, c, "arrive", c, (index, counter))


def start(eng: Engine) -> None:
    """Put each class's first arrival on the heap."""
    s = eng.s
    try:
        for c in range(len(eng.t.sessions)):
            push_arrival(eng, c)
    except SpecRuntimeError as exc:
        s.error = exc.diagnostic()
        s.halted = f"runtime error: {exc.message}"


def advance(eng: Engine) -> bool:
    """Run one action. False when nothing more can happen (finished or halted)."""
    s = eng.s
    if s.halted is not None or s.finished:
        return False
    try:
        heap = s.heap
        if heap and heap[0][0] <= s.now:
            process(eng, heapq.heappop(heap))
            s.settled = False
        elif not s.settled:
            s.settled = True
            settle(eng)
        elif not heap:
            if any(sess.state != S_FOREVER for sess in s.live.values()):
                deadlock(eng)
            else:  # nobody left, or only sessions that sleep forever (still live)
                s.finished = True
                return False
        else:
            item = heapq.heappop(heap)
            advance_clock(eng, item[0])
            process(eng, item)
            s.settled = False
        eng.action_done()
    except Halt:
        return False
    except SpecRuntimeError as exc:
        s.error = exc.diagnostic()
        s.halted = f"runtime error: {exc.message}"
        return False
    return True


def is_over(eng: Engine) -> bool:
    """Nothing more can happen: finished, or nothing scheduled and nobody left but
    sessions that sleep forever (a last settle could only fail a check), whether or not a
    step has looked past the end."""
    s = eng.s
    if s.finished:
        return True
    if s.heap or not (s.settled or not eng.t.checks):
        return False
    return all(sess.state == S_FOREVER for sess in s.live.values())


def advance_clock(eng: Engine, t: float) -> None:
    """Move the clock to `t`, integrating each pool's use up to it."""
    s = eng.s
    if t > s.now:
        for p in s.pools:  # utilisation integrals
            p.area += p.allocated * p.block * (t - p.area_t)
            p.area_t = t
        s.now = t
        s.progress = s.n_events


def process(eng: Engine, item: tuple[Any, ...]) -> None:
    """One popped action, handed to the module whose concern it is."""
    kind = item[4]
    if kind == "end":
        eng.end_iteration(eng.s.stages[item[5]])
    elif kind == "link":
        links.finish_job(eng, eng.s.stages[item[5]], item[6])
    elif kind == "wake":
        sess = eng.s.live.get(item[5])
        if sess is not None:
            interpreter.wake(eng, sess)
    elif kind == "arrive":
        interpreter.arrive(eng, item[5], item[6][0], item[6][1])


def settle(eng: Engine) -> None:
    """After every event at this instant: pools without a stage admit, waiting grows
    retry, idle stages start iterations, until nothing more moves; then the checks."""
    s = eng.s
    moved = True
    rounds = 0
    while moved:
        rounds += 1
        moved = False
        for p in s.pools:
            if p.stage is None and p.queue and admit.admit_loop(eng, p, None):
                moved = True
            if p.waiting_grows and grow.retry_grows(eng, p):
                moved = True
        for st in s.stages:
            if st.joining and runs.seat_joiners(eng, st):
                moved = True
            if st.kind == "step" and not st.busy and eng.start_iteration(st):
                moved = True
        if rounds > 100_000:  # pragma: no cover - a bug guard, not a spec error
            raise RuntimeError("settle does not converge")
    if s.heap and s.heap[0][0] <= s.now:
        s.settled = False  # zero-length iterations or waits at this instant
    run_checks(eng)


def run_checks(eng: Engine) -> None:
    """The spec's `check`s, at the end of a settled instant."""
    if not eng.t.checks:
        return
    env = eng.env.bind(None, None, eng.s.now)
    for label, fn, span in eng.t.checks:
        if not fn(env):
            eng.s.halted = f"check failed: {label}"
            eng.emit(
                "check-failed",
                lambda: why.check_failed(label, eng.s.now),
                span=span,
                data=(("label", label),),
            )
            raise Halt()


def deadlock(eng: Engine) -> None:
    """Nothing is scheduled and sessions are left: name what each waits for, and halt."""
    s = eng.s
    waits = []
    for sess in sorted(s.live.values(), key=lambda x: x.sid):
        loader = None
        if sess.state == S_QUEUED:  # room or not, it may wait for another's reload
            h = next((x for x in sess.holds if x.queued), None)
            if h is not None:
                loader = admit.waits_for(eng, s.pools[h.pool], h, sess)
        waits.append((sess.name, why.waiting_for(s, sess, loader)))
    s.halted = why.deadlock_halt(waits)
    eng.emit(
        "deadlock",
        lambda: why.deadlock(waits),
        others=tuple(n for n, _ in waits),
        data=(("waits", tuple(waits)),),
    )
    raise Halt()
