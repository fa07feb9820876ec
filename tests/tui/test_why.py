"""The selected event's whole `why` is on screen at every size down to 80x24: a line under
the panels that wraps (the event log cuts long ones)."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
from textual import events
from textual.geometry import Region
from textual.pilot import Pilot
from textual.widget import Widget

from pooltui.tui.app import PoolApp
from pooltui.tui.details import details_text
from pooltui.tui.widgets.blockmap import BlockMapView
from tests.tui.conftest import keys, make_app, settle
from tests.tui.fakesim import FakeSim
from tests.tui.test_layout import visible

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


MANY = str(Path(__file__).parent / "specs" / "many.pool")


@pytest.mark.parametrize(("size", "cut"), [((80, 24), True), ((120, 30), True), ((160, 48), False)])
async def test_a_why_too_long_for_its_lines_says_so_and_scrolls(
    size: tuple[int, int], cut: bool
) -> None:
    """tests/tui/specs/many.pool, event 180: an iteration that admits sixty sessions, a why
    of twenty lines at 80 columns (fifteen at 120, eleven at 160). The why's line wraps it
    up to a third of the screen (all of it at 160x48); past that it ends with a `…` that
    says there is more, scrolling it shows the rest, and
    the Details tab has all of it. At 80x24 the block map keeps its first row and the key
    line stays."""
    app = PoolApp.from_spec(MANY)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        app.send("goto", index=180)
        await settle(pilot)
        assert app.debugger is not None and app.snapshot is not None
        event = app.snapshot.last_event
        assert event is not None and "conversation_request[59]" in event.why
        why = app.debugger.query_one("#why")
        assert 3 <= why.region.height <= size[1] // 3
        shown = on_screen(app, why)
        if not cut:
            assert "…" not in shown and " ".join(event.why.split()) in shown
        else:
            assert "…" in shown and "conversation_request[59]" not in shown
        seen = shown
        for _ in range(40):  # the mouse wheel over it shows the rest
            x, y = why.region.x + 2, why.region.y + 1
            why.post_message(events.MouseScrollDown(why, 2, 1, 0, 1, 0, False, False, False, x, y))
            await pilot.pause()
            seen += " " + on_screen(app, why)
        assert "conversation_request[59]" in seen
        words = " ".join(event.why.split()).split(" ")
        assert all(word in seen for word in words)
        assert event.why in str(details_text(app.snapshot, halted=None, inspecting=None))
        if size == (80, 24):
            view = app.debugger.query_one(BlockMapView)
            assert visible(app, "BlockMapView") and view.scroll_offset.y == 0
            assert visible(app, "#keys")


def _scroll_down(why: Widget) -> None:
    x, y = why.region.x + 2, why.region.y + 1
    why.post_message(events.MouseScrollDown(why, 2, 1, 0, 1, 0, False, False, False, x, y))


async def _why_of_180(app: PoolApp, pilot: Pilot[int]) -> Widget:
    """many.pool's #180 gone to (a why of 22 lines at 80 columns): the why line."""
    await settle(pilot)
    app.send("goto", index=180)
    await settle(pilot)
    assert app.debugger is not None
    return app.debugger.query_one("#why")


async def test_a_size_where_the_why_fits_shows_it_from_the_top_ever_after() -> None:
    """many.pool's #180, a why of 22 lines at 80 columns, scrolled: at 160x48 it fits whole
    (11 lines), so it shows from its first line; back at 80x24 it shows from the top again
    (`… 15 more lines below`), not from where it was scrolled to before (`6 lines above`):
    the why's own lines decide where it stands, and a size that shows them all leaves
    nothing scrolled."""
    app = PoolApp.from_spec(MANY)
    async with app.run_test(size=(80, 24)) as pilot:
        why = await _why_of_180(app, pilot)
        for _ in range(3):
            _scroll_down(why)
            await pilot.pause()
        assert "lines above" in on_screen(app, why)
        await pilot.resize_terminal(160, 48)
        await settle(pilot)
        shown = on_screen(app, why)
        assert shown.startswith("#180 iteration") and "…" not in shown
        await pilot.resize_terminal(80, 24)
        await settle(pilot)
        shown = on_screen(app, why)
        assert shown.startswith("#180 iteration"), shown
        assert "lines above" not in shown and "15 more lines below" in shown


async def test_after_a_resize_the_why_is_as_tall_as_its_lines() -> None:
    """many.pool's #180 is 11 lines at 160 columns and 10 at 200. A go-to's frame only
    lets heights grow (the next step fits them), and so does selecting in the log until
    then (#179's one line keeps 11 rows); but a new size lays the screen out anew, so the
    why fits it: at 200x60 #180's 10 lines take 10 rows, with no blank row under them
    (there was one: the 11 rows of 160 columns were kept through the resize)."""
    app = PoolApp.from_spec(MANY)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        await keys(pilot, "g", "1", "8", "0", "enter", "up")
        await pilot.resize_terminal(200, 60)
        await settle(pilot)
        await keys(pilot, "down")
        assert app.debugger is not None and app.snapshot is not None
        assert app.snapshot.event_index == 180
        why = app.debugger.query_one("#why")
        rows = [
            strip.text
            for strip in why.render_lines(Region(0, 0, why.region.width, why.region.height))
        ]
        assert rows[0].lstrip().startswith("#180 iteration")
        assert rows[-1].rstrip().endswith("conversation_request[59]; lasts 0.01s"), rows[-1]
        assert why.region.height == 10


def _scroll_up(why: Widget) -> None:
    x, y = why.region.x + 2, why.region.y + 1
    why.post_message(events.MouseScrollUp(why, 2, 1, 0, -1, 0, False, False, False, x, y))


async def test_the_scroll_note_counts_one_line_as_one_line() -> None:
    """many.pool's #180 at 80x24: 22 lines, 7 shown above the note, 2 lines a notch of the
    wheel. Down from the top: 2, 4, ... 14 lines above, the last leaving `1 more line
    below`; from the bottom (15 above) up: 13, 11, ... 1, which is `1 line above`. One
    line is one line, not `1 lines` nor `1 more lines`."""
    app = PoolApp.from_spec(MANY)
    async with app.run_test(size=(80, 24)) as pilot:
        why = await _why_of_180(app, pilot)
        notes: list[str] = []
        for scroll in [_scroll_down] * 8 + [_scroll_up] * 8:
            scroll(why)
            await pilot.pause()
            notes.append(on_screen(app, why).split("… ")[-1])
        assert any(n.startswith("14 lines above, 1 more line below (") for n in notes), notes
        assert any(n.startswith("1 line above, 14 more lines below (") for n in notes), notes
        assert not any(re.search(r"\b1 (more )?lines", n) for n in notes), notes
