"""The Mooncake run's machine instructions, counted by valgrind (cachegrind's `I refs`):
the same figure every run to a few parts in a million, on a VM where one-shot timings
vary by half. Compares source trees (worktrees, or `git archive` copies of commits).

    python -m benchmarks mooncake_ir                       # this tree, 3 % of the trace
    python -m benchmarks mooncake_ir --fraction 0.01 TREE_A TREE_B

Each tree runs specs/mooncake_conv.pool in the fast mode, headless, invariants off, under
`valgrind --tool=cachegrind --cache-sim=no` twice: the setup alone (imports, the trace's
parse) and the setup and the run; the difference is the simulation's. A run outside
valgrind first writes the byte code and the parsed spec's cache (`lang.parser.cache_dir`),
so that neither count pays for them; PYTHONHASHSEED is fixed. Prints instructions per request, and against the first tree.
Needs valgrind; the pure build only (whatever `pooltui` the tree's path gives).

What it showed on moonspeed5 (3 %, 360 requests, main 5ca6e66: 2.30e9 instructions, 6.4
million a request; about 310,000 blocks each grown, registered, released and evicted).
A per-block loop costs about 80 instructions an iteration and 110 a list store (the
old value's reference dropped), so a block's whole life through the ledger's loops is
about 1,500 of the 7,400 a request spends per block it grows: grow's loop (4 stores) 7.1 % of the run, register's hash store and
`_release_kept`'s loop together 7.7 %, `evict_ids`' two clearing stores 3.7 % (measured
by running each loop twice, behaviour unchanged). Dropping evict's two stores saves
2.6 %, adding two to grow's loop costs 3.2 %: removing bcontent/bidx/bhash block by block
(the layout change of issue 11's fifth round) is worth about 9 % in all, none of its
steps 10 %. Moving evict's `del table[h]` loop into C (`deque(map(table.pop, ...), 0)`)
costs 54 million instructions more than the Python loop: a C-level map over a method
is not cheaper than a specialised loop in CPython 3.11.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The child: the setup, then `runs` fast headless runs (0: the setup alone).
CHILD = """
import sys
from benchmarks.azure import program_at
from benchmarks.mooncake import SPEC
from pooltui.sim import Simulation
program, n = program_at(SPEC, float(sys.argv[1]))
for _ in range(int(sys.argv[2])):
    Simulation(program, fast=True, invariants=False, history=False).run_headless()
print(n)
"""


def instructions(tree: Path, fraction: float, runs: int) -> tuple[int, int]:
    """(instructions, requests) of the child in `tree` under cachegrind."""
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONHASHSEED": "0"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    child = [sys.executable, "-c", CHILD, str(fraction)]
    subprocess.run([*child, "0"], env=env, cwd=tree, capture_output=True, check=True)
    cmd = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"]
    cmd += [*child, str(runs)]
    done = subprocess.run(cmd, env=env, cwd=tree, capture_output=True, text=True, check=True)
    found = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
    if found is None:
        raise SystemExit(f"no instruction count from valgrind:\n{done.stderr[-2000:]}")
    return int(found.group(1).replace(",", "")), int(done.stdout.split()[-1])


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks mooncake_ir")
    ap.add_argument("trees", nargs="*", type=Path, help="source trees (default: this one)")
    ap.add_argument("--fraction", type=float, default=0.03)
    args = ap.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("valgrind is not installed")
        return 1
    first = 0
    for tree in args.trees or [ROOT]:
        tree = tree.resolve()
        setup, _ = instructions(tree, args.fraction, 0)
        total, n = instructions(tree, args.fraction, 1)
        sim = total - setup
        first = first or sim
        print(
            f"{tree}: {sim:,} instructions, {sim / n:,.0f} per request "
            f"({n:,} requests; {sim / first - 1:+.1%} against the first)",
            flush=True,
        )
    return 0
