"""The event log: every recorded event, newest last, on the Line API (a million is fine).

The current event (the cursor) is highlighted; events ahead of it (after going back) are
dimmed. Clicking an event, or choosing it with the keys and enter, goes there in time.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
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

from pooltui.lang.words import number
from pooltui.sim.events import Event
from pooltui.tui.colors import session_hex
from pooltui.tui.widgets.lines import TextLines

# A moment's colour is a component class (theme variables, in DEFAULT_CSS) by its kind.
MOMENT_KINDS = {
    "admit": "good",
    "reject": "bad",
    "preempt": "warn",
    "grow-wait": "warn",
    "evict": "muted",
    "spill": "spill",
    "spilled": "spill",
    "spill-drop": "bad",
    "reload": "spill",
    "reloaded": "spill",
    "check-failed": "bad",
    "deadlock": "bad",
}


PREFIX = 1 + 7 + 10 + 13 + 11  # marker, index, time, moment, session
SCAN_STRETCH = 65536  # events a filter reads at a time (a tenth of a second or so)


class EventLog(TextLines, can_focus=True):
    """Every recorded event; the app sets `cursor` (the current one) and adds events."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "event-log--line",
        "event-log--cursor",
        "event-log--selected",
        "event-log--index",
        "event-log--moment",
        "event-log--good",
        "event-log--bad",
        "event-log--warn",
        "event-log--muted",
        "event-log--spill",
    }
    DEFAULT_CSS = """
    EventLog > .event-log--line { background: $surface; }
    EventLog > .event-log--cursor { background: $primary 50%; text-style: bold; }
    EventLog > .event-log--selected { background: $foreground 15%; }
    EventLog > .event-log--index { color: $text-muted; }
    EventLog > .event-log--moment { color: $primary; text-style: bold; }
    EventLog > .event-log--good { color: $success; text-style: bold; }
    EventLog > .event-log--bad { color: $error; text-style: bold; }
    EventLog > .event-log--warn { color: $warning; text-style: bold; }
    EventLog > .event-log--muted { color: $text-muted; text-style: bold; }
    EventLog > .event-log--spill { color: $accent; text-style: bold; }
    """

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

    class Selected(Message):
        """The row under the log's selection changed (the keys or a click)."""

        def __init__(self, index: int | None) -> None:
            super().__init__()
            self.index = index

    cursor: reactive[int] = reactive(-1, always_update=True, repaint=False)  # the app sets it
    selected: reactive[int | None] = reactive(None, layout=False)

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        # The log as the last frame carried it: a view of the simulator's own (events are
        # built when a row is drawn), not copies.
        self.events: Sequence[Event] = ()
        self.future_style = Style(dim=True)
        self._cache: LRUCache[tuple[int, int, int, int], Strip] = LRUCache(512)
        self._generation = 0
        self._widest = 0
        # A filter: (moments, sessions or classes); `_rows` the indices it shows, in order.
        self.filter: tuple[frozenset[str], frozenset[str]] | None = None
        self._rows: list[int] | None = None
        self._scanned = 0  # the events `_rows` covers so far

    # ----------------------------------------------------------------- the filter
    def matches(self, ev: Event) -> bool:
        if self.filter is None:
            return True
        moments, sessions = self.filter
        if moments and ev.moment not in moments:
            return False
        if not sessions:
            return True
        names = (ev.session, ev.session_class, *ev.others)
        return any(name in sessions for name in names if name)

    def set_filter(self, flt: tuple[frozenset[str], frozenset[str]] | None) -> None:
        """Show only the matching events (None: all); cheap to extend as events come."""
        if flt is not None and not flt[0] and not flt[1]:
            flt = None
        self.filter = flt
        self._rows = None if flt is None else []
        self._scanned = 0
        self._scan()  # the first stretch at once; a long log goes on after the next frames
        self._generation += 1
        self._cache.clear()
        self._update_size()
        self.refresh()
        self.call_after_refresh(self._follow, self.cursor, 20)

    @property
    def row_count(self) -> int:
        return len(self.events) if self._rows is None else len(self._rows)

    def index_of_row(self, row: int) -> int | None:
        if self._rows is None:
            return row if 0 <= row < len(self.events) else None
        return self._rows[row] if 0 <= row < len(self._rows) else None

    def row_of_index(self, index: int) -> int:
        """The row that shows event `index`, or (filtered out) the row of the next shown."""
        if self._rows is None:
            return index
        return bisect.bisect_left(self._rows, index)

    def _matching(self, start: int, stop: int) -> list[int]:
        """The indices from `start` to `stop` that the filter shows."""
        assert self.filter is not None
        moments, sessions = self.filter
        events = self.events
        find_moments = getattr(events, "find_moments", None)
        find_parties = getattr(events, "find_parties", None)
        if find_moments is None or find_parties is None:  # a plain sequence of events
            return [i for i in range(start, stop) if self.matches(events[i])]
        # The simulator's log, a million events maybe: read from its packed storage.
        by_moment = find_moments(start, moments, stop) if moments else None
        if not sessions:
            return by_moment if by_moment is not None else list(range(start, stop))
        by_party = find_parties(start, sessions, stop)
        if by_moment is None:
            return list(by_party)
        keep = set(by_moment)
        return [i for i in by_party if i in keep]

    def _scan(self) -> None:
        """Extend the filter's rows over the next stretch of the log; while some is left,
        again after the screen has been drawn (a session's events among a million take
        seconds to find: the keys and the frames go on meanwhile)."""
        if self._rows is None:
            return
        stop = min(len(self.events), self._scanned + SCAN_STRETCH)
        if stop > self._scanned:
            self._rows.extend(self._matching(self._scanned, stop))
            self._scanned = stop
            self._generation += 1
            self._cache.clear()
            self._update_size()
            self.refresh()
        if self._scanned < len(self.events) and self.is_attached:
            self.call_after_refresh(self._scan)

    @property
    def filtering(self) -> bool:
        """A filter is still being applied to the log (its rows are not all there yet)."""
        return self._rows is not None and self._scanned < len(self.events)

    def add_events(self, start: int, events: Sequence[Event]) -> None:
        """The log is now `events` (the whole of it); those from `start` on are new here
        (an earlier `start` than the log's length: the log was replaced from there)."""
        old = len(self.events)
        self.events = events
        start = min(start, old)
        if start >= len(events) and old == len(events):
            return
        if self._rows is not None:
            scanning = self._scanned < old
            if start < self._scanned:  # replaced from there: find its rows again
                del self._rows[bisect.bisect_left(self._rows, start) :]
                self._scanned = start
            if not scanning:
                self._scan()
        # Long whys scroll sideways rather than being lost.
        widest = getattr(events, "widest", None)
        if widest is None:
            widest = max((len(events[i].why) for i in range(start, len(events))), default=0)
        self._widest = max(self._widest if start else 0, PREFIX + widest)
        self._update_size()
        self._cache.clear()
        self.refresh()

    def watch_cursor(self, index: int) -> None:
        self._generation += 1
        # At once (the virtual size is set without a layout, so the scroll is not clamped
        # short), so a frame is drawn once, already scrolled; `_follow` tries again after
        # the next refresh when the layout has not caught up (a resize, the first frame).
        self._follow(index, 20)
        self.refresh()

    def _follow(self, index: int, tries: int) -> None:
        """Bring the current event into view; while the layout has not caught up with new
        events (the scroll is clamped short), try again after the next refresh."""
        if index != self.cursor:
            return  # a newer cursor follows itself
        self.scroll_to_index(index)
        if tries > 0 and not self.shows(index):
            self.call_after_refresh(self._follow, index, tries - 1)

    def shows(self, index: int) -> bool:
        """Whether event `index` (its row) is in view (or there is nothing to show)."""
        top, height = self.scroll_offset.y, self.scrollable_content_region.height
        if index < 0 or height <= 0:
            return True
        row = self.row_of_index(index)
        return row >= self.row_count or top <= row < top + height

    def scroll_to_index(self, index: int, always: bool = False) -> None:
        """Bring event `index` into view (near the bottom). Only when it is out of view,
        unless `always`: a screenshot must not depend on where earlier frames left it."""
        height = max(1, self.scrollable_content_region.height)
        top = self.scroll_offset.y
        row = min(self.row_of_index(max(0, index)), max(0, self.row_count - 1))
        if always or row < top or row >= top + height:
            self.scroll_to(y=max(0, row - height + 2), animate=False, immediate=True)

    def watch_selected(self, selected: int | None) -> None:
        self._generation += 1
        self.refresh()
        self.post_message(self.Selected(selected))

    def event_at(self, index: int) -> Event | None:
        return self.events[index] if 0 <= index < len(self.events) else None

    def notify_style_update(self) -> None:
        """The theme changed: every row is drawn again in its colours."""
        super().notify_style_update()
        self._cache.clear()

    def _style(self, name: str) -> Style:
        return self.get_component_rich_style(f"event-log--{name}", partial=True)

    def _row_style(self, name: str) -> Style:
        # Only the background (its alpha composited over the panel) and the emphasis.
        full = self.get_component_rich_style(f"event-log--{name}")
        return Style(bgcolor=full.bgcolor, bold=full.bold)

    def line_text(self, ev: Event) -> list[tuple[str, Style]]:
        who = ev.session or ""
        moment_style = self._style(MOMENT_KINDS.get(ev.moment, "moment"))
        return [
            (f"{ev.index:>6} ", self._style("index")),
            (f"{number(ev.time, 5):>8}s ", Style()),
            (f"{ev.moment:<13}", moment_style),
            (f"{who:<10} ", Style(color=session_hex(ev.session_id), bold=True) if who else Style()),
            (ev.why, Style()),
        ]

    def _line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        row = y + scroll_y
        base = Style(bgcolor=self.get_component_rich_style("event-log--line").bgcolor)
        index = self.index_of_row(row)
        if index is None:
            if self.row_count == 0 and y == 0:
                empty = "no event yet: press n to step"
                if self.filtering:
                    empty = "filtering…"
                elif self.events:
                    empty = "no event matches the filter (/ changes it)"
                return Strip([Segment(empty, Style(dim=True, italic=True))]).crop_extend(
                    0, width, base
                )
            return Strip.blank(width, base)
        key = (self._generation, row, width, scroll_x)
        strip = self._cache.get(key)
        if strip is not None:
            return strip
        ev = self.events[index]
        row = index
        row_style = base
        if row == self.cursor:
            row_style = base + self._row_style("cursor")
        elif row == self.selected:
            row_style = base + self._row_style("selected")
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
        self.set_virtual_size(Size(width, self.row_count))

    def on_resize(self, event: events.Resize) -> None:
        self._update_size()
        self._cache.clear()

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        index = self.index_of_row(offset.y + self.scroll_offset.y)
        if index is not None:
            self.selected = index
            self.post_message(self.Chosen(index))

    def action_select(self, delta: int) -> None:
        if not self.row_count:
            return
        start = self.selected if self.selected is not None else max(0, self.cursor)
        row = self.row_of_index(start)
        if delta < 0 or self._rows is None or (row < self.row_count and self._rows[row] == start):
            row += delta
        row = max(0, min(self.row_count - 1, row))
        self.selected = self.index_of_row(row)
        if self.selected is not None:
            self.scroll_to_index(self.selected)

    def action_select_edge(self, end: int) -> None:
        if self.row_count:
            self.selected = self.index_of_row(self.row_count - 1 if end else 0)
            if self.selected is not None:
                self.scroll_to_index(self.selected)

    def action_choose(self) -> None:
        if self.selected is not None:
            self.post_message(self.Chosen(self.selected))
