"""Regressions found by the bundled specs' author, with the behaviour the documents ask for."""

from __future__ import annotations

from tests.sim.helpers import assert_clean, iterations, run_all, sim_of

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
