"""The compiled build: the simulator's hot modules compiled with mypyc.

The same source, type-checked strictly, compiled to C by mypyc (as mypy and black ship
themselves); nothing is written in C by hand and the pure-Python modules stay the
reference. It is opt-in at install time:

    POOLTUI_COMPILE=1 pip install .

`MODULES` is the one list of what gets compiled: the install (setup.py, which reads this
file without importing pooltui; `_build/backend.py` adds mypy to the build requirements),
the benchmark harness and the test that holds the compiled build to the pure one's event
logs all use it. This module itself imports only the standard library, for that reason.

An editable install (`pip install -e .`) compiles in place: the .so files then shadow the
.py files next to them, so recompile after editing, or reinstall without POOLTUI_COMPILE
and delete them (`build_label`, which `pooltui --version` prints, says STALE meanwhile).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

# shutil, subprocess, hashlib, json and tomllib are imported where a build is made: every
# start of the command line imports this module (`build_label`).

# The hot path: state (plain data), the tables the engine reads, the engine and its
# modules (one per concern, docs/architecture.md), the fast mode and the expression
# closures. Paths from the repository root: mypyc names the compiled modules by them.
MODULES = (
    "pooltui/sim/state.py",
    "pooltui/sim/tables.py",
    "pooltui/sim/codes.py",
    "pooltui/sim/engine.py",
    "pooltui/sim/loop.py",
    "pooltui/sim/interpreter.py",
    "pooltui/sim/admit.py",
    "pooltui/sim/blocks.py",
    "pooltui/sim/links.py",
    "pooltui/sim/reloads.py",
    "pooltui/sim/grow.py",
    "pooltui/sim/runs.py",
    "pooltui/sim/iterations.py",
    "pooltui/sim/invariants.py",
    "pooltui/sim/members.py",
    "pooltui/sim/why.py",
    "pooltui/sim/fast.py",
    "pooltui/sim/steady.py",
    "pooltui/sim/fuse.py",
    "pooltui/sim/content.py",
    "pooltui/sim/ledgertypes.py",
    "pooltui/sim/ledger.py",
    "pooltui/sim/ledgerbatch.py",
    "pooltui/sim/ledgercheck.py",
    "pooltui/sim/ledgertouched.py",
    "pooltui/lang/exprs.py",
    "pooltui/lang/content.py",
)

ENV_VAR = "POOLTUI_COMPILE"


class Flags(NamedTuple):
    """How mypyc's C is compiled (`mypycify`'s arguments of the same names). Neither
    changes the C mypyc writes, only how the C compiler builds it."""

    opt_level: str  # the C compiler's -O level
    multi_file: bool  # one C file per module, not one for all


# The install's build (setup.py): the one that runs, optimised.
OPTIMISED = Flags(opt_level="3", multi_file=False)
# The compiled build's test (tests/sim/test_compiled.py), which holds the compiled code's
# results to the pure code's, not its speed: the same C, with C asserts on (-O0), in
# files the compiler takes in about a third of the CPU time (25 s against 75 s here).
QUICK = Flags(opt_level="0", multi_file=True)

# The build script: mypyc's own (`python -m mypyc`) but for the flags.
SETUP = """
from setuptools import setup
from mypyc.build import mypycify

setup(
    name="pooltui_compiled",
    ext_modules=mypycify({modules!r}, opt_level={opt_level!r}, multi_file={multi_file!r}),
)
"""


def wanted() -> bool:
    """Whether this install was asked to compile (POOLTUI_COMPILE=1)."""
    return os.environ.get(ENV_VAR, "").strip() in {"1", "true", "yes"}


def is_compiled() -> bool:
    """Whether the engine running here is the compiled one."""
    from pooltui.sim import engine

    return not (engine.__file__ or "").endswith(".py")


def stale() -> list[str]:
    """Compiled modules whose .py file changed after they were compiled (an editable
    install compiled in place, then edited): the old code still runs."""
    import importlib

    out = []
    for m in MODULES:
        mod = importlib.import_module(m[: -len(".py")].replace("/", "."))
        so = Path(mod.__file__ or "")
        py = so.parent / Path(m).name
        # A margin: an install writes the two files microseconds apart, in either order.
        if so.suffix != ".py" and py.exists() and py.stat().st_mtime > so.stat().st_mtime + 2:
            out.append(m)
    return out


def build_label() -> str:
    if not is_compiled():
        return "pure Python"
    old = stale()
    if old:
        return f"compiled (mypyc), STALE: {', '.join(old)} changed since; reinstall"
    return "compiled (mypyc)"


def copy_package(root: Path, dest: Path) -> Path:
    """The package from `root` (a checkout) copied into a new `dest`, without compiled
    files: a pure-Python build, whatever is installed. Returns `dest`."""
    import shutil

    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    shutil.copytree(
        root / "pooltui",
        dest / "pooltui",
        ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyd", "*.c"),
    )
    shutil.copy(root / "pyproject.toml", dest / "pyproject.toml")  # mypy's settings
    return dest


def build_copy(root: Path, dest: Path, flags: Flags = OPTIMISED) -> Path:
    """`copy_package`, then MODULES compiled there with mypyc, its C built with `flags`.
    Returns the directory to put first on PYTHONPATH. Needs mypy (the test extra) and a C
    compiler; raises RuntimeError with mypyc's output when the build fails."""
    import subprocess

    copy_package(root, dest)
    setup = dest / "build" / "setup.py"
    setup.parent.mkdir()
    setup.write_text(SETUP.format(modules=list(MODULES), **flags._asdict()))
    proc = subprocess.run(
        [sys.executable, str(setup), "build_ext", "--inplace"],
        cwd=dest,
        capture_output=True,
        text=True,
        env={**os.environ, "MYPY_CACHE_DIR": str(dest / ".mypy_cache")},
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"mypyc failed:\n{proc.stdout}\n{proc.stderr}")
    return dest


def sources_hash(root: Path, flags: Flags = OPTIMISED) -> str:
    """What a compiled build depends on: the compiled modules' sources, mypy's settings
    (pyproject.toml's `[tool.mypy]`, and nothing else of that file: adding a test
    dependency does not rebuild), the Python and mypy versions, and the build's `flags`.
    A short hex digest."""
    import hashlib
    import json
    import tomllib

    import mypy.version

    h = hashlib.sha256(f"{sys.version}|{mypy.version.__version__}".encode())
    if flags != OPTIMISED:  # the optimised build's key as before: no rebuild for it
        h.update(repr(tuple(flags)).encode())
    for m in MODULES:
        h.update(m.encode())
        h.update((root / m).read_bytes())
    with open(root / "pyproject.toml", "rb") as f:
        settings = tomllib.load(f).get("tool", {}).get("mypy", {})
    h.update(json.dumps(settings, sort_keys=True).encode())
    return h.hexdigest()[:16]


def cached_build(
    root: Path, into: Path, cache: Path | None = None, flags: Flags = OPTIMISED
) -> Path:
    """A compiled build of `root`'s package made in `into` (replaced if it exists): the
    checkout's package (`copy_package`) with the compiled modules' extension files taken
    from a build kept in `cache/compiled-<sources_hash>/`, so the build runs the
    checkout's pure code around the compiled modules. Returns `into`, the directory to
    put first on PYTHONPATH. `flags`: the install's optimised build unless told (the
    test's is QUICK); each is kept apart.

    The kept build is made the first time (`build_copy`, a minute or two) and never
    written after (but for its use, marked: `_used`), so runs in parallel (pytest
    workers, two checkouts) only read it; two that find it missing build it once, under a
    lock. Making one removes the builds no longer kept (`prune_builds`). `cache` defaults to the user's cache
    folder (where the parser's tables are kept too), so a fresh clone of sources already
    built on this machine does not compile again; the key is the compiled modules'
    sources, so a stale build is never taken. When that folder cannot be written, the
    checkout's own `build/`."""
    import shutil

    built = _kept_build(root, cache, flags)
    copy_package(root, into)
    for f in built.rglob("*"):
        if f.suffix in {".so", ".pyd"} and f.relative_to(built).parts[0] != "build":
            target = into / f.relative_to(built)
            # A plain copy: stamped now, newer than the .py beside it (`stale`).
            shutil.copy(f, target)
    return into


def _kept_build(root: Path, cache: Path | None, flags: Flags = OPTIMISED) -> Path:
    import shutil

    if cache is None:
        from pooltui.lang.parser import cache_dir  # lark: only where a build is wanted

        cache = cache_dir()
        try:
            cache.mkdir(parents=True, exist_ok=True)
            probe = cache / f".probe{os.getpid()}"
            probe.write_text("")
            probe.unlink()
        except OSError:
            cache = root / "build"
    cache.mkdir(parents=True, exist_ok=True)
    dest = cache / f"compiled-{sources_hash(root, flags)}"
    if _used(dest):
        return dest
    with _locked(cache / f"{dest.name}.lock"):
        if _used(dest):  # built by the run that held the lock
            return dest
        # Built aside and renamed: a run that is stopped never leaves a half build where
        # the next one would take it for whole.
        tmp = cache / f"{dest.name}.tmp{os.getpid()}"
        build_copy(root, tmp, flags)
        for scratch in ("build", ".mypy_cache"):  # 40 MB that no run reads again
            shutil.rmtree(tmp / scratch, ignore_errors=True)
        (tmp / "COMPLETE").write_text("")
        try:
            tmp.rename(dest)
        except OSError:  # a run without the lock (another platform) finished first
            shutil.rmtree(tmp, ignore_errors=True)
    prune_builds(cache)
    return dest


# The kept builds (docs/decisions.md, "The cache folder"): the most recently used few,
# about 7 MB each; any used within the hour stays too (a run may be copying from it).
KEPT_BUILDS = 3
IN_USE_SECONDS = 3600


def _used(build: Path) -> bool:
    """Whether `build` is whole (its COMPLETE file); if so its use is marked (COMPLETE's
    modification time set to now), which `prune_builds` reads as its last use."""
    try:
        os.utime(build / "COMPLETE")
    except FileNotFoundError:
        return False
    except OSError:  # a folder we may only read: used all the same
        return (build / "COMPLETE").exists()
    return True


def prune_builds(cache: Path) -> None:
    """Removes from `cache` the kept builds past the KEPT_BUILDS most recently used, with
    their locks, and the temporary folders of builds that were stopped; nothing that a
    run may be using: what was used or written within IN_USE_SECONDS, or a build whose
    lock a run holds (it is building). Never raises."""
    import time

    groups: dict[str, list[Path]] = {}  # a build's hash: its folder, lock, temporaries
    stamps: dict[Path, float] = {}  # when each was last used (a build) or written
    try:
        for path in cache.glob("compiled-*"):
            key = path.name.removeprefix("compiled-").split(".", 1)[0]
            groups.setdefault(key, []).append(path)
            whole = path / "COMPLETE" if path.name == f"compiled-{key}" else path
            try:
                stamps[path] = whole.stat().st_mtime
            except OSError:  # gone meanwhile, or a build not whole: never used
                stamps[path] = 0.0
    except OSError:
        return
    # Only whole builds have a use: a hash with only a lock or temporaries has none.
    by_use = sorted((stamps.get(cache / f"compiled-{k}", 0.0), k) for k in groups)
    kept = set([k for used, k in by_use if used][-KEPT_BUILDS:])
    long_ago = time.time() - IN_USE_SECONDS
    for key, paths in groups.items():
        # A kept build loses only its temporaries (left by stopped builds of it).
        doomed = [p for p in paths if key not in kept or ".tmp" in p.name]
        if not doomed or max(stamps[p] for p in doomed) > long_ago:
            continue
        lock = cache / f"compiled-{key}.lock"
        with _locked(lock, wait=False) as free:
            if not free:  # a run is building it
                continue
            for path in doomed:
                if path != lock:
                    _remove(path)
            if key not in kept:  # last, while still held: a run that waited builds anew
                _remove(lock)


def _remove(path: Path) -> None:
    import shutil

    with contextlib.suppress(OSError):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink()


@contextlib.contextmanager
def _locked(path: Path, wait: bool = True) -> Iterator[bool]:
    """An exclusive lock on `path` while the block runs (none where fcntl is missing).
    With `wait` False it is not waited for: the block is told whether it was had."""
    try:
        import fcntl
    except ImportError:  # not POSIX: the rename alone keeps builds whole
        yield True
        return
    try:
        f = open(path, "a")  # noqa: SIM115 (closed below, after the lock is let go)
    except OSError:
        if wait:
            raise
        yield False
        return
    with f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            if wait:
                raise
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
