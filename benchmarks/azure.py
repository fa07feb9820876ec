"""Simulation speed on the Azure conversation trace (issue: 20,000 requests per second).

    python -m benchmarks azure                 # everything below, on specs/azure_conv.pool
    python -m benchmarks azure --quick         # 10 % of the trace only
    python -m benchmarks azure --spec specs/azure_code.pool
    python -m benchmarks azure --no-compiled   # the importable build only

Everything is measured twice: on the build that is installed (pure Python after a plain
`pip install -e .`), then on the compiled build (the same source compiled with mypyc, see
pooltui/sim/compiled.py), which is built once and kept under the user's cache folder (a
minute or two; rebuilt when a compiled module changes, shared with the compiled build's
test: `cached_build`), and run from a copy in a temporary folder, in a subprocess.

Prints, for the fast mode (steady decoders counted arithmetically, invariants off):
requests/s, events/s, iterations/s at 10 %, 50 % and 100 % of the trace (time should grow
linearly); the same with invariants on; the per-event mode (what the debugger steps
through) for comparison; and the peak memory of the simulation at each size (tracemalloc,
after compiling: it should follow live sessions, not the trace). Times are CPU seconds of
this process (the best of --repeat runs), so a busy machine disturbs them less, of the
command's own code (`pooltui run`'s `headless`, its summary printed to a null sink), so
the figures are what a user's `pooltui run --fast` gets.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from pooltui.lang import compile_source
from pooltui.lang.ir import Program
from pooltui.sim import Simulation
from pooltui.sim.compiled import build_label, cached_build, is_compiled

ROOT = Path(__file__).resolve().parent.parent
TARGET = 20_000  # simulated requests per second (issue 6)


def program_at(spec: Path, fraction: float) -> tuple[Program, int]:
    """The spec with its CSV session limited to the first `fraction` of the rows."""
    text = spec.read_text()
    full = compile_source(text, str(spec), str(spec.parent))
    rows = sum(s.count for s in full.sessions if s.source is not None)
    if fraction >= 1.0:
        return full, rows
    n = max(1, int(rows * fraction))
    limited = re.sub(r'(from\s+"[^"]+")(\s*limit\s+\d+)?', rf"\1 limit {n}", text, count=1)
    return compile_source(limited, str(spec), str(spec.parent)), n


def timed(
    program: Program, *, fast: bool, invariants: bool, repeat: int
) -> tuple[float, Simulation]:
    """CPU seconds of `pooltui run SPEC --quiet [--fast] [--no-invariants]` on the compiled
    program: the command's own code (`pooltui.cli.run.headless`), its summary printed to
    a null sink. The best of `repeat` runs."""
    from pooltui.cli.main import build_parser
    from pooltui.cli.run import headless

    argv = ["run", program.file, "--quiet"]
    argv += ["--fast"] if fast else []
    argv += [] if invariants else ["--no-invariants"]
    args = build_parser().parse_args(argv)
    best = float("inf")
    sim = None
    for _ in range(repeat):
        with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
            t = time.process_time()
            status, sim = headless(args, program)
            best = min(best, time.process_time() - t)
        assert sim is not None
        halted = sim.summary().halted
        if halted is not None or status != 0:
            raise SystemExit(f"the run halted: {halted}")
    assert sim is not None
    return best, sim


def engine_only(program: Program, *, fast: bool, invariants: bool) -> float:
    """CPU seconds of `Simulation.run_headless()` alone (what this harness timed before
    it timed the command): no summary, no callback."""
    sim = Simulation(program, fast=fast, invariants=invariants, history=False)
    t = time.process_time()
    sim.run_headless()
    return time.process_time() - t


def row(label: str, n: int, secs: float, sim: Simulation) -> str:
    s = sim.summary()
    return (
        f"{label:<26} {n:>7,} req {secs:>7.2f}s  {n / secs:>9,.0f} req/s  "
        f"{s.events / secs:>10,.0f} events/s  {s.iterations / secs:>9,.0f} it/s"
    )


def peak_memory(program: Program) -> str:
    """Peak bytes allocated while simulating (not compiling), with what the summary's
    latency samples take of it and the most sessions live at once."""
    sim = Simulation(program, fast=True, invariants=False, history=False)
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    sim.run_headless()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    r = sim.summary()
    samples = 8 * sum(len(c.latency) + len(c.queueing) + len(c.ttft) for c in r.classes)
    return (
        f"{(peak - base) / 2**20:.2f} MiB while simulating, of which {samples / 2**20:.2f} MiB "
        f"are the summary's latency samples; at most {r.peak_live} "
        "sessions live at once"
    )


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks azure")
    ap.add_argument("--spec", default=str(ROOT / "specs" / "azure_conv.pool"))
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="10 %% of the trace only")
    ap.add_argument("--no-slow", action="store_true", help="skip the per-event mode")
    ap.add_argument("--no-compiled", action="store_true", help="measure the importable build only")
    args = ap.parse_args(argv)
    measure(args)
    if not args.no_compiled and not is_compiled():
        print()
        run_compiled(argv)
    return 0


def compiled_dir(into: Path) -> Path | None:
    """The compiled build assembled in `into` from the one kept in the user's cache folder
    (`cached_build`: rebuilt when a compiled module, mypy or Python changed); None (said
    why) when it cannot be built here."""
    try:
        import mypy.version  # noqa: F401
    except ImportError:
        print("the compiled build needs mypy (pip install -e '.[test]'): not measured")
        return None

    t = time.perf_counter()
    print("the compiled build (mypyc), kept in the user's cache folder ...", flush=True)
    try:
        dest = cached_build(ROOT, into)
    except (RuntimeError, OSError) as exc:
        print(f"the compiled build failed, not measured: {exc}")
        return None
    print(f"ready in {time.perf_counter() - t:.0f} s", flush=True)
    return dest


def run_compiled(argv: list[str]) -> None:
    with tempfile.TemporaryDirectory(prefix="pooltui-compiled-") as tmp:
        dest = compiled_dir(Path(tmp) / "build")
        if dest is None:
            return
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(dest), str(ROOT)])}
        # -P: the checkout's own (pure) pooltui must not come before the compiled copy.
        cmd = [sys.executable, "-P", "-m", "benchmarks", "azure", *argv, "--no-compiled"]
        subprocess.run(cmd, env=env, check=True)


def measure(args: argparse.Namespace) -> None:
    spec = Path(args.spec)
    fractions = [0.1] if args.quick else [0.1, 0.5, 1.0]
    print(f"== {build_label()} ==  spec: {spec}", flush=True)
    results = {}
    for f in fractions:
        program, n = program_at(spec, f)
        secs, sim = timed(program, fast=True, invariants=False, repeat=args.repeat)
        results[f] = (n, secs)
        print(row(f"fast, {f:.0%}", n, secs, sim), flush=True)
        s = sim.summary()
        print(
            f"{'':26} simulated {s.time:,.0f}s: {s.preemptions:,} preemptions, "
            f"{s.evictions:,} evictions"
        )
    program, n = program_at(spec, fractions[-1])
    alone = engine_only(program, fast=True, invariants=False)
    print(
        f"{'':26} the engine alone (Simulation.run_headless, no summary): {alone:.2f}s; "
        f"the command: {results[fractions[-1]][1]:.2f}s"
    )
    if len(fractions) > 1:
        (n0, t0), (n1, t1) = results[fractions[0]], results[fractions[-1]]
        print(f"scaling: {n1 / n0:.1f}x the requests took {t1 / t0:.1f}x the time")
    program, n = program_at(spec, fractions[-1])
    secs_on, sim = timed(program, fast=True, invariants=True, repeat=1)
    print(row("fast, invariants on", n, secs_on, sim))
    ratio = secs_on / results[fractions[-1]][1]
    print(f"{'':26} {ratio:.2f}x the time with invariants off (asked: at most 3x)")
    if not args.no_slow:
        secs_slow, sim = timed(program, fast=False, invariants=False, repeat=1)
        print(row("per-event mode", n, secs_slow, sim))
    for f in fractions:
        program, n = program_at(spec, f)
        print(f"peak memory, {f:.0%} ({n:,} req): {peak_memory(program)}", flush=True)
    n, secs = results[fractions[-1]]
    verdict = "met" if n / secs >= TARGET else "not met"
    print(
        f"the issue's target, {TARGET:,} req/s (fast mode, invariants off, "
        f"{fractions[-1]:.0%} of the trace): {verdict} by this build ({n / secs:,.0f})"
    )
