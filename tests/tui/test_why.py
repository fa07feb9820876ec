"""The selected event's whole `why` is on screen at every size down to 80x24: a line under
the panels that wraps (the event log cuts long ones)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from textual.geometry import Region
from textual.widget import Widget

from pooltui.tui.app import PoolApp
from tests.tui.conftest import make_app, settle
from tests.tui.fakesim import FakeSim

LONG_WHY = (
    "chat[3] is preempted: kv needs 2 more blocks for chat[1]'s decode and has none free; "
    "preempt lifo takes the resident admitted last (chat[3], 3 blocks), whose computed "
    "prefix becomes its cache entry"
)


def long_why_sim(index: int = 5) -> FakeSim:
    sim = FakeSim()
    event, snap = sim._script[index]
    event = replace(event, why=LONG_WHY)
    sim._script[index] = (event, replace(snap, last_event=event))
    return sim


def on_screen(app: PoolApp, widget: Widget) -> str:
    """The text a widget shows, its rows joined, as far as the screen shows it."""
    region = widget.region.intersection(app.screen.region)
    if region.area == 0:
        return ""
    strips = widget.render_lines(Region(0, 0, region.width, region.height))
    return " ".join(" ".join(strip.text.split()) for strip in strips)


@pytest.mark.parametrize("size", [(80, 24), (120, 30), (160, 48)])
async def test_the_whole_why_of_the_current_event_is_on_screen(size: tuple[int, int]) -> None:
    app = make_app(sim=long_why_sim())
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        app.send("goto", index=5)
        await settle(pilot)
        assert app.debugger is not None
        shown = on_screen(app, app.debugger.query_one("#why"))
        assert " ".join(LONG_WHY.split()) in shown


async def test_the_why_follows_the_log_selection() -> None:
    app = make_app(sim=long_why_sim(3))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.send("goto", index=5)
        await settle(pilot)
        assert app.debugger is not None
        why = app.debugger.query_one("#why")
        assert LONG_WHY[:30] not in on_screen(app, why)
        from pooltui.tui.widgets.eventlog import EventLog

        app.debugger.query_one(EventLog).selected = 3
        await pilot.pause()
        assert " ".join(LONG_WHY.split()) in on_screen(app, why)
