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
        # Clicking the column of the first preemption goes to that time.
        col = marks.index("▲", GUTTER)
        await pilot.click(Timeline, offset=Offset(col, 1))
        await settle(pilot)
        t = timeline.time_at(col)
        assert t is not None
        assert app.snapshot.time <= t
        assert app.snapshot.event_index < len(app.sim.events) - 1  # type: ignore[union-attr]


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
