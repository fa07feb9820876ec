"""Located errors: `FILE:LINE:COL: error: message`, the source line, and a caret span.

Every error pooltui reports about a spec, at compile time or at run time, is a
`Diagnostic` rendered by `render`. `SpecError` carries one or more of them; it is the only
exception the front end lets out.
"""

from __future__ import annotations

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


def render(diag: Diagnostic, source: str | None) -> str:
    """The diagnostic as the user sees it: header, source line, caret span, notes.

    A None source shows no line (a session's source file, whose content is never quoted).
    Tabs in the source line are shown as single spaces so the caret lines up."""
    span = diag.span
    out = [f"{span.file}:{span.line}:{span.col}: {diag.severity}: {diag.message}"]
    text = None if source is None else _source_line(source, span.line)
    if text is not None:
        # Tabs as spaces so the caret lines up; control characters (binary garbage) as
        # U+FFFD so they cannot drive the terminal.
        shown = "".join(" " if c == "\t" else (c if c.isprintable() else "\ufffd") for c in text)
        if len(shown) > 200:  # a huge line (binary garbage): show a window around the culprit
            start = max(0, span.col - 80)
            shown = shown[start : start + 160]
            col = span.col - start
        else:
            col = span.col
        end = span.end_col if span.end_line == span.line else len(text) + 1
        width = max(1, min(end, len(shown) + 1) - col) if end > span.col else 1
        gutter = f"{span.line} | "
        out.append(gutter + shown)
        out.append(" " * (len(gutter) - 2) + "| " + " " * (col - 1) + "^" * width)
    out.extend(f"  = note: {n}" for n in diag.notes)
    return "\n".join(out)
