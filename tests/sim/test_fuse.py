"""Fused stretches beside a waiting hold (pooltui/sim/fuse.py): how far one may evict and
register, worked out by hand, and the same run as the per-event mode's.

A stretch stands for iterations in which only steady decoding happens; in the per-event
mode each of them tries the queue head again. The stretch may evict cache and register
piece blocks as long as that attempt finds what it found at the stretch's start: it stops
before an iteration that would evict a block of the head's hit chain E, or register the
hash the head's lookup would take next (or one the pool has registered already).

Every spec: block 4, gpu 1 s per iteration, budget 64. Physical ids: never-used ids
lowest first; eviction takes the least recently released entry from its tail.
"""

from __future__ import annotations

from typing import Any

from pooltui.lang import compile_source
from pooltui.sim import Simulation
from tests.sim.test_fast import check_same


def stretches(text: str, lean: bool) -> tuple[list[tuple[float, int]], Any]:
    """(time, iterations) of every action of the fast mode that ran iterations, and the
    simulation. `lean`: nothing records events (the crossings' bulk path), else every
    event is recorded (the crossings one by one, each at its iteration's start)."""
    program = compile_source(text, "spec.pool", ".")
    sim = Simulation(program, fast=True, history=False, invariants=False)
    eng = sim.engine
    events: list[Any] = []
    eng.keep = False
    eng.record = not lean
    eng.on_event = None if lean else events.append
    eng.lean = lean
    s = eng.s
    out: list[tuple[float, int]] = []
    while True:
        before, now = s.counters["iterations"], s.now
        if not eng.advance():
            break
        if s.counters["iterations"] > before:
            out.append((round(now, 9), s.counters["iterations"] - before))
    assert s.halted is None
    return out, (sim, events)


def both(text: str) -> list[tuple[float, int]]:
    """The stretches, the same whether events are recorded or not; and the whole run
    the same as the per-event mode's (events, end state, counters)."""
    lean, _ = stretches(text, lean=True)
    recorded, _ = stretches(text, lean=False)
    assert lean == recorded
    check_same(text, ".")
    check_same(text, ".", invariants=True)
    return lean


def evicted(events: list[Any]) -> list[tuple[float, str, tuple[int, ...]]]:
    return [(round(e.time, 9), e.session, tuple(e.blocks)) for e in events if e.moment == "evict"]


def admitted(events: list[Any]) -> list[tuple[float, str, int]]:
    return [(round(e.time, 9), e.session, e.get("hit")) for e in events if e.moment == "admit"]


# ------------------------------------------------------------------ eviction
# cap 32: 8 blocks. x and y prefill 8 each and end; d prefills 4 then decodes 20, growing
# one unit a step (steady from its first step, a new block every 4 steps); w (32 units,
# the whole pool, its first 8 units x's "doc") waits from 0.5 until d ends.
#  t   iteration                      blocks                                   w's attempt
#  0   x, y, d prefill (FIRST first)  FIRST 0 1, SECOND 2 3, d 4 (fresh 5 6 7)
#  1   releases: FIRST's entry, then SECOND's (release order = eviction order)
#  1   d step 1 (computed 4): block 5                                          E = x's 2
#  5   step 5 (8): 6       9  step 9 (12): 7   (fresh ids)
#  13  step 13 (16): no free block: evicts the first entry's tail
#  17  step 17 (20): evicts the first entry's next block
#  21  d done (24 units: 4 5 6 7 + the two evicted), released; w admitted
# w blocked: n = 8 blocks − |hit| past its hit, room = free + cached − hit's cached:
# at 1: 8 − 2 = 6 > 2 + 4 − 2; later the room only shrinks (one block per crossing).
EVICT = """
stage gpu step {{ budget 64; time 1; }}
pool kv {{ cap 32; block 4; evict lru; queue fifo; admit via gpu; }}
session {first} {{ arrive at (0); hold kv (8) content ("{first_key}" : 8) {{ run gpu prefill (8); }} }}
session {second} {{ arrive at (0); hold kv (8) content ("{second_key}" : 8) {{ run gpu prefill (8); }} }}
session d {{ arrive at (0); hold kv (4) {{ run gpu prefill (4); run gpu decode (20); }} }}
session w {{ arrive at (0.5); hold kv (32) content ("doc" : 8, "w" : 24) {{ run gpu prefill (32); }} }}
"""


def test_a_stretch_evicts_the_waiting_heads_hit_while_its_attempt_fails_alike() -> None:
    # x first: x's entry [0, 1] is evicted first, and it is w's E.
    # From 1 the stretch may take 2 free blocks, then x's 1 (E cut to [0]), x's 0 (E
    # empty), y's 3 and 2. At 13 (per event) block 1 goes: w's attempt with E = [0], hit
    # 4: 8 − 1 = 7 blocks past it > 6 − 3 taken − 1 cached: blocked, reserve none as
    # before; at 17 block 0: 8 > 6 − 4 − 0: blocked. Each attempt leaves w as it was:
    # one stretch 1..20. At 21 w is admitted with no hit, evicting y's entry (3 2) and
    # d's (tail first: 0 1 7 6 5 4).
    text = EVICT.format(first="x", first_key="doc", second="y", second_key="other")
    assert both(text) == [(0, 1), (1, 20), (21, 1)]
    _, (_, events) = stretches(text, lean=False)
    assert evicted(events) == [
        (13, "x", (1,)),
        (17, "x", (0,)),
        (21, "y", (3, 2)),
        (21, "d", (0, 1, 7, 6, 5, 4)),
    ]
    assert admitted(events)[-1] == (21, "w", 0)


def test_a_stretch_stops_before_an_eviction_that_changes_the_heads_attempt() -> None:
    # w asks for 40 − computed units: 32 with E = x's 2 blocks (hit 8), blocked as above.
    # With E cut to [0] (block 1 evicted at 13) it would ask for 36 > cap 32: rejected.
    # The stretch from 1 stops before 13 (1..12); at 13, per event, the crossing evicts
    # block 1 and w is rejected; the queue is empty: 13..20 is one stretch (block 0 goes
    # at 17).
    text = EVICT.format(first="x", first_key="doc", second="y", second_key="other")
    text = text.replace("hold kv (32) content", "hold kv (40 - computed) content")
    assert both(text) == [(0, 1), (1, 12), (13, 8)]
    _, (_, events) = stretches(text, lean=False)
    assert evicted(events) == [(13, "x", (1,)), (17, "x", (0,))]
    assert [(round(e.time, 9), e.session) for e in events if e.moment == "reject"] == [(13, "w")]


def test_a_stretch_evicts_blocks_the_waiting_head_does_not_hit() -> None:
    # y first: y's entry [0, 1] goes first; w's E is x's [2, 3], the second entry.
    # From 1 the guard allows 2 free + y's 2 blocks: the crossings at 5, 9, 13 (evicts
    # y's 1) and 17 (y's 0) all fit, and d's run ends after 20 steps: one stretch 1..20.
    # w's attempts find E = [2, 3] throughout (hit 8): blocked (6 > 4 − 2 at 1, less
    # after). At 21 w hits x's 2 blocks and evicts d's 6.
    text = EVICT.format(first="y", first_key="other", second="x", second_key="doc")
    assert both(text) == [(0, 1), (1, 20), (21, 1)]
    _, (_, events) = stretches(text, lean=False)
    assert evicted(events) == [
        (13, "y", (1,)),
        (17, "y", (0,)),
        (21, "d", (0, 1, 7, 6, 5, 4)),
    ]
    assert admitted(events)[-1] == (21, "w", 8)


# ------------------------------------------------------------------ registration
# d's content is "conv" (16 units) but it prefills 4: its decode steps complete conv's
# blocks 1, 2, 3 (computed 8 at step 4, 12 at step 8, 16 at step 12), each registered
# in the iteration that takes that token. cap 32: w (32 units) fits only with a hit.
#  t   iteration                                  blocks
#  0   d prefill 4: conv block 0 registered        d 0
#  1   d step 1 (computed 4 → 5): block 1          d 0 1 (fresh 2..7)
REGISTER = """
stage gpu step {{ budget 64; time 1; }}
pool kv {{ cap 32; block 4; evict lru; queue fifo; admit via gpu; }}
session d {{ arrive at (0); hold kv (4) content ("conv" : 16) {{ run gpu prefill (4); run gpu decode (12); }} }}
session w {{ arrive at (0.5); hold kv (32) content ("{key}" : 16, "w" : 16) {{ run gpu prefill (32); }} }}
"""


def test_a_stretch_stops_before_it_would_register_the_heads_next_block() -> None:
    # w's content starts as d's: E = [0] (held by d, hit 4), the next hash conv block 1.
    # At 1..3 w is blocked: n = 8 − 1 = 7 > 6 free. Step 4 (at 4) registers conv block 1:
    # the stretch from 1 stops before it (1..3). At 4, per event: E = [0, 1], hit 8
    # (shared), n = 6 ≤ 6 free: w is admitted (blocks 2..7), prefills 24 and ends at 5;
    # its entry [2..7] holds conv blocks 2, 3 registered (w's copies).
    # From 5 (no queue): step 5 (computed 8) evicts w's tail 7; step 8 would register a
    # second copy of conv block 2 (the pool has one: whether it counts as a duplicate
    # would depend on when w's is evicted): 5..7. At 8 step 8 registers it (a duplicate);
    # from 8 step 9 evicts 6, step 12 would register conv block 3's copy: 8..11; at 12
    # the last step (the duplicate of block 3), run ends at 13.
    text = REGISTER.format(key="conv")
    assert both(text) == [(0, 1), (1, 3), (4, 1), (5, 3), (8, 4), (12, 1)]
    _, (sim, events) = stretches(text, lean=False)
    assert admitted(events) == [(0, "d", 0), (4, "w", 8)]
    assert evicted(events) == [(5, "w", (7,)), (9, "w", (6,))]
    assert sim.summary().duplicates == 2


def test_a_stretch_registers_blocks_no_waiting_head_would_hit() -> None:
    # w's content is its own ("other"): E is empty and stays so; d's registrations are
    # new hashes. From 1, d's 12 steps (crossings at 5 and 9 on fresh ids, conv blocks
    # registered at 4, 8, 12) are one stretch; at 13 d releases [0 1 2 3] (all of conv)
    # and w is admitted with no hit, taking the 4 free ids and evicting d's entry.
    text = REGISTER.format(key="other")
    assert both(text) == [(0, 1), (1, 12), (13, 1)]
    _, (sim, events) = stretches(text, lean=False)
    assert admitted(events) == [(0, "d", 0), (13, "w", 0)]
    assert evicted(events) == [(13, "d", (3, 2, 1, 0))]
    assert sim.summary().duplicates == 0


def test_the_waiting_head_is_the_only_attempt_a_stretch_guards() -> None:
    # A second waiting hold v behind w, whose hit (x's doc) the stretch evicts: FIFO tries
    # only the head, so nothing stops the stretch for v (the same as y-first above, with v
    # queued after w at 0.6).
    text = EVICT.format(first="x", first_key="doc", second="y", second_key="other")
    text = text.replace('content ("doc" : 8, "w" : 24)', 'content ("other" : 8, "w" : 24)')
    text += (
        'session v { arrive at (0.6); hold kv (8) content ("doc" : 8) { run gpu prefill (8); } }\n'
    )
    # w's E is y's [2, 3] (the second entry); x's [0, 1] goes first, v's hit with it:
    # one stretch 1..20. At 21 w (E = y's 2) is admitted first and fills the pool (v, E
    # empty now, blocked); at 22 w ends and v is admitted, its doc long gone (hit 0).
    assert both(text) == [(0, 1), (1, 20), (21, 1), (22, 1)]
    _, (_, events) = stretches(text, lean=False)
    assert evicted(events)[:2] == [(13, "x", (1,)), (17, "x", (0,))]
    assert admitted(events)[-2:] == [(21, "w", 8), (22, "v", 0)]


# ------------------------------------------------------------------ attempts that draw
# w's header draws (28 to 32 units: 7 or 8 blocks, never with d holding 2 or more of 8):
# each of its attempts draws again (language.md §10), so no stretch may stand for one
# while it heads the queue: from 1 to 20 every iteration of d's decode is its own action,
# and w's later draws (its prefill and decode amounts) come from the same place in its
# stream as per event.
DRAWING = """
seed 3;
stage gpu step { budget 64; time 1; }
pool kv { cap 32; block 4; evict lru; queue fifo; admit via gpu; }
session d { arrive at (0); hold kv (4) { run gpu prefill (4); run gpu decode (20); } }
session w { arrive at (0.5); hold kv (28 + draw uniform(0, 4)) {
  run gpu prefill (draw uniform(1, 28)); run gpu decode (draw uniform(1, 4)); } }
"""


def test_no_stretch_stands_for_attempts_that_draw() -> None:
    assert both(DRAWING)[:21] == [(float(i), 1) for i in range(21)]
    # The amount of the run w's body opens with is evaluated at each attempt too (the
    # tokens it would take): a draw there is the same. A draw in its second run's amount
    # is not part of an attempt: one stretch, 1..20.
    quiet = DRAWING.replace("28 + draw uniform(0, 4)", "30")
    assert both(quiet)[:21] == [(float(i), 1) for i in range(21)]
    quiet = quiet.replace("prefill (draw uniform(1, 28))", "prefill (12)")
    assert both(quiet)[:3] == [(0, 1), (1, 20), (21, 1)]


TWINS = """
stage gpu step { budget 64; time 1; }
pool kv { cap 64; block 4; evict lru; queue fifo; admit via gpu; }
session d1 { arrive at (0); hold kv (4) content ("conv" : 16) { run gpu prefill (4); run gpu decode (12); } }
session d2 { arrive at (0); hold kv (4) content ("conv" : 16) { run gpu prefill (4); run gpu decode (12); } }
"""


def test_a_stretch_stops_before_two_residents_register_one_hash() -> None:
    # d1 and d2 hold the same content ("conv", 16 units), prefill 4 at 0 (d2's hit is 0:
    # capped at ⌊(4 − 1)/4⌋ blocks; its conv block 0 is a second copy) and decode 12 in
    # step: each of steps 4, 8, 12 completes conv block 1, 2, 3 for both, d2's a second
    # copy again. A stretch registers a hash once at most: 1..3, then 4 (registering both
    # in its own planning) ..7, 8..11, and 12 alone (the last step). No hold waits, and
    # 16 blocks are plenty: nothing is evicted.
    assert both(TWINS) == [(0, 1), (1, 3), (4, 4), (8, 4), (12, 1)]
    _, (sim, events) = stretches(TWINS, lean=False)
    assert sim.summary().duplicates == 4
    assert evicted(events) == []
