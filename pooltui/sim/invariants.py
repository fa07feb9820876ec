"""Invariants: language.md §8 as a pure check over the state.

`check` reads the state and returns the first broken invariant as a `Violation`, or None.
It writes nothing, so it can run after any event, at any moment of an action; halting on
a violation is the engine's business (`Engine.check_now`).
"""

from __future__ import annotations

from pooltui.lang.words import number
from pooltui.sim import blocks
from pooltui.sim.snapshot import Violation
from pooltui.sim.state import State


def check(s: State, steady: dict[int, tuple[int, int]] | None = None) -> Violation | None:
    """The first broken invariant of language.md §8 in state `s`, or None.

    `steady` gives, by hold key, the (computed, size) of holds whose figures the fast
    mode keeps lazily (its steady residents): what the per-event mode would have."""
    for p in s.pools:
        if p.nblocks is not None and (p.allocated + p.cached) * p.block > p.cap:
            return Violation(
                "capacity",
                f"{p.label}: allocated + cached = {(p.allocated + p.cached) * p.block} "
                f"units > cap {number(p.cap)}",
                p.label,
            )
        if p.nblocks is not None and p.nfree() + p.allocated + p.cached != p.nblocks:
            return Violation(
                "blocks",
                f"{p.label}: {p.nfree()} free + {p.allocated} allocated + {p.cached} "
                f"cached blocks ≠ {p.nblocks} blocks",
                p.label,
            )
        cached = sum(e.nblocks for e in p.entries.values())
        if cached != p.cached:
            return Violation(
                "cached",
                f"{p.label}: cached is {p.cached} blocks but its entries hold {cached}",
                p.label,
                tuple(b for e in p.entries.values() for b in e.phys),
            )
        for e in p.entries.values():
            if e.units != e.nblocks * p.block:
                return Violation(
                    "cached",
                    f"{p.label}: an entry of {e.units} units is not {e.nblocks} whole blocks",
                    p.label,
                    tuple(e.phys),
                )
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
    allocated = [0] * len(s.pools)
    for sess in s.live.values():
        for h in sess.holds:
            p = s.pools[h.pool]
            allocated[h.pool] += h.nblocks
            size, computed = h.size, h.computed
            if steady is not None and h.key in steady:
                computed, size = steady[h.key]
            if h.nblocks != blocks.nb(p, size):
                return Violation(
                    "allocated",
                    f"{p.label}: {sess.name} holds {size} units in {h.nblocks} blocks",
                    p.label,
                    tuple(h.phys),
                )
            if computed > size and not h.queued:
                return Violation(
                    "computed",
                    f"{p.label}: {sess.name} has computed {computed} > size {size}",
                    p.label,
                    tuple(h.phys),
                )
            if h.reserve is not None and size > h.reserve:
                return Violation(
                    "reserve",
                    f"{p.label}: {sess.name} holds {size} units > reserve {number(h.reserve)}",
                    p.label,
                    tuple(h.phys),
                )
    for i, p in enumerate(s.pools):
        if allocated[i] != p.allocated:
            return Violation(
                "allocated",
                f"{p.label}: allocated is {p.allocated} blocks but the holds hold {allocated[i]}",
                p.label,
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
