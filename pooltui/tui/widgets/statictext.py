"""`set_text`: a Static's text set without needless layouts of the whole screen.

Owns updating a Static only when its text changed and re-laying the screen out only when
the widget's box changes height: a run repaints these many times a second, and a layout
of the whole screen per frame (tens of milliseconds on a full GPU) would take most of the
screen's time and make every key wait."""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget
from textual.widgets import Static


def _height(widget: Widget, lines: int | None) -> int | None:
    """The height `lines` of text give `widget` by its styles: a height fixed in cells is
    that height whatever the text (`#status`), an auto height is clamped to its min and
    max heights in cells (`#why`); None when the styles leave it to the layout."""
    styles = widget.styles
    height = styles.height
    if height is not None and height.is_cells:
        return int(height.value)
    if lines is None or height is None or not height.is_auto:
        return None
    lines += styles.gutter.height  # padding and border: min and max bound the whole box
    low, high = styles.min_height, styles.max_height
    if low is not None and low.is_cells:
        lines = max(lines, int(low.value))
    if high is not None and high.is_cells:
        lines = min(lines, int(high.value))
    return lines


def set_text(widget: Static, text: Text, *, wrap: bool = False, grow_only: bool = False) -> int:
    """Update a Static only when its text changed, and re-lay the screen out only when its
    box's height did (the module's docstring says why). `grow_only` (while a run goes,
    and on the frame that ends it): a text of fewer lines keeps the height it had (blank
    lines at the end), so the height changes only when it grows; the next step fits it.
    Returns the lines it shows (-1: not known, a wrapped text hidden)."""
    if not wrap:
        text.no_wrap = True
        text.overflow = "ellipsis"
    previous = getattr(widget, "_pooltui_text", None)
    if previous is not None and previous == text:
        return int(getattr(widget, "_pooltui_lines", -1))
    lines = text.plain.count("\n") + 1
    width = widget.content_region.width
    if wrap and width > 0:  # the lines it wraps to at its width: its height
        lines = len(text.wrap(widget.app.console, width))
    elif wrap:
        lines = -1  # not laid out, or hidden (a tab not shown): its height is not known
    before = getattr(widget, "_pooltui_lines", None)
    if grow_only and before is not None and 0 <= lines < before:
        text = text + Text("\n" * (before - lines))
        lines = before
    # An unknown height lays nothing out: showing the widget (or the screen's first
    # layout) will. (The Details tab behind Notes re-laid the whole screen out on every
    # paused frame.)
    layout = lines >= 0 and before != lines and _height(widget, lines) != _height(widget, before)
    widget._pooltui_text = text  # type: ignore[attr-defined]
    widget._pooltui_lines = lines  # type: ignore[attr-defined]
    widget.update(text, layout=layout)
    return lines
