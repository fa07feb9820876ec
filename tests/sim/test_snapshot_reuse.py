"""A snapshot reuses the views of queued sessions that did not change since the last one
(issue 13: a queue of 1,500 made most of a snapshot's cost while a run paused); what it
says must be what a snapshot made from nothing says, at every event, forward and after
going back.

The oracle is `build_snapshot` with nothing to reuse: the state at the cursor (the
simulation's own, which may have run past the event), every view made anew.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from pooltui.lang import compile_source
from pooltui.sim import Simulation
from pooltui.sim.views import build_snapshot

ROOT = Path(__file__).resolve().parents[2]
# Queues that change in each way a queued session's view can: preempted holds queued
# again (preempt_lifo), sessions that sleep between turns and queue again (multiturn),
# reloads from a tier (offload, spill_tiers), hits on shared content (shared_prefix), and
# vLLM's chunked prefill with a waiting queue (vllm_v1).
SPECS = ["preempt_lifo", "multiturn", "offload", "spill_tiers", "shared_prefix", "vllm_v1"]
EVENTS = 600


def program(name: str) -> object:
    path = ROOT / "specs" / f"{name}.pool"
    return compile_source(path.read_text(), str(path), str(path.parent))


@pytest.mark.parametrize("name", SPECS)
def test_every_snapshot_says_what_one_made_anew_says(name: str) -> None:
    sim = Simulation(program(name))  # type: ignore[arg-type]
    compared = queued = 0
    for _ in range(EVENTS):
        if sim.step() is None:
            break
        snap = sim.snapshot()
        fresh = build_snapshot(sim._engine_at_cursor(), sim.events, sim.cursor)
        assert snap == fresh, f"{name}: event #{sim.cursor}"
        compared += 1
        queued += sum(1 for s in snap.sessions if s.state.startswith("queued"))
    assert compared > 50
    assert queued > 0, f"{name}: no session was ever queued: the reuse was not exercised"


@pytest.mark.parametrize("name", ["preempt_lifo", "multiturn", "spill_tiers"])
def test_going_back_the_reused_views_are_those_of_the_event_gone_to(name: str) -> None:
    """Forward with a snapshot at each event (views to reuse from the later state), then
    back and to earlier events: each snapshot equals the first snapshot of a simulation
    that only went forward to the same event."""
    prog = program(name)
    sim = Simulation(prog)  # type: ignore[arg-type]
    for _ in range(300):
        if sim.step() is None:
            break
        sim.snapshot()
    end = sim.cursor
    for target in (end - 1, end - 2, end // 2, end // 3 + 7, 5, end - 40):
        if target < 0:
            continue
        sim.goto(target)
        again = Simulation(prog)  # type: ignore[arg-type]
        again.skip(target + 1)
        assert again.cursor == target
        # The same but for how far each simulation has got (`events_total`).
        fresh = again.snapshot()
        there = dataclasses.replace(sim.snapshot(), events_total=fresh.events_total)
        assert there == fresh, f"{name}: event #{target}"
