"""Test-only helpers: ways to break a simulation on purpose, to see the invariants halt it.

The one module that writes the state behind the engine's back, on purpose; nothing but
tests may use it.
"""

from __future__ import annotations

from pooltui.sim import watch
from pooltui.sim.ledger import NONE
from pooltui.sim.simulation import Simulation
from pooltui.sim.state import Hold, PoolState


def _pool(sim: Simulation, pool_label: str) -> PoolState:
    for p in sim.state.pools:
        if p.label == pool_label:
            return p
    raise KeyError(pool_label)


def break_pool(sim: Simulation, pool_label: str) -> None:
    """Corrupt a pool's accounting at the frontier: it claims one more allocated block than
    its holds hold (and one fewer free). The next event's invariant check halts the run."""
    L = _pool(sim, pool_label).ledger
    L.allocated += 1
    if L.free:
        L.free.pop()  # a block nobody holds, and not free either
    elif L.fresh > 0:
        L.fresh -= 1


def break_ledger(sim: Simulation, pool_label: str, what: str) -> None:
    """Break one invariant of content-and-reload.md §4 in a pool's ledger at the frontier:

    - "count": a held block's reference count is one more than the tables holding it;
    - "allocated": the allocated figure is one more than the blocks with a count (and a
      free block is gone, so free + allocated + cached still make the pool);
    - "cached": the cached figure is one more than the registered blocks at count 0 (a
      free block gone too);
    - "table": a hold's table loses its last block (blocks(size) no longer matches);
    - "hit": a hold's first registered block is registered under another content;
    - "content": a registered block's recorded content is not what it was registered as.

    What it breaks is noted as changed (`Ledger.tb`, `tt`, `th`), as if a faulty step of
    the event just done had broken it: the per-event check looks at what changed only.
    """
    p = _pool(sim, pool_label)
    L = p.ledger
    held = [b for b in range(len(L.ref)) if L.ref[b] > 0]
    if what == "count":
        L.ref[held[0]] += 1
        L.tb.add(held[0])
    elif what in ("allocated", "cached"):
        if what == "allocated":
            L.allocated += 1
        else:
            L.cached += 1
        if L.free:
            L.free.pop()
        else:
            L.fresh -= 1
    elif what in ("table", "hit"):
        tables = [h.table for s in sim.state.live.values() for h in s.holds if h.table.blocks]
        tables = [t for t in tables if sim.state.pools[_hold_pool(sim, t.hid)] is p]
        t = tables[0]
        L.mark_table(t, 0, len(t.blocks))
        if what == "table":
            b = t.blocks.pop()
            L.tb.add(b)
            L.ref[b] -= 1  # counts stay right: only the table's length is wrong
            if L.ref[b] == 0:
                L.owner[b] = NONE
                L.allocated -= 1
                L.bcontent[b] = None
                L.free.append(b)
            else:
                more = L.sharers.get(b, {})
                more.pop(t.hid, None)
        else:
            if t.nreg == 0:
                raise ValueError("the hold has no hit block")
            b = t.blocks[0]
            h = L.bhash[b]
            new = h ^ 1
            L.table[new] = L.table.pop(h)
            if h in L.more:
                L.more[new] = L.more.pop(h)
            L.bhash[b] = new
            L.tb.add(b)
            L.th.update((h, new))
    elif what == "content":
        regs = [b for b in range(len(L.ref)) if L.bhash[b] != NONE]
        b = regs[0]
        L.bidx[b] += 1  # its content now says another block index than its hash
        L.tb.add(b)
    else:
        raise ValueError(what)


def _hold_pool(sim: Simulation, hid: int) -> int:
    for s in sim.state.live.values():
        for h in s.holds:
            if h.key == hid:
                return h.pool
    raise KeyError(hid)


def changed_hold(sim: Simulation, h: Hold) -> None:
    """Record that hold `h` was changed behind the rules' back, as a rule records its own
    changes (`watch.hold`): the per-event check then looks at it."""
    watch.hold(sim.engine, h)


def changed_entry(sim: Simulation, p: PoolState, order: int) -> None:
    """Record that the cache entry `order` of pool `p` was changed behind the rules' back,
    as the ledger notes its own changes: the per-event check then looks at it."""
    p.ledger.te.add(order)


def break_reload(sim: Simulation, what: str) -> None:
    """Break one invariant of a reload in flight at the frontier (content-and-reload.md
    §3, §4; the first reloading hold found):

    - "resident": its session is made a resident of its pool's stage;
    - "job": its reload job leaves its link (no job names it any more);
    - "registered": a block it is still loading counts as registered in its table;
    - "lanes": a job in service on its link goes back to waiting, a lane free.
    """
    s = sim.state
    sess, h = next((x, h) for x in s.live.values() for h in x.holds if h.reloading)
    p = s.pools[h.pool]
    links = [st for st in s.stages if st.kind == "link"]
    if what == "resident":
        assert p.stage is not None
        s.stages[p.stage].residents.append(sess.sid)
    elif what == "job":
        for lk in links:
            for queue in (lk.jobs, lk.waiting_jobs):
                for job in list(queue):
                    if job.kind == "reload" and job.hold == h.key:
                        queue.remove(job)
    elif what == "registered":
        h.table.nreg += 1
    elif what == "lanes":
        lk = next(lk for lk in links if lk.jobs)
        lk.waiting_jobs.insert(0, lk.jobs.pop())
    else:
        raise ValueError(what)
    watch.hold(sim.engine, h)  # as a rule records its change: the per-event check looks
