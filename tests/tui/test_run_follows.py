"""A run (`c`, `r`, `C`) follows the breakpoints and watches as they are now: one added,
disabled or deleted while it goes counts from the next event it checks.

The fake is held at one event of the run (`HeldSim`) while the test changes the
breakpoints or the watches on the screen, then let go: a change in the middle of the run,
whatever the machine's speed. Event numbers are the fake's (tests/tui/fakesim.py): its
evictions are events 43, 55 and 72, and it has 84 events.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Static

from pooltui.sim.events import Event
from pooltui.tui.app import PoolApp
from pooltui.tui.screens import BreakpointsScreen, WatchesScreen
from tests.tui.conftest import SIZE, add_breakpoint, settle
from tests.tui.fakesim import FakeSim, fake_compile_condition

EVICTS = (43, 55, 72)
LAST = 83
NEVER = -2  # no cursor: not held


class HeldSim(FakeSim):
    """The fake, holding the worker at cursor `at` (in `step` going forwards, `back` going
    backwards) until the test sets `go`."""

    def __init__(self, at: int) -> None:
        super().__init__()
        self.at = at
        self.reached = threading.Event()
        self.go = threading.Event()

    def _hold(self) -> None:
        if self._cursor == self.at and not self.go.is_set():
            self.reached.set()
            self.go.wait(60)  # a bound: a test that fails before letting go still ends

    def step(self) -> Event | None:
        self._hold()
        return super().step()

    def back(self) -> Event | None:
        self._hold()
        return super().back()


def held_app(at: int) -> tuple[PoolApp, HeldSim]:
    sim = HeldSim(at)
    return PoolApp(sim=sim, compile_condition=fake_compile_condition), sim


def status(app: PoolApp) -> str:
    return str(app.screen.query_one("#status", Static).content)


async def until(pilot: Pilot[Any], condition: Callable[[], bool], what: str) -> None:
    """A condition with a bound, not a duration: a busy machine only waits longer. (No
    `settle` while the run is held: it waits for the run's end.)"""
    for _ in range(6000):
        if condition():
            return
        await pilot.pause(0.01)
    raise AssertionError(what)


async def open_screen(pilot: Pilot[Any], key: str, screen: type) -> None:
    await pilot.press(key)
    await until(pilot, lambda: isinstance(pilot.app.screen, screen), f"{key} opened no box")
    await pilot.pause()


async def type_in(pilot: Pilot[Any], text: str) -> None:
    field = pilot.app.screen.query_one(Input)
    field.value = text
    field.focus()
    await pilot.press("enter")
    await pilot.pause()


async def held_then_let_go(
    pilot: Pilot[Any], sim: HeldSim, change: Callable[[], Any], key: str
) -> None:
    """`key` starts the run; once it is held, `change` (a coroutine function) changes
    something on the screen; then the run goes on to wherever it stops."""
    app = pilot.app
    assert isinstance(app, PoolApp)
    try:
        await pilot.press(key)
        await until(pilot, sim.reached.is_set, "the run never got to the held event")
        assert app.running
        await change()
        await pilot.press("escape")
        await pilot.pause()
    finally:
        sim.go.set()
    await until(pilot, lambda: not app.running, "the run never stopped")
    await settle(pilot)


@pytest.mark.parametrize("key", ["c", "r"])
async def test_a_breakpoint_added_while_it_runs_stops_it(key: str) -> None:
    app, sim = held_app(at=10)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.rate = 100000  # `r` as fast as it goes

        async def add() -> None:
            await open_screen(pilot, "b", BreakpointsScreen)
            await type_in(pilot, "evict")

        await held_then_let_go(pilot, sim, add, key)
        assert app.snapshot is not None and app.snapshot.event_index == EVICTS[0]
        assert app.stop_kind == "breakpoint" and app.stop == "breakpoint #1: evict"
        assert app.breakpoints.items[0].hits == 1  # the run's count came back


@pytest.mark.parametrize("key", ["c", "r"])
@pytest.mark.parametrize("how", ["space", "d"])  # disabled, deleted
async def test_a_breakpoint_taken_away_while_it_runs_does_not_stop_it(key: str, how: str) -> None:
    app, sim = held_app(at=20)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await add_breakpoint(pilot, "evict")
        app.rate = 100000

        async def take_away() -> None:
            await open_screen(pilot, "b", BreakpointsScreen)
            app.screen.query_one("#bp-table").focus()
            await pilot.press(how)
            await pilot.pause()

        await held_then_let_go(pilot, sim, take_away, key)
        assert app.snapshot is not None and app.snapshot.event_index == LAST
        assert app.stop_kind == "end" and app.stop == "end of the simulation"
        assert "breakpoint #1" not in status(app)


async def test_a_breakpoints_ignore_count_changed_while_it_runs_counts() -> None:
    # `+` in the list while `c` goes: the first evict is ignored, the second stops it.
    app, sim = held_app(at=20)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await add_breakpoint(pilot, "evict")

        async def ignore_one() -> None:
            await open_screen(pilot, "b", BreakpointsScreen)
            app.screen.query_one("#bp-table").focus()
            await pilot.press("plus")
            await pilot.pause()

        await held_then_let_go(pilot, sim, ignore_one, "c")
        assert app.snapshot is not None and app.snapshot.event_index == EVICTS[1]
        assert app.breakpoints.items[0].hits == 2


async def test_reverse_continue_follows_the_breakpoints_too() -> None:
    # `C` from the end, held at event 60: a breakpoint added then stops it at the evict
    # before it (55); held at 74, one disabled then lets it go by all three. (Held from
    # when the go-to the end has gone by.)
    app, sim = held_app(at=NEVER)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.send("goto", index=LAST)
        await settle(pilot)
        sim.at = 60

        async def add() -> None:
            await open_screen(pilot, "b", BreakpointsScreen)
            await type_in(pilot, "evict")

        await held_then_let_go(pilot, sim, add, "C")
        assert app.snapshot is not None and app.snapshot.event_index == EVICTS[1]
        assert app.stop_kind == "breakpoint"

    app, sim = held_app(at=NEVER)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await add_breakpoint(pilot, "evict")
        app.send("goto", index=LAST)
        await settle(pilot)
        sim.at = 74  # before the last evict (72)

        async def disable() -> None:
            await open_screen(pilot, "b", BreakpointsScreen)
            app.screen.query_one("#bp-table").focus()
            await pilot.press("space")
            await pilot.pause()

        await held_then_let_go(pilot, sim, disable, "C")
        assert app.snapshot is not None and app.snapshot.event_index < EVICTS[0]
        assert app.stop_kind != "breakpoint"


async def test_a_watch_added_while_it_runs_is_shown_and_the_run_goes_on() -> None:
    app, sim = held_app(at=10)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)

        async def watch() -> None:
            await open_screen(pilot, "w", WatchesScreen)
            await type_in(pilot, "free(kv)")

        await held_then_let_go(pilot, sim, watch, "c")
        # Not paused by the new watch: on to the end, and the watch has its value there.
        assert app.snapshot is not None and app.snapshot.event_index == LAST
        assert app.stop_kind == "end"
        assert [w.text for w in app.watch_values] == ["free(kv)"]
        assert app.watch_values[0].value == app.snapshot.pool("kv").free
