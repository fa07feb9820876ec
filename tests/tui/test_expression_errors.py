"""A watch's or a breakpoint condition's runtime error is located in its own text, as the
line that shows it says it: `error: LINE:COL: MESSAGE` after the watch or the breakpoint
(the expression is named by where it is shown, so no `<condition>` file and one `error`),
the watch's row with a caret under the culprit; and their syntax errors say what an
expression expects (an operator, a ')', the end of the watch), never a ';'.

Expectations from docs/language.md §9 ("Division by zero … runtime errors"), §12.1 and
docs/decisions.md (a division by zero is located at its divisor)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from textual.geometry import Region
from textual.widget import Widget
from textual.widgets import Static, TabbedContent

from pooltui.tui.app import PoolApp
from tests.tui.conftest import SIZE, add_breakpoint, keys, settle, submit

SMALL = str(Path(__file__).parent / "specs" / "small.pool")


async def test_a_watch_that_divides_by_zero_is_located_at_its_divisor() -> None:
    app = PoolApp.from_spec(SMALL)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await keys(pilot, "w")
        await submit(pilot, "free(kv)/0")
        await keys(pilot, "escape")
        await keys(pilot, "n")
        (value,) = app.watch_values
        assert value.error == "1:10: division by zero"
        body = str(app.screen.query_one("#watches-body", Static).content)
        lines = body.splitlines()
        row = lines.index("free(kv)/0 = error: 1:10: division by zero")
        assert lines[row + 1] == "         ^"  # under the `0` of `free(kv)/0`
        assert "<condition>" not in body and body.count("error") == 1


async def test_a_condition_that_divides_by_zero_stops_with_its_place() -> None:
    app = PoolApp.from_spec(SMALL)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await add_breakpoint(pilot, "if 1/(free(kv)-free(kv)) > 0")
        await keys(pilot, "c")
        assert app.stop == (
            "breakpoint #1 (if 1/(free(kv)-free(kv)) > 0): error: 1:4: division by zero"
        )


async def test_a_watch_syntax_error_says_what_a_watch_expects() -> None:
    app = PoolApp.from_spec(SMALL)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await keys(pilot, "w")
        await submit(pilot, "free(kv)free(kv)")
        error = str(app.screen.query_one("#watch-error", Static).content)
        assert error.splitlines() == [
            "<watch>:1:9: error: expected an operator or the end of the watch, found 'free'",
            "1 | free(kv)free(kv)",
            "  |         ^^^^",
        ]
        await submit(pilot, "prompt")
        error = str(app.screen.query_one("#watch-error", Static).content)
        assert error.splitlines()[0] == (
            "<watch>:1:1: error: 'prompt' is a session attribute; a watch cannot read "
            "session attributes"
        )
        assert app.watches == []


def drawn(widget: Widget) -> list[str]:
    """The rows a widget draws, as the terminal shows them."""
    region = widget.region
    return [strip.text for strip in widget.render_lines(Region(0, 0, region.width, region.height))]


def caret_under(rows: list[str]) -> str:
    """What the caret row points at in the row above it (a located error's two rows)."""
    (row,) = [i for i, line in enumerate(rows) if re.fullmatch(r" *\| *\^+ *", line)]
    start = rows[row].index("^")
    end = rows[row].rindex("^") + 1
    return rows[row - 1][start:end]


@pytest.mark.parametrize(
    ("condition", "error", "culprit"),
    [
        # fails at once, when the run takes it (free(kv) is 256 at the start)
        ("free(kv) / 0 > 1", "1:12: division by zero", "0"),
        # fails later, at the step that brings free(kv) to 208
        ("1 / (free(kv) - 208) > 0", "1:6: division by zero", "free(kv) - 208"),
        # wider than the Details tab: a window of it around the culprit, not wrapped
        (
            "free(kv) + free(kv) + free(kv) + free(kv) + free(kv) + free(kv) / 0 > 1",
            "1:67: division by zero",
            "0",
        ),
    ],
)
async def test_a_conditions_runtime_error_shows_a_caret_under_its_culprit_in_details(
    condition: str, error: str, culprit: str
) -> None:
    # As a watch's error shows in its row: the expression, a caret under the culprit,
    # the message; here in the Details tab, which the stop brings forward.
    app = PoolApp.from_spec(SMALL)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await add_breakpoint(pilot, f"if {condition}")
        await keys(pilot, "c")
        assert app.stop == f"breakpoint #1 (if {condition}): error: {error}"
        assert app.debugger is not None
        body = app.debugger.query_one("#details-body", Static)
        text = str(body.render())
        assert f"error: {error}" in text
        assert app.debugger.query_one("#side", TabbedContent).active == "details"
        rows = drawn(body)
        assert caret_under(rows) == culprit
        if len(condition) < body.content_region.width - 4:
            assert f"1 | {condition}" in text.splitlines()
        await pilot.resize_terminal(120, 30)  # a narrower tab: fitted to it again
        await pilot.pause()
        assert body.content_region.width < 38 and caret_under(drawn(body)) == culprit
