"""Regressions found by the bundled specs' author, with the behaviour the documents ask for."""

from __future__ import annotations

from tests.sim.helpers import assert_clean, iterations, of, run_all, sim_of, t

FULL_HIT = """
stage gpu step { budget 64; time 1; }
pool kv { cap 64; block 4; admit via gpu; }
session s { repeat (2) { hold kv (10) { run gpu prefill (8); run gpu decode (2); } } }
"""


def test_a_prompt_that_is_all_hit_still_decodes() -> None:
    # Turn 1: prefill 8 (t0), decode 2 steps (t1, t2); release caches 8 (computed 10 → 8).
    # Turn 2: admitted with hit 8 = the whole prompt: the prefill has nothing to do, its
    # context is the 8 it computed, so each decode step takes 8 − 8 + 1 = 1 token (t3, t4).
    # (The hold is 10 units, not 8 as it was: the hit cap of content-and-reload.md §2,
    # ⌊(U − 1)/4⌋ blocks, would leave a hold of 8 a hit of 4 and a prefill to do; with 10
    # the cap is ⌊9/4⌋ = 2 blocks = the whole prompt again.)
    sim = sim_of(FULL_HIT)
    events = run_all(sim)
    assert_clean(sim)
    admits = [(e.time, e.get("hit")) for e in events if e.moment == "admit"]
    assert admits == [(0, 0), (3, 8)]
    its = iterations(events)
    assert [r["scheduled"] for r in its] == [
        (("s", "prefill", 8),),
        (("s", "decode", 1),),
        (("s", "decode", 1),),
        (("s", "decode", 1),),
        (("s", "decode", 1),),
    ]
    assert [(e.moment, e.get("how")) for e in events if e.moment == "end"] == [("end", "done")]


EXCLUSIVE_READMIT = """
stage gpu step { budget 64; time 1; prefill whole; serve exclusive prefill; }
pool kv { cap 12; block 4; preempt lifo; admit via gpu; }
session a { arrive at (1); hold kv (max(4, context + 1)) { run gpu prefill (4); run gpu decode (3); } }
session b { arrive at (3); hold kv (max(4, context + 1)) { run gpu prefill (4); run gpu decode (1); } }
session c { arrive at (6); hold kv (max(4, context + 1)) { run gpu prefill (4); run gpu decode (1); } }
"""


def test_exclusive_prefill_never_mixes_a_readmitted_decode_with_a_prefill() -> None:
    # b is preempted at t4 with its whole context cached; at t6 it is re-admitted next to
    # c's prefill. Under `serve exclusive prefill` an iteration runs prefills or decodes,
    # never both (language.md §3): b's first step after re-admission is its prefill.
    sim = sim_of(EXCLUSIVE_READMIT)
    events = run_all(sim)
    assert_clean(sim)
    assert any(e.moment == "preempt" and e.session == "b" for e in events)
    for r in iterations(events):
        phases = {phase for _, phase, _ in r["scheduled"]}
        assert not ({"decode"} & phases and {"prefill", "recompute"} & phases), r


# `evict by` reads "the entry's session's attributes: current while the session lives, as
# they were at its last release after it has ended" (the Pool reference, evict). An ended
# session's entries all read its LAST release's attributes, not each its own release's.
ENDED_SESSIONS_KEYS = """
stage gpu step { budget 100; }
pool kv { cap 24; block 4; evict by (prio); admit via gpu; }
session S { prio = 1; hold kv (8) content ("a" : 8) { run gpu prefill (8); }
            prio = 9; hold kv (8) content ("b" : 8) { run gpu prefill (8); }
            prio = 3; }
session T { prio = 5; hold kv (8) { run gpu prefill (8); } }
session Z { arrive at (5); prio = 0; hold kv (12) { run gpu prefill (12); } }
"""


def test_an_ended_sessions_entries_all_take_the_attributes_of_its_last_release() -> None:
    # kv: 6 blocks of 4. t0: S's first hold ("a") takes blocks 0,1 and T takes 2,3; t1:
    # both release (entries S·a [0,1], prio 1 then; T [2,3], prio 5); S's second hold
    # ("b") takes 4,5, released t2 with prio 9; S sets prio 3 (no release) and ends.
    # t5: Z needs 3 blocks, all 6 are cached. Keys: both of S's entries 9 (its last
    # release), T 5. T goes first (2 blocks), then S's older entry by its tail: block 1.
    # (Each entry's own release would give S·a 1 and evict it first.)
    sim = sim_of(ENDED_SESSIONS_KEYS)
    events = run_all(sim)
    assert_clean(sim)
    gone = [(t(e.time), e.session, e.units, e.blocks, e.get("left")) for e in of(events, "evict")]
    assert gone == [(5, "T", 8, (3, 2), 0), (5, "S", 4, (1,), 4)]


ENDED_SESSIONS_SPILL = """
stage gpu step { budget 100; }
stage pcie link { rate 100; }
pool hbm { cap 8; block 4; evict lru; admit via gpu; spill dram via pcie (size) when (1); }
pool dram { cap 16; block 4; evict by (prio); }
session S { prio = 1; hold hbm (8) { run gpu prefill (8); } prio = 7; wait (2); prio = 9; }
session B { arrive at (1.5); prio = 5; hold hbm (8) { run gpu prefill (8); } }
session C { arrive at (4); prio = 6; hold hbm (8) { run gpu prefill (8); } }
session D { arrive at (6); prio = 0; hold hbm (8) { run gpu prefill (8); } }
"""


def test_a_spilled_entry_takes_its_sessions_last_release_not_the_spills_moment() -> None:
    # hbm: 2 blocks; dram: 4, `evict by (prio)`; pcie 100 units/s (8 units: 0.08 s).
    # S releases at t1 with prio 1, sets prio 7 and waits. t1.5: B evicts S's entry from
    # hbm, which spills to dram (landing t1.58); S sets prio 9 at t3 and ends, never
    # released again: its last release's prio is 1. B releases at t2.5 (prio 5) and ends;
    # t4: C evicts B's entry, spilled to dram (t4.08): dram is full (S 2 blocks, B 2).
    # t6: D evicts C's entry; its spill needs 2 dram blocks: S (key 1) goes before B (5).
    # (The spill's moment, prio 7, would put B first.)
    sim = sim_of(ENDED_SESSIONS_SPILL)
    events = run_all(sim)
    assert_clean(sim)
    assert [(t(e.time), e.session) for e in events if e.moment == "evict" and e.pool == "dram"] == [
        (6.08, "S")
    ]


RESERVE_INF = """
stage gpu step { budget 100; }
pool kv { cap 8; block 4; admit via gpu; }
session A { hold kv (4) reserve (16) { run gpu prefill (4); } }
session B { hold kv (4) reserve (inf) { run gpu prefill (4); } }
"""


def test_a_reserve_of_inf_is_no_reserve() -> None:
    # docs/language.md §9 (units) and docs/decisions.md: "`inf` is no reserve". A's
    # reserve (16) is above the cap (8): rejected. B's is none: admitted, done.
    sim = sim_of(RESERVE_INF)
    events = run_all(sim)
    assert_clean(sim)
    assert [(e.session, e.get("how")) for e in of(events, "end")] == [
        ("A", "rejected"),
        ("B", "done"),
    ]
