"""Reloads of content several sessions share (content-and-reload.md §1-§3, docs/decisions.md
"Reloads"): a hold whose continuation another hold's reload in flight is already loading
into the pool waits for that copy to land, then hits it there, as vLLM's offloading
connector delays a request whose blocks are being loaded (passed over meanwhile: the holds
behind it are tried); and the debugger's history gives at every event the state a fresh
run stopped there has.

Expectations worked out by hand from the design before running anything; the invariants
are checked after every event (`sim_of`).
"""

from __future__ import annotations

from typing import Any

from tests.sim.helpers import (
    admits,
    assert_clean,
    comparable,
    ends,
    of,
    one,
    run_all,
    sim_of,
    t,
    table,
)

# hbm: 6 blocks of 16; dram: 16 blocks; pcie moves 1,600 units a second (16 in 0.01 s);
# every iteration lasts 0.01 s. "sys" is a 32-unit system prompt (2 blocks) that a, c
# and d share; past it each one's units are its own.
#
# | t    | what happens                                                                  |
# | 0    | a admitted (48 units, 3 blocks: sys0 sys1 a2), prefills 48                    |
# | 0.01 | a's blocks registered; release: 3 cached; a ends                               |
# | 0.5  | b (96 units, 6 blocks): 3 free + a's 3 evicted (tail first), spilled to dram   |
# |      | (48 units, pcie 0.5..0.53); b prefills 64 (0.5..0.51)                         |
# | 0.51 | b done: its 4 computed blocks cached, 2 freed; b ends                         |
# | 0.53 | `spilled`: dram holds sys0 sys1 a2                                            |
# | 1    | c and d arrive. The iteration admits c: own hit 0; dram has sys0 sys1 (a2 is  |
# |      | a's, not c's): loadable 32 (the limit, ⌊47/16⌋·16 = 32, allows it); it reloads. |
# |      | Fit: 3 blocks, 2 free: b's tail block evicted and spilled (16 units, pcie      |
# |      | 1..1.01); `admit` c (hit 0); `reload` 32, ahead 1 (pcie 1.01..1.03).           |
# |      | d: own hit 0 (c's sys blocks are loading, unregistered); dram has sys0 sys1:   |
# |      | loadable 32, but c's reload is loading those very blocks: d waits (no evict,  |
# |      | no admit). The iteration admitted c, took no tokens: it lasts no time         |
# | 1.01 | b's block lands in dram (`spilled`)                                           |
# | 1.03 | `reloaded` c (32 units, took 0.03); c's run joins gpu. Iteration: c prefills   |
# |      | 48 - 32 = 16; d admitted: E = sys0 sys1, held by c: hit 32, shared 32; past    |
# |      | them d's block 2 is its own, in no tier: no reload. Fit: 1 block, 0 free: b's  |
# |      | tail block evicted and spilled (16 units, pcie 1.03..1.04); d prefills 16       |
# | 1.04 | c and d done (resident order): c releases (its block 2 cached; sys0 sys1 stay |
# |      | with d), ends; d releases, ends; then b's spill lands                          |
#
# Hits: c's 32 from dram (reloaded), d's 32 on c's blocks (shared): 64 of 48 + 48 + 96 +
# 48 asked; one reload, no duplicate block. (Before: d reloaded sys0 sys1 too, a second
# copy of each behind b's spill of 48 units, and ended at 1.09.)
SHARED = """
stage gpu step { budget 64; time 0.01; }
stage pcie link { rate 1600; }
pool hbm  { cap 96; block 16; evict lru; admit via gpu;
            spill dram via pcie (size) when (1); reload via pcie (size); }
pool dram { cap 256; block 16; evict lru; }
session a { hold hbm (48) content ("sys" : 32) { run gpu prefill (48); } }
session b { arrive at (0.5); hold hbm (96) { run gpu prefill (64); } }
session c { arrive at (1); hold hbm (48) content ("sys" : 32) { run gpu prefill (48); } }
session d { arrive at (1); hold hbm (48) content ("sys" : 32) { run gpu prefill (48); } }
"""


def test_a_hold_waits_for_a_reload_in_flight_of_its_blocks_then_shares_them() -> None:
    sim = sim_of(SHARED)
    events = run_all(sim)
    assert_clean(sim)
    r = one(events, "reload")
    assert (t(r.time), r.session, r.units, r.get("ahead")) == (1.0, "c", 32, 1)
    done = one(events, "reloaded")
    assert (t(done.time), done.session, done.units) == (1.03, "c", 32)
    assert admits(events) == [
        (0.0, "a", "hbm", 48, 0),
        (0.5, "b", "hbm", 96, 0),
        (1.0, "c", "hbm", 48, 0),
        (1.03, "d", "hbm", 48, 32),
    ]
    assert one(events, "admit", "d").get("shared") == 32
    spills = [(t(e.time), e.session, e.units) for e in of(events, "spill")]
    assert spills == [(0.5, "a", 48), (1.0, "b", 16), (1.03, "b", 16)]
    assert table(events) == [
        (0.0, (("a", "prefill", 48),), ("a",), False),
        (0.5, (("b", "prefill", 64),), ("b",), False),
        (1.0, (), ("c",), False),
        (1.03, (("c", "prefill", 16), ("d", "prefill", 16)), ("d",), False),
    ]
    assert ends(events) == {
        "a": (0.01, "done"), "b": (0.51, "done"), "c": (1.04, "done"), "d": (1.04, "done"),
    }  # fmt: skip
    summary = sim.summary()
    assert (summary.hit_units, summary.asked_units) == (64, 240)
    assert (summary.hit_own, summary.hit_shared, summary.hit_reloaded) == (0, 32, 32)
    assert (summary.reloads, summary.reloaded_units, summary.duplicates) == (1, 32, 0)


def test_the_queue_says_whose_reload_a_waiting_hold_waits_for() -> None:
    # At c's `reload` (1.0) d is queued with no hit of its own in hbm, and c's reload is
    # loading the blocks d's would copy: the queue says d waits for it (a teacher sees
    # why d waits while b's cached blocks could make room). At c's `reloaded` (1.03) the
    # blocks are registered: d would hit them (32), and waits for nothing. (The Queue
    # panel's row: tests/tui/test_reload_views.py.)
    sim = sim_of(SHARED)
    events = run_all(sim)
    sim.goto(one(events, "reload", "c").index)
    (item,) = sim.snapshot().pool("hbm").queue
    assert (item.session, item.hit, item.waits_for) == ("d", 0, "c")
    sim.goto(one(events, "reloaded", "c").index)
    (item,) = sim.snapshot().pool("hbm").queue
    assert (item.session, item.hit, item.waits_for) == ("d", 32, None)


def test_the_history_gives_every_event_of_shared_reloads_as_a_fresh_run() -> None:
    # Back past the shared hit and the reload, then forward again: at each event k the
    # snapshot (blocks, counts, holders, entries' order, landing blocks) is the one a
    # fresh run stopped at k shows.
    fresh = sim_of(SHARED)
    expected = []
    while fresh.step() is not None:
        expected.append(comparable(fresh.snapshot()))
    sim = sim_of(SHARED)
    run_all(sim)
    n = len(expected)
    for k in [*range(n - 1, -1, -1), *range(0, n, 3)]:
        sim.goto(k)
        assert comparable(sim.snapshot()) == expected[k], k


# Conversations of three tenants, each turn behind its tenant's 128-unit system prompt, on
# an hbm of 40 blocks that spills to dram and reloads from it: shared hits, reloads of
# shared and private blocks, holds waiting for a reload in flight, preemptions.
TENANTS = """
seed 3;
const BLOCK = 16;
stage gpu step { budget 256; seats 6; time 0.004 + 0.00005 * tokens; }
stage pcie link { rate 20000; }
pool hbm  { cap 40 * BLOCK; block BLOCK; evict lru; preempt lifo; admit via gpu;
            spill dram via pcie (size) when (1);
            reload via pcie (size) when (size >= 2 * BLOCK); }
pool dram { cap 64 * BLOCK; block BLOCK; evict lru; }
session chat[10] {
  arrive every (draw exponential(0.05));
  tenant = draw uniform(0, 2);
  prompt = draw uniform(100, 260);
  repeat (3) {
    hold hbm (min(max(prompt, context + 1), computed + budget_left(gpu)))
         need (max(prompt, context + 1)) reserve (600) content (tenant : 128) {
      run gpu prefill (prompt);
      run gpu decode (24);
    }
    wait (0.3);
    prompt = prompt + 24 + 40;
  }
}
"""


def test_the_history_of_tenants_reloading_gives_a_fresh_runs_state() -> None:
    sim = sim_of(TENANTS)
    events = run_all(sim)
    assert sim.summary().reloads > 5 and sim.summary().hit_shared > 0
    n = len(events)
    r = of(events, "reload")[2].index
    # Far back (checkpoints), then back over a reload and forward again over it.
    ks = [*range(n - 1, 0, -97), *range(r + 5, r - 5, -1), *range(r - 5, r + 5)]
    fresh = sim_of(TENANTS, history=False)
    expected = {}
    for k in sorted(set(ks)):
        while fresh.cursor < k:
            assert fresh.step() is not None
        expected[k] = comparable(fresh.snapshot())
    for k in ks:
        sim.goto(k)
        assert comparable(sim.snapshot()) == expected[k], k


def test_a_deadlock_names_the_reload_a_waiting_hold_waits_for() -> None:
    # SHARED with c's reload of work inf: it never lands, and d waits for it forever (as
    # at c's `reload` above). Nothing else can move after b's spill lands at 1.01: the
    # deadlock names what each waits for, d's wait with its reason (there is room: 3 of
    # b's blocks are cached).
    sim = sim_of(SHARED.replace("reload via pcie (size);", "reload via pcie (size * inf);"))
    run_all(sim)
    assert sim.halted == (
        "deadlock: c reloading forever on pcie (work inf); d waits in hbm's queue "
        "(position 0; 0 free and 3 cached blocks) for c's reload of its blocks"
    )


def _e_passes_d(sim: Any) -> list[Any]:
    """Run SHARED with e arriving at 1 behind d (the two tests below): d waits for c's
    reload, e is admitted past it, d hits c's landed blocks; c, d, e end as worked out."""
    events = run_all(sim)
    assert_clean(sim)
    assert admits(events)[2:] == [
        (1.0, "c", "hbm", 48, 0),
        (1.0, "e", "hbm", 16, 0),
        (1.03, "d", "hbm", 48, 32),
    ]
    assert {k: v for k, v in ends(events).items() if k in "cde"} == {
        "c": (1.04, "done"), "d": (1.04, "done"), "e": (1.01, "done"),
    }  # fmt: skip
    return events


def test_the_holds_behind_a_hold_that_waits_for_a_reload_are_tried() -> None:
    # SHARED with e (16 private units) arriving at 1 after d. vLLM's scheduler passes over
    # a request its connector delays and goes on down the waiting queue; so does the
    # pool: at 1 d waits for c's reload, and e, behind it, is tried and admitted.
    #
    # | 1    | c admitted, reloading (b's block 3 evicted, spilled 1..1.01); d passed over; |
    # |      | e: own hit 0, nothing in dram: 1 block, 0 free: b's block 2 evicted (spill  |
    # |      | queued behind c's reload); e prefills 16 (1..1.01)                          |
    # | 1.01 | e done, released, ends; b's spill lands; c's reload starts (1.01..1.03)      |
    # | 1.03 | c's reload lands; iteration: c 16 tokens, d admitted (hit 32, shared 32), 16 |
    # | 1.04 | c and d done                                                                |
    sim = sim_of(SHARED + "session e { arrive at (1); hold hbm (16) { run gpu prefill (16); } }\n")
    events = _e_passes_d(sim)
    assert table(events)[2:] == [
        (1.0, (("e", "prefill", 16),), ("c", "e"), False),
        (1.03, (("c", "prefill", 16), ("d", "prefill", 16)), ("d",), False),
    ]
    assert [(e.session, t(e.time)) for e in of(events, "reloaded")] == [("c", 1.03)]


def test_a_pool_that_admits_at_the_settle_passes_over_it_too() -> None:
    # As above with hbm admitting at each settle (no `admit via`): the same admissions,
    # and the runs join gpu at the same instants.
    spec = SHARED.replace(" admit via gpu;", "")
    sim = sim_of(spec + "session e { arrive at (1); hold hbm (16) { run gpu prefill (16); } }\n")
    _e_passes_d(sim)
