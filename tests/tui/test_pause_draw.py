"""What a pause redraws (issue 13: `space` answered within 100 ms). Decisions in
docs/decisions.md ("The debugger"): a run's frames only grow the panels' heights, its
last frame (the pause) too, and the next step fits them again; a text in a tab not shown
lays nothing out; the app's `running` repaints nothing by itself (a repaint of the app is
the whole screen, every panel rendered again). The garbage collector waits from the key to
the paused frame drawn; the spec's view scrolls to the event's statement in the same
update; the pools' cards are remade on a new size of their panel, not on their own growth.
"""

from __future__ import annotations

import gc
import math
from dataclasses import replace
from typing import Any

from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.geometry import Size
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Static, TabbedContent, TabPane

from pooltui.lang.ir import Span
from pooltui.tui.app import PoolApp
from pooltui.tui.colors import Palette
from pooltui.tui.commands import Frame
from pooltui.tui.messages import SimFrame
from pooltui.tui.pacing import Pacing
from pooltui.tui.widgets.panels import PoolCard, PoolsPanel, QueuePanel, StagesPanel
from pooltui.tui.widgets.rows import TextRows
from pooltui.tui.widgets.source import SourceView
from pooltui.tui.widgets.statictext import set_text
from pooltui.tui.widgets.timeline import Timeline
from tests.tui.conftest import SIZE, make_app, settle, start_slow_run


async def test_a_run_and_its_pause_only_grow_heights_the_next_step_fits_them() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.debugger
        assert screen is not None and not screen.grow_only
        await start_slow_run(pilot)
        assert screen.grow_only
        await pilot.press("space")
        await settle(pilot)
        assert not app.running and screen.grow_only  # the pause's frame: still a run's
        await pilot.press("n")
        await settle(pilot)
        assert not screen.grow_only


async def test_neither_c_nor_space_repaints_the_whole_screen(monkeypatch: Any) -> None:
    whole: list[Widget] = []
    refresh = Widget.refresh

    def recording(self: Widget, *regions: Any, **kwargs: Any) -> Any:
        if isinstance(self, Screen) and not regions and kwargs.get("repaint", True):
            whole.append(self)
        return refresh(self, *regions, **kwargs)

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        monkeypatch.setattr(Widget, "refresh", recording)
        await start_slow_run(pilot)
        await pilot.press("space")
        await settle(pilot)
        assert not app.running
        assert whole == []


class _Tabs(App[None]):
    def compose(self) -> ComposeResult:
        with TabbedContent(initial="shown"):
            with TabPane("Shown", id="shown"):
                yield Static("notes", id="notes")
            with TabPane("Hidden", id="hidden"):
                yield Static(id="details")


async def test_a_text_in_a_tab_not_shown_lays_nothing_out() -> None:
    app = _Tabs()
    async with app.run_test(size=(40, 12)) as pilot:
        await pilot.pause()
        details = app.query_one("#details", Static)
        asked: list[bool] = []
        update = details.update

        def recording(content: Any = "", *, layout: bool = True) -> None:
            asked.append(layout)
            update(content, layout=layout)

        details.update = recording  # type: ignore[method-assign]
        for n in range(1, 4):
            set_text(details, Text("\n".join(["line"] * n)), wrap=True)
        assert asked == [False, False, False]
        # Shown, it has its height, and the next change of height lays it out.
        app.query_one(TabbedContent).active = "hidden"
        await pilot.pause()
        assert details.size.height == 3
        set_text(details, Text("one"), wrap=True)
        await pilot.pause()
        assert asked[-1] is True and details.size.height == 1


async def test_a_frame_of_a_run_told_to_stop_is_not_shown_but_the_timeline_keeps_it() -> None:
    """`space` while the worker posts a progress frame: that frame arrives after the pause
    was asked for, and the pause's own frame (at that state or later) comes next. It is not
    applied (nor drawn: a `space` waited 30-40 ms for it); the timeline keeps its sample,
    which no other frame carries. A run's frame before the pause is applied as ever."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await start_slow_run(pilot)
        shown, applied = app.snapshot, app.frames_applied
        assert shown is not None
        later = replace(shown, time=shown.time + 1.0)
        sample_at = shown.time + 0.5
        frame = Frame(
            seq=app._issued,  # the run's own frames carry its command's number
            final=False,
            snapshot=later,
            events_from=0,
            events=(),
            watches=(),
            running=True,
            samples=((sample_at, 3.0),),
        )
        app.pause()  # as `space` does; the handler below runs before the worker's answer
        app.on_sim_frame(SimFrame(frame))
        assert app.snapshot is shown and app.frames_applied == applied
        timeline = app.screen.query_one(Timeline)
        assert not math.isnan(timeline.level[timeline._bucket(sample_at)])
        await settle(pilot)
        assert not app.running and app.frames_applied == applied + 1  # the pause's frame
        # A frame of a command not told to stop is applied.
        await start_slow_run(pilot)
        before = app.frames_applied
        app.on_sim_frame(SimFrame(replace(frame, seq=app._issued, snapshot=later)))
        assert app.snapshot is later and app.frames_applied == before + 1
        await pilot.press("space")
        await settle(pilot)


async def test_fit_lets_go_of_what_a_run_kept_and_render_fits() -> None:
    """After a run (its last frame included) heights only grow: a shorter why keeps its
    blank lines. `fit` (what `render` does before its picture: a picture has no next step)
    shows the why at its own height again, and frames are no longer grow-only."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await start_slow_run(pilot)
        await pilot.press("space")
        await settle(pilot)
        screen = app.debugger
        assert screen is not None and screen.grow_only
        bar = screen.query_one("#why", Static)
        set_text(bar, Text("a\nb\nc\nd\ne\nf"), wrap=True)  # a taller why, earlier in the run
        screen.show_why()
        shown = bar._pooltui_text.plain  # type: ignore[attr-defined]
        assert shown.endswith("\n\n")  # the current why, kept at six lines
        body = screen.query_one("#stages-body", TextRows)
        rows = body.content.plain.count("\n") + 1  # the pause's Stages rows
        body.update_rows([Text("x")] * 300)  # a long list earlier in the run
        screen.query_one(StagesPanel).snapshot = app.snapshot  # the pause's rows again
        assert body.virtual_size.height == 300  # the range kept its length
        screen.fit()
        await pilot.pause()
        assert not screen.grow_only
        assert bar._pooltui_text.plain == shown.rstrip("\n")  # type: ignore[attr-defined]
        assert body.virtual_size.height == rows  # fitted to the rows shown


async def test_space_holds_the_collector_until_the_paused_frame_is_drawn(
    monkeypatch: Any,
) -> None:
    seen: list[tuple[str, bool]] = []  # (what, the collector on then)
    hold, release, apply = Pacing.hold, Pacing.release, PoolApp.apply_frame

    def holding(self: Pacing) -> None:
        hold(self)
        seen.append(("hold", gc.isenabled()))

    def releasing(self: Pacing, freeze: bool = True) -> None:
        release(self, freeze)
        seen.append(("release", gc.isenabled()))

    def applying(self: PoolApp, frame: Frame) -> None:
        if frame.final:
            seen.append(("paused frame", gc.isenabled()))
        apply(self, frame)

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await start_slow_run(pilot)
        monkeypatch.setattr(Pacing, "hold", holding)
        monkeypatch.setattr(Pacing, "release", releasing)
        monkeypatch.setattr(PoolApp, "apply_frame", applying)
        await pilot.press("space")
        await settle(pilot)
        assert not app.running
        assert seen == [("hold", False), ("paused frame", False), ("release", True)]
    assert gc.isenabled()


class _Source(App[None]):
    CSS = "SourceView { height: 12; width: 40; }"

    def compose(self) -> ComposeResult:
        yield SourceView("\n".join(f"x{i}" for i in range(1, 101)))


async def test_the_source_scrolls_to_the_statement_in_the_same_update() -> None:
    app = _Source()
    async with app.run_test(size=(60, 20)) as pilot:
        await pilot.pause()
        view = app.query_one(SourceView)
        assert view.scroll_offset.y == 0
        view.span = Span("a.pool", 60, 1, 60, 4)
        # At once, not after the next refresh (a second update, 16 ms later or more): line
        # 60 is row 59, shown a third down the 12 rows, so the view starts at row 59 - 4.
        assert view.scroll_offset.y == 55


async def test_the_source_rows_kept_drawn_follow_the_statement_and_the_theme() -> None:
    # Rows are kept drawn between looks; what a row shows must still be what the
    # statement and the theme make it: the marker and the highlight move with the span,
    # and a theme's colours reach rows drawn before it.
    app = _Source()
    async with app.run_test(size=(60, 20)) as pilot:
        await pilot.pause()
        view = app.query_one(SourceView)
        view.span = Span("a.pool", 3, 1, 3, 3)
        await pilot.pause()

        def row(y: int) -> str:
            return view.render_line(y).text

        def gutter(y: int) -> Any:  # the style the row's gutter is drawn in
            return next(iter(view.render_line(y))).style

        assert row(2).startswith("▶  3 │x3") and row(4).startswith("   5 │x5")
        lit = gutter(2)
        view.span = Span("a.pool", 5, 1, 5, 3)
        await pilot.pause()
        assert row(2).startswith("   3 │x3") and row(4).startswith("▶  5 │x5")
        assert gutter(4) == lit and gutter(2) != lit
        app.theme = "nord" if app.theme != "nord" else "gruvbox"
        await pilot.pause()
        assert gutter(4) != lit


async def test_the_pools_cards_are_remade_on_a_new_size_not_on_their_growth() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.debugger
        assert screen is not None
        panel = screen.query_one(PoolsPanel)
        made: list[Size] = []
        update = panel.update_snapshot

        def updating(*args: Any) -> None:
            made.append(panel.size)
            update(*args)

        panel.update_snapshot = updating  # type: ignore[method-assign]
        size = panel.size
        # Its cards grew (a new virtual size), the panel is as big as it was: nothing.
        grown = Size(size.width, size.height + 30)
        panel.post_message(events.Resize(size, grown, panel.container_size))
        await pilot.pause()
        assert made == []
        # The screen is smaller: the panel is, and its cards are made again for it.
        await pilot.resize_terminal(SIZE[0] - 10, SIZE[1])
        await settle(pilot)
        assert made and made[-1] == panel.size != size
        # While heights only grow (a run, its pause), the why's line growing takes lines
        # from the panel: the cards wait for the next frame (no second layout now).
        made.clear()
        why = screen.query_one("#why", Static)
        screen.grow_only = True
        before = panel.size
        set_text(why, Text("one\ntwo\nthree"), wrap=True)
        await pilot.pause()
        await pilot.pause()
        # (#bottom takes a share of the lines lost: the panel is shorter, as wide)
        assert panel.size.height < before.height and panel.size.width == before.width
        assert made == []
        # Back to one line: the size they were made for, nothing to do.
        set_text(why, Text("one"), wrap=True)
        await pilot.pause()
        await pilot.pause()
        assert panel.size == before and made == []
        # Between two steps (heights fit), the same growth makes them again, for it.
        screen.grow_only = False
        set_text(why, Text("one\ntwo\nthree"), wrap=True)
        await pilot.pause()
        await pilot.pause()
        assert panel.size.height < before.height and made == [panel.size]


async def test_a_pause_at_the_state_shown_does_not_draw_the_panels_again(
    monkeypatch: Any,
) -> None:
    """The run's last frame may carry the snapshot its last progress frame carried (the
    pause came while that frame was made): the panels show it already and are not made
    again; the status says the run stopped."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await start_slow_run(pilot)
        shown = app.snapshot
        assert shown is not None and app.running
        made: list[str] = []
        for panel in (PoolsPanel, QueuePanel, StagesPanel):
            update = panel.update_snapshot

            def counting(self: Any, *args: Any, _update: Any = update) -> None:
                made.append(type(self).__name__)
                _update(self, *args)

            monkeypatch.setattr(panel, "update_snapshot", counting)
        app.pause()
        last = Frame(
            seq=app._issued, final=True, snapshot=shown, events_from=0, events=(),
            watches=(), running=False, stop="paused", stop_kind="goal",
        )  # fmt: skip
        app.on_sim_frame(SimFrame(last))
        assert made == [] and not app.running and app.stop == "paused"
        # A final frame with a snapshot of its own draws them.
        app.on_sim_frame(SimFrame(replace(last, snapshot=replace(shown))))
        assert sorted(made) == ["PoolsPanel", "QueuePanel", "StagesPanel"]
        await settle(pilot)


async def test_the_details_tab_is_made_when_it_is_shown_not_while_it_is_hidden() -> None:
    # A hidden widget refreshed has Textual map every widget of the screen again (a full
    # GPU: 4 ms of each paused frame): the Details tab's text is made when the tab shows.
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.debugger
        assert screen is not None
        side = screen.query_one("#side", TabbedContent)
        assert side.active == "notes"
        body = screen.query_one("#details-body", Static)
        before = str(body.content)
        for _ in range(3):
            await pilot.press("n")
            await settle(pilot)
        snap = app.snapshot
        assert snap is not None and snap.event_index == 2
        assert str(body.content) == before  # hidden: not made
        side.active = "details"
        await settle(pilot)
        assert "event #2 at" in str(body.content)
        await pilot.press("n")  # shown: made at each step
        await settle(pilot)
        assert "event #3 at" in str(body.content)


class _Card(App[None]):
    CSS = "PoolCard { height: 30; }"

    def __init__(self, pool: Any) -> None:
        super().__init__()
        self.pool = pool
        self.grow_only = False

    def compose(self) -> ComposeResult:
        yield PoolCard(self.pool, solo=True)


async def test_a_lone_pools_map_keeps_its_height_while_its_head_keeps_its_lines() -> None:
    # While heights only grow (a run, its pause), a head of fewer lines keeps its height
    # (blank lines): the map below it keeps its height too, and nothing is laid out; a
    # map resized to the head's own lines overlapped the legend and laid the screen out.
    from pooltui.sim.events import Violation
    from tests.tui.fakesim import FakeSim

    fake = FakeSim(nblocks=4000)  # a map of more rows than the card has
    fake.goto(3)
    pool = fake.snapshot().pools[0]
    app = _Card(pool)
    async with app.run_test(size=(60, 32)) as pilot:
        await pilot.pause()
        card = app.query_one(PoolCard)
        assert card.map is not None
        broken = Violation("conservation", "allocated + cached + free != cap", pool.label)
        card.update_pool(pool, broken, None, Palette())  # the violation: one line more
        await pilot.pause()
        head, height = card.head.size.height, card.map.styles.height
        app.screen.grow_only = True  # type: ignore[attr-defined]
        card.update_pool(pool, None, None, Palette())
        await pilot.pause()
        assert card.head.size.height == head and card.map.styles.height == height
        app.screen.grow_only = False  # type: ignore[attr-defined]
        card.update_pool(pool, None, None, Palette())  # fitted: the map takes the line back
        await pilot.pause()
        assert card.head.size.height == head - 1
        assert card.map.styles.height is not None and height is not None
        assert card.map.styles.height.value == height.value + 1
