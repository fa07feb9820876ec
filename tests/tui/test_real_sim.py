"""Pilot tests against the real simulator and front end, on tests/tui/specs/small.pool:
eight chats on a 16-block pool with LIFO preemption (the first preemption is chat[3]'s,
when chat[0]'s decode needs a block and none is free or cached)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from textual.widgets import Static

from pooltui.cli.main import main
from pooltui.lang import SpecError, compile_file
from pooltui.sim import Simulation
from pooltui.sim.testing import break_pool
from pooltui.tui.app import PoolApp
from pooltui.tui.debugger import DebuggerScreen
from pooltui.tui.screens import CompileErrorScreen
from pooltui.tui.widgets.blockmap import BlockMapView
from tests.tui.conftest import SIZE, add_breakpoint, keys, settle, submit

SPECS = Path(__file__).parent / "specs"
SMALL = str(SPECS / "small.pool")
BAD = str(SPECS / "bad.pool")


def status(app: PoolApp) -> str:
    return str(app.screen.query_one("#status", Static).content)


async def test_opens_the_spec_with_its_opening_comment() -> None:
    app = PoolApp.from_spec(SMALL)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, DebuggerScreen)
        notes = str(app.screen.query_one("#notes-body", Static).content)
        assert notes.startswith("Eight chats share a small KV cache with LIFO preemption")


async def test_step_iteration_and_back_on_the_real_simulator() -> None:
    app = PoolApp.from_spec(SMALL)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await keys(pilot, "n", "n", "n")
        snap = app.snapshot
        assert snap is not None and snap.last_event is not None
        assert snap.event_index == 2 and snap.last_event.moment == "admit"
        assert snap.pool("kv").allocated > 0
        await keys(pilot, "i")
        assert app.snapshot.last_event.moment == "iteration-end"
        after_iteration = app.snapshot.event_index
        await keys(pilot, "p", "p")
        assert app.snapshot.event_index == after_iteration - 2


async def test_continue_to_the_first_preemption() -> None:
    app = PoolApp.from_spec(SMALL)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await add_breakpoint(pilot, "preempt pool=kv")
        await keys(pilot, "c")
        snap = app.snapshot
        assert snap is not None and snap.last_event is not None
        assert snap.last_event.moment == "preempt"
        assert snap.last_event.session == "chat[3]"
        # The victim's blocks are highlighted; it is back at the head of the queue next.
        assert app.screen.query_one(BlockMapView).highlight == frozenset(snap.last_event.blocks)
        await keys(pilot, "n")
        assert app.snapshot.pool("kv").queue[0].session == "chat[3]"
        assert app.snapshot.pool("kv").queue[0].preempted


async def test_condition_breakpoint_on_the_real_simulator() -> None:
    app = PoolApp.from_spec(SMALL)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await add_breakpoint(pilot, "if queued(kv) >= 2")
        await keys(pilot, "c")
        snap = app.snapshot
        assert snap is not None and snap.last_event is not None
        assert len(snap.pool("kv").queue) >= 2
        assert snap.last_event.moment == "enqueue"
        await keys(pilot, "p")
        assert len(app.snapshot.pool("kv").queue) < 2


async def test_time_breakpoint_and_goto_time_on_the_real_simulator() -> None:
    app = PoolApp.from_spec(SMALL)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await add_breakpoint(pilot, "at 0.3")
        await keys(pilot, "c")
        snap = app.snapshot
        assert snap is not None and snap.time >= 0.3
        await keys(pilot, "p")
        assert app.snapshot.time < 0.3
        await keys(pilot, "g")
        await submit(pilot, "0.5s")
        assert app.snapshot.time <= 0.5
        await keys(pilot, "n")
        assert app.snapshot.time > 0.5


async def test_condition_errors_are_located_by_the_front_end() -> None:
    app = PoolApp.from_spec(SMALL)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await keys(pilot, "b")
        await submit(pilot, "if queued(kvv) > 1")
        error = str(app.screen.query_one("#bp-error", Static).content)
        first = error.splitlines()[0]
        assert ":1:" in first and "error" in first and "kvv" in first
        assert "^" in error
        assert len(app.breakpoints) == 0


async def test_invariant_halt_on_a_broken_pool() -> None:
    app = PoolApp.from_spec(SMALL)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await keys(pilot, "n", "n", "n")
        assert isinstance(app.sim, Simulation)
        break_pool(app.sim, "kv")  # the worker is idle: nothing else touches the simulation
        await keys(pilot, "c")
        snap = app.snapshot
        assert snap is not None and snap.violation is not None and snap.halted
        assert app.stop_kind == "violation"
        assert "invariant violated" in status(app)
        assert app.screen.query_one(BlockMapView).violation_blocks == frozenset(
            snap.violation.blocks
        )
        assert snap.violation.message in str(app.screen.query_one("#details-body", Static).content)


async def test_watch_on_the_real_simulator() -> None:
    app = PoolApp.from_spec(SMALL)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await keys(pilot, "w")
        await submit(pilot, "free(kv)")
        await keys(pilot, "escape")
        assert app.watch_values[0].value == 256
        await keys(pilot, "n", "n", "n")  # the admission takes chat[0]'s blocks
        assert app.watch_values[0].changed and app.watch_values[0].value < 256


async def test_a_spec_that_does_not_compile_shows_the_check_errors(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SpecError):
        compile_file(BAD)
    assert main(["check", BAD]) == 1
    check_says = capsys.readouterr().err.rstrip("\n")
    app = PoolApp.from_spec(BAD)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, CompileErrorScreen)
        body = str(app.screen.query_one("#error-body", Static).content)
        assert body == check_says
        assert body.startswith(f"{BAD}:5:8: error: unknown pool 'kvv'")


async def test_a_missing_spec_is_an_error_not_a_traceback() -> None:
    app = PoolApp.from_spec(str(SPECS / "missing.pool"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, CompileErrorScreen)
        body = str(app.screen.query_one("#error-body", Static).content)
        assert "missing.pool" in body and "Traceback" not in body


async def test_keys_answer_while_a_long_run_goes() -> None:
    """The run is in the worker thread; keys are handled between its frames."""
    from textual import events

    app = PoolApp.from_spec(str(SPECS / "long.pool"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        # Keys go in as events: pilot.press would wait for the screen to be idle.
        app.post_message(events.Key("c", "c"))
        for _ in range(3000):  # until the run has shown some of its events
            if app.snapshot is not None and app.snapshot.event_index > 100:
                break
            await asyncio.sleep(0.01)
        assert app.running
        # Each key is handled while the run goes on: the speed changes and the run is
        # still running, far from its end.
        for _ in range(5):
            before = app.rate
            app.post_message(events.Key("plus", "+"))
            while app.rate == before:
                await asyncio.sleep(0.001)
            assert app.running
            assert app.snapshot is not None and not app.snapshot.finished
            await asyncio.sleep(0.1)
        app.post_message(events.Key("space", " "))
        await asyncio.sleep(0.01)
        await app.settle()
        assert not app.running and app.stop == "paused"
        assert app.snapshot is not None and app.snapshot.event_index > 100
        assert not app.snapshot.finished


async def test_a_runtime_error_of_the_spec_stops_the_run() -> None:
    spec = str(SPECS / "runtime_error.pool")
    app = PoolApp.from_spec(spec)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await keys(pilot, "c")
        assert app.stop_kind == "error"
        assert app.stop == "runtime error: division by zero"
        text = str(app.screen.query_one("#details-body", Static).content)
        # Located like `pooltui check`: FILE:LINE:COL, the line, a caret under the culprit:
        # the divisor `2 - serial` (it was the whole `32 / (2 - serial)`, from 6:12).
        assert f"{spec}:6:18: error: division by zero" in text
        assert "6 |   prompt = 32 / (2 - serial);" in text
        assert "  |                  ^^^^^^^^^^\n" in text
        assert "Traceback" not in text


async def test_frames_carry_the_inspected_session_only_and_a_look_brings_another() -> None:
    """The worker's frames carry the views of the sessions inspected (none at first): a
    session inspected later is shown again by a `look`, which keeps what the status says."""
    app = PoolApp.from_spec(SMALL)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await keys(pilot, "g")
        await submit(pilot, "60")
        snap = app.snapshot
        assert snap is not None and snap.event_index == 60
        assert snap.sessions == () and snap.shown == frozenset()
        said = status(app)
        pool = snap.pool("kv")
        sid = pool.holds[0].session_id
        name = pool.holds[0].session
        app.action_inspect_session(sid)
        await settle(pilot)
        snap = app.snapshot
        assert snap is not None and snap.event_index == 60
        assert [s.session_id for s in snap.sessions] == [sid]
        details = str(app.screen.query_one("#details-body", Static).content)
        assert name in details and "class chat" in details and "…" not in details
        assert status(app) == said
        await keys(pilot, "n")  # the next step's frame carries it too
        assert app.snapshot is not None and app.snapshot.covers(sid)
