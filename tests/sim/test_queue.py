"""Queue policies at settles: Ascend lanes with aging, head-of-line blocking, never-fit
rejection. Worked out by hand from the Pool reference (queue, cap) and docs/decisions.md."""

from __future__ import annotations

from tests.sim.helpers import (
    admits,
    assert_clean,
    ends,
    of,
    one,
    run_all,
    sim_of,
    t,
)

# --------------------------------------------------------------------------- Ascend lanes

# The Pool reference's lanes with a 3 s threshold, on a pool of one unit admitted at
# settles (no `admit via`); every hold is 1 unit, so exactly one session holds q at a time.
#   blocker  serial 0  t=0     holds q 0..5
#   s1       serial 1  t=1     short (prompt 100)
#   l1       serial 2  t=1.25  long (prompt 200)
#   i1       serial 3  t=4     immediate (long prompt, but immediate = 1)
#   l2       serial 4  t=4.5   long
# Waiters hold 1 s each. Lane key: immediate ? 0 : long && waited >= 3 ? 1 : short ? 2 : 3.
#   t=4.5 (snapshot): i1 (0,3), l1 waited 3.25 -> (1,2), s1 (2,1), l2 waited 0 -> (3,4)
#   t=5  blocker releases: i1 (lane 0) admitted; l1 tried next, does not fit: stop
#   t=6  i1 releases: l1 waited 4.75 -> lane 1; s1 lane 2; l2 waited 1.5 -> lane 3: l1
#   t=7  s1 lane 2; l2 waited 2.5 -> lane 3: s1
#   t=8  l2 (now aged, alone)
# Admission order: blocker, i1 (immediate), l1 (aged long), s1 (short), l2 (long).
# FIFO would have given blocker, s1, l1, i1, l2.
ASCEND = """
pool q {{
  cap 1;
  {queue}
}}
session blocker {{ arrive at (0); immediate = 0; prompt = 200; hold q (1) {{ wait (5); }} }}
session s1 {{ arrive at (1); immediate = 0; prompt = 100; hold q (1) {{ wait (1); }} }}
session l1 {{ arrive at (1.25); immediate = 0; prompt = 200; hold q (1) {{ wait (1); }} }}
session i1 {{ arrive at (4); immediate = 1; prompt = 200; hold q (1) {{ wait (1); }} }}
session l2 {{ arrive at (4.5); immediate = 0; prompt = 200; hold q (1) {{ wait (1); }} }}
"""
LANES = (
    "queue by (immediate ? 0 : prompt > 128 && waited >= 3 ? 1 : prompt <= 128 ? 2 : 3,\n"
    "          serial);"
)


def test_ascend_lanes_admit_immediate_aged_long_short_long() -> None:
    sim = sim_of(ASCEND.format(queue=LANES))
    sim.run_until(lambda e: e.moment == "enqueue" and e.session == "l2")
    assert t(sim.time) == 4.5
    queue = sim.snapshot().pool("q").queue
    assert [(x.session, tuple(x.keys)) for x in queue] == [
        ("i1", (0, 3)),
        ("l1", (1, 2)),
        ("s1", (2, 1)),
        ("l2", (3, 4)),
    ]
    assert [t(x.waited) for x in queue] == [0.5, 3.25, 3.5, 0]
    assert [x.position for x in queue] == [0, 1, 2, 3]

    events = run_all(sim)
    assert_clean(sim)
    assert [(a[0], a[1]) for a in admits(events)] == [
        (0, "blocker"),
        (5, "i1"),
        (6, "l1"),
        (7, "s1"),
        (8, "l2"),
    ]
    assert ends(events)["l2"] == (9, "done")


def test_fifo_keeps_enqueue_order() -> None:
    sim = sim_of(ASCEND.format(queue="queue fifo;"))
    events = run_all(sim)
    assert_clean(sim)
    assert [(a[0], a[1]) for a in admits(events)] == [
        (0, "blocker"),
        (5, "s1"),
        (6, "l1"),
        (7, "i1"),
        (8, "l2"),
    ]


# `waited` counts from the current hold's entry into the queue and resets on re-entry.
#   blocker (serial 0) holds q 0..5. L (serial 1, long) arrives at 0 and holds q twice.
#   S (serial 2, short) arrives at 5.5.
#   t=5  L waited 5 -> lane 1: admitted; it holds 1 s
#   t=6  L releases and enqueues its second hold: waited 0 -> lane 3; S is lane 2: S first
#        (had waited not reset, L would be in lane 1 and go first)
#   t=7  S releases; L (waited 1, lane 3) alone: admitted
REENTRY = """
pool q {
  cap 1;
  queue by (immediate ? 0 : prompt > 128 && waited >= 3 ? 1 : prompt <= 128 ? 2 : 3,
            serial);
}
session blocker { arrive at (0); immediate = 0; prompt = 200; hold q (1) { wait (5); } }
session L { arrive at (0); immediate = 0; prompt = 200; repeat (2) { hold q (1) { wait (1); } } }
session S { arrive at (5.5); immediate = 0; prompt = 100; hold q (1) { wait (1); } }
"""


def test_waited_resets_on_reentry() -> None:
    sim = sim_of(REENTRY)
    events = run_all(sim)
    assert_clean(sim)
    assert [(a[0], a[1]) for a in admits(events)] == [
        (0, "blocker"),
        (5, "L"),
        (6, "S"),
        (7, "L"),
    ]
    assert ends(events) == {"blocker": (5, "done"), "S": (7, "done"), "L": (8, "done")}


# --------------------------------------------------------------------------- head of line

# q: 10 units, no block, fifo, admitted at settles.
#   h at 0 holds 6 until 4. big at 1 wants 8 (4 free: does not fit). small at 2 wants 2: it
#   would fit (4 free) but only the selected hold — big — is tried: it waits.
#   t=4: h releases (nothing computed, nothing cached): big (8) then small (2) both admitted.
HOL = """
pool q { cap 10; }
session h { arrive at (0); hold q (6) { wait (4); } }
session big { arrive at (1); hold q (8) { wait (1); } }
session small { arrive at (2); hold q (2) { wait (1); } }
"""


def test_head_of_line_blocking() -> None:
    sim = sim_of(HOL)
    sim.run_until(lambda e: e.moment == "enqueue" and e.session == "small")
    q = sim.snapshot().pool("q")
    assert [x.session for x in q.queue] == ["big", "small"]
    assert (q.allocated, q.free) == (6, 4)
    events = run_all(sim)
    assert_clean(sim)
    assert admits(events) == [
        (0, "h", "q", 6, 0),
        (4, "big", "q", 8, 0),
        (4, "small", "q", 2, 0),
    ]
    assert ends(events) == {"h": (4, "done"), "big": (5, "done"), "small": (5, "done")}


# --------------------------------------------------------------------------- never fits

# kv: 16 units in blocks of 4. A hold whose units, reserve (when larger) or need is above
# the cap can never fit: rejected (at its first attempt), its session ends how=rejected.
# A hold that would grow past its reserve is rejected too. The others carry on.
#   a: 20 units > 16                    -> reject, end rejected
#   b: 4 units, reserve 32 > 16         -> reject
#   c: 4 units                          -> admitted at 0, done at 1
#   d: 8 units, need 20 > 16            -> reject (docs/decisions.md: need counts)
#   e: 4 units, reserve 8, grows by 8   -> admitted, then rejected at its grow (12 > 8); its
#      hold is given back
#   f: 16 units (= cap) arrives at 0.5  -> fits once c's 4 are back (c done at 1; e's 4 back)
NEVER_FITS = """
pool kv { cap 16; block 4; }
session a { arrive at (0); hold kv (20) { wait (1); } }
session b { arrive at (0); hold kv (4) reserve (32) { wait (1); } }
session c { arrive at (0); hold kv (4) { wait (1); } }
session d { arrive at (0); hold kv (8) need (20) { wait (1); } }
session e { arrive at (0); hold kv (4) reserve (8) { wait (0.25); grow kv (8); wait (1); } }
session f { arrive at (0.5); hold kv (16) { wait (1); } }
"""


def test_never_fit_holds_are_rejected_and_the_rest_continue() -> None:
    sim = sim_of(NEVER_FITS)
    events = run_all(sim)
    assert_clean(sim)
    rejected = {e.session for e in events if e.moment == "reject"}
    assert rejected == {"a", "b", "d", "e"}
    ra = one(events, "reject", "a")
    assert (ra.pool, ra.units) == ("kv", 20)
    assert ra.get("reason")
    assert t(one(events, "reject", "e").time) == 0.25
    assert ends(events) == {
        "a": (0, "rejected"),
        "b": (0, "rejected"),
        "c": (1, "done"),
        "d": (0, "rejected"),
        "e": (0.25, "rejected"),
        "f": (2, "done"),
    }
    assert [(a[0], a[1]) for a in admits(events)] == [(0, "c"), (0, "e"), (1, "f")]
    assert of(events, "admit", "a") == []
    snap = sim.snapshot()
    assert snap.counts.rejected == 4
    assert snap.counts.done == 2
    assert snap.counts.arrived == 6
    assert snap.pool("kv").allocated == 0
