"""The debugger's figures: block-map render time and back-step latency.

    python -m benchmarks tui_bench [--blocks 65536] [--events 1000000] [--spec specs/azure_conv.pool]
                                   [--skip-sim]

1. Block map: a 64k-block pool in a 160x48 terminal. Time to render every visible line
   of one screenful from a cold cache (what a new snapshot costs), the same warm (a redraw),
   and a full scroll through the map one screenful at a time. Aim: < 5 ms a screenful.
2. Back-step latency: run the real simulator to N events (history on), then time `back()`
   and the snapshot the UI needs after it, at the end of the run and after jumps into the
   middle (`goto`). Aim: < 100 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import time
from pathlib import Path
from typing import Any


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def bench_block_map(nblocks: int, width: int, height: int) -> dict[str, float]:
    from textual.app import App, ComposeResult

    from pooltui.tui.synthetic import synthetic_pool
    from pooltui.tui.widgets.blockmap import BlockMapView

    pool = synthetic_pool(nblocks, holders=max(1, nblocks // 40))
    out: dict[str, float] = {}

    class MapApp(App[None]):
        CSS = "BlockMapView { height: 1fr; max-height: 100%; }"

        def compose(self) -> ComposeResult:
            yield BlockMapView(pool)

    async def run() -> None:
        app = MapApp()
        async with app.run_test(size=(width, height)) as pilot:
            await pilot.pause()
            view = app.query_one(BlockMapView)
            rows = view.scrollable_content_region.height
            total_rows = view.virtual_size.height

            def screenful() -> None:
                for y in range(rows):
                    view.render_line(y)

            cold = []
            for _ in range(20):
                view._invalidate()  # a new snapshot: every strip is stale
                t = time.perf_counter()
                screenful()
                cold.append(time.perf_counter() - t)
            warm = []
            for _ in range(20):
                t = time.perf_counter()
                screenful()
                warm.append(time.perf_counter() - t)
            view._invalidate()
            scroll = []
            t_all = time.perf_counter()
            for top in range(0, max(1, total_rows - rows + 1), rows):
                view.scroll_y = top
                t = time.perf_counter()
                screenful()
                scroll.append(time.perf_counter() - t)
            out["rows_visible"] = rows
            out["rows_total"] = total_rows
            out["cold_median"] = statistics.median(cold)
            out["cold_max"] = max(cold)
            out["warm_median"] = statistics.median(warm)
            out["scroll_screens"] = len(scroll)
            out["scroll_median"] = statistics.median(scroll)
            out["scroll_max"] = max(scroll)
            out["scroll_total"] = time.perf_counter() - t_all

    asyncio.run(run())
    return out


def bench_back(spec: str, events: int) -> dict[str, Any]:
    from pooltui.lang import compile_file
    from pooltui.sim import Simulation

    sim = Simulation(compile_file(spec))
    t = time.perf_counter()
    sim.run(events=events)
    run_time = time.perf_counter() - t
    out: dict[str, Any] = {"events": sim.cursor + 1, "run_s": run_time, "sim_time": sim.time}
    backs = []
    snaps = []
    for _ in range(50):  # successive back-steps from the end of the run
        t = time.perf_counter()
        sim.back()
        backs.append(time.perf_counter() - t)
        t = time.perf_counter()
        sim.snapshot()
        snaps.append(time.perf_counter() - t)
    out["back_median"] = statistics.median(backs)
    out["back_max"] = max(backs)
    out["snapshot_median"] = statistics.median(snaps)
    rng = random.Random(7)
    jumps = []
    mid_backs = []
    last = sim.cursor
    for _ in range(20):  # into the middle of the run, then back-steps from there
        target = rng.randrange(1, last)
        t = time.perf_counter()
        sim.goto(target)
        sim.snapshot()  # the UI shows the state there: count the replay it may need
        jumps.append(time.perf_counter() - t)
        for _ in range(3):
            t = time.perf_counter()
            sim.back()
            sim.snapshot()
            mid_backs.append(time.perf_counter() - t)
    out["goto_median"] = statistics.median(jumps)
    out["goto_max"] = max(jumps)
    out["mid_back_median"] = statistics.median(mid_backs)
    out["mid_back_max"] = max(mid_backs)
    out["ui_back"] = _ui_back_steps(sim)
    return out


def _ui_back_steps(sim: Any) -> list[float]:
    """End to end in the app: `p` pressed -> the frame after the back-step is on screen."""
    from textual import events

    from pooltui.tui.app import PoolApp

    sim.goto(sim.events[-1].index if sim.events else -1)
    app = PoolApp(sim=sim)
    took: list[float] = []

    async def run() -> None:
        async with app.run_test(size=(160, 48)) as pilot:
            await app.settle(timeout=120)
            await pilot.pause()
            for _ in range(20):
                shown = app.frames_applied
                t = time.perf_counter()
                app.post_message(events.Key("p", "p"))
                while app.frames_applied == shown:
                    await asyncio.sleep(0.0005)
                took.append(time.perf_counter() - t)
                await pilot.pause()

    asyncio.run(run())
    return took


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks tui_bench")
    parser.add_argument("--blocks", type=int, default=65536)
    parser.add_argument("--size", default="160x48")
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument(
        "--spec", default=str(Path(__file__).resolve().parent.parent / "specs" / "azure_conv.pool")
    )
    parser.add_argument("--skip-sim", action="store_true", help="only the block map")
    args = parser.parse_args(argv)
    width, height = (int(x) for x in args.size.split("x"))

    m = bench_block_map(args.blocks, width, height)
    print(f"block map: {args.blocks} blocks, {width}x{height} terminal, "
          f"{int(m['rows_visible'])} visible rows of {int(m['rows_total'])}")  # fmt: skip
    print(
        f"  screenful, cold cache (new snapshot): median {_ms(m['cold_median'])}, max {_ms(m['cold_max'])}"
    )
    print(f"  screenful, warm cache (redraw):       median {_ms(m['warm_median'])}")
    print(f"  full scroll: {int(m['scroll_screens'])} screenfuls, median {_ms(m['scroll_median'])}, "
          f"max {_ms(m['scroll_max'])}, total {_ms(m['scroll_total'])}   (aim < 5 ms a screenful)")  # fmt: skip
    if args.skip_sim:
        return 0
    try:
        b = bench_back(args.spec, args.events)
    except Exception as exc:  # the simulator or the spec is not there: say so
        print(f"back-step: not measured ({type(exc).__name__}: {exc})")
        return 1
    print(
        f"back-step: {b['events']} events of {args.spec} (simulated {b['sim_time']:.1f}s) in {b['run_s']:.1f}s"
    )
    print(f"  back() at the end of the run: median {_ms(b['back_median'])}, max {_ms(b['back_max'])}; "
          f"snapshot {_ms(b['snapshot_median'])}")  # fmt: skip
    ui = b["ui_back"]
    print(
        f"  in the app, key p -> frame shown: median {_ms(statistics.median(ui))}, max {_ms(max(ui))}"
    )
    print(
        f"  goto(random index) + snapshot: median {_ms(b['goto_median'])}, max {_ms(b['goto_max'])}"
    )
    print(f"  back() + snapshot after a jump: median {_ms(b['mid_back_median'])}, "
          f"max {_ms(b['mid_back_max'])}   (aim < 100 ms)")  # fmt: skip
    return 0
