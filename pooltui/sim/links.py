"""Spills and links: jobs on link stages (a session's `send`, an evicted prefix's spill to
its tier, a hold's reload from its tiers), their lanes, their landing and each link's busy
time.

Owns a link's jobs and waiting jobs. An evicted prefix is spilled only when its pool's
`spill when` holds, with work only for the tier blocks the tier does not already have; a
landed spill becomes the tier's cached entry through `blocks.land` (this module changes no
block figures itself); a landed send wakes its session; a landed reload is handed to
`reloads` (through `Engine.land_reload`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from pooltui.lang.errors import SpecRuntimeError
from pooltui.lang.exprs import normal
from pooltui.lang.ir import Send
from pooltui.lang.words import number
from pooltui.sim import blocks, members, why
from pooltui.sim.codes import P_LINK
from pooltui.sim.ledger import CacheEntry, Evicted
from pooltui.sim.state import S_FOREVER, S_SENDING, Job, PoolState, Session, StageState

if TYPE_CHECKING:
    from pooltui.sim.engine import Engine

JOB_KINDS = ("spill", "reload", "send")  # the order of a link's `jobs_done`


def maybe_spill(eng: Engine, p: PoolState, e: CacheEntry, gone: list[Evicted], name: str) -> None:
    """Blocks of entry `e` were just evicted from `p` (`gone`): each range of one chain they
    make, re-expressed in the tier's whole blocks, is spilled when `spill when` holds, with
    work only for the tier blocks the tier does not already have.

    A range whose whole tier blocks the tier already has all is not written: no job, no
    link time, counted neither as a spill nor as a drop; it is a `spill` event of 0 units
    (`have` says how many the tier already had), so the log says why nothing moved. A range
    holding no whole tier block is sent and dropped on landing, as before content."""
    pd = eng.t.pools[p.decl]
    assert pd.spill_when is not None and pd.spill_work is not None
    spill = pd.ir.spill
    assert spill is not None
    tier_ref = pd.spill_tier[p.member]
    link_ref = pd.spill_link[p.member]
    assert tier_ref is not None and link_ref is not None
    tier_n = eng.pool_base[tier_ref[0]] + tier_ref[1]
    link_n = eng.stage_base[link_ref[0]] + link_ref[1]
    tier = eng.s.pools[tier_n]
    lk = eng.s.stages[link_n]
    sess = eng.s.live.get(e.sid)
    for content, span_units, write, have in blocks.spill_plan(tier, gone):
        units = len(write) * tier.block
        if not write and have:
            known = have * tier.block
            eng.emit(
                "spill",
                lambda: why.spill_known(known, name, p.label, tier.label),
                session=sess,
                pool=p,
                stage=lk,
                name=name,
                units=0,
                span=spill.span,
                data=(("tier", tier.label), ("work", 0), ("have", known)),
            )
            continue
        if not write:  # less than one whole tier block: sent, dropped on landing
            units = span_units
        env = blocks.entry_env(eng, p, e, units)
        if not pd.spill_when(env):
            continue
        work = pd.spill_work(env)
        if work < 0:
            raise SpecRuntimeError(f"spill work is {number(work)}, which is negative", spill.span)
        job = Job("spill", link_n, e.sid, work)
        job.units = units
        job.tier = tier_n
        job.source = eng.s.pools.index(p)
        job.content = content
        job.js = write
        job.attrs = sess.released if sess is not None else e.attrs  # its last release's
        job.serial = sess.serial if sess is not None else e.serial
        eng.s.counters["spills"] += 1
        data: tuple[tuple[str, object], ...] = (("tier", tier.label), ("work", normal(work)))
        if have:
            data += (("have", have * tier.block),)
        eng.emit(
            "spill",
            lambda: why.spilling(units, name, p.label, tier.label, lk.label, work),
            session=sess,
            pool=p,
            stage=lk,
            name=name,
            units=units,
            span=spill.span,
            data=data,
        )
        submit(eng, lk, job)


def land_spill(eng: Engine, job: Job) -> None:
    """A spill job landed: its tier blocks become one cached entry in the tier (those the
    tier registered meanwhile skipped), or the spill is dropped when they cannot fit even
    after evicting all the tier's cache."""
    s = eng.s
    tier = s.pools[job.tier]
    sess = s.live.get(job.sid)
    name = sess.name if sess is not None else members.sid_name(eng, job.sid)
    content = job.content
    assert content is not None
    todo = [j for j in job.js if not tier.ledger.has(content, j)]
    n = len(todo)
    units = n * tier.block
    room = blocks.available(tier)
    if not job.js or n > room:
        s.counters["drops"] += 1
        eng.emit(
            "spill-drop",
            lambda: why.spill_dropped(job.units, units, name, tier.label, len(job.js), room),
            session=sess,
            pool=tier,
            name=name,
            units=units,
            span=eng.t.pools[tier.decl].ir.span,
        )
        return
    e = blocks.land(eng, tier, content, todo, job.attrs, job.serial)
    phys = tuple(e.blocks) if e is not None else ()
    eng.emit(
        "spilled",
        lambda: why.spilled(name, tier.label, units),
        session=sess,
        pool=tier,
        name=name,
        units=units,
        blocks=phys,
        span=eng.t.pools[tier.decl].ir.span,
    )


def submit(eng: Engine, lk: StageState, job: Job) -> None:
    """A job starts on a free lane, else waits for one (first come, first served)."""
    if len(lk.jobs) < lk.lanes:
        start_job(eng, lk, job)
    else:
        lk.waiting_jobs.append(job)
        sess = eng.s.live.get(job.sid) if job.kind == "send" else None
        if sess is not None:
            sess.waiting_for = f"sending on {lk.label} (waiting for a lane)"
        # (a reload's session says so already: `reloads.start` words its wait)


def start_job(eng: Engine, lk: StageState, job: Job) -> None:
    now = eng.s.now
    job.start = now
    # inf work is never done, whatever the rate (inf / inf included); finite work on an
    # inf rate takes no time.
    job.end = math.inf if math.isinf(job.work) else now + job.work / lk.rate
    lk.jobs.append(job)
    sess = eng.s.live.get(job.sid) if job.kind != "spill" else None
    if math.isinf(job.end):
        # It holds its lane forever and never lands: nothing to schedule (the clock never
        # jumps to inf). A session sending (or reloading) it stands still forever.
        if sess is not None:
            doing = "sending" if job.kind == "send" else "reloading"
            sess.state = S_FOREVER
            sess.waiting_for = f"{doing} forever on {lk.label} (work {number(job.work)})"
        return
    if sess is not None and job.kind == "reload":  # its wait for a lane is over
        tiers = tuple((eng.s.pools[tn].label, units) for tn, units in job.tiers)
        sess.waiting_for = why.reload_wait(job.units, tiers, lk.label, True)
    eng.push(job.end, P_LINK, eng.s.stages.index(lk), "link", eng.s.stages.index(lk), job)


def finish_job(eng: Engine, lk: StageState, job: Job) -> None:
    """A job ends: the link's next waiting job starts first, then the job lands."""
    lk.jobs.remove(job)
    assert job.start is not None and job.end is not None
    lk.link_busy += job.end - job.start
    lk.jobs_done[JOB_KINDS.index(job.kind)] += 1
    if lk.waiting_jobs:
        start_job(eng, lk, lk.waiting_jobs.pop(0))
    if job.kind == "spill":
        land_spill(eng, job)
    elif job.kind == "reload":
        eng.land_reload(lk, job)
    else:
        sess = eng.s.live.get(job.sid)
        if sess is not None:
            eng.wake(sess)


def send(eng: Engine, sess: Session, stmt: Send) -> None:
    """`send LINK (work)`: the session sleeps until its job lands."""
    lk = members.stage_member(eng, stmt.link, sess)
    work = eng.value_of(stmt.work, sess, members.innermost(sess))
    if work < 0 or math.isnan(work):
        raise SpecRuntimeError(f"send work is {number(work)}, which is negative", stmt.span)
    job = Job("send", eng.s.stages.index(lk), sess.sid, work)
    sess.state = S_SENDING
    sess.waiting_for = f"sending on {lk.label}"
    eng.emit(
        "send",
        lambda: why.sends(sess.name, work, lk),
        session=sess,
        stage=lk,
        span=stmt.span,
        data=(("work", normal(work)),),
    )
    submit(eng, lk, job)
