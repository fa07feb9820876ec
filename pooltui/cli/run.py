"""`pooltui run SPEC`: simulate headless and print a summary.

Exit 0 when the run ends cleanly (or at --until / --events); 1 on an invariant violation, a
failed `check`, a deadlock, a runtime error of the spec, or a spec that does not compile.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import sys
import time
from collections.abc import Sequence
from typing import IO, Any

from pooltui.cli.check import compile_or_say
from pooltui.cli.output import OutputError, atomic_text, check_target, emit, reason
from pooltui.lang import render
from pooltui.lang.ir import Program
from pooltui.lang.words import count, seconds
from pooltui.sim import Event, RunSummary, Simulation


def percentiles(xs: Sequence[float]) -> str:
    if not xs:
        return "—"
    ys = sorted(xs)

    def q(p: float) -> str:
        return seconds(ys[min(len(ys) - 1, max(0, math.ceil(p * len(ys)) - 1))], 4)

    return f"p50 {q(0.5)}  p90 {q(0.9)}  p99 {q(0.99)}  max {seconds(ys[-1], 4)}"


class RunProgress:
    """rich's progress bar on stderr, shown once a run has taken a second (only when
    stderr is a terminal): simulated time against the last arrival, and events."""

    def __init__(self, end_time: float | None) -> None:
        self.end = end_time if end_time and math.isfinite(end_time) and end_time > 0 else None
        self.started = time.monotonic()
        self.bar: Any = None
        self.task: Any = None

    def __call__(self, now: float, events: int) -> None:
        if self.bar is None:
            if time.monotonic() - self.started < 1.0:
                return
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                Progress,
                TaskProgressColumn,
                TextColumn,
                TimeElapsedColumn,
            )

            self.bar = Progress(
                TextColumn("simulating"),
                BarColumn(),
                TaskProgressColumn(),
                TextColumn("t={task.fields[now]}"),
                TextColumn("{task.fields[events]}"),
                TimeElapsedColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            self.task = self.bar.add_task("run", total=self.end, now="", events="", start=True)
        done = min(now, self.end) if self.end is not None else now
        if not math.isfinite(done):
            done = self.end or 0.0
        self.bar.update(
            self.task, completed=done, now=seconds(now, 4), events=count(events, "event")
        )
        if not self.bar.live.is_started:
            self.bar.start()

    def done(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def trace_line(ev: Event) -> str:
    """One event as the trace writes it: `Event.to_json`, strict JSON ("inf" for inf)."""
    return ev.to_json()


def inputs(spec: str, program: Program | None) -> list[tuple[str, str]]:
    """The files a run reads, (path, what), which it must never write."""
    out = [(spec, "the spec")]
    for session in program.sessions if program is not None else ():
        source = getattr(session, "source", None)
        path = getattr(source, "path", None)
        if isinstance(path, str):
            out.append((path, f"a source of the spec ('{getattr(source, 'written', path)}')"))
    return out


def run_headless(args: argparse.Namespace) -> int:
    program = compile_or_say(args.spec)  # its errors as `pooltui check` says them
    if program is None:
        return 1
    return headless(args, program)[0]


def headless(args: argparse.Namespace, program: Program) -> tuple[int, Simulation | None]:
    """`pooltui run` on a compiled program: simulate, print the summary; (exit status, the
    simulation). The benchmarks time this, the command's own path."""
    trace_path: str | None = args.trace
    if trace_path is not None:
        try:
            check_target(trace_path, inputs(args.spec, program))
        except OutputError as exc:
            print(f"pooltui: {exc}", file=sys.stderr)
            return 1, None
    sim = Simulation(program, invariants=not args.no_invariants, history=False, fast=args.fast)
    last: list[Event] = []
    trace_error: list[OutputError] = []
    started: list[bool] = []

    end_hint = args.until if args.until is not None else sim.summary().last_arrival
    progress = RunProgress(end_hint) if sys.stderr.isatty() and not args.quiet else None
    wall = time.perf_counter()
    opened: contextlib.AbstractContextManager[IO[str] | None] = (
        atomic_text(trace_path) if trace_path is not None else contextlib.nullcontext(None)
    )
    try:
        with opened as trace:
            started.append(True)

            def on_event(ev: Event) -> None:
                last[:] = [ev]
                if not trace_error:
                    try:
                        assert trace is not None
                        trace.write(trace_line(ev) + "\n")
                    except OSError as exc:  # a full disk, a file-size limit: keep running
                        trace_error.append(OutputError(trace_path or "", reason(exc)))

            # Without a trace nothing is recorded: the summary comes from the engine's
            # own counters, and a halt's last event is made when asked for.
            try:
                sim.run_headless(
                    until=args.until,
                    events=args.events,
                    on_event=on_event if trace is not None else None,
                    progress=progress,
                )
            finally:
                if progress is not None:
                    progress.done()
            if trace_error:
                raise trace_error[0]
    except OutputError as exc:
        if not started:  # the file could not even be created: say so before simulating
            print(f"pooltui: {exc}", file=sys.stderr)
            return 1, sim
        if not trace_error:
            trace_error.append(exc)  # failed when finishing the file: the run is done
    wall = time.perf_counter() - wall
    result = sim.summary()
    emit(summary(result, wall))
    status = 0
    if result.halted is not None:
        print(file=sys.stderr)
        if sim.error is not None:
            print(render(sim.error, program.source), file=sys.stderr)
        else:
            print(f"pooltui: stopped: {result.halted}", file=sys.stderr)
        final = last[0] if last else sim.last_event()
        if final is not None:
            print(f"  at event {final.describe()}", file=sys.stderr)
        status = 1
    if trace_error:
        print(f"pooltui: {trace_error[0]} (the summary above is complete)", file=sys.stderr)
        status = 1
    return status, sim


def _share(x: float) -> str:
    return f"{x:.1%}" if math.isfinite(x) else "—"


def summary(r: RunSummary, wall: float) -> str:
    lines = [
        f"simulated {seconds(r.time)} in {seconds(wall, 3)} wall: {count(r.events, 'event')}, "
        f"{count(r.iterations, 'iteration')}",
        f"sessions: {r.arrived:,} arrived, {r.done:,} done, {r.rejected:,} rejected, "
        f"{r.live:,} still live",
        f"preemptions {r.preemptions:,}  evictions {r.evictions:,} "
        f"({r.evicted_units:,} units)  spills {r.spills:,}  drops {r.drops:,}",
    ]
    rate = f"{r.hit_units / r.asked_units:.1%}" if r.asked_units else "—"
    lines.append(
        f"cache hit rate: {rate} ({r.hit_units:,} of {r.asked_units:,} units asked at admissions)"
    )
    if r.asked_units:
        lines.append(
            f"  own {r.hit_own / r.asked_units:.1%}  shared {r.hit_shared / r.asked_units:.1%}  "
            f"reloaded {r.hit_reloaded / r.asked_units:.1%}  (units: own {r.hit_own:,}, "
            f"shared {r.hit_shared:,}, reloaded {r.hit_reloaded:,})"
        )
        # the units too, so a figure worked out elsewhere (benchmarks/mooncake_hits.py)
        # can be compared with the printed one to the unit
        lines.append(
            f"  shared with holds still holding them: {r.hit_held:,} units; "
            f"duplicate blocks {r.duplicates:,}"
        )
    if r.reloading:
        share = f"{r.hit_reloaded / r.hit_units:.1%}" if r.hit_units else "—"
        lines.append(
            f"reloads {r.reloads:,} ({r.reloaded_units:,} units landed; {share} of hit units "
            f"came from tiers; recompute saved {r.reloaded_units:,} tokens)"
        )
    for lk in r.links:
        share = _share(lk.busy / (r.time * lk.lanes)) if r.time > 0 else "—"
        jobs = [count(lk.spills, "spill"), count(lk.reloads, "reload"), count(lk.sends, "send")]
        lines.append(f"link {lk.label}: busy {seconds(lk.busy, 4)} ({share}), " + ", ".join(jobs))
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
            f"pool {p.label}: mean utilisation {_share(p.utilisation)} of {p.cap:,} units; now "
            f"{p.allocated:,} allocated, {p.cached:,} cached"
        )
    if r.halted is not None:
        lines.append(f"halted: {r.halted}")
    return "\n".join(lines)
