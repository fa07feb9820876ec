"""The fast mode against the per-event mode (issue: speed).

The fast mode counts steady decoding arithmetically and does not record `iteration`,
`iteration-end` or `grow`. Everything else must be the same: the same events (all fields
but the index), in the same order, and the same end state (the snapshot, block for block),
whether the fast run records events or only counts them.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from pooltui.lang import compile_source
from pooltui.sim import Simulation
from tests.sim.test_invariants import random_specs

ROOT = Path(__file__).resolve().parents[2]
QUIET = {"iteration", "iteration-end", "grow"}


def _key(e: Any) -> str:
    d = e.to_dict()
    d.pop("i")
    return json.dumps(d, sort_keys=True)


def _end_state(sim: Simulation) -> Any:
    snap = sim.snapshot()
    # The index and totals count the unrecorded events; the utilisation is not in it.
    return dataclasses.replace(snap, events_total=0, event_index=0, last_event=None)


def _run(text: str, base: str, *, fast: bool, record: bool, invariants: bool) -> Any:
    program = compile_source(text, str(Path(base) / "spec.pool"), base)
    sim = Simulation(program, fast=fast, history=False, invariants=invariants)
    events: list[Any] = []
    sim.run_headless(on_event=events.append if record else None)
    return sim, events


def check_same(text: str, base: str, invariants: bool = False) -> None:
    slow, slow_events = _run(text, base, fast=False, record=True, invariants=invariants)
    fast, fast_events = _run(text, base, fast=True, record=True, invariants=invariants)
    lean, _ = _run(text, base, fast=True, record=False, invariants=False)
    expected = [_key(e) for e in slow_events if e.moment not in QUIET]
    assert [_key(e) for e in fast_events] == expected
    assert all(e.moment not in QUIET for e in fast_events)
    assert slow.state.halted == fast.state.halted
    assert _end_state(fast) == _end_state(slow)
    assert lean.state.halted == slow.state.halted
    assert lean.state.n_events == len(expected)
    assert _end_state(lean) == _end_state(slow)
    for k in ("preemptions", "evictions", "evicted_units", "spills", "drops", "iterations"):
        assert lean.state.counters[k] == slow.state.counters[k], k
    assert lean.state.now == slow.state.now


def _limited(path: Path, rows: int) -> str:
    """A trace spec cut to its first rows, so the per-event run stays short."""
    return re.sub(r'(from\s+"[^"]+")(\s*limit\s+\d+)?', rf"\1 limit {rows}", path.read_text())


BUNDLED = sorted((ROOT / "specs").glob("*.pool"))


@pytest.mark.parametrize("path", BUNDLED, ids=[p.stem for p in BUNDLED])
def test_bundled_specs_agree(path: Path) -> None:
    text = _limited(path, 400) if path.stem.startswith(("azure", "mooncake")) else path.read_text()
    check_same(text, str(path.parent))


def test_agree_with_invariants_on() -> None:
    path = ROOT / "specs" / "azure_conv.pool"
    check_same(_limited(path, 150), str(path.parent), invariants=True)


VLLM_PRESSURE = """
seed 4;
stage gpu step { budget 64; seats 16; time 0.01 + 0.001 * tokens; }
pool kv { cap 40 * 4; block 4; evict lru; preempt lifo; queue fifo; admit via gpu; }
session r[40] {
  arrive every (draw exponential(0.05));
  prompt = draw uniform(4, 40);
  max_tokens = draw uniform(20, 100);
  hold kv (min(max(prompt, context + 1), computed + budget_left(gpu)))
       need (max(prompt, context + 1)) reserve (160) {
    run gpu prefill (prompt);
    run gpu decode (max_tokens - 1);
  }
}
"""


def test_memory_pressure_with_preemptions_agrees(tmp_path: Path) -> None:
    slow, _ = _run(VLLM_PRESSURE, str(tmp_path), fast=False, record=True, invariants=False)
    assert slow.state.counters["preemptions"] > 0  # the case is worth having
    check_same(VLLM_PRESSURE, str(tmp_path))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=random_specs())
def test_random_specs_agree(spec: str) -> None:
    check_same(spec, ".")
