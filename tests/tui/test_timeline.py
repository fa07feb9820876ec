"""The timeline under the status bar: utilisation over simulated time, marks where it
preempted, rejected or halted; a click goes there; cheap for a long run."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

from textual.geometry import Offset

from pooltui.sim.events import Event
from pooltui.tui.app import PoolApp
from pooltui.tui.widgets.timeline import BUCKETS, GUTTER, Timeline
from tests.tui.conftest import SIZE, keys, make_app, settle
from tests.tui.fakesim import FakeSim

SMALL = str(Path(__file__).parent / "specs" / "small.pool")
VLLM = str(Path(__file__).parents[2] / "specs" / "vllm_v1.pool")


async def test_the_timeline_shows_utilisation_and_preemptions() -> None:
    app = PoolApp.from_spec(SMALL)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await keys(pilot, "c")
        assert app.snapshot is not None and app.snapshot.finished
        assert app.debugger is not None
        timeline = app.debugger.query_one(Timeline)
        bars = timeline.render_line(0).text
        marks = timeline.render_line(1).text
        assert bars.startswith("kv ")
        assert any(glyph in bars for glyph in "▄▅▆▇█")  # the pool filled up
        preempts = [e for e in app.sim.events if e.moment == "preempt"]  # type: ignore[union-attr]
        assert preempts and "▲" in marks[GUTTER:]
        # Clicking the column of the first preemption goes to that preemption.
        col = marks.index("▲", GUTTER)
        await pilot.click(Timeline, offset=Offset(col, 1))
        await settle(pilot)
        assert app.snapshot.last_event is not None
        assert app.snapshot.last_event.index == preempts[0].index
        # A column without a mark goes to its time.
        col = next(x for x in range(GUTTER, len(marks)) if marks[x] == "─")
        await pilot.click(Timeline, offset=Offset(col, 1))
        await settle(pilot)
        t = timeline.time_at(col)
        assert t is not None
        assert app.snapshot.time <= t
        assert app.snapshot.event_index < len(app.sim.events) - 1  # type: ignore[union-attr]


async def test_clicking_a_preemption_mark_goes_to_the_preemption() -> None:
    """specs/vllm_v1.pool at event 1300: each ▲ goes to the first preemption of its
    column (#53 is the run's first; one column holds #332, the last is #1300 itself), not
    to the event at the middle of the column's time."""
    app = PoolApp.from_spec(VLLM)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.send("goto", index=1300)
        await settle(pilot)
        assert app.debugger is not None
        marks = app.debugger.query_one(Timeline).render_line(1).text
        columns = [x for x, glyph in enumerate(marks) if glyph == "▲"]
        assert len(columns) >= 3
        landed = []
        for col in columns:
            app.send("goto", index=1300)
            await settle(pilot)
            await pilot.click(Timeline, offset=Offset(col, 1))
            await settle(pilot)
            assert app.snapshot is not None and app.snapshot.last_event is not None
            assert app.snapshot.last_event.moment == "preempt"
            landed.append(app.snapshot.last_event.index)
        assert landed == sorted(set(landed))
        assert landed[0] == 53 and 332 in landed and landed[-1] == 1300


def test_a_column_of_several_marks_goes_to_the_first_of_the_one_shown() -> None:
    """One column (an unmounted timeline has one): it shows ✗ over ▲, so a click goes to
    its first rejection, not to the preemption before it; with preemptions only, to the
    first of them."""

    def ev(index: int, t: float, moment: str) -> Event:
        return Event(index=index, time=t, moment=moment, why="")

    snap = FakeSim().snapshot()
    timeline = Timeline()
    timeline.add(snap, [ev(3, 0.1, "preempt"), ev(5, 0.2, "reject"), ev(7, 0.3, "reject")])
    assert timeline.mark_at(GUTTER) == 5
    timeline.reset()
    timeline.add(snap, [ev(0, 0.0, "admit"), ev(3, 0.1, "preempt"), ev(7, 0.3, "preempt")])
    assert timeline.mark_at(GUTTER) == 3
    timeline.reset()
    timeline.add(snap, [ev(0, 0.0, "admit"), ev(1, 0.3, "iteration")])
    assert timeline.mark_at(GUTTER) is None


async def test_a_halt_is_marked() -> None:
    app = make_app(sim=FakeSim(deadlock=True))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await keys(pilot, "c")
        assert app.debugger is not None
        assert "■" in app.debugger.query_one(Timeline).render_line(1).text


def test_a_long_run_stays_in_its_buckets() -> None:
    """A run of 1.2M events in frames of 20,000: the buckets stay BUCKETS, their range
    doubles to cover the run, every preemption's bucket is marked."""
    timeline = Timeline()
    sim = FakeSim()
    sim.goto(40)
    snap = sim.snapshot()
    proto = Event(index=0, time=0.0, moment="preempt", why="", session=None, session_id=None)
    quiet = replace(proto, moment="iteration")
    total, chunk = 1_200_000, 20_000
    for start in range(0, total, chunk):
        # Most events are quiet; one preemption every 100,000 events.
        frame = [quiet] * (chunk - 1) + [replace(proto, index=start, time=start * 1e-3)]
        t = (start + chunk) * 1e-3
        timeline.add(replace(snap, time=t), frame, [(t, 64.0)])
    assert len(timeline.level) == BUCKETS and len(timeline.marks) == BUCKETS
    assert timeline.span >= total * 1e-3
    marked = sum(1 for bits in timeline.marks if bits)
    assert 1 <= marked <= total // chunk
    assert not math.isnan(timeline.level[timeline._bucket(total * 1e-3)])
