"""Panels of hundreds of rows (issue 13: `space` within 100 ms on a full GPU, where the
Stages panel lists 256 residents and the Queue panel 200 holds): a row is made and drawn
only when it is on screen; what the panels say is unchanged."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

from rich.text import Text
from textual.app import App, ComposeResult

from pooltui.sim.snapshot import QUEUE_PLANNED
from pooltui.tui import pacing
from pooltui.tui.app import PoolApp
from pooltui.tui.pacing import Pacing
from pooltui.tui.widgets.inspector import inspect_session_text
from pooltui.tui.widgets.panels import QueuePanel
from pooltui.tui.widgets.rows import Row, TextRows
from tests.sim.helpers import sim_of
from tests.sim.test_snapshot_scale import LONG_QUEUE
from tests.tui.conftest import SIZE, settle


class RowsApp(App[None]):
    """A TextRows of 500 rows in a panel 10 rows high."""

    CSS = "TextRows { height: 10; }"

    def __init__(self) -> None:
        super().__init__()
        self.made: list[int] = []

    def row(self, i: int) -> Text:
        self.made.append(i)
        return Text(f"row {i}")

    def compose(self) -> ComposeResult:
        yield TextRows(id="rows")

    def on_mount(self) -> None:
        rows: list[Row] = [Text("head", "bold")]
        rows.extend((lambda i=i: self.row(i)) for i in range(500))
        self.query_one(TextRows).update_rows(rows)


async def test_only_the_rows_on_screen_are_made() -> None:
    app = RowsApp()
    async with app.run_test(size=(40, 12)) as pilot:
        await pilot.pause()
        rows = app.query_one(TextRows)
        assert rows.virtual_size.height == 501  # every row counts (it scrolls them)
        # The panel shows the head and rows 0 .. 8: those only are made, each once.
        assert sorted(set(app.made)) == list(range(9))
        assert len(app.made) == len(set(app.made))
        rows.scroll_end(animate=False)
        await pilot.pause()
        await pilot.pause()
        assert 499 in app.made and 250 not in app.made
        # `content` makes them all (the panel's whole text, for tests and copies).
        text = rows.content.plain.splitlines()
        assert text[0] == "head" and text[1] == "row 0" and text[-1] == "row 499"


async def test_a_wide_row_ends_in_an_ellipsis() -> None:
    class Wide(App[None]):
        def compose(self) -> ComposeResult:
            yield TextRows()

        def on_mount(self) -> None:
            self.query_one(TextRows).update_rows([Text("x" * 50), Text("short")])

    app = Wide()
    async with app.run_test(size=(20, 5)) as pilot:
        await pilot.pause()
        rows = app.query_one(TextRows)
        first = "".join(seg.text for seg in rows.render_line(0))
        second = "".join(seg.text for seg in rows.render_line(1))
        assert first == "x" * 19 + "…"
        assert second == "short" + " " * 15


async def test_while_heights_only_grow_the_scroll_range_only_grows() -> None:
    # A run and its pause (the debugger screen's `grow_only`): fewer rows keep the range
    # (blank rows at its end), so the scroll bar stays and lays nothing out; between two
    # steps the range is the rows' again and the bar goes.
    app = RowsApp()
    async with app.run_test(size=(40, 12)) as pilot:
        await pilot.pause()
        rows = app.query_one(TextRows)
        assert rows.show_vertical_scrollbar  # 501 rows in 10
        app.screen.grow_only = True  # type: ignore[attr-defined]
        rows.update_rows([Text(f"row {i}") for i in range(3)])
        await pilot.pause()
        assert rows.virtual_size.height == 501 and rows.show_vertical_scrollbar
        assert "".join(seg.text for seg in rows.render_line(0)).startswith("row 0")
        assert "".join(seg.text for seg in rows.render_line(5)).strip() == ""
        rows.update_rows([Text(f"row {i}") for i in range(600)])  # more: it grows
        await pilot.pause()
        assert rows.virtual_size.height == 600
        app.screen.grow_only = False  # type: ignore[attr-defined]
        rows.update_rows([Text(f"row {i}") for i in range(3)])
        await pilot.pause()
        assert rows.virtual_size.height == 3 and not rows.show_vertical_scrollbar


async def test_the_queue_rows_on_screen_are_planned_and_a_scroll_past_them_brings_theirs(
    tmp_path: Path,
) -> None:
    # The debugger's frames plan the queue positions its Queue panel shows, in steps of
    # QUEUE_ROWS (32) rows; scrolled further while paused, the worker shows the state again
    # with those planned (`look`). LONG_QUEUE: after event 499 all 250 holds wait.
    spec = tmp_path / "long.pool"
    spec.write_text(LONG_QUEUE)
    app = PoolApp.from_spec(str(spec))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.send("goto", index=499)
        await settle(pilot)
        panel = app.screen.query_one(QueuePanel)
        assert panel.size.height <= 28  # its rows down to 28 at most: the first step
        snap = app.snapshot
        assert snap is not None and snap.event_index == 499
        queue = snap.pool("kv").queue
        assert len(queue) == 250 and snap.queue_planned == 32
        assert [item.position for item in queue if item.planned] == list(range(32))
        body = panel.query_one(TextRows)
        assert "req[5]" in body.content.plain.splitlines()[7]  # title, header, 0..5
        assert body.content.plain.splitlines()[7].split()[2] == "8"  # its units
        body.scroll_to(y=100, animate=False)  # rows down to 100 + height <= 128
        await pilot.pause()
        await settle(pilot)
        snap = app.snapshot
        assert snap.event_index == 499 and snap.queue_planned == 128
        row = body.content.plain.splitlines()[2 + 120]
        assert "req[120]" in row and row.split()[2] == "8"
        assert app.stop == "went to event #499"  # the look says what the goto said


def test_details_of_a_hold_past_the_planned_head() -> None:
    sim = sim_of(LONG_QUEUE)
    while sim.step() is not None:
        snap = sim.snapshot()
        if len(snap.pool("kv").queue) == 250:
            break
    near = inspect_session_text(snap, snap.session("req[5]").session_id).plain
    assert "queued on kv at position 5: units 8, hit 0, waited 0.00s" in near
    far = inspect_session_text(snap, snap.session("req[230]").session_id).plain
    assert (
        f"queued on kv at position 230: units and hit worked out for the first "
        f"{QUEUE_PLANNED} only, waited 0.00s" in far
    )


def test_each_progress_frame_freezes_what_the_run_made(monkeypatch: Any) -> None:
    calls: list[str] = []
    monkeypatch.setattr(pacing.gc, "freeze", lambda: calls.append("freeze"))
    monkeypatch.setattr(pacing.gc, "unfreeze", lambda: calls.append("unfreeze"))
    monkeypatch.setattr(pacing.gc, "collect", lambda: calls.append("collect"))
    p = Pacing()
    p.frame_arrived(final=True)  # the first frame: start-up's objects
    assert calls == ["freeze"] and not p.collect_due  # steps leave nothing to collect
    p.frame_arrived(final=False)  # a run's frames: what it added since
    p.frame_arrived(final=False)
    p.frame_arrived(final=True)  # its last frame: nothing more
    assert calls == ["freeze"] * 3 and p.collect_due
    p.collect()  # once idle: all collectable, collected once, frozen again
    assert calls == ["freeze"] * 3 + ["unfreeze", "collect", "freeze"]
    assert not p.collect_due
    p.collect()  # nothing since: nothing to do
    assert len(calls) == 6
    assert gc.isenabled()


def test_quiet_counts_from_the_last_frame(monkeypatch: Any) -> None:
    clock = [100.0]
    monkeypatch.setattr(pacing.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(pacing.gc, "freeze", lambda: None)
    p = Pacing()
    p.frame_arrived(final=False)
    clock[0] = 102.0
    p.frame_arrived(final=True)  # the run's last frame, at 102
    clock[0] = 104.0
    assert not p.quiet(pacing.IDLE_COLLECT)  # 2 s: not yet
    clock[0] = 105.0
    assert p.quiet(pacing.IDLE_COLLECT)  # 3 s without a frame
