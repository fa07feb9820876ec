"""Speed and memory at scale (issue 13): the debugger's way to the end against the headless run.

    python -m benchmarks scale                      # both specs, every case
    python -m benchmarks scale --spec benchmarks/full_gpu.pool --case debugger
    python -m benchmarks scale --events 300000      # stop every case after N events

Cases, each in its own process (so peak RSS is the case's own, `resource.getrusage`):

    run         `pooltui run SPEC --quiet`: per-event, invariants on, no history (the cli's code)
    run-noinv   the same with --no-invariants
    fast        `pooltui run SPEC --fast --quiet --no-invariants`
    debugger    what the debugger's `c` does: a `Simulation` with history and invariants,
                driven to the end by the debugger's worker (`pooltui.tui.driver.Controller`,
                a `continue` command, frames posted to nowhere); then the latency of
                `goto` (random index) + snapshot and of `back` + snapshot at the end

Wall and CPU seconds (`time.process_time`) of the simulation only (compiling excluded),
peak RSS of the process. Machines shared with other jobs disturb wall time more than CPU.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SPECS = [ROOT / "specs" / "azure_conv.pool", ROOT / "benchmarks" / "full_gpu.pool"]
CASES = ("run", "run-noinv", "fast", "debugger")


def _rss_mb() -> float:
    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    return kb / 1024


def child_run(spec: str, flags: list[str], events: int | None) -> dict[str, Any]:
    from pooltui.cli.main import main

    argv = ["run", spec, "--quiet", *flags]
    if events is not None:
        argv += ["--events", str(events)]
    sink = io.StringIO()
    w, c = time.perf_counter(), time.process_time()
    with contextlib.redirect_stdout(sink):
        status = main(argv)
    wall, cpu = time.perf_counter() - w, time.process_time() - c
    first = sink.getvalue().splitlines()[:1]
    return {"wall": wall, "cpu": cpu, "rss": _rss_mb(), "status": status, "line": first}


def child_debugger(spec: str, events: int | None) -> dict[str, Any]:
    from pooltui.lang import compile_file
    from pooltui.sim import Simulation
    from pooltui.tui.driver import Command, Controller

    program = compile_file(spec)
    sim = Simulation(program)
    ctl = Controller(sim)
    frames = [0]

    def post(frame: Any) -> None:
        frames[0] += 1

    w, c = time.perf_counter(), time.process_time()
    if events is None:
        ctl.execute(Command("continue", seq=1), post)
    else:
        ctl.execute(Command("goto", seq=1, index=events - 1), post)
    wall, cpu = time.perf_counter() - w, time.process_time() - c
    rss_run = _rss_mb()
    n = len(sim.events)
    rng = random.Random(13)
    gotos, backs = [], []
    for _ in range(10):
        target = rng.randrange(0, n)
        t = time.perf_counter()
        sim.goto(target)
        sim.snapshot()
        gotos.append(time.perf_counter() - t)
    sim.goto(n - 1)
    sim.snapshot()
    for _ in range(20):
        t = time.perf_counter()
        sim.back()
        sim.snapshot()
        backs.append(time.perf_counter() - t)
    return {
        "wall": wall,
        "cpu": cpu,
        "rss": rss_run,
        "rss_after": _rss_mb(),
        "events": n,
        "frames": frames[0],
        "goto_med": statistics.median(gotos),
        "goto_max": max(gotos),
        "back_med": statistics.median(backs),
        "back_max": max(backs),
        "halted": sim.halted,
    }


def child(case: str, spec: str, events: int | None) -> dict[str, Any]:
    if case == "debugger":
        return child_debugger(spec, events)
    flags = {"run": [], "run-noinv": ["--no-invariants"], "fast": ["--fast", "--no-invariants"]}
    return child_run(spec, flags[case], events)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks scale")
    ap.add_argument("--spec", action="append", default=None)
    ap.add_argument("--case", action="append", choices=CASES, default=None)
    ap.add_argument("--events", type=int, default=None, help="stop each case after N events")
    ap.add_argument("--child", nargs=2, metavar=("CASE", "SPEC"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child is not None:
        print(json.dumps(child(args.child[0], args.child[1], args.events)))
        return 0
    specs = args.spec or [str(p) for p in SPECS]
    cases = args.case or list(CASES)
    load = os.getloadavg()[0]
    print(f"load average {load:.2f} on {os.cpu_count()} cores; times in seconds")
    for spec in specs:
        print(f"== {os.path.relpath(spec)}")
        for case in cases:
            cmd = [sys.executable, "-m", "benchmarks", "scale", "--child", case, spec]
            if args.events is not None:
                cmd += ["--events", str(args.events)]
            out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
            if out.returncode != 0:
                print(f"  {case:<10} failed: {out.stderr.strip()[-400:]}")
                continue
            r = json.loads(out.stdout.strip().splitlines()[-1])
            line = (
                f"  {case:<10} wall {r['wall']:7.2f}  cpu {r['cpu']:7.2f}  "
                f"peak RSS {r['rss']:7.1f} MB"
            )
            if case == "debugger":
                line += (
                    f"  {r['events']:,} events; at the end: goto+snapshot median "
                    f"{r['goto_med'] * 1000:.0f} ms (max {r['goto_max'] * 1000:.0f}), "
                    f"back+snapshot median {r['back_med'] * 1000:.0f} ms "
                    f"(max {r['back_max'] * 1000:.0f}); RSS after {r['rss_after']:.0f} MB"
                )
            elif r.get("line"):
                line += f"  [{r['line'][0]}]"
            print(line, flush=True)
    print(f"load average at the end {os.getloadavg()[0]:.2f}")
    return 0
