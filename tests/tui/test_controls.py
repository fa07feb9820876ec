"""Pilot tests: every control of the debugger, against the fake simulator.

Event numbers refer to the fake's script (tests/tui/fakesim.py): chat[i] arrives at
0.5 * (i + 1) s; arrivals are events 0, 8, 19, 30, 41, 53 and 70 (chat[0] again); evictions
43, 55, 72; the first iteration ends at event 4.
"""

from __future__ import annotations

from rich.color import Color
from textual.binding import Binding
from textual.widgets import Input, Static, TabbedContent

from pooltui.tui.app import PoolApp
from pooltui.tui.colors import dimmed_hex
from pooltui.tui.debugger import DebuggerScreen
from pooltui.tui.screens import (
    BreakpointsScreen,
    CompileErrorScreen,
    GotoScreen,
    HelpScreen,
    WatchesScreen,
)
from pooltui.tui.widgets.blockmap import GUTTER, BlockMapView
from pooltui.tui.widgets.eventlog import EventLog
from tests.tui.conftest import SIZE, add_breakpoint, keys, make_app, settle, submit
from tests.tui.fakesim import FakeSim


def status(app: PoolApp) -> str:
    return str(app.screen.query_one("#status", Static).content)


def details(app: PoolApp) -> str:
    return str(app.screen.query_one("#details-body", Static).content)


async def test_opens_paused_before_the_first_event() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, DebuggerScreen)
        assert app.snapshot is not None and app.snapshot.event_index == -1
        assert "at the start" in status(app) and "paused" in status(app)
        notes = str(app.screen.query_one("#notes-body", Static).content)
        assert notes.startswith("Six chats share a small KV cache")


async def test_step_forward_with_n_and_right() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await keys(pilot, "n")
        assert app.snapshot is not None and app.snapshot.event_index == 0
        assert app.snapshot.last_event is not None and app.snapshot.last_event.moment == "arrive"
        await keys(pilot, "right", "right")
        assert app.snapshot.event_index == 2
        assert app.snapshot.last_event.moment == "admit"
        log = app.screen.query_one(EventLog)
        assert log.cursor == 2 and len(log.events) == 3
        assert "event #2" in status(app)


async def test_step_one_iteration() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await keys(pilot, "i")
        assert app.snapshot is not None and app.snapshot.last_event is not None
        assert app.snapshot.last_event.moment == "iteration-end"
        assert app.snapshot.event_index == 4
        await keys(pilot, "i")
        assert app.snapshot.event_index == 7


async def test_step_back_with_p_and_left() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await keys(pilot, "n", "n", "n", "p")
        assert app.snapshot is not None and app.snapshot.event_index == 1
        await keys(pilot, "left")
        assert app.snapshot.event_index == 0
        # The log keeps the events ahead of the cursor (dimmed), so forward replays them.
        assert len(app.screen.query_one(EventLog).events) == 3
        await keys(pilot, "left")
        assert app.snapshot.event_index == -1
        # At the start, back does not apply (the footer hides it).
        assert app.screen.check_action("back", ()) is False


async def test_continue_to_a_moment_breakpoint() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await add_breakpoint(pilot, "evict pool=kv")
        assert [b.describe() for b in app.breakpoints] == ["evict pool=kv"]
        await keys(pilot, "c")
        assert app.snapshot is not None and app.snapshot.last_event is not None
        assert app.snapshot.last_event.moment == "evict"
        assert app.snapshot.event_index == 43
        assert "breakpoint #1" in status(app)
        assert app.stop_kind == "breakpoint"
        # The evicted blocks are highlighted in the map.
        card = app.screen.query_one(BlockMapView)
        assert card.highlight == frozenset(app.snapshot.last_event.blocks)
        await keys(pilot, "c")
        assert app.snapshot.event_index == 55
        assert app.breakpoints.items[0].hits == 2


async def test_moment_breakpoint_narrowed_to_a_session() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await add_breakpoint(pilot, "arrive chat[3]")
        await keys(pilot, "c")
        assert app.snapshot is not None and app.snapshot.event_index == 30


async def test_continue_to_a_condition_breakpoint() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await add_breakpoint(pilot, "if queued(kv) > 0")
        await keys(pilot, "c")
        # It hits where the condition becomes true: the first enqueue.
        assert app.snapshot is not None and app.snapshot.event_index == 1
        await keys(pilot, "c")
        assert app.snapshot.event_index == 9


async def test_continue_to_a_time_breakpoint() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await add_breakpoint(pilot, "at 2")
        await keys(pilot, "c")
        assert app.snapshot is not None
        assert app.snapshot.time == 2.0 and app.snapshot.event_index == 29


async def test_breakpoint_ignore_count_and_one_shot() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await add_breakpoint(pilot, "arrive; once, ignore 2")
        await keys(pilot, "c")
        assert app.snapshot is not None and app.snapshot.event_index == 19  # third arrival
        assert app.breakpoints.items[0].enabled is False  # one-shot
        await keys(pilot, "c")
        assert app.stop_kind == "end"


async def test_disabled_breakpoint_does_not_stop() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("b")
        await settle(pilot)
        await submit(pilot, "evict")
        screen = app.screen
        assert isinstance(screen, BreakpointsScreen)
        screen.query_one("#bp-table").focus()
        await keys(pilot, "space")
        assert app.breakpoints.items[0].enabled is False
        await keys(pilot, "escape", "c")
        assert app.stop_kind == "end"


async def test_breakpoint_errors_are_shown_located() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await keys(pilot, "b")
        await submit(pilot, "admitt")
        error = str(app.screen.query_one("#bp-error", Static).content)
        assert "unknown moment 'admitt'" in error and "did you mean admit" in error
        await submit(pilot, "if fre(kv) < 3")
        error = str(app.screen.query_one("#bp-error", Static).content)
        assert error.splitlines()[0] == "<condition>:1:1: error: unknown name 'fre'"
        assert "^^^" in error
        assert len(app.breakpoints) == 0


async def test_reverse_continue() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await add_breakpoint(pilot, "arrive")
        app.send("goto", index=50)
        await settle(pilot)
        assert app.snapshot is not None and app.snapshot.event_index == 50
        await keys(pilot, "C")
        assert app.snapshot.event_index == 41
        await keys(pilot, "C")
        assert app.snapshot.event_index == 30
        # Without breakpoints it goes back to event 0 (README: "or event 0").
        app.breakpoints.items.clear()
        await keys(pilot, "C")
        assert app.snapshot.event_index == 0


async def test_goto_an_event_and_a_time() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await keys(pilot, "g")
        assert isinstance(app.screen, GotoScreen)
        await submit(pilot, "40")
        assert app.snapshot is not None and app.snapshot.event_index == 40
        await keys(pilot, "g")
        await submit(pilot, "1.25s")
        # The last event at or before 1.25 s.
        assert app.snapshot.event_index == 17 and app.snapshot.time == 1.25
        await keys(pilot, "g")
        await submit(pilot, "t=3.1")
        assert app.snapshot.time == 3.0 and app.snapshot.event_index == 57
        await keys(pilot, "g")
        await submit(pilot, "soon")
        assert "not an event or a time" in str(app.screen.query_one("#goto-error", Static).content)


async def test_clicking_an_event_goes_there() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.send("goto", index=10)
        await settle(pilot)
        log = app.screen.query_one(EventLog)
        log.scroll_to(y=0, animate=False)
        await pilot.pause()
        await pilot.click(EventLog, offset=(5, 1 + 3))  # border, then row 3
        await settle(pilot)
        assert app.snapshot is not None and app.snapshot.event_index == 3


async def test_watch_changes_are_highlighted() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await keys(pilot, "w")
        await submit(pilot, "free(kv)")
        await keys(pilot, "escape")
        assert app.screen.query_one(TabbedContent).active == "watches"
        assert [w.value for w in app.watch_values] == [128]
        await keys(pilot, "n", "n")
        assert app.watch_values[0].value == 128 and not app.watch_values[0].changed
        await keys(pilot, "n")  # the admission takes 2 blocks
        assert app.watch_values[0].value == 96 and app.watch_values[0].changed
        assert "changed" in str(app.screen.query_one("#watches-body", Static).content)
        await keys(pilot, "n")
        assert not app.watch_values[0].changed


async def test_watch_errors_are_located() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await keys(pilot, "w")
        await submit(pilot, "free(kv) +")
        error = str(app.screen.query_one("#watch-error", Static).content)
        assert error.startswith("<condition>:1:") and "error" in error
        assert app.watches == []


async def test_invariant_violation_halts_with_the_blocks() -> None:
    sim = FakeSim()
    app = make_app(sim=sim)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await keys(pilot, "n", "n")
        sim.break_pool("kv")
        await keys(pilot, "c")
        snap = app.snapshot
        assert snap is not None and snap.violation is not None
        assert snap.event_index == 2  # the event right after the pool broke
        assert app.stop_kind == "violation"
        assert "invariant violated" in status(app)
        assert app.screen.query_one("#status").has_class("halted")
        blockmap = app.screen.query_one(BlockMapView)
        assert blockmap.violation_blocks == frozenset(snap.violation.blocks)
        assert "allocated + cached <= cap" in details(app)
        assert app.screen.query_one(TabbedContent).active == "details"
        # Nothing more happens forward; continue does not apply.
        assert app.screen.check_action("continue", ()) is False
        await keys(pilot, "c")
        assert app.snapshot.event_index == 2


async def test_runtime_error_stops_with_its_message() -> None:
    app = make_app(error_at=5)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await keys(pilot, "c")
        assert app.snapshot is not None and app.snapshot.event_index == 5
        assert app.stop == "runtime error: division by zero"
        text = details(app)
        assert "fake.pool:17:12: error: division by zero" in text
        assert "17 |   prompt = 32;" in text


async def test_deadlock_stops() -> None:
    app = make_app(deadlock=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await keys(pilot, "c")
        assert app.snapshot is not None and app.snapshot.last_event is not None
        assert app.snapshot.last_event.moment == "deadlock"
        assert app.stop is not None and app.stop.startswith("deadlock")


async def test_click_a_block_to_inspect_it() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.send("goto", index=21)
        await settle(pilot)
        # block 0 holds chat[1]'s hold at event 21... find it from the snapshot
        snap = app.snapshot
        assert snap is not None
        kv = snap.pool("kv")
        assert kv.blocks is not None
        owner = kv.blocks.owner(0)
        assert owner is not None
        await pilot.click(BlockMapView, offset=(GUTTER + 1, 0))
        await settle(pilot)
        text = details(app)
        assert text.startswith("block 0 of kv")
        assert owner.session in text
        assert app.screen.query_one(TabbedContent).active == "details"


async def test_inspect_a_cached_block_shows_its_rank() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.send("goto", index=40)
        await settle(pilot)
        snap = app.snapshot
        assert snap is not None
        kv = snap.pool("kv")
        entry = kv.entries[0]
        app.inspect_block("kv", entry.physical[0])
        await settle(pilot)
        text = details(app)
        assert f"cached: entry of {entry.session}, eviction rank 0" in text


async def test_click_a_session_to_inspect_it() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.send("goto", index=21)
        await settle(pilot)
        await app.run_action("app.inspect_session(2)")
        await settle(pilot)
        text = details(app)
        assert text.startswith("chat[2]  class chat")
        assert "attributes: prompt=32" in text
        assert "hold kv: size 32" in text


async def test_help_lists_every_binding() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await keys(pilot, "question_mark")
        assert isinstance(app.screen, HelpScreen)
        body = str(app.screen.query_one("#help-body", Static).content)
        for cls in (DebuggerScreen, EventLog, BreakpointsScreen, WatchesScreen, PoolApp):
            for binding in cls.BINDINGS:
                assert isinstance(binding, Binding) and binding.id, binding
                if binding.action.startswith("nowhere"):
                    continue  # a move's answer where it does not apply: the move's keys
                assert binding.id in body
        await keys(pilot, "escape")
        assert isinstance(app.screen, DebuggerScreen)
        await keys(pilot, "f1")
        assert isinstance(app.screen, HelpScreen)


async def test_command_palette_offers_the_main_actions() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await pilot.pause(0.1)
        field = app.screen.query_one(Input)
        field.value = "Step one event"
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause(0.1)
        await settle(pilot)
        assert app.snapshot is not None and app.snapshot.event_index == 0


async def test_run_and_pause_answers_fast() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.rate = 2  # slow: the run is still going when we pause
        await pilot.press("r")
        # Until the run has shown its first event: a condition, not a duration, so a busy
        # machine only makes it wait longer (the bound is there so a hang still fails).
        for _ in range(6000):
            if app.snapshot is not None and app.snapshot.event_index >= 0:
                break
            await pilot.pause(0.01)
        assert app.snapshot is not None and app.snapshot.event_index >= 0
        assert app.running
        await pilot.press("space")
        await settle(pilot)
        # Paused where it was, long before the end of the run.
        assert not app.running and app.stop == "paused"
        assert app.snapshot is not None and not app.snapshot.finished
        assert 0 <= app.snapshot.event_index < app.snapshot.events_total
        # Said once: a hand check in a real terminal read "paused — paused".
        assert "paused" in status(app) and "paused — paused" not in status(app)


async def test_speed_keys() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await keys(pilot, "plus")
        assert app.rate == 20
        await keys(pilot, "minus", "minus")
        assert app.rate == 5
        assert "speed 5/s" in status(app)


async def test_footer_keys_follow_the_state() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert screen.check_action("pause", ()) is False
        assert screen.check_action("back", ()) is False
        assert screen.check_action("step", ()) is True
        await keys(pilot, "n")
        assert screen.check_action("back", ()) is True


async def test_compile_error_screen() -> None:
    text = "bad.pool:3:9: error: unknown pool 'kvv'\n3 | hold kvv (1) {}\n  |      ^^^"
    app = PoolApp("bad.pool", compile_error=text)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, CompileErrorScreen)
        assert str(app.screen.query_one("#error-body", Static).content) == text
        assert "Traceback" not in str(app.screen.query_one("#error-body", Static).content)


async def test_theme_change_recolours() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        dark = app.palette
        app.theme = "textual-light"
        await pilot.pause()
        assert app.palette != dark
        await keys(pilot, "n")
        assert app.screen.query_one(BlockMapView).palette == app.palette


async def test_a_theme_change_recolours_the_styles_kept_across_snapshots() -> None:
    # The block map keeps each owner's style from one snapshot to the next (by session
    # and rank); a cached block's colour is its session's faded towards the background
    # (colors.dimmed_hex), so a theme with another background must give it another one,
    # at the same event, without a step.
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for _ in range(80):
            assert app.snapshot is not None
            if app.snapshot.pools[0].entries:
                break
            await keys(pilot, "n")
        blocks = app.snapshot.pools[0].blocks
        assert blocks is not None
        k = next(c for c in blocks.cells if c and blocks.owners[c - 1].kind == "cached")
        sid = blocks.owners[k - 1].session_id
        view = app.screen.query_one(BlockMapView)
        for theme in ("textual-dark", "textual-light"):
            app.theme = theme
            await pilot.pause()
            style, _ = view._owner_style(k)
            assert style.bgcolor == Color.parse(dimmed_hex(sid, app.palette.background))
        assert Color.parse(dimmed_hex(sid, "#000000")) != Color.parse(dimmed_hex(sid, "#ffffff"))


async def test_clicking_a_session_name_inspects_it() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.send("goto", index=21)
        await settle(pilot)
        # The stages panel: stage line, budget line, header, then the first resident.
        snap = app.snapshot
        assert snap is not None
        first = snap.stage("gpu").residents[0]
        await pilot.click("#stages-body", offset=(3, 3))
        await settle(pilot)
        assert app.inspecting == ("session", first.session_id)
        assert details(app).startswith(f"{first.session}  class chat")


async def test_choose_an_event_with_the_keys() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.send("goto", index=10)
        await settle(pilot)
        app.screen.query_one(EventLog).focus()
        await keys(pilot, "up", "up", "enter")
        assert app.snapshot is not None and app.snapshot.event_index == 8


async def test_breakpoint_list_keys() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await keys(pilot, "b")
        await submit(pilot, "arrive")
        await submit(pilot, "end")
        app.screen.query_one("#bp-table").focus()
        await keys(pilot, "o", "plus", "plus", "minus")
        first = app.breakpoints.items[0]
        assert first.one_shot and first.ignore == 1
        await keys(pilot, "d")
        assert [b.moment for b in app.breakpoints] == ["end"]


async def test_delete_a_watch() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await keys(pilot, "w")
        await submit(pilot, "free(kv)")
        await submit(pilot, "cached(kv)")
        app.screen.query_one("#watch-table").focus()
        await keys(pilot, "d", "escape")
        assert [text for text, _ in app.watches] == ["cached(kv)"]
        assert [w.text for w in app.watch_values] == ["cached(kv)"]
