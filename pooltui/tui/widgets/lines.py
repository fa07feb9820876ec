"""A ScrollView on the Line API whose rows never raise: a row that fails draws blank, so a
repaint can never show a traceback to the user; and `StylePerRepaint`, the widget's style
looked up once per repaint rather than once per row; `grows_only`, whether heights only grow
now (a run and its pause)."""

from __future__ import annotations

from rich.style import Style
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widget import Widget

from pooltui.tui.messages import report_failure


def grows_only(widget: Widget) -> bool:
    """Whether heights only grow now: a run goes on or has just ended (the debugger
    screen's `grow_only`, which the app sets)."""
    return bool(getattr(widget.screen, "grow_only", False)) if widget.is_attached else False


class StylePerRepaint(Widget):
    """A mixin for Line-API widgets: `line_style` is the widget's `rich_style`, looked up
    once per repaint. `rich_style` walks every ancestor's styles (~70 µs here) and a repaint
    draws dozens of rows: looked up per row it was a third of drawing a paused frame. Within
    one `render_lines` the styles cannot change; outside it (a row drawn another way) the
    lookup is made each time, as before. Put it after the widget's Textual base: Textual
    takes a widget's default CSS from its first base only."""

    _repaint_style: Style | None = None

    def render_lines(self, crop: Region) -> list[Strip]:
        self._repaint_style = self.rich_style
        try:
            return super().render_lines(crop)
        finally:
            self._repaint_style = None

    @property
    def line_style(self) -> Style:
        style = self._repaint_style
        return style if style is not None else self.rich_style


class TextLines(ScrollView, StylePerRepaint):
    """Subclasses draw row `y` in `_line`; the text takes the widget's own colour."""

    def _line(self, y: int) -> Strip:  # pragma: no cover - every subclass has its own
        raise NotImplementedError

    def set_virtual_size(self, size: Size) -> None:
        """The scrollable size, set without laying the screen out again: the widget's own
        size is the layout's, not its content's, so only its scrollbars follow (a log that
        grows every frame of a run would otherwise re-lay the whole screen out each time)."""
        if size == self.virtual_size:
            return
        self.set_reactive(ScrollView.virtual_size, size)
        self._scroll_update(size)
        self.refresh()

    def render_line(self, y: int) -> Strip:
        try:
            return self._line(y).apply_style(Style(color=self.line_style.color))
        except Exception as exc:  # never a traceback from a repaint: blank, and said once
            if not getattr(self, "_pooltui_line_failed", False):
                self._pooltui_line_failed = True
                report_failure(self, f"{type(self).__name__}.render_line", exc)
            return Strip.blank(self.size.width, Style(bgcolor=self.line_style.bgcolor))
