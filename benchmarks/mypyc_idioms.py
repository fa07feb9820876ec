"""Why compiling the simulator with mypyc gained little: a few idioms of its hot loops, each
in a small module compiled with mypyc in a temporary folder, timed interpreted and compiled.

    python -m benchmarks mypyc_idioms

Prints ns per element. What it showed (Python 3.11, mypy 2.4, best of 5 on a shared VM):
an `int` moved from one list to another is unboxed when read and boxed again when stored,
a new object for each value past 256, so the compiled loop is slower than the interpreted
one (26 ns against 21; a dict fed ints the same way, 149 against 91); moved as `object`
it takes 5 ns. A module constant that is not `Final` is a dict lookup and an unboxing at
every use (17 ns against 4.5). `allow_interpreted_subclasses` costs well under a ns per
method call. The ledger's per-block loops were all of the first kind, the rest of their
time is CPython's own (dict probes, reference counts): hence a compiled build only ~1.2x
the interpreted one. Needs mypy and a C compiler.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

SOURCE = '''
from __future__ import annotations
import time
from typing import Final
from mypy_extensions import mypyc_attr

NONE = -1
NONE_FINAL: Final = -1


def move_int(xs: list[int], ids: list[int], hs: list[int]) -> None:
    for b, h in zip(ids, hs):
        xs[b] = h


def move_object(xs: list[int], ids: list[int], hs: list[int]) -> None:
    xo: list[object] = xs  # type: ignore[assignment]
    ho: list[object] = hs  # type: ignore[assignment]
    for b, h in zip(ids, ho):
        xo[b] = h


def append_int(xs: list[int], ids: list[int], hs: list[int]) -> None:
    out: list[int] = []
    for b in ids:
        out.append(b)


def append_object(xs: list[int], ids: list[int], hs: list[int]) -> None:
    out: list[object] = []
    io: list[object] = ids  # type: ignore[assignment]
    for b in io:
        out.append(b)


def store_global(xs: list[int], ids: list[int], hs: list[int]) -> None:
    for b in ids:
        xs[b] = NONE


def store_final(xs: list[int], ids: list[int], hs: list[int]) -> None:
    for b in ids:
        xs[b] = NONE_FINAL


def dict_put_del(xs: list[int], ids: list[int], hs: list[int]) -> None:
    d: dict[int, int] = {}
    for b, h in zip(ids, hs):
        d[h] = b
    for h in hs:
        del d[h]


@mypyc_attr(allow_interpreted_subclasses=True)
class Open:
    def __init__(self) -> None:
        self.x = 0

    def bump(self, i: int) -> None:
        self.x += i


class Closed:
    def __init__(self) -> None:
        self.x = 0

    def bump(self, i: int) -> None:
        self.x += i


def call_open(xs: list[int], ids: list[int], hs: list[int]) -> None:
    o = Open()
    for b in ids:
        o.bump(b)


def call_closed(xs: list[int], ids: list[int], hs: list[int]) -> None:
    c = Closed()
    for b in ids:
        c.bump(b)


CASES = [move_int, move_object, append_int, append_object, store_global, store_final,
         dict_put_del, call_open, call_closed]


def timings(n: int = 8192, reps: int = 40, rounds: int = 5) -> dict[str, float]:
    """The best of `rounds` rounds (a shared machine), each case `reps` times."""
    ids = [(i * 5003) % n for i in range(n)]  # every id once, scattered
    hs = [(1 << 60) + i * 7919 for i in range(n)]  # hash-like values, each its own object
    out: dict[str, float] = {}
    for _ in range(rounds):
        for f in CASES:
            xs = [0] * n
            t = time.process_time()
            for _ in range(reps):
                f(xs, ids, hs)
            ns = (time.process_time() - t) / reps / n * 1e9
            out[f.__name__] = min(ns, out.get(f.__name__, ns))
    return out
'''


def main(argv: list[str]) -> int:
    with tempfile.TemporaryDirectory(prefix="pooltui-mypyc-") as tmp:
        src = Path(tmp) / "idioms.py"
        src.write_text(SOURCE)
        sys.path.insert(0, tmp)
        pure = importlib.import_module("idioms").timings()
        del sys.modules["idioms"]
        src.rename(Path(tmp) / "idioms_c.py")
        proc = subprocess.run(
            [sys.executable, "-m", "mypyc", "idioms_c.py"],
            cwd=tmp,
            capture_output=True,
            text=True,
            env={**os.environ, "MYPY_CACHE_DIR": str(Path(tmp) / ".mypy_cache")},
            check=False,
        )
        if proc.returncode != 0:
            print(f"mypyc failed, not measured:\n{proc.stdout}\n{proc.stderr}")
            return 1
        compiled = importlib.import_module("idioms_c").timings()
    print(f"{'ns per element':16s} {'interpreted':>12s} {'compiled':>10s}")
    for name, ns in pure.items():
        print(f"{name:16s} {ns:12.1f} {compiled[name]:10.1f}")
    return 0
