"""The compiled build (mypyc, pooltui/sim/compiled.py) against the pure-Python one.

The compiled build is the same source, so it must give the same bytes: for every bundled
spec, in the per-event mode and the fast mode, the same trace (every event as JSON) and
the same summary; the same snapshot after going back in history (checkpoints are pickles
of compiled state classes); the same located runtime errors and deadlock; and the same
for 30 random specs from the invariant tests' grammar.

The build here is not the install's to the letter: mypyc writes the same C (its flags do
not reach its code generation; the generated files compare equal line for line), but the
C compiler builds it at -O0, with C asserts on, from one file per module
(`compiled.QUICK`), where `POOLTUI_COMPILE=1 pip install .` builds one file at -O3
(`compiled.OPTIMISED`): about 25 s of CPU against 75 s, for a test that holds the compiled
code's results to the pure code's, not its speed. `POOLTUI_TESTS_OPTIMISED=1` builds the
install's instead (to try the C compiler's optimiser too). It is cached under
~/.cache/pooltui/compiled-<hash>/ (the user's cache folder, the one thing the suite keeps
there; the checkout's build/ when that cannot be written) by a hash of the compiled
modules' sources and those flags (`cached_build`), so only the first run after one of them
changes builds it. Making one removes the builds no longer kept.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import Phase, given, settings

from pooltui.sim import compiled
from pooltui.sim.compiled import OPTIMISED, QUICK, cached_build, copy_package
from tests.sim.test_invariants import random_specs
from tests.sim.test_reload import PREEMPTED, TWO_TIERS

ROOT = Path(__file__).resolve().parents[2]

# Run in a fresh interpreter on one build: every bundled spec's trace and summary, both
# modes (the first 5,000 events of each: every spec but the two Azure traces runs to its
# end; the Azure runs stop in their first minutes, and running them to 20,000 events
# reaches no line of the simulator that the whole set of runs here does not), then a
# history round trip. Prints one report.
SCRIPT = r"""
import hashlib, io, sys, contextlib
from pathlib import Path
from pooltui.cli.main import main, version
from pooltui.lang import compile_file
from pooltui.sim import Simulation
from pooltui.sim.compiled import is_compiled

root = Path(sys.argv[1]); out = Path(sys.argv[2])
lines = [f"compiled={is_compiled()}; {version()}"]
specs = sorted(root.glob("specs/*.pool")) + sorted(root.glob("specs/halts/*.pool"))
specs += sorted(Path(sys.argv[3]).glob("*.pool"))
for spec in specs:
    for mode in ([], ["--fast"]):
        trace = out / "trace.jsonl"
        buf, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(err):
            code = main(["run", str(spec), "--events", "5000", "-q", "--trace", str(trace), *mode])
        summary = [l for l in buf.getvalue().splitlines() if " wall" not in l]
        digest = hashlib.sha256(trace.read_bytes()).hexdigest()
        lines.append(f"{spec.name} {mode} exit={code} trace={digest}")
        lines.extend(summary)
        lines.extend(err.getvalue().splitlines())
sim = Simulation(compile_file(str(root / "specs" / "vllm_v1.pool")))
sim.run(events=1500)
sim.goto(700)
at_700 = repr(sim.snapshot())
sim.back()
sim.goto(1400)
lines.append("history " + hashlib.sha256((at_700 + repr(sim.snapshot())).encode()).hexdigest())
(out / "report.txt").write_text("\n".join(lines) + "\n")
"""


def _report(build: Path, tmp: Path) -> list[str]:
    tmp.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(build)}
    # -P: not the working directory's pooltui, only the one asked for.
    subprocess.run(
        [sys.executable, "-P", "-c", SCRIPT, str(ROOT), str(tmp), str(tmp.parent / "extra")],
        env=env,
        check=True,
        timeout=600,
    )
    return (tmp / "report.txt").read_text().splitlines()


@pytest.fixture
def compiled_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    # The build is kept in the user's cache folder, not the session's (tests/conftest.py):
    # minutes to make, it serves every later run of the same sources.
    with monkeypatch.context() as m:
        m.setenv("POOLTUI_CACHE_DIR", os.environ["POOLTUI_TESTS_USER_CACHE"])
        flags = OPTIMISED if os.environ.get("POOLTUI_TESTS_OPTIMISED") == "1" else QUICK
        return cached_build(ROOT, tmp_path / "compiled_build", flags=flags)


# Two runtime errors (a division by zero, a negative hold) and a deadlock: the compiled
# build must stop at the same event with the same located message.
EXTRA = {
    "div.pool": "stage gpu step { time 1; }\npool kv { cap 16; admit via gpu; }\n"
    "session s { x = 0; hold kv (4 / x) { run gpu prefill (4); } }\n",
    "negative.pool": "stage gpu step { time 1; }\npool kv { cap 16; admit via gpu; }\n"
    "session s[2] { hold kv (2 - 3 * serial) { run gpu prefill (1); } }\n",
    "deadlock.pool": "stage gpu step { time 1; }\n"
    "pool kv { cap 8; block 4; preempt none; admit via gpu; }\n"
    "session s[2] { hold kv (4) { run gpu prefill (4); grow kv (4); grow kv (4); } }\n",
}
# Reloads (tests/sim/test_reload.py, worked by hand): two tiers, and a preempted hold
# reloading on its way back to its run. (specs/offload.pool and spill_tiers.pool reload
# too.)
EXTRA.update({"reload_two_tiers.pool": TWO_TIERS, "reload_preempted.pool": PREEMPTED})


def random_texts(n: int) -> list[str]:
    """n random specs (tests/sim/test_invariants.py's grammar), the same n every run."""
    texts: list[str] = []

    @settings(max_examples=n, derandomize=True, database=None, phases=[Phase.generate])
    @given(random_specs())
    def collect(text: str) -> None:
        texts.append(text)

    collect()
    return texts


def test_compiled_build_gives_the_same_bytes(compiled_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "extra").mkdir()
    specs = dict(EXTRA)
    specs.update({f"random_{i:02}.pool": t for i, t in enumerate(random_texts(30))})
    for name, text in specs.items():
        (tmp_path / "extra" / name).write_text(text)
    # The pure build is a plain copy, so the test means the same whatever is installed.
    pure = _report(copy_package(ROOT, tmp_path / "pure_build"), tmp_path / "pure")
    compiled = _report(compiled_dir, tmp_path / "compiled")
    assert pure[0].startswith("compiled=False; pooltui ") and pure[0].endswith(", pure Python")
    assert compiled[0].startswith("compiled=True; pooltui ")
    assert compiled[0].endswith(", compiled (mypyc)")
    # Every spec ran in both modes (16 bundled, 5 here, 30 random); the halting ones exit 1.
    runs = [line for line in pure if " exit=" in line]
    assert len(runs) == 2 * (16 + len(specs))
    for name in ("check_fails.pool", "div.pool", "negative.pool", "deadlock.pool"):
        assert sum(line.startswith(name) and "exit=1" in line for line in runs) == 2, name
    for words in ("division by zero", "negative", "deadlock"):
        assert any(words in line for line in pure), words
    assert pure[1:] == compiled[1:]


def test_only_the_most_recently_used_builds_are_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new build removes the kept builds past the KEPT_BUILDS most recently used, with
    their locks and what stopped builds left behind; never what a run may be using: one
    used within the hour, or one whose lock a run holds."""
    cache = tmp_path / "cache"
    cache.mkdir()
    now = time.time()
    minutes_ago = {"r1": 5, "r2": 10, "r3": 20, "o1": 120, "o2": 180, "o3": 240}
    for name, minutes in minutes_ago.items():
        build = cache / f"compiled-{name}"
        build.mkdir()
        (build / "COMPLETE").write_text("")
        (cache / f"compiled-{name}.lock").write_text("")
        for f in (build / "COMPLETE", build, cache / f"compiled-{name}.lock"):
            os.utime(f, (now - 60 * minutes, now - 60 * minutes))
    # What two stopped builds left (two hours ago, their locks free), and a build under way
    # for as long (its lock held).
    for name in ("x.tmp11", "r1.tmp12", "y.tmp13", "x.lock", "y.lock"):
        path = cache / f"compiled-{name}"
        path.mkdir() if ".tmp" in name else path.write_text("")
        os.utime(path, (now - 7200, now - 7200))

    def fake_build(root: Path, dest: Path, flags: compiled.Flags) -> Path:
        dest.mkdir()
        (dest / "engine.so").write_text("")
        return dest

    monkeypatch.setattr(compiled, "build_copy", fake_build)
    hashes = iter(["o3", "new"])
    monkeypatch.setattr(compiled, "sources_hash", lambda root, flags: next(hashes))
    assert compiled._kept_build(ROOT, cache) == cache / "compiled-o3"  # used: now the newest
    with open(cache / "compiled-y.lock") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        made = compiled._kept_build(ROOT, cache)
    assert made == cache / "compiled-new" and (made / "COMPLETE").exists()
    # Kept: the new build, o3 and r1 (the 3 most recently used); r2 and r3 (used within
    # the hour); y's build under way. Removed: o1 and o2 with their locks, x's leftovers
    # and r1's.
    assert sorted(p.name for p in cache.iterdir()) == [
        "compiled-new",
        "compiled-new.lock",
        "compiled-o3",
        "compiled-o3.lock",
        "compiled-r1",
        "compiled-r1.lock",
        "compiled-r2",
        "compiled-r2.lock",
        "compiled-r3",
        "compiled-r3.lock",
        "compiled-y.lock",
        "compiled-y.tmp13",
    ]
