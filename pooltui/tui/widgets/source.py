"""The spec's text, with the statement behind the current event highlighted (Line API).

Each row is drawn once per look (its text, where the statement's highlight and mark fall
on it, the scroll, the width) and kept: a paused frame moves the highlight, so the rows
around it are drawn again and the others are taken as they were (drawn character by
character, the visible rows were 3-4 ms of each paused frame's update)."""

from __future__ import annotations

from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.geometry import Size
from textual.reactive import reactive
from textual.strip import Strip

from pooltui.lang.errors import shown_line
from pooltui.lang.ir import Span
from pooltui.tui.widgets.lines import TextLines


class SourceView(TextLines, can_focus=True):
    """The spec's lines; the app sets `span` to the statement behind the current event."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "source-view--line",
        "source-view--gutter",
        "source-view--statement",
        "source-view--mark",
        "source-view--comment",
    }
    DEFAULT_CSS = """
    SourceView > .source-view--line { background: $surface; }
    SourceView > .source-view--gutter { color: $text-muted; }
    SourceView > .source-view--statement { background: $warning 15%; }
    SourceView > .source-view--mark { background: $warning 45%; text-style: bold; }
    SourceView > .source-view--comment { color: $success 80%; text-style: italic; }
    """

    span: reactive[Span | None] = reactive(None, repaint=False)

    DRAWN_KEPT = 512  # rows kept drawn (a few screens of them, at a few highlights)

    def __init__(self, source: str = "", **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._drawn: dict[tuple[int, ...], Strip] = {}
        # As `pooltui check` quotes them: a CRLF spec's CR, a comment's escape sequence
        # drawn raw drove the terminal (the cursor back to column 1 mid-row, the screen
        # cleared).
        self.lines = [shown_line(line) for line in source.split("\n")]
        if self.lines and self.lines[-1] == "":
            self.lines.pop()
        self.gutter_width = len(str(len(self.lines))) + 3
        self._update_size()

    def _update_size(self) -> None:
        longest = max((len(line) for line in self.lines), default=0)
        self.virtual_size = Size(longest + self.gutter_width + 1, len(self.lines))

    def on_resize(self, event: events.Resize) -> None:
        self._update_size()

    def notify_style_update(self) -> None:
        """The theme changed: every row is drawn again in its colours."""
        super().notify_style_update()
        self._drawn.clear()

    def watch_span(self, span: Span | None) -> None:
        if span is not None and span.line >= 1:
            if self.scrollable_content_region.height > 0:
                self._scroll_to_span(span)  # in this update (after it, a second: 16+ ms)
            else:  # not laid out yet: once it is
                self.call_after_refresh(self._scroll_to_span, span)
        self.refresh()

    def _scroll_to_span(self, span: Span, always: bool = False) -> None:
        height = max(1, self.scrollable_content_region.height)
        top = self.scroll_offset.y
        row = span.line - 1
        if always or row < top or row >= top + height - 1:
            self.scroll_to(y=max(0, row - height // 3), animate=False, immediate=True)

    def place(self) -> None:
        """Scroll the statement behind the event to its usual place (a third down), wherever
        earlier frames left the view: a screenshot must not depend on them."""
        if self.span is not None and self.span.line >= 1:
            self._scroll_to_span(self.span, always=True)

    def _line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        row = y + scroll_y
        lineno = row + 1
        span = self.span
        in_span = span is not None and span.line <= lineno <= span.end_line
        start_col = end_col = 0
        if in_span and span is not None:
            start_col = span.col - 1 if lineno == span.line else 0
            end_col = span.end_col - 1 if lineno == span.end_line else -1  # -1: to its end
        marked = span is not None and lineno == span.line
        key = (row, in_span, marked, start_col, end_col, scroll_x, width)
        strip = self._drawn.get(key)
        if strip is None:
            if len(self._drawn) >= self.DRAWN_KEPT:
                self._drawn.clear()
            whole = self._draw(row, in_span, marked, start_col, end_col)
            strip = whole.crop_extend(scroll_x, scroll_x + width, self._row_base(in_span))
            self._drawn[key] = strip
        return strip

    def _row_base(self, in_span: bool) -> Style:
        base = Style(bgcolor=self.get_component_rich_style("source-view--line").bgcolor)
        statement = self.get_component_rich_style("source-view--statement")
        return base + Style(bgcolor=statement.bgcolor) if in_span else base

    def _draw(self, row: int, in_span: bool, marked: bool, start_col: int, end_col: int) -> Strip:
        """Row `row` whole (not cropped to the view), the statement's columns
        [start_col, end_col) marked (end_col -1: to the end of the row)."""
        row_base = self._row_base(in_span)
        if row >= len(self.lines):
            return Strip.blank(0, row_base)
        text = self.lines[row]
        lineno = row + 1
        gutter_style = row_base + self.get_component_rich_style("source-view--gutter", partial=True)
        marker = "▶" if marked else " "
        segments = [Segment(f"{marker}{lineno:>{self.gutter_width - 3}} │", gutter_style)]
        # Comments dimmed; the span's columns marked.
        hash_at = text.find("#")
        comment_style = row_base + self.get_component_rich_style(
            "source-view--comment", partial=True
        )
        mark = self.get_component_rich_style("source-view--mark")
        mark_style = Style(bgcolor=mark.bgcolor, bold=True)
        if in_span:
            if end_col < 0:
                end_col = len(text)
            start_col = max(0, start_col)
            end_col = max(start_col, min(len(text), end_col))
        for i, ch in enumerate(text):
            style = row_base
            if hash_at >= 0 and i >= hash_at:
                style = comment_style
            if start_col <= i < end_col:
                style = style + mark_style
            segments.append(Segment(ch, style))
        return Strip(Segment.simplify(segments))
