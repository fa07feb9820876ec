"""`Pacing`: the app's share of the interpreter, on a clock the test sets."""

from __future__ import annotations

import gc
import sys
from typing import Any

from pooltui.tui import pacing
from pooltui.tui.pacing import SWITCH_INTERVAL, Pacing


def test_the_screen_cost_is_the_cpu_time_between_progress_frames(monkeypatch: Any) -> None:
    clock = [0.0]
    monkeypatch.setattr(pacing.time, "thread_time", lambda: clock[0])
    monkeypatch.setattr(pacing.gc, "freeze", lambda: None)
    p = Pacing()
    assert p.cost() == 0.0
    # Progress frames arrive at CPU times 1.0, 1.5 (0.5 s: a one-off), 1.6, 1.7.
    for t in (1.0, 1.5, 1.6, 1.7):
        clock[0] = t
        p.frame_arrived(final=False)
    # The smaller of the last two gaps (0.1 and 0.1): the one-off does not count.
    assert abs(p.cost() - 0.1) < 1e-9
    clock[0] = 5.0
    p.frame_arrived(final=True)  # a run ended: the idle time after it is not a frame's
    clock[0] = 9.0
    p.frame_arrived(final=False)
    assert abs(p.cost() - 0.1) < 1e-9


def test_start_and_stop_put_the_interpreter_back() -> None:
    before = sys.getswitchinterval()
    p = Pacing()
    p.start()
    assert sys.getswitchinterval() == SWITCH_INTERVAL
    p.frame_arrived(final=True)  # the first frame: start-up's objects frozen
    assert gc.get_freeze_count() > 0
    p.stop()
    assert sys.getswitchinterval() == before
    assert gc.get_freeze_count() == 0


def test_a_pause_holds_the_collector_and_its_release_freezes_what_it_made(
    monkeypatch: Any,
) -> None:
    calls: list[str] = []
    monkeypatch.setattr(pacing.gc, "freeze", lambda: calls.append("freeze"))
    p = Pacing()
    p.hold()  # `space` on a run
    p.hold()  # twice: still one hold
    assert not gc.isenabled() and p.collect_due  # collected once idle, after the pause
    p.release()  # the paused frame drawn: what the pause made is frozen, as a frame's
    assert gc.isenabled() and calls == ["freeze"]
    p.release()  # nothing held: nothing
    assert gc.isenabled() and calls == ["freeze"]
    p.hold()
    p.release(freeze=False)  # no frame came (a failure): the collector only runs again
    assert gc.isenabled() and calls == ["freeze"]
    p.hold()
    p.stop()  # the app goes: the collector runs again
    assert gc.isenabled()


def test_the_debugger_draws_at_120_hz_unless_the_user_says(tmp_path: Any) -> None:
    # A fresh interpreter: Textual reads its frame rate once, when first imported.
    import os
    import subprocess

    code = "import pooltui.tui.app, textual.constants as c; print(c.MAX_FPS)"
    env = {k: v for k, v in os.environ.items() if k != "TEXTUAL_FPS"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "120"
    env["TEXTUAL_FPS"] = "30"
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "30"
