"""What the debugger's worker uses to go far fast (issue 13): `Simulation.skip` (no
`Event`s made, landing between two actions), views of the log another thread reads while
it grows, and checkpoints spaced by their own cost; each gives the states and events a
step-by-step walk gives."""

from __future__ import annotations

import sys
import threading
from dataclasses import replace
from fractions import Fraction
from typing import Any

import pytest

from pooltui.sim import Event, Simulation
from pooltui.sim import eventlog as eventlog_module
from pooltui.sim import simulation as simulation_module
from pooltui.sim.eventlog import EventLog
from tests.sim.helpers import compile_spec
from tests.sim.test_history import draws_spec

PROGRAM = compile_spec(draws_spec(5, 64))


def _fresh_after(index: int) -> Any:
    """The snapshot right after event `index`, by stepping a new simulation there."""
    fresh = Simulation(PROGRAM, history=False, invariants=False)
    for _ in range(index + 1):
        assert fresh.step() is not None
    return replace(fresh.snapshot(), events_total=0)


def _all_events() -> list[Event]:
    sim = Simulation(PROGRAM)
    while sim.step() is not None:
        pass
    return list(sim.events)


# --------------------------------------------------------------------------- skip


def test_skip_moves_n_events_and_shows_the_state_there() -> None:
    everything = _all_events()
    sim = Simulation(PROGRAM)
    assert sim.skip(10) == 10 and sim.cursor == 9
    assert sim.skip(7) == 7 and sim.cursor == 16
    assert replace(sim.snapshot(), events_total=0) == _fresh_after(16)
    # The events it went past are recorded as a step-by-step run records them.
    assert list(sim.events)[:17] == everything[:17]
    # To the end: it stops there, and says how far it went.
    left = len(everything) - 1 - sim.cursor
    assert sim.skip(10**9) == left and sim.cursor == len(everything) - 1
    assert sim.skip(5) == 0 and sim.finished
    assert list(sim.events) == everything


def test_skip_whole_lands_between_two_actions() -> None:
    # `whole`: past the n-th event, on to the last event of its action, which at the
    # frontier is the newest event: the state there is the simulation's own.
    sim = Simulation(PROGRAM)
    calls: list[tuple[int, int]] = []
    moved = 0
    while n := sim.skip(3, whole=True, each=lambda: calls.append((sim.cursor, len(sim.events)))):
        moved += n
        assert n >= 3 or sim.finished or sim.halted
        assert sim.cursor == len(sim.events) - 1
        assert replace(sim.snapshot(), events_total=0) == _fresh_after(sim.cursor)
        if sim.cursor > 60:
            break
    # `each` ran once per new action, at its last event, in order.
    assert calls and all(cursor == total - 1 for cursor, total in calls)
    assert [c for c, _ in calls] == sorted({c for c, _ in calls})


def test_skip_within_the_recorded_log_does_not_simulate() -> None:
    sim = Simulation(PROGRAM)
    sim.skip(40)
    total = len(sim.events)
    sim.goto(5)
    assert sim.skip(20) == 20 and sim.cursor == 25 and len(sim.events) == total
    assert replace(sim.snapshot(), events_total=0) == _fresh_after(25)


def test_walking_forward_through_the_log_shows_every_state() -> None:
    # Back to the start, then forward again event by event and in jumps: each state is
    # the one a fresh run reaches (the shown state is carried forward, not replayed).
    sim = Simulation(PROGRAM, checkpoint_every=1000)  # one checkpoint: replays are long
    sim.skip(80)
    sim.goto(-1)
    for index in [*range(0, 30), 33, 34, 41, 60, 61, 79]:
        sim.goto(index)
        assert replace(sim.snapshot(), events_total=0) == _fresh_after(index), index


def test_costly_checkpoints_are_spaced_out_and_history_stays_exact(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Every checkpoint counts as costly and must wait a million times its cost: after the
    # first, none is taken while running; going back replays from the start, exactly.
    monkeypatch.setattr(simulation_module, "COSTLY_CHECKPOINT", 0.0)
    monkeypatch.setattr(simulation_module, "CHECKPOINT_SHARE", 1e6)
    sim = Simulation(PROGRAM, checkpoint_every=2)
    while sim.step() is not None:
        pass
    assert len(sim._ckpt_at) <= 2
    for index in (3, len(sim.events) // 2, len(sim.events) - 2):
        sim.goto(index)
        assert replace(sim.snapshot(), events_total=0) == _fresh_after(index)


# --------------------------------------------------------------------------- log views


def _events(whys: list[str], moments: list[str]) -> list[Event]:
    return [
        Event(i, float(i), m, w, data=(("n", i),))
        for i, (w, m) in enumerate(zip(whys, moments, strict=True))
    ]


def test_a_view_is_the_first_n_events_and_stays_so() -> None:
    evs = _events(["abc", "0123456789", "hello"], ["arrive", "admit", "preempt"])
    log = EventLog(evs[:2])
    reader = log.reader()
    view = reader.upto(2)
    log.append(evs[2])
    assert len(view) == 2 and list(view) == evs[:2] and view[-1] == evs[1]
    assert view[0:2] == evs[:2]
    with pytest.raises(IndexError):
        view[2]
    assert len(reader.upto(99)) == 3  # at most the log's length
    assert list(reader.upto(3)) == evs
    assert (view.time_at(1), view.moment_at(1)) == (1.0, "admit")
    # The longest why among its own events: 3, then 10 from the second event on.
    assert [reader.upto(n).widest for n in (0, 1, 2, 3)] == [0, 3, 10, 10]


def test_find_moments_reads_the_packed_moments() -> None:
    moments = ["arrive", "admit", "preempt", "admit", "reject", "preempt"]
    log = EventLog(_events(["x"] * 6, moments))
    view = log.reader().upto(5)  # the last preempt (#5) is not in it
    assert view.find_moments(0, {"preempt", "reject"}) == [2, 4]
    assert view.find_moments(3, ["admit"]) == [3]
    assert view.find_moments(0, {"no-such-moment"}) == []


def test_a_chunk_marshal_cannot_write_is_pickled(monkeypatch: pytest.MonkeyPatch) -> None:
    # A value marshal refuses (a Fraction) in an event's figures: its chunk goes by pickle,
    # and reads back the same.
    monkeypatch.setattr(eventlog_module, "CHUNK", 4)
    evs = [Event(i, 0.5 * i, "arrive", f"e{i}", data=(("f", Fraction(i, 3)),)) for i in range(9)]
    log = EventLog(evs)
    assert list(log) == evs and list(log.reader().upto(9)) == evs


def test_a_view_reads_while_the_log_grows_on_another_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The writer packs chunks as it goes; a reader of views never sees a wrong event, nor
    # one the log counts before it is whole (the length is what the reader trusts: an
    # event counted before its row was stored read past the end of the tail, now and then
    # on a busy machine). The interpreter is made to switch threads as often as it can,
    # over several logs, so the two threads interleave at every step.
    monkeypatch.setattr(eventlog_module, "CHUNK", 8)
    evs = [Event(i, float(i), "arrive", f"why {i}", units=i) for i in range(3000)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for _ in range(10):
            log = EventLog()
            reader = log.reader()
            done = threading.Event()

            def write(log: EventLog = log, done: threading.Event = done) -> None:
                for e in evs:
                    log.append(e)
                done.set()

            writer = threading.Thread(target=write)
            writer.start()
            checked = 0
            try:
                while not done.is_set() or checked < 50:
                    view = reader.upto(len(log))
                    for i in (0, len(view) // 2, len(view) - 1):
                        if 0 <= i < len(view):
                            assert view[i] == evs[i]
                            assert view.time_at(i) == evs[i].time
                    checked += 1
            finally:
                writer.join()
            assert list(reader.upto(len(log))) == evs
    finally:
        sys.setswitchinterval(interval)
