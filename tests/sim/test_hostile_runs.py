"""Issue 14, the simulator's half: valid specs that used to break an invariant, bypass a
limit, run without bound or differ between the modes. Every expectation is worked out by
hand from docs/language.md and docs/decisions.md (the comments show the working)."""

from __future__ import annotations

from typing import Any

from pooltui.sim import Simulation
from tests.sim.helpers import (
    assert_clean,
    compile_spec,
    ends,
    iterations,
    of,
    one,
    run_all,
    sim_of,
    t,
)


def run_fast(text: str) -> Any:
    sim = Simulation(compile_spec(text), fast=True, history=False)
    sim.run_headless()
    return sim


# ---------------------------------------------------------------- 1. a rejected re-attempt
PREEMPTED_THEN_REJECTED = """
stage gpu step { budget 64; seats 8; time 0.01; }
pool kv { cap 128; block 16; admit via gpu; preempt lifo; }
session req[3] { hold kv (computed + budget_left(gpu)) reserve (100) {
    run gpu prefill (60); run gpu decode (40); } }
"""


def test_a_preempted_hold_rejected_for_passing_its_reserve_leaves_the_state_whole() -> None:
    # 8 blocks of 16. t0: req[0] admitted with 64 (prefill 60), req[1] with the 4 left
    # (0 + budget_left 4); req[2] does not fit. 0.01: req[0] decodes (61), req[1]
    # prefills 56 (→ 60, 4 blocks): the pool is full. req[0] reaches 64 at 0.04; at 0.05
    # its step needs a 5th block: lifo preempts req[1] (computed 63 → 48 cached, 3
    # blocks). 0.06: req[1] heads the queue: computed := its entry 48, header 48 +
    # budget_left 63 = 111 > reserve 100: rejected, and its session ends at once.
    sim = sim_of(PREEMPTED_THEN_REJECTED)
    events = run_all(sim)
    assert_clean(sim)
    p = one(events, "preempt", "req[1]")
    assert (t(p.time), p.get("cached"), p.get("grower")) == (0.05, 48, "req[0]")
    r = one(events, "reject", "req[1]")
    assert (t(r.time), r.units, r.get("reason")) == (
        0.06,
        111,
        "its units (111) are above its reserve (100)",
    )
    got = ends(events)
    assert got["req[1]"] == (0.06, "rejected")
    assert got["req[0]"][1] == got["req[2]"][1] == "done"
    fast = run_fast(PREEMPTED_THEN_REJECTED)
    assert fast.halted is None
    assert fast.summary().done == sim.summary().done == 2
    assert fast.summary().rejected == sim.summary().rejected == 1
    assert fast.state.now == sim.state.now


# ---------------------------------------------------------------- 3. need above reserve
NEVER_FITS = """
const MAX_MODEL_LEN = 32;
stage gpu step { budget 8; seats 2; time 1; }
pool kv { cap 12 * 4; block 4; evict lru; preempt lifo; queue fifo; admit via gpu; }
session req { prompt = 40; max_tokens = 2;
  hold kv (min(max(prompt, context + 1), computed + budget_left(gpu)))
       need (max(prompt, context + 1)) reserve (MAX_MODEL_LEN) {
    run gpu prefill (prompt);
    run gpu decode (max(1, min(max_tokens, MAX_MODEL_LEN - prompt)) - 1); } }
"""


def test_a_request_longer_than_max_model_len_is_rejected_before_any_iteration() -> None:
    # At enqueue (t0, no iteration: budget_left is the whole budget, 8): header
    # min(max(40, 1), 0 + 8) = 8, need max(40, 1) = 40, reserve 32, cap 48. Nothing is
    # above the cap and the header is within the reserve, but the whole sequence (need
    # 40) is above max_model_len (language.md §8.5, §16): rejected at once.
    sim = sim_of(NEVER_FITS)
    events = run_all(sim)
    assert_clean(sim)
    assert [(e.moment, t(e.time)) for e in events] == [
        ("arrive", 0), ("enqueue", 0), ("reject", 0), ("end", 0)
    ]  # fmt: skip
    assert events[2].get("reason") == "its need (40) is above its reserve (32)"
    assert events[3].get("how") == "rejected"
    assert iterations(events) == []


# ---------------------------------------------------------------- 4. runtime numbers
def test_a_negative_reserve_computed_at_run_time_is_a_located_error() -> None:
    sim = sim_of("pool kv { cap 64; }\nsession s { r = -1; hold kv (1) reserve (r) { } }\n")
    run_all(sim)
    assert sim.violation is None
    assert sim.error is not None
    assert sim.error.message == "the reserve is -1, which is negative"
    assert (sim.error.span.line, sim.error.span.col) == (2, 42)  # the `r` of reserve (r)


def test_an_infinite_repeat_count_from_an_attribute_is_a_located_error() -> None:
    sim = sim_of("session u { n = inf; repeat (n) { wait (1); } }\n")
    run_all(sim)
    assert sim.error is not None
    assert sim.error.message.startswith("the repeat count is inf, not a whole number")
    assert (sim.error.span.line, sim.error.span.col) == (1, 30)


def test_units_past_two_to_the_53_are_a_located_error() -> None:
    sim = sim_of("pool kv { cap inf; }\nsession s { u = 1e300; hold kv (u) { } }\n")
    run_all(sim)
    assert sim.error is not None and "at most 2^53" in sim.error.message


# ---------------------------------------------------------------- 2. seats for every run
SEATS_OF_ANOTHER_POOL = """
stage gpu step { budget 64; seats 1; time 0.01; }
pool kv { }
session req[2] { hold kv (10) { run gpu prefill (10); } }
"""


def test_a_run_on_a_full_stage_waits_for_a_seat() -> None:
    # kv has no `admit via`: it admits both holds at t0's settle. req[0]'s run takes
    # gpu's one seat; req[1]'s run finds it taken and waits. gpu: req[0] prefills 10 at
    # t0 (ends 0.01, req[0] ends); the seat is free, req[1] joins: prefill at 0.01.
    sim = sim_of(SEATS_OF_ANOTHER_POOL)
    events = run_all(sim)
    assert_clean(sim)
    assert [(t(r["time"]), r["scheduled"]) for r in iterations(events)] == [
        (0, (("req[0]", "prefill", 10),)),
        (0.01, (("req[1]", "prefill", 10),)),
    ]
    assert ends(events) == {"req[0]": (0.01, "done"), "req[1]": (0.02, "done")}


def test_a_session_waiting_for_a_seat_says_so() -> None:
    sim = sim_of(SEATS_OF_ANOTHER_POOL)
    while sim.step() is not None:
        if sim.events[sim.cursor].moment == "iteration":
            break
    state = {s.name: s.state for s in sim.snapshot().sessions}
    assert state["req[1]"] == "waiting for a seat on gpu"


def test_a_run_waiting_for_a_seat_that_never_frees_is_named_in_the_deadlock() -> None:
    # a holds gpu's one seat with a whole prefill of 8 that never fits a budget of 4; b's
    # run waits for the seat. Nothing can move: a deadlock at t0 that says so for each.
    sim = sim_of(
        "stage gpu step { budget 4; seats 1; prefill whole; time 1; }\npool kv { }\n"
        "session a { hold kv (8) { run gpu prefill (8); } }\n"
        "session b { hold kv (1) { run gpu prefill (1); } }\n"
    )
    d = one(run_all(sim), "deadlock")
    waits = dict(d.get("waits"))
    assert waits["b"] == "waiting for a seat on gpu"
    assert waits["a"].startswith("is a resident of gpu that cannot take its tokens")


REJOIN = """
stage gpu step { budget 64; seats 1; time 1; }
pool kv { cap 64; block 4; admit via gpu; }
session a { hold kv (8) { run gpu prefill (8); wait (0.5); run gpu decode (1); } }
session b { arrive at (1); hold kv (8) { run gpu prefill (8); run gpu decode (2); } }
"""


def test_seat_requests_are_served_in_the_order_they_were_made() -> None:
    # t0: a is admitted and prefills 8 (ends t1), then sleeps until 1.5 holding kv.
    # t1: b arrives; the seat is free: b is admitted and prefills (ends t2).
    # 1.5: a's decode finds the seat taken: it waits. t2: b's prefill ends; its decode
    # asks for a seat after a did: a decodes at t2 (ends t3, a ends), then b at t3, t4.
    sim = sim_of(REJOIN)
    events = run_all(sim)
    assert_clean(sim)
    assert [(t(r["time"]), r["scheduled"], r["admitted"]) for r in iterations(events)] == [
        (0, (("a", "prefill", 8),), ("a",)),
        (1, (("b", "prefill", 8),), ("b",)),
        (2, (("a", "decode", 1),), ()),
        (3, (("b", "decode", 1),), ()),
        (4, (("b", "decode", 1),), ()),
    ]
    assert ends(events) == {"a": (3, "done"), "b": (5, "done")}
    fast = run_fast(REJOIN)
    assert fast.halted is None and fast.state.now == 5


# ---------------------------------------------------------------- 5. sleeping forever
def test_a_session_that_sleeps_forever_ends_the_run_cleanly_and_stays_live() -> None:
    # s holds 1 unit of kv and sleeps forever: no wake is scheduled. t arrives at 2,
    # sleeps 1 s, ends at 3. Then nothing is left to happen: the run is over at t=3 (not
    # inf), s still live and still holding its unit, no deadlock.
    sim = sim_of(
        "pool kv { cap 64; }\n"
        "session s { hold kv (1) { wait (inf); } }\n"
        "session t { arrive at (2); wait (1); }\n"
    )
    events = run_all(sim)
    assert_clean(sim)
    assert sim.finished
    assert [(e.moment, e.session, t(e.time)) for e in events] == [
        ("arrive", "s", 0), ("enqueue", "s", 0), ("admit", "s", 0),
        ("arrive", "t", 2), ("wake", "t", 3), ("end", "t", 3),
    ]  # fmt: skip
    r = sim.summary()
    assert (r.time, r.live, r.done) == (3, 1, 1)
    assert r.pools[0].allocated == 1
    assert {s.name: s.state for s in sim.snapshot().sessions}["s"] == (
        "sleeping forever (a wait of inf seconds)"
    )


def test_a_session_queued_behind_a_sleeper_is_a_deadlock() -> None:
    sim = sim_of(
        "pool kv { cap 16; }\n"
        "session s { hold kv (16) { wait (inf); } }\n"
        "session t { arrive at (2); hold kv (1) { } }\n"
    )
    events = run_all(sim)
    d = one(events, "deadlock")
    assert t(d.time) == 2 and d.others == ("s", "t")
    assert dict(d.get("waits"))["s"] == "sleeping forever (a wait of inf seconds)"
    assert sim.halted is not None and sim.halted.startswith("deadlock")


def test_inf_work_never_lands_whatever_the_rate() -> None:
    # inf work on an inf rate (inf / inf) and on a finite one: both senders sleep
    # forever, each holding its link's lane; nothing else is left: a clean end at t=0.
    sim = sim_of(
        "stage pcie link { rate inf; }\nstage slow link { rate 10; }\n"
        "session s { send pcie (inf); }\nsession u { send slow (inf); }\n"
    )
    events = run_all(sim)
    assert_clean(sim)
    assert [e.moment for e in events] == ["arrive", "send", "arrive", "send"]
    assert sim.summary().live == 2 and sim.state.now == 0


def test_a_send_behind_a_job_that_never_ends_is_a_deadlock() -> None:
    sim = sim_of(
        "stage pcie link { rate inf; }\n"
        "session s { send pcie (inf); }\nsession v { send pcie (5); }\n"
    )
    events = run_all(sim)
    d = one(events, "deadlock")
    assert dict(d.get("waits"))["v"] == "sending on pcie (waiting for a lane)"


SPILL_FOREVER = """
stage gpu step { budget 64; time 1; }
stage pcie link { rate 100; }
pool hbm { cap 16; block 4; admit via gpu; spill dram via pcie (inf) when (size >= 4); }
pool dram { cap 64; block 4; }
session a { hold hbm (16) { run gpu prefill (16); } }
session b { arrive at (5); hold hbm (16) { run gpu prefill (16); } }
"""


def test_a_spill_of_inf_work_never_lands_and_the_clock_stays_finite() -> None:
    # a prefills 16 at t0 (ends t1) and caches 16. b, at 5, evicts them: a spill of inf
    # work starts on pcie and never lands. b prefills at 5, ends at 6: the run ends at 6.
    sim = sim_of(SPILL_FOREVER)
    events = run_all(sim)
    assert_clean(sim)
    spill = one(events, "spill")
    assert t(spill.time) == 5 and spill.get("work") == float("inf")
    assert of(events, "spilled") == []
    assert sim.state.now == 6
    assert '"work":"inf"' in spill.to_json()


def test_event_json_is_strict() -> None:
    from pooltui.sim.events import Event

    line = Event(
        0, 0.0, "wake", "w", data=(("x", float("inf")), ("y", (float("-inf"), 1)))
    ).to_json()
    assert line == '{"i":0,"t":0.0,"moment":"wake","x":"inf","y":["-inf",1],"why":"w"}'


# ---------------------------------------------------------------- 6. lazy arrivals
def _arrivals(events: list[Any]) -> list[tuple[str, float, int]]:
    return [(e.session, t(e.time), e.get("serial")) for e in events if e.moment == "arrive"]


def test_every_adds_each_gap_to_the_last_arrival() -> None:
    sim = sim_of("session s[3] { arrive every (2); wait (1); }\n")
    assert _arrivals(run_all(sim)) == [("s[0]", 2, 0), ("s[1]", 4, 1), ("s[2]", 6, 2)]


def test_arrive_at_from_a_trace_out_of_order_arrives_by_time(tmp_path: Any) -> None:
    # Rows t = 3, 1, 2, 1: by time, ties by row: s[1] and s[3] at 1, s[2] at 2, s[0] at 3.
    (tmp_path / "x.csv").write_text("t\n3\n1\n2\n1\n")
    sim = Simulation(compile_spec('session s from "x.csv" { arrive at (t); }\n', tmp_path))
    assert _arrivals(run_all(sim)) == [
        ("s[1]", 1, 0),
        ("s[3]", 1, 1),
        ("s[2]", 2, 2),
        ("s[0]", 3, 3),
    ]


def test_arrive_at_from_a_trace_in_order_arrives_by_row(tmp_path: Any) -> None:
    (tmp_path / "x.csv").write_text("t\n1\n2\n2\n5\n")
    sim = Simulation(compile_spec('session s from "x.csv" { arrive at (t * 2); }\n', tmp_path))
    assert _arrivals(run_all(sim)) == [
        ("s[0]", 2, 0),
        ("s[1]", 4, 1),
        ("s[2]", 4, 2),
        ("s[3]", 10, 3),
    ]


def test_two_classes_at_one_instant_arrive_by_declaration_then_index() -> None:
    sim = sim_of("session a[2] { wait (1); }\nsession b[2] { arrive at (0); wait (1); }\n")
    assert _arrivals(run_all(sim))[:4] == [
        ("a[0]", 0, 0),
        ("a[1]", 0, 1),
        ("b[0]", 0, 2),
        ("b[1]", 0, 3),
    ]


def test_a_billion_sessions_start_at_once() -> None:
    sim = Simulation(
        compile_spec("session s[1000000000] { arrive every (1); wait (0.5); }\n"), history=False
    )
    sim.run_headless(events=9)  # s[i] arrives at i + 1, wakes and ends at i + 1.5
    assert sim.state.counters["arrived"] == 3 and len(sim.state.heap) <= 3
    assert sim.summary().last_arrival == 1e9


def test_an_unsorted_arrival_of_too_many_sessions_is_a_located_error() -> None:
    sim = sim_of("session s[10000001] { arrive at (draw real(0, 1)); wait (1); }\n")
    assert sim.error is not None and "at most 10,000,000 sessions" in sim.error.message
    assert (sim.error.span.line, sim.error.span.col) == (1, 23)
    assert sim.step() is None


def test_a_bad_gap_later_in_a_class_is_a_located_error_when_it_is_due(tmp_path: Any) -> None:
    # s[0]'s gap is 1, s[1]'s is -1: s[0] arrives at 1; computing s[1]'s arrival stops
    # the run, located at its `arrive` clause.
    (tmp_path / "x.csv").write_text("g\n1\n-1\n")
    sim = Simulation(compile_spec('session s from "x.csv" { arrive every (g); }\n', tmp_path))
    run_all(sim)
    assert sim.error is not None
    assert sim.error.message == "s[1]: the gap is -1, not a time ≥ 0"
    assert sim.summary().last_arrival is None  # the summary never raises it
    assert (sim.error.span.line, sim.error.span.col) == (1, 26)


# ---------------------------------------------------------------- 7. the livelock guard
def _guarded(text: str, limit: int) -> Any:
    sim = sim_of(text)
    sim.engine.still_limit = limit  # the guard's N is 1,000,000; a smaller one runs fast
    return sim


def test_events_at_one_instant_without_progress_are_a_livelock() -> None:
    # s arrives (event #0: progress), then wait (0) wakes at once, again and again: events
    # #1 … #999 are wakes at t=0. Recording event #1000 would make 1000 events since the
    # arrival with the clock still: a located error at the `wait (0)` that loops.
    sim = _guarded("session s { repeat (1e15) { wait (0); } }\n", 1000)
    sim.run(until=5)
    assert sim.error is not None
    assert sim.error.message.startswith("1,000 events at t=0s without the clock moving")
    assert (sim.error.span.line, sim.error.span.col) == (1, 29)
    assert len(sim.events) == 1000 and sim.events[-1].moment == "wake"


def test_statements_without_an_event_are_a_livelock() -> None:
    sim = _guarded("session s { repeat (1e15) { x = 1; } }\n", 1000)
    run_all(sim)
    assert sim.error is not None
    assert sim.error.message.startswith("1,000 statements in a row without an event")
    assert (sim.error.span.line, sim.error.span.col) == (1, 29)
    assert [e.moment for e in sim.events] == ["arrive"]


def test_a_large_burst_at_one_instant_is_not_a_livelock() -> None:
    # 2,000 sessions at t=0, each: arrive, 3 wakes of wait (0), end. 10,000 events at one
    # instant, but never more than 5 between an arrival or an end.
    sim = _guarded("session s[2000] { repeat (3) { wait (0); } }\n", 1000)
    sim.run()
    assert sim.error is None and sim.finished
    assert sim.summary().done == 2000 and len(sim.events) == 10_000


def test_a_long_loop_that_moves_the_clock_is_not_a_livelock() -> None:
    sim = _guarded("session s { repeat (3000) { wait (0.001); } }\n", 1000)
    sim.run()
    assert sim.error is None and sim.summary().done == 1


def test_a_billion_blocks_cost_only_the_blocks_used() -> None:
    # Issue 14: `cap 1e9; block 1` allocated a list entry per block (431 MB at 1e7). The ids
    # never used are a count and the snapshot's block map keeps only blocks in use, so ten
    # holds of 100 units cost ~1,000 blocks of bookkeeping, whatever the cap. Worked out:
    # each session holds 100 units for 1 s, all at t=0, so at t=0 1,000 blocks are held.
    import tracemalloc

    from pooltui.lang import compile_source
    from pooltui.sim import Simulation

    spec = "pool kv { cap 1e9; block 1; }\nsession s[10] { hold kv (100) { wait (1); } }\n"
    tracemalloc.start()
    try:
        sim = Simulation(compile_source(spec, "big.pool"))
        sim.run(until=0.5)
        snap = sim.snapshot()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    pool = snap.pools[0]
    assert pool.blocks is not None and pool.blocks.nblocks == 1_000_000_000
    held = [i for i in range(1_000) if pool.blocks.cells[i]]
    assert len(held) == 1_000 and pool.blocks.cells[1_000] == 0
    assert peak < 64 * 1024 * 1024  # far below one byte per block (1 GB)
