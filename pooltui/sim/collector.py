"""The cyclic garbage collector held back, by any thread, while something must not wait.

A burst of new objects that all stay alive (a checkpoint's state unpickled, a snapshot)
would set off collections that walk every young object and free nothing, half of an
unpickle's time; and a `space` answered while one runs waits 10-25 ms more. Holds nest
across threads (the worker's snapshot inside the screen's pause): the collector runs again
when the last is released, if it ran when the first came (a caller that turned it off keeps
it off). Collections are deferred, never skipped: the garbage is collected once it runs.
"""

from __future__ import annotations

import gc
import threading

_lock = threading.Lock()
_holds = 0
_was_enabled = False


def hold_collector() -> None:
    """Hold the collector back until the matching `release_collector`."""
    global _holds, _was_enabled
    with _lock:
        if _holds == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _holds += 1


def release_collector() -> None:
    """Let go of one hold; the last one lets the collector run again."""
    global _holds
    with _lock:
        if _holds == 0:
            return
        _holds -= 1
        if _holds == 0 and _was_enabled:
            gc.enable()
