"""`pooltui.sim.collector`: holds on the cyclic collector nest, across threads (the
worker's snapshot inside the screen's pause), and the last release lets it run again,
unless it was off before the first hold."""

from __future__ import annotations

import gc
import threading

from pooltui.sim import hold_collector, release_collector


def test_holds_nest_and_the_last_release_lets_it_run() -> None:
    assert gc.isenabled()
    hold_collector()
    hold_collector()
    assert not gc.isenabled()
    release_collector()
    assert not gc.isenabled()  # the other hold stands
    release_collector()
    assert gc.isenabled()
    release_collector()  # one release too many: nothing
    assert gc.isenabled()


def test_a_hold_from_another_thread_inside_this_one() -> None:
    # The screen holds for a pause; the worker makes its snapshot (a hold and release of
    # its own) meanwhile: the worker's release does not let the collector run.
    hold_collector()
    seen: list[bool] = []

    def worker() -> None:
        hold_collector()
        release_collector()
        seen.append(gc.isenabled())

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert seen == [False] and not gc.isenabled()
    release_collector()
    assert gc.isenabled()


def test_a_collector_turned_off_stays_off() -> None:
    gc.disable()
    try:
        hold_collector()
        release_collector()
        assert not gc.isenabled()  # the caller turned it off: it stays so
    finally:
        gc.enable()
