"""The fast mode against the per-event mode (issue: speed).

The fast mode counts steady decoding arithmetically and does not record `iteration`,
`iteration-end` or `grow`. Everything else must be the same: the same events (all fields
but the index), in the same order, and the same end state (the snapshot, block for block),
whether the fast run records events or only counts them.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from pooltui.lang import compile_source
from pooltui.sim import Simulation
from tests.sim.test_invariants import random_specs

ROOT = Path(__file__).resolve().parents[2]
QUIET = {"iteration", "iteration-end", "grow"}


def _key(e: Any) -> str:
    d = e.to_dict()
    d.pop("i")
    return json.dumps(d, sort_keys=True)


def _end_state(sim: Simulation) -> Any:
    snap = sim.snapshot()
    # The index and totals count the unrecorded events; the utilisation is not in it.
    return dataclasses.replace(snap, events_total=0, event_index=0, last_event=None)


def _run(text: str, base: str, *, fast: bool, record: bool, invariants: bool) -> Any:
    program = compile_source(text, str(Path(base) / "spec.pool"), base)
    sim = Simulation(program, fast=fast, history=False, invariants=invariants)
    events: list[Any] = []
    sim.run_headless(on_event=events.append if record else None)
    return sim, events


def check_same(text: str, base: str, invariants: bool = False) -> None:
    slow, slow_events = _run(text, base, fast=False, record=True, invariants=invariants)
    fast, fast_events = _run(text, base, fast=True, record=True, invariants=invariants)
    lean, _ = _run(text, base, fast=True, record=False, invariants=False)
    expected = [_key(e) for e in slow_events if e.moment not in QUIET]
    assert [_key(e) for e in fast_events] == expected
    assert all(e.moment not in QUIET for e in fast_events)
    assert slow.state.halted == fast.state.halted
    assert _end_state(fast) == _end_state(slow)
    assert lean.state.halted == slow.state.halted
    assert lean.state.n_events == len(expected)
    assert _end_state(lean) == _end_state(slow)
    for k in ("preemptions", "evictions", "evicted_units", "spills", "drops", "iterations"):
        assert lean.state.counters[k] == slow.state.counters[k], k
    assert lean.state.now == slow.state.now


def _limited(path: Path, rows: int) -> str:
    """A trace spec cut to its first rows, so the per-event run stays short."""
    return re.sub(r'(from\s+"[^"]+")(\s*limit\s+\d+)?', rf"\1 limit {rows}", path.read_text())


BUNDLED = sorted((ROOT / "specs").glob("*.pool"))


@pytest.mark.parametrize("path", BUNDLED, ids=[p.stem for p in BUNDLED])
def test_bundled_specs_agree(path: Path) -> None:
    text = _limited(path, 400) if path.stem.startswith(("azure", "mooncake")) else path.read_text()
    check_same(text, str(path.parent))


def test_agree_with_invariants_on() -> None:
    path = ROOT / "specs" / "azure_conv.pool"
    check_same(_limited(path, 150), str(path.parent), invariants=True)


VLLM_PRESSURE = """
seed 4;
stage gpu step { budget 64; seats 16; time 0.01 + 0.001 * tokens; }
pool kv { cap 40 * 4; block 4; evict lru; preempt lifo; queue fifo; admit via gpu; }
session r[40] {
  arrive every (draw exponential(0.05));
  prompt = draw uniform(4, 40);
  max_tokens = draw uniform(20, 100);
  hold kv (min(max(prompt, context + 1), computed + budget_left(gpu)))
       need (max(prompt, context + 1)) reserve (160) {
    run gpu prefill (prompt);
    run gpu decode (max_tokens - 1);
  }
}
"""


def test_memory_pressure_with_preemptions_agrees(tmp_path: Path) -> None:
    slow, _ = _run(VLLM_PRESSURE, str(tmp_path), fast=False, record=True, invariants=False)
    assert slow.state.counters["preemptions"] > 0  # the case is worth having
    check_same(VLLM_PRESSURE, str(tmp_path))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=random_specs())
def test_random_specs_agree(spec: str) -> None:
    check_same(spec, ".")


# Two GPUs in lockstep (`time 1`: each iteration lasts 1 s), each with its own pool of six
# one-unit blocks. Chats alternate between them; each turn decodes 4 tokens, so a decoding
# chat crosses into a new block at every step and, once released turns fill the cache,
# each crossing evicts. When gpu[0] starts an iteration at an instant where gpu[1] has just
# ended one, gpu[1] starts its own in the same settle, after gpu[0]: its end is not on
# the heap yet when gpu[0]'s steady iterations could be fused. The per-event mode has
# gpu[1]'s events at the next instant before gpu[0]'s next crossing; so must the fast one.
LOCKSTEP = """\
seed 0;
stage gpu[2] step { time 1; }
pool kv[2] { cap 6; block 1; evict lru; preempt lifo; admit via gpu; }
session chat[6] {
  arrive every (1);
  repeat (2) {
    i = serial % 2;
    hold kv[i] (max(2, context + 1)) {
      run gpu[i] prefill (2);
      run gpu[i] decode (4);
    }
    wait (0.5);
  }
}
"""


def test_a_fused_stretch_never_passes_another_stage_starting_at_the_same_instant() -> None:
    slow, _ = _run(LOCKSTEP, ".", fast=False, record=True, invariants=False)
    assert slow.state.counters["evictions"] > 0  # the case is worth having
    _, events = _run(LOCKSTEP, ".", fast=True, record=True, invariants=False)
    times = [e.to_dict()["t"] for e in events]
    assert times == sorted(times)  # (before: a crossing at 9 s among the events at 8 s)
    check_same(LOCKSTEP, ".")
    check_same(LOCKSTEP, ".", invariants=True)


def _reload_specs() -> dict[str, str]:
    """The hand-worked reload cases of tests/sim/test_reload.py, and the first with a
    decoding resident steady beside a reload in flight (fast mode's bulk iterations)."""
    from tests.sim import test_reload as r
    from tests.sim import test_reload_shared as shared

    steady = r.VICTIM.replace("decode (20)", "decode (12)")  # g never needs a 2nd block
    return {
        "example": r.example(),
        "two-lanes": r.example(lanes=2),
        "when-refuses": r.example(reload="reload via pcie (size) when (size >= 64);"),
        "two-tiers": r.TWO_TIERS,
        "victim": r.VICTIM,
        "steady-beside-a-reload": steady,
        "no-fit": r.NO_FIT,
        "preempted": r.PREEMPTED,
        "forever": r.example(reload="reload via pcie (size * inf);"),
        "waits-for-a-shared-reload": shared.SHARED,
        "waits-for-a-reload-forever": shared.SHARED.replace("(size);", "(size * inf);"),
        "passed-over-at-the-settle": shared.SHARED.replace(" admit via gpu;", "")
        + "session e { arrive at (1); hold hbm (16) { run gpu prefill (16); } }",
        "tenants": shared.TENANTS,
    }


@pytest.mark.parametrize("name", list(_reload_specs()))
@pytest.mark.parametrize("invariants", [False, True], ids=["lean", "invariants"])
def test_reload_specs_agree(name: str, invariants: bool) -> None:
    check_same(_reload_specs()[name], ".", invariants=invariants)


# ---------------------------------------------------------------- cut-offs (issue 14)
# `--until T` stops before the first action after T; `--events N` right after the N-th
# recorded event (the fast mode records no `iteration`, `iteration-end` or `grow`, so the
# per-event run is cut after its N-th event of the other moments). Both modes must stop in
# the same place with the same figures. At a time cut no iteration is half planned, so the
# whole state is compared; an event cut may fall in the middle of an iteration's planning,
# where the fast mode has not written its steady residents' tokens one by one, so there the
# record, the counters, the clock and the summary are.


def _cut(text: str, base: str, *, fast: bool, until: float | None, events: int | None,
         lean: bool = False) -> tuple[Simulation, list[Any]]:  # fmt: skip
    program = compile_source(text, str(Path(base) / "spec.pool"), base)
    sim = Simulation(program, fast=fast, history=False, invariants=False)
    kept: list[Any] = []

    def on_event(e: Any) -> None:
        if e.moment not in QUIET:
            kept.append(e)
            if events is not None and not fast and len(kept) >= events:
                sim.engine.stop_after = e.index + 1  # stop right after this one

    sim.run_headless(
        until=until, events=events if fast else None, on_event=None if lean else on_event
    )
    return sim, kept


def _summary(sim: Simulation) -> Any:
    # The event count counts unrecorded moments; the utilisation integral is summed in
    # another order by the fast mode (equal to about 1e-15).
    r = sim.summary()
    pools = tuple(dataclasses.replace(p, utilisation=None) for p in r.pools)
    return dataclasses.replace(r, events=0, pools=pools)


def check_cut_same(text: str, base: str, *, until: float | None = None,
                   events: int | None = None) -> None:  # fmt: skip
    slow, slow_events = _cut(text, base, fast=False, until=until, events=events)
    fast, fast_events = _cut(text, base, fast=True, until=until, events=events)
    where = f"until={until} events={events}"
    assert [_key(e) for e in fast_events] == [_key(e) for e in slow_events], where
    assert fast.state.now == slow.state.now, where
    assert fast.state.halted == slow.state.halted, where
    for k in ("preemptions", "evictions", "evicted_units", "spills", "drops", "iterations"):
        assert fast.state.counters[k] == slow.state.counters[k], (k, where)
    assert _summary(fast) == _summary(slow), where
    if events is None:
        assert _end_state(fast) == _end_state(slow), where
        lean, _ = _cut(text, base, fast=True, until=until, events=None, lean=True)
        assert _end_state(lean) == _end_state(slow), where
        assert lean.state.counters == slow.state.counters, where


def check_cuts_same(text: str, base: str) -> None:
    """Cuts at a few times (some between events, some at an event's own time) and after a
    few counts of recorded events, of the whole run's per-event record."""
    _, record = _cut(text, base, fast=False, until=None, events=None)
    if not record:
        return
    end = record[-1].time
    n = len(record)
    times = {end * 0.3, end * 0.71, record[n // 2].time, record[(2 * n) // 3].time}
    for until in sorted(times):
        check_cut_same(text, base, until=until)
    for count in sorted({1, n // 4, n // 2, n - 1} - {0}):
        check_cut_same(text, base, events=count)


FIRST_SPEC = """
stage gpu step { budget 32; time 0.01 + 0.001 * tokens; }
pool kv { cap 64; block 16; admit via gpu; }
session req[2] {
  arrive every (0.5);
  prompt = 40;
  hold kv (prompt) { run gpu prefill (prompt); run gpu decode (8); }
}
"""


def test_a_fused_run_of_decodes_stops_at_until(tmp_path: Path) -> None:
    # language.md §1's spec, each iteration 0.01 + 0.001 × tokens long: req[0] arrives
    # at 0.5 and prefills 32 (0.5 → 0.542), then its last 8 (0.542 → 0.560); its decode
    # joins then and takes one token a step, 0.011 s each: 0.560, 0.571, 0.582, 0.593
    # (ends 0.604 > 0.6). Six iterations started by 0.6, the last in flight, the clock at
    # 0.593. The fast mode used to fuse the steady decodes into one action past 0.6: 10.
    for fast in (False, True):
        sim, _ = _cut(FIRST_SPEC, str(tmp_path), fast=fast, until=0.6, events=None)
        assert sim.state.counters["iterations"] == 6
        assert round(sim.state.now, 9) == 0.593
    check_cut_same(FIRST_SPEC, str(tmp_path), until=0.6)


def test_the_vllm_spec_cut_at_two_seconds_agrees() -> None:
    check_cut_same((ROOT / "specs" / "vllm_v1.pool").read_text(), str(ROOT / "specs"), until=2)


@pytest.mark.parametrize("path", BUNDLED, ids=[p.stem for p in BUNDLED])
def test_bundled_specs_agree_when_cut(path: Path) -> None:
    text = _limited(path, 120) if path.stem.startswith(("azure", "mooncake")) else path.read_text()
    check_cuts_same(text, str(path.parent))


@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])  # fmt: skip
@given(spec=random_specs())
def test_random_specs_agree_when_cut(spec: str) -> None:
    check_cuts_same(spec, ".")


def test_the_mooncake_trace_over_three_tiers_agrees_with_invariants_on() -> None:
    # benchmarks/tiers.pool cut to its first 150 requests (5 reloads): hash_ids shared across
    # conversations, spills down two tiers, and some reloads (holds reloading beside
    # holds that share their hit blocks) - checked after every event in the per-event run.
    path = ROOT / "benchmarks" / "tiers.pool"
    text = _limited(path, 150)
    _, events = _run(text, str(path.parent), fast=False, record=True, invariants=False)
    assert any(e.moment == "reloaded" for e in events)
    check_same(text, str(path.parent), invariants=True)


# A bulk iteration that runs out of blocks preempts (lifo) where the per-event plan would,
# instead of making every steady resident plain again. Two sessions of a vLLM-like hold
# (block 2, 4 blocks, budget 64) decode one token per iteration once their prefill is done.
BULK_PREEMPT = """
stage gpu step { budget 64; seats 4; time 1; }
pool kv { cap 4 * 2; block 2; evict lru; preempt lifo; queue fifo; admit via gpu; }
session a {
  arrive at (0);
  hold kv (min(max(PA, context + 1), computed + budget_left(gpu))) need (max(PA, context + 1)) {
    run gpu prefill (PA);
    run gpu decode (5);
  }
}
session b {
  arrive at (0);
  hold kv (min(max(PB, context + 1), computed + budget_left(gpu))) need (max(PB, context + 1)) {
    run gpu prefill (PB);
    run gpu decode (5);
  }
}
"""


Moment = tuple[float, str, str | None, int | None, tuple[int, ...]]


def _planned_in_bulk(text: str, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The fast mode's events of `text` (the same as the per-event mode's, invariants off
    and on), every iteration planned in bulk: none fell back to the per-event plan."""
    check_same(text, ".")
    check_same(text, ".", invariants=True)
    from pooltui.sim.fast import FastEngine

    plain: list[int] = []
    original = FastEngine.make_all_plain

    def spy(self: FastEngine, st: Any) -> None:
        plain.append(1)
        original(self, st)

    monkeypatch.setattr(FastEngine, "make_all_plain", spy)
    _, events = _run(text, ".", fast=True, record=True, invariants=False)
    assert plain == []  # no iteration fell back to the per-event plan
    return list(events)


def _bulk_events(pa: int, pb: int, monkeypatch: pytest.MonkeyPatch) -> list[Moment]:
    text = BULK_PREEMPT.replace("PA", str(pa)).replace("PB", str(pb))
    events = _planned_in_bulk(text, monkeypatch)
    return [
        (e.time, e.moment, e.session, e.units, e.blocks)
        for e in events
        if e.time <= 2 and e.moment in ("admit", "preempt", "enqueue", "evict")
    ]


def test_a_bulk_iteration_preempts_a_later_steady_resident(monkeypatch: pytest.MonkeyPatch) -> None:
    # Both prompts 3. t0: a admitted with 3 units (blocks 0, 1), b too (2, 3): the pool is
    # full; both prefill 3. t1: both decode steady, computed 3 -> 4 (no new block; block 1
    # of each is complete and registered). t2: each crosses into its third block. a goes
    # first: no free block, no cache, so b (admitted last) is preempted: its 2 registered
    # blocks stay cached (4 units, blocks 2, 3) and it re-enters the queue's head; then a's
    # block comes from b's entry, tail first: block 3 (2 units evicted, 2 left). b, no
    # longer a resident, takes no step.
    assert _bulk_events(3, 3, monkeypatch)[-5:] == [
        (0.0, "admit", "a", 3, (0, 1)),
        (0.0, "admit", "b", 3, (2, 3)),
        (2.0, "preempt", "b", 4, (2, 3)),
        (2.0, "enqueue", "b", None, ()),
        (2.0, "evict", "b", 2, (3,)),
    ]


def test_a_steady_resident_that_preempts_itself_ends_the_bulk_plan(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a's prompt 3, b's 4. t0: a takes blocks 0, 1 and b blocks 2, 3 (full). t1: a decodes
    # 3 -> 4 in its two blocks; b, at 4, crosses into its third block: nothing is free or
    # cached and b is the most recently admitted, so b preempts itself (its 2 registered
    # blocks cached, 4 units) and the plan ends there. t2: a crosses; its block is b's
    # cached tail, block 3.
    assert _bulk_events(3, 4, monkeypatch)[-5:] == [
        (0.0, "admit", "a", 3, (0, 1)),
        (0.0, "admit", "b", 4, (2, 3)),
        (1.0, "preempt", "b", 4, (2, 3)),
        (1.0, "enqueue", "b", None, ()),
        (2.0, "evict", "b", 2, (3,)),
    ]


# Preempted in the middle of a bulk plan that has passed it: c[5]'s run holds kw (block 1),
# its outer kv hold is preempted by a later resident's growth on kv. Its step this
# iteration was taken (the per-event plan served it): the block it completes is registered
# and its kw hold holds the token's unit, as the per-event mode has them.
SERVED_VICTIM = """
seed 456;
stage gpu step { budget 64; seats 4; time 1; }
pool kv { cap 15 * 1; block 1; evict lru; preempt lifo; queue fifo; admit via gpu; }
pool kw { cap 43 * 1; block 1; evict lru; preempt lifo; queue fifo; admit via gpu; }
session a[7] {
  arrive every (draw exponential(0.5));
  prompt = draw uniform(1, 4);
  max_tokens = draw uniform(1, 40);
  hold kv (min(max(prompt, context + 1), computed + budget_left(gpu)))
       need (max(prompt, context + 1)) {
    run gpu prefill (prompt);
    run gpu decode (max_tokens - 1);
  }
}
session b[8] {
  arrive at (0);
  prompt = draw uniform(1, 4);
  max_tokens = draw uniform(1, 40);
  hold kw (3) {
    hold kv (min(max(prompt, context + 1), computed + budget_left(gpu)))
         need (max(prompt, context + 1)) {
      run gpu prefill (prompt);
      run gpu decode (max_tokens - 1);
    }
  }
}
session c[6] {
  arrive every (draw exponential(0.5));
  prompt = draw uniform(1, 4);
  max_tokens = draw uniform(1, 40);
  hold kv (3) {
    hold kw (min(max(prompt, context + 1), computed + budget_left(gpu)))
         need (max(prompt, context + 1)) {
      run gpu prefill (prompt);
      run gpu decode (max_tokens - 1);
    }
  }
}
"""


def test_a_steady_resident_preempted_after_its_step_in_a_bulk_plan_agrees() -> None:
    check_same(SERVED_VICTIM, ".")
    check_same(SERVED_VICTIM, ".", invariants=True)


# Found by test_random_specs_agree: a steady resident crossing into a block (block 1: every
# step does) after another resident's step preempted it in the same bulk plan takes none.
PREEMPTED_BEFORE_ITS_CROSSING = """
seed 0;
stage gpu step { time 1; prefill chunked; }
stage pcie link { rate 1; lanes 1; }
pool kv { cap 5; block 1; evict lru; preempt lifo; queue fifo; admit via gpu; }
pool q { cap 1; queue fifo; }
session c0[2] {
  arrive every (draw exponential(0.2));
  prompt = draw uniform(1, 1);
  out = draw uniform(1, 5);
  repeat (1) {
    hold kv (max(prompt, context + 1)) content (serial % 2 : 5, "x" : 3) {
      run gpu prefill (prompt);
      run gpu decode (out);
    }
    wait (0.5);
  }
}
"""


@pytest.mark.parametrize("seed, cap, out", [(0, 5, 5), (1, 7, 6)])
def test_a_steady_resident_preempted_before_its_crossing_agrees(
    seed: int, cap: int, out: int
) -> None:
    text = (
        PREEMPTED_BEFORE_ITS_CROSSING.replace("seed 0", f"seed {seed}")
        .replace("cap 5;", f"cap {cap};")
        .replace("uniform(1, 5)", f"uniform(1, {out})")
    )
    check_same(text, ".")


# A chunked prefill in the middle of steady decoding: the per-event plan serves the two
# decoders first (admitted first), then the prefill takes what they leave of the budget.
# The bulk plan does the same, the prefill last, instead of making both decoders plain.
CHUNK_LAST = """
stage gpu step { budget 8; seats 4; time 0.01 + 0.001 * tokens; }
pool kv { cap 64 * 2; block 2; evict lru; preempt lifo; queue fifo; admit via gpu; }
session d[2] {
  arrive at (0);
  hold kv (min(max(3, context + 1), computed + budget_left(gpu))) need (max(3, context + 1)) {
    run gpu prefill (3);
    run gpu decode (40);
  }
}
session p {
  arrive at (0.05);
  hold kv (min(max(37, context + 1), computed + budget_left(gpu))) need (max(37, context + 1)) {
    run gpu prefill (37);
    run gpu decode (3);
  }
}
"""


def test_a_chunked_prefill_after_steady_decoders_is_planned_in_bulk(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    events = _planned_in_bulk(CHUNK_LAST, monkeypatch)
    # p's 37 units came in chunks of 6 (8 less the decoders' 2) while both decoded.
    assert [e.session for e in events if e.moment == "run-done"][:3] == ["d[0]", "d[1]", "p"]


# Found by a randomized campaign: a stage's `time` may read `now` and queries (language.md
# §4.1); steady decodes fused into one stretch were all given the first one's length.
# One session, block 1: the prefill of 2 units at 0, then 4 decode steps, each growing the
# hold by one unit (allocated 3, 4, 5, 6 when their iterations are planned).
# - `time allocated(kv)`: iterations of 2, 3, 4, 5, 6 s: the decode is done at 2+3+4+5+6 = 20
#   (the stretch said 2 + 4 * 3 = 14).
# - `time 1 + now`: iterations start at 0, 1, 3, 7, 15 and last 1, 2, 4, 8, 16 s: done at 31
#   (the stretch said 1 + 4 * 2 = 9).
# - `time 70 - free(kv)` (cap 64: free 62, 61, 60, 59, 58): 8+9+10+11+12 = 50.
STATE_TIMED = """
stage gpu step { time TIME; }
pool kv { cap 64; block 1; admit via gpu; }
session a { arrive at (0); hold kv (max(2, context + 1)) { run gpu prefill (2); run gpu decode (4); } }
"""


@pytest.mark.parametrize(
    "time, first, done",
    [("allocated(kv)", 2, 20), ("1 + now", 1, 31), ("70 - free(kv)", 8, 50)],
)
def test_an_iteration_time_reading_the_state_is_worked_out_per_iteration(
    time: str, first: float, done: float
) -> None:
    text = STATE_TIMED.replace("TIME", time)
    for fast in (False, True):
        _, events = _run(text, ".", fast=fast, record=True, invariants=False)
        ends = [e.time for e in events if e.moment == "run-done"]
        assert [round(x, 9) for x in ends] == [first, done], fast
    check_same(text, ".")
    check_same(text, ".", invariants=True)


# Found by a randomized campaign: a fused stretch that records nothing (the lean path of
# `pooltui run --fast`) took all its crossing blocks at the stretch's start time, where an
# `evict by` key reading the clock must see each crossing iteration's own (language.md §5.2:
# the keys are evaluated when room is needed).
# Block 1, cap 12, `time 1`. a and b (rank 0 and 1) prefill 3 units each in the iteration
# 0 -> 1 and release at 1: two entries of 3. d arrives at 2 and holds 2 (4 free left);
# prefill 2 -> 3; its 6 decode steps start at 3, 4, 5, 6, 7, 8 and need 3 .. 8 units: the
# first four take the free blocks, the steps at 7 and 8 evict one block each. At 7 the key
# is rank (a's 0 < b's 1): a loses its tail; at 8 it is -rank (b's -1 < a's 0): b does.
# d releases its 8 computed units at 9. The cache at the end: a 2, b 2, d 8.
CLOCK_KEYED = """
stage gpu step { time 1; }
pool kv { cap 12; block 1; evict by (now < 8 ? rank : -rank); preempt lifo; admit via gpu; }
session a { arrive at (0); rank = 0; hold kv (3) { run gpu prefill (3); } }
session b { arrive at (0); rank = 1; hold kv (3) { run gpu prefill (3); } }
session d { arrive at (2); rank = 2; hold kv (max(2, context + 1)) { run gpu prefill (2); run gpu decode (6); } }
"""


def test_a_stretch_recording_nothing_evicts_by_a_clock_key_at_each_crossing_time() -> None:
    for fast, record in ((False, True), (True, True), (True, False)):
        sim, events = _run(CLOCK_KEYED, ".", fast=fast, record=record, invariants=False)
        cache = {x.session: x.units for x in sim.snapshot().pools[0].entries}
        assert cache == {"a": 2, "b": 2, "d": 8}, (fast, record)
        if record:
            evicts = [(e.time, e.session) for e in events if e.moment == "evict"]
            assert evicts == [(7, "a"), (8, "b")]
    check_same(CLOCK_KEYED, ".")
