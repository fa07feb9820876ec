"""The fast mode's steady residents (`fast.py`): their figures, kept beside the state
(`Lazy`, one per step stage member), and the block work their steps defer: registering
the private blocks they complete once per launched iteration, and finding which of them
complete a block of their content's pieces (registered step by step, or, in a fused
stretch, each resident's at once where no waiting hold could tell: `pieces_at`); the
steps of a fused stretch (`stretch_one_pool` in a stage of one pool, each phase's work
found once; `stretch_pools` in a stage of several) and what they planned, done
(`take_stretch`: the crossing blocks, `crossing_blocks`, then the piece blocks).

Reads the state and the steady figures; changes blocks only through `blocks`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from pooltui.sim import blocks, runs
from pooltui.sim.content import Content
from pooltui.sim.state import Hold as HoldState
from pooltui.sim.state import Session, StageState, State

if TYPE_CHECKING:
    from pooltui.sim.engine import Engine
    from pooltui.sim.fuse import Guard


class Lazy:
    """One step stage member's steady residents: the fast mode's own figures, kept beside
    the state that the per-event rules share (and that history checkpoints)."""

    __slots__ = ("buckets", "dcount", "fused", "marks", "pieces", "plain", "steady")

    def __init__(self) -> None:
        self.dcount = 0  # steady steps taken so far
        # sid -> (d0, c0, s0): its computed and steps are c0 / s0 at step count d0, plus
        # the steps since
        self.steady: dict[int, tuple[int, int, int]] = {}
        self.plain: dict[int, None] = {}  # sids of the other residents
        self.buckets: dict[tuple[int, int], list[int]] = {}  # (pool, phase) -> sids
        self.marks: list[tuple[int, int, int, int, int]] = []  # (D, kind, order, sid, d0)
        self.fused = 0  # steady iterations the current iteration stands for (0: none)
        # sid -> the units up to which its steps complete blocks of its content's pieces
        # (those blocks are registered step by step, in resident order: anyone may hit
        # them, so a fused stretch takes such a step only where no waiting hold's
        # attempt could tell: `pieces_at`)
        self.pieces: dict[int, int] = {}


def completing(s: State, st: StageState, lz: Lazy) -> list[int]:
    """Steady residents whose step in this iteration completes a block of their
    content's pieces: those of the bucket whose phase the step completes a block in (they
    drop out of `pieces` there once past their last)."""
    out: list[int] = []
    tops = lz.pieces
    if not tops:
        return out
    d = lz.dcount + 1  # computed after this step: c0 + d - d0
    for pi in st.memory:
        bucket = lz.buckets.get((pi, d % s.pools[pi].block))  # (d0 - c0) ≡ d: a block ends
        if not bucket:
            continue
        for sid in bucket:
            top = tops.get(sid)
            if top is None:
                continue
            d0, c0, _ = lz.steady[sid]
            if c0 + d - d0 > top:
                del tops[sid]
                continue
            out.append(sid)
    return out


def register_steady(s: State, st: StageState, lz: Lazy, k: int) -> None:
    """The blocks the steady residents complete in the k steady steps from the stage's
    step count on are registered (as the per-event mode registers them when each
    step's token is taken). Blocks of pieces were registered step by step already
    (`FastEngine.bulk_iteration`, `FastEngine.iteration_end`); only a steady resident's
    private blocks past any its session registered before (`FastEngine.try_steady`) are
    left: nothing can hit them meanwhile, so registering them once per launched iteration
    is exact."""
    d = lz.dcount
    for pi in st.memory:
        p = s.pools[pi]
        block = p.block
        phases = range(block) if k >= block else [(d + i + 1) % block for i in range(k)]
        holds: list[HoldState] = []
        uptos: list[int] = []
        sessions: list[Session] = []
        for phase in phases:
            bucket = lz.buckets.get((pi, phase))
            if not bucket:
                continue
            for sid in bucket:
                sess = s.live[sid]
                run = sess.run
                assert run is not None
                d0, c0, _ = lz.steady[sid]
                holds.append(run.h)
                uptos.append(c0 + d + k - d0)
                sessions.append(sess)
        if holds:
            blocks.register_each(p, holds, uptos, sessions)


def pieces_at(
    s: State, st: StageState, lz: Lazy, d: int, guards: dict[int, Guard]
) -> list[tuple[int, int, int, int]] | None:
    """The piece blocks that steady step d completes, in resident order, as (pool, sid,
    computed after it, the block's hash); None when one of them may not be registered
    inside a fused stretch (`FastEngine.iteration_end`): its hash is the next one a
    waiting head's lookup would take (its hit would grow), or the pool had it registered
    already (a copy the stretch may evict: whether the new one counts as a duplicate
    would depend on the order)."""
    out: list[tuple[int, int, int, int]] = []
    for pi in st.memory:
        p = s.pools[pi]
        B = p.block
        bucket = lz.buckets.get((pi, (d + 1) % B))  # computed + 1 ≡ 0 (mod B) after d
        if not bucket:
            continue
        table = p.ledger.table
        for sid in bucket:
            top = lz.pieces.get(sid)
            if top is None:
                continue
            d0, c0, _ = lz.steady[sid]
            upto = c0 + d - d0 + 1
            if upto > top:
                continue
            run = s.live[sid].run
            assert run is not None
            h = run.h.table.content.block_hash(upto // B - 1, B)
            if h == guards[pi].after or h in table:
                return None
            out.append((pi, sid, upto, h))
    return out


def stretch_one_pool(
    eng: Engine,
    st: StageState,
    lz: Lazy,
    at: tuple[int, int, float, float],
    fused: int,
    bounds: tuple[float, float, float],
    g: Guard,
    plan: list[tuple[float, int, list[HoldState]]],
    regs: dict[tuple[int, int], int],
) -> tuple[int, int, float, float]:
    """`FastEngine.iteration_end`'s stretch in a stage of one pool: its steps, taken as
    its loop for several pools takes them, with one plan item per step (the crossing
    residents' holds in bucket order, as that loop has them). What each phase does is
    found once: the residents crossing there, and those whose step there may complete a
    block of their pieces (`pieces_at`'s, with what it reads of each). Returns (k, d, t,
    last) where it stopped."""
    k, d, t, last = at
    next_due, horizon, duration = bounds
    s = eng.s
    pi = st.memory[0]
    B = s.pools[pi].block
    after, table = g.after, s.pools[pi].ledger.table
    k0, d0 = k, d
    # By phase (d % B): the holds crossing into a block there, and the residents whose
    # step there may complete a block of their pieces, as (sid, computed after the step
    # at k is k + off, its pieces' end, its content).
    cross: list[list[HoldState] | None] = [None] * B
    pieces: list[list[tuple[int, int, int, Content]] | None] = [None] * B
    hot = [False] * B
    steady, tops, live = lz.steady, lz.pieces, s.live
    for (bpi, phase), bucket in lz.buckets.items():
        if bpi != pi or not bucket:
            continue
        cross[phase] = holds = []
        for sid in bucket:
            run = live[sid].run
            assert run is not None
            holds.append(run.h)
        hot[phase] = True
        if not tops:
            continue
        before = (phase - 1) % B  # computed + 1 ≡ 0 (mod B) after the step
        for sid in bucket:
            top = tops.get(sid)
            if top is not None:
                s0, c0, _ = steady[sid]
                run = live[sid].run
                assert run is not None
                items = pieces[before]
                if items is None:
                    items = pieces[before] = []
                    hot[before] = True
                items.append((sid, c0 - s0 + 1 + d0 - k0, top, run.h.table.content))
    # The phase of step k is (k + shift) % B: the loop counts k only.
    shift = d0 - k0
    bounded = horizon != math.inf  # else t + duration <= horizon for every t
    seen: set[int] = set()
    for k in range(k0, fused):
        if t >= next_due or (bounded and t + duration > horizon):
            break
        ph = (k + shift) % B
        if hot[ph]:
            crossing = cross[ph]
            if crossing is not None:  # `Guard.take`, its usual case inline
                n = len(crossing)
                if g.passed < len(g.cuts) and g.cuts[g.passed][0] < g.taken + n - g.free:
                    if not g.take(eng, st, n):
                        break
                elif g.taken + n > g.avail:
                    break
                else:
                    g.taken += n
            items = pieces[ph]
            if items is not None:  # `note_pieces`, inline
                done: list[tuple[int, int]] = []
                hs: set[int] = set()
                ok = True
                for sid, off, top, content in items:
                    upto = k + off
                    if upto > top:
                        continue
                    h = content.block_hash(upto // B - 1, B)
                    if h == after or h in table:
                        ok = False
                        break
                    hs.add(h)
                    done.append((sid, upto))
                if not ok or len(hs) < len(done) or not seen.isdisjoint(hs):
                    break
                seen |= hs
                for sid, upto in done:
                    regs[pi, sid] = upto
            if crossing is not None:
                plan.append((t, pi, crossing))
        last = t
        t = t + duration
    else:  # every step up to `fused` taken
        k = max(k0, fused)
    d = d0 + (k - k0)
    return k, d, t, last


def take_stretch(
    eng: Engine,
    st: StageState,
    plan: list[tuple[float, int, list[HoldState]]],
    regs: dict[tuple[int, int], int],
    start: float,
    lean: bool,
) -> None:
    """What a fused stretch planned (`stretch_one_pool`, `stretch_pools`), done: its
    crossing blocks in order (a recorded eviction, or any under `evict by`, whose keys
    may read the clock, at its iteration's start time; else in one go per pool), each
    hold's block kept out of its pool's use integral before its iteration; then the piece
    blocks their steps complete, each resident's at once: none was registered when the
    stretch began, so no eviction touched a copy of one (`pieces_at`), and none is
    registered twice."""
    s = eng.s
    batch: dict[int, list[HoldState]] = {}
    if lean and any(eng.t.pools[s.pools[pi].decl].evict_keys is not None for pi in st.memory):
        lean = False  # `evict by` keys may read the clock: each crossing at its start time
    if lean and len(st.memory) == 1:  # the loop below, for one pool
        p = s.pools[st.memory[0]]
        area, B = p.area, p.block
        taking: list[HoldState] = []
        for t_j, _, holds in plan:
            x = B * (t_j - start)
            for _ in holds:
                area -= x
            taking.extend(holds)
        p.area = area
        if taking:
            blocks.one_more_each(eng, p, taking)
        plan = []
    for t_j, pi, holds in plan:
        p = s.pools[pi]
        x = p.block * (t_j - start)  # not there before t_j: each hold's, in order
        for _ in holds:
            p.area -= x
        if lean:
            batch.setdefault(pi, []).extend(holds)
        else:
            s.now = t_j
            for h in holds:  # one after another, as the plan has them
                crossing_blocks(eng, [h])
    for holds in batch.values():  # pools do not share blocks: one at a time
        crossing_blocks(eng, holds)
    live = s.live
    for (pi, sid), upto in regs.items():
        run = live[sid].run
        assert run is not None
        blocks.register(s.pools[pi], run.h, upto, live[sid])


def crossing_blocks(eng: Engine, holds: list[HoldState]) -> None:
    """Each hold (steady residents crossing into a new block, in resident order) gets
    one block, exactly as one `extend_to` after another would give them (evicting
    cache as the per-event mode would)."""
    pools = eng.s.pools
    i, n = 0, len(holds)
    while i < n:  # runs of one pool at once
        pi = holds[i].pool
        j = i + 1
        while j < n and holds[j].pool == pi:
            j += 1
        blocks.one_more_each(eng, pools[pi], holds[i:j])
        i = j


def stretch_pools(
    eng: Engine,
    st: StageState,
    lz: Lazy,
    at: tuple[int, int, float, float],
    fused: int,
    bounds: tuple[float, float, float],
    guards: dict[int, Guard],
    plan: list[tuple[float, int, list[HoldState]]],
    regs: dict[tuple[int, int], int],
) -> tuple[int, int, float, float]:
    """`FastEngine.iteration_end`'s stretch in a stage of several pools, step by step: a
    step where some resident crosses into a block, or completes a block of its pieces, in
    any pool, takes each pool's blocks (its guard's), then notes its piece blocks; one plan
    item per crossing resident, in resident order. Returns (k, d, t, last) where it
    stopped."""
    k, d, t, last = at
    next_due, horizon, duration = bounds
    s = eng.s
    buckets = lz.buckets
    seen: set[int] = set()
    hot: set[tuple[int, int]] = set()  # (pool, phase)
    phased = [(pi, s.pools[pi].block) for pi in st.memory]
    for (pi, phase), sids in buckets.items():
        if sids:
            hot.add((pi, phase))
            if lz.pieces and not lz.pieces.keys().isdisjoint(sids):
                hot.add((pi, (phase - 1) % s.pools[pi].block))
    while k < fused and t < next_due and t + duration <= horizon:
        if any((pi, d % B) in hot for pi, B in phased):
            cross: list[tuple[int, int, int]] = []
            want: dict[int, int] = {}
            for pi, B in phased:
                bucket = buckets.get((pi, d % B))
                if bucket:
                    want[pi] = len(bucket)
                    cross.extend((runs.resident_order(eng, sid), pi, sid) for sid in bucket)
            if not all(guards[pi].take(eng, st, n) for pi, n in want.items()):
                break
            if lz.pieces and not note_pieces(s, st, lz, d, guards, seen, regs):
                break
            cross.sort()
            for _, pi, sid in cross:
                run = s.live[sid].run
                assert run is not None
                plan.append((t, pi, [run.h]))
        last = t
        k += 1
        d += 1
        t = t + duration
    return k, d, t, last


def note_pieces(
    s: State,
    st: StageState,
    lz: Lazy,
    d: int,
    guards: dict[int, Guard],
    seen: set[int],
    regs: dict[tuple[int, int], int],
) -> bool:
    """Note in `regs` what steady step d registers (`pieces_at`): False, noting nothing,
    when the stretch stops before it (a piece it cannot tell, or a hash the stretch
    registers twice: the second would be a copy)."""
    done = pieces_at(s, st, lz, d, guards)
    if done is None:
        return False
    hs = {x[3] for x in done}
    if len(hs) < len(done) or not seen.isdisjoint(hs):  # a hash twice
        return False
    seen |= hs
    for pi, sid, upto, _ in done:
        regs[pi, sid] = upto
    return True
