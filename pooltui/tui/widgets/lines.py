"""A ScrollView on the Line API whose rows never raise: a row that fails draws blank, so a
repaint can never show a traceback to the user."""

from __future__ import annotations

from rich.style import Style
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from pooltui.tui.messages import report_failure


class TextLines(ScrollView):
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
            return self._line(y).apply_style(Style(color=self.rich_style.color))
        except Exception as exc:  # never a traceback from a repaint: blank, and said once
            if not getattr(self, "_pooltui_line_failed", False):
                self._pooltui_line_failed = True
                report_failure(self, f"{type(self).__name__}.render_line", exc)
            return Strip.blank(self.size.width, Style(bgcolor=self.rich_style.bgcolor))
