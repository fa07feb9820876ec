"""Determinism (same seed, same bytes; caps do not change the workload) and history
(back, goto) of the simulator."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.sim.helpers import comparable, run_all, sim_of, t, trace
from tests.sim.test_cache import SPILL_SPEC
from tests.sim.test_preempt import LIFO_SELF
from tests.sim.test_queue import ASCEND, LANES
from tests.sim.test_shared import MEANWHILE, MIDDLE, PREEMPTED_HOLDER

# A workload with draws: arrivals every exponential gap, prompts and outputs drawn per
# session; a vLLM-like pool under pressure (preemptions and evictions happen at cap 64).
DRAWS = """
seed {seed};
stage gpu step {{ budget 32; seats 4; time 0.01 + 0.001 * tokens; }}
pool kv {{ cap {cap}; block 4; evict lru; preempt lifo; queue fifo; admit via gpu; }}
session chat[12] {{
  arrive every (draw exponential(0.5));
  prompt = draw uniform(4, 40);
  out = draw uniform(1, 8);
  hold kv (min(max(prompt, context + 1), computed + budget_left(gpu)))
       need (max(prompt, context + 1)) reserve (64) {{
    run gpu prefill (prompt);
    run gpu decode (out);
  }}
}}
"""


def draws_spec(seed: int = 7, cap: int = 64) -> str:
    return DRAWS.format(seed=seed, cap=cap)


def test_same_spec_and_seed_give_a_byte_identical_trace() -> None:
    first = run_all(sim_of(draws_spec()))
    second = run_all(sim_of(draws_spec()))
    assert len(first) > 50
    assert trace(first) == trace(second)
    assert [e.index for e in first] == list(range(len(first)))


def _workload(spec: str) -> tuple[list[tuple[float, str, Any]], dict[str, dict[str, Any]]]:
    """Arrivals (time, session, serial) and each session's attributes when it first enqueues."""
    sim = sim_of(spec, history=False)
    arrivals = []
    attrs: dict[str, dict[str, Any]] = {}
    while (e := sim.step()) is not None:
        if e.moment == "arrive":
            arrivals.append((t(e.time), e.session, e.get("serial")))
        elif e.moment == "enqueue" and e.session not in attrs:
            view = sim.snapshot().session(e.session)
            assert view is not None
            attrs[e.session] = dict(view.attrs)
    assert sim.violation is None
    return arrivals, attrs


def test_changing_cap_leaves_arrivals_and_draws_unchanged() -> None:
    small_arrivals, small_attrs = _workload(draws_spec(cap=64))
    big_arrivals, big_attrs = _workload(draws_spec(cap=256))
    assert len(small_arrivals) == 12
    assert small_arrivals == big_arrivals
    assert small_attrs == big_attrs
    assert set(small_attrs) == {f"chat[{i}]" for i in range(12)}
    assert all(4 <= a["prompt"] <= 40 and 1 <= a["out"] <= 8 for a in small_attrs.values())
    # ... while another seed does change the draws.
    other_arrivals, other_attrs = _workload(draws_spec(seed=8))
    assert (other_arrivals, other_attrs) != (small_arrivals, small_attrs)


def test_fewer_sessions_leave_the_first_ones_unchanged() -> None:
    # Session i's gap and attributes come from its own stream (seed, class, index): a run
    # with 6 sessions of the class sees exactly the first 6 arrivals and draws of 12.
    few_arrivals, few_attrs = _workload(draws_spec().replace("chat[12]", "chat[6]"))
    many_arrivals, many_attrs = _workload(draws_spec())
    assert few_arrivals == many_arrivals[:6]
    assert few_attrs == {k: v for k, v in many_attrs.items() if k in few_attrs}
    assert len(few_attrs) == 6


def test_forward_n_then_back_n_restores_the_state() -> None:
    sim = sim_of(draws_spec())
    sim.run(events=40)
    assert sim.cursor == 39
    before = comparable(sim.snapshot())
    stepped = [sim.step() for _ in range(25)]
    assert all(e is not None for e in stepped)
    assert sim.cursor == 64
    for _ in range(25):
        sim.back()
    assert sim.cursor == 39
    assert comparable(sim.snapshot()) == before
    assert t(sim.time) == t(before.time)
    # Going forward again replays the same events.
    again = [sim.step() for _ in range(25)]
    assert again == stepped


def test_back_at_the_start_and_goto_minus_one() -> None:
    sim = sim_of(draws_spec())
    start = comparable(sim.snapshot())
    assert sim.cursor == -1
    assert sim.back() is None
    sim.run(events=10)
    sim.goto(-1)
    assert sim.cursor == -1
    assert comparable(sim.snapshot()) == start


HISTORY_SPECS = [
    draws_spec(),
    LIFO_SELF,
    SPILL_SPEC,
    ASCEND.format(queue=LANES),
    # shared content (history checkpoints keep it): blocks held by several holds, a
    # holder preempted, duplicates of both kinds, a middle eviction's unreachable blocks
    PREEMPTED_HOLDER,
    MEANWHILE,
    MIDDLE,
]
_LENGTHS: dict[int, int] = {}


def _length(k: int) -> int:
    if k not in _LENGTHS:
        _LENGTHS[k] = len(run_all(sim_of(HISTORY_SPECS[k], history=False)))
    return _LENGTHS[k]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(k=st.integers(0, len(HISTORY_SPECS) - 1), frac=st.floats(0, 1), first=st.booleans())
def test_goto_equals_stepping_from_a_fresh_simulation(k: int, frac: float, first: bool) -> None:
    n = _length(k)
    i = min(n - 1, int(frac * n))
    a = sim_of(HISTORY_SPECS[k])
    if first:
        run_all(a)  # goto back into a recorded log
    a.goto(i)  # or, on a fresh simulation, forward past the log
    b = sim_of(HISTORY_SPECS[k])
    for _ in range(i + 1):
        assert b.step() is not None
    assert a.cursor == b.cursor == i
    assert comparable(a.snapshot()) == comparable(b.snapshot())
    assert list(a.events)[: i + 1] == list(b.events)[: i + 1]


def test_finished_right_after_the_last_event() -> None:
    # The state right after the last event is the same whether reached by stepping or by
    # goto: nothing more can happen in either.
    a = sim_of(draws_spec())
    n = len(run_all(a))
    a.goto(n - 1)
    b = sim_of(draws_spec())
    for _ in range(n):
        assert b.step() is not None
    assert a.snapshot().finished is b.snapshot().finished is True
    assert a.finished is b.finished is True


def test_snapshot_at_every_step_without_history() -> None:
    # history=False turns off back()/goto(), not the view of the current state: a headless
    # run can still look at where it is after every step, and sees what a run with history
    # sees at the same event.
    fast = sim_of(draws_spec(), history=False)
    slow = sim_of(draws_spec())
    while (e := fast.step()) is not None:
        assert slow.step() == e
        assert comparable(fast.snapshot()) == comparable(slow.snapshot())


def test_the_newest_checkpoint_serves_before_and_after_it_is_compressed() -> None:
    # A checkpoint is a plain pickle until the simulation next moves (then compressed):
    # going back to it at once, and later, restores the same state either way.
    from pooltui.sim import Simulation
    from tests.sim.helpers import compile_spec

    sim = Simulation(compile_spec(draws_spec()), checkpoint_every=10)
    fresh = sim_of(draws_spec())
    taken = len(sim._ckpt)
    while len(sim._ckpt) == taken:  # step until a new checkpoint is taken
        assert sim.step() is not None
    assert sim._ckpt_raw and sim._ckpt[-1][:1] == b"\x80"
    at = sim.cursor
    fresh.run(events=at - 2)
    expected = comparable(fresh.snapshot())
    sim.goto(at - 3)  # from the checkpoint before it
    assert comparable(sim.snapshot()) == expected
    fresh.run(events=3)
    sim.goto(at)  # from the plain pickle
    assert sim._ckpt_raw
    assert comparable(sim.snapshot()) == comparable(fresh.snapshot())
    assert sim.step() is not None  # a move: now compressed
    assert not sim._ckpt_raw and sim._ckpt[-1][:1] != b"\x80"
    sim.goto(at - 3)
    assert comparable(sim.snapshot()) == expected


def test_a_pause_gives_up_compressing_a_checkpoint_and_a_later_move_finishes_it(
    monkeypatch: Any,
) -> None:
    # Compressed a piece at a time, a pause asked between two: given up, the checkpoint
    # stays a plain pickle (it still serves); the next move without a pause compresses it,
    # to the bytes one call of zlib makes.
    import zlib

    from pooltui.sim import Simulation
    from pooltui.sim import simulation as simulation_module
    from tests.sim.helpers import compile_spec

    monkeypatch.setattr(simulation_module, "COMPRESS_PIECE", 64)  # many pieces
    sim = Simulation(compile_spec(draws_spec()), checkpoint_every=10)
    fresh = sim_of(draws_spec())
    taken = len(sim._ckpt)
    while len(sim._ckpt) == taken:
        assert sim.step() is not None
    raw = sim._ckpt[-1]
    assert sim._ckpt_raw and raw[:1] == b"\x80" and len(raw) > 3 * 64
    asked: list[int] = []

    def pause_after_two() -> bool:
        asked.append(1)
        return len(asked) > 2  # the first look before it starts, one between two pieces

    sim.abandon_checkpoint = pause_after_two
    at = sim.cursor
    assert sim.step() is not None  # a move: compressing starts, then is given up
    assert len(asked) == 3 and sim._ckpt_raw and sim._ckpt[-1] == raw
    fresh.run(events=at + 1)
    sim.goto(at)
    assert comparable(sim.snapshot()) == comparable(fresh.snapshot())
    sim.abandon_checkpoint = None
    assert sim.step() is not None
    assert not sim._ckpt_raw and sim._ckpt[-1] == zlib.compress(raw, 1)
    sim.goto(at)
    assert comparable(sim.snapshot()) == comparable(fresh.snapshot())


def test_a_checkpoint_reads_the_same_plain_or_compressed() -> None:
    import pickle

    from pooltui.sim.simulation import _pack, _pickle_in_frames, _unpack

    sim = sim_of(draws_spec())
    sim.run(events=30)
    state = sim.engine.s
    # Written a frame at a time (the GIL free between two), the same bytes.
    assert _pickle_in_frames(state) == pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)
    plain = _unpack(pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL))
    packed = _unpack(_pack(state))
    assert pickle.dumps(plain) == pickle.dumps(packed) == pickle.dumps(state)


def test_a_checkpoint_given_up_half_written_is_taken_at_a_later_move() -> None:
    # The debugger sets `abandon_checkpoint` while a run goes: a pause gives a checkpoint
    # up between two frames of its pickle. Nothing is kept and nothing changes; history
    # still goes back correctly, and the checkpoint is taken at the next move after.
    from pooltui.sim import Simulation
    from tests.sim.helpers import compile_spec

    sim = Simulation(compile_spec(draws_spec()), checkpoint_every=10)
    fresh = sim_of(draws_spec())
    asked: list[bool] = []

    def stop() -> bool:
        asked.append(True)
        return True

    sim._compress_last()  # the first checkpoint's compression asks too (see below)
    sim.abandon_checkpoint = stop
    taken = len(sim._ckpt)
    # One move of 40 events (a checkpoint would be due every 10): given up once, not
    # tried again within the move (each try costs a frame of pickle).
    assert sim.skip(40) == 40
    assert len(asked) == 1 and len(sim._ckpt) == taken
    sim.abandon_checkpoint = None
    assert sim.step() is not None
    assert len(sim._ckpt) == taken + 1
    fresh.run(events=12)
    sim.goto(11)  # replayed from the start: no checkpoint between
    assert comparable(sim.snapshot()) == comparable(fresh.snapshot())
    # The same events as a simulation that never gave one up.
    sim.goto(40)
    other = sim_of(draws_spec())
    other.run(events=41)
    assert list(sim.events)[:41] == list(other.events)[:41]


def test_the_newest_checkpoint_is_compressed_at_a_later_move_while_a_pause_waits() -> None:
    # A checkpoint is pickled in its move and compressed at the next (one C call, ~15 ms
    # for a full GPU's state): while `abandon_checkpoint` says a pause waits, that next
    # move leaves it as a plain pickle (a pickle begins with 0x80; zlib never does), which
    # going back reads as well; the move after the pause compresses it.
    from pooltui.sim import Simulation
    from tests.sim.helpers import compile_spec

    sim = Simulation(compile_spec(draws_spec()), checkpoint_every=10)
    assert sim.skip(12) == 12  # a checkpoint at event 10, not compressed yet
    assert sim._ckpt_at[-1] == 10 and sim._ckpt[-1][:1] == b"\x80"
    sim.abandon_checkpoint = lambda: True
    assert sim.step() is not None
    assert sim._ckpt[-1][:1] == b"\x80"  # left plain
    fresh = sim_of(draws_spec())
    fresh.run(events=11)
    sim.goto(10)  # from the plain checkpoint
    assert comparable(sim.snapshot()) == comparable(fresh.snapshot())
    sim.abandon_checkpoint = None
    assert sim.step() is not None
    assert sim._ckpt[-1][:1] != b"\x80"  # compressed now
    sim.goto(10)
    assert comparable(sim.snapshot()) == comparable(fresh.snapshot())
