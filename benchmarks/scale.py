"""Speed and memory at scale (issue 13): the debugger's way to the end against the headless
run, and the start-up of the command line.

    python -m benchmarks scale                      # both specs, every case, then start-up
                                                    # (about 40 minutes on a busy 2-core box)
    python -m benchmarks scale --spec benchmarks/full_gpu.pool --case debugger
    python -m benchmarks scale --events 300000      # stop every case after N events
    python -m benchmarks scale --case startup       # start-up only

Cases, each in its own process (so peak RSS is the case's own, `resource.getrusage`):

    run           `pooltui run SPEC --quiet`: per-event, invariants on, no history (the cli's code)
    run-noinv     the same with --no-invariants
    fast          `pooltui run SPEC --fast --quiet --no-invariants`
    debugger      what the debugger's `c` does: the simulation the app opens (history,
                  invariants on), driven to the end by the debugger's worker
                  (`pooltui.tui.driver.Controller`, a `continue` with no breakpoint; its
                  frames built as for the screen, posted to nowhere); then the latency of
                  `goto` (random index) + snapshot and of `back` + snapshot at the end
    debugger-noinv  the same without invariants: the debugger's own cost, next to run-noinv
    app           the real app (Textual, headless, 160x48): `c`, to the end, screen drawn
    pause         the real app, as a user answers it: `c`, then `space` at random moments
                  (0.1-0.6 s apart, seeded), each time the time from the key (posted as a
                  terminal's driver posts it) to the paused frame applied and drawn (the
                  screen's next refresh done: `space` answered), then `c` again, to the end

Aims (issue 13): debugger within 2x of run (wall; the CPU time is steadier on a shared
machine), peak RSS under 400 MB, the longest time between two looks for a pause (`space`)
well under 100 ms, and `space` answered (the `pause` case) within 100 ms.

Start-up (`startup`): whole processes, `python -m pooltui check benchmarks/full_gpu.pool` and
`python -m pooltui run benchmarks/full_gpu.pool --fast --quiet --no-invariants`, pure Python
(a copy of the package without compiled modules), twice: with the bytecode cached, as an
installed package has it, and without (PYTHONDONTWRITEBYTECODE=1 over a copy with no
__pycache__: every module of the package compiled at each start, as a checkout run in an
environment that sets it); the best of several runs (CPU = user + system, of the child).
Aims: check < 0.25 s, the fast run < 1.0 s. The interpreter's own start (`python -c pass`)
is printed beside them (a version manager's shim, such as pyenv's, adds about 0.05 s more).

Wall and CPU seconds (`time.process_time`; `app`: the whole process, both threads) of the
simulation only (compiling excluded), peak RSS of the process. Machines shared with other
jobs disturb wall time more than CPU.
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
CASES = ("run", "run-noinv", "fast", "debugger", "debugger-noinv", "app", "pause")
DEFAULT = CASES
FULL_GPU = ROOT / "benchmarks" / "full_gpu.pool"


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


def child_debugger(spec: str, events: int | None, invariants: bool = True) -> dict[str, Any]:
    from pooltui.lang import compile_file
    from pooltui.sim import Simulation
    from pooltui.tui.commands import Command
    from pooltui.tui.driver import Controller

    program = compile_file(spec)
    sim = Simulation(program, invariants=invariants)
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
        "gap": ctl.longest_gap,
        "gap_cpu": ctl.longest_gap_cpu,
        "goto_med": statistics.median(gotos),
        "goto_max": max(gotos),
        "back_med": statistics.median(backs),
        "back_max": max(backs),
        "halted": sim.halted,
    }


def child_app(spec: str, events: int | None) -> dict[str, Any]:
    """The real app, headless: `c` (or `g N`) and wait for the end; the screen is drawn."""
    import asyncio

    from pooltui.tui.app import PoolApp

    app = PoolApp.from_spec(spec)
    out: dict[str, Any] = {}

    async def go() -> None:
        async with app.run_test(size=(160, 48)) as pilot:
            await app.settle(60)
            w, c, ui = time.perf_counter(), time.process_time(), time.thread_time()
            if events is None:
                await pilot.press("c")
            else:
                app.send("goto", index=events - 1)
            await pilot.pause(0.05)
            while not app.idle:
                await asyncio.sleep(0.05)
            await pilot.pause()
            out["wall"] = time.perf_counter() - w
            out["cpu"] = time.process_time() - c
            out["ui_cpu"] = time.thread_time() - ui  # the screen's thread (this one)
            snap = app.snapshot
            out["events"] = snap.events_total if snap is not None else 0
            out["frames"] = app.frames_applied
            ctl = app.controller
            out["gap"] = ctl.longest_gap if ctl is not None else 0.0
            out["gap_cpu"] = ctl.longest_gap_cpu if ctl is not None else 0.0

    asyncio.run(go())
    out["rss"] = _rss_mb()
    return out


def child_pause(spec: str, events: int | None) -> dict[str, Any]:
    """The real app, headless: `c`, `space` after a random while, the time until the paused
    frame is shown; again until the end (or `events`)."""
    import asyncio

    from textual.events import Key

    from pooltui.tui.app import PoolApp

    app = PoolApp.from_spec(spec)
    rng = random.Random(7)
    answers: list[float] = []
    out: dict[str, Any] = {}

    async def go() -> None:
        async with app.run_test(size=(160, 48)):
            await app.settle(60)
            w = time.perf_counter()
            # Keys posted as a terminal's driver posts them (pilot.press would also wait
            # for the app to be idle, which it is not while a run's frames arrive).
            while not app.ended and len(answers) < 200:
                app.post_message(Key("c", "c"))
                await asyncio.sleep(rng.uniform(0.1, 0.6))
                if app.idle:  # it stopped by itself (the end)
                    continue
                t = time.perf_counter()
                app.post_message(Key("space", " "))
                while not app.idle:
                    await asyncio.sleep(0.001)
                # ... and drawn: the screen has refreshed after the paused frame.
                drawn = asyncio.Event()
                app.call_after_refresh(drawn.set)
                await drawn.wait()
                answers.append(time.perf_counter() - t)
                snap = app.snapshot
                if events is not None and snap is not None and snap.events_total >= events:
                    break
            out["wall"] = time.perf_counter() - w
            snap = app.snapshot
            out["events"] = snap.events_total if snap is not None else 0

    asyncio.run(go())
    answers.sort()
    out["cpu"] = time.process_time()
    out["rss"] = _rss_mb()
    out["pauses"] = len(answers)
    out["median"] = statistics.median(answers) if answers else 0.0
    out["p90"] = answers[int(0.9 * (len(answers) - 1))] if answers else 0.0
    out["max"] = answers[-1] if answers else 0.0
    return out


def child(case: str, spec: str, events: int | None) -> dict[str, Any]:
    if case == "pause":
        return child_pause(spec, events)
    if case == "debugger":
        return child_debugger(spec, events)
    if case == "debugger-noinv":
        return child_debugger(spec, events, invariants=False)
    if case == "app":
        return child_app(spec, events)
    flags = {"run": [], "run-noinv": ["--no-invariants"], "fast": ["--fast", "--no-invariants"]}
    return child_run(spec, flags[case], events)


# --------------------------------------------------------------------------- start-up


def _pure_env(root: Path = ROOT) -> dict[str, str]:
    """`root`'s package first on the path, bytecode written and read."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(root)
    return env


def _process(cmd: list[str], repeat: int, env: dict[str, str]) -> tuple[float, float]:
    """(best CPU, best wall) of `repeat` runs of a whole process, after one to warm up."""
    best_cpu = best_wall = float("inf")
    for i in range(repeat + 1):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        w = time.perf_counter()
        subprocess.run(cmd, env=env, cwd=env["PYTHONPATH"], capture_output=True, check=False)
        wall = time.perf_counter() - w
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        if i:  # the first run writes the bytecode
            best_cpu, best_wall = min(best_cpu, cpu), min(best_wall, wall)
    return best_cpu, best_wall


def startup(repeat: int) -> None:
    """Whole processes, twice: with the package's bytecode cached (an installed package,
    or a checkout run before), and without (PYTHONDONTWRITEBYTECODE=1 and no __pycache__:
    every module of the package compiled from source at each start; the rest of the
    interpreter's modules keep their cached bytecode)."""
    import tempfile

    from pooltui.sim.compiled import copy_package

    py = sys.executable
    spec = str(FULL_GPU)
    rows = [
        ("python -c pass", [py, "-c", "pass"], None),
        ("check full_gpu.pool", [py, "-m", "pooltui", "check", spec], 0.25),
        (
            "run full_gpu.pool --fast",
            [py, "-m", "pooltui", "run", spec, "--fast", "--quiet", "--no-invariants"],
            1.0,
        ),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        fresh = copy_package(ROOT, Path(tmp) / "fresh")  # no __pycache__, no compiled build
        never = copy_package(ROOT, Path(tmp) / "never")  # never writes one
        cold = {**_pure_env(never), "PYTHONDONTWRITEBYTECODE": "1"}
        print(f"== start-up (whole processes, pure Python, best of {repeat})")
        print(f"  {'':<28} {'bytecode cached':>26}   {'no bytecode cache':>26}")
        for name, cmd, aim in rows:
            warm = _process(cmd, repeat, _pure_env(fresh))
            cold_t = _process(cmd, repeat, cold) if aim is not None else warm
            line = f"  {name:<28}"
            for cpu, wall in (warm, cold_t):
                line += f"   cpu {cpu:6.3f} wall {wall:6.3f}"
            if aim is not None:
                line += f"   aim < {aim:.2f} s (CPU)"
            print(line, flush=True)


# --------------------------------------------------------------------------- driver


def _line(case: str, r: dict[str, Any]) -> str:
    line = f"  {case:<14} wall {r['wall']:7.2f}  cpu {r['cpu']:7.2f}  peak RSS {r['rss']:7.1f} MB"
    if case.startswith("debugger"):
        line += (
            f"  {r['events']:,} events, {r['frames']} frames; longest between pause checks "
            f"{r['gap'] * 1000:.1f} ms ({r['gap_cpu'] * 1000:.1f} ms CPU); at the end: "
            "goto+snapshot median "
            f"{r['goto_med'] * 1000:.0f} ms (max {r['goto_max'] * 1000:.0f}), back+snapshot "
            f"median {r['back_med'] * 1000:.0f} ms (max {r['back_max'] * 1000:.0f})"
        )
    elif case == "pause":
        line = (
            f"  {case:<14} {r['pauses']} pauses over {r['events']:,} events: `space` answered "
            f"in median {r['median'] * 1000:.0f} ms, 90th percentile {r['p90'] * 1000:.0f} ms, "
            f"max {r['max'] * 1000:.0f} ms (aim: within 100 ms)"
        )
    elif case == "app":
        line += (
            f"  {r['events']:,} events, {r['frames']} frames shown (the screen's thread "
            f"{r['ui_cpu']:.2f} s CPU); longest between pause checks {r['gap'] * 1000:.1f} ms "
            f"({r['gap_cpu'] * 1000:.1f} ms CPU)"
        )
    elif r.get("line"):
        line += f"  [{r['line'][0]}]"
    return line


def _ratios(results: dict[str, dict[str, Any]]) -> None:
    for mine, base in (("debugger", "run"), ("debugger-noinv", "run-noinv"), ("app", "run")):
        if mine in results and base in results:
            a, b = results[mine], results[base]
            print(
                f"  {mine} / {base}: wall {a['wall'] / b['wall']:.2f}x, "
                f"cpu {a['cpu'] / b['cpu']:.2f}x (aim: within 2x)"
            )


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks scale")
    ap.add_argument("--spec", action="append", default=None)
    ap.add_argument("--case", action="append", choices=(*CASES, "startup"), default=None)
    ap.add_argument("--events", type=int, default=None, help="stop each case after N events")
    ap.add_argument("--repeat", type=int, default=5, help="start-up: runs of each process")
    ap.add_argument("--child", nargs=2, metavar=("CASE", "SPEC"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child is not None:
        print(json.dumps(child(args.child[0], args.child[1], args.events)))
        return 0
    specs = args.spec or [str(p) for p in SPECS]
    cases = args.case or [*DEFAULT, "startup"]
    load = os.getloadavg()[0]
    print(f"load average {load:.2f} on {os.cpu_count()} cores; times in seconds")
    sim_cases = [c for c in cases if c != "startup"]
    for spec in specs if sim_cases else ():
        print(f"== {os.path.relpath(spec)}")
        results: dict[str, dict[str, Any]] = {}
        for case in sim_cases:
            cmd = [sys.executable, "-m", "benchmarks", "scale", "--child", case, spec]
            if args.events is not None:
                cmd += ["--events", str(args.events)]
            out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=_pure_env())
            if out.returncode != 0:
                print(f"  {case:<14} failed: {out.stderr.strip()[-400:]}")
                continue
            results[case] = json.loads(out.stdout.strip().splitlines()[-1])
            print(_line(case, results[case]), flush=True)
        _ratios(results)
    if "startup" in cases:
        startup(args.repeat)
    print(f"load average at the end {os.getloadavg()[0]:.2f}")
    return 0
