"""The pools panel's legend: its eviction ranks are the simulator's (rank 0 is the entry the
next eviction takes, a waiting session's entry included: language.md §5.2, §8.2), and its
rows fit their width, folding what does not fit into a counted `+N … more`, never
dropping a hold or an entry silently; a panel of several pools scrolls to each of them.

specs/vllm_v1.pool, by its trace: #53 preempts chat[3] when chat[1]'s decode needs a block
(its 128 units stay cached, chat[3]'s only entry, rank 0), #54 puts chat[3] back at the head
of kv's queue (its admission would hit those 8 blocks), and #55 evicts 16 units of that
entry for chat[1]'s growth (#56): the entry of a waiting session is evicted like any other.
#236-#238: chat[2] waits with its entry at rank 0; its admission (#238, hit 160 = its whole
entry) takes its hit out of the entry first, so the eviction it makes (#237) takes chat[1]'s
entry, the next in rank.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from textual.widgets import Static

from pooltui.lang import compile_file
from pooltui.sim import Simulation
from pooltui.tui.app import PoolApp
from pooltui.tui.colors import Palette
from pooltui.tui.widgets.legend import pool_legend
from pooltui.tui.widgets.panels import PoolsPanel
from tests.tui.conftest import settle

SPECS = Path(__file__).parents[2] / "specs"
ROW = re.compile(r"^\S+\s+(?P<name>\S+)\s+(?:holds|cached|\d+ blocks?)")
RANK = re.compile(r"rank (?P<rank>\d+)")
HIT = re.compile(r"would hit (?P<hit>\d+)")


def legends(app: PoolApp) -> list[str]:
    return [str(s.content) for s in app.screen.query(".pool-legend").results(Static)]


async def goto(pilot: object, index: int) -> None:
    app = pilot.app  # type: ignore[attr-defined]
    await settle(pilot)  # type: ignore[arg-type]
    app.send("goto", index=index)
    await settle(pilot)  # type: ignore[arg-type]


@pytest.mark.parametrize("spec", ["vllm_v1.pool", "shared_prefix.pool"])
def test_each_eviction_takes_the_entry_the_previous_frames_legend_ranks_first(spec: str) -> None:
    """Stepping a whole run: every `evict` takes blocks of the entry the legend of the frame
    before it calls `rank 0 = evicted next`, or, when the eviction makes room for the
    admission of a waiting session whose row says its admission would hit all that entry's
    blocks, of the first entry after those (the hit leaves its entry before any eviction)."""
    program = compile_file(str(SPECS / spec))
    sim = Simulation(program)
    events = []
    while (ev := sim.step()) is not None:
        events.append(ev)
    sim = Simulation(program)  # again, each frame's snapshot taken as it is reached
    before = sim.snapshot()
    checked = 0
    for i, ev in enumerate(events):
        assert sim.step() == ev
        snap = sim.snapshot()
        if ev.moment == "evict":
            pool = before.pool(ev.pool)
            text = pool_legend(pool, 1000, Palette(), (), 300).plain
            assert "protected" not in text
            rows = [line for line in text.splitlines() if RANK.search(line)]
            assert len(rows) == len(pool.entries)
            assert "= evicted next" in rows[0] and "rank 0" in rows[0], rows[0]
            assert not any("evicted next" in row for row in rows[1:])
            # The event this eviction makes room for: the next one on this pool that is
            # not an eviction (nor a spill of what it evicted).
            made_for = next(
                e
                for e in events[i + 1 :]
                if e.pool == ev.pool and e.moment not in ("evict", "spill", "spill-drop")
            )
            skipped = 0
            for entry, row in zip(pool.entries, rows, strict=True):
                hit = HIT.search(row)
                whole = hit is not None and int(hit["hit"]) == entry.blocks
                if made_for.moment == "admit" and made_for.session == entry.session and whole:
                    skipped += 1
                    continue
                break
            victim = pool.entries[skipped]
            assert set(ev.blocks) <= set(victim.physical), (i, ev.why, rows)
            checked += 1
        before = snap
    assert checked > 20


@pytest.mark.parametrize("index", [54, 55])
async def test_a_waiting_sessions_entry_is_ranked_as_the_simulator_evicts_it(index: int) -> None:
    """The README's tour at 160x48: after #54 chat[3] waits and its entry is rank 0, the
    one #55 evicts from: the legend says so, and what chat[3]'s admission would hit (8
    blocks after #54, 7 after #55 took one), not that the entry is protected."""
    app = PoolApp.from_spec(str(SPECS / "vllm_v1.pool"))
    async with app.run_test(size=(160, 48)) as pilot:
        await goto(pilot, index)
        (text,) = legends(app)
        assert "protected" not in text
        row = next(line for line in text.splitlines() if "chat[3]" in line and "rank" in line)
        hit = 8 if index == 54 else 7
        assert "rank 0 = evicted next" in row, row
        assert f"waits; would hit {hit} blocks" in row, row


def _named(text: str) -> tuple[list[str], int]:
    """The sessions the legend's rows name (holds and entries), and how many it counts as
    folded (`+N holds and M cache entries more`)."""
    names = [m["name"] for line in text.splitlines() if (m := ROW.match(line))]
    folded = 0
    for line in text.splitlines():
        if line.startswith("+") and line.endswith("more"):
            folded = sum(int(n) for n in re.findall(r"(\d+) (?:holds?|cache entr)", line))
    return names, folded


@pytest.mark.parametrize("size", [(120, 30), (100, 28), (80, 24), (160, 48)])
async def test_legend_rows_fit_their_width_and_what_is_folded_is_counted(
    size: tuple[int, int],
) -> None:
    """vllm_v1 after #53 (chat[3] preempted, its prefix cached): three holds and chat[3]'s
    entry. Each row is one line of the legend's width; every hold and entry is a row or
    counted in the last line."""
    app = PoolApp.from_spec(str(SPECS / "vllm_v1.pool"))
    async with app.run_test(size=size) as pilot:
        await goto(pilot, 53)
        assert app.snapshot is not None
        pool = app.snapshot.pool("kv")
        assert len(pool.holds) == 3 and len(pool.entries) == 1
        widget = app.screen.query_one(".pool-legend", Static)
        if not widget.region.height:  # the narrow layout's Pools tab may be hidden
            return
        (text,) = legends(app)
        width = widget.content_region.width
        for line in text.splitlines():
            assert len(line) <= width, (line, width)
        names, folded = _named(text)
        assert len(names) + folded == 4, text
        if size != (80, 24):
            assert len(names) >= 1
        # And the widget shows every line it was given (no wrapping pushed one out).
        assert widget.region.height >= len(text.splitlines())


async def test_every_pool_of_a_tall_panel_is_reached_by_scrolling() -> None:
    """specs/spill_tiers.pool after #58 (the spill landed in dram) at 100x28: hbm, dram and
    ssd do not fit the panel at once: it shows a scroll bar, and scrolling brings each
    pool's head into view."""
    app = PoolApp.from_spec(str(SPECS / "spill_tiers.pool"))
    async with app.run_test(size=(100, 28)) as pilot:
        await goto(pilot, 58)
        panel = app.screen.query_one(PoolsPanel)
        assert panel.max_scroll_y > 0  # as the test needs: the cards do not fit
        assert panel.show_vertical_scrollbar
        for label in ("hbm", "dram", "ssd"):
            card = panel.card(label)
            assert card is not None
            panel.scroll_to_widget(card, animate=False, top=True)
            await settle(pilot)
            head = card.head.region
            assert head.height and panel.region.contains_region(head), label
