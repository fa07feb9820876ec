"""The status bar: one line of fields, each shown whole or not at all.

A line longer than the terminal used to be cut by an ellipsis wherever the width fell,
inside a figure too ("done 12…" for 121 reads as 12). Each field has a priority: the least
important go first until the line fits, and the line is fitted again when its width
changes. What is still too long (a long stop on a tiny terminal) is cut between words.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

from rich.style import Style
from rich.text import Text
from textual import events
from textual.widgets import Static

from pooltui.tui.widgets.statictext import set_text

CUT_LEAST = 16  # cells: a cut field shorter than this says too little to keep


class Field(NamedTuple):
    """A field of the status line, with the separator drawn before it when a field is
    shown before it; fields of higher `priority` stay longer. Each is one run of text in
    one style (its `style`; spans are not kept)."""

    text: Text
    priority: int
    sep: Text
    cut: bool = False  # words: cut between them (with …) rather than dropped whole


def fit(fields: Sequence[Field], width: int | None) -> Text:
    """The fields that fit in `width` cells (all of them for None), in their order: the
    lowest priority dropped first (the rightmost of equals). Never a cut figure."""
    kept = list(fields)

    def length() -> int:
        return sum(f.text.cell_len for f in kept) + sum(f.sep.cell_len for f in kept[1:])

    while width is not None and len(kept) > 1 and length() > width:
        i = min(range(len(kept)), key=lambda i: (kept[i].priority, -i))
        f = kept[i]
        room = width - (length() - f.text.cell_len)
        if f.cut and room >= CUT_LEAST:  # a long stop: its first words, not nothing
            kept[i] = f._replace(text=cut_between_words(f.text, room))
            break
        del kept[i]
    # One run per style (runs of the same style joined): an exported screenshot draws a
    # run of spaces alone as its background only, so the spaces after the name go with it.
    runs: list[tuple[str, str | Style]] = []
    for i, f in enumerate(kept):
        for part in (f.sep, f.text) if i else (f.text,):
            style = part.style
            if not part.plain.strip() and runs:
                style = runs[-1][1]
            if runs and runs[-1][1] == style:
                runs[-1] = (runs[-1][0] + part.plain, style)
            else:
                runs.append((part.plain, style))
    text = Text.assemble(*runs)
    if width is not None and text.cell_len > width:
        cut = text.plain.rfind(" ", 0, max(0, width - 1))
        text = text[: max(0, cut)]
        text.rstrip()
        text.append("…")
    return text


def cut_between_words(text: Text, room: int) -> Text:
    """`text`'s first words and `…`, in `room` cells (a word cut only when the first is
    longer than that)."""
    cut = text.plain.rfind(" ", 0, max(0, room - 1))
    out = text[: cut if cut > 0 else max(0, room - 1)]
    out.rstrip()
    out.append("…")
    return out


class StatusLine(Static):
    """The status bar: shows the fields it is given that fit its width (`fit`), and fits
    them again when the width changes."""

    _fields: tuple[Field, ...] = ()

    def show(self, fields: Iterable[Field]) -> None:
        self._fields = tuple(fields)
        self._fit()

    def on_resize(self, event: events.Resize) -> None:
        self._fit()

    def _fit(self) -> None:
        width = self.content_region.width
        set_text(self, fit(self._fields, width if width > 0 else None))
