"""History at scale (issue 13): the compact event log gives back every field of every event;
goto/back over packed, thinned checkpoints equal a fresh replay; a headless run that
records nothing can still tell its last event."""

from __future__ import annotations

import functools
import math
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pooltui.lang.ir import Span
from pooltui.sim import Event, Simulation
from pooltui.sim import eventlog as eventlog_module
from pooltui.sim import simulation as simulation_module
from pooltui.sim.eventlog import EventLog
from tests.sim.helpers import compile_spec
from tests.sim.test_cache import SPILL_SPEC
from tests.sim.test_history import draws_spec

SPECS = {"draws": draws_spec(7, 64), "spill": SPILL_SPEC}


def _recorded(spec: str) -> tuple[Simulation, list[Event]]:
    """A run with history whose events also went, as `Event`s, to a callback."""
    sim = Simulation(compile_spec(spec))
    seen: list[Event] = []
    sim.engine.on_event = seen.append
    while sim.step() is not None:
        pass
    return sim, seen


@pytest.mark.parametrize("name", sorted(SPECS))
def test_the_log_gives_back_every_field(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(eventlog_module, "CHUNK", 7)  # many packed chunks, and a tail
    sim, seen = _recorded(SPECS[name])
    log = sim.events
    assert len(log) == len(seen) > 40
    assert list(log) == seen
    assert [log[i] for i in range(len(log))] == seen
    assert log[-1] == seen[-1] and log[3:40:3] == seen[3:40:3]
    assert list(reversed(log)) == seen[::-1]
    assert all(log.time_at(i) == e.time for i, e in enumerate(seen))  # type: ignore[attr-defined]
    assert {e.moment for e in seen} >= {"arrive", "admit", "iteration-end", "end"}
    with pytest.raises(IndexError):
        log[len(seen)]


_text = st.text(max_size=12)
_value: Any = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _text,
    lambda inner: st.tuples(inner, inner),
    max_leaves=4,
)
_event_fields = st.fixed_dictionaries(
    {
        "time": st.floats(min_value=0, allow_nan=False),
        "moment": st.sampled_from(["arrive", "evict", "iteration", "a-new-moment"]),
        "why": _text,
        "session": st.none() | _text,
        "session_id": st.none() | st.integers(0, 10**6),
        "session_class": st.none() | _text,
        "pool": st.none() | _text,
        "stage": st.none() | _text,
        "others": st.lists(_text, max_size=3).map(tuple),
        "units": st.none() | st.integers(-(2**40), 2**40),
        "blocks": st.lists(st.integers(0, 2**20), max_size=5).map(tuple),
        "span": st.none() | st.builds(Span, st.just("x.pool"), *[st.integers(1, 9)] * 4),
        "data": st.lists(st.tuples(_text, _value), max_size=3).map(tuple),
    }
)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(rows=st.lists(_event_fields, min_size=1, max_size=30))
def test_any_event_round_trips(rows: list[dict[str, Any]]) -> None:
    events = [Event(index=i, **row) for i, row in enumerate(rows)]
    original = eventlog_module.CHUNK
    eventlog_module.CHUNK = 4
    try:
        log = EventLog(events)
    finally:
        eventlog_module.CHUNK = original
    assert len(log) == len(events)
    for i, e in enumerate(events):
        got = log[i]
        assert got == e
        assert all(type(getattr(got, f)) is type(getattr(e, f)) for f in e.__slots__)
    assert log == events
    assert math.isfinite(log.nbytes())


def test_appending_out_of_order_is_refused() -> None:
    log = EventLog()
    with pytest.raises(ValueError):
        log.append(Event(1, 0.0, "arrive", "x"))


# --------------------------------------------------------------------------- history


def _snapshot_after(program: Any, index: int) -> Any:
    fresh = Simulation(program, history=False, invariants=False)
    for _ in range(index + 1):
        assert fresh.step() is not None
    return fresh.snapshot()


@settings(
    max_examples=12, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    seed=st.integers(0, 50),
    every=st.sampled_from([1, 5, 40]),
    limit=st.sampled_from([2, 3, 1000]),
    moves=st.lists(st.tuples(st.booleans(), st.floats(0, 1)), min_size=1, max_size=6),
)
def test_goto_and_back_equal_a_fresh_replay(
    seed: int, every: int, limit: int, moves: list[tuple[bool, float]]
) -> None:
    program = compile_spec(draws_spec(seed, 64))
    original = simulation_module.MAX_CHECKPOINTS
    simulation_module.MAX_CHECKPOINTS = limit  # 2, 3: thinned over and over
    try:
        sim = Simulation(program, checkpoint_every=every)
        while sim.step() is not None:
            pass
        n = len(sim.events)
        assert len(sim._ckpt) <= max(limit, 2) + 1 or limit == 1000
        for back, where in moves:
            if back and sim.cursor >= 0:
                sim.back()
            else:
                sim.goto(min(n - 1, int(where * n)))
            if sim.cursor >= 0:
                expected = _snapshot_after(program, sim.cursor)
                assert replace(sim.snapshot(), events_total=0) == replace(expected, events_total=0)
    finally:
        simulation_module.MAX_CHECKPOINTS = original


# Many sessions at once: an action (an iteration admitting 96 of them) is hundreds of
# events long, so looking inside the newest one remembers its start as a checkpoint
# (`_replay_to`) right after the newest checkpoint, still a plain pickle, was taken.
LONG_ACTIONS = """
stage gpu step { budget 2048; seats 96; time 1; }
pool kv { cap 1200; block 4; evict lru; preempt lifo; queue fifo; admit via gpu; }
session req[200] {
  arrive at (0);
  hold kv (min(max(12, context + 1), computed + budget_left(gpu)))
       need (max(12, context + 1)) reserve (24) {
    run gpu prefill (12);
    run gpu decode (6);
  }
}
"""


@pytest.mark.parametrize("target", [2040])
def test_looking_inside_the_newest_action_then_moving_keeps_every_checkpoint_readable(
    target: int,
) -> None:
    # `g N` past the frontier, the state shown, one step, then `g N` and `back` again:
    # each state shown is the one a fresh run shows after that many events (the
    # checkpoint remembered at the action's start is compressed once, not twice).
    sim = Simulation(_long_actions(), checkpoint_every=100)
    sim.goto(target)
    assert replace(sim.snapshot(), events_total=0) == _long_actions_after(target)
    assert sim.step() is not None
    for index in (target, target - 1, target + 1):
        sim.goto(index)
        assert replace(sim.snapshot(), events_total=0) == _long_actions_after(index)
    sim.back()
    assert replace(sim.snapshot(), events_total=0) == _long_actions_after(target)


MOVES = st.one_of(
    st.just(("step", 0)),
    st.just(("back", 0)),
    st.tuples(st.just("skip"), st.integers(1, 400)),
    st.tuples(st.just("skip whole"), st.integers(1, 400)),
    st.tuples(st.just("goto"), st.integers(0, 2400)),
)


@settings(
    max_examples=6, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(every=st.sampled_from([50, 100, 500]), moves=st.lists(MOVES, min_size=2, max_size=8))
def test_moves_forward_and_back_through_long_actions_equal_a_fresh_replay(
    every: int, moves: list[tuple[str, int]]
) -> None:
    # The debugger's moves in any order, from the frontier and behind it, interleaved with
    # looks at the state: each state is the one a fresh run shows after that many events.
    program = _long_actions()
    sim = Simulation(program, checkpoint_every=every)
    for move, n in moves:
        if move == "step":
            sim.step()
        elif move == "back":
            sim.back()
        elif move == "goto":
            sim.goto(n)
        else:
            sim.skip(n, whole=move == "skip whole")
        if sim.cursor >= 0:
            assert replace(sim.snapshot(), events_total=0) == _long_actions_after(sim.cursor)


@functools.cache
def _long_actions() -> Any:
    return compile_spec(LONG_ACTIONS)


@functools.cache
def _long_actions_after(index: int) -> Any:
    """The state after event `index`, replayed from the start alone (no checkpoint
    between: the states under test come from checkpoints taken, remembered, thinned)."""
    fresh = Simulation(_long_actions(), invariants=False, checkpoint_every=10**9)
    fresh.goto(index)
    assert fresh.cursor == index and fresh._ckpt_at == [0]
    return replace(fresh.snapshot(), events_total=0)


def test_checkpoints_stay_bounded_and_their_spacing_grows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(simulation_module, "MAX_CHECKPOINTS", 8)
    sim = Simulation(compile_spec(draws_spec(3, 64)), checkpoint_every=2)
    while sim.step() is not None:
        pass
    assert len(sim.events) > 100
    assert len(sim._ckpt) <= 9 and sim._every > 2
    assert sim._ckpt_at[0] == 0


# --------------------------------------------------------------------------- headless


@pytest.mark.parametrize("fast", [False, True])
def test_a_headless_halt_tells_its_last_event(fast: bool) -> None:
    from pathlib import Path

    from pooltui.lang import compile_file

    program = compile_file(str(Path(__file__).parents[2] / "specs/halts/check_fails.pool"))
    quiet = Simulation(program, history=False, invariants=False, fast=fast)
    quiet.run_headless()  # records nothing
    assert quiet.halted is not None and quiet.halted.startswith("check failed")
    last = quiet.last_event()
    assert last is not None and last.moment == "check-failed"
    assert last.index == quiet.state.n_events - 1
    full = Simulation(program, fast=fast)
    while full.step() is not None:
        pass
    assert last == full.events[-1]
