"""The narrow layout (80x24): panels become tabs instead of being clipped, the block map
keeps its first row, the keys that matter stay on screen; and teaching mode."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from pooltui.tui.app import PoolApp
from pooltui.tui.widgets.blockmap import BlockMapView
from pooltui.tui.widgets.eventlog import EventLog
from pooltui.tui.widgets.keybar import KeyBar
from pooltui.tui.widgets.panels import QueuePanel
from tests.tui.conftest import SIZE, keys, make_app, settle

SMALL = str(Path(__file__).parent / "specs" / "small.pool")
NARROW = (80, 24)


def visible(app: PoolApp, selector: str) -> bool:
    assert app.debugger is not None
    widget = app.debugger.query_one(selector)
    region = widget.region.intersection(app.screen.region)
    return widget.display and region.area > 0 and widget.region == region


async def test_the_block_map_keeps_its_first_row_at_80x24_after_g_53() -> None:
    app = PoolApp.from_spec(SMALL)
    async with app.run_test(size=NARROW) as pilot:
        await settle(pilot)
        await keys(pilot, "g", "5", "3", "enter")
        assert app.snapshot is not None and app.snapshot.event_index == 53
        await pilot.pause(0.05)
        assert app.debugger is not None
        view = app.debugger.query_one(BlockMapView)
        assert view.scroll_offset.y == 0
        assert view.region.height >= view.rows()  # every row of the map is in view
        assert visible(app, "BlockMapView")


async def test_the_keys_that_matter_stay_on_screen_at_80x24() -> None:
    app = make_app()
    async with app.run_test(size=NARROW) as pilot:
        await settle(pilot)
        assert app.debugger is not None
        line = str(app.debugger.query_one("#keys", Static).render())
        assert visible(app, "#keys")
        for key in ("? help", "q quit", "b break", "w watch"):
            assert key in line[:76]  # before any ellipsis
        assert not app.debugger.query_one(KeyBar).display


async def test_narrow_panels_are_tabs_not_clipped() -> None:
    app = make_app()
    async with app.run_test(size=NARROW) as pilot:
        await settle(pilot)
        assert app.debugger is not None
        screen = app.debugger
        assert visible(app, "#views")
        assert visible(app, "#pools") and not screen.query_one(QueuePanel).display
        assert screen.query_one("#pools").region.width == NARROW[0]  # the whole width
        await keys(pilot, "v")  # the next panel: the event log
        assert visible(app, "#events") and not screen.query_one("#pools").display
        await keys(pilot, "v")
        assert visible(app, "#queue")
        # Wide again: every panel, no tabs.
        await pilot.resize_terminal(*SIZE)
        await settle(pilot)
        for selector in ("#pools", "#queue", "#stages", "#events", "#source", "#side"):
            assert visible(app, selector), selector
        assert not screen.query_one("#views").display
        assert screen.query_one(KeyBar).display


async def test_narrow_a_halt_brings_details_forward() -> None:
    app = make_app(error_at=5)
    async with app.run_test(size=NARROW) as pilot:
        await settle(pilot)
        await keys(pilot, "c")
        assert app.stop_kind == "error"
        assert app.debugger is not None and app.debugger.view == "side"
        assert visible(app, "#side")


async def test_teaching_mode_gives_the_notes_the_right_side() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.debugger is not None
        screen = app.debugger
        assert not screen.query_one("#teach-notes").display
        await keys(pilot, "t")
        notes = screen.query_one("#teach-notes")
        assert visible(app, "#teach-notes")
        body = str(screen.query_one("#teach-body", Static).content)
        assert "Six chats share a small KV cache" in body
        # The whole right side: from under the status bar to above the why line.
        assert notes.region.right == SIZE[0]
        assert notes.region.width >= SIZE[0] * 0.4
        assert notes.region.height >= SIZE[1] - 6
        assert not screen.query_one("#queue").display and not screen.query_one("#side").display
        assert visible(app, "#pools") and visible(app, "#events")
        await keys(pilot, "t")
        assert not screen.query_one("#teach-notes").display
        assert visible(app, "#queue") and visible(app, "#side")


async def test_teaching_mode_at_80x24_shows_only_the_notes() -> None:
    app = make_app()
    async with app.run_test(size=NARROW) as pilot:
        await settle(pilot)
        await keys(pilot, "t")
        assert visible(app, "#teach-notes")
        assert app.debugger is not None
        assert app.debugger.query_one("#teach-notes").region.width == NARROW[0]
        assert not app.debugger.query_one(EventLog).display


async def test_at_120x30_the_key_line_keeps_q_and_help() -> None:
    """Between 100 and 140 columns the footer would cut q and ?: the key line instead."""
    app = make_app()
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await keys(pilot, "n", "n")
        assert app.debugger is not None
        assert not app.debugger.query_one(KeyBar).display
        line = str(app.debugger.query_one("#keys", Static).render())
        assert visible(app, "#keys") and "? help" in line and "q quit" in line
        assert "v panel" not in line  # every panel is on screen
