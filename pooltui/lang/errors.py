"""Located errors: `FILE:LINE:COL: error: message`, the source line, and a caret span.

Every error pooltui reports about a spec, at compile time or at run time, is a
`Diagnostic` rendered by `render`. `SpecError` carries one or more of them; it is the only
exception the front end lets out. `fit` lays a rendered error out for a narrow screen (a
window of the source line around its caret), and `escaped` is how a name from outside
(a file's) is printed: control characters escaped, so it cannot drive the terminal.
Carets and windows are measured in terminal cells (`cells`): a wide (CJK) character
takes two.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from pooltui.lang.ir import Span


@dataclass(frozen=True, slots=True)
class Diagnostic:
    span: Span
    message: str
    severity: str = "error"
    notes: tuple[str, ...] = ()


class SpecError(Exception):
    """One or more located errors in a spec (compile time)."""

    def __init__(
        self,
        diagnostics: list[Diagnostic] | tuple[Diagnostic, ...],
        source: str = "",
        sources: dict[str, str | None] | None = None,
    ):
        self.diagnostics = tuple(diagnostics)
        self.source = source
        # Other files by span.file, for render: their text, or None for a file whose lines
        # are never shown (a session's source: its content is not quoted).
        self.sources: dict[str, str | None] = dict(sources or {})
        super().__init__("\n".join(f"{d.span}: {d.severity}: {d.message}" for d in diagnostics))

    def render(self) -> str:
        return "\n".join(
            render(d, self.sources.get(d.span.file, self.source)) for d in self.diagnostics
        )


class SpecRuntimeError(Exception):
    """An error of the spec found while simulating it (a negative unit count, a division
    by zero, an attribute read before it is set): located at the expression."""

    def __init__(self, message: str, span: Span):
        self.message = message
        self.span = span
        super().__init__(f"{span}: error: {message}")

    def diagnostic(self) -> Diagnostic:
        return Diagnostic(self.span, self.message)


def _source_line(source: str, line: int) -> str | None:
    if line < 1:
        return None
    lines = source.split("\n")
    if line > len(lines):
        return None
    return lines[line - 1].rstrip("\r")


def escaped(text: str) -> str:
    """`text` fit to print: control (and other unprintable) characters as `\\uXXXX`, as a
    source's column names and a spec's quoted text are, so a file name holding an escape
    sequence cannot drive the terminal the message is printed on."""
    return "".join(ch if ch.isprintable() else f"\\u{ord(ch):04x}" for ch in text)


def _cell(ch: str) -> int:
    """The terminal cells `ch` takes: two for a wide (East Asian) character, none for a
    combining mark (drawn on the character before it), one for any other printable one."""
    if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me"):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def cells(text: str) -> int:
    """The terminal cells `text` (printable, one line) takes: where a caret goes under it."""
    return len(text) if text.isascii() else sum(_cell(ch) for ch in text)


def shown_line(text: str) -> str:
    """One line of a spec as it is shown (under an error, in the debugger's Source and
    Notes): its CR line end dropped, tabs as single spaces (a caret, a statement's columns
    still line up), control characters (binary garbage, an escape sequence in a comment)
    as U+FFFD so they cannot drive the terminal. One character for one: columns hold."""
    text = text.removesuffix("\r")
    if text.isascii() and text.isprintable():
        return text
    return "".join(" " if c == "\t" else (c if c.isprintable() else "\ufffd") for c in text)


def excerpt(text: str, line: int, col: int, end_col: int) -> tuple[str, str]:
    """The source line under a located error's header, and the caret line under its
    culprit (columns `col` to `end_col`, end excluded, from 1): `LINE | text`, `  |   ^^`,
    the carets under the culprit's cells. Tabs are shown as single spaces so the caret
    lines up; control characters (binary garbage) as U+FFFD so they cannot drive the
    terminal."""
    shown = shown_line(text)
    if len(shown) > 200:  # a huge line (binary garbage): show a window around the culprit
        start = max(0, col - 80)
        shown = shown[start : start + 160]
        at = col - start
    else:
        at = col
    end = end_col - (col - at)  # in the window too
    width = max(1, cells(shown[at - 1 : end - 1])) if end_col > col else 1
    pad = cells(shown[: at - 1]) + max(0, at - 1 - len(shown))  # (past the end: as many)
    gutter = f"{line} | "
    return gutter + shown, " " * (len(gutter) - 2) + "| " + " " * pad + "^" * width


def render(diag: Diagnostic, source: str | None) -> str:
    """The diagnostic as the user sees it: header, source line, caret span, notes.

    A None source shows no line (a session's source file, whose content is never quoted)."""
    span = diag.span
    out = [f"{escaped(span.file)}:{span.line}:{span.col}: {diag.severity}: {diag.message}"]
    text = None if source is None else _source_line(source, span.line)
    if text is not None:
        end = span.end_col if span.end_line == span.line else len(text) + 1
        out.extend(excerpt(text, span.line, span.col, end))
    out.extend(f"  = note: {n}" for n in diag.notes)
    return "\n".join(out)


_SOURCE = re.compile(r"(\d+ \| )(.*)")
_CARET = re.compile(r"( *\| )( *)(\^+)")
ELLIPSIS = "…"


def fit(rendered: str, width: int) -> str:
    """A rendered error (`render`, `excerpt`) for a screen `width` cells wide: each source
    line wider than that becomes a window of itself around its caret, cut with `…` where
    it goes on, its caret line cut the same way, so the caret points at the culprit at any
    width (wrapped, it pointed into the line's first row). Other lines are left to wrap.
    Measured in cells: a wide character the window's edge cuts is left out (a space)."""
    lines = rendered.split("\n")
    for i in range(1, len(lines)):
        source, caret = _SOURCE.fullmatch(lines[i - 1]), _CARET.fullmatch(lines[i])
        if source is None or caret is None or cells(lines[i - 1]) <= width:
            continue
        gutter, text = source.groups()
        if len(caret.group(1)) != len(gutter):  # not this line's caret
            continue
        at, carets = len(caret.group(2)), len(caret.group(3))
        room = max(8, width - len(gutter))
        shown = min(carets, room - 2)  # what fits of the culprit, a cell for each `…`
        end = max(cells(text), at + shown)  # (a caret may stand just past the line's end)
        if end <= room:
            continue
        start = min(max(0, at - (room - shown) // 2), end - room)  # the culprit centred
        window = _window(text, start, room)
        if start > 0:
            _put(window, 0, ELLIPSIS)
        if start + room < cells(text):
            _put(window, len(window) - 1, ELLIPSIS)
        lines[i - 1] = gutter + "".join(window)
        lines[i] = caret.group(1) + " " * (at - start) + "^" * shown
    return "\n".join(lines)


def _window(text: str, start: int, room: int) -> list[str]:
    """Cells `start` to `start + room` of `text`, one string a cell: a wide character and
    then "" for its second cell; one the window's edge cuts becomes a space."""
    every: list[str] = []
    for ch in text:
        width = _cell(ch)
        if width == 0 and every:  # a combining mark goes with the character before it
            every[-1] += ch
        elif width:
            every += [ch] + [""] * (width - 1)
    window = every[start : start + room]
    if window and window[0] == "":  # the second cell of a wide character before it
        window[0] = " "
    if window and start + room < len(every) and every[start + room] == "":
        window[-1] = " "  # the first cell of one whose second is past the window
    return window


def _put(window: list[str], i: int, glyph: str) -> None:
    """`glyph` (one cell) in cell `i`, the other cell of a wide character there a space."""
    if window[i] == "" and i > 0:
        window[i - 1] = " "
    elif i + 1 < len(window) and window[i + 1] == "":
        window[i + 1] = " "
    window[i] = glyph
