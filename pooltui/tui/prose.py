"""Text laid out for the width it is shown at. The spec's opening comment as prose for the
Notes panel (`reflow`): its hard line breaks are the author's terminal width, not meaning,
so lines are joined into paragraphs and list items (a blank line ends a paragraph; a line
starting with `-`, `*` or `N.` starts an item), then laid out at the panel's width with
each item's lines hanging under its text (`Notes`). Pieces that must not be split (a key
and what it does, a mark and its meaning) flowed onto lines of a width (`flowed`)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from rich.console import Console, ConsoleOptions, RenderResult
from rich.text import Text

_ITEM = re.compile(r"^\s*(?:[-*]|\d+[.)])\s+")


def reflow(text: str) -> str:
    blocks: list[str] = []
    current: list[str] = []

    def flush() -> None:
        if current:
            blocks.append(" ".join(current))
            current.clear()

    for raw in text.split("\n"):
        line = raw.strip()
        if not line:
            flush()
            blocks.append("")
            continue
        if _ITEM.match(raw):
            flush()
            current.append(raw.rstrip())
            continue
        current.append(line)
    flush()
    out = "\n".join(blocks)
    return re.sub(r"\n{3,}", "\n\n", out).strip("\n")


def notes_lines(console: Console, text: str, width: int) -> list[str]:
    """`text` (reflowed) in lines of `width` cells: a paragraph wraps at the margin, a list
    item's lines after its first start under its text, past its marker (`- `)."""
    out: list[str] = []
    for block in text.split("\n"):
        item = _ITEM.match(block)
        indent = item.end() if item is not None and width >= 2 * item.end() + 10 else 0
        lines = Text(block[indent:]).wrap(console, max(1, width - indent)) if block else [Text()]
        for i, line in enumerate(lines):
            out.append((block[:indent] if i == 0 else " " * indent) + line.plain.rstrip())
    return out


class Notes:
    """The Notes panel's text: `notes_lines` at the width it is drawn at (a wider or a
    narrower panel lays it out again); as a string, the reflowed text."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield Text("\n".join(notes_lines(console, self.text, options.max_width)))

    def __str__(self) -> str:
        return self.text


def flowed(rows: Iterable[Iterable[Text]], width: int | None, gap: str) -> Text:
    """Each row's pieces `gap` apart, going on to a new line before a piece that would
    pass `width`: a piece (a key and its moment, an example to type) is never split
    across two lines, as wrapping at any space would."""
    text = Text()
    for number, pieces in enumerate(rows):
        if number:
            text.append("\n")
        used = 0
        for piece in pieces:
            if used and width is not None and used + len(gap) + piece.cell_len > width:
                text.append("\n")
                used = 0
            elif used:
                text.append(gap)
                used += len(gap)
            text.append_text(piece)
            used += piece.cell_len
    return text
