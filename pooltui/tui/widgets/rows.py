"""`TextRows`: a panel's body of many rows on the Line API.

Owns drawing rows of rich text where only the rows on screen are made and rendered, each
once per change (cached strips). The Stages panel of a full GPU lists 256 residents and the
Queue panel up to 200 holds per pool: as one Static text, every frame of a run built and
rendered all of them, most of the screen's time and the time a `space` waited behind it.
A row is a `Text` or a function that makes it, called only when the row is drawn."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.style import Style
from rich.text import Text
from textual.geometry import Size
from textual.strip import Strip
from textual.widget import Widget

from pooltui.tui.messages import SafeRender

Row = Text | Callable[[], Text]


def rows_of(text: Text) -> list[Row]:
    """A text's lines as rows (a text ending in a newline ends in a blank row)."""
    return list(text.split("\n", allow_blank=True))


class TextRows(SafeRender, Widget):
    """Rows of text, never wrapped: a row wider than the widget ends in an ellipsis. Its
    height is its row count (it scrolls in its panel); it takes its panel's width."""

    DEFAULT_CSS = """
    TextRows {
        width: 1fr;
        height: auto;
    }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._rows: list[Row] = [Text()]
        self._strips: dict[int, Strip] = {}
        self._strips_for: tuple[int, Style] | None = None  # the width and style they fit

    @property
    def content(self) -> Text:
        """The whole text shown, every row made (as a Static's `content`; for tests)."""
        return Text("\n").join(self._row(y) for y in range(len(self._rows)))

    def update_rows(self, rows: Sequence[Row], *, grow_only: bool = False) -> None:
        """Show `rows`; the screen is laid out again only when their count changes.
        `grow_only` (while a run goes): fewer rows keep the height it had (blank rows at
        the end), so a run's frames re-lay the screen out only when the panel grows."""
        before = len(self._rows)
        new = list(rows) or [Text()]
        if grow_only and len(new) < before:
            new.extend(Text() for _ in range(before - len(new)))
        if all(isinstance(r, Text) for r in new) and new == self._rows:
            return  # the same text: nothing to draw again
        self._rows = new
        self._strips.clear()
        self.refresh(layout=len(new) != before)

    def _row(self, y: int) -> Text:
        row = self._rows[y]
        if not isinstance(row, Text):
            row = self._rows[y] = row()  # made once
        return row

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._rows)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        style = self.rich_style
        if self._strips_for != (width, style):
            self._strips.clear()
            self._strips_for = (width, style)
        strip = self._strips.get(y)
        if strip is None:
            if 0 <= y < len(self._rows):
                row = self._row(y).copy()
                row.truncate(width, overflow="ellipsis")
                strip = Strip(list(row.render(self.app.console)), row.cell_len)
                strip = strip.apply_style(style).crop_extend(0, width, style)
            else:
                strip = Strip.blank(width, style)
            self._strips[y] = strip
        return strip
