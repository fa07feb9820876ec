"""How a located error is laid out: the caret under the culprit however the source line is
shown (whole, a window of a huge line, a window fitted to a narrow screen), and a file
name that cannot drive the terminal (docs/decisions.md, "Files" and "The debugger")."""

from __future__ import annotations

import pytest
from rich.cells import cell_len

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


def cells_pointed_at(source: str, caret: str) -> str:
    """What the caret line points at in the source line above it as a terminal shows them,
    a wide (CJK) character taking two cells: the characters whose cells the carets cover,
    each wholly (a caret under half of one, or under nothing, is a `?`)."""
    lo, hi = caret.index("^"), caret.rindex("^") + 1
    covered, at = "", 0
    for ch in source:
        width = cell_len(ch)
        if width and at < hi and at + width > lo:
            covered += ch if lo <= at and at + width <= hi else "?"
        at += width
    return covered + "?" * max(0, hi - max(at, lo))


WIDE = '"' + "中文" * 6 + '"'  # a string of twelve wide characters: 26 cells, 14 characters


@pytest.mark.parametrize(
    ("text", "culprit"),
    [
        (f"{WIDE} + nope", "nope"),  # wide characters before the culprit
        (f"nope + {WIDE}", WIDE),  # the culprit wide itself: a caret for each cell
        (f"{WIDE} + {WIDE}", WIDE),  # both
    ],
)
def test_the_caret_stands_under_the_culprit_in_cells(text: str, culprit: str) -> None:
    col = text.rindex(culprit) + 1
    diag = Diagnostic(Span("<watch>", 1, col, 1, col + len(culprit)), "oops")
    _, source, caret = render(diag, text).split("\n")
    assert cells_pointed_at(source, caret) == culprit
    assert caret.count("^") == cell_len(culprit)


@pytest.mark.parametrize("width", [80, 60, 40, 21, 20, 12])
@pytest.mark.parametrize(
    ("text", "culprit"),
    [
        (f"{WIDE} + {LONG} + bogus", "bogus"),  # wide characters far before the culprit
        (f"{LONG} + {WIDE} + bogus", "bogus"),  # just before it
        (f"{WIDE} + bogus + {WIDE} + {LONG}", "bogus"),  # on both sides
        (f"{LONG} + 中 + {WIDE}", "中"),  # the culprit wide itself
        (f"{WIDE}{WIDE}{WIDE} + ", ""),  # just past the end
    ],
)
def test_fit_windows_a_line_of_wide_characters_in_cells(
    width: int, text: str, culprit: str
) -> None:
    """A terminal shows a wide character in two cells: the window is `width` cells wide,
    not characters, a wide character cut by its edge is left out (a space, or the `…`),
    and the caret stands under the culprit's cells (it counted characters: with wide ones
    before the culprit it pointed to the left of it)."""
    col = text.index(culprit) + 1 if culprit else len(text) + 1
    end = col + max(1, len(culprit))
    rendered = "\n".join(["<watch>:1:1: error: oops", *excerpt(text, 1, col, end)])
    _, source, caret = fit(rendered, width).split("\n")
    assert cell_len(source) <= max(width, 12) and len(caret) <= max(width, 12)
    assert source.startswith("1 | ") and caret.startswith("  | ") and "…" in source
    shown = cells_pointed_at(source, caret)
    if culprit:
        assert shown and culprit.startswith(shown), (source, caret)
    else:
        assert shown == "?" and caret.index("^") == cell_len(source)  # just past the end
