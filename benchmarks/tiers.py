"""Reload from lower tiers on the Mooncake conversation trace (issue 12).

    python -m benchmarks tiers                # the whole trace (12,031 requests), with and
                                              # without reload
    python -m benchmarks tiers --rows 1000    # only the trace's first 1,000 requests

benchmarks/tiers.pool: specs/mooncake_conv.pool's GPU and requests over three tiers (GPU
memory, CPU memory, disk); hbm spills down the chain in both runs, and reads it back only
with RELOAD = 1. Each run is headless in the fast mode, invariants off. Prints, for each:
time to first token p50 / p99 (per request: the trace's rows are one request each), the
recomputed tokens, the reloads and the simulation's own time.

Recomputed tokens: at a request's first admission, the prompt tokens an earlier request
had already computed (its leading hash_ids that an earlier request had, in whole blocks,
never its last token) that it neither hit in GPU memory nor reloaded from a tier: it
computes them again. (Recompute after a preemption is not counted; preemptions are.) This
one GPU (about 48,000 prefill tokens a second at its full budget) is slower than the trace
asks, so its queue grows over the run and queueing dominates time to first token
(queueing p50 is printed): what reload changes is the recompute, which shortens the queue.
A conversation's next turn also often arrives before its previous turn has been computed,
and recomputes what no tier could have held yet.

The whole trace is the default: each run takes about 300 s of CPU (measured at the
trace's 12,031 requests: 298 s with reload, 300 s without; about 10 minutes of wall time
each on a two-core machine shared with other work). `--rows N` cuts the trace to its
first N requests for a quicker look.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import time
from pathlib import Path

from pooltui.lang import compile_source
from pooltui.lang.ir import Program
from pooltui.sim import Event, Simulation

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "benchmarks" / "tiers.pool"
TRACE = ROOT / "data" / "mooncake_conversation.jsonl"
DEFAULT_ROWS = 0  # 0: the whole trace
BLOCK, KEY = 16, 512  # the spec's block, and the trace's units per hash_id


def program(rows: int, reload: bool) -> Program:
    text = SPEC.read_text()
    text = text.replace("const RELOAD = 1;", f"const RELOAD = {int(reload)};")
    if rows:
        text = re.sub(r'(from\s+"[^"]+")', rf"\1 limit {rows}", text, count=1)
    return compile_source(text, str(SPEC), str(SPEC.parent))


def reusable(rows: int) -> list[int]:
    """Per request: the prompt tokens an earlier request had computed (its leading
    hash_ids seen in an earlier row, as units), limited like a hit (whole blocks, never
    the last token). A hash_id stands for the whole prefix up to its block's end."""
    seen: set[int] = set()
    out: list[int] = []
    with TRACE.open() as f:
        for i, line in enumerate(f):
            if rows and i >= rows:
                break
            row = json.loads(line)
            ids = row["hash_ids"]
            k = 0
            while k < len(ids) and ids[k] in seen:
                k += 1
            cap = (row["input_length"] - 1) // BLOCK * BLOCK
            out.append(min(k * KEY, cap))
            seen.update(ids)
    return out


def quantile(xs: list[float], p: float) -> float:
    ys = sorted(xs)
    return ys[min(len(ys) - 1, max(0, math.ceil(p * len(ys)) - 1))] if ys else math.nan


def run(rows: int, reload: bool, reuse: list[int]) -> dict[str, float]:
    sim = Simulation(program(rows, reload), fast=True, invariants=False, history=False)
    got: dict[str, int] = {}  # request -> hit + reloaded at its first admission
    first: set[str] = set()  # requests whose last admit was their first

    def on_event(e: Event) -> None:
        who = e.session or ""
        if e.moment == "admit":
            if who in got:
                first.discard(who)
            else:
                got[who] = int(e.get("hit") or 0)
                first.add(who)
        elif e.moment == "reload" and who in first:
            got[who] += e.units or 0

    t0, w0 = time.process_time(), time.perf_counter()
    sim.run_headless(on_event=on_event)
    secs, wall = time.process_time() - t0, time.perf_counter() - w0
    s = sim.summary()
    if s.halted is not None:
        raise SystemExit(f"the run halted: {s.halted}")
    recomputed = 0
    for name, hit in got.items():
        index = int(name[name.index("[") + 1 : -1])
        recomputed += max(0, reuse[index] - hit)
    ttft = [x for c in s.classes for x in c.ttft]
    queueing = [x for c in s.classes for x in c.queueing]
    return {
        "queue50": quantile(queueing, 0.5),
        "ttft50": quantile(ttft, 0.5),
        "ttft99": quantile(ttft, 0.99),
        "recomputed": recomputed,
        "reusable": sum(reuse),
        "reloads": s.reloads,
        "reloaded": s.reloaded_units,
        "preemptions": s.preemptions,
        "hit": s.hit_units,
        "simulated": s.time,
        "cpu": secs,
        "wall": wall,
        "requests": s.done,
    }


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks tiers")
    ap.add_argument(
        "--rows",
        type=int,
        default=DEFAULT_ROWS,
        help="requests from the trace's start (default 0: the whole trace)",
    )
    args = ap.parse_args(argv)
    rows = args.rows
    shown = "all" if not rows else f"the first {rows:,}"
    print(f"benchmarks/tiers.pool on {shown} requests of the Mooncake conversation trace")
    reuse = reusable(rows)
    print(
        f"prompt tokens an earlier request had computed (reusable): {sum(reuse):,}",
        flush=True,
    )
    for reload in (True, False):
        r = run(rows, reload, reuse)
        print(
            f"{'with reload   ' if reload else 'without reload'}  "
            f"ttft p50 {r['ttft50']:.3f}s  p99 {r['ttft99']:.3f}s  "
            f"recomputed {r['recomputed']:,.0f} tokens  "
            f"reloads {r['reloads']:,} ({r['reloaded']:,} tokens)  "
            f"preemptions {r['preemptions']:,}  queueing p50 {r['queue50']:.1f}s  "
            f"({r['requests']:,} requests, {r['simulated']:.0f}s simulated, "
            f"{r['cpu']:.1f}s cpu, {r['wall']:.1f}s wall)",
            flush=True,
        )
    return 0
