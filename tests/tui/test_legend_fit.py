"""The pools panel's legend fits the panel as it is now: after any resizes it is the legend
a fresh start at that size shows, every line of it inside the panel; and a row too wide
for its width gives up its less important parts, never cutting a field in the middle.

specs/vllm_v1.pool, by its trace: after #54 chat[3] waits and its cached entry is rank 0,
its admission would hit 8 blocks; after #237 chat[1]'s entry is cached and its session
ended (test_legend.py's docstring has the rest)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from textual.widgets import Static

from pooltui.tui.app import PoolApp
from pooltui.tui.widgets.blockmap import BlockMapView
from pooltui.tui.widgets.panels import PoolsPanel
from tests.tui.conftest import settle

SPECS = Path(__file__).parents[2] / "specs"
# A row's fields after its size column, each whole (language.md's words, the legend's forms).
FIELD = re.compile(
    r"rank \d+( = evicted next)?|waits; would hit \d+( blocks?)?|(session )?ended"
    r"|spilled here|computed [\d.]+\w?|context [\d.]+\w?|reloading [\d.]+\w?( units)?"
)


async def _legend_at(pilot: object, index: int) -> str:
    app = pilot.app  # type: ignore[attr-defined]
    await settle(pilot)  # type: ignore[arg-type]
    app.send("goto", index=index)
    await settle(pilot)  # type: ignore[arg-type]
    return str(app.screen.query_one(".pool-legend", Static).content)


async def _fresh(index: int, size: tuple[int, int]) -> str:
    app = PoolApp.from_spec(str(SPECS / "vllm_v1.pool"))
    async with app.run_test(size=size) as pilot:
        return await _legend_at(pilot, index)


@pytest.mark.parametrize(
    "sizes", [[(80, 24), (100, 28)], [(120, 30), (100, 28)], [(80, 24), (120, 30), (100, 28)]]
)
async def test_after_resizes_the_legend_is_a_fresh_starts_and_all_on_screen(
    sizes: list[tuple[int, int]],
) -> None:
    """Opened at the first size, at #237, resized to each next: the legend is the one a
    start at the last size shows, with no blank line, and every line of it inside the
    panel (none hidden under its border)."""
    expected = await _fresh(237, sizes[-1])
    app = PoolApp.from_spec(str(SPECS / "vllm_v1.pool"))
    async with app.run_test(size=sizes[0]) as pilot:
        await _legend_at(pilot, 237)
        for size in sizes[1:]:
            await pilot.resize_terminal(*size)
            await settle(pilot)
        widget = app.screen.query_one(".pool-legend", Static)
        text = str(widget.content)
        assert text == expected
        assert all(line.strip() for line in text.splitlines()), text
        inside = app.screen.query_one(PoolsPanel).content_region
        assert inside.contains_region(widget.region), (widget.region, inside)
        assert widget.region.height == len(text.splitlines())
    assert "chat" in expected or "more" in expected  # a row or the count of those folded


def _cut_fields(text: str) -> list[str]:
    """The fields of the legend's rows that are not whole (a cut marked `…` is allowed
    only between fields)."""
    bad = []
    for line in text.splitlines():
        notes = ("computed ", "rank ", "waits; ", "spilled ", "ended", "session ended")
        start = min((i for w in notes if (i := line.find(w)) >= 0), default=-1)
        if start < 0:
            continue
        for field in line[start:].split(" · "):
            field = field.removesuffix("…").rstrip()
            if field and not FIELD.fullmatch(field):
                bad.append(field)
    return bad


@pytest.mark.parametrize("size", [(80, 24), (100, 28), (120, 30), (160, 48)])
@pytest.mark.parametrize("index", [54, 237])
async def test_legend_rows_are_never_cut_inside_a_field(index: int, size: tuple[int, int]) -> None:
    """Each field of a row (its rank, what a waiting session's admission would hit, that
    its session ended, ...) is shown whole or not at all; after #54 the hit count is kept
    wherever the row is shown (a figure the eviction order depends on)."""
    app = PoolApp.from_spec(str(SPECS / "vllm_v1.pool"))
    async with app.run_test(size=size) as pilot:
        text = await _legend_at(pilot, index)
    assert not _cut_fields(text), text
    row = next((line for line in text.splitlines() if "chat[3]" in line and "rank" in line), "")
    if index == 54 and row:
        assert re.search(r"waits; would hit 8\b", row), row
    if size == (120, 30) and index == 54:
        assert row, text  # the panel has room for it


async def test_at_100x28_the_legend_shows_its_rows_under_the_marks_key() -> None:
    """At 100x28 after `g 237` the lone pool's card has room for its head, a map of two
    rows and a legend of four lines: the marks' key (`◆ blocks of this event`) and the
    three rows, chat[1]'s cache entry and the two holds. The legend's least height counts
    the key's line as well as its rows (it did not: the rows' three lines, less the key's,
    left room for two, so all three were folded into `+2 holds and 1 cache entry more`)."""
    app = PoolApp.from_spec(str(SPECS / "vllm_v1.pool"))
    async with app.run_test(size=(100, 28)) as pilot:
        await settle(pilot)
        for key in ("g", "2", "3", "7", "enter"):
            await pilot.press(key)
        await settle(pilot)
        assert app.snapshot is not None and app.snapshot.event_index == 237
        widget = app.screen.query_one(".pool-legend", Static)
        lines = str(widget.content).splitlines()
        assert lines[0].startswith("◆ blocks of this event"), lines
        assert not any("more" in line for line in lines), lines
        rows = lines[1:]
        assert len(rows) == 3 and sum("rank 0" in row for row in rows) == 1, rows
        inside = app.screen.query_one(PoolsPanel).content_region
        assert inside.contains_region(widget.region) and widget.region.height == 4


@pytest.mark.parametrize("size", [(120, 30), (120, 36)])
async def test_one_shared_content_takes_one_legend_line_from_the_map(
    size: tuple[int, int],
) -> None:
    """tests/tui/specs/one_prompt.pool at #60: ten holds share the blocks of one content
    ('sys'), and the map needs far more rows than the card has. The legend keeps the
    marks' key, its one content line and its first four rows (three holds and `+7 holds
    more`), the map the rest (decisions.md: a lone pool's legend and map). It kept two
    lines more for contents, as if there were three, taken from the map: two more hold
    rows under a map of one row at 120x30, of four at 120x36."""
    app = PoolApp.from_spec(str(Path(__file__).parent / "specs" / "one_prompt.pool"))
    async with app.run_test(size=size) as pilot:
        lines = (await _legend_at(pilot, 60)).splitlines()
        contents = [line for line in lines if "content 'sys'" in line]
        rows = [line for line in lines if line.startswith("██ chat[")]
        assert len(contents) == 1 and len(rows) == 3, lines
        assert lines[-1] == "+7 holds more", lines


async def _map_and_legend(spec: Path, index: int, size: tuple[int, int]) -> tuple[int, list[str]]:
    app = PoolApp.from_spec(str(spec))
    async with app.run_test(size=size) as pilot:
        lines = (await _legend_at(pilot, index)).splitlines()
        view = app.screen.query_one(BlockMapView)
        # The legend's new height lays the screen out again: read the map's rows once
        # two frames in a row agree (a loaded machine may draw the layout a frame later).
        heights = [-1, view.region.height]
        while heights[-1] != heights[-2] and len(heights) < 12:
            await pilot.pause()
            heights.append(view.region.height)
        return heights[-1], lines


@pytest.mark.parametrize(("size", "least"), [((120, 30), 3), ((80, 24), 4)])
async def test_three_shared_contents_fold_into_one_line_for_the_map(
    size: tuple[int, int], least: int
) -> None:
    """specs/shared_prefix.pool at #59: three tenants' prompts are shared (contents 0, 1, 2
    of 32 blocks), 13 holds, and the map needs far more rows than the card has. Below a map
    of four rows the contents fold into one line, counted among the legend's four rows
    (decisions.md: a lone pool's legend and map): the key, `3 contents shared`, two holds
    and `+11 holds more`; the map the rest (3 rows at 120x30, 4 at 80x24). It kept three
    content lines and four rows, the map one row at both sizes."""
    rows, lines = await _map_and_legend(SPECS / "shared_prefix.pool", 59, size)
    assert rows >= least, (rows, lines)
    assert lines[0] == "×N held by N holds", lines
    assert lines[1].startswith("×  3 contents shared: 0: 32 blocks, 6 holders · "), lines
    assert [line.split()[1] for line in lines[2:4]] == ["chat[0]", "chat[1]"], lines
    assert lines[4:] == ["+11 holds more"], lines


@pytest.mark.parametrize(("size", "rows"), [((120, 36), 4), ((160, 48), 14)])
async def test_with_room_for_the_map_each_shared_content_keeps_its_line(
    size: tuple[int, int], rows: int
) -> None:
    """The same moment where the map keeps four rows or more with a line a content: the
    legend is as it was, the key, three content lines, three holds and `+10 holds more`."""
    shown, lines = await _map_and_legend(SPECS / "shared_prefix.pool", 59, size)
    assert shown == rows, (shown, lines)
    assert [line.split(":")[0] for line in lines[1:4]] == [f"×  content {c}" for c in "012"]
    assert lines[-1] == "+10 holds more" and len(lines) == 8, lines
