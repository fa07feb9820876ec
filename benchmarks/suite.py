"""The test suite's own time: the pytest part of the README's test command.

    python -m benchmarks suite                 # `pytest` as the README runs it
    python -m benchmarks suite -n0             # in one process, for comparison
    python -m benchmarks suite tests/tui       # any pytest arguments pass through

Runs `python -m pytest --durations=15 [ARGS]` from the checkout (with pyproject.toml's
options: two workers a core, pytest-xdist) and prints its wall time, its CPU time (the pytest
process and its workers, user + system, from `resource.getrusage`), the load average
before and after (on a machine shared with other jobs the wall time grows with the load
and the CPU time a little) and the 15 slowest tests (wall seconds of each phase). The
README asks the whole command to finish in under 4 minutes on a 2-core machine.
"""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)  # waited-for processes, workers too
    return r.ru_utime + r.ru_stime


def main(argv: list[str]) -> int:
    cmd = [sys.executable, "-m", "pytest", "--durations=15", *argv]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # this checkout's pooltui
    print(f"$ python {' '.join(cmd[1:])}   (in {ROOT}; {os.cpu_count()} cores)", flush=True)
    load_before = _load()
    cpu0, t0 = _cpu(), time.perf_counter()
    proc = subprocess.run(
        cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    wall, cpu = time.perf_counter() - t0, _cpu() - cpu0
    out = proc.stdout
    at = out.find(" slowest 15 durations ")
    slowest = re.findall(r"^\s*\d+\.\d+s \w+ .*$", out[at:], re.M) if at >= 0 else []
    if slowest:
        print("the 15 slowest (wall seconds):")
        for line in slowest:
            print(f"  {line.strip()}")
    summary = [line for line in out.splitlines() if re.search(r"\d+ (passed|failed)", line)]
    print(summary[-1].strip("= ") if summary else out[-3000:])
    print(f"wall {wall:.1f} s   CPU {cpu:.1f} s (user + system, all processes)")
    print(f"load average (1, 5, 15 min): before {load_before}, after {_load()}")
    if proc.returncode != 0:
        print(f"pytest exited {proc.returncode}")
        if not summary:
            return proc.returncode
        print(out[-6000:])
    return proc.returncode


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
