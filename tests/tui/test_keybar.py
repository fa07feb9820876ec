"""The key bar (the footer line): what Textual's Footer showed, drawn as one line, and a
change of the keys that apply (every `c`, every `space`) re-renders that line instead of
mounting a widget per key again (the 70 ms a key typed during a run waited behind)."""

from __future__ import annotations

import re
from typing import ClassVar

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.widget import Widget
from textual.widgets import Footer, Static

from pooltui.tui.app import PoolApp
from pooltui.tui.screens import WatchesScreen
from pooltui.tui.widgets.keybar import KeyBar
from tests.tui.conftest import SIZE, make_app, settle, start_slow_run


def bar_text(app: PoolApp) -> str:
    bar = app.screen.query_one(KeyBar)
    return bar.render_line(0).text


async def test_the_keys_follow_the_state_without_mounting_anything() -> None:
    """At the start Back does not apply (check_action hides it) and Pause neither (nothing
    runs); while a run goes on, Pause is there; paused again, it is gone. Through all of
    it the screen's widgets are the same ones: nothing was mounted or removed."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        first = bar_text(app)
        assert " → Step " in first and " c Continue " in first
        assert "Back" not in first and "Pause" not in first
        widgets = {id(w) for w in app.screen.query(Widget)}
        await start_slow_run(pilot)
        await pilot.pause()
        running = bar_text(app)
        assert " space Pause " in running and " ← Back " in running
        await pilot.press("space")
        await settle(pilot)
        assert not app.running
        paused = bar_text(app)
        assert "Pause" not in paused and " ← Back " in paused
        assert {id(w) for w in app.screen.query(Widget)} == widgets
        assert not app.screen.query_one(KeyBar).children


async def test_clicking_a_key_presses_it() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        text = bar_text(app)
        x = text.index("Step")  # the description is part of the key, as in the Footer
        await pilot.click(KeyBar, offset=(x, 0))
        await settle(pilot)
        assert app.snapshot is not None and app.snapshot.event_index == 0


async def test_the_palette_key_stays_on_the_right() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        text = bar_text(app)
        assert len(text) == SIZE[0]
        assert text.endswith("▏^p Commands ")


class Both(App[None]):
    """Textual's Footer or the key bar over the same bindings: one enabled, one disabled
    (check_action None: dimmed), one hidden (False), one not shown (show=False)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit"),
        Binding("question_mark,f1", "help", "Help"),
        Binding("n,right", "step", "Step"),
        Binding("x", "hidden", "Hidden"),
        Binding("z", "quiet", "Quiet", show=False),
    ]

    def __init__(self, footer: bool, compact: bool) -> None:
        super().__init__()
        self.footer, self.compact = footer, compact

    def compose(self) -> ComposeResult:
        yield Static("body")
        bar: Widget = Footer(compact=self.compact) if self.footer else KeyBar()
        if isinstance(bar, KeyBar):
            bar.compact = self.compact
        yield bar

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return {"help": None, "hidden": False}.get(action, True)


async def screenshot(footer: bool, compact: bool, width: int) -> str:
    app = Both(footer, compact)
    async with app.run_test(size=(width, 4)) as pilot:
        await pilot.pause()
        await pilot.pause(0.1)  # the Footer composes its keys after a refresh
        # The SVG's class prefix is a hash of everything drawn, offsets of the mouse
        # included (a widget per key counts from its own left): not part of the picture.
        return re.sub(r"terminal-\d+", "terminal", app.export_screenshot(title="bar"))


async def test_it_looks_as_textuals_footer() -> None:
    """The same cells, characters and styles as the Footer it replaces, wide and compact,
    with room to spare and with keys under the palette key."""
    for compact in (False, True):
        for width in (100, 40):
            footer = await screenshot(True, compact, width)
            bar = await screenshot(False, compact, width)
            assert footer == bar, (compact, width)


async def test_a_line_drawn_before_comes_back_with_its_own_keys() -> None:
    """A run and a pause alternate two sets of keys, and the bar keeps each line drawn.
    The second pause shows the first pause's line, and a click lands on the key drawn
    there, not where the running line had it: while running, `space Pause` comes before
    `w Watches`, so Watches sits further right (and the paused line's Watches is where
    the running line has Breakpoints)."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await start_slow_run(pilot)
        running = bar_text(app)
        await pilot.press("space")
        await settle(pilot)
        paused = bar_text(app)
        x = paused.index("Watches")
        key = running.index(" b Breakpoints ")  # the case this test is for:
        assert key <= x < key + len(" b Breakpoints ")
        await start_slow_run(pilot)
        assert bar_text(app) == running
        await pilot.press("space")
        await settle(pilot)
        assert bar_text(app) == paused
        await pilot.click(KeyBar, offset=(x, 0))
        await pilot.pause()
        assert isinstance(app.screen, WatchesScreen)


async def test_a_theme_change_redraws_the_keys_in_its_colours() -> None:
    """The lines kept drawn are of the theme they were drawn in."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        bar = app.screen.query_one(KeyBar)
        dark = bar.render_line(0)
        app.theme = "textual-light"
        await pilot.pause()
        light = bar.render_line(0)
        assert light.text == dark.text
        assert [s.style for s in light] != [s.style for s in dark]
