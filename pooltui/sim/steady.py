"""The fast mode's steady residents (`fast.py`): their figures, kept beside the state
(`Lazy`, one per step stage member), and the block work their steps defer: registering
the private blocks they complete once per launched iteration, and finding which of them
complete a block of their content's pieces (registered step by step).

Reads the state and the steady figures; changes blocks only through `blocks`.
"""

from __future__ import annotations

from pooltui.lang.ir import Expr, Var
from pooltui.sim import blocks
from pooltui.sim.state import Hold as HoldState
from pooltui.sim.state import Session, StageState, State


def _reads(expr: object, names: set[str]) -> bool:
    """Whether an expression reads any of the context variables `names`."""
    if isinstance(expr, Var):
        return expr.name in names
    for field in getattr(expr, "__slots__", ()):
        value = getattr(expr, field, None)
        if isinstance(value, tuple):
            if any(_reads(v, names) for v in value):
                return True
        elif (
            value is not None and not isinstance(value, str | int | float) and _reads(value, names)
        ):
            return True
    return False


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
        # them, so a fused stretch never takes such a step past its first)
        self.pieces: dict[int, int] = {}


def completing(s: State, lz: Lazy) -> list[int]:
    """Steady residents whose step in this iteration completes a block of their
    content's pieces (they drop out of `pieces` once past their last)."""
    out: list[int] = []
    if not lz.pieces:
        return out
    live, pools = s.live, s.pools
    for sid, top in list(lz.pieces.items()):
        d0, c0, _ = lz.steady[sid]
        upto = c0 + lz.dcount - d0 + 1  # computed after this step
        if upto > top:
            del lz.pieces[sid]
            continue
        run = live[sid].run
        assert run is not None
        if upto % pools[run.h.pool].block == 0:
            out.append(sid)
    return out


def next_piece_step(s: State, lz: Lazy) -> int:
    """Steps after this iteration's until a steady resident next completes a block of
    its pieces (1 << 30: none will)."""
    live, pools = s.live, s.pools
    best = 1 << 30
    for sid, top in lz.pieces.items():
        d0, c0, _ = lz.steady[sid]
        c = c0 + lz.dcount - d0  # computed before this iteration's step
        run = live[sid].run
        assert run is not None
        B = pools[run.h.pool].block
        i = (B - (c + 1) % B) % B or B  # steps i >= 1 after it that complete a block
        if c + i + 1 <= top:
            best = min(best, i)
    return best


def register_steady(s: State, st: StageState, lz: Lazy, k: int) -> None:
    """The blocks the steady residents complete in the k steady steps from the stage's
    step count on are registered (as the per-event mode registers them when each
    step's token is taken). Only a steady resident's private blocks past any its
    session registered before (`FastEngine.try_steady`) can be among them: nothing can hit them
    meanwhile, so registering them once per launched iteration is exact."""
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


def reads_time(expr: Expr) -> bool:
    return _reads(expr, {"now", "waited"})
