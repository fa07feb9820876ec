"""A ScrollView on the Line API whose rows never raise: a row that fails draws blank, so a
repaint can never show a traceback to the user."""

from __future__ import annotations

from rich.style import Style
from textual.scroll_view import ScrollView
from textual.strip import Strip


class TextLines(ScrollView):
    """Subclasses draw row `y` in `_line`; the text takes the widget's own colour."""

    def _line(self, y: int) -> Strip:  # pragma: no cover - every subclass has its own
        raise NotImplementedError

    def render_line(self, y: int) -> Strip:
        try:
            return self._line(y).apply_style(Style(color=self.rich_style.color))
        except Exception:  # never a traceback from a repaint
            return Strip.blank(self.size.width, Style(bgcolor=self.rich_style.bgcolor))
