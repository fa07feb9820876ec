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
