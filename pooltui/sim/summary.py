"""`RunSummary`: the figures of a whole run, as plain frozen data (what `pooltui run`
prints and benchmarks read), built from the frontier state and the run's samples.
It reads the engine; it writes nothing."""

from __future__ import annotations

from pooltui.lang.records import record
from pooltui.sim.engine import Engine

Number = int | float


@record(frozen=True)
class ClassSummary:
    name: str
    arrived: int
    done: int
    rejected: int
    queueing: tuple[float, ...]  # seconds, one per admission
    ttft: tuple[float, ...]  # seconds to the first token (the first prefill's end)
    latency: tuple[float, ...]  # seconds from arrival to end, one per finished session


@record(frozen=True)
class PoolSummary:
    label: str
    cap: Number
    allocated: int  # units now
    cached: int  # units now
    utilisation: float | None  # mean allocated / cap over the run (None for cap inf)


@record(frozen=True)
class LinkSummary:
    """A link stage member over the run: its lanes' busy time (seconds of jobs in service,
    summed over lanes: the jobs that ended, and those in service up to the run's end) and
    the jobs that ended, by kind."""

    label: str
    lanes: int
    busy: float
    spills: int
    reloads: int
    sends: int


@record(frozen=True)
class RunSummary:
    time: float
    events: int
    iterations: int
    arrived: int
    done: int
    rejected: int
    live: int
    peak_live: int
    preemptions: int
    evictions: int
    evicted_units: int
    spills: int
    drops: int
    hit_units: int
    asked_units: int
    classes: tuple[ClassSummary, ...]
    pools: tuple[PoolSummary, ...]
    halted: str | None
    last_arrival: float | None  # when the last session is due (a progress bar's end)
    # The hit units split (content-and-reload.md §2): `hit_own` on blocks the admitted
    # session computed itself (an earlier turn, or before a preemption), `hit_shared` on
    # blocks other sessions computed, `hit_reloaded` to be loaded back from a tier (a
    # reload's units, counted at its admission). hit_own + hit_shared + hit_reloaded =
    # hit_units. `hit_held` is the part of the hits on blocks other holds still held (the
    # `admit` events' `shared`).
    hit_own: int = 0
    hit_shared: int = 0
    hit_reloaded: int = 0
    hit_held: int = 0
    duplicates: int = 0  # registrations of content another block already had registered
    # Reloads (content-and-reload.md §3): `reload` events, and the units that landed (the
    # tokens of recompute they saved); `reloading` says whether any pool has `reload`.
    reloading: bool = False
    reloads: int = 0
    reloaded_units: int = 0
    links: tuple[LinkSummary, ...] = ()


def summarize(eng: Engine) -> RunSummary:
    s = eng.s
    st = eng.stats
    c = s.counters
    classes = tuple(
        ClassSummary(
            sd.ir.name,
            s.class_counts[i][0],
            s.class_counts[i][1],
            s.class_counts[i][2],
            tuple(st.queueing[i]),
            tuple(st.ttft[i]),
            tuple(st.latency[i]),
        )
        for i, sd in enumerate(eng.t.sessions)
    )
    pools = tuple(
        PoolSummary(
            p.label,
            p.cap,
            p.allocated * p.block,
            p.cached * p.block,
            None if p.nblocks is None else (p.area / (p.cap * s.now) if s.now > 0 else 0.0),
        )
        for p in s.pools
    )
    return RunSummary(
        s.now,
        s.n_events,
        c["iterations"],
        c["arrived"],
        sum(cc[1] for cc in s.class_counts),
        sum(cc[2] for cc in s.class_counts),
        len(s.live),
        c["peak_live"],
        c["preemptions"],
        c["evictions"],
        c["evicted_units"],
        c["spills"],
        c["drops"],
        s.hit_units[0],
        s.hit_units[1],
        classes,
        pools,
        s.halted,
        eng.sched.last_arrival(),
        s.hit_units[0] - s.hit_units[3] - s.hit_units[4],
        s.hit_units[3],
        s.hit_units[4],
        s.hit_units[2],
        sum(p.ledger.dup_registrations for p in s.pools),
        any(pd.ir.reload is not None for pd in eng.t.pools),
        c["reloads"],
        c["reloaded_units"],
        tuple(
            LinkSummary(
                lk.label,
                lk.lanes,
                lk.link_busy + sum(s.now - j.start for j in lk.jobs if j.start is not None),
                *lk.jobs_done,
            )
            for lk in s.stages
            if lk.kind == "link"
        ),
    )
