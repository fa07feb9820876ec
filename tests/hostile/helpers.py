"""Running the command line on hostile input, in process and (for a few cases) as a
subprocess under resource limits, and what every outcome must look like."""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from pooltui.cli.main import main

REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 60  # seconds: generous, only to turn a hang into a failure (never a measurement)
MEMORY = 2 << 30  # RLIMIT_AS of a subprocess: 2 GiB

FORBIDDEN = ("internal error", "Traceback", "this is a bug in pooltui", "invariant broken")


@dataclass
class Outcome:
    code: int
    out: str
    err: str

    def text(self) -> str:
        return f"exit {self.code}\n--- stdout\n{self.out}\n--- stderr\n{self.err}"


def cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> Outcome:
    """`pooltui ARGV` in this process."""
    capsys.readouterr()
    code = main(argv)
    got = capsys.readouterr()
    return Outcome(code, got.out, got.err)


def limits(fsize: int | None = None) -> Callable[[], None]:
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))
        if fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    return apply


def sub(
    argv: list[str], *, fsize: int | None = None, stdout: int | None = subprocess.PIPE
) -> Outcome:
    """`pooltui ARGV` as a subprocess under RLIMIT_AS (and RLIMIT_FSIZE), with a timeout."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run(
        [sys.executable, "-m", "pooltui", *argv],
        stdout=stdout,
        stderr=subprocess.PIPE,
        env=env,
        timeout=TIMEOUT,
        preexec_fn=limits(fsize),
        check=False,
    )
    out = proc.stdout.decode("utf-8", "replace") if proc.stdout is not None else ""
    return Outcome(proc.returncode, out, proc.stderr.decode("utf-8", "replace"))


def assert_clean(o: Outcome) -> None:
    """Exit 0 or 1, and nothing that says pooltui itself failed."""
    assert o.code in (0, 1), o.text()
    for word in FORBIDDEN:
        assert word not in o.out and word not in o.err, o.text()


def assert_located(o: Outcome, file: str) -> None:
    """Exit 1 with at least one `FILE:LINE:COL: error: …`, its source line and a caret."""
    assert_clean(o)
    assert o.code == 1, o.text()
    assert re.search(rf"^{re.escape(file)}:\d+:\d+: error: \S", o.err, re.M), o.text()
    assert re.search(r"^ *\d+ \| ", o.err, re.M), o.text()  # the source line
    assert re.search(r"^ *\| *\^+$", o.err, re.M), o.text()  # the caret


def assert_cannot_write(o: Outcome, target: str) -> None:
    """Exit 1 with the one line `pooltui: cannot write TARGET: reason`."""
    assert_clean(o)
    assert o.code == 1, o.text()
    assert re.search(rf"^pooltui(?: render)?: cannot write {re.escape(target)}: \S", o.err, re.M), (
        o.text()
    )
