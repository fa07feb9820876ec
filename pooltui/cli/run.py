"""`pooltui run SPEC`: simulate headless and print a summary.

Exit 0 when the run ends cleanly (or at --until / --events); 1 on an invariant violation, a
failed `check`, a deadlock, a runtime error of the spec, or a spec that does not compile.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Sequence
from typing import IO

from pooltui.lang import SpecError, compile_file, render
from pooltui.sim import Event, Simulation


def percentiles(xs: Sequence[float]) -> str:
    if not xs:
        return "—"
    ys = sorted(xs)

    def q(p: float) -> float:
        return ys[min(len(ys) - 1, max(0, math.ceil(p * len(ys)) - 1))]

    return f"p50 {q(0.5):.4g}s  p90 {q(0.9):.4g}s  p99 {q(0.99):.4g}s  max {ys[-1]:.4g}s"


class Progress:
    """A one-line progress bar on stderr, only when it is a terminal."""

    def __init__(self, end_time: float | None, stream: IO[str]) -> None:
        self.end = end_time
        self.stream = stream
        self.started = time.monotonic()
        self.shown = False

    def __call__(self, now: float, events: int) -> None:
        if time.monotonic() - self.started < 1.0:
            return
        self.shown = True
        if self.end and math.isfinite(self.end) and self.end > 0:
            frac = min(1.0, now / self.end)
            bar = "█" * int(frac * 30) + "░" * (30 - int(frac * 30))
            self.stream.write(f"\r{bar} {frac:4.0%}  t={now:.4g}s  {events:,} events")
        else:
            self.stream.write(f"\rt={now:.4g}s  {events:,} events")
        self.stream.flush()

    def done(self) -> None:
        if self.shown:
            self.stream.write("\r" + " " * 70 + "\r")
            self.stream.flush()


def run_headless(args: argparse.Namespace) -> int:
    try:
        program = compile_file(args.spec)
    except SpecError as exc:
        print(exc.render(), file=sys.stderr)
        n = len(exc.diagnostics)
        print(f"{n} error{'s' if n != 1 else ''}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"pooltui: cannot read '{args.spec}': {exc.strerror}", file=sys.stderr)
        return 1
    sim = Simulation(program, invariants=not args.no_invariants, history=False, fast=args.fast)
    last: list[Event] = []
    trace = open(args.trace, "w", encoding="utf-8") if args.trace else None  # noqa: SIM115

    def on_event(ev: Event) -> None:
        last[:] = [ev]
        if trace is not None:
            trace.write(ev.to_json() + "\n")

    end_hint = args.until
    if end_hint is None:
        times = [t[-1][0] for t in sim.schedule.per_class if t]
        end_hint = max(times) if times else None
    progress = Progress(end_hint, sys.stderr) if sys.stderr.isatty() and not args.quiet else None
    wall = time.perf_counter()
    try:
        sim.run_headless(
            until=args.until,
            events=args.events,
            on_event=on_event,
            progress=progress,
        )
    finally:
        if trace is not None:
            trace.close()
        if progress is not None:
            progress.done()
    wall = time.perf_counter() - wall
    print(summary(sim, wall))
    s = sim.state
    if s.halted is not None:
        print(file=sys.stderr)
        if sim.error is not None:
            print(render(sim.error, program.source), file=sys.stderr)
        else:
            print(f"pooltui: stopped: {s.halted}", file=sys.stderr)
        if last:
            print(f"  at event {last[0].describe()}", file=sys.stderr)
        return 1
    return 0


def summary(sim: Simulation, wall: float) -> str:
    s = sim.state
    st = sim.stats
    c = s.counters
    lines = [f"simulated {s.now:.6g}s in {wall:.3g}s wall: {s.n_events:,} events, "
             f"{c['iterations']:,} iterations"]  # fmt: skip
    arrived = c["arrived"]
    done = sum(cc[1] for cc in s.class_counts)
    rejected = sum(cc[2] for cc in s.class_counts)
    lines.append(f"sessions: {arrived:,} arrived, {done:,} done, {rejected:,} rejected, "
                 f"{len(s.live):,} still live")  # fmt: skip
    lines.append(
        f"preemptions {c['preemptions']:,}  evictions {c['evictions']:,} "
        f"({c['evicted_units']:,} units)  spills {c['spills']:,}  drops {c['drops']:,}"
    )
    hit, asked = s.hit_units
    rate = f"{hit / asked:.1%}" if asked else "—"
    lines.append(f"cache hit rate: {rate} ({hit:,} of {asked:,} units asked at admissions)")
    for i, sd in enumerate(sim.tables.sessions):
        cc = s.class_counts[i]
        lines.append(f"class {sd.ir.name}: {cc[0]:,} arrived, {cc[1]:,} done, {cc[2]:,} rejected")
        lines.append(f"  queueing  {percentiles(st.queueing[i])}")
        lines.append(f"  ttft      {percentiles(st.ttft[i])}")
        lines.append(f"  latency   {percentiles(st.latency[i])}")
    for p in s.pools:
        if p.nblocks is None:
            lines.append(f"pool {p.label}: cap inf, {p.allocated * p.block:,} units allocated now")
            continue
        util = p.area / (p.cap * s.now) if s.now > 0 else 0.0
        lines.append(
            f"pool {p.label}: mean utilisation {util:.1%} of {p.cap:,} units; now "
            f"{p.allocated * p.block:,} allocated, {p.cached * p.block:,} cached"
        )
    if s.halted is not None:
        lines.append(f"halted: {s.halted}")
    return "\n".join(lines)
