"""What the debugger shows of a reload (docs/language.md §5.7): breakpoints on `reload`
and `reloaded` (narrowed by their parties and figures, and in the app with `c`), `]` `l`
to the next reload, the link's reload jobs beside its spills, the reloading session under its
step stage, and the blocks being loaded marked as landing in the block map, with the
legend's word for them. Over tests/sim/test_reload.py's worked example (by hand there):
at its `reload` (1.01) b's spill is in service on pcie and a's reload of 48 units from
dram waits behind it; a's blocks 0-2 are landing."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.text import Text
from textual.geometry import Region
from textual.pilot import Pilot
from textual.widgets import Static

from pooltui.cli.main import main
from pooltui.tui.app import PoolApp
from pooltui.tui.breakpoint_text import Names, parse_breakpoint
from pooltui.tui.breakpoints import BreakpointError, moment_matches
from pooltui.tui.colors import Palette
from pooltui.tui.widgets.inspector import inspect_block_text
from pooltui.tui.widgets.legend import marks_key, pool_legend
from pooltui.tui.widgets.panels import queue_item_rows, stage_text
from tests.sim.helpers import of, run_all, sim_of
from tests.sim.test_reload import example
from tests.tui.conftest import SIZE, add_breakpoint, keys, settle


def test_the_panels_show_a_reload_in_flight() -> None:
    sim = sim_of(example())
    events = run_all(sim)
    sim.goto(of(events, "reload")[0].index)
    snap = sim.snapshot()
    pcie = stage_text(snap.stage("pcie"), Palette()).plain
    assert "b spill 64 units to dram" in pcie
    assert "queued: a reload 48 units from dram to hbm" in pcie
    gpu = stage_text(snap.stage("gpu"), Palette()).plain
    assert "reloading (no seat, no tokens yet): a" in gpu
    legend = pool_legend(snap.pool("hbm"), 10, Palette(), ("landing",)).plain
    assert "reloading 48 units" in legend
    assert "↓ landing: a reload in flight loads them" in legend
    assert isinstance(marks_key(("landing",), Palette()), Text)
    assert "landing: a reload in flight" in inspect_block_text(snap, "hbm", 1).plain
    assert "landing" not in inspect_block_text(snap, "hbm", 3).plain


def test_breakpoints_stop_on_reload_and_reloaded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "example.pool"
    spec.write_text(example())
    out = tmp_path / "bp.svg"
    assert main(["render", str(spec), "--break", "reload", "-o", str(out)]) == 0
    assert "breakpoint #1: reload" in capsys.readouterr().out
    svg = out.read_text().replace("&#160;", " ")
    assert "landing: a reload in flight loads them" in svg  # the block map's legend
    assert main(["render", str(spec), "--break", "reloaded pool=hbm a", "-o", str(out)]) == 0
    assert "breakpoint #1: reloaded" in capsys.readouterr().out
    # no reload of b ever happens: the breakpoint never fires (exit 1)
    assert main(["render", str(spec), "--break", "reload b", "-o", str(out)]) == 1


# The worked example's `reload` (a, hbm, over pcie, ahead 1: behind b's spill) and its
# `reloaded` 0.07 s later; with two lanes the reload starts at once (ahead 0) and lands
# after 0.03 s. Each breakpoint: the (moment, session) of the events it stops at.
@pytest.mark.parametrize(
    ("text", "lanes", "stops"),
    [
        ("reload stage=pcie", 1, [("reload", "a")]),  # the link is the event's stage
        ("reload stage=gpu", 1, []),  # not the step stage the session runs on
        ("reloaded pool=hbm", 1, [("reloaded", "a")]),  # the pool the blocks land in
        ("reloaded pool=dram", 1, []),  # not the tier they come from
        ("reload a", 1, [("reload", "a")]),
        ("reload ahead>0", 1, [("reload", "a")]),
        ("reload ahead>0", 2, []),
        ("reload work=48", 1, [("reload", "a")]),
        ("reload hit>0", 1, []),
        ("reloaded took>0.05", 1, [("reloaded", "a")]),  # 0.07
        ("reloaded took>0.05", 2, []),  # 0.03
    ],
)
def test_breakpoints_narrow_reloads_by_parties_and_figures(
    text: str, lanes: int, stops: list[tuple[str, str]]
) -> None:
    names = Names(pools=("hbm", "dram"), stages=("gpu", "pcie"), classes=("a", "b"))
    bp = parse_breakpoint(text, names)
    events = run_all(sim_of(example(lanes=lanes)))
    assert [(e.moment, e.session) for e in events if moment_matches(bp, e)] == stops


def test_a_figure_reloaded_lacks_is_refused() -> None:
    names = Names(pools=("hbm",), stages=("pcie",), classes=("a",))
    with pytest.raises(BreakpointError) as info:
        parse_breakpoint("reloaded tok>1", names)
    assert "took" in str(info.value)


def test_the_run_summary_counts_reloads_and_each_links_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The worked example: 1 reload of 48 units; hits 48 of 176 units asked, all reloaded;
    # pcie busy 0.03 + 0.04 + 0.03 = 0.1 s of the run's 1.09 s (9.2 %), 2 spills, 1 reload.
    spec = tmp_path / "example.pool"
    spec.write_text(example())
    assert main(["run", str(spec), "-q"]) == 0
    out = capsys.readouterr().out
    assert "own 0.0%  shared 0.0%  reloaded 27.3%" in out
    assert (
        "reloads 1 (48 units landed; 100.0% of hit units came from tiers; "
        "recompute saved 48 tokens)"
    ) in out
    assert "link pcie: busy 0.1s (9.2%), 2 spills, 1 reload, 0 sends" in out
    # Without reload: no reload line; the link has a's and b's spills: 0.07 s of the run's
    # 1.05 s (b's spill lands after a ends at 1.02)
    spec.write_text(example(reload=""))
    assert main(["run", str(spec), "-q"]) == 0
    out = capsys.readouterr().out
    assert not any(line.startswith("reloads") for line in out.splitlines())
    assert "link pcie: busy 0.07s (6.7%), 2 spills, 0 reloads, 0 sends" in out


async def test_the_debugger_finds_reloads_and_stops_on_them(tmp_path: Path) -> None:
    # `]` then `l`: the next `reload` (the example has one); again: there is none after it.
    # The breakpoint `reloaded` with `c`: the stop at a's `reloaded`, its blocks no longer
    # landing.
    spec = tmp_path / "example.pool"
    spec.write_text(example())
    events = run_all(sim_of(example()))
    reload, reloaded = of(events, "reload")[0].index, of(events, "reloaded")[0].index
    app = PoolApp.from_spec(str(spec))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await keys(pilot, "right_square_bracket", "l")
        assert app.snapshot is not None and app.snapshot.event_index == reload
        assert app.stop == f"next reload: event #{reload}"
        await keys(pilot, "right_square_bracket", "l")
        assert app.stop == f"no reload after #{reload}"
        app.send("goto", index=0)
        await settle(pilot)
        await add_breakpoint(pilot, "reloaded pool=hbm")
        await keys(pilot, "c")
        await settle(pilot)
        assert app.snapshot is not None and app.snapshot.event_index == reloaded
        assert "breakpoint #1: reloaded" in str(app.stop)
        blocks = app.snapshot.pool("hbm").blocks
        assert blocks is not None and blocks.landing == frozenset()


async def _at_117(app: PoolApp, pilot: Pilot[int]) -> None:
    """specs/spill_tiers.pool gone to #117: chat[0]'s `reload` (the two tests below)."""
    await settle(pilot)
    app.send("goto", index=117)
    await settle(pilot)


async def test_a_reloading_holds_row_says_so_at_120x30() -> None:
    # specs/spill_tiers.pool, by its trace: at #117 chat[0] is admitted to hbm (hit 24)
    # and reloads 28 units from dram behind 3 jobs on pcie. The row of its hold under the
    # block map says it is reloading (language.md §5.7) even where the row is cut short:
    # that is what the ↓ marks on its blocks are about, more than its context.
    app = PoolApp.from_spec(str(Path(__file__).parents[2] / "specs" / "spill_tiers.pool"))
    async with app.run_test(size=(120, 30)) as pilot:
        await _at_117(app, pilot)
        assert app.snapshot is not None and app.snapshot.last_event is not None
        assert app.snapshot.last_event.moment == "reload"
        legend = str(app.screen.query_one(".pool-legend", Static).content)
        row = next(line for line in legend.splitlines() if "chat[0]" in line)
        assert "reloading 28" in row, row


def test_the_queue_says_whose_reload_a_hold_waits_for() -> None:
    # tests/sim/test_reload_shared.py's SHARED: at c's `reload` d waits for it, at its
    # `reloaded` no more. The words are a line of their own under d's row: the row's
    # columns fill a narrow panel (120x30), which would cut a note at its end.
    from tests.sim.test_reload_shared import SHARED

    def lines(item: object) -> list[str]:
        rows = queue_item_rows(item, 9, 4, Palette())  # type: ignore[arg-type]
        return [(row if isinstance(row, Text) else row()).plain for row in rows]

    sim = sim_of(SHARED)
    events = run_all(sim)
    sim.goto(of(events, "reload")[0].index)
    (item,) = sim.snapshot().pool("hbm").queue
    row, note = lines(item)
    assert row.startswith("  0  d ") and note == "     ↓ waits for c's reload of its blocks"
    sim.goto(of(events, "reloaded")[0].index)
    (item,) = sim.snapshot().pool("hbm").queue
    assert len(lines(item)) == 1


async def test_a_link_jobs_row_keeps_its_percentage_at_120x30() -> None:
    # specs/spill_tiers.pool at #117 (as above): pcie has jobs in service. Each job's row
    # in the Stages panel says how far it has got; a narrow panel cuts a row's end, so the
    # row must not end with that figure: at 120x30 every job row on screen shows its `%`.
    app = PoolApp.from_spec(str(Path(__file__).parents[2] / "specs" / "spill_tiers.pool"))
    async with app.run_test(size=(120, 30)) as pilot:
        await _at_117(app, pilot)
        body = app.screen.query_one("#stages-body")
        region = body.region.intersection(app.screen.region)
        assert region.area > 0
        strips = body.render_lines(Region(0, 0, region.width, region.height))
        rows = [strip.text for strip in strips if "░" in strip.text or "█" in strip.text]
        assert rows, [strip.text for strip in strips]
        assert all("%" in row for row in rows), rows
