from pathlib import Path

from rich.console import Console
from textual.widget import Widget

from pooltui.tui.app import PoolApp
from pooltui.tui.prose import notes_lines, reflow
from tests.tui.conftest import settle


def test_lines_join_into_paragraphs_and_items() -> None:
    text = (
        "vLLM v1, FCFS.\n\nOne GPU worker with a budget\nof 64 tokens.\n\nWhat to watch:\n"
        " - admission: each iteration serves\n   the running requests first;\n"
        " - preemption: the latest goes.\n"
    )
    assert reflow(text) == (
        "vLLM v1, FCFS.\n\nOne GPU worker with a budget of 64 tokens.\n\nWhat to watch:\n"
        " - admission: each iteration serves the running requests first;\n"
        " - preemption: the latest goes."
    )


def test_empty() -> None:
    assert reflow("") == ""


def test_a_list_items_lines_hang_under_its_text() -> None:
    """An item's lines after its first start under its text, past `- ` (its marker), so
    the items of a spec's `What to watch:` read as a list on a projector; a paragraph
    wraps at the margin as before."""
    text = "What to watch:\n- admit events: hit and shared, the units found registered"
    lines = notes_lines(Console(), text, 24)
    assert lines == [
        "What to watch:",
        "- admit events: hit and",
        "  shared, the units",
        "  found registered",
    ]
    assert notes_lines(Console(), "one two three four five", 10) == [
        "one two",
        "three four",
        "five",
    ]


async def test_the_notes_panel_hangs_list_items() -> None:
    """specs/shared_prefix.pool's opening comment, at 160x48 (the Notes panel is 38
    columns wide): the `What to watch:` items' second lines are indented under their text
    (they started at the margin, under the `-`)."""
    app = PoolApp.from_spec(str(Path(__file__).parents[2] / "specs" / "shared_prefix.pool"))
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        notes = app.screen.query_one("#notes-body", Widget)
        rows = [notes.render_line(y).text.rstrip() for y in range(notes.size.height)]
        first = next(i for i, row in enumerate(rows) if row.lstrip().startswith("- `admit`"))
        margin = len(rows[first]) - len(rows[first].lstrip())
        assert rows[first + 1].startswith(" " * (margin + 2)) and rows[first + 1].strip(), rows
