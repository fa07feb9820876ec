"""The `why` texts: the plain-words sentence attached to each event, and the waits a
deadlock names.

Owns the wording only. Each function is given the figures it speaks of (computed by the
caller, at the moment of the event) and returns a sentence; `waiting_for` reads the state
to describe a session's wait. Nothing here writes the state, and the engine's modules do
not build sentences themselves, so a text reads the same wherever it is said. Numbers and
times go through `pooltui.lang.words`, the project's one number formatter.
"""

from __future__ import annotations

import math

from pooltui.lang.words import number, seconds
from pooltui.sim.state import (
    S_GROW_WAIT,
    S_QUEUED,
    S_RESIDENT,
    PoolState,
    Session,
    StageState,
    State,
)

Number = int | float


def _s(n: int) -> str:
    return "s" if n != 1 else ""


def _free(p: PoolState) -> str:
    return str(p.nfree()) if p.nblocks is not None else "inf"


# ---------------------------------------------------------------- sessions
def arrived(name: str, serial: int) -> str:
    return f"{name} arrived (serial {serial})"


def ended(name: str, how: str, after: float) -> str:
    return f"{name} {'finished' if how == 'done' else 'was rejected'} after {seconds(after)}"


def woke(name: str, reason: str) -> str:
    return f"{name} woke ({'its send landed' if reason == 'send' else 'its wait is over'})"


def check_failed(label: str, now: float) -> str:
    return f'check "{label}" failed at {seconds(now)}'


# ---------------------------------------------------------------- blocks and entries
def evicted(units: int, name: str, pool: str, left: int) -> str:
    return (
        f"evicted {units} units of {name}'s cached prefix from {pool} "
        f"({'tail first' if left else 'the whole entry'}; {left} left) to make room"
    )


def freed_own(left: int, name: str, pool: str, hit: int) -> str:
    return f"freed {left} units of {name}'s own cached prefix in {pool}: past its hit of {hit}"


# ---------------------------------------------------------------- spills and links
def spilling(units: int, name: str, pool: str, tier: str, link: str, work: Number) -> str:
    return (
        f"spilling {units} units of {name}'s prefix from {pool} to {tier} over {link} "
        f"({number(work)} work)"
    )


def spill_known(units: int, name: str, pool: str, tier: str) -> str:
    return (
        f"nothing to spill of {name}'s evicted prefix from {pool}: {tier} already has "
        f"its {units} units"
    )


def spill_dropped(
    job_units: int, units: int, name: str, tier: str, n: int, available: Number
) -> str:
    if n == 0:
        return f"dropped {job_units} units of {name}'s prefix: less than one block of {tier}"
    return (
        f"dropped {units} units of {name}'s prefix: {tier} cannot hold them even after "
        f"evicting all its cache ({available} blocks could be had, {n} needed)"
    )


def spilled(name: str, tier: str, units: int) -> str:
    return f"{name}'s prefix landed in {tier}: {units} units cached there"


def _tiers(tiers: tuple[tuple[str, int], ...]) -> str:
    """`dram`, or `dram (32) and ssd (16)` when a reload reads more than one tier."""
    if len(tiers) == 1:
        return tiers[0][0]
    parts = [f"{label} ({units})" for label, units in tiers]
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def reloading(
    units: int,
    name: str,
    tiers: tuple[tuple[str, int], ...],
    link: str,
    copy: float,
    ahead: int,
) -> str:
    """`copy`: the job's own time on the link (work / rate)."""
    took = "it never lands: work inf" if math.isinf(copy) else seconds(copy)
    after = f", after {ahead} job{_s(ahead)} on {link}" if ahead else ""
    return (
        f"reloading {units} units of {name}'s prefix from {_tiers(tiers)} over {link} "
        f"({took}{after}) instead of recomputing them"
    )


def reloaded(
    name: str, units: int, pool: str, tiers: tuple[tuple[str, int], ...], took: float
) -> str:
    return (
        f"{name}'s {units} reloaded units landed in {pool} from {_tiers(tiers)} after "
        f"{seconds(took)}: registered there, and never recomputed"
    )


def reload_wait(units: int, tiers: tuple[tuple[str, int], ...], link: str, lane: bool) -> str:
    """A reloading session's wait, in words (`lane`: its job waits for a lane)."""
    return f"reloading {units} units from {_tiers(tiers)} over {link}" + (
        "" if lane else " (waiting for a lane)"
    )


def sends(name: str, work: Number, link: StageState) -> str:
    behind = len(link.waiting_jobs) + len(link.jobs) - link.lanes + 1
    queued = f" (queued behind {behind})" if len(link.jobs) >= link.lanes else ""
    return f"{name} sends {number(work)} work over {link.label}{queued}"


# ---------------------------------------------------------------- queue and admission
def enqueued(name: str, pool: str, waiting: int) -> str:
    return f"{name} waits for {pool} ({waiting} waiting)"


def requeued(name: str, pool: str) -> str:
    return f"{name} re-enters the head of {pool}'s queue to execute its hold again"


def admitted(
    name: str,
    pool: str,
    size: int,
    hit: int,
    shared: int,
    was_preempted: bool,
    stage: str | None,
    budget_left: Number,
) -> str:
    return (
        f"admitted {name} to {pool}: {size} units"
        + (f", {hit} hit" if hit else "")
        + (f" ({shared} shared with holds holding them)" if shared else "")
        + (" (re-admitted after preemption)" if was_preempted else "")
        + (f"; {stage} has {number(budget_left)} tokens of budget left" if stage else "")
    )


def rejected(name: str, pool: str, reason: str) -> str:
    return f"rejected {name} on {pool}: {reason}, so it can never fit"


def released(
    name: str, size: int, pool: str, cached: int, kept: bool, stay: int = 0, others: int = 0
) -> str:
    """`stay` of its blocks other holds (`others`) still hold: they are neither cached nor
    freed, but stay allocated with those holds (content-and-reload.md §2)."""
    return (
        f"{name} released {size} units of {pool}"
        + (f"; {cached} stay cached as its prefix" if kept else "")
        + staying(stay, others)
    )


def staying(stay: int, others: int) -> str:
    """What a release or a preemption leaves with other holds: `stay` blocks they
    (`others`) still hold, neither cached nor freed ('' when none)."""
    if not stay:
        return ""
    return (
        f"; {stay} block{_s(stay)} stay{'s' if stay == 1 else ''} allocated with "
        f"{others} other hold{_s(others)} holding {'it' if stay == 1 else 'them'}"
    )


# ---------------------------------------------------------------- growth and preemption
def grow_waits(name: str, size: int, p: PoolState, need: int) -> str:
    return (
        f"{name} waits to grow to {size} units: {p.label} has no room "
        f"({_free(p)} free, {p.cached} cached blocks; {need} needed)"
    )


def grew(name: str, pool: str, size: int, added: int, block: int) -> str:
    more = f" (+{added} block{_s(added)})" if block > 1 else ""
    return f"{name}'s hold on {pool} grew to {size} units{more}"


def preempted(
    victim: str,
    grower: str | None,
    pool: str,
    need: int,
    free: Number,
    cached: int,
    stage: str | None,
    cached_units: int,
    stay: int = 0,
    others: int = 0,
) -> str:
    """`grower` is None when the victim needed the room itself; `stay` of the victim's
    blocks stay allocated with `others` other holds (`staying`)."""
    whose = "its own" if grower is None else grower + "'s"
    who = (
        f"{victim} is the most recently admitted resident of {stage}"
        if stage is not None
        else f"{victim} is the most recently admitted holder"
    )
    blocks = "block" if need == 1 else f"{need} blocks"
    return (
        f"preempted {victim}: {pool} had no room for {whose} next {blocks} ({free} free, "
        f"{cached} cached); {who}; {cached_units} units stay cached"
    ) + staying(stay, others)


# ---------------------------------------------------------------- iterations and runs
def iteration(
    stage: str,
    index: int,
    residents: int,
    tokens: int,
    budget: Number,
    prefills: int,
    decodes: int,
    admitted: list[str],
    preempted: bool,
    duration: float,
) -> str:
    return (
        f"{stage} iteration {index}: {residents} resident{_s(residents)} take {tokens} tokens"
        + (f" of {number(budget)}" if not math.isinf(budget) else "")
        + (f" ({prefills} prefill, {decodes} decode)" if residents else "")
        + (f"; admitted {', '.join(admitted)}" if admitted else "")
        + ("; preempted, so no admission" if preempted else "")
        + f"; lasts {seconds(duration)}"
    )


def iteration_ended(stage: str, index: int, tokens: int, done: int) -> str:
    return f"{stage} iteration {index} ended: {tokens} tokens computed" + (
        f"; {done} run{_s(done)} done" if done else ""
    )


def run_done(name: str, kind: str, stage: str) -> str:
    return f"{name} finished its {kind} on {stage}"


# ---------------------------------------------------------------- deadlock
def deadlock(waits: list[tuple[str, str]]) -> str:
    return (
        "nothing can ever move again: "
        + "; ".join(f"{n} {w}" for n, w in waits[:8])
        + (f"; and {len(waits) - 8} more" if len(waits) > 8 else "")
    )


def deadlock_halt(waits: list[tuple[str, str]]) -> str:
    """The shorter form, for the simulation's `halted` reason."""
    return (
        "deadlock: "
        + "; ".join(f"{n} {w}" for n, w in waits[:5])
        + (f" (and {len(waits) - 5} more)" if len(waits) > 5 else "")
    )


def waiting_for(s: State, sess: Session, loader: str | None = None) -> str:
    """What a session waits for, in words (a deadlock names every live session's);
    `loader`: the session whose reload in flight its queued hold waits for."""
    if sess.state == S_QUEUED:
        h = sess.holds[-1] if sess.holds else None
        for x in sess.holds:
            if x.queued:
                h = x
        if h is not None:
            p = s.pools[h.pool]
            pos = p.queue.index(h) if h in p.queue else -1
            return (
                f"waits in {p.label}'s queue (position {pos}; {_free(p)} "
                f"free and {p.cached} cached blocks)"
                + (f" for {loader}'s reload of its blocks" if loader is not None else "")
            )
    if sess.state == S_RESIDENT and sess.run is not None:
        st = s.stages[sess.run.stage]
        p = s.pools[sess.run.h.pool]
        if sess.run.phase == "grow-wait":
            return f"waits to grow its hold on {p.label} (no room, nothing to preempt)"
        return (
            f"is a resident of {st.label} that cannot take its tokens "
            f"(budget {number(st.budget)}, {sess.run.kind} {sess.run.target})"
        )
    if sess.state == S_GROW_WAIT:
        return sess.waiting_for or "waits to grow"
    return sess.waiting_for or sess.state
