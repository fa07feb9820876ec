"""Long runs in the debugger (issue 13): `c` goes in batches and hands the screen frames
between two actions, each event once, through a view of the log; `space` stops a run that
goes on; the screen's panels keep their height while a run goes (no layout per frame)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from rich.text import Text
from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.widgets import Static

from pooltui.lang import compile_file, compile_source
from pooltui.lang.frontend import compile_condition
from pooltui.sim import Event, Simulation
from pooltui.tui import driver
from pooltui.tui.app import PoolApp
from pooltui.tui.breakpoints import Breakpoint, BreakpointSet
from pooltui.tui.commands import Command, Frame
from pooltui.tui.driver import Controller
from pooltui.tui.widgets.eventlog import EventLog
from pooltui.tui.widgets.statictext import set_text
from pooltui.tui.widgets.timeline import Timeline
from tests.tui.conftest import SIZE, settle

SMALL = str(Path(__file__).parent / "specs" / "small.pool")

# Long enough that a run is still going when the test pauses it: 200,000 chats, one every
# 10 ms, each a prefill and two decodes (hundreds of thousands of events).
LONG = """
stage gpu step { budget 64; seats 4; time 0.01; }
pool kv { cap 256; block 16; evict lru; admit via gpu; }
session chat[200000] {
  arrive every (0.01);
  hold kv (32) reserve (48) {
    run gpu prefill (32);
    run gpu decode (2);
  }
}
"""


def test_continue_sends_every_event_once_and_frames_between_actions(monkeypatch: Any) -> None:
    # Frames as often as the worker may post them (no interval, no cost spacing).
    monkeypatch.setattr(driver, "FRAME_INTERVAL", 0.0)
    monkeypatch.setattr(driver, "FRAME_SHARE", 0)
    sim = Simulation(compile_file(SMALL))
    c = Controller(sim)
    frames: list[Frame] = []
    c.execute(Command("continue", breakpoints=BreakpointSet()), frames.append)
    assert frames[-1].final and frames[-1].stop_kind == "end" and len(frames) > 2
    # The new events of the frames, one after the other, are the log, each event once.
    sent: list[Event] = []
    for f in frames:
        assert f.events_from == len(sent)
        assert len(f.events) == f.snapshot.events_total
        sent.extend(f.new_events)
    assert sent == list(sim.events)
    # Every progress frame shows the newest event: the state between two actions.
    for f in frames[:-1]:
        assert not f.final and f.snapshot.event_index == f.snapshot.events_total - 1


def test_goto_far_ahead_lands_on_the_event() -> None:
    sim = Simulation(compile_file(SMALL))
    c = Controller(sim)
    frames: list[Frame] = []
    c.execute(Command("goto", index=57), frames.append)
    assert frames[-1].snapshot.event_index == 57 and frames[-1].stop == "went to event #57"
    fresh = Simulation(compile_file(SMALL))
    for _ in range(58):
        fresh.step()
    assert frames[-1].snapshot.last_event == fresh.events[57]


async def continue_long(pilot: Pilot[Any]) -> None:
    """`c` on LONG, until the run has shown some progress (a condition, not a duration)."""
    app = pilot.app
    assert isinstance(app, PoolApp)
    await settle(pilot)
    await pilot.press("c")
    for _ in range(6000):
        if app.snapshot is not None and app.snapshot.event_index > 100 and app.running:
            break
        await pilot.pause(0.01)
    assert app.running


async def test_space_stops_a_continue_that_goes_on() -> None:
    sim = Simulation(compile_source(LONG, "long.pool"))
    app = PoolApp("long.pool", sim=sim)
    async with app.run_test(size=SIZE) as pilot:
        await continue_long(pilot)
        await pilot.press("space")
        await settle(pilot)
        assert not app.running and app.stop == "paused"
        assert app.snapshot is not None and not app.snapshot.finished
        where = app.snapshot.event_index
        assert where == sim.cursor  # the screen shows where the simulation stopped
        await pilot.pause(0.2)
        assert app.snapshot.event_index == where == sim.cursor  # and it stays there


async def test_q_during_a_continue_stops_the_simulation() -> None:
    """Quitting while `c` goes on ends the run too: the simulation's thread was left
    running the whole LONG spec (hundreds of thousands of events) to its end, and the
    process waited for it. After `q`, the simulation stops within a few steps."""
    sim = Simulation(compile_source(LONG, "long.pool"))
    app = PoolApp("long.pool", sim=sim)
    async with app.run_test(size=SIZE) as pilot:
        await continue_long(pilot)
        await pilot.press("q")
    # The app is gone: its worker ends (a condition with a bound, not a duration).
    for _ in range(3000):
        if not any(w.is_running for w in app.workers):
            break
        await asyncio.sleep(0.01)
    assert not any(w.is_running for w in app.workers)
    stopped = len(sim.events)
    await asyncio.sleep(0.2)
    assert len(sim.events) == stopped and not sim.finished


def test_the_log_widget_and_the_timeline_read_a_view() -> None:
    # A log of moments arrive, admit, preempt, admit, reject, preempt at t = 0..5.
    from pooltui.sim.eventlog import EventLog as Log

    moments = ["arrive", "admit", "preempt", "admit", "reject", "preempt"]
    evs = [Event(i, float(i), m, f"why {i}", session=f"s{i % 2}") for i, m in enumerate(moments)]
    view = Log(evs).reader().upto(5)
    log = EventLog()
    log.add_events(0, view)
    assert log.row_count == 5 and log.event_at(4) == evs[4]
    log.filter = (frozenset({"preempt", "reject"}), frozenset())
    assert log._matching(0, 5) == [2, 4] and log._matching(3, 5) == [4]
    log.filter = (frozenset({"admit"}), frozenset({"s1"}))
    assert log._matching(0, 5) == [1, 3]  # admits of s1: #1 and #3 (odd indices)
    # The timeline marks the same buckets from the view as from the events themselves.
    a, b = Timeline(), Timeline()
    snap = _snapshot()
    a.add(snap, view, (), 0)
    b.add(snap, evs[:5], (), 0)
    assert a.marks == b.marks and a.latest == b.latest == 4.0
    # The preempt at 2 and the reject at 4 (each doubles the range, from 1 s to 4 s then
    # 8 s: a mark made as the range doubled used to land in the list just replaced).
    assert sum(1 for m in a.marks if m) == 2


def _snapshot() -> Any:
    from tests.tui.fakesim import FakeSim

    fake = FakeSim()
    fake.goto(3)
    return fake.snapshot()


class _Panel(App[None]):
    def compose(self) -> ComposeResult:
        yield Static(id="body")


async def test_a_growing_only_text_keeps_its_height_until_told() -> None:
    app = _Panel()
    async with app.run_test(size=(40, 10)) as pilot:
        body = app.query_one("#body", Static)
        set_text(body, Text("a\nb\nc"))
        await pilot.pause()
        # Fewer lines while a run goes: padded to the 3 it had; then, told, it fits.
        set_text(body, Text("a"), grow_only=True)
        await pilot.pause()
        assert str(body.content).count("\n") == 2 and body.size.height == 3
        set_text(body, Text("a\nb\nc\nd"), grow_only=True)
        await pilot.pause()
        assert body.size.height == 4
        set_text(body, Text("a"))
        await pilot.pause()
        assert body.size.height == 1
        await asyncio.sleep(0)


class _Bounded(App[None]):
    CSS = """
    #fixed { height: 1; }
    #bounded { height: auto; max-height: 3; }
    #padded { height: auto; max-height: 4; padding: 1 0; }
    """

    def compose(self) -> ComposeResult:
        yield Static(id="fixed")
        yield Static(id="bounded")
        yield Static(id="padded")


async def test_a_text_lays_the_screen_out_only_when_its_box_changes_height() -> None:
    # A height the styles fix (the status line's 1) or bound (the why's max-height 5)
    # does not follow the text past it: no layout of the whole screen for nothing.
    app = _Bounded()
    async with app.run_test(size=(40, 12)) as pilot:
        await pilot.pause()
        asked: list[tuple[str, bool]] = []
        for static in app.query(Static):
            update = static.update

            def updating(
                content: Any, *, layout: bool = True, _s: Any = static, _u: Any = update
            ) -> None:
                asked.append((_s.id, layout))
                _u(content, layout=layout)

            static.update = updating  # type: ignore[method-assign]
        fixed, bounded, padded = (
            app.query_one(f"#{n}", Static) for n in ("fixed", "bounded", "padded")
        )
        set_text(fixed, Text("a"))
        set_text(fixed, Text("a\nb"))  # still 1 high
        set_text(bounded, Text("a"))
        set_text(bounded, Text("a\nb"))  # 1 -> 2
        set_text(bounded, Text("a\nb\nc\nd"))  # 2 -> 3 (its max)
        set_text(bounded, Text("a\nb\nc\nd\ne"))  # 3 -> 3
        set_text(bounded, Text("a"))  # 3 -> 1
        set_text(padded, Text("a"))  # 1 + 2 of padding: 3
        set_text(padded, Text("a\nb"))  # 4 (its max)
        set_text(padded, Text("a\nb\nc"))  # 5 bounded to 4
        await pilot.pause()
        assert asked == [
            ("fixed", False),  # fixed: never laid out for its text, not even the first
            ("fixed", False),
            ("bounded", True),
            ("bounded", True),
            ("bounded", True),
            ("bounded", False),
            ("bounded", True),
            ("padded", True),
            ("padded", True),
            ("padded", False),
        ]
        assert (fixed.size.height, bounded.size.height, padded.outer_size.height) == (1, 1, 4)


def test_a_condition_stops_where_stepping_finds_it_true() -> None:
    # Reference: step one event at a time and evaluate the condition at each (inside an
    # action that is a replay); the first event after which it is true is where `c` stops.
    program = compile_file(SMALL)
    expr = compile_condition("free(kv) == 0 && queued(kv) > 0", program)
    ref = Simulation(program)
    assert not ref.evaluate(expr)
    while (ev := ref.step()) is not None and not ref.evaluate(expr):
        pass
    assert ev is not None
    want = ev.index
    # The worker: the simulation evaluates the condition as each event happens.
    sim = Simulation(program)
    bps = BreakpointSet()
    bps.add(Breakpoint(0, "condition", condition="free(kv) == 0", expr=expr))
    frames: list[Frame] = []
    Controller(sim).execute(Command("continue", breakpoints=bps), frames.append)
    assert frames[-1].stop_kind == "breakpoint" and frames[-1].snapshot.event_index == want
    assert list(sim.events)[: want + 1] == list(ref.events)[: want + 1]
    assert sim.evaluate(expr) == 1  # read again at the stop: the same value


def test_reverse_continue_with_a_condition_stops_where_it_last_became_true() -> None:
    # Reference: the condition's value at the start and after each event, one at a time
    # (inside an action, a replay). It "becomes true" at event i when it is false before
    # i and true after. Reverse continue from the last event E looks at the events before
    # E (at E itself is where it already is) and stops at the last such i.
    program = compile_file(SMALL)
    expr = compile_condition("free(kv) == 0 && queued(kv) > 0", program)
    ref = Simulation(program)
    values = [bool(ref.evaluate(expr))]
    while ref.step() is not None:
        values.append(bool(ref.evaluate(expr)))
    end = len(values) - 2  # the last event's index (values[i + 1] is after event i)
    rises = [i for i in range(end) if not values[i] and values[i + 1]]
    assert len(rises) >= 2
    # The simulation's own replays give the same values, a checkpoint's worth at a time.
    sim = Simulation(program, checkpoint_every=16)
    c = Controller(sim)
    c.execute(Command("goto", index=end), lambda f: None)
    for last in (end, end // 2, 3, -1):
        first, got = sim.values_until([expr], last)
        assert first <= last and [bool(v[0]) for v in got] == values[first + 1 : last + 2]
    bps = BreakpointSet()
    bps.add(Breakpoint(0, "condition", condition="…", expr=expr))
    frames: list[Frame] = []
    c.execute(Command("reverse", gen=c.interrupt_gen, breakpoints=bps), frames.append)
    assert frames[-1].stop_kind == "breakpoint" and frames[-1].snapshot.event_index == rises[-1]


async def test_a_filter_over_a_long_log_is_found_a_stretch_at_a_time(monkeypatch: Any) -> None:
    # 20 events, stretches of 6: the rows come in 4 goes (6, 12, 18, 20), the screen free
    # in between; the result is the whole filter's: every event of s1 (the odd indices).
    from pooltui.sim.eventlog import EventLog as Log
    from pooltui.tui.widgets import eventlog as eventlog_widget

    monkeypatch.setattr(eventlog_widget, "SCAN_STRETCH", 6)
    evs = [Event(i, float(i), "admit", f"why {i}", session=f"s{i % 2}") for i in range(20)]
    view = Log(evs).reader().upto(20)

    class One(App[None]):
        def compose(self) -> ComposeResult:
            yield EventLog()

    app = One()
    async with app.run_test(size=(80, 12)) as pilot:
        log = app.query_one(EventLog)
        log.add_events(0, view)
        log.set_filter((frozenset(), frozenset({"s1"})))
        assert log.filtering and log._rows == [1, 3, 5]  # the first stretch at once
        for _ in range(100):
            if not log.filtering:
                break
            await pilot.pause()
        assert not log.filtering and log._rows == list(range(1, 20, 2))
