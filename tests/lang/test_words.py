"""`words.value_text`: how a panel shows a session attribute read from a trace."""

from __future__ import annotations

from pooltui.lang.words import value_text


def test_values_of_a_trace_read_short() -> None:
    # Numbers as `number` with 4 digits; strings quoted; a list (a JSONL or CSV list
    # column, a tuple in a snapshot) in brackets, its first 4 elements then "…".
    assert value_text(3.0) == "3"
    assert value_text(2.0 / 3) == "0.6667"
    assert value_text("sys") == "'sys'"
    assert value_text((7, 8)) == "[7, 8]"
    assert value_text((1, "a", 2.5, 3, 4)) == "[1, 'a', 2.5, 3, …]"
    assert value_text([]) == "[]"
