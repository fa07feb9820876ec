"""Spills and links: jobs on link stages (a session's `send`, an evicted prefix's spill to
its tier), their lanes and their landing.

Owns a link's jobs and waiting jobs. An evicted prefix is spilled only when its pool's
`spill when` holds; a landed spill becomes cache through `blocks.cache_spilled` (this
module changes no block figures itself); a landed send wakes its session.
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
from pooltui.sim.state import S_FOREVER, S_SENDING, Entry, Job, PoolState, Session, StageState

if TYPE_CHECKING:
    from pooltui.sim.engine import Engine


def maybe_spill(eng: Engine, p: PoolState, e: Entry, units: int, name: str) -> None:
    """`units` units of `e` were just evicted from `p`: spill them when its `spill when` holds."""
    pd = eng.t.pools[p.decl]
    assert pd.spill_when is not None and pd.spill_work is not None
    spill = pd.ir.spill
    assert spill is not None
    env = blocks.entry_env(eng, p, e, units)
    if not pd.spill_when(env):
        return
    work = pd.spill_work(env)
    if work < 0:
        raise SpecRuntimeError(f"spill work is {number(work)}, which is negative", spill.span)
    tier = pd.spill_tier[p.member]
    link = pd.spill_link[p.member]
    assert tier is not None and link is not None
    tier_n = eng.pool_base[tier[0]] + tier[1]
    link_n = eng.stage_base[link[0]] + link[1]
    job = Job("spill", link_n, e.sid, work)
    job.units = units
    job.tier = tier_n
    job.source = eng.s.pools.index(p)
    sess = eng.s.live.get(e.sid)
    job.attrs = dict(sess.attrs) if sess is not None else dict(e.attrs)
    lk = eng.s.stages[link_n]
    eng.s.counters["spills"] += 1
    eng.emit(
        "spill",
        lambda: why.spilling(units, name, p.label, eng.s.pools[tier_n].label, lk.label, work),
        session=sess,
        pool=p,
        stage=lk,
        name=name,
        units=units,
        span=spill.span,
        data=(("tier", eng.s.pools[tier_n].label), ("work", normal(work))),
    )
    submit(eng, lk, job)


def land_spill(eng: Engine, job: Job) -> None:
    """A spill job landed: its whole blocks join the session's entry in the tier, or are
    dropped when they cannot fit."""
    s = eng.s
    tier = s.pools[job.tier]
    sess = s.live.get(job.sid)
    name = sess.name if sess is not None else members.sid_name(eng, job.sid)
    # An entry is whole blocks of computed prefix: a part of a tier block is not kept.
    units = (job.units // tier.block) * tier.block
    n = blocks.nb(tier, units)
    if n == 0 or n > blocks.available(tier, protect=job.sid):
        s.counters["drops"] += 1
        eng.emit(
            "spill-drop",
            lambda: why.spill_dropped(
                job.units, units, name, tier.label, n, blocks.available(tier, job.sid)
            ),
            session=sess,
            pool=tier,
            name=name,
            units=units,
            span=eng.t.pools[tier.decl].ir.span,
        )
        return
    e, phys = blocks.cache_spilled(eng, tier, job.sid, units, n, job.attrs)
    units = e.units
    eng.emit(
        "spilled",
        lambda: why.spilled(name, tier.label, units),
        session=sess,
        pool=tier,
        name=name,
        units=units,
        blocks=tuple(phys),
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


def start_job(eng: Engine, lk: StageState, job: Job) -> None:
    now = eng.s.now
    job.start = now
    # inf work is never done, whatever the rate (inf / inf included); finite work on an
    # inf rate takes no time.
    job.end = math.inf if math.isinf(job.work) else now + job.work / lk.rate
    lk.jobs.append(job)
    if math.isinf(job.end):
        # It holds its lane forever and never lands: nothing to schedule (the clock never
        # jumps to inf). A session sending it sleeps forever.
        sess = eng.s.live.get(job.sid) if job.kind == "send" else None
        if sess is not None:
            sess.state = S_FOREVER
            sess.waiting_for = f"sending forever on {lk.label} (work {number(job.work)})"
        return
    eng.push(job.end, P_LINK, eng.s.stages.index(lk), "link", eng.s.stages.index(lk), job)


def finish_job(eng: Engine, lk: StageState, job: Job) -> None:
    lk.jobs.remove(job)
    if lk.waiting_jobs:
        start_job(eng, lk, lk.waiting_jobs.pop(0))
    if job.kind == "spill":
        land_spill(eng, job)
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
