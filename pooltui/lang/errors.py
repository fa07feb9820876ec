"""Located errors: `FILE:LINE:COL: error: message`, the source line, and a caret span.

Every error pooltui reports about a spec, at compile time or at run time, is a
`Diagnostic` rendered by `render`. `SpecError` carries one or more of them; it is the only
exception the front end lets out. `fit` lays a rendered error out for a narrow screen (a
window of the source line around its caret), and `escaped` is how a name from outside
(a file's) is printed: control characters escaped, so it cannot drive the terminal.
"""

from __future__ import annotations

import re
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


def excerpt(text: str, line: int, col: int, end_col: int) -> tuple[str, str]:
    """The source line under a located error's header, and the caret line under its
    culprit (columns `col` to `end_col`, end excluded, from 1): `LINE | text`, `  |   ^^`.
    Tabs are shown as single spaces so the caret lines up; control characters (binary
    garbage) as U+FFFD so they cannot drive the terminal."""
    shown = "".join(" " if c == "\t" else (c if c.isprintable() else "\ufffd") for c in text)
    if len(shown) > 200:  # a huge line (binary garbage): show a window around the culprit
        start = max(0, col - 80)
        shown = shown[start : start + 160]
        at = col - start
    else:
        at = col
    end = end_col - (col - at)  # in the window too
    width = max(1, min(end, len(shown) + 1) - at) if end_col > col else 1
    gutter = f"{line} | "
    return gutter + shown, " " * (len(gutter) - 2) + "| " + " " * (at - 1) + "^" * width


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
    """A rendered error (`render`, `excerpt`) for a screen `width` columns wide: each source
    line wider than that becomes a window of itself around its caret, cut with `…` where
    it goes on, its caret line cut the same way, so the caret points at the culprit at any
    width (wrapped, it pointed into the line's first row). Other lines are left to wrap."""
    lines = rendered.split("\n")
    for i in range(1, len(lines)):
        source, caret = _SOURCE.fullmatch(lines[i - 1]), _CARET.fullmatch(lines[i])
        if source is None or caret is None or len(lines[i - 1]) <= width:
            continue
        gutter, text = source.groups()
        if len(caret.group(1)) != len(gutter):  # not this line's caret
            continue
        at, carets = len(caret.group(2)), len(caret.group(3))
        room = max(8, width - len(gutter))
        shown = min(carets, room - 2)  # what fits of the culprit, a column for each `…`
        end = max(len(text), at + shown)  # (a caret may stand just past the line's end)
        if end <= room:
            continue
        start = min(max(0, at - (room - shown) // 2), end - room)  # the culprit centred
        window = list(text[start : start + room])
        if start > 0:
            window[0] = ELLIPSIS
        if start + room < len(text):
            window[-1] = ELLIPSIS
        lines[i - 1] = gutter + "".join(window)
        lines[i] = caret.group(1) + " " * (at - start) + "^" * shown
    return "\n".join(lines)
