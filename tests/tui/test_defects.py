"""Defects a first user found, each pinned by what the user should see."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual import events
from textual.widgets import DataTable, Static

from pooltui.tui.app import PoolApp
from pooltui.tui.widgets.blockmap import BlockMapView
from pooltui.tui.widgets.panels import StagesPanel
from pooltui.tui.widgets.rows import TextRows
from tests.tui.conftest import SIZE, keys, make_app, settle, submit

SPECS = Path(__file__).parent / "specs"


def status(app: PoolApp) -> str:
    return str(app.screen.query_one("#status", Static).content)


async def test_keys_typed_right_after_g_are_kept() -> None:
    """`g 5 3 enter` typed at once (faster than the go-to box opens) goes to event 53."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for key, char in (("g", "g"), ("5", "5"), ("3", "3"), ("enter", "\r")):
            app.post_message(events.Key(key, char))
        for _ in range(300):
            await pilot.pause(0.01)
            if app.screen is app.debugger and app.snapshot and app.snapshot.event_index == 53:
                break
        await settle(pilot)
        assert app.screen is app.debugger  # the box took the keys and closed
        assert app.snapshot is not None and app.snapshot.event_index == 53


async def test_speed_keys_change_a_running_run_at_once() -> None:
    """At 1 event a second the fake run (dozens of events) would take a minute; `+` up to
    the top speed while it runs makes it reach the end now."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.rate = 1
        await pilot.press("r")
        for _ in range(6000):  # a condition with a bound, not a duration (busy machines)
            if app.snapshot is not None and app.snapshot.event_index >= 0:
                break
            await pilot.pause(0.01)
        assert app.snapshot is not None and app.snapshot.event_index >= 0
        assert app.running
        for _ in range(13):
            await pilot.press("plus")
        assert app.rate == 100000
        await app.settle(timeout=120)
        await pilot.pause()
        assert not app.running
        assert app.stop_kind == "end" and app.snapshot is not None and app.snapshot.finished


async def test_end_in_the_breakpoint_list_goes_to_the_last_one() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await keys(pilot, "b")
        for text in ("admit pool=kv", "evict pool=kv", "at 2.5"):
            await submit(pilot, text)
        table = app.screen.query_one(DataTable)
        table.focus()
        await pilot.pause()
        await keys(pilot, "end")
        assert table.cursor_row == 2
        await keys(pilot, "d")
        assert [bp.describe() for bp in app.breakpoints] == ["admit pool=kv", "evict pool=kv"]
        await keys(pilot, "home", "d")
        assert [bp.describe() for bp in app.breakpoints] == ["evict pool=kv"]


async def test_the_event_count_says_so_far_until_the_run_ends() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await keys(pilot, "n", "n", "n")
        assert app.snapshot is not None
        recorded = app.snapshot.events_total
        assert f"event #2 of {recorded} so far" in status(app)
        await keys(pilot, "c")
        assert app.snapshot.finished
        total = app.snapshot.events_total
        assert f"of {total} ·" in status(app) and "so far" not in status(app)
        await keys(pilot, "p")  # back from the end: the total is known
        assert f"event #{total - 2} of {total} ·" in status(app)


async def test_the_status_at_the_start_reads_at_the_start() -> None:
    """Before any event the status says where it is, not `start of 0 so far`; back at the
    start after some steps, how many events there are so far (or all of them)."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "at the start ·" in status(app) and status(app).count("at the start") == 1
        assert "start of" not in status(app) and "so far" not in status(app)
        await keys(pilot, "n", "n", "p", "p")
        assert app.snapshot is not None and app.snapshot.event_index == -1
        recorded = app.snapshot.events_total
        assert f"at the start · {recorded} events so far ·" in status(app)
        app.send("goto", index=-1)  # the go-to's stop says "at the start" too: once
        await settle(pilot)
        assert status(app).count("at the start") == 1
        await keys(pilot, "c")
        total = app.snapshot.events_total
        app.send("goto", index=0)
        await settle(pilot)
        await keys(pilot, "p")
        assert f"at the start · {total} events ·" in status(app)


async def test_a_resident_between_iterations_is_idle_not_waiting() -> None:
    """`waiting` reads as vLLM's waiting queue; a resident between two iterations is idle."""
    app = PoolApp.from_spec(str(SPECS / "small.pool"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for _ in range(200):
            snap = app.snapshot
            assert snap is not None
            resting = [r for s in snap.stages for r in s.residents if r.phase == "waiting"]
            if resting:
                break
            await keys(pilot, "n")
        assert resting, "the spec has a resident between two iterations"
        stages = str(app.screen.query_one(StagesPanel).query_one(TextRows).content)
        assert "waiting" not in stages
        assert f"{resting[0].session}" in stages and "idle" in stages


async def test_the_marks_of_the_block_map_are_explained_and_whole() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.send("goto", index=43)  # an eviction: the event has blocks in kv
        await settle(pilot)
        legend = str(app.screen.query_one(".pool-legend", Static).content)
        assert "◆" in legend and "this event" in legend
        assert app.snapshot is not None
        block = app.snapshot.pool("kv").entries[0].physical[0]
        app.inspect_block("kv", block)
        await settle(pilot)
        legend = str(app.screen.query_one(".pool-legend", Static).content)
        assert "[ ]" in legend and "inspected" in legend
        view = app.screen.query_one(BlockMapView)
        row = block // view.columns()
        await pilot.pause()
        line = "".join(seg.text for seg in view.render_line(row - view.scroll_offset.y))
        cell = view.cell_width()
        start = 7 + (block % view.columns()) * cell  # after the gutter of 7
        tile = line[start : start + cell - 1]
        assert tile.startswith("[") and tile.rstrip().endswith("]"), repr(tile)


# Keys as a terminal delivers them when typed fast: all in the app's queue before the box
# the first one opens is on the screen. Each box must get the keys typed after it; before,
# a `p` among them (a step back on the debugger screen) went back instead.
CHARS = {
    "enter": "\r",
    "space": " ",
    "ctrl+p": "\x10",
    "escape": "\x1b",
    "slash": "/",
    "left_parenthesis": "(",
    "right_parenthesis": ")",
    "left_square_bracket": "[",
    "right_square_bracket": "]",
}


async def typed_at_once(
    app: PoolApp, pilot: Any, *pressed: str, done: Callable[[], bool] | None = None
) -> None:
    """Post the keys at once, then wait until `done` (by default: the box closed)."""
    for key in pressed:
        app.post_message(events.Key(key, CHARS.get(key, key)))
    await settle(pilot)  # the keys are handled (the first opens a box)
    for _ in range(300):  # a bound, not a duration
        if done() if done is not None else app.screen is app.debugger:
            break
        await pilot.pause(0.01)
    await settle(pilot)


async def test_a_moment_key_typed_as_its_box_opens_names_the_moment() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await typed_at_once(app, pilot, "right_square_bracket", "e")
        assert app.snapshot is not None and app.snapshot.event_index == 43  # the first evict
        # `p` names preempt here (the fake never preempts): no step back, no box left open.
        await typed_at_once(app, pilot, "left_square_bracket", "p")
        assert app.screen is app.debugger
        assert app.stop == "no preempt before #43"


async def test_a_breakpoint_typed_as_its_box_opens_is_added() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await typed_at_once(
            app, pilot, "b", *"preempt", "enter", done=lambda: bool(app.breakpoints.items)
        )
        assert [bp.moment for bp in app.breakpoints.items] == ["preempt"]
        assert app.snapshot is not None and app.snapshot.event_index == -1  # no step back


async def test_a_watch_and_a_filter_typed_as_their_boxes_open_are_taken() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await typed_at_once(
            app,
            pilot,
            "w",
            *"free",
            "left_parenthesis",
            "k",
            "v",
            "right_parenthesis",
            "enter",
            done=lambda: bool(app.watches),
        )
        await typed_at_once(app, pilot, "escape")
        assert [text for text, _ in app.watches] == ["free(kv)"]
        await typed_at_once(app, pilot, "slash", *"preempt", "enter")
        assert app.debugger.filter_text == "preempt"


async def test_the_inspector_names_the_cache_entry_that_holds_the_block() -> None:
    """specs/spill_tiers.pool at #199: chat[0] has two cache entries in dram (one per
    landing, language.md §8.3), and block 8 is in the second, rank 4. The inspector's
    `cache entry` line is that entry's, as its owner line says, not the session's first."""
    app = PoolApp.from_spec(str(SPECS.parents[2] / "specs" / "spill_tiers.pool"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.send("goto", index=199)
        await settle(pilot)
        assert app.snapshot is not None
        dram = app.snapshot.pool("dram")
        mine = [e for e in dram.entries if e.session == "chat[0]"]
        assert len(mine) == 2  # as the test needs: the block's entry is not the first
        (entry,) = [e for e in mine if 8 in e.physical]
        assert entry is not mine[0]
        app.inspect_block("dram", 8)
        await settle(pilot)
        details = str(app.screen.query_one("#details-body", Static).content)
        assert f"cached: entry of chat[0], eviction rank {entry.rank}" in details
        (line,) = [ln for ln in details.splitlines() if ln.startswith("cache entry:")]
        assert line.startswith(
            f"cache entry: {entry.units} units ({entry.blocks} blocks), rank {entry.rank} "
        )


STATUS_FIGURE = re.compile(r"\b(arrived|live|done|rejected|speed) (\S+)")


async def test_the_status_bar_shows_whole_fields_at_every_width() -> None:
    """A status line longer than the terminal drops whole fields, the least useful first,
    and never ends in a cut figure ("done 12…" for 121): what is shown is true."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await keys(pilot, "g", "4", "0", "enter")
        for width in range(60, 161, 5):
            await pilot.resize_terminal(width, SIZE[1])
            await settle(pilot)
            snap = app.snapshot
            assert snap is not None
            bar = app.screen.query_one("#status", Static)
            shown = bar.render_line(0).text.strip()
            assert "…" not in shown, (width, shown)
            assert "went to event #40" in shown and "paused" in shown, (width, shown)
            c = snap.counts
            truth = {
                "arrived": str(c.arrived),
                "live": str(c.live),
                "done": str(c.done),
                "rejected": str(c.rejected),
                "speed": f"{app.rate}/s",
            }
            for name, value in STATUS_FIGURE.findall(shown):
                assert truth[name] == value, (width, shown)
            assert re.search(rf"event #40 of {snap.events_total}\b", shown) or (
                "event #40 ·" in shown
            ), (width, shown)
