"""Jumps, as the README's keys table promises them: what the go-to box (`g`) takes and
refuses, what it says past the end, and where reverse continue (`C`) stops when no
breakpoint stops it ("back to the previous breakpoint hit, or event 0").

Event numbers are the fake's (tests/tui/fakesim.py): 84 events, #0 to #83; evictions at
43, 55 and 72.
"""

from __future__ import annotations

import pytest
from textual.widgets import Static

from pooltui.tui.app import PoolApp
from pooltui.tui.goto import GotoError, parse_goto
from pooltui.tui.screens import GotoScreen
from tests.tui.conftest import SIZE, add_breakpoint, keys, make_app, settle, submit

EVENTS = 84


def at(app: PoolApp) -> int:
    assert app.snapshot is not None
    return app.snapshot.event_index


async def goto(app: PoolApp, index: int) -> None:
    app.send("goto", index=index)
    await app.settle()


async def test_reverse_continue_with_no_hit_stops_at_event_0() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await goto(app, 50)
        await keys(pilot, "C")
        assert at(app) == 0 and app.stop == "at the first event (#0)"
        await keys(pilot, "C")  # nothing before it: it stays, and says so again
        assert at(app) == 0 and app.stop == "at the first event (#0)"
        await keys(pilot, "p")  # `p` goes on to the start, where `C` does not apply
        assert at(app) == -1
        assert app.screen.check_action("reverse_continue", ()) is False
        # Breakpoints that never hit on the way: event 0 too.
        await add_breakpoint(pilot, "evict")
        await goto(app, 40)
        await keys(pilot, "C")
        assert at(app) == 0 and app.stop_kind != "breakpoint"


async def test_a_negative_event_is_refused_in_the_box() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await goto(app, 10)
        for typed in ("-5", "#-5"):
            await keys(pilot, "g")
            await submit(pilot, typed)
            assert isinstance(app.screen, GotoScreen)  # not taken as the start
            error = str(app.screen.query_one("#goto-error", Static).content)
            assert error == "there is no event #-5: events are numbered from 0"
            await keys(pilot, "escape")
            assert at(app) == 10


async def test_underscores_group_an_event_numbers_digits() -> None:
    # As in a spec (`16_384`): `1_0` is event 10, not a time.
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await keys(pilot, "g")
        await submit(pilot, "1_0")
        assert at(app) == 10 and app.stop == "went to event #10"


@pytest.mark.parametrize(("typed", "index"), [("5000", 5000), ("1_000", 1000), ("84", 84)])
async def test_an_event_past_the_end_says_there_is_no_such_event(typed: str, index: int) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await keys(pilot, "g")
        await submit(pilot, typed)
        assert at(app) == EVENTS - 1  # the last event, where it ended
        assert app.stop == (
            f"there is no event #{index}; the simulation ended after {EVENTS} events"
            f" (#0 to #{EVENTS - 1})"
        )
        await keys(pilot, "g")  # once the whole run is known, the same words
        await submit(pilot, typed)
        assert at(app) == EVENTS - 1 and app.stop is not None
        assert app.stop.startswith(f"there is no event #{index};")


@pytest.mark.parametrize(
    ("typed", "want"),
    [
        ("1_000", ("event", 1000)),
        ("#1_000", ("event", 1000)),
        ("-0", ("event", 0)),
        ("5e2", ("time", 500.0)),
        ("53.", ("time", 53.0)),
        ("1_000.5s", ("time", 1000.5)),
        ("99999999999999999999", ("event", 99999999999999999999)),  # past a float's integers
    ],
)
def test_what_the_box_takes(typed: str, want: tuple[str, float]) -> None:
    got = parse_goto(typed)
    assert got == want and type(got[1]) is type(want[1])


@pytest.mark.parametrize(
    ("typed", "said"),
    [
        ("-5", "there is no event #-5: events are numbered from 0"),
        ("#-12", "there is no event #-12: events are numbered from 0"),
        ("-1.5", "a time must be >= 0"),
        # A time is a finite number: inf, a literal past the largest float, NaN are none.
        ("inf", "a time must be a finite number: inf is infinite"),
        ("t=Infinity", "a time must be a finite number: infinity is infinite"),
        (
            "1e999",
            "a time must be a finite number: 1e999 is past the largest float (about 1.8e308)",
        ),
        (
            "@1e999s",
            "a time must be a finite number: 1e999 is past the largest float (about 1.8e308)",
        ),
        ("nan", "a time must be a finite number: nan is not a number"),
        ("nans", "a time must be a finite number: nan is not a number"),
        ("-inf", "a time must be >= 0"),
    ],
)
def test_what_the_box_refuses_and_says(typed: str, said: str) -> None:
    with pytest.raises(GotoError) as refused:
        parse_goto(typed)
    assert str(refused.value) == said


@pytest.mark.parametrize(
    ("typed", "said"),
    [
        ("inf", "a time must be a finite number: inf is infinite"),
        (
            "1e999",
            "a time must be a finite number: 1e999 is past the largest float (about 1.8e308)",
        ),
        ("nan", "a time must be a finite number: nan is not a number"),
    ],
)
async def test_a_time_that_is_no_finite_number_is_refused_in_the_box(typed: str, said: str) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await goto(app, 10)
        await keys(pilot, "g")
        await submit(pilot, typed)
        assert isinstance(app.screen, GotoScreen)  # the box stays, saying why
        assert str(app.screen.query_one("#goto-error", Static).content) == said
        await keys(pilot, "escape")
        assert at(app) == 10


def test_other_scripts_digits_are_not_taken() -> None:
    for typed in ("١٢", "１２"):  # Arabic-Indic, fullwidth: int() and float() take them
        with pytest.raises(ValueError):
            parse_goto(typed)


async def test_a_huge_event_number_is_said_as_typed() -> None:
    # Far past any float's integers: `there is no event #N` says N as typed, not a
    # float's nearest (99999999999999999999 read as 1e20).
    typed = "99999999999999999999"
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await keys(pilot, "g")
        await submit(pilot, typed)
        assert at(app) == EVENTS - 1
        assert app.stop is not None and app.stop.startswith(f"there is no event #{typed};")
