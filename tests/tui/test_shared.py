"""Shared blocks in the debugger (issue 11's debugger part), on tests/tui/specs/shared.pool:
three chats of 12 units (3 blocks of 4) whose first 8 units are the content 'sys'.

Worked out by hand from content-and-reload.md §1-§2 and language.md §7:

| t      | event                    | blocks of kv (reference count)                       |
| 0.004  | #2 admit chat[0], hit 0   | 0,1 ('sys'), 2 (chat[0]'s own) -> 1 each              |
| 0.004  | #3 iteration 1 takes 12   | 0,1,2 registered (their tokens are taken)            |
| 0.008  | chat[1] arrives, queues   | (admission waits for the next iteration)             |
| 0.012  | chat[2] arrives, queues   |                                                      |
| 0.014  | #10 grow chat[0] to 13    | block 3 (its decode's first token)                   |
| 0.014  | #11 admit chat[1]         | hits 0,1 (8 units < 12: the cap allows), shared 8    |
|        |                           | (chat[0] holds them); new block 4 -> 0,1 count 2     |
| 0.014  | #12 admit chat[2]         | hits 0,1, shared 8; new block 5 -> 0,1 count 3       |
| 0.044  | #24 release chat[0]       | 0,1 count 2; its private block 2 cached (count 0)    |
| 0.054  | #29 release chat[1]       | 0,1 count 1: nothing shared any more                 |

So after #12 blocks 0 and 1 are shared (count 3, holders chat[0], chat[1], chat[2] in that
order), one content group 'sys': 2 blocks, 3 holders; the head line says `shared 2`; the
first `admit` with shared > 0 is #11, the second #12.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static

from pooltui.lang import compile_file
from pooltui.sim import Simulation
from pooltui.tui.app import PoolApp
from pooltui.tui.breakpoint_text import Names, parse_breakpoint
from pooltui.tui.breakpoints import BreakpointError, BreakpointSet
from pooltui.tui.widgets.blockmap import BlockMapView
from pooltui.tui.widgets.inspector import inspect_block_text
from pooltui.tui.widgets.legend import pool_legend
from pooltui.tui.widgets.panels import pool_head
from pooltui.tui.widgets.sharing import shared_blocks, shared_groups
from tests.tui.conftest import SIZE, add_breakpoint, keys, settle, submit

SHARED = str(Path(__file__).parent / "specs" / "shared.pool")
NAMES = Names(("kv",), ("gpu",), ("chat",), (("chat", 3),), (("kv", 1),), (("gpu", 1),))


def snapshot_at(index: int) -> Any:
    sim = Simulation(compile_file(SHARED))
    sim.run(events=index + 1)
    snap = sim.snapshot()
    assert snap.event_index == index
    return snap


def test_three_holders_share_the_prompt_after_the_third_admission() -> None:
    pool = snapshot_at(12).pool("kv")
    assert pool.shared == 2
    assert shared_blocks(pool) == {0, 1}
    (group,) = shared_groups(pool)
    assert (group.content, group.blocks) == ("'sys'", 2)
    assert [h.session for h in group.holders] == ["chat[0]", "chat[1]", "chat[2]"]


def test_a_release_leaves_two_holders_and_the_next_one_none() -> None:
    (group,) = shared_groups(snapshot_at(24).pool("kv"))
    assert [h.session for h in group.holders] == ["chat[1]", "chat[2]"]
    pool = snapshot_at(29).pool("kv")
    assert pool.shared == 0 and shared_groups(pool) == []


def test_head_line_counts_shared_blocks_only_when_some_are() -> None:
    from pooltui.tui.colors import Palette

    assert "shared 2" in pool_head(snapshot_at(12).pool("kv"), None, 100, Palette()).plain
    assert "shared" not in pool_head(snapshot_at(3).pool("kv"), None, 100, Palette()).plain


def test_legend_groups_shared_blocks_by_content() -> None:
    from pooltui.tui.colors import Palette

    legend = pool_legend(snapshot_at(12).pool("kv"), 10, Palette(), ("shared",), 100).plain
    lines = legend.splitlines()
    assert lines[0] == "×N held by N holds"
    assert lines[1] == "×  content 'sys': 2 blocks, 3 holders: chat[0], chat[1], chat[2]"
    assert lines[2].startswith("██ chat[0]")  # then the holds, as before


def test_inspecting_a_shared_block_lists_count_holders_and_content() -> None:
    text = inspect_block_text(snapshot_at(12), "kv", 0).plain
    assert "state held · reference count 3 (shared)" in text
    assert "registered: others can hit it" in text
    assert "3 holders: chat[0], chat[1], chat[2] (first holder first)" in text
    assert "content: 'sys'\n" in text


def test_inspecting_private_and_cached_blocks() -> None:
    # #12: block 4 is chat[1]'s third block, units 8..11, past 'sys': its own stream,
    # registered already (iteration 2 takes its 4 prefill tokens as it admits chat[1]).
    text = inspect_block_text(snapshot_at(12), "kv", 4).plain
    assert "state held · reference count 1 · registered" in text
    assert "1 holder: chat[1]\n" in text
    assert "content: chat[1]'s own tokens\n" in text  # its name, not `private 1`
    # #24: chat[0]'s block 2 (units 8..11) stays cached: no holder, still registered.
    text = inspect_block_text(snapshot_at(24), "kv", 2).plain
    assert "state cached · reference count 0 · registered" in text
    assert "holder" not in text.split("content:")[0]
    assert "content: chat[0]'s own tokens\n" in text  # cached, its holder gone: still named
    # A free block says free, as before.
    assert "free" in inspect_block_text(snapshot_at(24), "kv", 15).plain


@pytest.mark.parametrize(
    ("text", "figures"),
    [
        ("admit shared>0", (("shared", ">", 0.0),)),
        ("admit shared > 0 pool=kv", (("shared", ">", 0.0),)),
        ("admit hit>=8 shared==8", (("hit", ">=", 8.0), ("shared", "==", 8.0))),
        ("evict units <= 3.5", (("units", "<=", 3.5),)),
        ("admit shared=0", (("shared", "=", 0.0),)),
        # NUMBER as the language writes it (language.md §2): `_` groups digits, `inf`
        ("admit hit>=1_000", (("hit", ">=", 1000.0),)),
        ("evict units < inf", (("units", "<", float("inf")),)),
        ("admit hit>2.5E+2", (("hit", ">", 250.0),)),
    ],
)
def test_figure_comparisons_parse(text: str, figures: tuple[Any, ...]) -> None:
    assert parse_breakpoint(text, NAMES).figures == figures


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("admit shard>0", "admit events have no figure 'shard'; did you mean shared?"),
        ("release hit>0", "(its figures: units, cached)"),
        ("admit pool>3", "pool= takes a name: pool=NAME"),
        # not a number: said of the comparison, not taken for a pool's name
        ("admit shared>nan", "shared>nan: a figure is compared with a number, not 'nan'"),
        ("admit hit > lots", "hit>lots: a figure is compared with a number, not 'lots'"),
        ("admit shard>x", "did you mean shared?"),  # the figure's name first
    ],
)
def test_a_figure_the_moment_lacks_is_refused(text: str, said: str) -> None:
    with pytest.raises(BreakpointError) as caught:
        parse_breakpoint(text, NAMES)
    assert said in caught.value.text


def test_describe_keeps_the_comparison() -> None:
    assert parse_breakpoint("admit shared > 0 pool=kv", NAMES).describe() == (
        "admit pool=kv shared>0"
    )


def stops(text: str) -> list[int]:
    """The events a breakpoint stops at over the whole run."""
    sim = Simulation(compile_file(SHARED))
    sim.run()
    bps = BreakpointSet()
    bps.add(parse_breakpoint(text, NAMES))
    out, prev = [], 0.0
    for ev in sim.events:
        if bps.check(ev, prev, lambda _: 0.0) is not None:
            out.append(ev.index)
        prev = ev.time
    return out


def test_shared_hit_breakpoints_stop_where_worked_out() -> None:
    assert stops("admit shared>0") == [11, 12]
    assert stops("admit hit=0") == [2]  # chat[0], the only one with nothing to hit
    assert stops("admit shared>8") == []
    assert stops("admit session=chat[2] shared>=8") == [12]


async def test_continue_stops_on_the_first_shared_hit() -> None:
    app = PoolApp.from_spec(SHARED)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await add_breakpoint(pilot, "admit shared>0")
        await keys(pilot, "c")
        assert app.snapshot is not None and app.snapshot.event_index == 11
        status = str(app.screen.query_one("#status", Static).content)
        assert "breakpoint #1: admit shared>0" in status
        await keys(pilot, "c")
        assert app.snapshot.event_index == 12


async def test_a_figure_compared_with_a_language_number_is_added_and_a_word_is_refused() -> None:
    """language.md §12.2: FIGURE OP NUMBER, NUMBER as in the language (§2: `16_384`,
    `inf`). `admit hit>=1_000` is added as typed; `admit shared>nan` says what is wrong
    with it in the breakpoints screen (it said 'shared>nan' is not a pool, stage or
    session class of this spec)."""
    app = PoolApp.from_spec(SHARED)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("b")
        await settle(pilot)
        await submit(pilot, "admit hit>=1_000")
        assert [bp.describe() for bp in app.breakpoints.items] == ["admit hit>=1000"]
        await submit(pilot, "admit shared>nan")
        error = str(app.screen.query_one("#bp-error", Static).content)
        assert "shared>nan: a figure is compared with a number, not 'nan'" in error
        assert "is not a pool" not in error
        assert len(app.breakpoints.items) == 1


async def goto(pilot: Any, index: int) -> None:
    await settle(pilot)
    pilot.app.send("goto", index=index)
    await settle(pilot)


async def test_the_map_marks_shared_blocks_with_their_count() -> None:
    app = PoolApp.from_spec(SHARED)
    async with app.run_test(size=SIZE) as pilot:
        await goto(pilot, 13)  # the iteration after #12: no block of the event marked
        head = str(app.screen.query_one(".pool-head", Static).content)
        assert "shared 2" in head
        row = app.screen.query_one(BlockMapView).render_line(0).text
        cells = row[7:].split()  # 16 blocks: one row of wide tiles
        assert cells[:2] == ["×3", "×3"]  # blocks 0 and 1, three holders
        assert "×" not in "".join(cells[2:])
        legend = str(app.screen.query_one(".pool-legend", Static).content)
        assert "content 'sys': 2 blocks, 3 holders: chat[0], chat[1], chat[2]" in legend


async def test_clicking_a_shared_block_shows_its_holders_in_details() -> None:
    app = PoolApp.from_spec(SHARED)
    async with app.run_test(size=SIZE) as pilot:
        await goto(pilot, 13)
        app.inspect_block("kv", 1)
        await settle(pilot)
        details = str(app.screen.query_one("#details-body", Static).content)
        assert "block 1 of kv" in details
        assert "reference count 3 (shared)" in details
        assert "3 holders: chat[0], chat[1], chat[2]" in details
        assert "content: 'sys'" in details


def test_a_chain_of_keys_the_same_holds_share_is_one_legend_line() -> None:
    """tests/tui/specs/chain.pool: req[0] (16 units, blocks of 4, keys 7, 8, 9 then its own)
    is admitted at t=0 and its iteration registers blocks 0-2; req[1] (the same keys) waits
    for the next iteration (t=0.01), where req[0] grows into block 4 (#8) and req[1] hits
    blocks 0-2, 12 units < 16 (#9). Each block reads one key, '7', '8', '9'; the same two
    holds hold all three, so they are one group '7 … 9', not three lines."""
    sim = Simulation(compile_file(str(Path(__file__).parent / "specs" / "chain.pool")))
    sim.run(events=10)
    pool = sim.snapshot().pool("kv")
    assert pool.shared == 3
    (group,) = shared_groups(pool)
    assert (group.content, group.blocks) == ("7 … 9", 3)
    assert [h.session for h in group.holders] == ["req[0]", "req[1]"]


# A session's hold nested in its own hold of the same pool hits the outer one's blocks (its
# private stream, the same in every hold of it), which the outer still holds (as in
# test_never_fires.py): blocks 0 and 1 (units 0..7 of a's own stream) have two holders, both
# a's. The legend's content group names the session whose tokens they are.
NESTED = """
stage gpu step { time 1; }
pool kv { cap 64; block 4; admit via gpu; }
session a { arrive at (0);
  hold kv (8) { run gpu prefill (8); hold kv (12) { run gpu prefill (4); } } }
"""


def test_the_legend_names_whose_own_tokens_a_shared_private_block_holds(tmp_path: Path) -> None:
    from pooltui.tui.colors import Palette

    spec = tmp_path / "nested.pool"
    spec.write_text(NESTED)
    sim = Simulation(compile_file(str(spec)))
    while not sim.snapshot().pool("kv").shared:
        assert sim.step() is not None
    pool = sim.snapshot().pool("kv")
    legend = pool_legend(pool, 10, Palette(), ("shared",), 100).plain
    assert "×  content a's own tokens: 2 blocks, 1 holder: a\n" in legend, legend
