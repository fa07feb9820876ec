"""Cache entries, eviction order (lru vs by keys), tail-first blocks, spill chains, multi-turn hits.

Every expectation below is derived by hand from the Pool reference, language.md and
docs/decisions.md; the derivation is in the comments.
"""

from __future__ import annotations

import pytest

from tests.sim.helpers import (
    admits,
    assert_clean,
    ends,
    evicts,
    iterations,
    releases,
    run_all,
    sim_of,
    t,
)

# --------------------------------------------------------------------------- eviction order

# kv: 32 units in blocks of 4 = 8 blocks; admitted at settles (no `admit via`). gpu has no
# memory pool: every prefill takes one iteration of 1 s (budget inf).
#
# Sessions, declared a, b, g, e, f (all arrive at 0; holds 8+8+4+8+4 = 32 units = 8 blocks):
#   a  pri 2: prefill 8 [0,1], released t=1           -> entry 8 (2 blocks), release #1, ends
#   b  pri 1: prefill 8, wait 1, released t=2         -> entry 8 (2 blocks), release #2,
#             then sets pri = 5 and lives on (wait 10): its key is its *current* pri, 5
#   g  pri 1: prefill 4, wait 2.2, released t=3.2     -> entry 4 (1 block), release #4, ends
#   e  pri 1: prefill 8, wait 2, released t=3         -> entry 8 (2 blocks), release #3, ends
#   f  pri 0: prefill 4, wait 2.5, released t=3.5     -> entry 4 (1 block), release #5,
#             then sets pri = 9 and ends: its key is *frozen at its last release*, 0
# At t=3.5 the pool is all cache (8 blocks), 0 free.
# c arrives at 4 and holds 20 units = 5 blocks: 5 blocks are evicted, entries in eviction
# order, each from its tail and only as much as needed.
#   lru (release time):  a(t1) b(t2) e(t3) g(t3.2) f(t3.5)
#       -> a 8 (left 0), b 8 (left 0), e 4 (left 4)                       = 5 blocks
#   by (pri), ties by release order: f(0) e(1,#3) g(1,#4) a(2) b(5)
#       -> f 4 (left 0), e 8 (left 0), g 4 (left 0), a 4 (left 4)         = 5 blocks
#   by (size), ties by release order: g(4,#4) f(4,#5) a(8,#1) b(8,#2) e(8,#3)
#       -> g 4 (left 0), f 4 (left 0), a 8 (left 0), b 4 (left 4)         = 5 blocks
EVICT_SPEC = """
stage gpu step {{ time 1; }}
pool kv {{ cap 32; block 4; {evict} }}
session a {{ arrive at (0); pri = 2; hold kv (8) {{ run gpu prefill (8); }} }}
session b {{ arrive at (0); pri = 1; hold kv (8) {{ run gpu prefill (8); wait (1); }} pri = 5; wait (10); }}
session g {{ arrive at (0); pri = 1; hold kv (4) {{ run gpu prefill (4); wait (2.2); }} }}
session e {{ arrive at (0); pri = 1; hold kv (8) {{ run gpu prefill (8); wait (2); }} }}
session f {{ arrive at (0); pri = 0; hold kv (4) {{ run gpu prefill (4); wait (2.5); }} pri = 9; }}
session c {{ arrive at (4); pri = 3; hold kv (20) {{ run gpu prefill (20); }} }}
"""

EVICT_CASES = {
    "lru": (
        "evict lru;",
        ["a", "b", "e", "g", "f"],
        [(4, "a", "kv", 8, 0), (4, "b", "kv", 8, 0), (4, "e", "kv", 4, 4)],
    ),
    "by-pri": (
        "evict by (pri);",
        ["f", "e", "g", "a", "b"],
        [(4, "f", "kv", 4, 0), (4, "e", "kv", 8, 0), (4, "g", "kv", 4, 0), (4, "a", "kv", 4, 4)],
    ),
    "by-size": (
        "evict by (size);",
        ["g", "f", "a", "b", "e"],
        [(4, "g", "kv", 4, 0), (4, "f", "kv", 4, 0), (4, "a", "kv", 8, 0), (4, "b", "kv", 4, 4)],
    ),
}


@pytest.mark.parametrize("case", sorted(EVICT_CASES))
def test_eviction_order_lru_vs_keys_tail_first(case: str) -> None:
    evict, order, expected_evicts = EVICT_CASES[case]
    sim = sim_of(EVICT_SPEC.format(evict=evict))

    # Just before c arrives: everything is cache, in the expected eviction order.
    sim.run_until(lambda e: e.moment == "arrive" and e.session == "c")
    pool = sim.snapshot().pool("kv")
    assert pool.allocated == 0
    assert pool.cached == 32
    assert pool.free == 0
    assert [x.session for x in pool.entries] == order
    assert [x.rank for x in pool.entries] == [0, 1, 2, 3, 4]
    assert {x.session: x.units for x in pool.entries} == {"a": 8, "b": 8, "e": 8, "g": 4, "f": 4}
    physical = {x.session: x.physical for x in pool.entries}
    if case == "by-pri":
        # b lives: its key is its current pri (5); f ended: frozen at its last release (0).
        keys = {x.session: tuple(x.keys) for x in pool.entries}
        assert keys["b"] == (5,)
        assert keys["f"] == (0,)
        assert [x.alive for x in pool.entries] == [False, False, False, False, True]

    events = run_all(sim)
    assert_clean(sim)
    assert evicts(events) == expected_evicts
    # Tail first: a partially evicted entry loses its last physical block(s), and a wholly
    # evicted one gives all its blocks.
    for ev in (e for e in events if e.moment == "evict"):
        n = ev.units // 4
        assert sorted(ev.blocks) == sorted(physical[ev.session][-n:]), ev
    # c was admitted at 4 with 20 units after the evictions, with no hit of its own.
    assert admits(events, "kv")[-1] == (4, "c", "kv", 20, 0)
    assert all(ends(events)[s][1] == "done" for s in "abcefg")


def test_release_caches_the_computed_prefix_in_whole_blocks() -> None:
    # A hold of 10 units (3 blocks of 4) whose prefill computes 10: the release caches
    # floor(10 / 4) * 4 = 8 and frees the partial block. A hold that ran nothing has
    # computed 0 and caches nothing.
    sim = sim_of(
        """
        stage gpu step { time 1; }
        pool kv { cap 16; block 4; }
        session a { arrive at (0); hold kv (10) { run gpu prefill (10); } }
        session z { arrive at (0); hold kv (4) { wait (1); } }
        """
    )
    events = run_all(sim)
    assert_clean(sim)
    assert sorted(releases(events)) == [(1, "a", "kv", 10, 8), (1, "z", "kv", 4, 0)]
    pool = sim.snapshot().pool("kv")
    assert (pool.allocated, pool.cached, pool.free) == (0, 8, 8)
    assert [(x.session, x.units, x.blocks) for x in pool.entries] == [("a", 8, 2)]


# --------------------------------------------------------------------------- spill chain

# kv (4 blocks of 4) spills to cpu (2 blocks) over pcie (rate 4, one lane); cpu spills to
# disk (1 block) over sata (rate 2, one lane). work = size, so a job of u units takes u/4 s
# on pcie and u/2 s on sata. Order at one instant: iteration ends, link jobs, wakes, arrivals.
#
# t=0  a holds 4, b holds 8; one iteration [0,1]
# t=1  a releases: kv entry a=4 (1 block)
# t=2  b releases: kv entry b=8 (2 blocks); kv: 3 cached, 1 free
# t=3  c holds 16 (4 blocks): evict a 4 (left 0) -> spill a 4 on pcie [3,4]
#                             evict b 8 (left 0) -> spill b 8 on pcie, queued FIFO [4,6]
#      c prefills [3,4]
# t=4  c releases: kv entry c=16 (4 blocks); pcie lands a: cpu entry a=4 (spilled)
# t=6  pcie lands b (8 = 2 blocks) in cpu, which has 1 free: cpu evicts a 4 (left 0)
#      -> spill a 4 on sata [6,8]; cpu entry b=8
# t=8  sata lands a in disk: disk entry a=4 (spilled)
# t=9  d holds 8 (2 blocks): kv evicts c's tail, 8 (left 8) -> spill c 8 on pcie [9,11]
#      d prefills [9,10], releases at 10: kv entry d=8
# t=11 pcie lands c 8 in cpu (full with b): cpu evicts b 8 (left 0) -> spill b 8 on sata [11,15]
#      cpu entry c=8
# t=15 sata finishes b's 8 units for disk (cap 4): cannot fit even with all of disk's cache
#      evicted -> spill-drop b 8 at disk. disk keeps a=4 (nothing evicted for a drop).
# The `spill` event is the moment the job is put on the link (= the eviction's instant); a
# job queued behind another starts later but lands at start + work/rate (FIFO lane).
SPILL_SPEC = """
stage gpu step { time 1; }
stage pcie link { rate 4; lanes 1; }
stage sata link { rate 2; lanes 1; }
pool kv { cap 16; block 4; evict lru; spill cpu via pcie (size) when (1); }
pool cpu { cap 8; block 4; evict lru; spill disk via sata (size) when (1); }
pool disk { cap 4; block 4; }
session a { arrive at (0); hold kv (4) { run gpu prefill (4); } }
session b { arrive at (0); hold kv (8) { run gpu prefill (8); wait (1); } }
session c { arrive at (3); hold kv (16) { run gpu prefill (16); } }
session d { arrive at (9); hold kv (8) { run gpu prefill (8); } }
"""


def test_spill_chain_two_tiers_with_a_drop() -> None:
    sim = sim_of(SPILL_SPEC)
    events = run_all(sim)
    assert_clean(sim)

    spills = [
        (t(e.time), e.session, e.pool, e.stage, e.units, e.get("tier"), e.get("work"))
        for e in events
        if e.moment == "spill"
    ]
    assert spills == [
        (3, "a", "kv", "pcie", 4, "cpu", 4),
        (3, "b", "kv", "pcie", 8, "cpu", 8),
        (6, "a", "cpu", "sata", 4, "disk", 4),
        (9, "c", "kv", "pcie", 8, "cpu", 8),
        (11, "b", "cpu", "sata", 8, "disk", 8),
    ]
    landed = [(t(e.time), e.session, e.pool, e.units) for e in events if e.moment == "spilled"]
    assert landed == [
        (4, "a", "cpu", 4),
        (6, "b", "cpu", 8),
        (8, "a", "disk", 4),
        (11, "c", "cpu", 8),
    ]
    drops = [(t(e.time), e.session, e.pool, e.units) for e in events if e.moment == "spill-drop"]
    assert drops == [(15, "b", "disk", 8)]

    assert evicts(events) == [
        (3, "a", "kv", 4, 0),
        (3, "b", "kv", 8, 0),
        (6, "a", "cpu", 4, 0),
        (9, "c", "kv", 8, 8),
        (11, "b", "cpu", 8, 0),
    ]
    assert evicts(events, "disk") == []

    snap = sim.snapshot()
    kv, cpu, disk = snap.pool("kv"), snap.pool("cpu"), snap.pool("disk")
    assert sorted((x.session, x.units) for x in kv.entries) == [("c", 8), ("d", 8)]
    assert [(x.session, x.units, x.spilled) for x in cpu.entries] == [("c", 8, True)]
    assert [(x.session, x.units, x.spilled) for x in disk.entries] == [("a", 4, True)]
    assert (kv.cached, cpu.cached, disk.cached) == (16, 8, 4)
    assert snap.counts.drops == 1


def test_spill_predicate_selects_what_is_spilled() -> None:
    # `when (size >= 8)`: a's 4 evicted units are not spilled (just evicted), b's 8 are.
    sim = sim_of(
        SPILL_SPEC.replace(
            "spill cpu via pcie (size) when (1);", "spill cpu via pcie (size) when (size >= 8);"
        )
    )
    events = run_all(sim)
    assert_clean(sim)
    first = [(t(e.time), e.session, e.units) for e in events if e.moment == "spill"][:2]
    assert first == [(3, "b", 8), (9, "c", 8)]
    # b's job is alone on pcie now: [3,5].
    landed = [(t(e.time), e.session, e.pool) for e in events if e.moment == "spilled"]
    assert landed[0] == (5, "b", "cpu")


# --------------------------------------------------------------------------- multi-turn hits

# One session, three turns. kv admits via gpu (budget inf, time 1). Each turn holds the
# prompt, prefills it and decodes 3 steps; the prompt grows by 5 per turn.
#   turn 1 (t=0): prompt 6, hit 0, prefill 6 [0,1]; decode t=1,2,3 -> context 9;
#                 released t=4: 9 units, cached floor(9/4)*4 = 8; wait 1
#   turn 2 (t=5): prompt 11, hit = min(8, floor_block(max(11, 0))) = 8; prefill 11-8 = 3
#                 [5,6]; decode t=6,7,8 -> 14; released t=9 cached 12; wait 1
#   turn 3 (t=10): prompt 16, hit min(12, 16) = 12; prefill 4 [10,11]; decode t=11,12,13 -> 19;
#                 released t=14 cached 16; wait 1; ends t=15
MULTI_TURN = """
stage gpu step { time 1; }
pool kv { cap 64; block 4; admit via gpu; }
session chat {
  prompt = 6;
  repeat (3) {
    hold kv (prompt) { run gpu prefill (prompt); run gpu decode (3); }
    prompt = prompt + 5;
    wait (1);
  }
}
"""


def test_multi_turn_hits_the_previous_turns_prefix() -> None:
    sim = sim_of(MULTI_TURN)
    events = run_all(sim)
    assert_clean(sim)
    assert admits(events) == [
        (0, "chat", "kv", 6, 0),
        (5, "chat", "kv", 11, 8),
        (10, "chat", "kv", 16, 12),
    ]
    prefills = [(r["time"], r["scheduled"]) for r in iterations(events) if r["admitted"]]
    assert prefills == [
        (0, (("chat", "prefill", 6),)),
        (5, (("chat", "prefill", 3),)),
        (10, (("chat", "prefill", 4),)),
    ]
    assert releases(events) == [
        (4, "chat", "kv", 9, 8),
        (9, "chat", "kv", 14, 12),
        (14, "chat", "kv", 19, 16),
    ]
    assert ends(events) == {"chat": (15, "done")}
    # Waking from each `wait`: reason "wait".
    assert [(t(e.time), e.get("reason")) for e in events if e.moment == "wake"] == [
        (5, "wait"),
        (10, "wait"),
        (15, "wait"),
    ]


def test_spill_chain_with_two_pcie_lanes() -> None:
    # The same chain with pcie lanes 2: a's and b's jobs run side by side from 3 ([3,4] and
    # [3,5]); b lands at 5, cpu evicts a (4) -> sata [5,7] -> disk at 7. The rest is as
    # before: c spilled at 9, lands at 11, b spilled on to disk [11,15] and dropped.
    sim = sim_of(
        SPILL_SPEC.replace(
            "stage pcie link { rate 4; lanes 1; }", "stage pcie link { rate 4; lanes 2; }"
        )
    )
    events = run_all(sim)
    assert_clean(sim)
    landed = [(t(e.time), e.session, e.pool, e.units) for e in events if e.moment == "spilled"]
    assert landed == [
        (4, "a", "cpu", 4),
        (5, "b", "cpu", 8),
        (7, "a", "disk", 4),
        (11, "c", "cpu", 8),
    ]
    spills = [(t(e.time), e.session, e.pool) for e in events if e.moment == "spill"]
    assert spills == [
        (3, "a", "kv"),
        (3, "b", "kv"),
        (5, "a", "cpu"),
        (9, "c", "kv"),
        (11, "b", "cpu"),
    ]
    drops = [(t(e.time), e.session, e.pool, e.units) for e in events if e.moment == "spill-drop"]
    assert drops == [(15, "b", "disk", 8)]
