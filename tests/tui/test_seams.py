"""Seams found by an exploratory pass (a new user, a teacher in front of a class): keys at
the edges of a run, of a dialog opening, of a reload; each pinned by what the user should see."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.command import CommandList, CommandPalette
from textual.widgets import Input, Static, TabbedContent, Tabs

from pooltui.lang import compile_source
from pooltui.sim import Simulation
from pooltui.sim.testing import break_pool
from pooltui.tui.app import PoolApp
from pooltui.tui.breakpoint_text import Names, parse_breakpoint
from pooltui.tui.breakpoints import BreakpointError
from pooltui.tui.screens import FilterScreen
from pooltui.tui.widgets.keybar import KeyBar
from pooltui.tui.widgets.timeline import GUTTER, Timeline
from tests.tui.conftest import SIZE, add_breakpoint, keys, make_app, settle, submit
from tests.tui.fakesim import FakeSim
from tests.tui.test_defects import typed_at_once

SMALL = str(Path(__file__).parent / "specs" / "small.pool")
VLLM = str(Path(__file__).parents[2] / "specs" / "vllm_v1.pool")


async def test_keys_typed_as_the_palette_opens_go_into_it() -> None:
    """`ctrl+p` then `next evict` typed at once: the palette takes the keys (none of them
    steps the debugger: `n` did, `e`, `x`, `t`, the space too), and its "Next evict" goes
    to the fake's first evict, #43."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)

        def listed() -> bool:
            if not isinstance(app.screen, CommandPalette):
                return False
            options = app.screen.query_one(CommandList)
            first = options.get_option_at_index(0) if options.option_count else None
            return first is not None and str(first.prompt).startswith("Next evict")

        await typed_at_once(app, pilot, "ctrl+p", *"next", "space", *"evict", done=listed)
        assert isinstance(app.screen, CommandPalette)
        assert app.screen.query_one(Input).value == "next evict"
        assert app.snapshot is None or app.snapshot.event_index == -1  # no step
        await typed_at_once(
            app,
            pilot,
            "enter",
            done=lambda: app.snapshot is not None and app.snapshot.event_index == 43,
        )
        assert not isinstance(app.screen, CommandPalette)
        assert app.snapshot is not None and app.snapshot.event_index == 43


async def test_the_filter_refuses_a_session_and_a_moment_that_never_occur() -> None:
    """tests/tui/specs/small.pool has chat[0] to chat[7] and no pool that spills. As a
    breakpoint (`admit session=chat[99]`, `spill`) and `] s` refuse them, the filter box
    says why and stays open, where it used to show an empty log ("no event matches")
    after a whole run, as if chat[99] had simply done nothing yet."""
    app = PoolApp.from_spec(SMALL)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        for typed, said in (
            ("chat[99]", "chat[0] to chat[7]"),
            ("preempt chat[8]", "chat[0] to chat[7]"),
            ("spill", "spill never happens here: no pool of this spec spills"),
        ):
            await keys(pilot, "slash")
            await submit(pilot, typed)
            assert isinstance(app.screen, FilterScreen), typed
            error = str(app.screen.query_one("#filter-error", Static).content)
            assert said in error, (typed, error)
            await keys(pilot, "escape")
            assert app.debugger is not None and app.debugger.filter_text == ""
        # What can occur is taken as before.
        await keys(pilot, "slash")
        await submit(pilot, "preempt chat[7] chat")
        assert app.screen is app.debugger
        assert app.debugger.filter_text == "preempt chat[7] chat"


async def test_the_timeline_draws_the_same_history_wherever_the_cursor_is() -> None:
    """The strip is the pool's utilisation over the simulated time so far (README, the
    timeline); the current moment is only highlighted. specs/vllm_v1.pool run to #40 (68
    columns over 0.2 s: fewer samples than columns), then back to event 0 (a teacher
    replaying for the class): every column keeps its bar. The columns after the cursor
    that hold no sample of their own were drawn blank, a ragged strip of gaps over time
    where the pool was in use, where the same columns were whole a moment before."""
    app = PoolApp.from_spec(VLLM)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.send("goto", index=40)
        await settle(pilot)
        assert app.debugger is not None
        timeline = app.debugger.query_one(Timeline)
        at_end = timeline.render_line(0).text[GUTTER:]
        # From the first admission's column on, a bar in every column.
        assert " " not in at_end.strip(), at_end
        app.send("goto", index=0)
        await settle(pilot)
        assert app.snapshot is not None and app.snapshot.event_index == 0
        assert timeline.render_line(0).text[GUTTER:] == at_end


async def test_a_reload_at_80x24_keeps_the_panel_shown_and_the_filter(tmp_path: Path) -> None:
    """ctrl+r reloads the spec in place (README): at 80x24, on the Queue tab, the Queue
    tab stays in front; with the log filtered (`/ admit`, which shows the Events tab), the
    filter stays and so does the tab. Both went back to the Pools tab."""
    path = tmp_path / "spec.pool"
    path.write_text(Path(SMALL).read_text())
    app = PoolApp.from_spec(str(path))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.send("goto", index=20)
        await settle(pilot)
        await keys(pilot, "v", "v")
        assert app.debugger is not None and app.debugger.view == "queue"
        await reload(pilot, app)
        assert app.snapshot is not None and app.snapshot.event_index == 20
        screen = app.debugger
        assert screen.view == "queue"
        assert screen.query_one("#queue").display and not screen.query_one("#pools").display
        assert screen.query_one("#views", Tabs).active == "view-queue"
        await keys(pilot, "slash")
        await submit(pilot, "admit")
        assert screen.view == "events"
        await reload(pilot, app)
        screen = app.debugger
        assert screen.filter_text == "admit"
        assert screen.view == "events"
        assert screen.query_one("#events").display and not screen.query_one("#pools").display
        assert screen.query_one("#views", Tabs).active == "view-events"
        # A spec edited to an error shows its errors in Details; fixed and reloaded, the
        # user is back on the panel they had chosen, not on the tab the errors took.
        good = path.read_text()
        path.write_text(good.replace("cap 256;", "cap 25x;"))
        await keys(pilot, "ctrl+r")
        assert screen.view == "side" and "does not compile" in str(app.stop)
        path.write_text(good)
        await reload(pilot, app)
        screen = app.debugger
        assert screen.view == "events" and screen.filter_text == "admit"
        assert screen.query_one("#views", Tabs).active == "view-events"


async def reload(pilot: Any, app: PoolApp) -> None:
    old = app.sim
    await keys(pilot, "ctrl+r")
    for _ in range(300):  # a bound, not a duration
        if app.sim is not old and app.debugger is not None and app.debugger.is_mounted:
            break
        await pilot.pause(0.01)
    await settle(pilot)
    assert app.stop is not None and app.stop.startswith("reloaded the spec"), app.stop


def highlighted(timeline: Timeline, y: int) -> str:
    """The glyph the timeline highlights (the current moment's column) on row y."""
    cells = [
        char
        for segment in timeline.render_line(y)
        if segment.style is not None and segment.style.reverse
        for char in segment.text
    ]
    assert len(cells) == 1, cells
    return cells[0]


async def test_the_timelines_current_moment_is_on_its_own_mark() -> None:
    """A halt is marked ■ on the timeline; at the halt the current moment's column is that
    mark's column (highlighted ■), and at a preemption found by `] p` its ▲. On a short
    run a bucket of time takes several columns, and the cursor stood in the column before
    its bucket: beside the ■, on a plain ●."""
    app = PoolApp.from_spec(SMALL)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await keys(pilot, "n", "n", "n")
        assert isinstance(app.sim, Simulation)
        break_pool(app.sim, "kv")  # the worker is idle: nothing else touches the simulation
        await keys(pilot, "c")
        assert app.snapshot is not None and app.snapshot.halted
        assert app.debugger is not None
        timeline = app.debugger.query_one(Timeline)
        assert "■" in timeline.render_line(1).text
        assert highlighted(timeline, 1) == "■"
    app = PoolApp.from_spec(VLLM)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await keys(pilot, "right_square_bracket", "p")
        assert app.snapshot is not None and app.snapshot.event_index == 53
        assert app.debugger is not None
        assert highlighted(app.debugger.query_one(Timeline), 1) == "▲"


def why(app: PoolApp) -> str:
    assert app.debugger is not None
    return str(app.debugger.query_one("#why", Static).render())


async def test_at_80x24_the_event_logs_keys_act_only_where_it_is_shown() -> None:
    """At 80x24 the Pools tab is in front and the event log, behind its tab, is not on
    screen: `home` then `enter` there must not move the log's hidden selection, put another
    event's why under the block map, and go to event 0 unseen (they did). On the Events
    tab they select and go, as the README says."""
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.send("goto", index=40)
        await settle(pilot)
        assert app.debugger is not None and app.debugger.view == "pools"
        at_40 = why(app)
        assert at_40.startswith("#40 ")
        await keys(pilot, "home")
        assert why(app) == at_40  # the why under the map is still the map's event's
        await keys(pilot, "enter")
        assert app.snapshot is not None and app.snapshot.event_index == 40
        await keys(pilot, "v")
        assert app.debugger.view == "events"
        await keys(pilot, "home", "enter")
        assert app.snapshot is not None and app.snapshot.event_index == 0


async def test_an_inspected_session_that_is_not_live_is_named_and_said_which() -> None:
    """Inspect chat[5] of specs/vllm_v1.pool while it runs, then go where it is not live:
    Details names it (the debugger shows session ids nowhere: it read `session #5`) and
    says whether it has not arrived yet or has ended, which the screen knows from its
    arrival time (it read `not arrived yet, or ended`)."""
    app = PoolApp.from_spec(VLLM)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.send("goto", index=500)  # chat[5] is admitted at #458
        await settle(pilot)
        assert app.snapshot is not None
        # As a click on its row in the legend does.
        (hold,) = [h for h in app.snapshot.pool("kv").holds if h.session == "chat[5]"]
        app.action_inspect_session(hold.session_id)
        await settle(pilot)
        assert details(app).startswith("chat[5]  class chat")
        app.send("goto", index=0)
        await settle(pilot)
        first = details(app).splitlines()[0]
        assert first.startswith("chat[5] has not arrived yet"), first
        await keys(pilot, "c")
        assert app.snapshot is not None and app.snapshot.finished
        first = details(app).splitlines()[0]
        assert first.startswith("chat[5] has ended"), first
        assert "session #" not in details(app)


def details(app: PoolApp) -> str:
    return str(app.screen.query_one("#details-body", Static).content)


async def test_an_invariant_halt_says_which_invariant_once_at_80x24() -> None:
    """A halt on the simulator's invariants: the status bar says which (README, a halt),
    in as few words as it can at 80x24. It read `invariant violated: invariant broken: kv:
    allocated is 4…`: the same thing twice, which left the figures out."""
    app = PoolApp.from_spec(SMALL)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await keys(pilot, "n", "n", "n")
        assert isinstance(app.sim, Simulation)
        break_pool(app.sim, "kv")
        await keys(pilot, "c")
        snap = app.snapshot
        assert snap is not None and snap.violation is not None
        said = str(app.screen.query_one("#status", Static).content)
        assert "invariant broken" not in said
        # Which pool and which invariant, and its figures (the rest of them in Details).
        assert "invariant violated: kv: allocated is 4 blocks but" in said, said
        assert snap.violation.message.startswith("kv: allocated is 4 blocks but")


async def test_a_watch_added_at_80x24_is_in_front_when_its_box_closes() -> None:
    """At 160x48 a watch added brings the Watches tab forward (`free(kv) = 512` beside the
    map); at 80x24 the tab was switched behind the Pools tab, and the user closing the box
    saw no watch anywhere. Now the side tab, on Watches, is in front, as the filter brings
    the Events tab."""
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await keys(pilot, "n", "w")
        await submit(pilot, "free(kv)")
        await keys(pilot, "escape")
        screen = app.debugger
        assert screen is not None and app.screen is screen
        assert screen.view == "side"
        assert screen.query_one("#side").display and not screen.query_one("#pools").display
        assert screen.query_one(TabbedContent).active == "watches"


CHECK_FAILS = str(Path(__file__).parents[2] / "specs" / "halts" / "check_fails.pool")


async def test_check_failed_on_a_spec_without_a_check_is_said_at_once() -> None:
    """specs/vllm_v1.pool has no `check`, so it never makes a `check-failed` event: `] k`
    says so at once and stays, as `] s` does where nothing spills (it searched the whole
    run: minutes on specs/azure_conv.pool's hour of trace, to say `no check-failed after`);
    the breakpoint and the filter refuse it. specs/halts/check_fails.pool takes them."""
    app = PoolApp.from_spec(VLLM)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await keys(pilot, "n")
        await keys(pilot, "right_square_bracket", "k")
        assert app.stop is not None and app.stop.startswith(
            "check-failed never happens here: this spec has no check"
        ), app.stop
        assert app.snapshot is not None and app.snapshot.event_index == 0
        assert app.controller is not None and not app.running
        await keys(pilot, "b")
        await submit(pilot, "check-failed")
        assert "check-failed can never fire" in str(
            app.screen.query_one("#bp-error", Static).content
        )
        assert len(app.breakpoints) == 0
    app = PoolApp.from_spec(CHECK_FAILS)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await keys(pilot, "right_square_bracket", "k")
        assert app.snapshot is not None and app.snapshot.last_event is not None
        assert app.snapshot.last_event.moment == "check-failed"


def status_line(app: PoolApp) -> str:
    return str(app.screen.query_one("#status", Static).content)


async def test_a_move_past_the_end_or_before_the_start_says_why_each_time() -> None:
    """At the last event of a finished run, the keys that go forward (`n`, `→`, `i`, `c`,
    `r`) cannot move; nor can `p`, `←`, `C` at the start. They did nothing and left the
    status as it was, so a key pressed after another stop (`] a`: `no admit after …`) got
    no answer. As gdb says "The program is not being run", each press says why, and how
    to go the other way; the footer still leaves out the keys that do not apply."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await keys(pilot, "c")
        assert app.snapshot is not None and app.snapshot.finished
        last = app.snapshot.event_index
        ended = f"the simulation ended at event #{last}: p steps back"
        for key in ("n", "i", "c", "r"):  # (`→` is `n`'s binding, `←` `p`'s)
            await keys(pilot, "right_square_bracket", "a")  # another stop, where it is
            assert ended not in status_line(app), key
            await keys(pilot, key)
            assert app.snapshot.event_index == last and not app.running
            assert ended in status_line(app), (key, status_line(app))
        assert "Step" not in app.screen.query_one(KeyBar).render_line(0).text
        app.send("goto", index=-1)
        await settle(pilot)
        start = "nothing comes before event #0: n steps forward"
        for key in ("p", "C"):
            await keys(pilot, "left_square_bracket", "a")
            assert start not in status_line(app), key
            await keys(pilot, key)
            assert app.snapshot.event_index == -1
            assert start in status_line(app), (key, status_line(app))
    # At a halt the forward keys say so too, and the halt's reason stays said.
    sim = FakeSim()
    app = make_app(sim=sim)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await keys(pilot, "n", "n")
        sim.break_pool("kv")
        await keys(pilot, "c")
        assert app.snapshot is not None and app.snapshot.halted
        await keys(pilot, "right_square_bracket", "a", "n")
        said = status_line(app)
        assert "the simulation halted at event #2: p steps back" in said, said
        assert "invariant violated" in said
        assert app.screen.query_one("#status").has_class("halted")


async def test_v_in_teaching_mode_at_80x24_shows_the_panel_it_brings_forward() -> None:
    """At 80x24 teaching mode gives the notes the whole screen (README, `t`), and `v` is
    the next panel. Pressed there, it changed the panel behind the notes: nothing moved
    on screen, and `t` later showed a panel the teacher had not chosen. A teacher pressing
    `v` wants to see that panel: it leaves the notes (`t` brings them back) for it."""
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await keys(pilot, "n", "t")
        screen = app.debugger
        assert screen is not None and screen.query_one("#teach-notes").display
        assert screen.view == "pools"
        await keys(pilot, "v")
        assert screen.view == "events"
        assert not screen.query_one("#teach-notes").display
        assert screen.query_one("#events").display and not screen.query_one("#pools").display
        assert screen.query_one("#views", Tabs).display
        assert screen.query_one("#views", Tabs).active == "view-events"
        await keys(pilot, "t")  # the notes again, and `t` back to the panel left
        assert screen.query_one("#teach-notes").display
        await keys(pilot, "t")
        assert screen.query_one("#events").display and screen.view == "events"


ONE_SESSION = """\
stage gpu step { budget 64; seats 4; time 0.01; }
pool kv { cap 256; block 16; evict lru; admit via gpu; }
session s {
  arrive at (0);
  hold kv (32) { run gpu prefill (32); }
}
"""


async def test_a_single_sessions_name_has_no_index_in_the_filter_and_breakpoints(
    tmp_path: Path,
) -> None:
    """A plain `session s` is one session named `s` (docs/decisions.md, session names):
    events, whys and the status say `s`, never `s[0]`. The filter took `s[0]` and never
    matched (an empty log, "not yet"), and so did `admit session=s[0]`, never firing. Both
    refuse it as a name that never occurs, pointing at `s`; `s` itself is taken."""
    path = tmp_path / "one.pool"
    path.write_text(ONE_SESSION)
    app = PoolApp.from_spec(str(path))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await keys(pilot, "slash")
        await submit(pilot, "admit s[0]")
        assert isinstance(app.screen, FilterScreen)
        error = str(app.screen.query_one("#filter-error", Static).content)
        assert "there is no session s[0]" in error and "did you mean s?" in error, error
        await keys(pilot, "escape")
        await keys(pilot, "slash")
        await submit(pilot, "admit s")
        assert app.debugger is not None and app.debugger.filter_text == "admit s"
        for typed in ("admit session=s[0]", "admit s[0]"):
            await keys(pilot, "b")
            await submit(pilot, typed)
            error = str(app.screen.query_one("#bp-error", Static).content)
            assert "can never fire" in error and "did you mean s?" in error, (typed, error)
            await keys(pilot, "escape")
        assert len(app.breakpoints) == 0
        await add_breakpoint(pilot, "admit session=s")
        await keys(pilot, "c")
        assert app.stop_kind == "breakpoint"
        assert app.snapshot is not None and app.snapshot.last_event is not None
        assert app.snapshot.last_event.session == "s"


def test_a_family_of_one_is_named_with_its_index() -> None:
    """The other way round: `session f[1]` is one session named `f[0]`, so
    `admit session=f` names the class (refused, as for a class of many: `class=f` or
    `f[0]`), where it was taken and never fired; `f[0]` and `class=f` are taken."""
    program = compile_source(ONE_SESSION.replace("session s {", "session f[1] {"), "f.pool")
    names = Names.of(program)
    with pytest.raises(BreakpointError) as caught:
        parse_breakpoint("admit session=f", names)
    assert "names a class, not one session" in caught.value.text
    assert "session=f[0]" in caught.value.text
    for text in ("admit session=f[0]", "admit f[0]", "admit class=f", "admit f"):
        parse_breakpoint(text, names)


async def test_the_palettes_moves_say_why_they_cannot_move() -> None:
    """The palette's "Continue" at the end of a run did nothing, as `c` did (its action
    does not apply there): it says why, as the key does now."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await keys(pilot, "c", "right_square_bracket", "a")
        assert app.snapshot is not None and app.snapshot.finished

        def listed() -> bool:
            if not isinstance(app.screen, CommandPalette):
                return False
            options = app.screen.query_one(CommandList)
            first = options.get_option_at_index(0) if options.option_count else None
            return first is not None and str(first.prompt).startswith("Continue")

        await typed_at_once(app, pilot, "ctrl+p", *"continue", done=listed)
        await typed_at_once(app, pilot, "enter")
        assert "the simulation ended at event #" in status_line(app), status_line(app)
