"""Helpers for the debugger's tests: an app over the fake simulator, and waiting for it."""

from __future__ import annotations

from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input

from pooltui.tui.app import PoolApp
from tests.tui.fakesim import FakeSim, fake_compile_condition

SIZE = (160, 48)


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
