"""What the block map marks, and that its legend explains every mark it draws: shared
blocks at the moment they become shared, duplicate blocks, `×+`, the rank digits of cached
blocks whose entries the legend folds, and holds whose figures are wide.

tests/tui/specs/shared.pool is worked out in test_shared.py: #11 admits chat[1] onto blocks
0 and 1 (hit, chat[0] holds them: shared) and its new block 4; #12 admits chat[2] the same
way onto 0, 1 and block 5.

tests/tui/specs/dup.pool, worked out by hand from language.md §8.1 (blocks of 4 units, two
chats whose 16-unit prompt is all the content 'sys'):

| t     | event                       | blocks of kv                                          |
| 0.004 | #2 admit chat[0], hit 0     | 0-3 ('sys' 0..15)                                     |
| 0.004 | #3 iteration 1 takes 16     | 0-3 registered                                        |
| 0.008 | chat[1] arrives, queues     |                                                       |
| 0.014 | #8 grow chat[0] to 17       | block 4 (its decode's first token)                    |
| 0.014 | #9 admit chat[1]            | E = 16, U = 16: hit = min(16, ⌊15/4⌋·4) = 12: blocks  |
|       |                             | 0-2 shared (count 2); units 12..15 in a new block 5   |
| 0.014 | #10 iteration 2             | takes chat[1]'s 4 tokens: block 5 registered, but     |
|       |                             | block 3 has its content first: 5 is a duplicate       |
| 0.044 | #19 release chat[0]         | 0-2 stay with chat[1]; 3 cached (chat[0]'s entry)     |
| 0.054 | #24 release chat[1]         | 0-2 and 5 cached (chat[1]'s entry, released later:    |
|       |                             | lru rank 1; chat[0]'s is rank 0)                      |

So from #10 block 5 is a duplicate (`pooltui run` counts `duplicate blocks 1`): the map
marks it, the legend says what the mark is, the head line counts it; after #24 it is a
cached duplicate, rank 1.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from rich.style import Style
from textual.widgets import Static

from pooltui.tui.app import PoolApp
from pooltui.tui.widgets.blockmap import GUTTER, BlockMapView
from tests.tui.conftest import SIZE, add_breakpoint, keys, settle

TUI_SPECS = Path(__file__).parent / "specs"
SHARED = str(TUI_SPECS / "shared.pool")
DUP = str(TUI_SPECS / "dup.pool")
MOONCAKE = str(Path(__file__).parents[2] / "specs" / "mooncake_conv.pool")


def tiles(view: BlockMapView, row: int = 0) -> list[tuple[str, Style | None]]:
    """The tiles of a map row of a small pool (wide tiles): each one's text and the style
    of its first character."""
    strip = view.render_line(row - int(view.scroll_offset.y))
    chars: list[tuple[str, Style | None]] = []
    for seg in strip:
        chars.extend((c, seg.style) for c in seg.text)
    cell = view.cell_width()
    out = []
    for start in range(GUTTER, len(chars) - cell + 2, cell):
        tile = chars[start : start + cell - 1]
        out.append(("".join(c for c, _ in tile).strip(), tile[0][1]))
    return out


def legend(app: PoolApp) -> str:
    return str(app.screen.query_one(".pool-legend", Static).content)


def head(app: PoolApp) -> str:
    return str(app.screen.query_one(".pool-head", Static).content)


async def goto(pilot: Any, index: int) -> None:
    await settle(pilot)
    pilot.app.send("goto", index=index)
    await settle(pilot)


async def test_a_shared_hit_keeps_the_shared_mark_on_the_events_blocks() -> None:
    """At `admit shared>0` the event's hit blocks are what the stop is about: they keep
    their `×N` (issue 11: shared blocks visible at a glance), drawn on the highlight colour
    as this event's; the event's new block is ◆; the legend keys both."""
    app = PoolApp.from_spec(SHARED)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await add_breakpoint(pilot, "admit shared>0")
        await keys(pilot, "c")
        assert app.snapshot is not None and app.snapshot.event_index == 11
        view = app.screen.query_one(BlockMapView)
        row = tiles(view)
        assert [text for text, _ in row[:5]] == ["×2", "×2", "", "", "◆"]
        lit = view.palette.highlight.lower()
        assert all(style is not None and style.bgcolor is not None for _, style in row[:2])
        assert {style.bgcolor.name.lower() for _, style in row[:2] if style and style.bgcolor} == {
            lit
        }
        assert row[4][1] is not None and row[4][1].bgcolor is not None
        assert (
            row[4][1].bgcolor.name.lower() != lit
        )  # a plain event block keeps its holder's colour
        key = legend(app)
        assert "×N held by N holds, of this event" in key
        assert "◆ blocks of this event" in key
        assert "content 'sys': 2 blocks, 2 holders: chat[0], chat[1]" in key
        await keys(pilot, "c")  # #12: chat[2] onto the same two blocks
        assert app.snapshot.event_index == 12
        row = tiles(view)
        assert [text for text, _ in row[:6]] == ["×3", "×3", "", "", "", "◆"]


async def test_the_shared_key_stays_for_shared_blocks_of_other_events() -> None:
    """#13 (the iteration after #12): the shared blocks are nobody's event: plain `×3`,
    keyed as before; no key for a mark not drawn."""
    app = PoolApp.from_spec(SHARED)
    async with app.run_test(size=SIZE) as pilot:
        await goto(pilot, 13)
        key = legend(app).splitlines()[0]
        assert "×N held by N holds" in key
        assert "of this event" not in key


async def test_a_duplicate_block_is_marked_keyed_and_counted() -> None:
    """language.md §8.1: duplicates are shown in the block map. At #11 block 5 (chat[1]'s
    fourth block) is a duplicate of block 3: its tile carries `=`, the legend says what `=`
    is, the head line counts `duplicates 1`."""
    app = PoolApp.from_spec(DUP)
    async with app.run_test(size=SIZE) as pilot:
        await goto(pilot, 11)
        view = app.screen.query_one(BlockMapView)
        assert [text for text, _ in tiles(view)[:6]] == ["×2", "×2", "×2", "", "", "="]
        assert "= a duplicate: another block registered its content first" in legend(app)
        assert re.search(r"\bduplicates 1\b", head(app))
        await goto(pilot, 25)  # the end: both released, block 5 cached in chat[1]'s entry
        assert [text for text, _ in tiles(view)[:6]] == ["1", "1", "1", "0", "·", "1="]
        assert "= a duplicate" in legend(app)
        assert re.search(r"\bduplicates 1\b", head(app))


async def test_no_duplicate_no_mark() -> None:
    app = PoolApp.from_spec(DUP)
    async with app.run_test(size=SIZE) as pilot:
        await goto(pilot, 9)  # chat[1] admitted; block 5 not computed yet
        assert "duplicate" not in legend(app) and "duplicate" not in head(app)


async def test_a_full_gpus_legend_explains_its_marks_and_keeps_figures_apart() -> None:
    """specs/mooncake_conv.pool at event 5000: 14 holds share the first 32 blocks (`×+`,
    ten or more holders), the legend has room for a few of the holds and folds the rest
    and the cache entry; holds of more than 9,999 units."""
    app = PoolApp.from_spec(MOONCAKE)
    async with app.run_test(size=SIZE) as pilot:
        await goto(pilot, 5000)
        assert app.snapshot is not None
        pool = app.snapshot.pool("kv")
        assert pool.entries and max(h.size for h in pool.holds) > 9999  # as the test needs
        assert pool.blocks is not None and max(pool.blocks.counts) >= 10
        text = legend(app)
        assert "×+ 10 or more" in text
        assert "cache entry more" in text  # the entry is folded: its digits are keyed above
        ranks = max(e.rank for e in pool.entries)
        assert f"0–{ranks} cached: eviction rank, 0 first" in text or (
            ranks == 0 and "0 cached: eviction rank, 0 first" in text
        )
        for line in text.splitlines():
            if line.startswith("██"):  # a hold's row
                assert re.search(r"units\)\s{2,}computed ", line), line
