"""Building immutable `Snapshot`s from engine state.

Owns the translation of the state into snapshot views. It only reads: the queue's planned
figures come from `admit.plan_hold`, which writes nothing (only a header's draw is undone,
since looking must not draw).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from pooltui.lang.exprs import normal
from pooltui.sim import admit, blocks, members
from pooltui.sim.engine import Engine
from pooltui.sim.events import Event
from pooltui.sim.ledger import CacheEntry
from pooltui.sim.snapshot import (
    QUEUE_PLANNED,
    AttrValue,
    BlockContents,
    BlockMap,
    BlockOwner,
    Cells,
    Counts,
    EntryView,
    HoldView,
    LinkJobView,
    PoolView,
    QueueItemView,
    Registered,
    ResidentView,
    SessionView,
    Shown,
    Snapshot,
    StageView,
)
from pooltui.sim.state import (
    S_FOREVER,
    S_GROW_WAIT,
    S_QUEUED,
    S_RELOADING,
    S_RESIDENT,
    S_SEAT_WAIT,
    S_SENDING,
    S_SLEEPING,
    Hold,
    PoolState,
    Session,
)

Number = int | float


def _attr(v: object) -> AttrValue:
    """An attribute as a snapshot shows it: numbers normalised; strings and lists (of a
    source's rows) as they are, lists as tuples."""
    if type(v) is int or type(v) is str:  # most attributes: nothing to do
        return v
    if type(v) is float:  # `normal`, inlined: a snapshot converts thousands of these
        return int(v) if v.is_integer() and abs(v) < 2**53 else v
    if isinstance(v, list | tuple):
        return tuple(x if isinstance(x, str) else normal(x) for x in v)
    if isinstance(v, str):
        return v
    assert isinstance(v, int | float)
    return normal(v)


def _hold_view(eng: Engine, sess: Session, h: Hold, made: dict[int, HoldView]) -> HoldView:
    """The view of h, made once per snapshot (`made`, by hold id): the pool's list and the
    session's show the same."""
    view = made.get(h.key)
    if view is None:
        view = made[h.key] = _new_hold_view(eng, sess, h)
    return view


def _new_hold_view(eng: Engine, sess: Session, h: Hold) -> HoldView:
    p = eng.s.pools[h.pool]
    bs = h.table.blocks
    ref = p.ledger.ref
    return HoldView(
        sess.name,
        sess.sid,
        p.label,
        h.size,
        len(bs),
        h.computed,
        h.context,
        normal(h.reserve) if h.reserve is not None else None,
        tuple(bs) if p.nblocks is not None else (),
        h.admitted_at,
        h.admit_order,
        sum(1 for b in bs if ref[b] > 1) if p.ledger.sharers else 0,
        h.reload_units if h.reloading else 0,
    )


def _entries(eng: Engine, p: PoolState, order: Sequence[CacheEntry]) -> tuple[EntryView, ...]:
    out = []
    for rank, e in enumerate(order):
        sess = eng.s.live.get(e.sid)
        out.append(
            EntryView(
                sess.name if sess is not None else members.sid_name(eng, e.sid),
                e.sid,
                e.units,
                len(e.blocks),
                tuple(e.blocks) if p.nblocks is not None else (),
                rank,
                tuple(normal(k) for k in blocks.entry_keys(eng, p, e)),
                e.last,
                sess is not None,
                e.spilled,
            )
        )
    return tuple(out)


def _queue(
    eng: Engine, p: PoolState, planned_upto: int, sessions: frozenset[int]
) -> tuple[QueueItemView, ...]:
    """p's queue in selection order; the first `planned_upto` positions planned, and the
    holds of `sessions` wherever they are."""
    s = eng.s
    pd = eng.t.pools[p.decl]
    if pd.queue_keys is None:
        items: list[tuple[Hold, tuple[Number, ...]]] = [(h, ()) for h in p.queue]
    else:
        items = [(h, admit.queue_keys(eng, p, h)) for h in p.queue]
        pre = [x for x in items if x[0].preempted]
        rest = sorted((x for x in items if not x[0].preempted), key=lambda x: (x[1], x[0].enq_seq))
        items = pre + rest
    out = []
    live, now = s.live, s.now
    for pos, (h, keys) in enumerate(items):
        sess = live[h.sid]
        units: Number | None = None
        need: Number | None = None
        hit = 0
        waits: str | None = None
        planned = pos < planned_upto or h.sid in sessions
        if planned:
            counter = sess.counter  # looking must not draw
            try:
                plan = admit.plan_hold(eng, p, h, sess)
                units, hit, need = plan.size, plan.hit, plan.need
                waits = admit.waits_for(eng, p, h, sess, plan)
            except Exception:  # a header that cannot be evaluated now is shown as unknown
                units = None
            finally:
                sess.counter = counter
        out.append(
            QueueItemView(
                sess.name,
                sess.sid,
                pos,
                units,
                need if need else None,
                normal(h.reserve) if h.reserve is not None else None,
                hit,
                tuple(map(normal, keys)) if keys else (),
                now - h.enq_time,
                h.preempted,
                h.enq_time,
                planned,
                waits,
            )
        )
    return tuple(out)


def _block_map(
    eng: Engine, p: PoolState, order: Sequence[CacheEntry], entries: tuple[EntryView, ...]
) -> BlockMap | None:
    """`entries`: the views of `order`'s entries, in that order (first to go first)."""
    if p.nblocks is None:
        return None
    # Per block, the figures cover the ids ever used only (the rest are free), as copies of
    # the ledger's lists: a snapshot of 20,000 blocks copies them in C (a list's copy is a
    # memcpy; an array's or a dict's was a conversion per block).
    L = p.ledger
    owners: list[BlockOwner] = []
    by_hold: dict[int, int] = {}
    landing: set[int] = set()
    pools = eng.s.pools
    for sess in eng.s.live.values():
        for h in sess.holds:
            if pools[h.pool] is not p:
                continue
            if h.reloading:
                hit = (h.computed - h.reload_units) // p.block
                landing.update(h.table.blocks[hit : h.computed // p.block])
            if h.table.blocks:
                owners.append(BlockOwner("hold", sess.name, sess.sid))
                by_hold[h.key] = len(owners)  # a shared block's cell is its first holder's
    sharers = {b: tuple(by_hold[hid] for hid in L.holders(b)) for b in L.sharers}
    by_entry: dict[int, int] = {}
    for e, ev in zip(order, entries, strict=True):
        owners.append(BlockOwner("cached", ev.session, ev.session_id, ev.rank))
        by_entry[e.order] = len(owners)
    contents = BlockContents(tuple(L.bcontent), tuple(L.bidx))
    dups = frozenset(b for bs in L.more.values() for b in bs)  # later copies only
    counts, hashes = tuple(L.ref), tuple(L.bhash)
    return BlockMap(
        p.nblocks,
        p.block,
        Cells(p.nblocks, tuple(L.owner), tuple(L.bentry), counts, hashes, by_hold, by_entry),
        tuple(owners),
        counts,
        sharers,
        contents,
        Registered(hashes),
        dups,
        frozenset(landing),
    )


def _pool_view(
    eng: Engine,
    p: PoolState,
    tiers: dict[str, list[str]],
    made: dict[int, HoldView],
    planned: int,
    shown: frozenset[int],
) -> PoolView:
    """p's view; its queue's first `planned` positions planned, and `shown`'s holds."""
    pd = eng.t.pools[p.decl]
    holds = []
    for sess in eng.s.live.values():
        for h in sess.holds:
            # A preempted hold between its release and its re-entry holds nothing; a hold
            # being admitted holds its hit while blocks are found past it (evicting).
            if eng.s.pools[h.pool] is p and (h.table.blocks or not (h.queued or h.preempted)):
                holds.append(_hold_view(eng, sess, h, made))
    holds.sort(key=lambda hv: hv.admit_order)
    order = blocks.evict_order(eng, p)
    entries = _entries(eng, p, order)
    free: Number = p.nfree() * p.block if p.nblocks is not None else math.inf
    L = p.ledger
    return PoolView(
        pd.ir.name,
        p.member if pd.ir.family else None,
        p.label,
        normal(p.cap),
        pd.ir.block,
        p.allocated * p.block,
        p.cached * p.block,
        free,
        p.nblocks,
        _block_map(eng, p, order, entries),
        tuple(holds),
        entries,
        _queue(eng, p, planned, shown),
        pd.evict_text,
        pd.queue_text,
        pd.ir.preempt,
        eng.s.stages[p.stage].label if p.stage is not None else None,
        tuple(tiers.get(p.label, ())),
        pd.ir.span,
        L.dups,
        len(L.sharers),
    )


def _session_state(eng: Engine, sess: Session) -> str:
    s = eng.s
    if sess.state == S_QUEUED:
        h = next((x for x in sess.holds if x.queued), None)
        if h is not None:
            p = s.pools[h.pool]
            return f"queued on {p.label}" + (" (preempted)" if h.preempted else "")
    if sess.state == S_RESIDENT and sess.run is not None:
        st = s.stages[sess.run.stage]
        return f"resident of {st.label} ({sess.run.kind})"
    if sess.state == S_GROW_WAIT:
        return sess.waiting_for or "waiting to grow"
    if sess.state in (S_SLEEPING, S_SENDING, S_SEAT_WAIT, S_FOREVER, S_RELOADING):
        return sess.waiting_for
    return sess.state


def _stage_views(eng: Engine) -> tuple[StageView, ...]:
    s = eng.s
    out = []
    for st in s.stages:
        sd = eng.t.stages[st.decl]
        family_index = st.member if sd.ir.family else None
        if st.kind == "link":

            def job_view(j: object, running: bool) -> LinkJobView:
                from pooltui.sim.state import Job

                assert isinstance(j, Job)
                sess = s.live.get(j.sid)
                name = sess.name if sess is not None else members.sid_name(eng, j.sid)
                progress = 0.0
                if running and j.start is not None and j.end is not None:
                    span = j.end - j.start
                    progress = 1.0 if span <= 0 else min(1.0, (s.now - j.start) / span)
                tier = s.pools[j.tier].label if j.kind == "spill" else None
                kind: Literal["spill", "reload", "send"] = (
                    "spill" if j.kind == "spill" else "reload" if j.kind == "reload" else "send"
                )
                return LinkJobView(
                    kind,
                    name,
                    j.sid,
                    normal(j.work),
                    j.start,
                    j.end,
                    progress,
                    j.units if j.kind != "send" else None,
                    tier,
                    tuple((s.pools[tn].label, u) for tn, u in j.tiers),
                    s.pools[j.source].label if j.kind == "reload" else None,
                )

            out.append(
                StageView(
                    sd.ir.name,
                    family_index,
                    st.label,
                    "link",
                    rate=normal(st.rate),
                    lanes=st.lanes,
                    jobs=tuple(job_view(j, True) for j in st.jobs),
                    queued_jobs=tuple(job_view(j, False) for j in st.waiting_jobs),
                    span=sd.ir.span,
                )
            )
            continue
        residents = []
        for sid in st.residents:
            sess = s.live[sid]
            run = sess.run
            assert run is not None
            h = run.h
            phase = run.phase if run.phase in ("prefill", "decode", "recompute") else "waiting"
            if not st.busy or sid not in st.scheduled:
                phase = "waiting"
            residents.append(
                ResidentView(
                    sess.name,
                    sid,
                    phase,  # type: ignore[arg-type]
                    run.tokens if sid in st.scheduled else 0,
                    h.computed,
                    h.context,
                    run.target,
                    run.steps,
                    s.pools[h.pool].label,
                    h.admit_order,
                )
            )
        tokens = sum(r.tokens for r in residents)
        out.append(
            StageView(
                sd.ir.name,
                family_index,
                st.label,
                "step",
                iteration=st.iteration,
                busy=st.busy,
                iteration_start=st.iter_start if st.iteration else None,
                iteration_end=st.iter_end if st.iteration else None,
                budget=normal(st.budget),
                budget_used=tokens if st.busy else 0,
                budget_left=normal(st.budget - tokens if st.busy else st.budget),
                seats=normal(st.seats),
                seats_left=normal(st.seats - len(st.residents)),
                residents=tuple(residents),
                preempted=st.preempted and st.busy,
                memory=tuple(s.pools[pi].label for pi in st.memory),
                reloading=tuple(
                    sess.name
                    for sess in s.live.values()
                    for h in sess.holds
                    if h.reloading and h.pool in st.memory
                ),
                span=sd.ir.span,
            )
        )
    return tuple(out)


# Per session id: (its attributes as the state has them, as a snapshot shows them).
AttrsMade = dict[int, tuple[tuple[tuple[str, object], ...], tuple[tuple[str, AttrValue], ...]]]


def _attrs(sess: Session, before: AttrsMade, now: AttrsMade) -> tuple[tuple[str, AttrValue], ...]:
    """A session's attributes as a snapshot shows them; the last snapshot's when they are
    unchanged since (most are a trace's row, set once: thousands a snapshot otherwise)."""
    raw = tuple(sess.attrs.items())
    made = before.get(sess.sid)
    if made is None or made[0] != raw:
        made = (raw, tuple((k, _attr(v)) for k, v in raw))
    now[sess.sid] = made
    return made[1]


# Per session id: (what a queued session's view is made of, the view made of it).
SessionsMade = dict[int, tuple[tuple[object, ...], SessionView]]


def _queued_key(
    sess: Session, attrs: tuple[tuple[str, AttrValue], ...]
) -> tuple[object, ...] | None:
    """Everything a queued session's view is made of, when none of its holds holds a block
    (a queue of 1,500 changes little between two frames; the views of the sessions in it
    were most of a snapshot's cost); None for any other session (its view is made anew)."""
    holds: list[object] = []
    for h in sess.holds:
        if h.table.blocks:
            return None
        holds.append(
            (h.key, h.pool, h.size, h.computed, h.context, h.reserve, h.admitted_at,
             h.admit_order, h.preempted, h.queued, h.reloading, h.reload_units)
        )  # fmt: skip
    frame = sess.frames[-1] if sess.frames else None
    at = (frame[1], frame[2]) if frame is not None else None
    return (sess.state, sess.serial, sess.arrived, sess.waiting_for, at, attrs, *holds)


def build_snapshot(
    eng: Engine,
    events: Sequence[Event],
    cursor: int,
    attrs_made: AttrsMade | None = None,
    sessions_made: SessionsMade | None = None,
    shown: Shown | None = None,
) -> Snapshot:
    """The snapshot of `eng`'s state, `cursor` the event it is at. `attrs_made`: the
    attributes the last snapshot made, updated to this one's; `sessions_made`: the views
    of queued sessions it made, the same (the simulation keeps both; a snapshot for a
    `shown` reads them and leaves them as they are). `shown`: only those sessions' views."""
    s = eng.s
    attrs_before = attrs_made if attrs_made is not None else {}
    attrs_now: AttrsMade = {}
    sessions_before = sessions_made if sessions_made is not None else {}
    sessions_now: SessionsMade = {}
    tiers: dict[str, list[str]] = {}
    for pi, p in enumerate(s.pools):
        pd = eng.t.pools[p.decl]
        tier = pd.spill_tier[p.member]
        if tier is not None:
            label = s.pools[eng.pool_base[tier[0]] + tier[1]].label
            tiers.setdefault(label, []).append(s.pools[pi].label)
    made: dict[int, HoldView] = {}
    planned = QUEUE_PLANNED if shown is None else shown.planned
    inspected = frozenset() if shown is None else shown.sessions
    pools = tuple(_pool_view(eng, p, tiers, made, planned, inspected) for p in s.pools)
    wanted = None if shown is None else _wanted(shown, pools)
    if wanted is not None:  # the caches stay the last whole snapshot's
        attrs_made = sessions_made = None
    sessions = []
    for sid in sorted(s.live) if wanted is None else sorted(wanted & s.live.keys()):
        sess = s.live[sid]
        attrs = _attrs(sess, attrs_before, attrs_now)
        key = _queued_key(sess, attrs) if sess.state == S_QUEUED else None
        if key is not None:
            got = sessions_before.get(sid)
            if got is not None and got[0] == key:
                sessions_now[sid] = got
                sessions.append(got[1])
                continue
        stmt = members.current_stmt(eng, sess)
        view = SessionView(
            sess.name,
            sid,
            eng.t.sessions[sess.cls].ir.name,
            sess.index,
            sess.serial,
            _session_state(eng, sess),
            sess.arrived,
            attrs,
            tuple(_hold_view(eng, sess, h, made) for h in sess.holds),
            stmt.span if stmt is not None else None,
        )
        if key is not None:
            sessions_now[sid] = (key, view)
        sessions.append(view)
    c = s.counters
    rejected = sum(cc[2] for cc in s.class_counts)
    done = sum(cc[1] for cc in s.class_counts)
    counts = Counts(
        c["arrived"], len(s.live), done, rejected, c["preemptions"], c["evictions"], c["spills"],
        c["drops"], c["reloads"],
    )  # fmt: skip
    if attrs_made is not None:
        attrs_made.clear()
        attrs_made.update(attrs_now)
    if sessions_made is not None:
        sessions_made.clear()
        sessions_made.update(sessions_now)
    last = events[cursor] if 0 <= cursor < len(events) else None
    return Snapshot(
        s.now,
        cursor,
        len(events),
        last,
        pools,
        _stage_views(eng),
        tuple(sessions),
        counts,
        eng.is_over(),
        s.halted,
        s.violation,
        wanted,
        planned,
    )


def _wanted(shown: Shown, pools: tuple[PoolView, ...]) -> frozenset[int]:
    """The sessions `shown` asks for: its own, and its blocks' holders in `pools`."""
    out = set(shown.sessions)
    for label, block in shown.blocks:
        owners = (p.block_owner(block) for p in pools if p.label == label)
        out.update(o.session_id for o in owners if o is not None)
    return frozenset(out)
