"""Hypothesis profiles for the whole suite, and the suite's own cache folder.

`default`: every property test draws the same examples at every run (derandomized), so a
red run is a change's doing, never a new draw: the suite decides whether a change lands.
`explore`: new random examples at every run, to search for defects by hand
(`pytest --hypothesis-profile=explore tests/sim`, as often as wanted); a case it finds goes
into the suite as a named test (tests/sim/test_fast.py's `LOCKSTEP` was found so).
A test's own `@settings` still set its example count and deadline.

Two workers a core (`-n auto`, pyproject.toml's addopts): the app's tests spend about half
their time asleep in Textual's pilot, which waits for the process to go idle (20 ms at
least) after every key and pause; a second worker a core runs meanwhile. And the cyclic
garbage collector's young generation is 10 times its default (`GC_THRESHOLDS`): a
worker keeps what Textual caches for the process (hundreds of thousands of objects), and a
full collection, which walks them all, came after every 70,000 new objects; 3 to 5 times
fewer now. Neither changes what a test asserts; a test about the collector reads whether
it is enabled or frozen, never when it runs.

The session's parses and built parser go to a temporary folder (`POOLTUI_CACHE_DIR`, which
the xdist workers and every subprocess inherit), removed at the end: a test run never fills
the user's cache folder with its specs and examples. The user's folder is in
`POOLTUI_TESTS_USER_CACHE`, for the one thing kept there on purpose: the compiled build
(tests/sim/test_compiled.py), minutes to make and the same for every run.
"""

from __future__ import annotations

import gc
import os
import shutil
import tempfile
from collections.abc import Generator

import pytest
from hypothesis import settings

from pooltui.lang.parser import cache_dir

settings.register_profile("default", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile("default")

_USER_CACHE = "POOLTUI_TESTS_USER_CACHE"
_made: list[tuple[str, str | None]] = []  # (the session's folder, POOLTUI_CACHE_DIR before)
GC_THRESHOLDS = (7000, 10, 10)  # the default is (700, 10, 10)
_gc_before: list[tuple[int, int, int]] = []


@pytest.hookimpl(wrapper=True, optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> Generator[None, int, int]:
    """`-n auto`: two workers a core, unless PYTEST_XDIST_AUTO_NUM_WORKERS says how many."""
    cores = yield
    return cores if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS") else 2 * cores


def pytest_configure(config: pytest.Config) -> None:
    _gc_before.append(gc.get_threshold())
    gc.set_threshold(*GC_THRESHOLDS)
    if _USER_CACHE in os.environ:  # an xdist worker: its controller's folder is set
        return
    os.environ[_USER_CACHE] = str(cache_dir())
    folder = tempfile.mkdtemp(prefix="pooltui-tests-cache-")
    _made.append((folder, os.environ.get("POOLTUI_CACHE_DIR")))
    os.environ["POOLTUI_CACHE_DIR"] = folder


def pytest_unconfigure(config: pytest.Config) -> None:
    if _gc_before:
        gc.set_threshold(*_gc_before.pop())
    while _made:
        folder, before = _made.pop()
        shutil.rmtree(folder, ignore_errors=True)
        del os.environ[_USER_CACHE]
        if before is None:
            os.environ.pop("POOLTUI_CACHE_DIR", None)
        else:
            os.environ["POOLTUI_CACHE_DIR"] = before


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """One full collection as the session ends, then what is left frozen. pytest collects
    five times more as it ends (for exceptions raised by finalizers, which this collection
    reports as well); a worker that ran the app's tests still holds the renderer's caches
    Textual keeps for the process (some 800,000 objects: a second a collection), and an
    xdist worker that takes more than 5 s to end is sent SIGINT by execnet: a
    KeyboardInterrupt printed in the middle of a collection at the end of a green run."""
    gc.collect()
    gc.freeze()
