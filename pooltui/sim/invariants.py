"""Invariants: language.md §8 and content-and-reload.md §4 (each pool's ledger against the
holds' block tables, `ledger.check`) as a pure check over the state.

`check` reads the state and returns the first broken invariant as a `Violation`, or None.
It writes nothing, so it can run after any event, at any moment of an action; halting on
a violation is the engine's business (`Engine.check_now`).
"""

from __future__ import annotations

from pooltui.lang.words import number
from pooltui.sim import blocks, ledger
from pooltui.sim.ledger import Table
from pooltui.sim.snapshot import Violation
from pooltui.sim.state import State

FULL = 2048
FULL_EVERY = 256


def check(s: State, steady: dict[int, tuple[int, int]] | None = None) -> Violation | None:
    """The first broken invariant of language.md §8 and content-and-reload.md §4 in state
    `s`, or None.

    `steady` gives, by hold key, the (computed, size) of holds whose figures the fast
    mode keeps lazily (its steady residents): what the per-event mode would have."""
    tables: list[list[Table]] = [[] for _ in s.pools]
    for sess in s.live.values():
        for h in sess.holds:
            tables[h.pool].append(h.table)
    for pi, p in enumerate(s.pools):
        L = p.ledger
        if p.nblocks is not None and (L.allocated + L.cached) * p.block > p.cap:
            return Violation(
                "capacity",
                f"{p.label}: allocated + cached = {(L.allocated + L.cached) * p.block} "
                f"units > cap {number(p.cap)}",
                p.label,
            )
        # The full ledger check is O(ids ever used): after every event for pools of up to
        # FULL blocks in use, else at every FULL_EVERY-th event (the cheap figures below
        # are still checked after every event).
        broken = None
        if len(L.ref) <= FULL or s.n_events % FULL_EVERY == 0:
            broken = ledger.check(L, tables[pi])
        elif L.total >= 0 and len(L.free) + L.fresh + L.allocated + L.cached != L.total:
            broken = (
                f"{len(L.free) + L.fresh} free + {L.allocated} allocated + {L.cached} cached "
                f"≠ {L.total} blocks"
            )
        if broken is not None:
            return Violation(_kind(broken), f"{p.label}: {broken}", p.label)
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


def _kind(message: str) -> str:
    """The invariant a ledger's message names (content-and-reload.md §4)."""
    if message.startswith("allocated is"):
        return "allocated"
    if message.startswith(("cached is", "entr")):
        return "cached"
    if "count" in message and message.startswith("block"):
        return "count"
    if message.startswith("hold"):
        return "table" if "registered" not in message else "content"
    if "registered" in message or "hash" in message or "dups" in message:
        return "content"
    if "allocated + cached" in message:
        return "capacity"
    return "blocks"
