"""Importing the language and the simulator loads neither textual nor rich (they are the
debugger's; headless users and the tests of the core must not pay for them)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CODE = """
import sys
import pooltui.lang, pooltui.sim
from pooltui.lang import compile_source
compile_source("pool kv { }\\nsession s { hold kv (1) { } }", "t.pool")
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("textual", "rich"))
print(",".join(loaded))
"""


def test_core_does_not_load_the_ui() -> None:
    out = subprocess.run(
        [sys.executable, "-c", CODE], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == ""
