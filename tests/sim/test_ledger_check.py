"""content-and-reload.md §4 after every event: the check of what each event changed
(`ledgertouched.check_touched`, run by the engine with invariants on) against the full check
(`ledgercheck.check`, the oracle), on whole runs of bundled specs, in both modes; and
faults put into the ledger's own steps, each caught at the event that made it.

(Each §4 invariant broken on purpose in a running simulation: tests/sim/test_shared.py;
in the ledger alone: tests/sim/test_ledger.py.)
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pooltui.lang import compile_source
from pooltui.sim import Simulation, invariants, ledgercheck
from pooltui.sim.ledger import Ledger
from pooltui.sim.snapshot import Violation
from pooltui.sim.state import State
from tests.sim.helpers import kept_as_counted, sim_of

ROOT = Path(__file__).resolve().parents[2]


def _spec(name: str, rows: int | None = None) -> tuple[str, str]:
    path = ROOT / "specs" / name
    text = path.read_text()
    if rows is not None:
        # The trace cut to its first rows on a GPU of 1,024 blocks (max_model_len to
        # match), so the full check of every block after each event stays quick: 20 rows
        # still evict, preempt, and hit their own and each other's blocks (asserted below).
        text = re.sub(r'(from\s+"[^"]+")(\s*limit\s+\d+)?', rf"\1 limit {rows}", text)
        text = text.replace("cap 8192 * BLOCK", "cap 1024 * BLOCK")
        text = text.replace("MAX_MODEL_LEN = 131072", "MAX_MODEL_LEN = 16384")
    return text, str(path.parent)


SPECS = [
    ("shared_prefix.pool", None),
    ("mooncake_conv.pool", 20),
    ("spill_tiers.pool", None),
    ("vllm_v1.pool", None),
]


@pytest.mark.parametrize("fast", [False, True], ids=["per-event", "fast"])
@pytest.mark.parametrize("name,rows", SPECS, ids=[n for n, _ in SPECS])
def test_the_check_of_what_changed_agrees_with_the_full_check_after_every_check(
    name: str, rows: int | None, fast: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every time the engine checks (after each event; in the fast mode after each action),
    # the full check runs on the same state: both find nothing, and the figures the check
    # of what changed keeps (its shadows) equal a recount of every pool.
    original = invariants.check_event
    checks = [0]

    def both(s: State, watch: Any, steady: Any = None) -> Violation | None:
        v = original(s, watch, steady)
        assert v is None, v
        assert ledgercheck.check_state(s) is None  # the oracle, every block of every pool
        assert watch.resyncs == 0  # nothing counted again: the notes missed no change
        shadows = watch.ledgers.shadows
        assert len(shadows) == len(s.pools)
        for p, sh in zip(s.pools, shadows, strict=True):
            assert sh is not None and sh.ledger is p.ledger
            kept_as_counted(sh, p.label)
        checks[0] += 1
        return None

    monkeypatch.setattr(invariants, "check_event", both)
    text, base = _spec(name, rows)
    sim = Simulation(compile_source(text, str(Path(base) / name), base), fast=fast, history=False)
    sim.run_headless(events=40_000)
    assert sim.violation is None and sim.state.error is None
    assert checks[0] > 100
    assert sum(len(p.ledger.ref) for p in sim.state.pools) > 0
    if rows is not None:  # what the cut trace is there for
        summary = sim.summary()
        assert summary.evictions and summary.preemptions, summary
        assert summary.hit_own and summary.hit_shared, summary
    if rows is not None:  # the cut trace is worth checking: it shares, evicts and preempts
        c = sim.state.counters
        assert c["evictions"] > 0 and c["preemptions"] > 0 and sim.summary().hit_shared > 0


# --------------------------------------------------------------------------- faulty steps
# SYSTEM_PROMPT (tests/sim/test_shared.py): a and b share an 8-unit prompt; b is admitted
# at t0 after a, hitting a's blocks 0 and 1. Each fault below is put into one of the
# ledger's steps before the run; the check after the event the faulty step ran in halts
# the run, naming the invariant. (The ledger marks what each step changed itself, so a
# fault added after a step is noted as it would be inside it.)
SYSTEM_PROMPT = """
stage gpu step { budget 64; time 1; }
pool kv { cap 64; block 4; admit via gpu; }
session a { arrive at (0); hold kv (12) content ("sys" : 8) { run gpu prefill (12); run gpu decode (1); } }
session b { arrive at (0); hold kv (12) content ("sys" : 8) { run gpu prefill (12); run gpu decode (1); } }
"""


def _shared_twice(original: Callable[..., Any]) -> Callable[..., Any]:
    def acquire(self: Ledger, t: Any, hit: Any) -> None:
        original(self, t, hit)
        for b in t.blocks:
            if self.ref[b] > 1:
                self.ref[b] += 1  # a shared block counted twice
                break

    return acquire


def _release_keeps_count(original: Callable[..., Any]) -> Callable[..., Any]:
    def release(self: Ledger, t: Any, now: float, *args: Any, **kw: Any) -> Any:
        before = self.allocated
        e = original(self, t, now, *args, **kw)
        self.allocated = before  # the released blocks still counted as allocated
        return e

    return release


def _register_twice(original: Callable[..., Any]) -> Callable[..., Any]:
    def register(self: Ledger, t: Any, computed: int) -> tuple[int, int]:
        out: tuple[int, int] = original(self, t, computed)
        for h, first in self.table.items():  # a registration listed twice
            if h not in self.more and self.ref[first] > 0:
                self.more[h] = [first]
                self.dups += 1
                self.th.update(self.table)
                break
        return out

    return register


def _grow_wrong_index(original: Callable[..., Any]) -> Callable[..., Any]:
    def grow(self: Ledger, t: Any, size: int) -> list[int]:
        new: list[int] = original(self, t, size)
        if new:
            self.bidx[new[-1]] += 1  # the new block says it holds another block's content
        return new

    return grow


FAULTS = [
    ("acquire", _shared_twice, "count", "admit", "b"),
    # allocated 2 too high: free + allocated + cached no longer makes the pool's blocks
    ("release", _release_keeps_count, "blocks", "release", "a"),
    # a's tokens are taken (its blocks registered) between `admit a` and `admit b`, with no
    # event of their own: the check after the next event, `admit b`, finds the fault.
    ("register", _register_twice, "content", "admit", "b"),
    ("grow", _grow_wrong_index, "content", "admit", "a"),
]


@pytest.mark.parametrize("method,fault,invariant,moment,who", FAULTS, ids=[f[0] for f in FAULTS])
def test_a_faulty_ledger_step_is_caught_at_its_event(
    method: str,
    fault: Callable[[Callable[..., Any]], Callable[..., Any]],
    invariant: str,
    moment: str,
    who: str | None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(Ledger, method, fault(getattr(Ledger, method)))
    sim = sim_of(SYSTEM_PROMPT)
    sim.run()
    v = sim.violation
    assert v is not None and (v.invariant, v.pool) == (invariant, "kv"), v
    last = sim.events[len(sim.events) - 1]
    assert (last.moment, last.session if who else None) == (moment, who), last
