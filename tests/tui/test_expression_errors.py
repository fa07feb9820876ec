"""A watch's or a breakpoint condition's runtime error is located in its own text, as the
line that shows it says it: `error: LINE:COL: MESSAGE` after the watch or the breakpoint
(the expression is named by where it is shown, so no `<condition>` file and one `error`),
the watch's row with a caret under the culprit; and their syntax errors say what an
expression expects (an operator, a ')', the end of the watch), never a ';'.

Expectations from docs/language.md §9 ("Division by zero … runtime errors"), §12.1 and
docs/decisions.md (a division by zero is located at its divisor)."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

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
