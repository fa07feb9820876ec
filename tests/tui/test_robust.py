"""No traceback ever reaches a user: a bug in the simulator or in a handler becomes a stop
with a plain message; no spec's text drives the terminal. And the pools panel's legend, the
queue's `waited`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static

from pooltui.cli.render import place_leading_spaces
from pooltui.tui.app import PoolApp
from pooltui.tui.colors import Palette
from pooltui.tui.widgets.legend import pool_legend
from pooltui.tui.widgets.panels import pool_head, waited
from pooltui.tui.widgets.source import SourceView
from tests.tui.conftest import SIZE, keys, make_app, settle
from tests.tui.fakesim import FakeSim


class BrokenStep(FakeSim):
    """The fake simulator, with a bug from its 3rd step on."""

    def step(self) -> Any:
        if self.steps_taken >= 2:
            raise RuntimeError("the fake simulator broke")
        return super().step()


def _plain(app: PoolApp, selector: str) -> str:
    assert app.debugger is not None
    widget = app.debugger.query_one(selector, Static)
    return str(widget.render())


async def test_a_simulator_exception_is_a_stop_not_a_traceback() -> None:
    app = make_app(sim=BrokenStep())
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await keys(pilot, "n", "n", "n")
        assert app.stop_kind == "error"
        assert app.stop is not None and "RuntimeError: the fake simulator broke" in app.stop
        assert "internal error" in _plain(app, "#status")
        assert "the fake simulator broke" in _plain(app, "#details-body")
        assert not app.running
        # Still alive: it steps back, and continue stops on the same error.
        await keys(pilot, "p")
        assert app.snapshot is not None and app.snapshot.event_index == 0
        await keys(pilot, "c")
        assert app.stop_kind == "error"
    assert app.return_code in (0, None)


@pytest.mark.handler_failures
async def test_a_handler_exception_is_a_stop_not_a_traceback() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.debugger
        assert screen is not None

        def broken(*args: Any, **kwargs: Any) -> None:
            raise ValueError("a panel broke")

        screen.query_one("#pools").update_snapshot = broken  # type: ignore[method-assign]
        await keys(pilot, "n")
        assert app.stop_kind == "error"
        assert app.stop is not None and "ValueError: a panel broke" in app.stop
        assert app.failures and "a panel broke" in app.failures[0]
        assert "internal error" in _plain(app, "#status")
        assert "a panel broke" in _plain(app, "#details-body")
        await keys(pilot, "n")  # the app still answers keys
    assert app.return_code in (0, None)


@pytest.mark.handler_failures
async def test_a_screen_handler_exception_reaches_the_app_as_a_message() -> None:
    """A screen's handler that raises posts HandlerFailed: the app records it, says so in
    the status bar and Details, and goes on answering keys."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.debugger
        assert screen is not None
        screen.compile_expression = None  # the watches key now fails its own check
        await keys(pilot, "w")
        assert app.screen is screen  # no watches screen opened
        assert len(app.failures) == 1 and "DebuggerScreen.action_watches" in app.failures[0]
        assert "internal error" in _plain(app, "#status")
        assert "This is a bug in pooltui" in _plain(app, "#details-body")
        await keys(pilot, "n")  # still answers, and the step clears the stop
        assert app.snapshot is not None and app.snapshot.event_index == 0
        assert app.stop_kind != "error"
    assert app.return_code in (0, None)


# Saved with CRLF line ends (a Windows editor), with control characters in its comments.
CONTROL_SPEC = (
    "# Hello class \x1b[2J here\r\n"
    "# second line\r\n"
    "seed 1;\r\n"
    "stage gpu step { budget 64; seats 2; time 0.01; } # \x1b[31mred\x07\r\n"
    "pool kv { cap 256; block 16; admit via gpu; }\r\n"
    "session s[2] { hold kv (40) { run gpu prefill (40); run gpu decode (5); } }\r\n"
)


def _unprintable(text: str) -> list[str]:
    return [ch for ch in text if not ch.isprintable() and ch != "\n"]


async def test_a_specs_line_ends_and_control_characters_cannot_drive_the_terminal(
    tmp_path: Path,
) -> None:
    """The spec compiles (`pooltui check` takes it); the Source panel and the Notes show
    its text as `check` quotes a spec's line (lang.errors.excerpt): no CR at a line's end,
    a control character as U+FFFD. Drawn raw, each row's CR sent the terminal's cursor
    back to the first column mid-row, and the comment's ESC [2J cleared the screen."""
    spec = tmp_path / "ctl.pool"
    spec.write_bytes(CONTROL_SPEC.encode())
    app = PoolApp.from_spec(str(spec))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await keys(pilot, "n")
        assert app.debugger is not None
        view = app.debugger.query_one(SourceView)
        shown = "\n".join(view.render_line(y).text for y in range(view.size.height))
        assert "# Hello class \ufffd[2J here" in shown and "seed 1;" in shown
        assert _unprintable(shown) == []
        assert view.lines[3].endswith("# \ufffd[31mred\ufffd")  # past the panel's width
        notes = str(app.debugger.query_one("#notes-body", Static).content)
        assert "Hello class \ufffd[2J here second line" in notes
        assert _unprintable(notes) == []


def test_legend_names_holders_and_ranks() -> None:
    sim = FakeSim()
    for _ in range(43):
        sim.step()
    pool = sim.snapshot().pool("kv")
    assert pool.holds and pool.entries
    text = pool_legend(pool, 50, Palette()).plain
    h = pool.holds[0]
    assert f"{h.session}" in text and f"holds {h.blocks} block" in text
    assert f"computed {h.computed} · context {h.context}" in text
    e = pool.entries[0]
    assert "rank 0 = evicted next" in text and e.session in text
    short = pool_legend(pool, 2, Palette()).plain.splitlines()
    assert len(short) == 2 and short[-1].startswith("+") and short[-1].endswith("more")


def test_pool_header_reads_cleanly() -> None:
    pool = FakeSim().snapshot().pool("kv")
    text = pool_head(pool, None, 200, Palette()).plain
    first = text.splitlines()[0]
    assert first.startswith("kv  cap ")
    assert " · block " in first and " · evict " in first and " · queue " in first
    assert "allocated " in text and " · cached " in text and " · free " in text


def test_waited_shows_whole_values() -> None:
    assert waited(0.523) == "0.52s"
    assert waited(3.04) == "3.04s"
    assert waited(12.34) == "12.3s"
    assert waited(1234.5) == "1234s"


def test_exported_svg_keeps_leading_spaces() -> None:
    svg = (
        '<text class="r1" x="10" y="5" textLength="20" clip-path="url(#c)">kv</text>'
        '<text class="r2" x="30" y="5" textLength="90" clip-path="url(#c)">'
        "&#160;&#160;cap&#160;512</text>"
        '<text class="r2" x="120" y="5" textLength="20" clip-path="url(#c)">&#160;&#160;</text>'
    )
    out = place_leading_spaces(svg)
    assert 'x="50.0" y="5" textLength="70.0" clip-path="url(#c)">cap&#160;512</text>' in out
    assert out.count("&#160;&#160;</text>") == 1  # a run of only spaces is left alone


def test_legend_ranks_a_waiting_sessions_entry_as_any_other() -> None:
    """Rank 0 belongs to a session that waits on the pool: its entry is still the one the
    next eviction takes (language.md §5.2; only its own admission's hit is not evicted
    for it, §8.2), so the legend says rank 0 = evicted next, and nothing is "protected"."""
    from dataclasses import replace

    from pooltui.sim.snapshot import QueueItemView

    sim = FakeSim()
    for _ in range(43):
        sim.step()
    pool = sim.snapshot().pool("kv")
    assert len(pool.entries) >= 2
    first, second = pool.entries[0], pool.entries[1]
    waiting = QueueItemView(
        session=first.session,
        session_id=first.session_id,
        position=0,
        units=32,
        need=None,
        reserve=None,
        hit=first.units,
        keys=(),
        waited=0.1,
        preempted=False,
        enqueued_at=0.0,
    )
    pool = replace(pool, queue=(waiting,))
    lines = pool_legend(pool, 50, Palette()).plain.splitlines()
    row0 = next(line for line in lines if "rank 0" in line)
    row1 = next(line for line in lines if "rank 1" in line)
    assert "rank 0 = evicted next" in row0 and first.session in row0
    assert "protected" not in "\n".join(lines)
    assert second.session in row1 and "evicted next" not in row1
