"""How a located error is laid out: the caret under the culprit however the source line is
shown (whole, a window of a huge line, a window fitted to a narrow screen), and a file
name that cannot drive the terminal (docs/decisions.md, "Files" and "The debugger")."""

from __future__ import annotations

import pytest

from pooltui.lang.errors import Diagnostic, escaped, excerpt, fit, render
from pooltui.lang.ir import Span


def pointed_at(source: str, caret: str) -> str:
    """What the caret line points at in the source line above it."""
    return source[caret.index("^") : caret.rindex("^") + 1]


def test_a_huge_lines_window_keeps_the_caret_as_wide_as_the_culprit() -> None:
    # Past 200 characters the line is a 160-character window around the culprit: its
    # caret was as wide as the columns cut off before the window, to the window's end.
    line = "x" * 250 + "bogus" + "y" * 100
    diag = Diagnostic(Span("t.pool", 1, 251, 1, 256), "unknown name 'bogus'")
    _, source, caret = render(diag, line).split("\n")
    assert pointed_at(source, caret) == "bogus"


def test_a_file_name_is_printed_with_its_control_characters_escaped() -> None:
    diag = Diagnostic(Span("a\x1b[31mb.pool", 1, 1, 1, 2), "oops")
    assert render(diag, None) == "a\\u001b[31mb.pool:1:1: error: oops"
    assert escaped("tab\there\x07") == "tab\\u0009here\\u0007"


LONG = " + ".join(["free(kv)"] * 9)


@pytest.mark.parametrize("width", [80, 60, 40, 20, 12])
@pytest.mark.parametrize(
    ("text", "culprit"),
    [
        (f"{LONG} + bogus", "bogus"),  # at the end
        (f"bogus + {LONG}", "bogus"),  # at the start
        (f"{LONG} + bogus + {LONG}", "bogus"),  # in the middle
        (f"{LONG} + ", ""),  # just past the end (`found the end of the watch`)
    ],
)
def test_fit_shows_a_window_around_the_culprit(width: int, text: str, culprit: str) -> None:
    col = text.index(culprit) + 1 if culprit else len(text) + 1
    rendered = "\n".join(
        ["<watch>:1:1: error: a message long enough to wrap", *excerpt(text, 1, col, col + 5)]
    )
    head, source, caret = fit(rendered, width).split("\n")
    assert head == "<watch>:1:1: error: a message long enough to wrap"  # left to wrap
    assert len(source) <= max(width, 12) and len(caret) <= max(width, 12)
    assert source.startswith("1 | ") and caret.startswith("  | ")
    assert "…" in source
    shown = pointed_at(source, caret)
    assert shown == culprit[: len(shown)] and len(shown) >= min(len(culprit), 5, width - 6)
    if not culprit:
        assert caret.index("^") == len(source)  # past the line's end, as it was


def test_fit_leaves_what_fits_alone() -> None:
    rendered = "t.pool:1:5: error: oops\n1 | hold bogus\n  |      ^^^^^\n  = note: a note"
    assert fit(rendered, 80) == rendered
