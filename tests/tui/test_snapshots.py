"""Snapshot tests of the main screens (pytest-textual-snapshot), over the fake simulator
so they do not move when the simulator's wording does. Fixed size, no clock on screen.
Update with `pytest tests/tui/test_snapshots.py --snapshot-update` after checking the SVGs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.app import App, ComposeResult
from textual.css.query import NoMatches
from textual.pilot import Pilot

from pooltui.tui.app import PoolApp
from pooltui.tui.synthetic import synthetic_pool
from pooltui.tui.widgets.blockmap import BlockMapView
from pooltui.tui.widgets.eventlog import EventLog
from tests.tui.conftest import SIZE, add_breakpoint, keys, make_app, settle, submit
from tests.tui.fakesim import FakeSim


def _log_shows_cursor(app: App[Any]) -> bool:
    """The event log, if there is one, has scrolled to its current event."""
    if not isinstance(app, PoolApp) or app.debugger is None:
        return True
    try:
        log = app.debugger.query_one(EventLog)
    except NoMatches:
        return True
    return log.shows(log.cursor)


def steady(before: Any) -> Any:
    """Run `before`, then let the screen reach a still state: callbacks scheduled after a
    refresh (scrolling the log and the source to the current event) have run."""

    async def run(pilot: Pilot[Any]) -> None:
        await before(pilot)
        await pilot.pause(0.05)
        # On a busy machine the scroll can come a few refreshes later: wait for it.
        for _ in range(1500):
            if _log_shows_cursor(pilot.app):
                break
            await pilot.pause(0.02)
        await pilot.wait_for_scheduled_animations()
        await pilot.pause()

    return run


def goto(index: int) -> Any:
    async def before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        app = pilot.app
        assert isinstance(app, PoolApp)
        app.send("goto", index=index)
        await settle(pilot)

    return before


def test_main_screen_at_the_start(snap_compare: Any) -> None:
    assert snap_compare(make_app(), terminal_size=SIZE, run_before=steady(goto(-1)))


def test_main_screen_mid_run(snap_compare: Any) -> None:
    assert snap_compare(make_app(), terminal_size=SIZE, run_before=steady(goto(21)))


def test_eviction_highlights_the_blocks(snap_compare: Any) -> None:
    assert snap_compare(make_app(), terminal_size=SIZE, run_before=steady(goto(43)))


def test_breakpoint_stop(snap_compare: Any) -> None:
    async def before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await add_breakpoint(pilot, "evict pool=kv")
        await keys(pilot, "c")

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=steady(before))


def test_invariant_violation(snap_compare: Any) -> None:
    sim = FakeSim()

    async def before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await keys(pilot, "n", "n")
        sim.break_pool("kv")
        await keys(pilot, "c")

    assert snap_compare(make_app(sim=sim), terminal_size=SIZE, run_before=steady(before))


def test_runtime_error(snap_compare: Any) -> None:
    async def before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await keys(pilot, "c")

    assert snap_compare(make_app(error_at=5), terminal_size=SIZE, run_before=steady(before))


def test_help_screen(snap_compare: Any) -> None:
    async def before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await keys(pilot, "question_mark")

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=steady(before))


def test_breakpoints_screen(snap_compare: Any) -> None:
    async def before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await keys(pilot, "b")
        await submit(pilot, "admit pool=kv class=chat; ignore 2")
        await submit(pilot, "if free(kv) < 64; once")
        await submit(pilot, "at 2.5")
        await submit(pilot, "if fre(kv) < 1")

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=steady(before))


def test_help_screen_at_80x24(snap_compare: Any) -> None:
    """Narrow: the columns as wide as their entries, each binding on one row, a scrollbar."""

    async def before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await keys(pilot, "question_mark")

    assert snap_compare(make_app(), terminal_size=(80, 24), run_before=steady(before))


def test_breakpoints_screen_at_80x24(snap_compare: Any) -> None:
    """Narrow: the dialog as wide as the screen, its hint wrapped, a located error below."""

    async def before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await keys(pilot, "b")
        await submit(pilot, "admit pool=kv class=chat; ignore 2")
        await submit(pilot, "if free(kv) < 64; once")
        await submit(pilot, "if fre(kv) < 1")

    assert snap_compare(make_app(), terminal_size=(80, 24), run_before=steady(before))


def test_goto_dialog(snap_compare: Any) -> None:
    async def before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await keys(pilot, "g")
        await submit(pilot, "soon")

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=steady(before))


def test_watch_changed(snap_compare: Any) -> None:
    async def before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await keys(pilot, "w")
        await submit(pilot, "free(kv)")
        await submit(pilot, "queued(kv)")
        await keys(pilot, "escape", "n", "n", "n")

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=steady(before))


def test_inspect_a_cached_block(snap_compare: Any) -> None:
    async def before(pilot: Pilot[Any]) -> None:
        await goto(40)(pilot)
        app = pilot.app
        assert isinstance(app, PoolApp) and app.snapshot is not None
        entry = app.snapshot.pool("kv").entries[0]
        app.inspect_block("kv", entry.physical[0])
        await settle(pilot)

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=steady(before))


def test_cap_inf_pool_shows_a_bar(snap_compare: Any) -> None:
    assert snap_compare(make_app(with_host=True), terminal_size=SIZE, run_before=steady(goto(21)))


def test_light_theme(snap_compare: Any) -> None:
    async def before(pilot: Pilot[Any]) -> None:
        pilot.app.theme = "textual-light"
        await goto(21)(pilot)

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=steady(before))


def test_compile_error_screen(snap_compare: Any) -> None:
    text = (
        "bad.pool:5:8: error: unknown pool 'kvv'; did you mean 'kv'?\n"
        "5 |   hold kvv (16) {\n"
        "  |        ^^^"
    )
    assert snap_compare(PoolApp("bad.pool", compile_error=text), terminal_size=(100, 20))


class BigMapApp(App[None]):
    """A 100,000-block pool, scrolled to the middle."""

    def compose(self) -> ComposeResult:
        yield BlockMapView(synthetic_pool(100_000, holders=3000), classes="solo")


def test_big_block_map_scrolled(snap_compare: Any) -> None:
    async def before(pilot: Pilot[Any]) -> None:
        await pilot.pause()
        view = pilot.app.query_one(BlockMapView)
        view.scroll_to(y=1500, animate=False)
        await pilot.pause()

    assert snap_compare(BigMapApp(), terminal_size=(120, 30), run_before=steady(before))


def test_narrow_layout(snap_compare: Any) -> None:
    """80x24: the panels are tabs (the pools shown), the why and the keys stay on screen."""
    assert snap_compare(make_app(), terminal_size=(80, 24), run_before=steady(goto(43)))


def test_teaching_mode(snap_compare: Any) -> None:
    async def before(pilot: Pilot[Any]) -> None:
        await goto(21)(pilot)
        await keys(pilot, "t")

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=steady(before))


def test_timeline_after_a_deadlock(snap_compare: Any) -> None:
    """The timeline's utilisation, its halt mark and the current column."""

    async def before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await keys(pilot, "c")

    app = make_app(sim=FakeSim(deadlock=True))
    assert snap_compare(app, terminal_size=(120, 30), run_before=steady(before))


SHARED_SPEC = str(Path(__file__).parent / "specs" / "shared.pool")


def test_shared_blocks_inspected(snap_compare: Any) -> None:
    """tests/tui/specs/shared.pool after its iteration 2 starts (#13): blocks 0 and 1 held by
    chat[0], chat[1] and chat[2] (×3, `shared 2`, the legend's content 'sys'), block 0
    inspected in Details (test_shared.py works the figures out)."""

    async def before(pilot: Pilot[Any]) -> None:
        await goto(13)(pilot)
        app = pilot.app
        assert isinstance(app, PoolApp)
        app.inspect_block("kv", 0)
        await settle(pilot)

    app = PoolApp.from_spec(SHARED_SPEC)
    assert snap_compare(app, terminal_size=SIZE, run_before=steady(before))


def test_shared_blocks_at_80x24(snap_compare: Any) -> None:
    app = PoolApp.from_spec(SHARED_SPEC)
    assert snap_compare(app, terminal_size=(80, 24), run_before=steady(goto(13)))
