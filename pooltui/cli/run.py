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
from pooltui.sim import Event, RunSummary, Simulation


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

    end_hint = args.until if args.until is not None else sim.summary().last_arrival
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
    result = sim.summary()
    print(summary(result, wall))
    if result.halted is not None:
        print(file=sys.stderr)
        if sim.error is not None:
            print(render(sim.error, program.source), file=sys.stderr)
        else:
            print(f"pooltui: stopped: {result.halted}", file=sys.stderr)
        if last:
            print(f"  at event {last[0].describe()}", file=sys.stderr)
        return 1
    return 0


def summary(r: RunSummary, wall: float) -> str:
    lines = [
        f"simulated {r.time:.6g}s in {wall:.3g}s wall: {r.events:,} events, "
        f"{r.iterations:,} iterations",
        f"sessions: {r.arrived:,} arrived, {r.done:,} done, {r.rejected:,} rejected, "
        f"{r.live:,} still live",
        f"preemptions {r.preemptions:,}  evictions {r.evictions:,} "
        f"({r.evicted_units:,} units)  spills {r.spills:,}  drops {r.drops:,}",
    ]
    rate = f"{r.hit_units / r.asked_units:.1%}" if r.asked_units else "—"
    lines.append(
        f"cache hit rate: {rate} ({r.hit_units:,} of {r.asked_units:,} units asked at admissions)"
    )
    for c in r.classes:
        lines.append(
            f"class {c.name}: {c.arrived:,} arrived, {c.done:,} done, {c.rejected:,} rejected"
        )
        lines.append(f"  queueing  {percentiles(c.queueing)}")
        lines.append(f"  ttft      {percentiles(c.ttft)}")
        lines.append(f"  latency   {percentiles(c.latency)}")
    for p in r.pools:
        if p.utilisation is None:
            lines.append(f"pool {p.label}: cap inf, {p.allocated:,} units allocated now")
            continue
        lines.append(
            f"pool {p.label}: mean utilisation {p.utilisation:.1%} of {p.cap:,} units; now "
            f"{p.allocated:,} allocated, {p.cached:,} cached"
        )
    if r.halted is not None:
        lines.append(f"halted: {r.halted}")
    return "\n".join(lines)
