"""No traceback ever reaches a user: a failure while composing, mounting or drawing shows
in the status bar (the app goes on), or, when the debugger cannot even open, as one line
from the command line with exit 1. Each test forces such a failure and reads stderr."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static

from pooltui.cli.main import main
from pooltui.tui import debugger as debugger_module
from pooltui.tui.app import PoolApp
from pooltui.tui.debugger import DebuggerScreen
from pooltui.tui.widgets.panels import PoolsPanel
from tests.tui.conftest import SIZE, make_app, settle

SMALL = str(Path(__file__).parent / "specs" / "small.pool")

shown: list[str] = []


@pytest.fixture
def headless(monkeypatch: pytest.MonkeyPatch) -> list[PoolApp]:
    """`pooltui SPEC` runs headless: it opens, lets the screen settle, notes what the
    status bar says, and quits."""
    apps: list[PoolApp] = []
    run = PoolApp.run
    shown.clear()

    def headless_run(self: PoolApp, **kwargs: Any) -> Any:
        apps.append(self)

        async def pilot(p: Any) -> None:
            await p.pause()
            await self.settle()
            await p.pause(0.05)
            for status in self.screen.query("#status"):
                assert isinstance(status, Static)
                shown.append(str(status.render()))
            self.exit(0)

        return run(self, headless=True, size=SIZE, auto_pilot=pilot)

    monkeypatch.setattr(PoolApp, "run", headless_run)
    return apps


def _no_traceback(text: str) -> None:
    assert "Traceback" not in text
    assert "most recent call" not in text
    assert 'File "' not in text and ".py:" not in text


@pytest.mark.handler_failures
def test_a_failure_while_composing_the_screen_is_shown_not_a_traceback(
    headless: list[PoolApp], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(text: str) -> str:
        raise RuntimeError("reflow broke")

    monkeypatch.setattr(debugger_module, "reflow", broken)
    assert main([SMALL]) == 0
    out, err = capsys.readouterr()
    _no_traceback(out + err)
    assert err == ""
    (app,) = headless
    assert any("DebuggerScreen.compose" in f and "reflow broke" in f for f in app.failures)
    assert any("reflow broke" in line for line in shown)


@pytest.mark.handler_failures
def test_a_failure_no_guard_catches_is_one_line_and_exit_1(
    headless: list[PoolApp], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(self: Any) -> Any:
        raise RuntimeError("compose broke")
        yield  # pragma: no cover

    monkeypatch.setattr(DebuggerScreen, "compose", broken)
    assert main([SMALL]) == 1
    out, err = capsys.readouterr()
    _no_traceback(out + err)
    lines = err.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("pooltui: internal error:") and "compose broke" in lines[0]


@pytest.mark.handler_failures
def test_a_failure_at_start_up_is_one_line_and_exit_1(
    headless: list[PoolApp], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(self: PoolApp) -> None:
        raise RuntimeError("cannot open")

    monkeypatch.setattr(PoolApp, "_open_debugger", broken)
    assert main([SMALL]) == 1
    out, err = capsys.readouterr()
    _no_traceback(out + err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "cannot open" in lines[0]


@pytest.mark.handler_failures
async def test_a_failure_while_drawing_a_widget_is_a_stop_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(self: Any) -> Any:
        raise RuntimeError("render broke")

    monkeypatch.setattr(PoolsPanel, "render", broken)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:  # run_test re-raises what Textual caught
        await settle(pilot)
        assert any("PoolsPanel.render" in f and "render broke" in f for f in app.failures)
        assert app.debugger is not None
        status = str(app.debugger.query_one("#status", Static).render())
        assert "internal error" in status and "render broke" in status
        await pilot.press("n")
        await settle(pilot)
        assert app.snapshot is not None and app.snapshot.event_index == 0  # still alive
    assert app.return_code in (0, None)


@pytest.mark.handler_failures
def test_render_with_a_failing_widget_prints_no_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    def broken(self: Any) -> Any:
        raise RuntimeError("compose broke")
        yield  # pragma: no cover

    monkeypatch.setattr(DebuggerScreen, "compose", broken)
    assert main(["render", SMALL, "-o", str(tmp_path / "x.svg")]) == 1
    out, err = capsys.readouterr()
    _no_traceback(out + err)
    assert len(err.strip().splitlines()) == 1


@pytest.mark.handler_failures
async def test_a_queue_panel_whose_body_failed_says_so_and_the_app_goes_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Its compose failed (a message instead of its rows): mounted and resized, it has no
    # rows to say it shows, and says nothing more; the app goes on.
    from pooltui.tui.widgets import panels

    def broken(**kwargs: Any) -> Any:
        raise RuntimeError("rows broke")

    monkeypatch.setattr(panels, "TextRows", broken)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.resize_terminal(SIZE[0] - 20, SIZE[1] - 4)
        await settle(pilot)
        assert app.is_running and app.debugger is not None
    assert app.failures and all(".compose" in f and "rows broke" in f for f in app.failures)
