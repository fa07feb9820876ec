"""`TextRows`: a panel's body of many rows on the Line API.

Owns drawing rows of rich text where only the rows on screen are made and rendered, each
once per change (cached strips), in a scroll view of its own whose size changes without
laying the screen out again. The Stages panel of a full GPU lists 256 residents and the
Queue panel up to 200 holds per pool: as one Static text, every frame of a run built and
rendered all of them, and a change in their count laid the whole screen out, most of the
screen's time and the time a `space` waited behind it. A row is a `Text` or a function
that makes it, called only when the row is drawn."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.style import Style
from rich.text import Text
from textual.geometry import Size
from textual.strip import Strip

from pooltui.tui.widgets.lines import TextLines, grows_only

Row = Text | Callable[[], Text]


class TextRows(TextLines):
    """Rows of text, never wrapped: a row wider than the widget ends in an ellipsis. It
    fills its panel and scrolls its rows."""

    DEFAULT_CSS = """
    TextRows {
        height: 1fr;
        overflow-x: hidden;
    }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._rows: list[Row] = [Text()]
        self._height = 1  # rows scrolled over: the rows', or more while heights only grow
        self._strips: dict[int, Strip] = {}
        self._strips_for: tuple[int, int, Style] | None = None  # scroll, width, style

    @property
    def content(self) -> Text:
        """The whole text shown, every row made (as a Static's `content`; for tests)."""
        return Text("\n").join(self._row(y) for y in range(len(self._rows)))

    def update_rows(self, rows: Sequence[Row]) -> None:
        """Show `rows`: a change in their count changes the scrollable size only, never
        the screen's layout. While heights only grow (a run, its pause), that size only
        grows too (blank rows at its end): a scroll bar that came and went with the count
        laid the screen out each time, after a paused frame too."""
        self._rows = list(rows) or [Text()]
        self._strips.clear()
        self._height = len(self._rows)
        if grows_only(self):
            self._height = max(self._height, self.virtual_size.height)
        self.set_virtual_size(Size(self.scrollable_content_region.width, self._height))
        self.refresh()

    def _row(self, y: int) -> Text:
        row = self._rows[y]
        if not isinstance(row, Text):
            row = self._rows[y] = row()  # made once
        return row

    def on_resize(self) -> None:
        self.set_virtual_size(Size(self.scrollable_content_region.width, self._height))

    def _line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        style = self.line_style
        scroll_y = self.scroll_offset.y
        if self._strips_for != (scroll_y, width, style):
            self._strips.clear()
            self._strips_for = (scroll_y, width, style)
        strip = self._strips.get(y)
        if strip is None:
            row = y + scroll_y
            if 0 <= row < len(self._rows):
                text = self._row(row).copy()
                text.truncate(width, overflow="ellipsis")
                strip = Strip(list(text.render(self.app.console)), text.cell_len)
                strip = strip.apply_style(style).crop_extend(0, width, style)
            else:
                strip = Strip.blank(width, style)
            self._strips[y] = strip
        return strip
