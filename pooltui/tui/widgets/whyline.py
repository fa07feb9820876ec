"""The why line under the panels: the current (or selected) event's whole why, wrapped.

It takes as many lines as the why wraps to, up to a third of the screen (`cap`); a longer
why shows a window of its lines that the mouse wheel over it scrolls, and a last line
that says, with a `…`, how many lines are above and below and that the Details tab has it
all. A why is never cut without a sign (a fixed five lines cut a long one silently).
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual import events
from textual.geometry import Size
from textual.widgets import Static

from pooltui.tui.widgets.statictext import set_text

SCROLL = 2  # lines a notch of the mouse wheel moves


def cap(height: int) -> int:
    """The most lines the why takes on a screen `height` rows high (its sign included)."""
    return max(3, height // 3)


class WhyLine(Static):
    """The why: whole while it fits in `cap` lines, else a scrolled window and a sign."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(markup=False, **kwargs)  # type: ignore[arg-type]
        self.why = Text()
        self.top = 0  # the first line of the window, when the why does not fit
        self.lines = 0  # the lines the why wraps to at the width last drawn (0: not known)
        self._grow_only = False
        self._width = 0  # the width last laid out at
        self._drawn_at: Size | None = None  # the screen's size at the last draw

    def show(self, why: Text, *, grow_only: bool = False) -> None:
        """Show `why` (from its first line when it is a new one)."""
        if why != self.why:
            self.why, self.top = why, 0
        self._grow_only = grow_only
        self._draw()

    def _draw(self) -> None:
        most = cap(self.app.size.height)
        if self.styles.max_height is None or self.styles.max_height.value != most:
            self.styles.max_height = most  # the screen's size changed
        # Heights only grow (a run's frames) on the screen they grew on: a new size is laid
        # out anew anyway, so the why fits it (kept, the height of its lines at 160
        # columns left a blank row under them at 200).
        grow = self._grow_only and self._drawn_at == self.app.size
        self._drawn_at = self.app.size
        width = self.content_region.width
        if width <= 0:  # not laid out yet: the Static wraps it (within max-height)
            self.lines = 0
            set_text(self, self.why.copy(), wrap=True, grow_only=grow)
            return
        lines = self.why.wrap(self.app.console, width)
        self.lines = len(lines)
        if len(lines) <= most:
            self.top = 0  # all of it shown: nothing scrolled, here or at the next size
            set_text(self, self.why.copy(), wrap=True, grow_only=grow)
            return
        room = most - 1  # the last line is the sign
        self.top = max(0, min(self.top, len(lines) - room))
        shown = Text("\n").join(lines[self.top : self.top + room])
        above, below = self.top, len(lines) - self.top - room
        sign = Text("… ", Style(bold=True))
        where = [f"{above} {'line' if above == 1 else 'lines'} above"] if above else []
        where += [f"{below} more {'line' if below == 1 else 'lines'} below"] if below else []
        sign.append(
            f"{', '.join(where)} (scroll here; the Details tab has the whole why)", "dim italic"
        )
        sign.truncate(width, overflow="ellipsis")
        shown.append("\n")
        shown.append_text(sign)
        set_text(self, shown, wrap=True, grow_only=grow)

    def scrolls(self) -> bool:
        """Whether the why is longer than its lines (a window of it is shown)."""
        return self.lines > cap(self.app.size.height)

    def _scroll(self, lines: int, event: events.MouseEvent) -> None:
        if self.scrolls():
            event.stop()
            self.top = max(0, self.top + lines)
            self._draw()

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        self._scroll(SCROLL, event)

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        self._scroll(-SCROLL, event)

    def on_resize(self, event: events.Resize) -> None:
        # Wrapped again at a new width (a new height is its own doing, or the screen's,
        # which calls `show` again).
        if event.size.width != self._width:
            self._width = event.size.width
            self.call_after_refresh(self._draw)
