"""Queue order and admission: a hold's life in a pool, from its `hold` statement to its
release.

Owns a pool's queue, the order it is tried in (a preempted hold first, else the queue
policy), a hold's plan (`plan_hold`, which writes nothing), and admission, rejection and
release. Block figures change only through `blocks`; a first run's tokens come from the
token rule in `runs`; a hold that reloads from its pool's tiers is planned and started by
`reloads`.
"""

from __future__ import annotations

from math import inf as INF
from typing import TYPE_CHECKING, Any

from pooltui.lang.errors import SpecRuntimeError
from pooltui.lang.ir import Hold, Run
from pooltui.lang.words import number
from pooltui.sim import blocks, members, reloads, runs, watch, why
from pooltui.sim.codes import ADMITTED, BLOCKED, DEFERRED, REJECTED, Number
from pooltui.sim.content import Content
from pooltui.sim.ledger import Hit as LedgerHit
from pooltui.sim.state import F_HOLD, S_QUEUED, PoolState, Session, StageState
from pooltui.sim.state import Hold as HoldState

if TYPE_CHECKING:
    from pooltui.sim.engine import Engine

NO_CONTENT = Content(-1)  # a hold's content until its first attempt (in `enqueue`)


class HoldPlan:
    """What a hold would be if it were admitted now: its units, the part of them the
    pool's registered blocks cover (`hit`, in units; `found`, the blocks), its `need` and
    `reserve`, and why it can never fit (None when it can)."""

    __slots__ = ("found", "hit", "need", "never", "reserve", "size")

    def __init__(
        self,
        size: int,
        found: LedgerHit,
        need: int,
        reserve: Number | None,
        never: str | None,
    ) -> None:
        self.size = size
        self.found = found
        self.hit = found.units
        self.need = need
        self.reserve = reserve
        self.never = never


def enqueue(eng: Engine, sess: Session, stmt: Hold, where: tuple[int, int]) -> None:
    """A `hold` statement: the session queues on the pool member."""
    s = eng.s
    p = members.pool_member(eng, stmt.pool, sess)
    h = HoldState(s.next_hold, sess.sid, s.pools.index(p), where, NO_CONTENT)
    s.next_hold += 1
    # Its content, evaluated at its first attempt and kept for its life.
    env = eng.env.bind(sess, h, s.now)
    env.computed = 0
    h.table.content = Content(sess.sid, eng.t.content_fn(stmt)(env))
    h.enq_time = s.now
    h.enq_seq = s.next_enq
    s.next_enq += 1
    h.queued = True
    sess.holds.append(h)
    sess.state = S_QUEUED
    sess.waiting_for = f"queued on {p.label}"
    p.queue.append(h)
    watch.hold(eng, h)
    eng.emit(
        "enqueue",
        lambda: why.enqueued(sess.name, p.label, len(p.queue)),
        session=sess,
        pool=p,
        span=stmt.span,
        data=(("preempted", False),),
    )
    # A hold that can never fit is rejected at once (Pool reference).
    plan = plan_hold(eng, p, h, sess)
    h.reserve = plan.reserve
    watch.hold(eng, h)
    if plan.never is not None:
        reject(eng, sess, h, p, plan.never, plan.size)


def plan_hold(
    eng: Engine, p: PoolState, h: HoldState, sess: Session, found: LedgerHit | None = None
) -> HoldPlan:
    """The hold's plan for an attempt now (content-and-reload.md §2): E, the longest run of
    its content's leading blocks the pool has registered (or `found`: the fast mode asks
    what an attempt would make of a shorter one); its header sees E as computed;
    hit = min(E, ⌊max(U, context) − 1⌋ in whole blocks), the header evaluated again with
    the hit if it shrank. Writes nothing (an expression may still draw from the session's
    stream)."""
    stmt = members.hold_stmt(eng, h)
    if found is None:
        found = blocks.longest(p, h.table.content)
    e_units = found.units
    what = "the hold's units"
    # One binding for the header's expressions (`_value`'s): an evaluation changes
    # nothing of the environment, so only `computed` differs between them.
    fn = eng.t.fn
    env = eng.env.bind(sess, h, eng.s.now)
    env.computed = e_units
    size = eng.units(fn(stmt.units)(env), stmt.span, what)
    found = blocks.capped(p, found, max(size, h.context))
    hit = found.units
    env.computed = hit
    if hit < e_units:  # a hit smaller than E: the header sees the smaller one
        size = eng.units(fn(stmt.units)(env), stmt.span, what)
    size = max(size, hit)  # a hold holds at least its hit
    need = 0
    if stmt.need is not None:
        need = eng.units(fn(stmt.need)(env), stmt.need.span, "need")
    reserve: Number | None = None
    if stmt.reserve is not None:
        reserve = fn(stmt.reserve)(env)
        if reserve < 0:  # like negative units: a located error, not a rejection
            raise SpecRuntimeError(
                f"the reserve is {number(reserve)}, which is negative", stmt.reserve.span
            )
        if reserve == INF:  # `reserve (inf)` is no reserve (docs/decisions.md)
            reserve = None
    biggest = max(size, need, reserve if reserve is not None else 0)
    never: str | None = None
    if biggest > p.cap:
        what = "units" if biggest == size else ("need" if biggest == need else "reserve")
        never = f"its {what} ({number(biggest)}) is above the cap ({number(p.cap)})"
    elif reserve is not None and size > reserve:
        never = f"its units ({size}) are above its reserve ({number(reserve)})"
    elif reserve is not None and need > reserve:
        # vLLM refuses a request longer than max_model_len before scheduling it: the
        # whole current sequence (`need`) must be within the reserve, not just this chunk.
        never = f"its need ({need}) is above its reserve ({number(reserve)})"
    return HoldPlan(size, found, need, reserve, never)


def waits_for(
    eng: Engine, p: PoolState, h: HoldState, sess: Session, plan: HoldPlan | None = None
) -> str | None:
    """The session whose reload in flight a queued hold waits for (its own reload would
    copy blocks that one is loading: `try_admit`), or None. For the views and a deadlock's
    words: it writes nothing and draws nothing (a header that cannot be evaluated now
    waits for nothing it can name). `plan`: the hold's, when the caller has made it."""
    if eng.t.pools[p.decl].reload_work is None:
        return None
    counter = sess.counter  # looking must not draw
    try:
        if plan is None:
            plan = plan_hold(eng, p, h, sess)
        rl = reloads.plan(eng, p, h, sess, plan.hit) if plan.never is None else None
    except SpecRuntimeError:
        return None
    finally:
        sess.counter = counter
    return eng.s.live[rl.waits].name if rl is not None and rl.waits >= 0 else None


def select(eng: Engine, p: PoolState, passed: list[HoldState] | None = None) -> HoldState:
    """The next hold to try: a preempted one first, else by the queue policy; none of
    `passed` (holds this admission passed over: DEFERRED), which leave some to try."""
    q = [h for h in p.queue if h not in passed] if passed else p.queue
    head = q[0]
    pd = eng.t.pools[p.decl]
    if head.preempted or pd.queue_keys is None:
        return head
    best: tuple[tuple[Number, ...], int] | None = None
    chosen = head
    for h in q:
        k = (queue_keys(eng, p, h), h.enq_seq)
        if best is None or k < best:
            best, chosen = k, h
    return chosen


def queue_keys(eng: Engine, p: PoolState, h: HoldState) -> tuple[Number, ...]:
    """A queued hold's policy keys (`queue by`), lowest first."""
    pd = eng.t.pools[p.decl]
    if pd.queue_keys is None:
        return ()
    sess = eng.s.live[h.sid]
    env = eng.env.bind(sess, h, eng.s.now)
    env.session = None  # queue keys may not draw
    env.waited = eng.s.now - h.enq_time
    env.waiting = len(p.queue)
    return tuple(f(env) for f in pd.queue_keys)


def admit_loop(eng: Engine, p: PoolState, st: StageState | None) -> bool:
    """Admit from p's queue head of line until the selected hold does not fit (passing
    over those that wait for a reload in flight)."""
    moved = False
    passed: list[HoldState] = []
    while len(p.queue) > len(passed):
        if st is not None and (st.budget_left <= 0 or len(st.residents) >= st.seats):
            break
        h = select(eng, p, passed)
        r = try_admit(eng, p, h, st)
        if r == BLOCKED:
            break
        if r == DEFERRED:
            passed.append(h)
            continue
        moved = True
    return moved


def first_run_tokens(
    eng: Engine, h: HoldState, sess: Session, st: StageState, p: PoolState
) -> int | None:
    """Tokens the hold's first run on `st` would take now that grow h (None: it would
    wait). A run resumed after h's preemption may work on a hold nested in h that stayed
    admitted: its tokens are that hold's, must fit the budget and that hold's pool, and
    grow nothing of h (0)."""
    run = sess.run
    if run is not None and hold_frame(eng, sess, h) is not None:
        if eng.s.stages[run.stage] is not st:
            return 0
        if run.kind == "decode" and run.steps >= run.target:
            return 0
        want = runs.tokens_wanted(run.kind, run.target, run.h)
        taken = runs.tokens_taken(want, st.budget_left, st.whole)
        if taken is None or run.h is h:
            return taken
        return 0 if inner_room(eng, run.h, run.h.computed + taken) else None
    stmt = members.hold_stmt(eng, h)
    if not stmt.body or not isinstance(stmt.body[0], Run):
        return 0
    first = stmt.body[0]
    if runs.stage_of_run(eng, first, sess, p) is not st:
        return 0
    what = "the prefill" if first.kind == "prefill" else "the decode steps"
    target = eng.units(eng.value_of(first.amount, sess, h), first.span, what)
    if first.kind == "decode" and target <= 0:
        return 0
    return runs.tokens_taken(runs.tokens_wanted(first.kind, target, h), st.budget_left, st.whole)


def inner_room(eng: Engine, inner: HoldState, size: int) -> bool:
    """Whether an admitted hold's pool can give it `size` units without preempting
    (admission never preempts). A size past its cap or reserve is not a question of room:
    the run is rejected when it takes the tokens, as any resident's would be. (An inner
    hold is never on the outer hold's own pool here: lifo would have picked the inner one,
    admitted later.)"""
    q = eng.s.pools[inner.pool]
    if size <= inner.size or size > q.cap:
        return True
    if inner.reserve is not None and size > inner.reserve:
        return True
    return blocks.nb(q, size) - len(inner.table.blocks) <= blocks.available(q)


def try_admit(eng: Engine, p: PoolState, h: HoldState, st: StageState | None) -> int:
    """One admission attempt of a queued hold: ADMITTED, BLOCKED (it waits, and so do
    the holds behind it), DEFERRED (it waits for another hold's reload in flight of its
    blocks; the holds behind it are tried, as vLLM's scheduler passes over a request its
    connector delays) or REJECTED.
    Under a stage (`st`), its first run's tokens must fit this iteration too, counted in
    the fit of the hold they grow (`first_run_tokens`)."""
    s = eng.s
    sess = s.live[h.sid]
    plan = plan_hold(eng, p, h, sess)
    size, hit, need = plan.size, plan.hit, plan.need
    # The attempt's figures stay on the hold: its reserve, and its hit as computed.
    h.reserve = plan.reserve
    h.computed = hit
    watch.hold(eng, h)  # whatever the attempt's outcome (blocked: no event follows)
    if plan.never is not None:
        reject(eng, sess, h, p, plan.never, size)
        return REJECTED
    # Its continuation in the pool's tiers (content-and-reload.md §3): attempted with hit +
    # loadable as computed, the loadable units new blocks of the fit; it takes no tokens
    # in this iteration, so no first-run growth is counted.
    rl = reloads.plan(eng, p, h, sess, hit) if eng.t.pools[p.decl].reload_work else None
    grown = size
    if rl is not None and rl.waits >= 0:  # its blocks are on their way: it hits them landed
        h.computed = 0
        return DEFERRED
    if rl is not None:
        size, need = rl.size, rl.need
        h.reserve = rl.reserve
        h.computed = hit + rl.units
        grown = size
    elif st is not None:
        tokens = first_run_tokens(eng, h, sess, st, p)
        if tokens is None:
            h.computed = 0
            return BLOCKED
        grown = max(size, h.computed + tokens)
    found = plan.found
    if not blocks.fits(p, found, grown, need):
        h.computed = 0
        return BLOCKED
    # Admit: the hit is taken, the blocks past it found (evicting), and only then does the
    # hold leave the queue.
    shared = found.shared * p.block
    computed_by_others = blocks.others(p, found, sess.sid)
    phys = tuple(blocks.admit_blocks(eng, p, h, found, size))
    p.queue.remove(h)
    h.queued = False
    h.size = size
    h.admit_order = s.next_admit
    s.next_admit += 1
    h.admitted_at = s.now
    was_preempted = h.preempted
    h.preempted = False
    watch.hold(eng, h)
    eng.stats.queueing[sess.cls].append(s.now - h.enq_time)
    loadable = rl.units if rl is not None else 0
    s.hit_units[0] += hit + loadable  # reloaded units are hits too, from a tier
    s.hit_units[1] += max(size, hit)
    s.hit_units[4] += loadable
    s.hit_units[2] += shared
    s.hit_units[3] += computed_by_others
    sess.waiting_for = ""
    frame = hold_frame(eng, sess, h)
    if frame is None:
        # The parent frame stays at the `hold` until the hold is released.
        body = members.hold_stmt(eng, h).body
        sess.frames.append([F_HOLD, eng.t.body_of[id(body)], 0, h])
    eng.emit(
        "admit",
        lambda: why.admitted(
            sess.name,
            p.label,
            size,
            hit,
            shared,
            was_preempted,
            st.label if st is not None else None,
            st.budget_left if st is not None else 0,
        ),
        session=sess,
        pool=p,
        stage=st,
        units=size,
        blocks=phys,
        span=members.hold_stmt(eng, h).span,
        data=(
            ("hit", hit),
            ("shared", shared),
            ("stage", st.label if st is not None else None),
        ),
    )
    if rl is not None:
        reloads.start(eng, sess, p, h, rl)  # it goes on when the reload lands
    elif frame is not None and sess.run is not None:
        # Re-admitted after preemption: resume the run it was in.
        runs.resume_run(eng, sess)
    else:
        eng.proceed(sess)
    return ADMITTED


def hold_frame(eng: Engine, sess: Session, h: HoldState) -> list[Any] | None:
    """The frame executing the hold's body (None before its first admission)."""
    for f in sess.frames:
        if f[0] == F_HOLD and f[3] is h:
            return f
    return None


def reject(
    eng: Engine, sess: Session, h: HoldState, p: PoolState, reason: str, units: int | None = None
) -> None:
    """The hold can never fit: it leaves its pool and its session at once, whole (its
    place in the queue, its blocks, nothing cached), then the session is rejected (it
    ends). Leaving first keeps the `reject` event's state whole: a rejected attempt may
    have set the hold's hit as computed, and a hold neither queued nor admitted must not
    be left behind with it."""
    if units is None:
        units = h.size or None
    drop_hold(eng, sess, h)
    eng.emit(
        "reject",
        lambda: why.rejected(sess.name, p.label, reason),
        session=sess,
        pool=p,
        units=units,
        span=members.hold_stmt(eng, h).span,
        data=(("reason", reason),),
    )
    eng.end_session(sess, "rejected")


def drop_hold(eng: Engine, sess: Session, h: HoldState) -> None:
    """Free a hold without caching (its session was rejected)."""
    p = eng.s.pools[h.pool]
    if h.queued:
        p.queue.remove(h)
        h.queued = False
    blocks.drop(eng, p, h)
    if h in sess.holds:
        sess.holds.remove(h)
    watch.hold(eng, h)
    if sess.run is not None and sess.run.hold == h.key:
        eng.leave_stage(sess)


def release(eng: Engine, sess: Session, h: HoldState) -> None:
    """The hold's body ran out: its blocks left at count zero that are registered stay
    cached, as this release's entry."""
    p = eng.s.pools[h.pool]
    size = h.size
    # Counted before the counts go down, and only for a recorded why (a lean run has none).
    stay, others = blocks.held_by_others(p, h) if eng.record else (0, 0)
    cached_units, kept = blocks.let_go(eng, sess, h)
    keep = len(kept)
    sess.holds.remove(h)
    eng.emit(
        "release",
        lambda: why.released(sess.name, size, p.label, cached_units, bool(keep), stay, others),
        session=sess,
        pool=p,
        units=size,
        blocks=tuple(kept),
        span=members.hold_stmt(eng, h).span,
        data=(("cached", cached_units),),
    )
