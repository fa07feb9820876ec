"""Simulation speed on the Mooncake conversation trace with blocks shared by content.

    python -m benchmarks mooncake                 # specs/mooncake_conv.pool at 10/50/100 %
    python -m benchmarks mooncake --quick         # 10 % only
    python -m benchmarks mooncake --no-compiled   # the importable build only

The whole trace headless in the fast mode (invariants off), on the build that is installed
(pure Python after a plain `pip install -e .`) and then on the compiled build (mypyc, the
same cache under build/compiled-<hash>/ as `python -m benchmarks azure`), in a subprocess.
Prints requests/s at 10 %, 50 % and 100 % of the trace and the peak memory of the
simulation at each size (tracemalloc): it should follow live sessions and cached blocks,
not the trace's length. Aims: 5,000 req/s pure, 15,000 compiled.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from benchmarks.azure import compiled_dir, program_at
from pooltui.lang.ir import Program
from pooltui.sim import Simulation
from pooltui.sim.compiled import build_label, is_compiled

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "specs" / "mooncake_conv.pool"
AIM = {"pure": 5_000, "compiled": 15_000}


def run_once(program: Program) -> tuple[float, Simulation]:
    sim = Simulation(program, fast=True, invariants=False, history=False)
    t = time.process_time()
    sim.run_headless()
    secs = time.process_time() - t
    halted = sim.summary().halted
    if halted is not None:
        raise SystemExit(f"the run halted: {halted}")
    return secs, sim


def peak(program: Program) -> str:
    sim = Simulation(program, fast=True, invariants=False, history=False)
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    sim.run_headless()
    top = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    r = sim.summary()
    cached = sum(p.cached for p in r.pools)
    return (
        f"{(top - base) / 2**20:.1f} MiB while simulating; at most {r.peak_live:,} sessions "
        f"live at once, {cached:,} units cached at the end"
    )


def measure(args: argparse.Namespace) -> None:
    spec = Path(args.spec)
    fractions = [0.1] if args.quick else [0.1, 0.5, 1.0]
    build = "compiled" if is_compiled() else "pure"
    print(f"== {build_label()} ==  spec: {spec}", flush=True)
    last = (1, 1.0)
    for f in fractions:
        program, n = program_at(spec, f)
        secs, sim = run_once(program)
        s = sim.summary()
        hit = s.hit_units / s.asked_units if s.asked_units else 0.0
        print(
            f"fast, {f:>4.0%} {n:>7,} req {secs:>8.2f}s {n / secs:>8,.0f} req/s   "
            f"hit {hit:.1%} (own {s.hit_own:,}, shared {s.hit_shared:,} units), "
            f"{s.evictions:,} evictions, {s.duplicates:,} duplicates",
            flush=True,
        )
        last = (n, secs)
    for f in fractions:
        program, n = program_at(spec, f)
        print(f"peak memory, {f:.0%} ({n:,} req): {peak(program)}", flush=True)
    n, secs = last
    verdict = "met" if n / secs >= AIM[build] else "not met"
    print(f"aim for the {build} build, {AIM[build]:,} req/s: {verdict} ({n / secs:,.0f})")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks mooncake")
    ap.add_argument("--spec", default=str(SPEC))
    ap.add_argument("--quick", action="store_true", help="10 %% of the trace only")
    ap.add_argument("--no-compiled", action="store_true", help="the importable build only")
    args = ap.parse_args(argv)
    measure(args)
    if not args.no_compiled and not is_compiled():
        with tempfile.TemporaryDirectory(prefix="pooltui-compiled-") as tmp:
            dest = compiled_dir(Path(tmp) / "build")
            if dest is not None:
                env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(dest), str(ROOT)])}
                cmd = [sys.executable, "-P", "-m", "benchmarks", "mooncake", *argv]
                subprocess.run([*cmd, "--no-compiled"], env=env, check=True)
    return 0
