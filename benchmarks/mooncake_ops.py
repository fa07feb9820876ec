"""Where the Mooncake run's Python work goes, counted rather than timed: the bytecodes each
function and line of the simulator executes (sys.settrace's opcode events), so that a
change's effect can be told apart from this shared VM's noise (the same figures every run).

    python -m benchmarks mooncake_ops              # 3 % of the trace (a few minutes)
    python -m benchmarks mooncake_ops --fraction 0.01 --top 30

Prints the bytecodes per request and per prompt block the requests ask for (hit or not), the functions and lines
that execute most, and the share of the ledger's per-block loops (`ledger.py`, `ledgerbatch.py`).
Bytecodes are not time: in CPython 3.11 a list store is a cheap one, and a C loop (`map`
over a bound method) was found to cost more instructions than the Python loop it replaced
(valgrind --tool=cachegrind counts those; docs/architecture.md, the simulator's section).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

from benchmarks.azure import program_at
from pooltui.sim import Simulation

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "specs" / "mooncake_conv.pool"


def count(fraction: float) -> tuple[Counter[tuple[str, str, int]], int, int]:
    """Bytecodes per (file, function, line), the requests, and the blocks they asked."""
    program, n = program_at(SPEC, fraction)
    sim = Simulation(program, fast=True, invariants=False, history=False)
    lines: Counter[tuple[str, str, int]] = Counter()

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        if event == "opcode":
            c = frame.f_code
            lines[(Path(c.co_filename).name, c.co_name, frame.f_lineno)] += 1
        return local

    def start(frame: FrameType, event: str, arg: Any) -> Any:
        frame.f_trace_opcodes = True
        frame.f_trace_lines = False
        return local

    sys.settrace(start)
    try:
        sim.run_headless()
    finally:
        sys.settrace(None)
    block = sim.state.pools[0].block
    return lines, n, sim.summary().asked_units // block


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks mooncake_ops")
    ap.add_argument("--fraction", type=float, default=0.03)
    ap.add_argument("--top", type=int, default=20)
    args = ap.parse_args(argv)
    lines, n, blocks = count(args.fraction)
    total = sum(lines.values())
    funcs: Counter[tuple[str, str]] = Counter()
    for (f, fn, _), v in lines.items():
        funcs[(f, fn)] += v
    ledger = sum(v for (f, _), v in funcs.items() if f in ("ledger.py", "ledgerbatch.py"))
    print(f"{args.fraction:.1%} of {SPEC.name}: {n:,} requests, {blocks:,} prompt blocks asked")
    print(f"{total:,} bytecodes: {total / n:,.0f} per request, {total / blocks:,.1f} per block")
    print(f"the ledger's: {ledger / total:.1%}")
    print("-- functions")
    for (f, fn), v in funcs.most_common(args.top):
        print(f"{v:>12,} {v / total:6.1%}  {f}:{fn}")
    print("-- lines")
    for (f, fn, ln), v in lines.most_common(args.top):
        print(f"{v:>12,} {v / total:6.1%}  {f}:{ln} ({fn})")
    return 0
