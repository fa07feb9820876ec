"""The check of what changed (`ledgertouched.check_touched`) vouches for a long span, a new
entry, the evicted blocks and the looked-at blocks of an entry at once: by passes in C
(`itemgetter`, `.count`, `map`) in the pure build; by loops in the compiled build
(`ledgertouched.COMPILED`), where those passes are generic calls: the per-block loop each
part falls back on, or a native loop of its own (`_span_native`, `_released_native`).
Both paths run here on the same states, the constant forced each way (interpreted), and
must say the same: the same verdict, the same shadow figures after it, on sound ledgers
and on broken ones.

The scene: a ledger of 64 blocks of 4 units; A (hold 1, a private stream) takes and
registers 12 blocks, B (hold 2) takes 10 and registers 5, A is released (one new entry
of 12 blocks), 10 of them are evicted, C (hold 3) takes 10 (the evicted ones among them).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from copy import copy
from operator import itemgetter
from pathlib import Path
from typing import Any

import pytest

from pooltui.lang import compile_source
from pooltui.sim import Simulation, ledgercheck, ledgertouched
from pooltui.sim.content import Content
from pooltui.sim.ledger import NONE, Ledger, Table
from pooltui.sim.ledgercheck import LiveTables, check
from pooltui.sim.ledgertouched import Shadow
from tests.sim.helpers import kept_as_counted
from tests.sim.test_ledger import admit

ROOT = Path(__file__).resolve().parents[2]
NOTES = ("tb", "tf", "te", "th", "tt", "tlo", "thi")  # what the ledger noted as changed
FIGURES = [name for name in Shadow.__slots__ if name != "ledger"]  # all the shadow keeps
C_PARTS = {"_span_in_c", "_new_entry", "_evicted", "_entries", "_hashes"}
KEPT_IN_C = {"_hashes"}  # (its loop is no cheaper compiled: the compiled build keeps it)
NATIVE = {"_span_native", "_released_native"}  # the compiled build's own loops


def _twin(sh: Shadow) -> Shadow:
    """A copy of shadow `sh` that follows the same ledger (and keeps the same tables)."""
    tw = Shadow.__new__(Shadow)
    for name in Shadow.__slots__:
        v = getattr(sh, name)
        setattr(tw, name, copy(v) if isinstance(v, list | dict) else v)
    tw.eblocks = {o: list(blocks) for o, blocks in sh.eblocks.items()}
    return tw


def _tables_of(tables: Any, tw: Shadow) -> Any:
    """`tables` as the twin sees them: a `LiveTables` falls back on the twin's kept ones."""
    if not isinstance(tables, LiveTables):
        return tables
    lt = LiveTables.__new__(LiveTables)
    lt.live, lt.pi, lt.changed, lt.kept = tables.live, tables.pi, tables.changed, tw.tabs
    return lt


class Paths:
    """`check_touched` run twice on each state: its passes in C on the shadow given, its
    loops on a twin of it (kept in step), the ledger's notes put back in between. Notes
    the passes in C each run took (by the part that asked for one) and the native loops
    that vouched for their blocks."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.mp = monkeypatch
        self.twins: dict[int, tuple[Shadow, Shadow]] = {}
        self.passes: dict[bool, set[str]] = {False: set(), True: set()}
        self.native: set[str] = set()
        self.checks = 0

        def counted(original: Callable[..., Any]) -> Callable[..., Any]:
            def call(*args: Any) -> Any:
                self.passes[ledgertouched.COMPILED].add(sys._getframe(1).f_code.co_name)
                return original(*args)

            return call

        def vouched(original: Callable[..., Any]) -> Callable[..., Any]:
            def call(*args: Any) -> Any:
                out = original(*args)
                if out:
                    self.native.add(original.__name__)
                return out

            return call

        monkeypatch.setattr(ledgertouched, "itemgetter", counted(itemgetter))
        monkeypatch.setattr(ledgertouched, "map", counted(map), raising=False)
        for name in NATIVE:
            monkeypatch.setattr(ledgertouched, name, vouched(getattr(ledgertouched, name)))

    def check(self, L: Ledger, sh: Shadow, tables: Any) -> str | None:
        pair = self.twins.get(id(sh))
        tw = pair[1] if pair is not None and pair[0] is sh else _twin(sh)
        self.twins[id(sh)] = (sh, tw)
        notes = {name: copy(getattr(L, name)) for name in NOTES}
        self.mp.setattr(ledgertouched, "COMPILED", False)
        in_c = ledgertouched.check_touched(L, sh, tables)
        for name, kept in notes.items():  # (emptied in place: `LiveTables` reads `L.tt`)
            note = getattr(L, name)
            note.clear()
            if isinstance(note, list):
                note.extend(kept)
            else:
                note.update(kept)
        self.mp.setattr(ledgertouched, "COMPILED", True)
        looped = ledgertouched.check_touched(L, tw, _tables_of(tables, tw))
        self.mp.setattr(ledgertouched, "COMPILED", False)
        assert looped == in_c
        if in_c is None:
            assert {f: getattr(tw, f) for f in FIGURES} == {f: getattr(sh, f) for f in FIGURES}
        self.checks += 1
        return in_c


# --------------------------------------------------------------------------- the scene


def _steps(L: Ledger) -> Iterator[tuple[str, list[Table]]]:
    """The scene's steps, each named, with the tables holding blocks after it."""
    a, _ = admit(L, 1, Content(1), 48, 48)
    L.register(a, 48)
    assert a.blocks == list(range(12))
    yield "A takes 12", [a]
    b, _ = admit(L, 2, Content(2), 40, 40)
    L.register(b, 20)
    assert (b.blocks, b.nreg) == (list(range(12, 22)), 5)
    yield "B takes 10", [a, b]
    L.release(a, 1.0)
    assert L.entries[0].blocks == list(range(12))
    yield "A released", [b]
    assert L.evict_ids(0, 10) == list(range(11, 1, -1))
    yield "10 evicted", [b]
    c, _ = admit(L, 3, Content(3), 40, 40)
    L.register(c, 40)
    assert sorted(c.blocks) == list(range(2, 12))
    yield "C takes 10", [b, c]


def _scene(paths: Paths, until: str) -> tuple[Ledger, Shadow, list[Table]]:
    """The scene up to step `until` (included), each step before it checked both ways."""
    L = Ledger(64, 4)
    L.track = True
    sh = Shadow(L)
    for name, tables in _steps(L):
        if name == until:
            return L, sh, tables
        assert paths.check(L, sh, {t.hid: t for t in tables}) is None, name
        assert check(L, tables) is None
        kept_as_counted(sh, name)
    raise AssertionError(until)


def test_both_paths_keep_the_same_figures_through_the_scene(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Each step's changes take a pass in C in the pure path: A's and B's spans (12 and 10
    # blocks, B's half registered) and C's (10 blocks, on ids evicted just before), the
    # new entry of 12 blocks (looked at, then vouched for as a release's), the 10 evicted
    # blocks, A's 12 hashes noted at once. The loops take none.
    paths = Paths(monkeypatch)
    L, sh, tables = _scene(paths, "C takes 10")
    assert paths.check(L, sh, {t.hid: t for t in tables}) is None
    kept_as_counted(sh)
    assert (sh.allocated, sh.cached, sh.registered, sh.held) == (20, 2, 17, 20)
    assert paths.passes == {False: C_PARTS, True: KEPT_IN_C} and paths.native == NATIVE


def _count_two(L: Ledger, ts: list[Table]) -> None:
    L.ref[ts[-1].blocks[5]] = 2


def _unlisted(L: Ledger, ts: list[Table]) -> None:
    del L.table[L.bhash[ts[0].blocks[7]]]


def _wrong_index(L: Ledger, ts: list[Table]) -> None:
    L.bidx[ts[0].blocks[4]] = 3


def _stray_holder(L: Ledger, ts: list[Table]) -> None:
    L.sharers[ts[-1].blocks[8]] = {9: None}


def _misread(L: Ledger, ts: list[Table]) -> None:
    L.bidx[6] = 5


def _cached_unlisted(L: Ledger, ts: list[Table]) -> None:
    del L.table[L.bhash[9]]


def _other_entry(L: Ledger, ts: list[Table]) -> None:
    L.bentry[3] = 7


def _left_counted(L: Ledger, ts: list[Table]) -> None:
    L.ref[5] = 1


def _left_registered(L: Ledger, ts: list[Table]) -> None:
    L.bhash[5] = 12345


def _stray_owner(L: Ledger, ts: list[Table]) -> None:
    L.owner[ts[-1].blocks[6]] = 9


# (the step it follows, the fault, the message, whether the full check says the same)
FAULTS = [
    ("A takes 12", _count_two, "block 5: count 2, but 1 tables hold it", True),
    ("A takes 12", _unlisted, "block 7: registered but not in the hash table", True),
    ("A takes 12", _wrong_index, "hold 1: block 4 (#4) is block 3 of its content", True),
    ("B takes 10", _count_two, "block 17: count 2, but 1 tables hold it", True),
    ("B takes 10", _stray_holder, "block 20: count 1 names hold 9, which does not hold it", False),
    ("A released", _misread, "block 6: registered hash differs from its content's", True),
    ("A released", _cached_unlisted, "block 9: registered but not in the hash table", True),
    ("A released", _other_entry, "entry 0: block 3 is not a cached block of it", True),
    ("10 evicted", _left_counted, "block 5: count 1 names hold 1, which does not hold it", False),
    ("10 evicted", _left_registered, "block 5: registered hash differs from its content's", False),
    ("C takes 10", _stray_owner, "hold 3: block 6 (#8) does not count it as a holder", False),
]


@pytest.mark.parametrize("step,fault,message,as_full", FAULTS, ids=[f[1].__name__ for f in FAULTS])
def test_both_paths_report_a_broken_ledger_alike(
    step: str,
    fault: Callable[[Ledger, list[Table]], None],
    message: str,
    as_full: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The fault is made right after the step, with only the notes the step made: both
    # paths name it in the same words, the full check's where those name it too.
    paths = Paths(monkeypatch)
    L, sh, tables = _scene(paths, step)
    fault(L, tables)
    assert paths.check(L, sh, {t.hid: t for t in tables}) == message
    assert (check(L, tables) == message) is as_full


def test_both_paths_vouch_for_many_hashes_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    # A's 12 hashes, checked, noted again once the hash table lists hash 3 under block 7
    # (whose own hash stays listed): one names a block not registered with it.
    paths = Paths(monkeypatch)
    L, sh, tables = _scene(paths, "B takes 10")
    hashes = [L.bhash[b] for b in range(12)]
    assert NONE not in hashes and not L.more
    L.table[hashes[3]] = 7
    L.th.update(hashes)
    message = "hash table lists block [7] under a hash one is not registered with"
    assert paths.check(L, sh, {t.hid: t for t in tables}) == message
    assert paths.passes == {False: {"_hashes", "_span_in_c"}, True: KEPT_IN_C}


def test_both_paths_agree_after_every_event_of_a_full_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    # benchmarks/full_gpu.pool cut to 30 requests on 400 blocks of 16 (max_model_len to
    # match): prefills of tens of blocks, releases, evictions, preemptions and re-admissions
    # hitting their own blocks. Every check of the run (after each event) runs both paths
    # on the same state; the run takes every pass in C.
    paths = Paths(monkeypatch)
    monkeypatch.setattr(ledgercheck, "check_touched", paths.check)
    path = ROOT / "benchmarks" / "full_gpu.pool"
    text = re.sub(r"limit \d+", "limit 30", path.read_text())
    text = text.replace("cap 19999 * BLOCK", "cap 400 * BLOCK")
    text = text.replace("MAX_MODEL_LEN = 16384", "MAX_MODEL_LEN = 4096")
    sim = Simulation(compile_source(text, str(path), str(path.parent)), history=False)
    sim.run_headless(events=40_000)
    assert sim.violation is None and sim.state.error is None
    c = sim.state.counters
    assert c["evictions"] > 0 and c["preemptions"] > 0 and sim.summary().hit_own > 0, c
    assert paths.checks > 100
    assert paths.passes == {False: C_PARTS, True: KEPT_IN_C} and paths.native == NATIVE
