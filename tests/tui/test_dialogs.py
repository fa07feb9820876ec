"""Every dialog fits an 80x24 terminal (issue 13: usable at 80x24, nothing clipped): its
box lies within the screen, its text wraps instead of being cut, its instructions are on
screen; on a big terminal the dialogs keep their widths."""

from __future__ import annotations

import re
from typing import Any

import pytest
from rich.cells import cell_len
from textual.command import CommandPalette
from textual.geometry import Region
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Input, Static

from pooltui.tui.app import PoolApp
from pooltui.tui.debugger import DebuggerScreen, help_groups
from pooltui.tui.screens import (
    MOMENT_KEYS,
    BreakpointsScreen,
    CompileErrorScreen,
    FilterScreen,
    GotoScreen,
    HelpScreen,
    MomentScreen,
    WatchesScreen,
)
from tests.tui.conftest import SIZE, keys, make_app, settle, submit

NARROW = (80, 24)


def box(app: PoolApp) -> Widget:
    """The dialog's frame: the one child of the modal screen."""
    (frame,) = app.screen.children
    return frame


def lines(widget: Widget) -> list[str]:
    """Every row a widget draws (at its own size, scrolled out of view or not)."""
    region = widget.region
    strips = widget.render_lines(Region(0, 0, region.width, region.height))
    return [" ".join(strip.text.split()) for strip in strips]


def on_screen(app: PoolApp, widget: Widget) -> str:
    """The text a widget shows, its rows joined, as far as the screen shows it."""
    region = widget.region.intersection(app.screen.region)
    if region.area == 0:
        return ""
    strips = widget.render_lines(Region(0, 0, region.width, region.height))
    return " ".join(" ".join(strip.text.split()) for strip in strips)


def texts(app: PoolApp, frame: Widget) -> str:
    """What the frame's texts show on screen, joined."""
    return " ".join(on_screen(app, widget) for widget in frame.query(Static))


def assert_fits(app: PoolApp, frame: Widget) -> None:
    """The frame is wholly on screen, and nothing in it is wider than the screen."""
    screen = app.screen.region
    assert screen.contains_region(frame.region), (frame.region, screen)
    for widget in frame.query("*"):
        region = widget.region
        if widget.display and region.area:
            assert region.x >= screen.x and region.right <= screen.right, (widget, region)


async def open_dialog(pilot: Pilot[Any], *pressed: str) -> None:
    await settle(pilot)
    await keys(pilot, *pressed)
    await pilot.pause()


async def test_the_breakpoints_dialog_fits_80x24_with_its_instructions() -> None:
    app = make_app()
    async with app.run_test(size=NARROW) as pilot:
        await open_dialog(pilot, "b")
        assert isinstance(app.screen, BreakpointsScreen)
        await submit(pilot, "admit pool=kv class=chat; ignore 2")
        await submit(pilot, "if fre(kv) < 64")  # a located error, three lines and a note
        frame = box(app)
        assert_fits(app, frame)
        assert "Breakpoints" in on_screen(app, frame)
        hint = app.screen.query_one(".hint")
        shown = on_screen(app, hint)
        rows = lines(hint)
        for words in (
            "admit pool=kv",
            "(if free(kv) < 64)",
            "(at 12.5)",
            "ignore N",
            "space on/off",
            "o one-shot",
            "+/- ignore",
            "d delete",
        ):
            assert words in shown, words
            # an example or a key and what it does on one row, not split at its space
            assert any(words in row for row in rows), words
        assert "admit pool=kv class=chat" in on_screen(app, app.screen.query_one("#bp-table"))
        error = on_screen(app, app.screen.query_one("#bp-error"))
        assert "unknown name 'fre'" in error and "^^^" in error
        assert on_screen(app, app.screen.query_one(Input)).strip()  # the field is there
        assert "esc Close" in on_screen(app, app.screen.query_one("KeyBar"))


async def test_the_watches_dialog_fits_80x24_with_its_instructions() -> None:
    app = make_app()
    async with app.run_test(size=NARROW) as pilot:
        await open_dialog(pilot, "w")
        assert isinstance(app.screen, WatchesScreen)
        await submit(pilot, "free(kv)")
        assert_fits(app, box(app))
        hint = on_screen(app, app.screen.query_one(".hint"))
        assert "queued(kv) > 3, residents(gpu))" in hint
        assert "In the list: d deletes." in hint
        assert "free(kv)" in on_screen(app, app.screen.query_one("#watch-table"))


async def test_help_fits_80x24_each_binding_on_one_row_and_scrolls() -> None:
    app = make_app()
    async with app.run_test(size=NARROW) as pilot:
        await open_dialog(pilot, "question_mark")
        assert isinstance(app.screen, HelpScreen)
        frame = box(app)
        assert_fits(app, frame)
        assert "esc closes" in lines(frame)[0]
        rows = lines(app.screen.query_one("#help-body"))
        for _, bindings in help_groups(PoolApp.BINDINGS):
            for binding in bindings:
                # what the key does and its id, on the same row (neither cut nor wrapped)
                assert any(
                    f" {binding.description} " in f" {row} " and row.endswith(f" {binding.id}")
                    for row in rows
                ), binding
        # Taller than the screen: it scrolls to the notes at the end.
        notes = app.screen.query_one("#help-notes")
        assert "Moments:" not in on_screen(app, notes)
        frame.scroll_end(animate=False)
        await pilot.pause()
        shown = on_screen(app, notes)
        assert "Click a block or a session to inspect it" in shown
        assert "options after `;`: once, ignore N, off." in shown
        assert "check-failed, deadlock" in shown


async def test_go_to_and_the_filter_fit_80x24_with_their_errors() -> None:
    app = make_app()
    async with app.run_test(size=NARROW) as pilot:
        await open_dialog(pilot, "g")
        assert isinstance(app.screen, GotoScreen)
        await submit(pilot, "soon")
        assert_fits(app, box(app))
        shown = texts(app, box(app))
        assert "An event index (42) or a time (12.5s):" in shown
        assert "not an event or a time: 'soon'" in shown
        await keys(pilot, "escape")
        await open_dialog(pilot, "slash")
        assert isinstance(app.screen, FilterScreen)
        await submit(pilot, "preemt")
        assert_fits(app, box(app))
        shown = texts(app, box(app))
        assert "Moments and/or sessions (preempt evict chat[3]); empty shows all:" in shown
        assert "did you mean preempt or reject?" in shown


async def test_the_moment_keys_fit_80x24_each_key_beside_its_moment() -> None:
    app = make_app()
    async with app.run_test(size=NARROW) as pilot:
        await open_dialog(pilot, "right_square_bracket")
        assert isinstance(app.screen, MomentScreen)
        assert_fits(app, box(app))
        rows = lines(app.screen.query_one("#moment-keys"))
        pairs = [(key, moment) for key, moment in MOMENT_KEYS]
        for key, moment in (*pairs, (".", "this session"), ("esc", "cancel")):
            # a key at the end of a row and its moment on the next reads as two things
            assert any(f" {key} {moment} " in f" {row} " for row in rows), (key, moment)


async def test_the_palette_and_a_dialog_it_opens_fit_80x24() -> None:
    app = make_app()
    async with app.run_test(size=NARROW) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await pilot.pause(0.1)
        assert isinstance(app.screen, CommandPalette)
        assert_fits(app, app.screen.query_one(Input))
        app.screen.query_one(Input).value = "Breakpoints"
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause(0.1)
        await settle(pilot)
        assert isinstance(app.screen, BreakpointsScreen)
        assert_fits(app, box(app))
        assert "space on/off" in on_screen(app, app.screen.query_one(".hint"))


async def test_the_compile_errors_fit_80x24_with_what_to_do() -> None:
    text = (
        "bad.pool:5:8: error: unknown pool 'kvv'; did you mean 'kv'? (a message long enough "
        "to need two rows at 80 columns)\n"
        "5 |   hold kvv (16) {\n"
        "  |        ^^^"
    )
    app = PoolApp("bad.pool", compile_error=text)
    async with app.run_test(size=NARROW) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, CompileErrorScreen)
        for widget in app.screen.query(Static):
            assert_fits(app, widget)
        shown = texts(app, app.screen)
        assert "to need two rows at 80 columns)" in shown
        assert "press r to reload it, or q to quit." in shown


async def test_on_a_big_terminal_the_dialogs_keep_their_widths() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        for pressed, width in (("b", 100), ("w", 100), ("question_mark", 96), ("g", 60)):
            await open_dialog(pilot, pressed)
            assert box(app).region.width == width, pressed
            await keys(pilot, "escape")
            assert isinstance(app.screen, DebuggerScreen)
        await open_dialog(pilot, "slash")
        assert box(app).region.width == 70


def caret_under(rows: list[str]) -> str:
    """What the caret row of a located error points at in the row above it."""
    (row,) = [i for i, line in enumerate(rows) if re.fullmatch(r" *\| *\^+ *", line)]
    start, end = rows[row].index("^"), rows[row].rindex("^") + 1
    return rows[row - 1][start:end]


LONG = " + ".join(["free(kv)"] * 9)  # 98 columns: wider than an 80-column dialog


@pytest.mark.parametrize("key", ["b", "w"])
@pytest.mark.parametrize(
    "expression",
    [
        f"{LONG} + freee(kv) > 1",  # the culprit far to the right
        f"freee(kv) + {LONG} > 1",  # at the start
        f"{LONG} + freee(kv) + {LONG} > 1",  # in the middle
    ],
)
async def test_a_located_error_points_at_its_culprit_in_an_80x24_dialog(
    key: str, expression: str
) -> None:
    # The source line is not wrapped (its caret would then point at another row): it is
    # shown as a window around the culprit, cut with … where it goes on, the caret line
    # cut the same way.
    app = make_app()
    async with app.run_test(size=NARROW) as pilot:
        await open_dialog(pilot, key)
        await submit(pilot, f"if {expression}" if key == "b" else expression)
        error = app.screen.query_one("#bp-error" if key == "b" else "#watch-error", Static)
        assert_fits(app, error)
        rows = [strip.text for strip in error.render_lines(Region(0, 0, *error.region.size))]
        assert "unknown name 'freee'" in " ".join(rows)
        assert caret_under(rows) == "freee"
        source = next(row for row in rows if row.startswith("1 | "))
        assert "…" in source and len(source.rstrip()) <= error.content_region.width


WIDE = '"' + "中文" * 12 + '"'  # twenty-four wide characters: 50 cells, 26 characters


def cells_under(rows: list[str]) -> str:
    """What the caret row points at in the row above it as the terminal shows them, a wide
    (CJK) character taking two cells (strips hold characters: a caret counts cells)."""
    (row,) = [i for i, line in enumerate(rows) if re.fullmatch(r" *\| *\^+ *", line)]
    start, end = rows[row].index("^"), rows[row].rindex("^") + 1
    covered, at = "", 0
    for ch in rows[row - 1]:
        width = cell_len(ch)
        if width and at < end and at + width > start:
            covered += ch if start <= at and at + width <= end else "?"
        at += width
    return covered


@pytest.mark.parametrize("key", ["b", "w"])
@pytest.mark.parametrize(
    ("size", "expression"),
    [
        (SIZE, f"{WIDE} + freee(kv) > 1"),  # the line whole: the caret after 50 cells
        (NARROW, f"{WIDE} + {LONG} + freee(kv) > 1"),  # a window of it, in cells
        (NARROW, f"{LONG} + {WIDE} + freee(kv) + {WIDE} > 1"),
    ],
)
async def test_a_located_error_points_at_its_culprit_after_wide_characters(
    key: str, size: tuple[int, int], expression: str
) -> None:
    """Wide (CJK) characters take two cells each: the caret stands under the culprit as
    the terminal shows it, whole or windowed (it counted characters, and stood to the left
    of the culprit by as many cells as there were wide characters before it)."""
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await open_dialog(pilot, key)
        await submit(pilot, f"if {expression}" if key == "b" else expression)
        error = app.screen.query_one("#bp-error" if key == "b" else "#watch-error", Static)
        assert_fits(app, error)
        rows = [strip.text for strip in error.render_lines(Region(0, 0, *error.region.size))]
        assert "unknown name 'freee'" in " ".join(rows)
        assert cells_under(rows) == "freee"
        source = next(row for row in rows if row.startswith("1 | "))
        assert cell_len(source.rstrip()) <= error.content_region.width
