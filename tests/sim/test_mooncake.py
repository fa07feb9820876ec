"""An independent check of hits: the simulator on benchmarks/mooncake_unbounded.pool (cap
inf, one seat, everything at 0 in trace order) against benchmarks/mooncake_hits.py, which
counts an unbounded one-at-a-time cache's hits on the trace without the simulator. Both
are worked out from the design independently; they must agree to the unit."""

from __future__ import annotations

import re
from pathlib import Path

from benchmarks.mooncake_hits import expected_hits, read_trace
from pooltui.lang import compile_source
from pooltui.sim import Event, Simulation

ROOT = Path(__file__).resolve().parents[2]
ROWS = 300


def test_unbounded_hits_match_the_independent_count_to_the_unit() -> None:
    spec = ROOT / "benchmarks" / "mooncake_unbounded.pool"
    text = re.sub(r'(from\s+"[^"]+")', rf"\1 limit {ROWS}", spec.read_text(), count=1)
    program = compile_source(text, str(spec), str(spec.parent))
    sim = Simulation(program, fast=True, history=False, invariants=False)
    admitted: dict[str, int] = {}

    def on(e: Event) -> None:
        if e.moment == "admit":
            assert e.session not in admitted  # one admission each: nothing is preempted
            admitted[e.session or ""] = e.get("hit")

    sim.run_headless(on_event=on)
    s = sim.summary()
    assert s.halted is None and s.done == ROWS
    hit, asked, per_request = expected_hits(
        read_trace(ROOT / "data" / "mooncake_conversation.jsonl", ROWS), 16
    )
    assert hit > 0
    # request by request, then the summary's split: each session is one request, so every
    # hit is on blocks other requests computed (shared), none its own, none reloaded
    assert [admitted[f"req[{i}]"] for i in range(ROWS)] == per_request
    assert (s.hit_own, s.hit_shared, s.hit_reloaded, s.hit_units) == (0, hit, 0, hit)
    assert s.asked_units == asked


def test_the_independent_count_does_not_use_the_simulator() -> None:
    text = (ROOT / "benchmarks" / "mooncake_hits.py").read_text()
    assert "pooltui" not in text.split('"""', 2)[2]  # no import of it past the docstring
