"""The least a block's life costs in CPython, against issue 11's throughput aims.

    python -m benchmarks mooncake_floor            # interpreted and compiled (mypyc)
    python -m benchmarks mooncake_floor --blocks 852 --repeat 5

On `specs/mooncake_conv.pool` a request's blocks are each taken, registered under a hash,
released into a cache entry and evicted: 852 blocks a request on average (1,025,112 taken
for the first 1,203 requests). A block's id is physical and shown (the block map, `evict`'s
blocks), and the ids a hold takes are scattered (on the same run, 0.72 runs of consecutive
ids a block: each decode step gives 64 holds a block each, interleaved), so the work is per
block, not per run of ids. This times that work and nothing else: a loop per block with
only the stores the ledger must make (a count, an owner, the content and its index at the
take; the hash and the table's entry at registration; the count and the entry at release;
the table's entry, the hash and the free stack at eviction), no sharing, no events, no
scheduling, in the plainest loops (typed `int`s: locals, no attribute lookups). It
prints requests a second for those loops alone: a ceiling for the whole simulator, which
does everything else besides. Measured on the project's two-core VM (Python 3.11, mypy
2.4, best of 5, three runs): 7,800 to 8,500 requests/s interpreted (137-151 ns a block) and
6,900 to 7,800 compiled (150-169 ns: an int stored in a list is boxed anew, `mypyc_idioms`),
against the aims of 5,000 and 15,000 for the whole run. The compiled aim is above what these
loops alone allow, and the interpreted one leaves the rest of the simulator (sharing,
hashing content, scheduling, events) about half of the loops' time: both need a ledger that
registers and evicts a run of blocks (a 512-token piece is 32 blocks of 16) in one step.
Needs mypy and a C compiler for the compiled figure.
"""

from __future__ import annotations

import argparse
import importlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

SOURCE = '''
from __future__ import annotations
import time


def life(reps: int, nb: int, total: int) -> float:
    """`reps` requests of `nb` blocks each through a pool of `total`: seconds of CPU."""
    ref: list[int] = [0] * total
    owner: list[int] = [0] * total
    bhash: list[int] = [-1] * total
    bcontent: list[object] = [None] * total
    bidx: list[int] = [0] * total
    free: list[int] = list(range(total))
    table: dict[int, int] = {}
    content: object = object()
    t = time.process_time()
    for r in range(reps):
        ids = free[len(free) - nb :]  # taken: off the free stack
        del free[len(free) - nb :]
        j = 0
        for b in ids:
            ref[b] = 1
            owner[b] = r
            bcontent[b] = content
            bidx[b] = j
            j += 1
        h = 10**12 + r * nb  # registered: each under its hash
        for b in ids:
            bhash[b] = h
            table[h] = b
            h += 1
        entry: list[int] = []  # released: counts to 0, the blocks into one entry
        for b in ids:
            ref[b] -= 1
            entry.append(b)
        k = len(entry) - 1  # evicted: tail first, back on the free stack
        while k >= 0:
            b = entry[k]
            del table[bhash[b]]
            bhash[b] = -1
            free.append(b)
            k -= 1
    return time.process_time() - t
'''


def _best(module: str, reps: int, nb: int, repeat: int) -> float:
    life = importlib.import_module(module).life
    return min(life(reps, nb, 8192) for _ in range(repeat))


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks mooncake_floor")
    ap.add_argument("--blocks", type=int, default=852, help="blocks a request (852)")
    ap.add_argument("--requests", type=int, default=2000, help="requests a turn (2,000)")
    ap.add_argument("--repeat", type=int, default=3, help="turns; the best is kept (3)")
    args = ap.parse_args(argv)
    reps, nb = args.requests, args.blocks
    if not 0 < nb <= 8192 or reps <= 0 or args.repeat <= 0:
        ap.error("--blocks must be 1 to 8192, --requests and --repeat positive")
    rows: list[tuple[str, float]] = []
    with tempfile.TemporaryDirectory(prefix="pooltui-mypyc-") as tmp:
        src = Path(tmp) / "floor.py"
        src.write_text(SOURCE)
        sys.path.insert(0, tmp)
        rows.append(("interpreted", _best("floor", reps, nb, args.repeat)))
        del sys.modules["floor"]
        src.rename(Path(tmp) / "floor_c.py")
        proc = subprocess.run(
            [sys.executable, "-m", "mypyc", "floor_c.py"],
            cwd=tmp,
            capture_output=True,
            text=True,
            env={**os.environ, "MYPY_CACHE_DIR": str(Path(tmp) / ".mypy_cache")},
            check=False,
        )
        if proc.returncode == 0:
            rows.append(("compiled", _best("floor_c", reps, nb, args.repeat)))
        else:
            print(f"mypyc failed, the compiled build not measured:\n{proc.stdout}{proc.stderr}")
    print(f"a block's life (taken, registered, released, evicted), {nb} blocks a request:")
    for name, secs in rows:
        ns = secs / (reps * nb) * 1e9
        aim = 5_000 if name == "interpreted" else 15_000
        print(f"  {name:12s} {ns:6.0f} ns a block   {reps / secs:9,.0f} requests/s   (aim {aim:,})")
    return 0
