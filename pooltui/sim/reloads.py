"""Reloads (content-and-reload.md §3): the continuation of a hold's content found down its
pool's spill chain, copied back over a link instead of recomputed.

Owns a reload's plan at an attempt (`plan`: the walk down the tiers, the limit, the
predicate, the figures the hold is attempted with, and whether it waits for another
hold's reload in flight of the same blocks; it writes nothing), its start at
admission (`start`: the tiers' entries refreshed, the hold marked reloading, the job, the
`reload` event) and its landing (`land`: the loaded blocks registered, the `reloaded`
event, the session going on). Block figures change only through `blocks`; the job runs on
its link through `links`. It decides nothing about admission itself (`admit` asks it).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from pooltui.lang.errors import SpecRuntimeError
from pooltui.lang.exprs import normal
from pooltui.lang.ir import Expr
from pooltui.lang.words import number
from pooltui.sim import blocks, links, members, runs, watch, why
from pooltui.sim.codes import Number
from pooltui.sim.content import Content
from pooltui.sim.state import S_ACTIVE, S_RELOADING, Job, PoolState, Session, StageState
from pooltui.sim.state import Hold as HoldState

if TYPE_CHECKING:
    from pooltui.sim.engine import Engine


class Reload:
    """A hold's reload as planned at an attempt: the units hit in the pool itself, the
    loadable units past them, the header's figures with hit + loadable as `computed`, and
    where they come from ((tier pool member, lo, hi), chain order, within [hit, hit +
    units)). `waits`: the session whose reload in flight is loading some of those blocks
    into the pool (-1: none); the hold waits for it to land, then hits them there."""

    __slots__ = ("hit", "need", "ranges", "reserve", "size", "units", "waits")

    def __init__(
        self,
        hit: int,
        units: int,
        size: int,
        need: int,
        reserve: Number | None,
        ranges: list[tuple[int, int, int]],
    ) -> None:
        self.hit = hit
        self.units = units
        self.size = size
        self.need = need
        self.reserve = reserve
        self.ranges = ranges
        self.waits = -1


def _value(eng: Engine, expr: Expr, sess: Session, h: HoldState, computed: int) -> Number:
    """An expression of the hold's header, as if `computed` units were computed."""
    env = eng.env.bind(sess, h, eng.s.now)
    env.computed = computed
    return eng.t.fn(expr)(env)


def _limit(upto: int, block: int) -> int:
    """The most a hit may reach for an attempt whose max(U, context) is `upto`: never the
    hold's last unit, in whole blocks (content-and-reload.md §2)."""
    return (upto - 1) // block * block if upto >= 1 else 0


def walk(eng: Engine, p: PoolState, h: HoldState, hit: int) -> list[tuple[int, int, int]]:
    """Down the spill chain from unit `hit`: in each tier, the run of the content's tier
    blocks from the one holding the first missing unit; where it stops, the next tier
    from there. (tier pool member, lo, hi) for each tier that has some, chain order."""
    pd = eng.t.pools[p.decl]
    content = h.table.content
    u = hit
    found: list[tuple[int, int, int]] = []
    for decl, m in pd.reload_tiers[p.member]:
        tn = eng.pool_base[decl] + m
        end = blocks.tier_run(eng.s.pools[tn], content, u)
        if end > u:
            found.append((tn, u, end))
            u = end
    return found


def plan(eng: Engine, p: PoolState, h: HoldState, sess: Session, hit: int) -> Reload | None:
    """The reload of an attempt whose own hit is `hit` units, or None (nothing loadable,
    the predicate refuses, or the hold with the loaded units could never fit: it is then
    attempted as without `reload`, and recomputes them). Writes nothing."""
    pd = eng.t.pools[p.decl]
    rl = pd.ir.reload
    if rl is None or pd.reload_work is None:
        return None
    found = walk(eng, p, h, hit)
    if not found:
        return None
    B = p.block
    cand = found[-1][2] // B * B  # in this pool's whole blocks
    if cand <= hit:
        return None
    # Limited like a hit: the header sees the candidate as computed, then (if the limit
    # cut it) what is left, as language.md §8.1 does for the hit.
    stmt = members.hold_stmt(eng, h)
    what = "the hold's units"
    size = eng.units(_value(eng, stmt.units, sess, h, cand), stmt.span, what)
    end = min(cand, _limit(max(size, h.context), B))
    if end <= hit:
        return None
    if end < cand:
        size = eng.units(_value(eng, stmt.units, sess, h, end), stmt.span, what)
    units = end - hit
    if pd.reload_when is not None:
        env = eng.env.bind(sess, h, eng.s.now)
        env.session = None  # a reload's expressions may not draw
        env.size = units
        env.hold_pool = h.pool
        if not pd.reload_when(env):
            return None
    size = max(size, end)
    need = 0
    if stmt.need is not None:
        need = eng.units(_value(eng, stmt.need, sess, h, end), stmt.need.span, "need")
    reserve: Number | None = None
    if stmt.reserve is not None:
        reserve = _value(eng, stmt.reserve, sess, h, end)
        if reserve == math.inf:  # no reserve, as on admission (`admit.plan_hold`)
            reserve = None
    biggest = max(size, need, reserve if reserve is not None and reserve >= 0 else 0)
    if biggest > p.cap or (reserve is not None and (reserve < 0 or max(size, need) > reserve)):
        return None  # the hold would never fit so: it recomputes instead
    ranges = [(tn, lo, min(hi, end)) for tn, lo, hi in found if lo < end]
    r = Reload(hit, units, size, need, reserve, ranges)
    r.waits = loader(eng, p, h.table.content, hit, end)
    return r


def loader(eng: Engine, p: PoolState, content: Content, lo: int, hi: int) -> int:
    """The session whose reload in flight into `p` (in service or queued) is loading one of
    the blocks of `content` in [lo, hi) (the first such job's); -1 if none. Copying them
    again would make a second copy of each and put the same work on the link twice: vLLM's
    offloading connector delays such a request until the load lands, then it hits the
    landed blocks (docs/decisions.md)."""
    lk = _link(eng, p)
    pi = eng.s.pools.index(p)
    jobs = [j for j in (*lk.jobs, *lk.waiting_jobs) if j.kind == "reload" and j.source == pi]
    if not jobs:
        return -1
    B = p.block
    want = {content.block_hash(j, B) for j in range(lo // B, hi // B)}
    for job in jobs:
        h = next(x for x in eng.s.live[job.sid].holds if x.key == job.hold)
        c = h.table.content
        for j in range((h.computed - h.reload_units) // B, h.computed // B):
            if c.block_hash(j, B) in want:
                return job.sid
    return -1


def _link(eng: Engine, p: PoolState) -> StageState:
    pd = eng.t.pools[p.decl]
    ref = pd.reload_link[p.member]
    assert ref is not None
    return eng.s.stages[eng.stage_base[ref[0]] + ref[1]]


def tier_units(eng: Engine, job: Job) -> tuple[tuple[str, int], ...]:
    """A reload job's tiers as (pool label, units), chain order."""
    return tuple((eng.s.pools[tn].label, units) for tn, units in job.tiers)


def start(eng: Engine, sess: Session, p: PoolState, h: HoldState, r: Reload) -> None:
    """The hold was just admitted with its reload's units as computed: the copy starts on
    the link (or waits for a lane), the tiers' entries read are refreshed, and the hold
    stands still, reloading, until it lands (`land`)."""
    s = eng.s
    pd = eng.t.pools[p.decl]
    rl = pd.ir.reload
    assert rl is not None and pd.reload_work is not None
    lk = _link(eng, p)
    env = eng.env.bind(sess, h, s.now)
    env.session = None
    env.size = r.units
    env.hold_pool = h.pool
    work = pd.reload_work(env)
    if work < 0 or math.isnan(work):
        raise SpecRuntimeError(f"reload work is {number(work)}, which is negative", rl.work.span)
    content = h.table.content
    for tn, lo, hi in r.ranges:  # a reload copies: the tiers keep their blocks, refreshed
        blocks.touch(eng, s.pools[tn], content, lo, hi)
    h.reloading = True
    watch.hold(eng, h)
    h.reload_units = r.units
    job = Job("reload", s.stages.index(lk), sess.sid, work)
    job.units = r.units
    job.source = h.pool
    job.hold = h.key
    job.tiers = tuple((tn, hi - lo) for tn, lo, hi in r.ranges)
    job.queued_at = s.now
    tiers = tier_units(eng, job)
    lane = len(lk.jobs) < lk.lanes
    ahead = 0 if lane else len(lk.jobs) + len(lk.waiting_jobs)
    sess.state = S_RELOADING
    sess.waiting_for = why.reload_wait(r.units, tiers, lk.label, lane)
    s.counters["reloads"] += 1
    links.submit(eng, lk, job)  # (work inf: it never lands, the session stands forever)
    B = p.block
    loading = tuple(h.table.blocks[r.hit // B : (r.hit + r.units) // B])
    copy = math.inf if math.isinf(work) else (0.0 if math.isinf(lk.rate) else work / lk.rate)
    name = sess.name
    eng.emit(
        "reload",
        lambda: why.reloading(r.units, name, tiers, lk.label, copy, ahead),
        session=sess,
        pool=p,
        stage=lk,
        units=r.units,
        blocks=loading,
        span=rl.span,
        data=(("hit", r.hit), ("tiers", tiers), ("work", normal(work)), ("ahead", ahead)),
    )


def land(eng: Engine, lk: StageState, job: Job) -> None:
    """A reload job landed: the loaded blocks are registered in the pool (others hit them
    from now on), and the session goes on from the start of its hold's body (or back to
    the run it was in, re-admitted after a preemption), from hit + loaded as computed."""
    s = eng.s
    sess = s.live[job.sid]
    h = next(x for x in sess.holds if x.key == job.hold)
    p = s.pools[h.pool]
    units = h.reload_units
    hit = h.computed - units
    blocks.register(p, h, h.computed, sess)
    B = p.block
    loaded = tuple(h.table.blocks[hit // B : h.computed // B])
    h.reloading = False
    h.reload_units = 0
    watch.hold(eng, h)
    s.counters["reloaded_units"] += units
    sess.state = S_ACTIVE
    sess.waiting_for = ""
    tiers = tier_units(eng, job)
    took = s.now - job.queued_at
    rl = eng.t.pools[p.decl].ir.reload
    name = sess.name
    eng.emit(
        "reloaded",
        lambda: why.reloaded(name, units, p.label, tiers, took),
        session=sess,
        pool=p,
        stage=lk,
        units=units,
        blocks=loaded,
        span=rl.span if rl is not None else None,
        data=(("tiers", tiers), ("took", took)),
    )
    if sess.run is not None:
        runs.resume_run(eng, sess)  # re-admitted after a preemption
    else:
        eng.proceed(sess)
