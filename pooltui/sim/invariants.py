"""Invariants: language.md §8 and content-and-reload.md §4 (each pool's ledger against the
holds' block tables, through `ledgercheck`) as a check over the state.

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
from pooltui.sim.state import State


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
