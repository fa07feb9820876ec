"""What a pause redraws (issue 13: `space` answered within 100 ms). Decisions in
docs/decisions.md ("The debugger"): a run's frames only grow the panels' heights, its
last frame (the pause) too, and the next step fits them again; a text in a tab not shown
lays nothing out; the app's `running` repaints nothing by itself (a repaint of the app is
the whole screen, every panel rendered again).
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import App, ComposeResult
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Static, TabbedContent, TabPane

from pooltui.tui.widgets.panels import set_text
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
