"""Invariants: language.md §8 and content-and-reload.md §4 (each pool's ledger against the
holds' block tables, through `ledgercheck`; links' lanes and reloading holds) as a check
over the state.

`check` reads the state and returns the first broken invariant as a `Violation`, or None.
It changes nothing the simulation reads (with a `watch`, it empties the ledgers' notes of
what changed), so it can run after any event, at any moment of an action; halting on a
violation is the engine's business (`Engine.check_now`).
"""

from __future__ import annotations

from pooltui.lang.words import number
from pooltui.sim import blocks, ledgercheck
from pooltui.sim.ledgercheck import Watch
from pooltui.sim.snapshot import Violation
from pooltui.sim.state import S_FOREVER, S_RELOADING, State


def check(
    s: State, steady: dict[int, tuple[int, int]] | None = None, watch: Watch | None = None
) -> Violation | None:
    """The first broken invariant of language.md §8 and content-and-reload.md §4 in state
    `s`, or None.

    `steady` gives, by hold key, the (computed, size) of holds whose figures the fast
    mode keeps lazily (its steady residents): what the per-event mode would have. `watch`
    (the engine's) checks the ledgers at the cost of what changed since its last call
    (`ledgercheck`); without it, in full."""
    for p in s.pools:
        if p.nblocks is not None and (p.allocated + p.cached) * p.block > p.cap:
            return Violation(
                "capacity",
                f"{p.label}: allocated + cached = {(p.allocated + p.cached) * p.block} "
                f"units > cap {number(p.cap)}",
                p.label,
            )
    v = ledgercheck.violation(s, watch)  # content-and-reload.md §4, every pool's ledger
    if v is not None:
        return v
    for p in s.pools:
        seen = 0
        for h in p.queue:
            if h.preempted:
                if seen:
                    return Violation(
                        "queue",
                        f"{p.label}: a preempted hold sits behind a policy-ordered one",
                        p.label,
                    )
            else:
                seen += 1
    for sess in s.live.values():
        for h in sess.holds:
            p = s.pools[h.pool]
            t = h.table
            size, computed = h.size, h.computed
            if steady is not None and h.key in steady:
                computed, size = steady[h.key]
            elif t.size != size:
                return Violation(
                    "allocated",
                    f"{p.label}: {sess.name} holds {size} units but its table {t.size}",
                    p.label,
                    tuple(t.blocks),
                )
            if len(t.blocks) != blocks.nb(p, size):
                return Violation(
                    "allocated",
                    f"{p.label}: {sess.name} holds {size} units in {len(t.blocks)} blocks",
                    p.label,
                    tuple(t.blocks),
                )
            if computed > size and not h.queued:
                return Violation(
                    "computed",
                    f"{p.label}: {sess.name} has computed {computed} > size {size}",
                    p.label,
                    tuple(t.blocks),
                )
            if h.reserve is not None and size > h.reserve:
                return Violation(
                    "reserve",
                    f"{p.label}: {sess.name} holds {size} units > reserve {number(h.reserve)}",
                    p.label,
                    tuple(t.blocks),
                )
    v = links_and_reloads(s)
    if v is not None:
        return v
    for st in s.stages:
        if st.kind != "step":
            continue
        if len(st.residents) > st.seats:
            return Violation(
                "seats", f"{st.label}: {len(st.residents)} residents > seats {number(st.seats)}"
            )
        if st.budget_left < 0:
            return Violation("budget", f"{st.label}: the iteration passed its budget")
    if s.counters["arrived"] != len(s.live) + s.counters["ended"]:
        return Violation(
            "sessions",
            f"arrived {s.counters['arrived']} ≠ live {len(s.live)} + ended {s.counters['ended']}",
        )
    return None


def links_and_reloads(s: State) -> Violation | None:
    """Each link's lanes (no more jobs in service than lanes; none waiting while a lane is
    free), and content-and-reload.md §3 and §4 for reloads: a reloading hold is admitted,
    its session stands still (reloading) and is no stage's resident, nor waits for a seat
    or has tokens; it has exactly one reload job and every reload job names a reloading
    hold; its computed is its hit + the units it reloads, within its size, and only its
    hit's blocks are registered (the loading ones cannot be hit yet)."""
    jobs: dict[int, int] = {}  # hold key -> reload jobs naming it
    for st in s.stages:
        if st.kind != "link":
            continue
        if len(st.jobs) > st.lanes:
            return Violation("lanes", f"{st.label}: {len(st.jobs)} jobs on {st.lanes} lanes")
        if st.waiting_jobs and len(st.jobs) < st.lanes:
            return Violation("lanes", f"{st.label}: jobs wait while a lane is free")
        for queue in (st.jobs, st.waiting_jobs):
            for job in queue:
                if job.kind == "reload":
                    jobs[job.hold] = jobs.get(job.hold, 0) + 1
    if s.counters["reloads"] == 0:  # none ever started: no hold can be reloading
        return Violation("reload", "a reload job names no reloading hold") if jobs else None
    seated: set[int] = set()
    for st in s.stages:
        seated.update(st.residents)
        seated.update(st.joining)
        seated.update(st.scheduled)
    for sess in s.live.values():
        for h in sess.holds:
            if not h.reloading:
                continue
            p = s.pools[h.pool]
            if jobs.pop(h.key, 0) != 1:
                return Violation(
                    "reload", f"{p.label}: {sess.name}'s reload has not exactly one job", p.label
                )
            where = f"{p.label}: {sess.name} is reloading"
            if h.queued or sess.state not in (S_RELOADING, S_FOREVER):
                return Violation("reload", f"{where} but is {sess.state}", p.label)
            if sess.sid in seated:
                return Violation("reload", f"{where} and is a resident of a stage", p.label)
            hit = h.computed - h.reload_units
            t = h.table
            if h.reload_units <= 0 or hit < 0 or hit % p.block or h.computed > h.size:
                return Violation(
                    "reload",
                    f"{where} {h.reload_units} units past a hit of {hit}, size {h.size}",
                    p.label,
                    tuple(t.blocks),
                )
            if t.nreg != hit // p.block:
                return Violation(
                    "reload",
                    f"{where}: {t.nreg} blocks registered, its hit is {hit // p.block}",
                    p.label,
                    tuple(t.blocks),
                )
    if jobs:
        return Violation("reload", "a reload job names no reloading hold")
    return None
