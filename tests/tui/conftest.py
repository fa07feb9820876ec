"""Helpers for the debugger's tests: an app over the fake simulator, and waiting for it.

Every app a test builds is checked when the test ends: no handler may have failed (a
failure is shown to the user and recorded in `PoolApp.failures`). A test that provokes one
on purpose says so with `@pytest.mark.handler_failures`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input

from pooltui.tui.app import PoolApp
from tests.tui.fakesim import FakeSim, fake_compile_condition

SIZE = (160, 48)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "handler_failures: the test makes a handler fail on purpose")


@pytest.fixture(autouse=True)
def no_handler_failed(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[list[PoolApp]]:
    """Collect every PoolApp the test builds; at the end, none may have recorded a failure."""
    apps: list[PoolApp] = []
    init = PoolApp.__init__

    def recording_init(self: PoolApp, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        apps.append(self)

    monkeypatch.setattr(PoolApp, "__init__", recording_init)
    yield apps
    if request.node.get_closest_marker("handler_failures") is None:
        failures = [failure for app in apps for failure in app.failures]
        assert failures == [], f"a handler failed: {failures}"


def make_app(**kwargs: Any) -> PoolApp:
    sim = kwargs.pop("sim", None) or FakeSim(**kwargs)
    return PoolApp(sim=sim, compile_condition=fake_compile_condition)


async def settle(pilot: Pilot[Any]) -> None:
    """Every command sent is done and shown, and the screen has caught up."""
    app = pilot.app
    assert isinstance(app, PoolApp)
    await app.settle()
    await pilot.pause()


async def keys(pilot: Pilot[Any], *pressed: str) -> None:
    for key in pressed:
        await pilot.press(key)
        await settle(pilot)


async def submit(pilot: Pilot[Any], text: str) -> None:
    """Type `text` into the focused screen's input and press enter."""
    field = pilot.app.screen.query_one(Input)
    field.value = text
    field.focus()
    await pilot.press("enter")
    await settle(pilot)


async def add_breakpoint(pilot: Pilot[Any], text: str) -> None:
    await pilot.press("b")
    await settle(pilot)
    await submit(pilot, text)
    await pilot.press("escape")
    await settle(pilot)


@pytest.fixture
def fake() -> FakeSim:
    return FakeSim()


async def start_slow_run(pilot: Pilot[Any]) -> None:
    """`r` at 2 events a second, until the run has shown its first event: it is still
    going when the test looks (a condition with a bound, not a duration: busy machines)."""
    app = pilot.app
    assert isinstance(app, PoolApp)
    app.rate = 2
    await pilot.press("r")
    for _ in range(6000):
        if app.snapshot is not None and app.snapshot.event_index >= 0 and app.running:
            return
        await pilot.pause(0.01)
    raise AssertionError("the run did not start")
