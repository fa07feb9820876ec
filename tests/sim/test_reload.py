"""Reload (content-and-reload.md §3, docs/language.md §5.7): a hold's continuation found
down its pool's spill chain comes back over a link instead of being recomputed.

Every expectation is worked out by hand from the design (tables in the comments) before
running anything. The invariants (language.md §8, content-and-reload.md §4, and the
reload's own: a reloading hold is no resident, has exactly one job, and only its hit is
registered) are checked after every event in every simulation here (`sim_of` turns them
on), and broken on purpose at the end of this file.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.sim.helpers import (
    admits,
    assert_clean,
    check_structure,
    ends,
    of,
    one,
    run_all,
    sim_of,
    t,
    table,
)

# ---------------------------------------------------------------- the worked example
# hbm: 4 blocks of 16; dram: 16 blocks; pcie moves 1,600 units a second (16 in 0.01 s);
# every iteration lasts 0.01 s.
#
# | t    | what happens                                                                  |
# | 0    | a admitted to hbm (48 units, 3 blocks, hit 0); iteration: a prefills 48       |
# | 0.01 | a's 3 blocks registered (when taken, at 0); run-done; release: 3 cached;       |
# |      | a waits until 1.01                                                            |
# | 0.5  | b arrives; it needs 4 blocks, 1 is free: a's whole entry is evicted (tail      |
# |      | first) and spilled: 48 units to dram, work 48 -> pcie 0.5..0.53; b admitted,   |
# |      | prefills 64 (0.5..0.51)                                                       |
# | 0.51 | b done: released, its 4 blocks cached; b ends                                 |
# | 0.53 | `spilled`: dram holds a's blocks 0-2 (48 units), one entry, last 0.53          |
# | 1.01 | a's second hold (64 units): own hit 0 (hbm holds b's content only); the walk   |
# |      | finds a's blocks 0, 1, 2 in dram: 48; limited like a hit, ⌊(64-1)/16⌋·16 = 48:  |
# |      | loadable 48; no `when`: it reloads. Fit: 4 new blocks, room 0 free + 4 cached  |
# |      | (b's): fits. b's entry evicted and spilled (64 units, pcie idle: 1.01..1.05);  |
# |      | `admit` a (64 units, hit 0, blocks 0-3: the ones b's eviction freed); dram's   |
# |      | entry of a refreshed (last 1.01); `reload` 48 units, tiers dram 48, work 48,   |
# |      | ahead 1 (b's spill): it waits for the lane. The iteration admitted a and took  |
# |      | no tokens: it lasts no time                                                   |
# | 1.05 | b's spill ends: the reload starts (1.05..1.08) before the spill lands          |
# | 1.08 | `reloaded`: a's blocks 0-2 registered in hbm, took 0.07 s; a's run joins gpu:   |
# |      | it prefills 64 - 48 = 16 tokens (1.08..1.09)                                  |
# | 1.09 | a done, released (4 blocks cached), ends                                      |
#
# Without `reload`, a takes 64 tokens at 1.01 and ends at 1.02.
EXAMPLE = """
stage gpu step { budget 64; time 0.01; }
stage pcie link { rate 1600; LANES }
pool hbm  { cap 64; block 16; evict lru; admit via gpu;
            spill dram via pcie (size) when (1); RELOAD }
pool dram { cap 256; block 16; evict lru; }
session a { hold hbm (48) { run gpu prefill (48); } wait (1);
            hold hbm (64) { run gpu prefill (64); } }
session b { arrive at (0.5); hold hbm (64) { run gpu prefill (64); } }
"""


def example(reload: str = "reload via pcie (size);", lanes: int = 1) -> str:
    return EXAMPLE.replace("RELOAD", reload).replace("LANES", f"lanes {lanes};")


def run(text: str) -> tuple[Any, list[Any]]:
    sim = sim_of(text)
    events = run_all(sim)
    assert_clean(sim)
    return sim, events


def at(sim: Any, events: list[Any], moment: str, session: str | None = None) -> Any:
    """The snapshot right after the first `moment` event (of `session`)."""
    e = of(events, moment, session)[0]
    sim.goto(e.index)
    snap = sim.snapshot()
    check_structure(snap)
    return snap


def test_a_prefix_evicted_to_the_tier_is_reloaded_by_the_next_turn() -> None:
    _, events = run(example())
    spills = [(t(e.time), e.session, e.units, e.get("tier")) for e in of(events, "spill")]
    assert spills == [(0.5, "a", 48, "dram"), (1.01, "b", 64, "dram")]
    assert admits(events) == [
        (0.0, "a", "hbm", 48, 0),
        (0.5, "b", "hbm", 64, 0),
        (1.01, "a", "hbm", 64, 0),
    ]
    r = one(events, "reload")
    assert (t(r.time), r.session, r.pool, r.stage, r.units, r.blocks) == (
        1.01, "a", "hbm", "pcie", 48, (0, 1, 2),
    )  # fmt: skip
    assert r.get("hit") == 0 and r.get("tiers") == (("dram", 48),)
    assert r.get("work") == 48 and r.get("ahead") == 1
    assert r.why == (
        "reloading 48 units of a's prefix from dram over pcie (0.03s, after 1 job on pcie) "
        "instead of recomputing them"
    )
    # The reload comes right after its admission, in the same iteration.
    i = events.index(r)
    assert events[i - 1].moment == "admit" and events[i - 1].session == "a"
    done = one(events, "reloaded")
    assert (t(done.time), done.session, done.pool, done.stage, done.units, done.blocks) == (
        1.08, "a", "hbm", "pcie", 48, (0, 1, 2),
    )  # fmt: skip
    assert done.get("tiers") == (("dram", 48),) and t(done.get("took")) == 0.07
    # Its why: where the units landed, from where, and how long since `reload` (1.01 -> 1.08).
    assert done.why == (
        "a's 48 reloaded units landed in hbm from dram after 0.07s: registered there, "
        "and never recomputed"
    )
    # At 1.05 the spill's lane goes to the reload first, then the spill lands.
    assert [(t(e.time), e.session) for e in of(events, "spilled")] == [(0.53, "a"), (1.05, "b")]
    assert table(events) == [
        (0.0, (("a", "prefill", 48),), ("a",), False),
        (0.5, (("b", "prefill", 64),), ("b",), False),
        (1.01, (), ("a",), False),  # admitted a, no tokens: it lasts no time
        (1.08, (("a", "prefill", 16),), (), False),
    ]
    assert ends(events) == {"b": (0.51, "done"), "a": (1.09, "done")}


def test_without_reload_the_next_turn_recomputes() -> None:
    _, events = run(example(reload=""))
    assert of(events, "reload") == [] and of(events, "reloaded") == []
    assert table(events)[-1] == (1.01, (("a", "prefill", 64),), ("a",), False)
    assert ends(events)["a"] == (1.02, "done")


def test_a_reloading_hold_as_the_views_show_it() -> None:
    sim, events = run(example())
    # At `reload` (1.01): a holds 4 blocks, computed 48 (hit 0 + 48 loading); blocks 0-2
    # are landing, allocated but not registered; dram's entry of a was read: last 1.01.
    snap = at(sim, events, "reload")
    hbm = snap.pool("hbm")
    (hold,) = hbm.holds
    assert (hold.session, hold.size, hold.computed, hold.reloading) == ("a", 64, 48, 48)
    bm = hbm.blocks
    assert bm is not None and bm.landing == frozenset({0, 1, 2})
    info = bm.info(1)
    assert (info.state, info.landing, info.registered) == ("held", True, False)
    assert not bm.info(3).landing
    (entry,) = snap.pool("dram").entries
    assert (entry.session, entry.last) == ("a", 1.01)
    view = snap.session("a")
    assert view is not None
    assert view.state == "reloading 48 units from dram over pcie (waiting for a lane)"
    gpu, pcie = snap.stage("gpu"), snap.stage("pcie")
    assert gpu.residents == () and gpu.reloading == ("a",)
    assert [(j.kind, j.session, j.units, j.tier) for j in pcie.jobs] == [("spill", "b", 64, "dram")]
    (queued,) = pcie.queued_jobs
    assert (queued.kind, queued.session, queued.units, queued.tiers, queued.pool) == (
        "reload", "a", 48, (("dram", 48),), "hbm",
    )  # fmt: skip
    assert snap.counts.reloads == 1
    # At 1.05, b's spill has landed: the reload is in service, 1.05..1.08.
    snap = at(sim, events, "spilled", "b")
    view = snap.session("a")
    assert view is not None and view.state == "reloading 48 units from dram over pcie"
    (job,) = snap.stage("pcie").jobs
    assert (job.kind, t(job.start or 0), t(job.end or 0)) == ("reload", 1.05, 1.08)
    # At `reloaded`: the blocks are registered, nothing is landing, a is on its way.
    snap = at(sim, events, "reloaded")
    bm = snap.pool("hbm").blocks
    assert bm is not None and bm.landing == frozenset()
    assert {0, 1, 2} <= bm.registered and 3 not in bm.registered
    assert snap.pool("hbm").holds[0].reloading == 0
    assert snap.stage("gpu").reloading == ()


def test_the_summary_counts_reloads_hits_and_link_time() -> None:
    sim, _ = run(example())
    s = sim.summary()
    # hits at admissions: 0, 0, and a's 48 reloaded units; asked: 48 + 64 + 64
    assert (s.reloading, s.reloads, s.reloaded_units) == (True, 1, 48)
    assert (s.hit_units, s.asked_units) == (48, 176)
    assert (s.hit_own, s.hit_shared, s.hit_reloaded) == (0, 0, 48)
    # pcie: a's spill 0.03 s, b's 0.04 s, the reload 0.03 s
    (pcie,) = s.links
    assert (pcie.label, pcie.spills, pcie.reloads, pcie.sends) == ("pcie", 2, 1, 0)
    assert t(pcie.busy) == 0.1


# ---------------------------------------------------------------- when refuses
# `when (size >= 64)`: at 1.01 the loadable units are 48 (< 64), so a is attempted as
# without reload: admitted with hit 0, it prefills all 64 tokens at 1.01 and ends at 1.02;
# dram's entry of a is not read (its last stays 0.53). `when (size >= 48)` reloads.
def test_a_reload_that_when_refuses_is_recomputed() -> None:
    sim, events = run(example(reload="reload via pcie (size) when (size >= 64);"))
    assert of(events, "reload") == []
    assert admits(events)[-1] == (1.01, "a", "hbm", 64, 0)
    assert table(events)[-1] == (1.01, (("a", "prefill", 64),), ("a",), False)
    assert ends(events)["a"] == (1.02, "done")
    entries = {(e.session, e.last) for e in sim.snapshot().pool("dram").entries}
    assert ("a", 0.53) in entries
    assert sim.summary().reloads == 0
    _, events = run(example(reload="reload via pcie (size) when (size >= 48);"))
    assert one(events, "reload").units == 48


# ---------------------------------------------------------------- figures that never fit
# a's second hold is `computed + 32` units. Attempted plainly (computed = hit = 0): 32
# units. With the reload: dram has 48 past the hit; the header sees 48 + 32 = 80, whose
# limit ⌊79/16⌋·16 = 64 keeps the 48: size 80 > cap 64, which could never fit. The reload
# is not made (docs/language.md §17): a is admitted at 32 units (2 blocks: b's tail two
# evicted and spilled, 32 units) and prefills 32 at 1.01, ending at 1.02 - not rejected.
def test_a_reload_that_could_never_fit_is_not_made() -> None:
    text = example().replace(
        "hold hbm (64) { run gpu prefill (64); } }\nsession b",
        "hold hbm (computed + 32) { run gpu prefill (32); } }\nsession b",
    )
    assert "computed + 32" in text
    _, events = run(text)
    assert of(events, "reload") == [] and of(events, "reject") == []
    assert admits(events)[-1] == (1.01, "a", "hbm", 32, 0)
    assert [(t(e.time), e.session, e.units) for e in of(events, "spill")][-1] == (1.01, "b", 32)
    assert table(events)[-1] == (1.01, (("a", "prefill", 32),), ("a",), False)
    assert ends(events)["a"] == (1.02, "done")


# ---------------------------------------------------------------- a busy link, two lanes
# With two lanes, b's spill takes one and the reload the other at 1.01 (ahead 0):
# 1.01..1.04; a prefills 16 at 1.04 and ends at 1.05. (One lane: the first test, ahead 1,
# the reload behind b's spill, 1.05..1.08.)
def test_a_reload_queues_behind_a_spill_unless_a_lane_is_free() -> None:
    _, events = run(example(lanes=2))
    r = one(events, "reload")
    assert r.get("ahead") == 0
    assert r.why.endswith("over pcie (0.03s) instead of recomputing them")
    done = one(events, "reloaded")
    assert t(done.time) == 1.04 and done.get("tiers") == (("dram", 48),)
    # 1.01 -> 1.04: the job started at once (ahead 0), 48 units at 1,600 a second.
    assert done.why == (
        "a's 48 reloaded units landed in hbm from dram after 0.03s: registered there, "
        "and never recomputed"
    )
    assert table(events)[-1] == (1.04, (("a", "prefill", 16),), (), False)
    assert ends(events)["a"] == (1.05, "done")


# ---------------------------------------------------------------- two tiers
# dram holds 2 blocks and spills to ssd over nvme. Only a's entries spill from hbm (its
# attribute `keep`). Rates: 1,600 units a second on both links.
#
# | t    | what happens                                                                  |
# | 0    | a: 48 units (3 blocks), prefill 0..0.01; released: entry a, 3 blocks            |
# | 0.2  | b needs 2 blocks, 1 free: a's tail block (units 32..48) evicted, spilled to     |
# |      | dram (16 units, 0.2..0.21); b prefills 32 (0.2..0.21)                          |
# | 0.21 | b released (entry b, 2 blocks); a's block 2 lands in dram                       |
# | 0.5  | c needs 4 blocks, none free: a's 2 blocks (lru) evicted and spilled (32 units, |
# |      | 0.5..0.52), then b's 2 (not spilled); c prefills 64 (0.5..0.51)                 |
# | 0.52 | a's blocks 0-1 land in dram, which has room for 2 only: its lru entry (a's     |
# |      | block 2) is evicted and spilled to ssd (16 units, nvme 0.52..0.53); dram now   |
# |      | holds a's blocks 0-1                                                           |
# | 0.53 | a's block 2 lands in ssd                                                      |
# | 1.01 | a's second hold (64): own hit 0; dram has blocks 0, 1 (u = 32); ssd from unit  |
# |      | 32: block 2 (u = 48); limit 48: loadable 48 from dram (32) and ssd (16). c's   |
# |      | 4 cached blocks evicted (not spilled); the reload starts at once (1.01..1.04);  |
# |      | both tiers' entries of a refreshed (last 1.01)                                |
# | 1.04 | reloaded; a prefills 16 (1.04..1.05) and ends                                  |
TWO_TIERS = """
stage gpu step { budget 64; time 0.01; }
stage pcie link { rate 1600; }
stage nvme link { rate 1600; }
pool hbm  { cap 64; block 16; evict lru; admit via gpu;
            spill dram via pcie (size) when (keep); reload via pcie (size); }
pool dram { cap 32; block 16; evict lru; spill ssd via nvme (size) when (1); }
pool ssd  { cap 256; block 16; evict lru; }
session a { keep = 1; hold hbm (48) { run gpu prefill (48); } wait (1);
            hold hbm (64) { run gpu prefill (64); } }
session b { keep = 0; arrive at (0.2); hold hbm (32) { run gpu prefill (32); } }
session c { keep = 0; arrive at (0.5); hold hbm (64) { run gpu prefill (64); } }
"""


def test_a_continuation_split_over_two_tiers() -> None:
    sim, events = run(TWO_TIERS)
    spills = [(t(e.time), e.session, e.pool, e.get("tier"), e.units) for e in of(events, "spill")]
    assert spills == [
        (0.2, "a", "hbm", "dram", 16),
        (0.5, "a", "hbm", "dram", 32),
        (0.52, "a", "dram", "ssd", 16),
    ]
    landed = [(t(e.time), e.session, e.pool, e.units) for e in of(events, "spilled")]
    assert landed == [(0.21, "a", "dram", 16), (0.52, "a", "dram", 32), (0.53, "a", "ssd", 16)]
    r = one(events, "reload")
    assert (t(r.time), r.units, r.get("hit"), r.get("ahead")) == (1.01, 48, 0, 0)
    assert r.get("tiers") == (("dram", 32), ("ssd", 16))
    assert r.why == (
        "reloading 48 units of a's prefix from dram (32) and ssd (16) over pcie (0.03s) "
        "instead of recomputing them"
    )
    done = one(events, "reloaded")
    assert t(done.time) == 1.04 and done.get("tiers") == (("dram", 32), ("ssd", 16))
    # 1.01 -> 1.04: the job started at once (ahead 0), 48 units at 1,600 a second.
    assert done.why == (
        "a's 48 reloaded units landed in hbm from dram (32) and ssd (16) after 0.03s: "
        "registered there, and never recomputed"
    )
    assert table(events)[-1] == (1.04, (("a", "prefill", 16),), (), False)
    assert ends(events)["a"] == (1.05, "done")
    snap = at(sim, events, "reload")
    for tier in ("dram", "ssd"):  # a reload copies: the tiers keep theirs, refreshed
        assert [(e.session, e.units, e.last) for e in snap.pool(tier).entries] == [
            ("a", 32 if tier == "dram" else 16, 1.01)
        ]


# ---------------------------------------------------------------- not a victim
# preempt lifo; every iteration 0.25 s, pcie 64 units a second; a's reload costs 10 work a
# unit (so it is long in flight). Only a's entries spill (`keep`).
#
# | t     | what happens                                                                 |
# | 0     | a: 48 units (3 blocks), prefill 0..0.25; released: entry a; a waits until 10.25|
# | 5     | b needs 4 blocks: a's entry evicted and spilled (48 units, 5..5.75); b 5..5.25 |
# | 5.25  | b released: entry b (4 blocks)                                              |
# | 5.75  | a's 3 blocks land in dram                                                   |
# | 9     | g (16 units, a decode of 20 steps) evicts b's tail block; step k of g is the  |
# |       | iteration at 9 + 0.25 (k - 1) and grows g to k units                          |
# | 10.25 | a's second hold (48 units): own hit 0; dram has 48, limited to ⌊47/16⌋·16 = 32: |
# |       | loadable 32. b's 3 cached blocks evicted; a admitted in the iteration with g's  |
# |       | step 6 (admit order 3, after g's 2); reload work 320: 10.25..15.25             |
# | 13    | g's step 17 needs a second block: hbm is full (a 3 blocks, g 1), no cache.    |
# |       | lifo takes the most recently admitted *resident*: a is not one (reloading),   |
# |       | so g is preempted by itself; it waits at the head of the queue (17 tokens to   |
# |       | recompute need 2 blocks; 1 can be had)                                        |
# | 15.25 | reloaded: a prefills 48 - 32 = 16 (15.25..15.5), then is released and ends     |
# | 15.5  | g is admitted again (its cache and a's tail evicted) and finishes             |
VICTIM = """
stage gpu step { budget 64; time 0.25; }
stage pcie link { rate 64; }
pool hbm  { cap 64; block 16; evict lru; preempt lifo; admit via gpu;
            spill dram via pcie (size) when (keep); reload via pcie (10 * size); }
pool dram { cap 256; block 16; evict lru; }
session a { keep = 1; hold hbm (48) { run gpu prefill (48); } wait (10);
            hold hbm (48) { run gpu prefill (48); } }
session b { keep = 0; arrive at (5); hold hbm (64) { run gpu prefill (64); } }
session g { keep = 0; arrive at (9); hold hbm (16) { run gpu decode (20); } }
"""


def test_a_reloading_hold_is_skipped_as_a_preemption_victim() -> None:
    _, events = run(VICTIM)
    r = one(events, "reload")
    assert (t(r.time), r.session, r.units, r.get("hit"), r.get("work")) == (10.25, "a", 32, 0, 320)
    rows = [row for row in table(events) if row[0] == 10.25]
    assert rows == [(10.25, (("g", "decode", 1),), ("a",), False)]
    (p,) = of(events, "preempt")
    assert (t(p.time), p.session, p.get("grower")) == (13.0, "g", "g")
    assert "g is the most recently admitted resident of gpu" in p.why
    assert t(one(events, "reloaded").time) == 15.25
    assert [row for row in table(events) if row[0] == 15.25] == [
        (15.25, (("a", "prefill", 16),), (), False)
    ]
    assert ends(events)["a"] == (15.5, "done")
    assert ends(events)["g"][1] == "done"


# ---------------------------------------------------------------- does not fit
# hbm 4 blocks of 16; iterations 0.25 s; pcie 64 units a second.
#
# | t    | what happens                                                                  |
# | 0    | a: 48 units, prefill 0..0.25; released: entry a (3 blocks); a waits until 2.25  |
# | 1    | b (32 units, then a wait of 3 inside its hold) needs 2 blocks, 1 free: a's     |
# |      | tail block evicted, spilled to dram (16 units, 1..1.25); b prefills 1..1.25    |
# | 1.25 | b sleeps holding 2 blocks until 4.25; a's block 2 lands in dram               |
# | 2.25 | a's second hold (64): own hit 32 (its blocks 0-1, cached); dram has block 2:  |
# |      | loadable 16 (limit 48). Fit: 4 blocks - 2 hit = 2 new; room: 0 free + 2 cached, |
# |      | both a's own hit: 0. Blocked: it waits; nothing was read (dram's last 1.25)    |
# | 4.25 | b releases (2 cached) and ends; a fits: b's entry evicted and spilled (32,    |
# |      | 4.25..4.75); a admitted (hit 32); reload 16 behind it (4.75..5.0)             |
# | 5.0  | reloaded: a prefills 64 - 48 = 16 (5.0..5.25) and ends                        |
NO_FIT = """
stage gpu step { budget 64; time 0.25; }
stage pcie link { rate 64; }
pool hbm  { cap 64; block 16; evict lru; admit via gpu;
            spill dram via pcie (size) when (1); reload via pcie (size); }
pool dram { cap 256; block 16; evict lru; }
session a { hold hbm (48) { run gpu prefill (48); } wait (2);
            hold hbm (64) { run gpu prefill (64); } }
session b { arrive at (1); hold hbm (32) { run gpu prefill (32); wait (3); } }
"""


def test_a_reload_that_does_not_fit_waits() -> None:
    sim, events = run(NO_FIT)
    second = of(events, "enqueue", "a")[1]
    assert t(second.time) == 2.25
    assert admits(events)[-1] == (4.25, "a", "hbm", 64, 32)
    # Between its attempt at 2.25 and 4.25 nothing was reloaded nor read.
    sim.goto(second.index)
    assert [(e.session, e.last) for e in sim.snapshot().pool("dram").entries] == [("a", 1.25)]
    r = one(events, "reload")
    assert (t(r.time), r.units, r.get("hit"), r.get("ahead")) == (4.25, 16, 32, 1)
    assert r.get("tiers") == (("dram", 16),)
    assert t(one(events, "reloaded").time) == 5.0
    assert table(events)[-1] == (5.0, (("a", "prefill", 16),), (), False)
    assert ends(events)["a"] == (5.25, "done")


# ---------------------------------------------------------------- after a preemption
# preempt lifo; iterations 0.25 s; pcie 64 units a second; only y's entries spill.
#
# | t     | what happens                                                                 |
# | 0     | x (16 units, a decode of 40: step k at 0.25 (k - 1), growing to k units) and y |
# |       | (32 units: a prefill of 32, then a decode of 20) admitted; y prefills 32       |
# | 0.25  | y's decode step j at 0.25 j grows it to 32 + j: a 3rd block at j = 1 (free)   |
# | 4     | x's step 17 needs a 2nd block: hbm is full (x 1, y 3): lifo preempts y (the   |
# |       | later admitted). y computed 32 + 15 = 47, context 47: its 2 full blocks stay |
# |       | cached (the 3rd, not full, is freed) and x takes the free one                 |
# | 4.25+ | y's re-admission needs 16 tokens of recompute (context 47 - hit 32 + 1): 3     |
# |       | blocks, 1 to find, none to be had (its own 2 cached are its hit): blocked      |
# | 8     | x's step 33 needs a 3rd block: the tail block of y's entry is evicted and     |
# |       | spilled (units 16..32, 8..8.25, to dram); y's block 0 stays cached in hbm      |
# | 10    | x done (after step 40 at 9.75): released, 2 blocks cached, 1 freed. y: own hit |
# |       | 16 (its block 0; the cap max(32, context 47) - 1 allows 2 blocks); dram has    |
# |       | its block 1 from unit 16: 16 loadable. A reloading hold takes no first-run     |
# |       | tokens: admitted at 32 units (1 new block, the free one), re-admitted after    |
# |       | preemption; reload 10..10.25                                                   |
# | 10.25 | reloaded: y goes back to its decode run: it recomputes 47 - 32 + 1 = 16 tokens |
# |       | (growing to 48: x's tail block evicted), 10.25..10.5: step 16                  |
# | 10.5  | steps 17..20 at 10.5, 10.75, 11, 11.25; y ends at 11.5                         |
PREEMPTED = """
stage gpu step { budget 64; time 0.25; }
stage pcie link { rate 64; }
pool hbm  { cap 64; block 16; evict lru; preempt lifo; admit via gpu;
            spill dram via pcie (size) when (keep); reload via pcie (size); }
pool dram { cap 256; block 16; evict lru; }
session x { keep = 0; hold hbm (16) { run gpu decode (40); } }
session y { keep = 1; hold hbm (32) { run gpu prefill (32); run gpu decode (20); } }
"""


def test_a_preempted_hold_reloads_and_goes_back_to_its_run() -> None:
    _, events = run(PREEMPTED)
    (p,) = of(events, "preempt")
    assert (t(p.time), p.session, p.get("grower"), p.get("cached")) == (4.0, "y", "x", 32)
    (spill,) = of(events, "spill")
    assert (t(spill.time), spill.session, spill.units) == (8.0, "y", 16)
    assert admits(events)[-1] == (10.0, "y", "hbm", 32, 16)
    assert "re-admitted after preemption" in of(events, "admit", "y")[-1].why
    r = one(events, "reload")
    assert (t(r.time), r.session, r.units, r.get("hit")) == (10.0, "y", 16, 16)
    assert t(one(events, "reloaded").time) == 10.25
    rows = [row for row in table(events) if row[0] >= 10.25]
    assert rows == [
        (10.25, (("y", "recompute", 16),), (), False),
        (10.5, (("y", "decode", 1),), (), False),
        (10.75, (("y", "decode", 1),), (), False),
        (11.0, (("y", "decode", 1),), (), False),
        (11.25, (("y", "decode", 1),), (), False),
    ]
    assert ends(events) == {"x": (10.0, "done"), "y": (11.5, "done")}


# ---------------------------------------------------------------- work: errors and inf
def test_negative_reload_work_is_a_located_runtime_error() -> None:
    # a's reload at 1.01 is of 48 units: work 48 - 100 = -52.
    sim = sim_of(example(reload="reload via pcie (size - 100);"))
    run_all(sim)
    assert sim.error is not None
    assert "reload work is -52, which is negative" in sim.error.message
    assert sim.error.span.line == 5  # at the work: `reload via pcie (size - 100)`


def test_a_reload_of_infinite_work_stands_still_forever() -> None:
    # The reload waits behind b's spill, starts at 1.05 and never lands: a stands still
    # forever (no deadlock); the run ends with a live.
    sim = sim_of(example(reload="reload via pcie (size * inf);"))
    events = run_all(sim)
    assert sim.halted is None and sim.violation is None and sim.finished
    assert of(events, "reloaded") == [] and "a" not in ends(events)
    view = sim.snapshot().session("a")
    assert view is not None and view.state == "reloading forever on pcie (work inf)"
    assert "it never lands: work inf" in one(events, "reload").why


# ---------------------------------------------------------------- invariants, broken
@pytest.mark.parametrize(
    ("what", "invariant", "words"),
    [
        ("resident", "reload", "a is reloading and is a resident of a stage"),
        ("job", "reload", "a's reload has not exactly one job"),
        ("registered", "reload", "a is reloading: 1 blocks registered, its hit is 0"),
        ("lanes", "lanes", "pcie: jobs wait while a lane is free"),
    ],
)
def test_a_broken_reload_invariant_halts(what: str, invariant: str, words: str) -> None:
    from pooltui.sim.testing import break_reload

    sim = sim_of(example())
    sim.run_until(lambda e: e.moment == "reload")
    assert sim.violation is None
    break_reload(sim, what)
    for _ in range(5):
        if sim.step() is None or sim.violation is not None:
            break
    v = sim.violation
    assert v is not None and v.invariant == invariant and words in v.message, v
    assert sim.halted is not None
