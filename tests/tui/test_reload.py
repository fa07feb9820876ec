"""ctrl+r reloads the spec in place: breakpoints and watches kept, back at the same event
when it still exists; a spec that no longer compiles leaves the old simulation running
and shows its errors."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from pooltui.tui.app import PoolApp
from pooltui.tui.screens import CompileErrorScreen
from pooltui.tui.widgets.source import SourceView
from tests.tui.conftest import SIZE, add_breakpoint, keys, settle, submit

SMALL = Path(__file__).parent / "specs" / "small.pool"


def spec(tmp_path: Path) -> Path:
    path = tmp_path / "spec.pool"
    path.write_text(SMALL.read_text())
    return path


def details(app: PoolApp) -> str:
    assert app.debugger is not None
    return str(app.debugger.query_one("#details-body", Static).render())


async def test_reload_keeps_breakpoints_watches_and_the_event(tmp_path: Path) -> None:
    path = spec(tmp_path)
    app = PoolApp.from_spec(str(path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await add_breakpoint(pilot, "preempt pool=kv; ignore 1")
        await keys(pilot, "w")
        await submit(pilot, "free(kv)")
        await keys(pilot, "escape")
        app.send("goto", index=30)
        await settle(pilot)
        old_sim = app.sim
        # A bigger cache: the same spec otherwise.
        path.write_text(path.read_text().replace("cap 256;", "cap 512;"))
        await keys(pilot, "ctrl+r")
        await settle(pilot)
        await pilot.pause(0.05)
        await settle(pilot)
        assert app.sim is not old_sim
        assert app.snapshot is not None and app.snapshot.event_index == 30
        assert app.snapshot.pool("kv").cap == 512
        assert [bp.describe() for bp in app.breakpoints] == ["preempt pool=kv"]
        assert app.breakpoints.items[0].ignore == 1
        assert [text for text, _ in app.watches] == ["free(kv)"]
        assert [w.text for w in app.watch_values] == ["free(kv)"]
        assert app.watch_values[0].error is None
        assert app.stop is not None and app.stop.startswith("reloaded the spec")
        assert app.debugger is not None
        assert "cap 512;" in "\n".join(app.debugger.query_one(SourceView).lines)
        assert app.failures == []


async def test_reload_of_a_broken_spec_keeps_the_old_simulation(tmp_path: Path) -> None:
    path = spec(tmp_path)
    app = PoolApp.from_spec(str(path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.send("goto", index=12)
        await settle(pilot)
        old_sim = app.sim
        path.write_text(path.read_text().replace("cap 256;", "cap 256 256;"))
        await keys(pilot, "ctrl+r")
        assert app.sim is old_sim
        assert app.screen is app.debugger  # still in the debugger
        assert app.stop is not None and "does not compile" in app.stop
        assert "spec.pool:" in details(app) and "error" in details(app)
        # The old simulation still steps.
        await keys(pilot, "n")
        assert app.snapshot is not None and app.snapshot.event_index == 13
        # Fixed: it reloads, back at event 13.
        path.write_text(SMALL.read_text())
        await keys(pilot, "ctrl+r")
        await settle(pilot)
        await pilot.pause(0.05)
        await settle(pilot)
        assert app.sim is not old_sim
        assert app.snapshot is not None and app.snapshot.event_index == 13


async def test_reload_drops_a_breakpoint_the_new_spec_cannot_fire(tmp_path: Path) -> None:
    path = spec(tmp_path)
    app = PoolApp.from_spec(str(path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await add_breakpoint(pilot, "admit session=chat[7]")
        path.write_text(path.read_text().replace("session chat[8]", "session chat[4]"))
        await keys(pilot, "ctrl+r")
        await settle(pilot)
        assert len(app.breakpoints) == 0
        assert app.stop is not None and "breakpoint #1 (admit session=chat[7]) dropped" in app.stop


async def test_reload_keeps_a_watch_the_new_spec_refuses_with_its_error(tmp_path: Path) -> None:
    """A watch is kept over a reload (issue 13); one that no longer compiles (its pool
    renamed) shows its error where a watch's runtime error goes (language.md §12.1):
    `error: 1:6: unknown pool 'kv'`, a caret under `kv`. It read `error: not an
    expression: None`, the evaluator's words for the nothing it was kept as."""
    path = spec(tmp_path)
    app = PoolApp.from_spec(str(path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await keys(pilot, "w")
        await submit(pilot, "free(kv)")
        await keys(pilot, "escape")
        text = path.read_text().replace("pool kv {", "pool cache {").replace("(kv", "(cache")
        path.write_text(text.replace("hold kv", "hold cache"))
        await keys(pilot, "ctrl+r")
        await settle(pilot)
        await pilot.pause(0.05)
        await settle(pilot)
        assert app.snapshot is not None and app.snapshot.pool("cache") is not None
        assert [text for text, _ in app.watches] == ["free(kv)"]
        (watch,) = app.watch_values
        assert watch.error == "1:6: unknown pool 'kv'" and watch.caret == (6, 8)
        assert app.failures == []


async def test_reload_past_the_new_end_stops_at_the_end(tmp_path: Path) -> None:
    path = spec(tmp_path)
    app = PoolApp.from_spec(str(path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await keys(pilot, "c")
        end = app.snapshot.event_index if app.snapshot else -1
        path.write_text(path.read_text().replace("session chat[8]", "session chat[2]"))
        await keys(pilot, "ctrl+r")
        await settle(pilot)
        await pilot.pause(0.05)
        await settle(pilot)
        assert app.snapshot is not None and app.snapshot.finished
        assert app.snapshot.event_index < end
        assert app.stop is not None and f"no event #{end}" in app.stop


async def test_reload_of_a_deleted_spec_says_it_cannot_be_read_not_that_it_does_not_compile(
    tmp_path: Path,
) -> None:
    # A file that is gone is not a spec with errors: Details and the status say it cannot
    # be read, and the simulation before stays. The app is not a command line: what it
    # shows has no `pooltui:` in front (the line `pooltui SPEC` prints when it cannot even
    # open has).
    path = spec(tmp_path)
    app = PoolApp.from_spec(str(path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        old_sim = app.sim
        path.unlink()
        await keys(pilot, "ctrl+r")
        assert app.sim is old_sim
        text = details(app)
        assert text.startswith("The spec cannot be read:\n")
        assert "compile" not in text
        assert f"cannot read '{path}': No such file or directory" in text
        assert "pooltui:" not in text
        assert app.stop == "reload: the spec cannot be read; the simulation before it stays"


async def test_a_reloaded_spec_names_control_characters_escaped(tmp_path: Path) -> None:
    # A file name cannot drive the terminal: its ESC is shown as a spec's text shows one.
    path = tmp_path / "a\x1b[31mb.pool"
    path.write_text(SMALL.read_text())
    app = PoolApp.from_spec(str(path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        status = str(app.screen.query_one("#status", Static).render())
        assert status.startswith("a\\u001b[31mb.pool") and "\x1b" not in status  # its name
        path.unlink()
        await keys(pilot, "ctrl+r")
        text = details(app)
        assert f"cannot read '{tmp_path}/a\\u001b[31mb.pool': No such file or directory" in text
        assert "\x1b" not in text


async def test_the_error_screen_says_a_deleted_spec_cannot_be_read(tmp_path: Path) -> None:
    path = spec(tmp_path)
    path.write_text("pool kv { cap 256 256; }\n")
    app = PoolApp.from_spec(str(path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        title = app.screen.query_one("#error-title", Static)
        assert str(title.content) == f"{path} does not compile"
        path.unlink()
        await keys(pilot, "r")
        assert str(title.content) == f"{path} cannot be read"


async def test_the_error_screen_says_a_deleted_spec_without_the_prefix(tmp_path: Path) -> None:
    path = spec(tmp_path)
    path.write_text("pool kv { cap 256 256; }\n")
    app = PoolApp.from_spec(str(path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, CompileErrorScreen)
        path.unlink()
        await keys(pilot, "r")
        body = str(app.screen.query_one("#error-body", Static).content)
        assert body == f"cannot read '{path}': No such file or directory"
