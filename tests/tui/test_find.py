"""Finding moments fast: `]` / `[` then a moment key (or `.` for the current session), the
palette's "Next evict", and the event log's filter (`/`)."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input, Static

from pooltui.tui.app import PoolApp
from pooltui.tui.debugger import DebuggerScreen
from pooltui.tui.screens import FilterScreen, MomentScreen
from pooltui.tui.widgets.eventlog import EventLog
from tests.tui.conftest import SIZE, add_breakpoint, keys, make_app, settle

EVICTS = (43, 55, 72)  # the fake's evict events
CHAT2 = (19, 20, 21, 27, 35, 36, 37, 72)  # chat[2]'s events


def at(app: PoolApp) -> int:
    assert app.snapshot is not None
    return app.snapshot.event_index


async def test_bracket_then_a_moment_key_goes_to_the_next_and_previous_one() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await add_breakpoint(pilot, "admit")  # the user's breakpoints do not stop a find
        await keys(pilot, "right_square_bracket")
        assert isinstance(app.screen, MomentScreen)
        await keys(pilot, "e")
        assert at(app) == EVICTS[0]
        assert app.stop == f"next evict: event #{EVICTS[0]}"
        assert app.breakpoints.items[0].hits == 0
        await keys(pilot, "right_square_bracket", "e")
        assert at(app) == EVICTS[1]
        await keys(pilot, "left_square_bracket", "e")
        assert at(app) == EVICTS[0]
        await keys(pilot, "left_square_bracket", "e")  # none before: it stays
        assert at(app) == EVICTS[0] and app.stop == f"no evict before #{EVICTS[0]}"


async def test_no_more_of_a_moment_says_so() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await keys(pilot, "right_square_bracket", "p")  # the fake never preempts
        assert app.stop == "no preempt after the start"
        assert at(app) == -1  # where it was


async def test_a_search_that_finds_nothing_stays_where_it_was() -> None:
    """`]` or `[` with no such event on that side: the same event as before (not the end
    or the start the search ran to, on a long trace a long way off), and the status says
    what is not there, from where."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.send("goto", index=50)
        await settle(pilot)
        # The fake never preempts (nor spills, which it has no tier for: said at once).
        await keys(pilot, "right_square_bracket", "p")
        assert at(app) == 50 and app.stop == "no preempt after #50"
        # It ran to the end to know: the status counts every event, not "so far".
        assert "event #50 of 84 ·" in str(app.screen.query_one("#status", Static).content)
        await keys(pilot, "left_square_bracket", "p")
        assert at(app) == 50 and app.stop == "no preempt before #50"
        await keys(pilot, "right_square_bracket", "j")  # nor rejects, the run known now
        assert at(app) == 50 and app.stop == "no reject after #50"
        app.send("goto", index=EVICTS[-1] + 1)
        await settle(pilot)
        await keys(pilot, "right_square_bracket", "e")
        assert at(app) == EVICTS[-1] + 1 and app.stop == f"no evict after #{EVICTS[-1] + 1}"
        app.send("goto", index=EVICTS[0] - 1)
        await settle(pilot)
        await keys(pilot, "left_square_bracket", "e")
        assert at(app) == EVICTS[0] - 1 and app.stop == f"no evict before #{EVICTS[0] - 1}"


async def test_a_moment_the_spec_never_makes_is_said_without_searching() -> None:
    """`]` `s` on a spec with no spill tier (tests/tui/specs/shared.pool): the breakpoints
    screen and `render --break` refuse `spill` there before any run (language.md §12.2);
    the search ran the whole simulation to say `no spill after #5` (on an hour of trace,
    minutes). It says at once why there is none; the cursor stays, nothing more is
    simulated."""
    app = PoolApp.from_spec(str(Path(__file__).parent / "specs" / "shared.pool"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.send("goto", index=5)
        await settle(pilot)
        await keys(pilot, "right_square_bracket", "s")
        assert at(app) == 5
        assert app.stop == (
            "spill never happens here: no pool of this spec spills"
            " (a pool spills with `spill TIER via LINK (WORK) when (PRED);`)"
        )
        assert app.sim is not None and not app.sim.finished
        await keys(pilot, "left_square_bracket", "l")  # reload: no pool reloads either
        assert at(app) == 5 and app.stop.startswith("reload never happens here: ")


async def test_next_event_of_the_current_session() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.send("goto", index=21)
        await settle(pilot)
        await keys(pilot, "right_square_bracket", "full_stop")
        assert at(app) == 27 and app.stop == "next event of chat[2]: event #27"
        await keys(pilot, "left_square_bracket", "full_stop", "left_square_bracket", "full_stop")
        assert at(app) == 20


async def test_the_palette_finds_the_first_evict() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, DebuggerScreen)
        from pooltui.tui.debugger import DebuggerCommands

        names = [name for name, _, _ in DebuggerCommands.COMMANDS]
        assert "Next evict" in names and "Previous preempt" in names
        await pilot.press("ctrl+p")
        await pilot.pause(0.1)
        field = app.screen.query_one(Input)
        field.value = "Next evict"
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause(0.1)
        await settle(pilot)
        assert at(app) == EVICTS[0]


async def test_the_filter_shows_only_matching_events_and_clearing_restores() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.send("goto", index=83)
        await settle(pilot)
        assert app.debugger is not None
        log = app.debugger.query_one(EventLog)
        assert log.row_count == 84
        await keys(pilot, "slash")
        assert isinstance(app.screen, FilterScreen)
        field = app.screen.query_one(Input)
        field.value = "evcit"
        await keys(pilot, "enter")
        assert "did you mean evict" in str(app.screen.query_one("#filter-error", Static).content)
        field.value = "evict release chat[2]"
        await keys(pilot, "enter")
        assert app.screen is app.debugger
        assert log.row_count == 2  # chat[2]'s release (36) and its evict (72)
        assert [log.index_of_row(r) for r in range(log.row_count)] == [36, 72]
        assert "only evict release chat[2]" in str(log.border_title)
        field_rows = [log.render_line(y).text for y in range(3)]
        assert "release" in field_rows[0] and "evict" in field_rows[1]
        # Only sessions: every event of chat[2].
        await keys(pilot, "slash")
        app.screen.query_one(Input).value = "chat[2]"
        await keys(pilot, "enter")
        assert [log.index_of_row(r) for r in range(log.row_count)] == list(CHAT2)
        # Clearing restores every event.
        await keys(pilot, "slash")
        app.screen.query_one(Input).value = ""
        await keys(pilot, "enter")
        assert log.row_count == 84 and log.border_title == "Events"


async def test_a_filtered_log_grows_as_events_come() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.debugger is not None
        log = app.debugger.query_one(EventLog)
        await keys(pilot, "slash")
        app.screen.query_one(Input).value = "evict"
        await keys(pilot, "enter")
        assert log.row_count == 0
        assert "no event matches" in log.render_line(0).text or log.row_count == 0
        await keys(pilot, "c")
        assert [log.index_of_row(r) for r in range(log.row_count)] == list(EVICTS)
        assert str(app.debugger.query_one("#status", Static).render())
