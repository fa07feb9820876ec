"""The status line keeps what stopped the run: a stop too long for the line is cut between
words after the less useful fields are dropped, never dropped whole with them (a go-to
past the end at 100 columns left only `event #1924 · paused`)."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.widgets import Static

from pooltui.tui.app import PoolApp
from pooltui.tui.widgets.statusline import Field, fit
from tests.tui.conftest import keys, settle, submit

VLLM = str(Path(__file__).resolve().parents[2] / "specs" / "vllm_v1.pool")
SEP = Text(" · ")


def fields(stop: str) -> list[Field]:
    return [
        Field(Text("vllm_v1.pool"), 6, SEP),
        Field(Text("event #1924"), 10, SEP),
        Field(Text("paused"), 10, SEP),
        Field(Text(stop), 9, Text(" — "), cut=True),
        Field(Text("live 3"), 4, SEP),
    ]


def test_a_stop_too_long_is_cut_between_words_not_dropped() -> None:
    stop = "there is no event #5000; the simulation ended after 1925 events (#0 to #1924)"
    # 60 cells: `live 3` and the name go first (lower priorities); `event #1924 · paused — `
    # is 23 cells, so the stop has 37 with its "…": "…; the simulation" is 39 cells, so
    # it ends at "the" (28), then "…".
    shown = fit(fields(stop), 60).plain
    assert shown == "event #1924 · paused — there is no event #5000; the…"
    assert shown.endswith("…") and len(shown) <= 60
    words = shown[len("event #1924 · paused — ") : -1].split()
    assert words == stop.split()[: len(words)]  # whole words, in order
    # Room for all of it: nothing cut, nothing dropped.
    assert fit(fields(stop), 200).plain.endswith("#1924) · live 3")
    # Too little room for a useful part (under 16 cells): dropped, as any field.
    assert fit(fields(stop), 30).plain == "event #1924 · paused"


async def test_a_go_to_past_the_end_says_so_at_100_columns() -> None:
    app = PoolApp.from_spec(VLLM)
    async with app.run_test(size=(100, 24)) as pilot:
        await settle(pilot)
        await keys(pilot, "g")
        await submit(pilot, "5000")
        await settle(pilot)
        shown = str(app.screen.query_one("#status", Static).render())
        assert "event #1924" in shown and "paused" in shown, shown
        assert "— there is no event #5000" in shown, shown
