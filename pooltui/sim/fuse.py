"""The fast mode's fused stretches: what one may evict and register while a hold waits.

A fused stretch (`fast.FastEngine.iteration_end`) stands for iterations in which only
steady decoding happens. In the per-event mode each of those iterations, after its
crossings, tries each of the stage's pools' queues again: a FIFO queue's head (`admit.
select`), and nothing after it, since a blocked attempt stops the queue and a pure stretch
starts from an iteration that admitted nobody. A blocked attempt leaves nothing behind but
the hold's reserve (`admit.try_admit`), so the stretch is exact if every one of those
attempts is blocked with the same reserve (and draws nothing: `drawing`). What an attempt
reads that a stretch can change:

- the room (free + never used + cached blocks, `Ledger.room`): it only shrinks, one block
  per crossing (a free one, or one it evicts); nothing is released or admitted;
- E, the longest run of its content's registered blocks (`blocks.longest`), from which
  its plan is made (`admit.plan_hold`: hit, units, need, reserve; the rest it reads, the
  budget left, the seats, its own figures, a stretch does not change). A lookup walks the
  chain's hashes taking each one's first copy: evicting a later copy or any block of
  another chain leaves E as it was; evicting one of E's blocks (with no second copy)
  cuts E there. Registering a block grows E only if its hash is the one E would take
  next (`Guard.after`): a stretch never registers that one, nor a hash the pool has
  registered already (`fast.FastEngine.pieces_at`).

So while a hold waits, a stretch may evict cache in eviction order, and each time one of
E's blocks goes, the head's attempt is worked out again with the shorter E and the room
left (`still_blocked`, through `admit.plan_hold`); the stretch stops before the first
iteration where it would not fail alike. Under `evict lru` the order is known in advance:
entries in release order, each from its tail (`guard`). Under `evict by` the keys are
worked out at each eviction and may read the clock: there a stretch takes only free
blocks while a hold waits.

A stretch's crossings are then taken in one ledger pass per pool
(`steady.take_stretch`, `blocks.one_more_each`).

A stretch stands for attempts only where they are all alike: `fusable` (no checks, no
spills, no attempt that reads the time, no iteration time that reads the clock or a
query) and `drawing` (holds whose attempt draws from
their session's stream: none may head a queue while a stretch runs).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pooltui.lang.errors import SpecRuntimeError
from pooltui.lang.ir import ArgQuery, Draw, Hold, Query, Run, Var
from pooltui.sim import admit, blocks
from pooltui.sim.codes import Number
from pooltui.sim.ledger import Hit
from pooltui.sim.state import Hold as HoldState
from pooltui.sim.state import PoolState, StageState
from pooltui.sim.tables import Tables

if TYPE_CHECKING:
    from pooltui.sim.engine import Engine


def _reads(expr: object, names: set[str]) -> bool:
    """Whether an expression reads any of the context variables `names` (or draws, when
    `names` holds "draw"; or queries a pool or stage, when it holds "query")."""
    if isinstance(expr, Var):
        return expr.name in names
    if isinstance(expr, Draw) and "draw" in names:
        return True
    if isinstance(expr, Query | ArgQuery) and "query" in names:
        return True
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


def attempt_exprs(stmt: Hold) -> list[object]:
    """What an admission attempt of a `hold` statement evaluates: its header, and the
    amount of the run its body opens with (the tokens it would take)."""
    first = stmt.body[0] if stmt.body else None
    amount = first.amount if isinstance(first, Run) else None
    return [e for e in (stmt.units, stmt.need, stmt.reserve, amount) if e is not None]


def fusable(tables: Tables) -> bool:
    """Whether stretches may be fused at all: no checks; no spills (one started by a
    stretch's eviction would land in its middle); no attempt that reads the time; no
    iteration time that reads the clock or a query (a stretch's iterations all last what
    its first does, where the clock and the blocks a crossing takes would change it)."""
    timed = any(
        sd.ir.kind == "step" and sd.ir.time is not None and _reads(sd.ir.time, {"now", "query"})
        for sd in tables.stages
    )
    timeless = not any(
        _reads(e, {"now", "waited"})
        for body in tables.bodies
        for stmt in body
        if isinstance(stmt, Hold)
        for e in attempt_exprs(stmt)
    )
    spills = any(pd.spill_when is not None for pd in tables.pools)
    return timeless and not timed and not tables.checks and not spills


def drawing(tables: Tables) -> set[tuple[int, int]]:
    """The `hold` statements (body, position) whose attempt draws: each attempt moves the
    session's stream (language.md §10), so a stretch may not stand for one."""
    return {
        (b, i)
        for b, body in enumerate(tables.bodies)
        for i, stmt in enumerate(body)
        if isinstance(stmt, Hold) and any(_reads(e, {"draw"}) for e in attempt_exprs(stmt))
    }


class Guard:
    """What a stretch may do in one pool while a hold waits there: take `avail` blocks
    at most, each eviction of one of the head's E shortening E (`cuts`), as long as the
    head's attempt with the shorter E still fails the same way (`take`); never register
    `after`, the hash E would take next. Lives for one `iteration_end`, not state."""

    __slots__ = (
        "after", "avail", "cut", "cuts", "found", "free", "head", "p", "passed", "room0", "taken",
    )  # fmt: skip

    def __init__(self, p: PoolState) -> None:
        self.p = p
        self.avail: Number = blocks.available(p)
        self.after: int | None = None
        self.head: HoldState | None = None
        self.found = Hit()  # E at the stretch's start
        self.cuts: list[tuple[int, int]] = []  # (eviction, E's block index), in order
        self.cut = 0  # E's blocks left
        self.passed = 0  # cuts evicted so far
        self.free = 0  # blocks taken before any eviction
        self.room0: Number = 0
        self.taken = 0  # blocks the stretch took so far

    def take(self, eng: Engine, st: StageState, n: int) -> bool:
        """The stretch's next iteration takes n blocks: whether it may (then counted)."""
        if self.taken + n > self.avail:
            return False
        taken = self.taken + n
        cut = self.cut
        cuts, i = self.cuts, self.passed
        gone = taken - self.free  # evictions so far
        while i < len(cuts) and cuts[i][0] < gone:
            cut = min(cut, cuts[i][1])
            i += 1
        if cut < self.cut:
            if not still_blocked(eng, st, self, cut, taken):
                return False
            self.cut = cut
        self.passed = i
        self.taken = taken
        return True


def guard(eng: Engine, p: PoolState, bound: int) -> Guard:
    """The stretch's guard in pool p. `bound`: more blocks than the stretch could want.

    While a hold waits under `evict lru`, the blocks it may take are the free ones, then
    cache in eviction order (entries in release order, each tail first), each of E's
    blocks among them noted where it goes; up to the first of E's blocks that has a second
    copy (the lookup would go on through that one: not worked out here)."""
    g = Guard(p)
    L = p.ledger
    if not p.queue:
        return g
    g.head = head = admit.select(eng, p)
    content = head.table.content
    g.found = found = blocks.longest(p, content)
    g.after = content.block_hash(len(found.blocks), p.block)
    g.cut = len(found.blocks)
    if L.total < 0:
        return g
    g.free = len(L.free) + L.fresh
    g.room0 = L.room()
    if eng.t.pools[p.decl].evict_keys is not None:
        g.avail = g.free
        return g
    bhash, more = L.bhash, L.more
    # E's blocks in the cache are among the entries' (a cached block has no holder; a held
    # one is never evicted): only those the stretch could evict are looked for, by block.
    inside = set(found.blocks)
    where: dict[int, int] = {}  # E's block -> its index in E, made when one is found
    n = 0  # evictions before the entry at hand
    for e in L.entries.values():
        eb = e.blocks
        k = len(eb)
        # Tail first, up to the bound: the stretch takes at most `bound` blocks, so an
        # eviction past it is never reached (nor a copy there: avail is past it too).
        lo = max(0, n + k - bound)
        if not inside.isdisjoint(eb[lo:]):
            if not where:
                where = {b: j for j, b in enumerate(found.blocks)}
            for i in range(k - 1, lo - 1, -1):
                j = where.get(eb[i], -1)
                if j < 0:
                    continue
                if bhash[eb[i]] in more:  # a hash with copies
                    g.avail = g.free + n + (k - 1 - i)
                    return g
                g.cuts.append((n + k - 1 - i, j))
        n += k
        if n >= bound:
            break
    g.avail = g.free + n
    return g


def still_blocked(eng: Engine, st: StageState, g: Guard, cut: int, taken: int) -> bool:
    """Whether the head's attempt, with E cut to its first `cut` blocks and `taken` blocks
    fewer in the room, fails as the one the stretch began after did: blocked (no fit, or
    no tokens this iteration), with the same reserve, nothing rejected, no error. Such an
    attempt leaves nothing behind but its reserve (`admit.try_admit`)."""
    p = g.p
    h = g.head
    if h is None or eng.t.pools[p.decl].reload_work:
        return False
    L = p.ledger
    hit = Hit()
    found = g.found
    hit.blocks = found.blocks[:cut]
    hit.units = cut * p.block
    # E's cached blocks but those cut off (a cut is mostly near E's end: E's blocks are
    # evicted from their entries' tails)
    hit.cached = found.cached - list(map(L.ref.__getitem__, found.blocks[cut:])).count(0)
    hit.shared = cut - hit.cached
    sess = eng.s.live[h.sid]
    computed = h.computed
    try:
        plan = admit.plan_hold(eng, p, h, sess, hit)
        if plan.never is not None or plan.reserve != h.reserve:
            return False
        h.computed = plan.hit  # as the attempt has it when it asks for the tokens
        tokens = admit.first_run_tokens(eng, h, sess, st, p)
    except SpecRuntimeError:  # the attempt itself stops the run: not in a stretch
        return False
    finally:
        h.computed = computed
    if tokens is None:
        return True
    grown = max(plan.size, plan.hit + tokens)
    need = max(blocks.nb(p, grown), blocks.nb(p, plan.need)) - len(plan.found.blocks)
    return need > g.room0 - taken - plan.found.cached
