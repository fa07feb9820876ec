"""The per-event invariant check (`invariants.check_event`, over what each event touched)
against the full count (`invariants.check`), its oracle.

- Agreement: on every bundled spec (trace specs cut short) and on random specs, in the
  per-event and the fast mode, after every check both say the same (both pass), and the
  figures the watch keeps by deltas (the queues', and each ledger's shadow) equal a full
  count of the state, and so the pool's own counters.
- Each invariant broken on purpose between two actions (as a bug in a rule would): the
  per-event check halts the run at the very next event, with the full count's words.
- An engine made on a restored checkpoint counts the state first and checks on from there.
"""

from __future__ import annotations

import pickle
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from pooltui.lang import compile_source
from pooltui.sim import Simulation, grow, invariants
from pooltui.sim.engine import Engine
from pooltui.sim.events import Event, Violation
from pooltui.sim.ledger import Ledger
from pooltui.sim.ledgercheck import Shadow
from pooltui.sim.state import Hold, PoolState, State
from pooltui.sim.testing import break_pool, changed_entry, changed_hold
from pooltui.sim.watch import start
from tests.sim.helpers import compile_spec
from tests.sim.test_invariants import random_specs

ROOT = Path(__file__).resolve().parents[2]


def hold_to_the_full_count(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every per-event check the engines run is held to the full count; returns [checks]."""
    real = invariants.check_event
    checks = [0]

    def held(s: State, w: Any, steady: Any = None) -> Any:
        got = real(s, w, steady)
        want = invariants.check(s, steady)
        assert got == want, (s.n_events, got, want)
        assert w.resyncs == 0, "the watch missed a change"
        if got is None:
            assert not (w.holds or w.grown or w.advanced)  # consumed, and the ledgers' notes
            assert not any(
                p.ledger.tb or p.ledger.tf or p.ledger.te or p.ledger.tt for p in s.pools
            )
            fresh = start(s)
            assert (w.seen, w.front) == (fresh.seen, fresh.front)
            for p, sh in zip(s.pools, w.ledgers.shadows, strict=True):
                assert sh is not None and sh.ledger is p.ledger
                count = Shadow(p.ledger)
                assert (sh.seen, sh.refs, sh.registered, sh.elen) == (
                    count.seen,
                    count.refs,
                    count.registered,
                    count.elen,
                )
                assert (sh.allocated, sh.cached) == (count.allocated, count.cached)
                assert (sh.allocated, sh.cached) == (p.allocated, p.cached)
        checks[0] += 1
        return got

    monkeypatch.setattr(invariants, "check_event", held)
    return checks


@pytest.fixture
def oracle(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    return hold_to_the_full_count(monkeypatch)


# --------------------------------------------------------------------------- agreement


def _limited(path: Path, rows: int) -> str:
    return re.sub(r'(from\s+"[^"]+")(\s*limit\s+\d+)?', rf"\1 limit {rows}", path.read_text())


def _cut(path: Path) -> str:
    """A bundled spec, trace specs cut short (the Mooncake one to 20 rows, which still
    evict, preempt and hit their own and each other's blocks, on a GPU of 1,024 blocks,
    and azure_conv on one of 1,536), so the full count of every block after each event
    stays quick; azure_conv's 300 requests evict more on it, 840 times in the fast mode's
    1,500 events."""
    if path.stem.startswith("azure"):
        return _limited(path, 300).replace("cap 3072 * BLOCK", "cap 1536 * BLOCK")
    if path.stem.startswith("mooncake"):
        text = _limited(path, 20).replace("cap 8192 * BLOCK", "cap 1024 * BLOCK")
        return text.replace("MAX_MODEL_LEN = 131072", "MAX_MODEL_LEN = 16384")
    return path.read_text()


SPECS = sorted((ROOT / "specs").glob("*.pool")) + sorted((ROOT / "specs" / "halts").glob("*.pool"))


@pytest.mark.parametrize("fast", [False, True], ids=["per-event", "fast"])
@pytest.mark.parametrize("path", SPECS, ids=[p.stem for p in SPECS])
def test_bundled_specs_agree_with_the_full_count(path: Path, fast: bool, oracle: list[int]) -> None:
    program = compile_source(_cut(path), str(path), str(path.parent))
    sim = Simulation(program, history=False, fast=fast)
    # A fast-mode event is a stretch of iterations: fewer of them reach as far (and the
    # full count after each check is what costs here; on azure_conv 1,500 of them take in
    # over a hundred arrivals and hundreds of evictions).
    sim.run_headless(events=1_500 if fast else 6_000)
    assert sim.violation is None
    assert oracle[0] > 0


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=random_specs())
def test_random_specs_agree_with_the_full_count(spec: str) -> None:
    with pytest.MonkeyPatch.context() as mp:
        checks = hold_to_the_full_count(mp)
        for fast in (False, True):
            sim = Simulation(compile_spec(spec), history=False, fast=fast)
            sim.run_headless(events=5_000)
            assert sim.violation is None, (sim.violation, spec)
        assert checks[0] > 0


def test_an_engine_on_a_restored_checkpoint_counts_it_first(oracle: list[int]) -> None:
    # The watch is not simulation state: a checkpoint does not carry it, and an engine
    # made on a restored state with invariants on starts its own by a full count.
    path = ROOT / "specs" / "vllm_v1.pool"
    sim = Simulation(compile_source(path.read_text(), str(path), str(path.parent)))
    sim.run(events=700)
    state = pickle.loads(pickle.dumps(sim.state))
    assert not hasattr(state, "watch")
    eng = Engine(sim.tables, sim.schedule, state, invariants=True, record=False)
    before = oracle[0]
    while eng.advance():
        pass
    assert state.finished and state.violation is None
    assert oracle[0] > before


# --------------------------------------------------------------------------- corruption

# Four sessions arrive at 0 and queue on kv (8 blocks of 4) in order: a[0] a[1] a[2] a[3].
# The settle starts gpu's iteration 1: no residents; admission takes a[0] (8 units, 2
# blocks, ids 0 and 1; its prefill's 8 tokens use the whole budget of 8), and stops there.
# After that action: a[0] is gpu's one resident, its hold 8 units in 2 blocks, computed
# 0, reserve 16; kv has 2 allocated, 0 cached, 6 free blocks (the never-used 2..7) and a
# queue of a[1] a[2] a[3]; gpu's budget left is 0. The next event is iteration 1's end at
# t=1 (a[0]'s 8 tokens are computed).
QUEUED = """
stage gpu step { budget 8; seats 2; time 1; }
pool kv { cap 32; block 4; evict lru; preempt lifo; queue fifo; admit via gpu; }
session a[4] {
  arrive at (0);
  hold kv (8) reserve (16) { run gpu prefill (8); run gpu decode (4); }
  wait (1);
}
"""


def _started(text: str) -> Simulation:
    return Simulation(compile_spec(text), history=False)


def _until(sim: Simulation, done: Callable[[State], bool]) -> None:
    """Advance whole actions until `done` holds of the state."""
    while not done(sim.state):
        assert sim.engine.advance(), "the run ended first"


def _first_admitted(s: State) -> bool:
    return any(not h.queued for sess in s.live.values() for h in sess.holds)


def _kv(sim: Simulation) -> PoolState:
    return sim.state.pools[0]


def _hold_of(sim: Simulation, name: str) -> Hold:
    sess = next(x for x in sim.state.live.values() if x.name == name)
    return sess.holds[0]


def _halts_at_the_next_event(sim: Simulation) -> Any:
    """Advance to the next event; the run must halt there. Returns the violation."""
    n = sim.state.n_events
    while sim.state.n_events == n:
        if not sim.engine.advance():
            break
    assert sim.state.n_events == n + 1, "no event, or the run went past it"
    v = sim.state.violation
    assert v is not None and sim.state.halted == f"invariant broken: {v.message}"
    assert v == invariants.check(sim.state)  # the full count's words
    return v


def _run_to_the_halt(sim: Simulation) -> tuple[Violation, Event]:
    """Advance to the end: the run must halt on a violation. (It, the last event.)"""
    while sim.engine.advance():
        pass
    v, last = sim.state.violation, sim.engine.last_event()
    assert v is not None and last is not None
    return v, last


def _corrupt_hold(field: str, value: int) -> Callable[[Simulation], None]:
    def corrupt(sim: Simulation) -> None:
        h = _hold_of(sim, "a[0]")
        setattr(h, field, value)
        changed_hold(sim, h)  # as a rule records what it changes

    return corrupt


def _flip_tail_to_preempted(sim: Simulation) -> None:
    h = _kv(sim).queue[-1]
    h.preempted = True
    changed_hold(sim, h)


def _free_twice(sim: Simulation) -> None:
    L = _kv(sim).ledger
    L.free.append(len(L.ref))  # block 2 is never-used already: now it counts twice


def _cache_from_nowhere(sim: Simulation) -> None:
    L = _kv(sim).ledger
    L.cached += 1
    L.fresh -= 1  # a never-used block is taken for it


def _overspend(sim: Simulation) -> None:
    sim.state.stages[0].budget_left = -1


def _no_seats(sim: Simulation) -> None:
    sim.state.stages[0].seats = 0


def _phantom_arrival(sim: Simulation) -> None:
    sim.state.counters["arrived"] += 1


def _shrink_cap(sim: Simulation) -> None:
    _kv(sim).cap = 4


# (corruption, invariant, message), each worked out from the state after a[0]'s admission
# (above) and the next event, iteration 1's end, which adds a[0]'s 8 prefill tokens.
BROKEN = [
    (_shrink_cap, "capacity", "kv: allocated + cached = 8 units > cap 4"),
    # 2 allocated + 0 cached + free: 6 never used, plus block 2 given back = 7.
    (_free_twice, "blocks", "kv: 7 free + 2 allocated + 0 cached blocks ≠ 8 blocks"),
    # 5 never used + 2 allocated + 1 cached = 8: the sum holds, the count does not.
    (
        _cache_from_nowhere,
        "cached",
        "kv: cached is 1 blocks but 0 registered blocks have count 0",
    ),
    # break_pool: allocated 3, a never-used block gone; a[0]'s blocks 0, 1 have a count.
    (
        lambda sim: break_pool(sim, "kv"),
        "allocated",
        "kv: allocated is 3 blocks but 2 have a count",
    ),
    (_corrupt_hold("size", 9), "allocated", "kv: a[0] holds 9 units in 2 blocks"),
    # computed 9, then + 8 tokens at the iteration's end.
    (_corrupt_hold("computed", 9), "computed", "kv: a[0] has computed 17 > size 8"),
    (_corrupt_hold("reserve", 4), "reserve", "kv: a[0] holds 8 units > reserve 4"),
    (_flip_tail_to_preempted, "queue", "kv: a preempted hold sits behind a policy-ordered one"),
    (_no_seats, "seats", "gpu: 1 residents > seats 0"),
    (_overspend, "budget", "gpu: the iteration passed its budget"),
    (_phantom_arrival, "sessions", "arrived 5 ≠ live 4 + ended 0"),
]


@pytest.mark.parametrize(
    ("corrupt", "invariant", "message"),
    BROKEN,
    ids=[b[1] + "-" + str(i) for i, b in enumerate(BROKEN)],
)
def test_each_broken_invariant_halts_at_the_next_event(
    corrupt: Callable[[Simulation], None], invariant: str, message: str, oracle: list[int]
) -> None:
    sim = _started(QUEUED)
    _until(sim, _first_admitted)
    assert [sim.state.live[h.sid].name for h in _kv(sim).queue] == ["a[1]", "a[2]", "a[3]"]
    corrupt(sim)
    v = _halts_at_the_next_event(sim)
    assert (v.invariant, v.message) == (invariant, message)
    assert sim.engine.last_event().moment == "iteration-end"


def test_an_entry_that_loses_a_cached_block_halts_at_the_next_event(oracle: list[int]) -> None:
    # a[0] releases after its 4 decode steps: computed 8 + 4 = 12 units, 3 blocks
    # registered, its release's entry (it then waits 1 s, still live). The entry then
    # loses its last block, which stays cached (registered, count 0): 3 cached, 2 in
    # entries.
    sim = _started(QUEUED)
    _until(sim, lambda s: any(p.ledger.entries for p in s.pools))
    p = _kv(sim)
    (order, e), *_ = p.ledger.entries.items()
    assert sim.state.live[e.sid].name == "a[0]" and (e.units, len(e.blocks)) == (12, 3)
    e.blocks.pop()
    changed_entry(sim, p, order)
    v = _halts_at_the_next_event(sim)
    assert (v.invariant, v.message) == ("cached", "kv: entries hold 2 blocks but 3 are cached")


def test_a_rule_that_leaks_blocks_halts_at_its_own_event(
    monkeypatch: pytest.MonkeyPatch, oracle: list[int]
) -> None:
    # A bug in a rule: blocks given back are not put back on the free stack. a holds 16
    # units (4 blocks of kv's 16) from 0; at 1 it wakes and releases them, computed 0, so
    # nothing is registered or cached: 0 allocated, 0 cached, and free still 16 - 4
    # never-used = 12.
    release = Ledger.release

    def leaky(self: Ledger, t: Any, now: float, *args: Any, **kw: Any) -> Any:
        n = len(self.free)
        e = release(self, t, now, *args, **kw)
        del self.free[n:]  # the blocks it freed never reach the free stack
        return e

    monkeypatch.setattr(Ledger, "release", leaky)
    sim = _started("""
        pool kv { cap 64; block 4; }
        session a { arrive at (0); hold kv (16) { wait (1); } }
        """)
    while sim.engine.advance():
        pass
    v = sim.state.violation
    assert v is not None
    assert (v.invariant, v.message) == (
        "blocks",
        "kv: 12 free + 0 allocated + 0 cached blocks ≠ 16 blocks",
    )
    assert sim.engine.last_event().moment == "release"


def test_a_missed_change_is_counted_again_not_reported() -> None:
    # The watch's own figure is off (as after a change nobody noted): the check sees
    # allocated 2 ≠ 3, the full count finds nothing wrong, so the watch counts the state
    # again and the run goes on to its end.
    sim = _started(QUEUED)
    _until(sim, _first_admitted)
    w = sim.engine.watch
    assert w is not None
    sh = w.ledgers.shadows[0]
    assert sh is not None and sh.allocated == 2
    sh.allocated += 1
    while sim.engine.advance():
        pass
    assert sim.state.violation is None and sim.state.finished
    assert w.resyncs == 1


def test_a_rule_that_forgets_to_grow_halts_at_the_iteration_end(
    monkeypatch: pytest.MonkeyPatch, oracle: list[int]
) -> None:
    # A bug in a rule: growing says "ok" and grows nothing. In QUEUED, iteration 2 (t=1)
    # serves a[0]'s first decode step (1 token: it must grow from 8 units to 9) and
    # admits a[1]; when it ends at t=2, a[0] has computed 9 in a hold still of 8 units.
    monkeypatch.setattr(grow, "grow_to", lambda *args: "ok")
    sim = _started(QUEUED)
    v, last = _run_to_the_halt(sim)
    assert (v.invariant, v.message) == ("computed", "kv: a[0] has computed 9 > size 8")
    assert (last.moment, last.time) == ("iteration-end", 2)


def test_a_table_that_grows_its_size_but_takes_no_block_halts_at_the_grow(
    monkeypatch: pytest.MonkeyPatch, oracle: list[int]
) -> None:
    # A bug in the ledger: growing a table sets its size and takes no block (and notes
    # nothing for the ledgers' check). In QUEUED, a[0] is admitted with 8 units, 2 of
    # kv's 4-unit blocks; iteration 2 (t=1) serves its first decode step: it grows to 9
    # units, which need a 3rd block, and the `grow` event says so. The growth is the only
    # record of the change (a grown hold): the check after that very event halts, in the
    # full count's words (the ledger's, first: its table of 9 units in 2 blocks).
    sim = _started(QUEUED)
    _until(sim, _first_admitted)
    h = _hold_of(sim, "a[0]")
    assert (h.size, len(h.table.blocks)) == (8, 2)

    def size_only(self: Ledger, t: Any, size: int) -> list[int]:
        t.size = max(t.size, size)
        return []

    monkeypatch.setattr(Ledger, "grow", size_only)
    v, last = _run_to_the_halt(sim)
    assert (v.invariant, v.message) == ("table", f"kv: hold {h.key}: 9 units in 2 blocks, not 3")
    assert (last.moment, last.time, last.session) == ("grow", 1, "a[0]")


# Ten residents decoding within their second block: each iteration grows every one of
# them by a unit without a block (no event of its own: the `iteration` event's change).
TEN = """
stage gpu step { budget 64; seats 10; time 1; }
pool kv { cap 80; block 4; evict lru; preempt lifo; queue fifo; admit via gpu; }
session a[10] {
  arrive at (0);
  hold kv (min(max(5, context + 1), computed + budget_left(gpu)))
       need (max(5, context + 1)) reserve (16) {
    run gpu prefill (5); run gpu decode (3);
  }
}
"""


def test_one_of_many_grown_tables_left_behind_its_hold_halts_at_the_iteration(
    monkeypatch: pytest.MonkeyPatch, oracle: list[int]
) -> None:
    # A bug in the ledger for one table of ten: growing within its blocks leaves its size.
    # Iteration 1 (t=0) admits a[0]-a[9] with 5 units each (2 blocks: 20 of kv's 20) and
    # prefills them; iteration 2 (t=1) serves their first decode step, each hold growing
    # to 6 units in the same 2 blocks. The ten grown holds are checked together at the
    # `iteration` event, and a[9]'s table still says 5.
    sim = _started(TEN)
    _until(sim, lambda s: sum(not h.queued for x in s.live.values() for h in x.holds) == 10)
    late = _hold_of(sim, "a[9]").table
    assert (late.size, len(late.blocks)) == (5, 2)
    grow = Ledger.grow

    def forgets_size(self: Ledger, t: Any, size: int) -> list[int]:
        if t is late and self.nb(size) <= len(t.blocks):
            return []
        return grow(self, t, size)

    monkeypatch.setattr(Ledger, "grow", forgets_size)
    v, last = _run_to_the_halt(sim)
    assert (v.invariant, v.message) == ("allocated", "kv: a[9] holds 6 units but its table 5")
    assert (last.moment, last.time) == ("iteration", 1)


def test_one_of_many_residents_computing_past_its_size_halts_at_the_iteration_end(
    monkeypatch: pytest.MonkeyPatch, oracle: list[int]
) -> None:
    # A bug in a rule for one resident of ten: growing a[9] says "ok" and grows nothing.
    # In TEN, iteration 2 (t=1) serves the ten holds' first decode step (each must grow
    # from 5 units to 6); when it ends at t=2, the ten advanced holds are checked together
    # and a[9] has computed 6 in a hold still of 5 units.
    grow_to = grow.grow_to

    def forgets_one(eng: Any, sess: Any, *rest: Any) -> str:
        return "ok" if sess.name == "a[9]" else grow_to(eng, sess, *rest)

    monkeypatch.setattr(grow, "grow_to", forgets_one)
    sim = _started(TEN)
    v, last = _run_to_the_halt(sim)
    assert (v.invariant, v.message) == ("computed", "kv: a[9] has computed 6 > size 5")
    assert (last.moment, last.time) == ("iteration-end", 2)


def test_a_steady_resident_is_checked_with_the_figures_it_stands_for(oracle: list[int]) -> None:
    # The fast mode keeps a steady resident's figures lazily, so no rule touches its hold
    # while it decodes within a block: the check looks at every steady hold each action,
    # with the figures it stands for. In QUEUED, a[0]'s prefill ends with iteration 1
    # (t=1) on a tight hold (computed = size = context = 8): its decode run is steady
    # from its first step. Planning iteration 2 (t=1) gives it its third block (units
    # 9..12); in flight, it stands for size 9. Its reserve is then set to 9 behind the
    # rules' back, unrecorded: at iteration 2's end (t=2) it stands for size 9 (fine);
    # planning iteration 3 (t=2, no new block: no rule touches it) makes it size 10.
    sim = Simulation(compile_spec(QUEUED), history=False, fast=True)
    _until(sim, lambda s: _kv(sim).allocated == 5)  # a[0]'s 3 blocks and a[1]'s 2
    h = _hold_of(sim, "a[0]")
    assert (len(h.table.blocks), sim.state.now) == (3, 1)
    h.reserve = 9
    while sim.engine.advance():
        pass
    v = sim.state.violation
    assert v is not None
    assert (v.invariant, v.message) == ("reserve", "kv: a[0] holds 10 units > reserve 9")
    assert sim.state.now == 2
