"""Growing runs with no room: `preempt lifo` (other victims, the grower as its own victim),
`preempt none` (grow-wait, resume), no admission in a preempting iteration, deadlock.

All figures are worked out by hand from the Pool reference, language.md §3/§5 and
docs/decisions.md ("Stages and iterations"). kv has blocks of 4; gpu takes 1 s per
iteration; budget and seats are unbounded unless said.
"""

from __future__ import annotations

from tests.sim.helpers import (
    admits,
    assert_clean,
    ends,
    evicts,
    grows,
    of,
    one,
    releases,
    row,
    run_all,
    run_dones,
    sim_of,
    t,
    table,
)

# --------------------------------------------------------------------------- lifo: own victim

# kv: 16 units = 4 blocks, lifo, memory of gpu; side: unbounded, also memory of gpu.
# x holds 8 (2 blocks): prefill 8 [0,1], then sleeps 5 s (not a resident) and releases at 6.
# a holds max(4, context): prefill 4, then decode 6 steps, growing 1 unit per step.
# y (arrives 0.5) holds 1 unit of side and decodes 8 steps: a resident admitted after a.
#
#  t   residents served (oldest admission first)      admitted  preempted
#  0   x prefill 8, a prefill 4                        x a
#  1   a decode 1 (size 5: new block, kv full), y 1    y
#  2-4 a decode 1 (sizes 6,7,8), y 1
#  5   a needs unit 9 = a 3rd block: 0 free, no cache -> lifo victim = the most recently
#      admitted kv holder resident on gpu = a itself: preempt a (cached 8 = 2 whole blocks),
#      a goes to the queue head, the residents' loop stops: y takes nothing. 0 tokens, 0 s.
#  5   (same instant, next iteration) y decode 1; a does not fit (its first step needs a
#      block: 0 free, no cache of others) -> not admitted
#  6   x wakes and releases (entry x = 8); y decode 1; then a is admitted. Its entry covers
#      E = 2 blocks, but a hit never covers the hold's last unit (content-and-reload.md §2,
#      vLLM's num_tokens − 1): header max(4, 8) = 8, hit = min(2, ⌊(8 − 1)/4⌋ = 1) block =
#      4 units (the hit cap changed this from 8). Its size 8 needs 1 block past the hit:
#      entries are evicted lru, and the oldest release is a's own (t5): its tail block
#      (units 4-8, past the hit) goes (4, left 0; the old model freed it as "past its
#      hit"). Its decode step recomputes 4-8 and takes its token: 5 tokens (recompute),
#      growing to 9, evicting x's tail block (4, left 4)
#  7   y 1, a 1 (size 10) -> a's 6 steps are done (t1..t4, t6, t7): run-done at 8
#  8   y 1 (its 8th step: t1-t4, t5, t6, t7, t8)
LIFO_SELF = """
stage gpu step { time 1; }
pool kv { cap 16; block 4; preempt lifo; admit via gpu; }
pool side { admit via gpu; }
session x { arrive at (0); hold kv (8) { run gpu prefill (8); wait (5); } }
session a { arrive at (0); hold kv (max(4, context)) { run gpu prefill (4); run gpu decode (6); } }
session y { arrive at (0.5); hold side (1) { run gpu decode (8); } }
"""


def test_lifo_grower_is_its_own_victim() -> None:
    sim = sim_of(LIFO_SELF)
    events = run_all(sim)
    assert_clean(sim)
    assert table(events) == [
        row(0, [("x", "prefill", 8), ("a", "prefill", 4)], ["x", "a"]),
        row(1, [("a", "decode", 1), ("y", "decode", 1)], ["y"]),
        row(2, [("a", "decode", 1), ("y", "decode", 1)]),
        row(3, [("a", "decode", 1), ("y", "decode", 1)]),
        row(4, [("a", "decode", 1), ("y", "decode", 1)]),
        row(5, [], [], True),
        row(5, [("y", "decode", 1)]),
        row(6, [("y", "decode", 1), ("a", "recompute", 5)], ["a"]),
        row(7, [("y", "decode", 1), ("a", "decode", 1)]),
        row(8, [("y", "decode", 1)]),
    ]
    p = one(events, "preempt")
    assert (t(p.time), p.session, p.pool, p.stage, tuple(p.others)) == (5, "a", "kv", "gpu", ("a",))
    assert p.get("cached") == 8
    # It re-entered the queue (at the head) marked preempted.
    requeue = [e for e in of(events, "enqueue", "a") if e.get("preempted")]
    assert [t(e.time) for e in requeue] == [5]
    assert admits(events, "kv") == [
        (0, "x", "kv", 8, 0),
        (0, "a", "kv", 4, 0),
        (6, "a", "kv", 8, 4),  # the hit cap: 4, not 8
    ]
    assert evicts(events) == [(6, "a", "kv", 4, 0), (6, "x", "kv", 4, 4)]
    # a grows into a new block at 1 (size 5) and at 6 (size 9) only.
    assert grows(events, "a") == [(1, "a", "kv", 5), (6, "a", "kv", 9)]
    assert [x for x in run_dones(events) if x[1] == "a"] == [
        (1, "a", "prefill"),
        (8, "a", "decode"),
    ]
    assert ends(events)["a"] == (8, "done")
    assert ends(events)["y"] == (9, "done")
    # a's final release: 10 units, computed 10 -> 8 cached.
    assert [r for r in releases(events, "kv") if r[1] == "a"][-1] == (8, "a", "kv", 10, 8)


def test_lifo_snapshot_after_self_preemption() -> None:
    sim = sim_of(LIFO_SELF)
    sim.run_until(lambda e: e.moment == "preempt")
    sim.run_until(lambda e: e.moment == "enqueue" and e.session == "a")
    snap = sim.snapshot()
    kv = snap.pool("kv")
    # Its hit is capped at ⌊(8 − 1)/4⌋ = 1 block (content-and-reload.md §2): 4, not 8.
    assert [(q.session, q.preempted, q.hit) for q in kv.queue] == [("a", True, 4)]
    assert [(h.session, h.size) for h in kv.holds] == [("x", 8)]
    assert [(x.session, x.units) for x in kv.entries] == [("a", 8)]
    assert (kv.allocated, kv.cached, kv.free) == (8, 8, 0)
    assert snap.counts.preemptions == 1
    a = snap.session("a")
    assert a is not None
    assert "kv" in a.state


# --------------------------------------------------------------------------- preempt none

# kv: 16 units = 4 blocks, preempt none. x holds 8 (2 blocks), prefills [0,1], sleeps 6 s
# and releases at 7 (entry x = 8). a: prefill 4, decode 6.
#  t0  x prefill 8, a prefill 4
#  t1  a step 1 -> size 5 (new block; kv full)
#  t2-t4 a steps 2-4 -> sizes 6, 7, 8
#  t5  a needs a 3rd block: no room, preempt none -> grow-wait (a wants 9); no tokens, no
#      admission, no preemption: not an iteration event; the stage sleeps
#  t7  x releases (cached 8); the stage wakes: a's step 5 grows to 9 by evicting x's tail
#      block (4, left 4)
#  t8  a step 6 -> size 10; run-done at 9, released 10 (cached 8)
PREEMPT_NONE = """
stage gpu step { time 1; }
pool kv { cap 16; block 4; preempt none; admit via gpu; }
session x { arrive at (0); hold kv (8) { run gpu prefill (8); wait (6); } }
session a { arrive at (0); hold kv (max(4, context)) { run gpu prefill (4); run gpu decode (6); } }
"""


def test_preempt_none_waits_and_resumes_where_it_was() -> None:
    sim = sim_of(PREEMPT_NONE)
    events = run_all(sim)
    assert_clean(sim)
    assert table(events) == [
        row(0, [("x", "prefill", 8), ("a", "prefill", 4)], ["x", "a"]),
        row(1, [("a", "decode", 1)]),
        row(2, [("a", "decode", 1)]),
        row(3, [("a", "decode", 1)]),
        row(4, [("a", "decode", 1)]),
        row(7, [("a", "decode", 1)]),
        row(8, [("a", "decode", 1)]),
    ]
    waits = [(t(e.time), e.session, e.pool, e.units) for e in events if e.moment == "grow-wait"]
    assert waits == [(5, "a", "kv", 9)]
    assert of(events, "preempt") == []
    assert grows(events, "a") == [(1, "a", "kv", 5), (7, "a", "kv", 9)]
    assert evicts(events) == [(7, "x", "kv", 4, 4)]
    assert releases(events) == [(7, "x", "kv", 8, 8), (9, "a", "kv", 10, 8)]
    assert ends(events) == {"x": (7, "done"), "a": (9, "done")}


# --------------------------------------------------------------------------- preempted first

# queue by (pri): a smaller key goes first, but a preempted hold is ahead of policy keys.
# x (pri 0) holds 8 and sleeps until 11; a (pri 5) prefill 4, decode 8; w (pri 0) arrives at
# 2 wanting 8 (2 blocks).
#  t0  keys x 0, a 5: admit x (2 blocks), a (1 block)
#  t1  a step 1 -> size 5 (kv full)
#  t2  w arrives; a step 2; w does not fit (0 free, no cache)
#  t3, t4  a steps 3, 4 (size 8)
#  t5  a needs a block: lifo victim = a itself (cached 8); the queue is now a (preempted),
#      w — although w's key (0) is smaller than a's (5)
#  t5  (same instant) a is tried: its entry covers 2 blocks, but the hit cap (content-and-
#      reload.md §2: never the hold's last unit) gives ⌊(8 − 1)/4⌋ = 1 block; its recompute
#      step (8 − 4 + 1 = 5 tokens) needs size 9 = 2 blocks past the hit; room: 1 cached
#      block besides the hit's -> no
#  t11 x releases (entry 8): a is selected first: hit 4 (the cap; was 8), size 8 takes one
#      block past the hit: lru evicts a's own entry's tail first (released at t5; units
#      4-8, which the old model freed as "past its hit"), 4 left 0; then its recompute
#      step grows to 9 evicting x's tail (4, left 4); w (2 blocks; 0 free, 1 cached block
#      of x) does not fit
#  t12-t14 a steps 6-8 (sizes 10-12); released at 15, cached 12 (3 blocks)
#  t15 w: 2 blocks: evict x (4, left 0, released t11) then a's tail (4, left 8)
QUEUE_BY_PREEMPTED = """
stage gpu step { time 1; }
pool kv { cap 16; block 4; preempt lifo; queue by (pri); admit via gpu; }
session x { arrive at (0); pri = 0; hold kv (8) { run gpu prefill (8); wait (10); } }
session a { arrive at (0); pri = 5; hold kv (max(4, context)) { run gpu prefill (4); run gpu decode (8); } }
session w { arrive at (2); pri = 0; hold kv (8) { run gpu prefill (8); } }
"""


def test_preempted_hold_is_selected_ahead_of_policy_keys() -> None:
    sim = sim_of(QUEUE_BY_PREEMPTED)
    sim.run_until(lambda e: e.moment == "enqueue" and e.session == "a" and bool(e.get("preempted")))
    kv = sim.snapshot().pool("kv")
    assert [(q.session, q.preempted) for q in kv.queue] == [("a", True), ("w", False)]
    assert tuple(kv.queue[1].keys) == (0,)

    events = run_all(sim)
    assert_clean(sim)
    assert admits(events) == [
        (0, "x", "kv", 8, 0),
        (0, "a", "kv", 4, 0),
        (11, "a", "kv", 8, 4),  # the hit cap: 4, not 8
        (15, "w", "kv", 8, 0),
    ]
    assert evicts(events) == [
        (11, "a", "kv", 4, 0),  # a's own entry past its (capped) hit: lru, not "freed"
        (11, "x", "kv", 4, 4),
        (15, "x", "kv", 4, 0),
        (15, "a", "kv", 4, 8),
    ]
    assert ends(events) == {"x": (11, "done"), "a": (15, "done"), "w": (16, "done")}


# --------------------------------------------------------------------------- no admission

# a and b both prefill 4 and decode 6 on kv (4 blocks, lifo). side (unbounded) is a second
# memory pool of gpu; w arrives at 4.5 wanting 4 units of side — it would fit at once.
#  t  scheduled                                       admitted  preempted
#  0  a prefill 4, b prefill 4                        a b
#  1  a 1 (size 5, new block), b 1 (size 5, new block: kv full)
#  2-4 a 1, b 1 (sizes 6, 7, 8)
#  5  a needs a 3rd block: victim = the most recently admitted resident, b (cached 8);
#     retry: a grows by evicting b's tail block (4, left 4). The iteration preempted:
#     no admission at all, so w (side) waits although side has room.
#  6  a 1 (size 10: a's 6th step); kv's head b: header max(4, 8) = 8, hit min(4, 8) = 4,
#     its step (recompute 8 - 4 + 1 = 5 tokens) needs size 9: 2 more blocks, 0 free -> no;
#     side is still tried: w admitted, prefill 4
#  7  a released at 7 (10 units, cached 8), w released; b: 2 blocks = 1 free + a's tail
#     (4, left 4): admitted with hit 4, recompute 5 tokens (its 5th step)
#  8  b 1 (its 6th step); run-done at 9
NO_ADMIT_WHEN_PREEMPTED = """
stage gpu step { time 1; }
pool kv { cap 16; block 4; preempt lifo; admit via gpu; }
pool side { admit via gpu; }
session a { arrive at (0); hold kv (max(4, context)) { run gpu prefill (4); run gpu decode (6); } }
session b { arrive at (0); hold kv (max(4, context)) { run gpu prefill (4); run gpu decode (6); } }
session w { arrive at (4.5); hold side (4) { run gpu prefill (4); } }
"""


def test_no_admission_in_an_iteration_that_preempted() -> None:
    sim = sim_of(NO_ADMIT_WHEN_PREEMPTED)
    events = run_all(sim)
    assert_clean(sim)
    assert table(events) == [
        row(0, [("a", "prefill", 4), ("b", "prefill", 4)], ["a", "b"]),
        row(1, [("a", "decode", 1), ("b", "decode", 1)]),
        row(2, [("a", "decode", 1), ("b", "decode", 1)]),
        row(3, [("a", "decode", 1), ("b", "decode", 1)]),
        row(4, [("a", "decode", 1), ("b", "decode", 1)]),
        row(5, [("a", "decode", 1)], [], True),
        row(6, [("a", "decode", 1), ("w", "prefill", 4)], ["w"]),
        row(7, [("b", "recompute", 5)], ["b"]),
        row(8, [("b", "decode", 1)]),
    ]
    p = one(events, "preempt")
    assert (t(p.time), p.session, tuple(p.others), p.get("cached")) == (5, "b", ("a",), 8)
    assert evicts(events, "kv") == [(5, "b", "kv", 4, 4), (7, "a", "kv", 4, 4)]
    assert admits(events, "kv")[-1] == (7, "b", "kv", 8, 4)
    assert ends(events) == {"a": (7, "done"), "w": (7, "done"), "b": (9, "done")}


# --------------------------------------------------------------------------- deadlock

# preempt none, two growing decodes: both fill kv (4 blocks) by t4; at t5 each needs a
# block, both grow-wait, nothing else can ever happen -> deadlock naming a and b; halt.
DEADLOCK = """
stage gpu step { time 1; }
pool kv { cap 16; block 4; preempt none; admit via gpu; }
session a { arrive at (0); hold kv (4) { run gpu prefill (4); run gpu decode (8); } }
session b { arrive at (0); hold kv (4) { run gpu prefill (4); run gpu decode (8); } }
"""


def test_deadlock_names_who_waits_for_what_and_halts() -> None:
    sim = sim_of(DEADLOCK)
    events = run_all(sim)
    assert sim.violation is None
    last = events[-1]
    assert last.moment == "deadlock"
    assert t(last.time) == 5
    assert sorted(last.others) == ["a", "b"]
    waits = dict(tuple(w) for w in last.get("waits"))
    assert sorted(waits) == ["a", "b"]
    assert all("kv" in str(what) for what in waits.values())
    assert sorted((t(e.time), e.session) for e in events if e.moment == "grow-wait") == [
        (5, "a"),
        (5, "b"),
    ]
    assert sim.halted is not None
    assert sim.step() is None
    assert of(events, "end") == []


# Re-admission with a header below the hit: `hold kv (prompt)` with prompt 15, blocks of 16.
# language.md §5: on admission the hit moves from cached to allocated and the rest of the
# header's units are allocated — so the hold holds at least its hit (computed <= size, §8).
#   x holds 16 (1 block), prefills [0,1], sleeps until 6 (then cached 16).
#   a: prompt 15 (1 block), 3 decode steps.
#  t0  x 16, a 15                                   admitted x a (kv: 2 blocks, full)
#  t1  a 1 (size 16)
#  t2  a needs a 2nd block: lifo victim = a itself (cached 16 = 1 whole block); 0 tokens
#  t6  x releases (cached 16); a: header 15, context 16. The hit cap (content-and-reload.md
#      §2, vLLM's num_tokens − 1) changed this: hit = min(1 block, ⌊(max(15, 16) − 1)/16⌋
#      = 0) = 0 (it was 16). So a is admitted with its 15 units (1 block): lru evicts its
#      own cached block (released at t2, now unreachable by its capped hit; 16, left 0);
#      its step recomputes all 16 and takes its token (17 tokens), growing to 17 by
#      evicting x's entry (16, left 0). A hold still holds at least its hit (size =
#      max(U, hit)): here the hit is 0.
#  t7  a 1 (18); released at 8: cached 16
READMIT_BELOW_HIT = """
stage gpu step { time 1; }
pool kv { cap 32; block 16; preempt lifo; admit via gpu; }
session x { arrive at (0); hold kv (16) { run gpu prefill (16); wait (5); } }
session a { arrive at (0); prompt = 15; hold kv (prompt) { run gpu prefill (prompt); run gpu decode (3); } }
"""


def test_readmission_holds_at_least_its_hit() -> None:
    sim = sim_of(READMIT_BELOW_HIT)
    events = run_all(sim)
    assert_clean(sim)
    assert table(events) == [
        row(0, [("x", "prefill", 16), ("a", "prefill", 15)], ["x", "a"]),
        row(1, [("a", "decode", 1)]),
        row(2, [], [], True),
        row(6, [("a", "recompute", 17)], ["a"]),
        row(7, [("a", "decode", 1)]),
    ]
    assert admits(events) == [
        (0, "x", "kv", 16, 0),
        (0, "a", "kv", 15, 0),
        (6, "a", "kv", 15, 0),  # the hit cap: 0, not 16
    ]
    assert evicts(events) == [(6, "a", "kv", 16, 0), (6, "x", "kv", 16, 0)]
    assert releases(events)[-1] == (8, "a", "kv", 18, 16)
