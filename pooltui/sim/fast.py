"""The fast mode: the same simulation, with decode-only work counted arithmetically.

Most of a serving run is residents taking one decode token per iteration. Here such a
resident becomes **steady** once its hold is tight (size = computed = context): its
figures are then `c0 + (D − d0)`, where D is its stage's count of steady steps, and only
the iterations in which it crosses a block boundary touch it (it is kept in a bucket per
block phase). Iterations in which every resident gets what it wants (the last one perhaps
a chunk: what the others leave) are planned in bulk:
the blocks they need are found (free, by evicting cache, or, under `preempt lifo`, by
preempting where the per-event plan would); runs of iterations in which nothing but steady
decoding happens are fused into one action: while a hold waits, only as long as the
stretch's evictions and registrations leave what the queue head's attempt finds as it was
(`fuse.py` says why that is exact).

The result is the state the per-event mode reaches, block for block, and the same events,
except that `iteration`, `iteration-end` and `grow` are not recorded (the differential
test checks this). Anything the bulk rules cannot vouch for falls back to the per-event
logic after making every steady resident plain again.

Owns everything only this mode needs: its switches (`lean`, the QUIET moments, checking
invariants per action), its bulk iterations (which preempt, lifo, in the middle of one as
the per-event rules would) and its steady residents (their figures, `Lazy`, one per stage
member, kept beside the shared state, not in it, and their deferred block work are
`steady.py`'s). It changes the state only through the engine's modules or in the same way
they would (block for block); it may not change what the per-event rules do.
"""

from __future__ import annotations

import bisect
import heapq
import math
from collections.abc import Callable
from typing import Any

from pooltui.lang.ir import Span
from pooltui.sim import blocks, fuse, grow, invariants, iterations, runs, watch
from pooltui.sim.codes import StopReplay
from pooltui.sim.engine import Engine, livelock
from pooltui.sim.events import Violation
from pooltui.sim.state import S_RESIDENT, PoolState, Session, StageState
from pooltui.sim.state import Hold as HoldState
from pooltui.sim.state import Run as RunState
from pooltui.sim.steady import (
    Lazy,
    completing,
    crossing_blocks,
    register_steady,
    stretch_one_pool,
    stretch_pools,
    take_stretch,
)

QUIET = frozenset({"iteration", "iteration-end", "grow"})
DONE, EXIT = 0, 1  # at one step count a run that finishes is done, not over its reserve
PLAIN, CROSS, PIECE = 0, 1, 2  # a resident's part in a bulk iteration, in this order


class FastEngine(Engine):
    def configure(self) -> None:
        """The fast mode's settings, from the tables (called by the engine's constructor)."""
        tables = self.t
        # Nothing records or checks events (a headless run without invariants): the
        # block accounting may take its lean paths, which count events without them.
        self.lean = False
        # Fusing needs every admission attempt to fail the same way while only steady
        # decoding happens (`fuse`): no checks, no spills, no attempt reading the time;
        # FIFO queues, and no hold heading one whose attempt draws.
        self.fusable = fuse.fusable(tables)
        self.pool_fifo = [pd.queue_keys is None for pd in tables.pools]
        self.pool_lifo = [pd.ir.preempt == "lifo" for pd in tables.pools]
        # The resident order of the resident a bulk plan is at: steady residents before
        # it have taken their step (`steady_preempted`).
        self.point = -1
        self.drawing = fuse.drawing(tables)
        self.lazy = [Lazy() for _ in self.s.stages]  # by global stage member
        # Where the run will be cut (`--until`): a fused stretch never runs past it, so
        # the cut finds the state the per-event mode has there.
        self.horizon = math.inf
        self.scheduled_saved: list[list[int]] = []  # `write_out` keeps `scheduled` here

    def lz(self, st: StageState) -> Lazy:
        return self.lazy[self.stage_base[st.decl] + st.member]

    # ------------------------------------------------------------------ steady residents
    def steady_values(self, st: StageState, sess: Session) -> tuple[int, int, int]:
        """(computed, size, steps) of a steady resident now."""
        lz = self.lz(st)
        d0, c0, s0 = lz.steady[sess.sid]
        delta = lz.dcount - d0
        computed = c0 + delta
        # While its iteration is in flight the hold already has the blocks of every fused
        # step (k of them): count its size k ahead so blocks and size agree.
        in_flight = lz.fused if st.busy else 0
        return computed, computed + in_flight, s0 + delta

    def make_plain(self, st: StageState, sess: Session) -> None:
        """Write a steady resident's figures back into its hold and run."""
        run = sess.run
        assert run is not None
        lz = self.lz(st)
        d0, c0, _ = lz.steady[sess.sid]
        computed, size, steps = self.steady_values(st, sess)
        h = run.h
        h.computed = computed
        h.context = computed
        h.size = size
        h.table.size = size
        run.steps = steps
        watch.hold(self, h)
        p = self.s.pools[h.pool]
        if p.ledger.track:  # its table's size changed (for the invariant check)
            p.ledger.mark_table(h.table, 0, 0)
        key = (h.pool, (d0 - c0) % p.block)
        bucket = lz.buckets.get(key)
        if bucket is not None and sess.sid in bucket:
            bucket.remove(sess.sid)
        del lz.steady[sess.sid]
        lz.pieces.pop(sess.sid, None)
        lz.plain[sess.sid] = None
        if st.busy and lz.fused:
            # In the middle of its iteration: it takes its one token like a plain resident.
            if lz.fused > 1:  # pragma: no cover - fused runs end before anything else happens
                raise RuntimeError("a fused iteration was interrupted")
            run.tokens = 1
            run.full = True
            run.phase = "decode"
            st.scheduled.append(sess.sid)
            st.scheduled.sort(key=lambda sid: runs.resident_order(self, sid))

    def make_all_plain(self, st: StageState) -> None:
        for sid in list(self.lz(st).steady):
            self.make_plain(st, self.s.live[sid])

    def try_steady(self, st: StageState, sess: Session) -> None:
        """A plain decoder whose hold is tight becomes steady."""
        run = sess.run
        lz = self.lz(st)
        if run is None or run.kind != "decode" or sess.sid in lz.steady or sess.state != S_RESIDENT:
            return
        h = run.h
        p = self.s.pools[h.pool]
        if p.stage != self.s.stages.index(st) or st.exclusive:
            return
        if not (h.size == h.computed == h.context) or run.steps >= run.target:
            return
        # Steady steps register their private blocks lazily (`register_steady`), blocks of
        # its pieces step by step (`bulk_iteration`, `pieces_at`): none of its session's
        # private blocks registered here may be among them.
        if h.computed < sess.priv_hi.get(h.pool, 0):
            return
        limit = p.cap if h.reserve is None else min(p.cap, h.reserve)
        room = math.floor(limit) - h.computed if not math.isinf(limit) else 1 << 62
        if room <= 0:
            return
        d0, c0, s0 = lz.dcount, h.computed, run.steps
        lz.steady[sess.sid] = (d0, c0, s0)
        top = h.table.content.total // p.block * p.block  # the end of its last piece block
        if c0 < top:
            lz.pieces[sess.sid] = top
        lz.plain.pop(sess.sid, None)
        key = (h.pool, (d0 - c0) % p.block)
        bucket = lz.buckets.setdefault(key, [])
        order = h.admit_order
        keys = [runs.resident_order(self, x) for x in bucket]
        bucket.insert(bisect.bisect_left(keys, order), sess.sid)
        heapq.heappush(lz.marks, (d0 + run.target - s0, DONE, order, sess.sid, d0))
        if room < 1 << 62:
            heapq.heappush(lz.marks, (d0 + room, EXIT, order, sess.sid, d0))

    def next_mark(self, lz: Lazy) -> tuple[int, int, int, int, int] | None:
        """The first mark still valid (its resident live, steady since the mark was made);
        those before it are dropped."""
        marks, steady, live = lz.marks, lz.steady, self.s.live
        while marks:
            m = marks[0]
            sess = live.get(m[3])
            figures = steady.get(m[3])
            if sess is None or sess.run is None or figures is None or figures[0] != m[4]:
                heapq.heappop(marks)
                continue
            return m
        return None

    # ------------------------------------------------------------------ overrides
    def emit(
        self,
        moment: str,
        why: str | Callable[[], str],
        session: Session | None = None,
        pool: PoolState | None = None,
        name: str | None = None,
        stage: StageState | None = None,
        others: tuple[str, ...] = (),
        units: int | None = None,
        blocks: tuple[int, ...] = (),
        span: Span | None = None,
        data: tuple[tuple[str, Any], ...] = (),
    ) -> None:
        if moment in QUIET:  # not recorded, not counted
            return
        if self.record:
            super().emit(moment, why, session, pool, name, stage, others, units, blocks, span,
                         data)  # fmt: skip
            return
        # `Engine.emit` unrecorded, inline (its `event_done` is this mode's, a no-op).
        s = self.s
        index = s.n_events
        if index - s.progress >= self.still_limit:
            livelock(self, span, session)
        s.n_events = index + 1
        self.last = (index, s.now, moment, why, session, pool, name, stage, others, units,
                     blocks, span, data)  # fmt: skip
        if self.stop_after is not None and index + 1 >= self.stop_after:
            raise StopReplay()

    def event_done(self) -> None:
        """Invariants are checked after each action, not each event: inside an action the
        fast mode allocates fused iterations' blocks ahead of their steps."""

    def batchable(self, n: int) -> bool:
        s = self.s
        return self.stop_after is None and s.n_events + n - 1 - s.progress < self.still_limit

    def action_done(self) -> None:
        if self.invariants:
            self.check_now()

    def iteration_event(self, st: StageState, tokens: int, admitted: list[str], preempted: bool,
                        duration: float, prefills: int, decodes: int) -> None:  # fmt: skip
        """No `iteration` event (see QUIET)."""

    def grow_event(self, sess: Session, p: PoolState, new_size: int, need: int,
                   added: list[int], span: Span) -> None:  # fmt: skip
        """No `grow` event (see QUIET)."""

    def join_stage(self, sess: Session, st: StageState) -> None:
        self.lz(st).plain[sess.sid] = None
        super().join_stage(sess, st)
        if not st.planning and not st.busy:
            # A decode run that starts on a tight hold (right after its prefill) is steady
            # from its first step.
            self.try_steady(st, sess)

    def leave_stage(self, sess: Session) -> None:
        run = sess.run
        if run is not None:
            st = self.s.stages[run.stage]
            lz = self.lz(st)
            if sess.sid in lz.steady:
                self.make_plain(st, sess)
            lz.plain.pop(sess.sid, None)
        super().leave_stage(sess)

    def preempt(self, h: HoldState, grower: Session, p: PoolState, need: int) -> None:
        victim = self.s.live[h.sid]
        if victim.run is not None:
            st = self.s.stages[victim.run.stage]
            lz = self.lz(st)
            if victim.sid in lz.steady:
                # In a bulk plan (`bulk_iteration`) that has passed it, it took its step.
                served = st.planning and self.steady_preempted(st, victim)
                self.make_plain(st, victim)
                if served:  # its hold grew by its token (`grow.grow_to`)
                    rh = victim.run.h
                    rh.size = rh.table.size = rh.computed + 1
                    watch.hold(self, rh)
            lz.plain.pop(victim.sid, None)
        super().preempt(h, grower, p, need)

    def steady_preempted(self, st: StageState, victim: Session) -> bool:
        """A steady resident is preempted while its stage's bulk plan is made: its token,
        counted ahead, is given back. True when the plan has passed it: it took that
        token, and the per-event mode registered the block it completes then."""
        st.budget_left += 1
        run = victim.run
        assert run is not None
        if run.h.admit_order >= self.point:
            return False
        lz = self.lz(st)
        d0, c0, _ = lz.steady[victim.sid]
        blocks.register(self.s.pools[run.h.pool], run.h, c0 + lz.dcount - d0 + 1, victim)
        return True

    def write_out(self) -> list[tuple[HoldState, RunState, int, int, int, int, int, str]]:
        """Write every steady resident's figures into its hold and run (to look at them);
        `restore` puts the lazy ones back. A steady resident in an iteration in flight
        shows the one decode token it takes there, as the per-event mode has it."""
        saved = []
        self.scheduled_saved = [list(st.scheduled) for st in self.s.stages]
        for st in self.s.stages:
            lz = self.lz(st)
            for sid in lz.steady:
                sess = self.s.live[sid]
                run = sess.run
                assert run is not None
                h = run.h
                saved.append(
                    (h, run, h.computed, h.context, h.size, run.steps, run.tokens, run.phase)
                )
                computed, size, steps = self.steady_values(st, sess)
                h.computed, h.context, h.size, run.steps = computed, computed, size, steps
                if st.busy and lz.fused == 1:
                    run.tokens, run.phase = 1, "decode"
                    st.scheduled.append(sid)
        return saved

    def restore(
        self, saved: list[tuple[HoldState, RunState, int, int, int, int, int, str]]
    ) -> None:
        for h, run, c, x, z, n, tokens, phase in saved:
            h.computed, h.context, h.size, run.steps = c, x, z, n
            run.tokens, run.phase = tokens, phase
        for st, scheduled in zip(self.s.stages, self.scheduled_saved, strict=True):
            st.scheduled = scheduled

    def check_invariants(self) -> Violation | None:
        w = self.watch
        if w is None:
            return invariants.check(self.s, self.steady_figures())
        # Steady residents' holds are checked with the figures they stand for, each of
        # them every action (those figures move with the stage's step count; no rule
        # touches the hold). Their figures go to the rest of the check (a touched one is
        # checked again there) and to the full count if it is asked.
        s = self.s
        live, pools = s.live, s.pools
        steady: dict[int, tuple[int, int]] = {}
        for i in range(len(s.stages)):
            lz = self.lazy[i]
            if not lz.steady:
                continue
            st = s.stages[i]
            ahead = lz.fused if st.busy else 0  # see steady_values
            dcount = lz.dcount
            if ahead < 0:  # computed > size for every one of them
                return invariants.named(s, w, self.steady_figures())
            for sid, (d0, c0, _) in lz.steady.items():
                run = live[sid].run
                assert run is not None
                h = run.h
                computed = c0 + dcount - d0
                size = computed + ahead
                steady[h.key] = (computed, size)
                # `invariants.hold_violation`'s tests, inline (computed ≤ size is above).
                reserve = h.reserve
                if len(h.table.blocks) != -(-size // pools[h.pool].block) or (
                    reserve is not None and size > reserve
                ):
                    return invariants.named(s, w, self.steady_figures())
        return invariants.check_event(s, w, steady)

    def steady_figures(self) -> dict[int, tuple[int, int]]:
        """By hold key, the (computed, size) that steady residents' holds stand for."""
        steady: dict[int, tuple[int, int]] = {}
        for st in self.s.stages:
            for sid in self.lz(st).steady:
                sess = self.s.live[sid]
                assert sess.run is not None
                computed, size, _ = self.steady_values(st, sess)
                steady[sess.run.h.key] = (computed, size)
        return steady

    def start_iteration(self, st: StageState) -> bool:
        lz = self.lz(st)
        s = self.s
        # Steady residents about to pass their reserve go back to the per-event rules.
        while True:
            m = self.next_mark(lz)
            if m is None or m[1] != EXIT or m[0] > lz.dcount:
                break
            heapq.heappop(lz.marks)
            self.make_plain(st, s.live[m[3]])
        if not lz.steady:
            return super().start_iteration(st)
        plan = self.bulk_plan(st, lz)
        if plan is None:
            self.make_all_plain(st)
            return super().start_iteration(st)
        return self.bulk_iteration(st, lz, plan)

    def bulk_plan(self, st: StageState, lz: Lazy) -> list[tuple[int, int, int]] | None:
        """The crossing blocks of this iteration in resident order, as (order, sid), when
        every resident gets all it wants (but the last, which may take a chunk: what the
        others leave) and every block can be found; else None."""
        s = self.s
        if st.exclusive:
            return None
        steady_n = len(lz.steady)
        want = steady_n
        need: dict[int, int] = {}
        live = s.live
        merged: list[tuple[int, int, int]] = []  # (resident order, sid, its part)
        for sid in lz.plain:
            run = live[sid].run
            assert run is not None
            merged.append((run.h.admit_order, sid, PLAIN))
        if len(merged) > 1:
            merged.sort()
        for _, sid, _ in merged:
            run = live[sid].run
            assert run is not None
            h = run.h
            w = runs.tokens_wanted(run.kind, run.target, h)
            if w > st.budget - want:
                # The per-event plan serves every resident before the last one all it
                # wants: the last one takes what they leave (a chunk of its prefill).
                if sid != st.residents[-1]:
                    return None
                w = runs.tokens_taken(w, st.budget - want, st.whole) or 0
            want += w
            p = s.pools[h.pool]
            grown = blocks.nb(p, h.computed + w) - len(h.table.blocks)
            if grown > 0:
                need[h.pool] = need.get(h.pool, 0) + grown
        for pi in st.memory:
            p = s.pools[pi]
            bucket = lz.buckets.get((pi, lz.dcount % p.block))
            if bucket:
                need[pi] = need.get(pi, 0) + len(bucket)
                for sid in bucket:
                    run = live[sid].run
                    assert run is not None
                    merged.append((run.h.admit_order, sid, CROSS))
        here = -1
        for pi, n in need.items():
            p = s.pools[pi]
            if p.waiting_grows:
                return None
            if n > blocks.available(p):
                # Too few blocks: the plan preempts as the per-event one would (lifo, the
                # residents of this stage), in the middle of it.
                if here < 0:
                    here = s.stages.index(st)
                if not self.pool_lifo[p.decl] or p.stage != here:
                    return None
        for sid in completing(s, st, lz):
            run = live[sid].run
            assert run is not None
            merged.append((run.h.admit_order, sid, PIECE))
        merged.sort()
        return merged

    def bulk_iteration(self, st: StageState, lz: Lazy, order: list[tuple[int, int, int]]) -> bool:
        s = self.s
        n0 = s.n_events
        preempts0 = s.counters["preemptions"]
        st.planning = True
        st.budget_left = st.budget - len(lz.steady)
        st.preempted = False
        st.scheduled = []
        admitted: list[str] = []
        try:
            # Residents in admission order: plain ones plan as usual, crossing steady ones
            # take their next block (evicting cache, or preempting, as the per-event mode
            # would). One that preempts itself ends the plan, as in the per-event mode.
            stop = -1
            i, n = 0, len(order)
            while i < n and stop < 0:
                o, sid, kind = order[i]
                if kind == CROSS:  # a run of them at once
                    j = i + 1
                    while j < n and order[j][2] == CROSS:
                        j += 1
                    stop = self.crossing_steps(st, order[i:j])
                    i = j
                    continue
                i += 1
                self.point = o
                if kind == PIECE:  # its token completes a block of its pieces: registered now
                    holder = s.live[sid]
                    run = holder.run
                    if sid not in lz.steady or run is None:  # preempted meanwhile
                        continue
                    d0, c0, _ = lz.steady[sid]
                    blocks.register(s.pools[run.h.pool], run.h, c0 + lz.dcount - d0 + 1, holder)
                    continue
                sess = s.live.get(sid)
                if sess is None or sess.run is None or sid not in st.residents:
                    continue
                if runs.serve(self, st, sess) == "self":
                    stop = o
            self.point = 1 << 62
            if stop >= 0:  # the steady residents past it take no step
                for sid in list(lz.steady):
                    sess = s.live[sid]
                    if runs.resident_order(self, sid) > stop:
                        st.budget_left += 1
                        self.make_plain(st, sess)
            if not st.preempted:
                admitted = iterations.admit_in_iteration(self, st)
        finally:
            st.planning = False
            self.point = -1
        preempted = s.counters["preemptions"] > preempts0
        # Fused iterations are one action: a run cut after its N-th event (`--events`)
        # could stop inside them (and a stretch launched before another stage's event at
        # the same instant would count iterations the per-event mode has not started).
        pure = (
            not st.scheduled
            and not admitted
            and not preempted
            and self.fusable
            and self.stop_after is None
        )
        fused = self.fusion_length(st, lz) if pure else 1
        lz.fused = fused
        return iterations.launch_iteration(
            self, st, admitted, preempted, n0, steady=len(lz.steady), fused=fused
        )

    def crossing_steps(self, st: StageState, items: list[tuple[int, int, int]]) -> int:
        """Steady residents crossing into their next block, in resident order (order,
        sid, CROSS), each take it as its one-token step would (`grow.grow_to`): evicting
        cache, or preempting when there is none. The order of one that preempted itself
        (the plan ends there), else -1."""
        s = self.s
        lz = self.lz(st)
        live, pools = s.live, s.pools
        items = [x for x in items if x[1] in lz.steady]  # not those preempted meanwhile
        if not items:
            return -1
        holds: list[HoldState] = []
        for _, sid, _ in items:
            run = live[sid].run
            assert run is not None
            holds.append(run.h)
        pi = holds[0].pool
        if all(h.pool == pi for h in holds) and len(holds) <= blocks.available(pools[pi]):
            # Nobody is preempted: all in one go.
            self.point = items[-1][0]
            crossing_blocks(self, holds)
            return -1
        for (o, sid, _), h in zip(items, holds, strict=True):
            if sid not in lz.steady:  # preempted meanwhile
                continue
            p = pools[h.pool]
            self.point = o
            if not grow.preempt_for(self, live[sid], h, p, 1):
                return o
            blocks.one_more_block(self, p, h)
        return -1

    def fusion_length(self, st: StageState, lz: Lazy) -> int:
        """How many steady-only iterations can run as one: until a run finishes or must
        leave, another action is due, the blocks run out, or a queue could move."""
        s = self.s
        for pi in st.memory:
            p = s.pools[pi]
            if p.queue and (not self.pool_fifo[p.decl] or p.queue[0].stmt in self.drawing):
                return 1
        # Another step stage idle at this instant with work may start an iteration in this
        # same settle: its end is not on the heap yet, so a stretch could pass it (and take
        # blocks, or evict, at a later iteration's time before that stage's events).
        for other in s.stages:
            if (
                other is not st
                and other.kind == "step"
                and not other.busy
                and (
                    other.residents
                    or other.joining
                    or any(s.pools[pi].queue for pi in other.memory)
                )
            ):
                return 1
        # No run may finish, and none pass its reserve, before the last fused iteration.
        m = self.next_mark(lz)
        limit = (m[0] - lz.dcount) if m is not None else 1 << 30
        return max(1, min(limit, 1 << 30))

    def iteration_end(self, st: StageState, duration: float, fused: int) -> float:
        lz = self.lz(st)
        s = self.s
        end = s.now + duration
        if fused <= 1 or duration <= 0:
            lz.fused = 1 if lz.steady else 0
            if lz.fused:
                register_steady(s, st, lz, 1)
            return end
        # Fuse iterations 2..k while each ends strictly before the next action is due,
        # the blocks they cross can be found and nothing they do changes what a waiting
        # hold's attempt finds (`fuse`). Times are summed as the per-event mode sums.
        next_due = s.heap[0][0] if s.heap else math.inf
        k = 1
        t = end
        start = s.now
        plan: list[tuple[float, int, list[HoldState]]] = []  # (start, pool, holds in order)
        # `cap`: more crossings than the stretch can make.
        cap = len(lz.steady) * (fused // min(s.pools[pi].block for pi in st.memory) + 1)
        guards = {pi: fuse.guard(self, s.pools[pi], cap) for pi in st.memory}
        # The piece blocks the stretch completes: (pool, sid) -> computed after the last,
        # and their hashes (each new to the pool, none twice: so one registration per
        # resident leaves what one per block would, in any order).
        regs: dict[tuple[int, int], int] = {}
        # Each fused iteration starts strictly before the next action and ends by the cut:
        # the per-event mode, cut at `until`, has every iteration that started by then,
        # the last one still in flight; a stretch that ran past it would have counted
        # iterations (and taken blocks) that never started, or computed in bulk what the
        # per-event mode has only planned.
        # Only steps in a phase where some resident crosses into a block, or completes a
        # block of its pieces, do anything but count: the others are stepped over.
        horizon = self.horizon
        last = -1.0
        d = lz.dcount + k
        if len(st.memory) == 1:  # one pool: each phase's work found once (`stretch_one_pool`)
            k, d, t, last = stretch_one_pool(
                self, st, lz, (k, d, t, last), fused, (next_due, horizon, duration),
                guards[st.memory[0]], plan, regs,
            )  # fmt: skip
        else:
            k, d, t, last = stretch_pools(
                self, st, lz, (k, d, t, last), fused, (next_due, horizon, duration), guards,
                plan, regs,
            )  # fmt: skip
        if k > 1:
            st.iter_start = last  # the last fused iteration's start, as per event
        take_stretch(self, st, plan, regs, start, self.lean)
        s.now = start
        lz.fused = k
        register_steady(s, st, lz, k)
        st.iteration += k - 1
        s.counters["iterations"] += k - 1
        return t if k > 1 else end

    def end_iteration(self, st: StageState) -> None:
        lz = self.lz(st)
        s = self.s
        st.busy = False
        k = lz.fused
        lz.fused = 0
        plain = list(st.scheduled)
        tokens, done = iterations.apply_tokens(self, st)
        if k:
            lz.dcount += k
            while True:
                m = self.next_mark(lz)
                if m is None or m[0] > lz.dcount:
                    break
                heapq.heappop(lz.marks)
                sess = s.live[m[3]]
                self.make_plain(st, sess)
                if m[1] == DONE:
                    done.append(sess)
                # (an EXIT mark: its next step would pass its reserve; it goes on plain)
        # Plain decoders that just took a whole step with a tight hold become steady.
        for sid in plain:
            other = s.live.get(sid)
            if other is not None and other not in done:
                self.try_steady(st, other)
        del tokens
        iterations.finish_runs(self, st, done)  # says them in resident order
