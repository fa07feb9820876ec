"""The controller without Textual: commands against the fake, frames out.

Every test here runs the controller on a simulated clock (the `clock` fixture replaces the
driver's time module): none reads the machine's clock, so a busy machine changes nothing.
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from typing import Any

import pytest

from pooltui.tui import driver
from pooltui.tui.breakpoints import Breakpoint, BreakpointSet
from pooltui.tui.commands import Change, Command, Frame
from pooltui.tui.driver import Controller
from pooltui.tui.goto import parse_goto
from tests.tui.fakesim import FakeSim, fake_compile_condition


class Clock:
    """What the driver reads of `time`: wall and CPU clocks that move only when it sleeps
    (and by `tick` at each wall reading, where a test wants time to pass by itself)."""

    def __init__(self) -> None:
        self.now = 0.0
        self.tick = 0.0

    def monotonic(self) -> float:
        self.now += self.tick
        return self.now

    perf_counter = monotonic

    def thread_time(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += max(seconds, 0.0)


@pytest.fixture(autouse=True)
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(driver, "_time", fake)
    return fake


def run(controller: Controller, cmd: Command) -> list[Frame]:
    frames: list[Frame] = []
    controller.execute(cmd, frames.append)
    return frames


def test_step_posts_the_new_events_once() -> None:
    c = Controller(FakeSim())
    f1 = run(c, Command("step"))[-1]
    f2 = run(c, Command("step"))[-1]
    assert (f1.events_from, len(f1.new_events)) == (0, 1)
    assert (f2.events_from, len(f2.new_events)) == (1, 1)
    back = run(c, Command("back"))[-1]
    assert back.new_events == () and back.snapshot.event_index == 0


def test_goto_time_takes_the_last_event_at_or_before() -> None:
    sim = FakeSim()
    c = Controller(sim)
    frame = run(c, Command("goto_time", time=1.3))[-1]
    assert frame.snapshot.time == 1.25 and frame.snapshot.event_index == 17
    frame = run(c, Command("goto_time", time=0.7))[-1]  # backwards, inside the log
    assert frame.snapshot.event_index == 3


def test_continue_stops_at_the_end_without_breakpoints() -> None:
    c = Controller(FakeSim())
    frame = run(c, Command("continue", breakpoints=BreakpointSet()))[-1]
    assert frame.final and frame.stop_kind == "end"
    assert frame.snapshot.finished


def test_a_pause_interrupts_a_long_run_between_steps() -> None:
    sim = FakeSim()
    c = Controller(sim)
    frames: list[Frame] = []

    def post(frame: Frame) -> None:
        frames.append(frame)
        if len(frames) == 1:  # the run has shown its first event: the user pauses
            c.interrupt_gen += 1

    c.execute(Command("run", rate=5.0, gen=c.interrupt_gen), post)
    # It stopped on the pause, between two steps, not at the end of the simulation.
    assert frames[-1].stop == "paused" and frames[-1].final
    assert not sim.finished and sim.cursor < len(sim.events)


def test_watches_report_changes() -> None:
    sim = FakeSim()
    c = Controller(sim)
    expr = fake_compile_condition("free(kv)")
    run(c, Command("watches", watches=(("free(kv)", expr),)))
    values = [run(c, Command("step"))[-1].watches[0] for _ in range(3)]
    assert [(w.value, w.changed) for w in values] == [(128, False), (128, False), (96, True)]


def test_reverse_continue_with_a_condition() -> None:
    sim = FakeSim()
    c = Controller(sim)
    bps = BreakpointSet()
    bps.add(
        Breakpoint(
            0,
            "condition",
            condition="queued(kv) > 0",
            expr=fake_compile_condition("queued(kv) > 0"),
        )
    )
    run(c, Command("goto", index=12))
    frame = run(c, Command("reverse", breakpoints=bps))[-1]
    assert frame.stop_kind == "breakpoint" and frame.snapshot.event_index == 9


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("42", ("event", 42.0)),
        ("#7", ("event", 7.0)),
        ("12.5s", ("time", 12.5)),
        ("t=3", ("time", 3.0)),
        ("@0.5", ("time", 0.5)),
        ("2.5", ("time", 2.5)),
    ],
)
def test_parse_goto(text: str, want: tuple[str, float]) -> None:
    assert parse_goto(text) == want


def test_parse_goto_rejects_nonsense() -> None:
    for text in ("", "soon", "t=-1"):
        with pytest.raises(ValueError):
            parse_goto(text)


def test_a_run_follows_a_new_speed_at_once(clock: Clock) -> None:
    """At 1 event a second the fake run would take a minute of the (simulated) clock;
    raising `run_rate` while it goes makes it reach the end from where it was, at the new
    speed: the rest of it takes well under that minute."""
    sim = FakeSim()
    c = Controller(sim)
    frames: list[Frame] = []

    def post(frame: Frame) -> None:
        frames.append(frame)
        if len(frames) == 1:  # the run has shown its first event: the user speeds it up
            c.run_rate = 100000.0

    c.execute(Command("run", rate=1.0, gen=c.interrupt_gen), post)
    assert frames[-1].final and frames[-1].stop_kind == "end" and sim.finished
    assert clock.now < len(sim.events) / 2  # not 1 event a second to the end


@pytest.mark.parametrize(
    "cmd",
    [
        Command("continue", breakpoints=BreakpointSet()),
        Command("run", rate=1e9, breakpoints=BreakpointSet()),
        Command("goto", index=80),
        Command("goto_time", time=5.0),  # its last event at or before 5s is #79
    ],
)
def test_the_worker_never_waits_for_the_screen(cmd: Command) -> None:
    """A screen that never catches up (ui_ready always False): the worker goes on to the
    end of its command all the same, posting no progress frame, only the final one."""
    c = Controller(FakeSim())
    c.ui_ready = lambda: False
    frames = run(c, cmd)
    assert [f.final for f in frames] == [True]
    assert frames[0].snapshot.event_index >= 79


@pytest.mark.parametrize("cmd", [Command("continue"), Command("run", rate=1e6)])
def test_a_run_posts_at_most_one_frame_per_frame_interval(cmd: Command, clock: Clock) -> None:
    """On a simulated clock (each reading 1 ms later): progress frames are at least
    FRAME_INTERVAL apart, so the screen is drawn at most at its frame rate."""
    clock.tick = 0.001
    c = Controller(FakeSim())
    posted: list[float] = []

    def post(frame: Frame) -> None:
        if not frame.final:
            posted.append(clock.now)

    c.execute(replace(cmd, breakpoints=BreakpointSet()), post)
    assert posted, "a long run shows progress"
    gaps = [b - a for a, b in itertools.pairwise(posted)]
    assert all(gap >= driver.FRAME_INTERVAL - 1e-9 for gap in gaps)


def test_a_pause_during_a_frame_does_not_build_the_snapshot_again() -> None:
    sim = FakeSim()
    made: list[int] = []
    snapshot = sim.snapshot

    def counted(shown: Any = None) -> Any:
        made.append(sim.cursor)
        return snapshot(shown)

    sim.snapshot = counted  # type: ignore[method-assign]
    c = Controller(sim)
    sim.step()
    progress = c.frame(Command("continue", seq=1), final=False, running=True)
    paused = c.frame(Command("continue", seq=1), stop="paused", stop_kind="pause")
    assert paused.snapshot is progress.snapshot and made == [0]
    # Anything else builds its own: a final frame after a final frame, or after a step.
    again = c.frame(Command("refresh", seq=2))
    assert again.snapshot is not paused.snapshot and made == [0, 0]
    c.frame(Command("continue", seq=3), final=False, running=True)
    sim.step()
    moved = c.frame(Command("continue", seq=3), stop="paused", stop_kind="pause")
    assert moved.snapshot.event_index == 1 and made == [0, 0, 0, 1]


def test_a_run_lets_a_pause_give_up_a_checkpoint() -> None:
    # While a long command runs, the simulation is told to give a checkpoint up as soon as
    # a pause (any newer command) comes; before and after, it is not.
    seen: list[bool] = []

    class Recording(FakeSim):
        abandon_checkpoint: Any = None

        def skip(self, n: int, *, whole: bool = False, each: Any = None) -> int:
            hook = self.abandon_checkpoint
            seen.append(hook is not None and hook())
            c.interrupt_gen += 1  # the pause comes while this batch goes
            seen.append(hook is not None and hook())
            return super().skip(n, whole=whole, each=each)

    sim = Recording()
    c = Controller(sim)
    frames: list[Any] = []
    c.execute(Command("continue", seq=1, gen=c.interrupt_gen), frames.append)
    assert seen == [False, True]
    assert frames[-1].stop_kind == "pause"
    assert sim.abandon_checkpoint is None


def test_a_look_shows_the_state_again_saying_what_was_said() -> None:
    # `look` (a session inspected): a final frame at the same event, with the last final
    # frame's stop and watch values (a watch's `changed` is the step's, not recomputed).
    sim = FakeSim()
    c = Controller(sim)
    frames: list[Frame] = []
    c.execute(Command("watches", watches=(("one", "1"),)), frames.append)
    c.execute(Command("step", seq=1), frames.append)
    c.execute(Command("goto", seq=2, index=3), frames.append)
    went = frames[-1]
    c.execute(Command("look", seq=3), frames.append)
    look = frames[-1]
    assert look.final and look.look and not went.look
    assert look.seq == 3 and look.snapshot.event_index == went.snapshot.event_index == 3
    assert (look.stop, look.stop_kind, look.watches) == (went.stop, went.stop_kind, went.watches)
    assert look.stop == "went to event #3"


@pytest.mark.parametrize(("seq", "stop"), [(1, 43), (0, 83)])
def test_a_continue_follows_the_breakpoints_posted_while_it_runs(seq: int, stop: int) -> None:
    """A breakpoint posted as the run (seq 1) goes by event 10 stops it at the first evict
    after (43); one posted for another run (seq 0, over) is not taken: on to the end."""
    sim = FakeSim()
    c = Controller(sim)
    user = BreakpointSet()
    user.add(Breakpoint(0, "moment", moment="evict"))
    step = sim.step

    def posting_step() -> Any:
        if sim.cursor == 10:
            c.follow(Change(seq, breakpoints=user.frozen()))
        return step()

    sim.step = posting_step  # type: ignore[method-assign]
    frames = run(c, Command("continue", seq=1, gen=c.interrupt_gen, breakpoints=BreakpointSet()))
    assert frames[-1].final and frames[-1].snapshot.event_index == stop
    assert frames[-1].stop_kind == ("breakpoint" if seq == 1 else "end")
