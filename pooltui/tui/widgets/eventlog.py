"""The event log: every recorded event, newest last, on the Line API (a million is fine).

The current event (the cursor) is highlighted; events ahead of it (after going back) are
dimmed. Clicking an event, or choosing it with the keys and enter, goes there in time.
"""

from __future__ import annotations

from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip

from pooltui.sim.events import Event
from pooltui.tui.colors import session_hex
from pooltui.tui.widgets.lines import TextLines

MOMENT_COLOURS = {
    "admit": "#5fc46a",
    "reject": "#d9534f",
    "preempt": "#e6994e",
    "evict": "#a0a0a0",
    "spill": "#a07ad6",
    "spilled": "#a07ad6",
    "spill-drop": "#d9534f",
    "check-failed": "#ff4444",
    "deadlock": "#ff4444",
    "grow-wait": "#e6994e",
}


PREFIX = 1 + 7 + 10 + 13 + 11  # marker, index, time, moment, session


class EventLog(TextLines, can_focus=True):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "select(-1)", "Previous event", show=False, id="log.previous"),
        Binding("down", "select(1)", "Next event", show=False, id="log.next"),
        Binding("enter", "choose", "Go to event", id="log.choose"),
        Binding("home", "select_edge(0)", "First event", show=False, id="log.first"),
        Binding("end", "select_edge(1)", "Last event", show=False, id="log.last"),
    ]

    class Chosen(Message):
        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    cursor: reactive[int] = reactive(-1, layout=False)
    selected: reactive[int | None] = reactive(None, layout=False)

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.events: list[Event] = []
        self.highlight_style = Style(bgcolor="#30507a", bold=True)
        self.select_style = Style(bgcolor="#404040")
        self.future_style = Style(dim=True)
        self.background = "#1e1e1e"
        self._cache: LRUCache[tuple[int, int, int, int], Strip] = LRUCache(512)
        self._generation = 0
        self._widest = 0

    def add_events(self, start: int, new: tuple[Event, ...]) -> None:
        if not new:
            return
        if start < len(self.events):
            del self.events[start:]
        self.events.extend(new)
        # Long whys scroll sideways rather than being lost.
        self._widest = max(self._widest, max(PREFIX + len(e.why) for e in new))
        self._update_size()
        self._cache.clear()
        self.refresh()

    def set_cursor(self, index: int, follow: bool = True) -> None:
        self.cursor = index
        self._generation += 1
        if follow:
            # After the layout has taken the new virtual size, or scroll_to clamps short.
            self.call_after_refresh(self.scroll_to_index, index)
        self.refresh()

    def scroll_to_index(self, index: int) -> None:
        height = max(1, self.scrollable_content_region.height)
        top = self.scroll_offset.y
        if index < top or index >= top + height:
            self.scroll_to(y=max(0, index - height + 2), animate=False)

    def watch_selected(self) -> None:
        self._generation += 1
        self.refresh()

    def line_text(self, ev: Event) -> list[tuple[str, Style]]:
        who = ev.session or ""
        moment_style = Style(color=MOMENT_COLOURS.get(ev.moment, "#4e9ae6"), bold=True)
        return [
            (f"{ev.index:>6} ", Style(color="#808080")),
            (f"{ev.time:>8.5g}s ", Style()),
            (f"{ev.moment:<13}", moment_style),
            (f"{who:<10} ", Style(color=session_hex(ev.session_id), bold=True) if who else Style()),
            (ev.why, Style()),
        ]

    def _line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        row = y + scroll_y
        base = Style(bgcolor=self.background)
        if row >= len(self.events):
            if not self.events and y == 0:
                return Strip(
                    [Segment("no event yet: press n to step", Style(dim=True, italic=True))]
                ).crop_extend(0, width, base)
            return Strip.blank(width, base)
        key = (self._generation, row, width, scroll_x)
        strip = self._cache.get(key)
        if strip is not None:
            return strip
        ev = self.events[row]
        row_style = base
        if row == self.cursor:
            row_style = base + self.highlight_style
        elif row == self.selected:
            row_style = base + self.select_style
        elif row > self.cursor:
            row_style = base + self.future_style
        segments = [Segment(text, row_style + style) for text, style in self.line_text(ev)]
        if row == self.cursor:
            segments.insert(0, Segment("▶", row_style))
        else:
            segments.insert(0, Segment(" ", row_style))
        strip = Strip(segments).crop_extend(scroll_x, scroll_x + width, row_style)
        self._cache[key] = strip
        return strip

    def _update_size(self) -> None:
        width = max(self.scrollable_content_region.width, self._widest)
        self.virtual_size = Size(width, len(self.events))

    def on_resize(self, event: events.Resize) -> None:
        self._update_size()
        self._cache.clear()

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        row = offset.y + self.scroll_offset.y
        if 0 <= row < len(self.events):
            self.selected = row
            self.post_message(self.Chosen(row))

    def action_select(self, delta: int) -> None:
        if not self.events:
            return
        start = self.selected if self.selected is not None else max(0, self.cursor)
        self.selected = max(0, min(len(self.events) - 1, start + delta))
        self.scroll_to_index(self.selected)

    def action_select_edge(self, end: int) -> None:
        if self.events:
            self.selected = len(self.events) - 1 if end else 0
            self.scroll_to_index(self.selected)

    def action_choose(self) -> None:
        if self.selected is not None:
            self.post_message(self.Chosen(self.selected))
