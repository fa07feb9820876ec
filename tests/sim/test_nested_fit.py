"""An outer hold re-admitted after a preemption while its session's run works on an inner
hold: the run's tokens are the inner hold's, and they count in the fit of the pool they
grow, not of the outer hold's pool.

Worked out by hand from docs/language.md §4.3 (settling; an iteration serves residents,
then admits: "Those tokens count in the fit: if its hold would have to grow for them and
the pool cannot give the units, it does not fit"; admission never preempts), §5.4
(`preempt lifo`: the victim is the newest hold on the pool whose session is a resident; it
resumes the run it was in), §7 (`run` works on the innermost hold whose pool is the
stage's memory) and §8.2 (fit). gpu takes 1 s per iteration; blocks are 1 unit.
"""

from __future__ import annotations

from tests.sim.helpers import assert_clean, run_all, sim_of, t
from tests.sim.test_fast import check_same

# b holds kw (1) and, inside it, kv (10), whose prefill of 10 its run works on (kv is the
# innermost hold on gpu's memory). g holds kw (1) and grows it by 2 at t = 1, preempting b's
# kw hold (b is then gpu's only resident) while b's kv hold stays admitted.
#
#  t  what happens                                                      kw used/3  kv computed
#  0  iteration: kw admits b (kw#0; b queues on kv), g (kw#1; waits 1 s).   2        0
#     kv admits b: size 10, first run min(10 - 0, budget 8) = 8 tokens.
#  1  end: kv computed 8 (prefill not done). g grows kw 1 -> 3: 2 blocks      3        8
#     wanted, 1 free: lifo victim b's kw (kv stays), re-queued at the head.
#     Iteration: kw's head b, size 1, 0 free: blocked (not an event).
#  2  g releases kw (3) and ends. Iteration: kw's head b: size 1, hit 0.      1        8
#     Its run goes on on kv: 10 - 8 = 2 tokens, within the budget (8);
#     kv's hold already has 10 units, so they grow nothing. kw's fit is its
#     own 1 unit <= 3 free: admitted; b rejoins and takes its 2 tokens.
#     (Counted as kw's: tokens from kw's computed 0, min(10, 8) = 8, a fit of
#     8 units on kw's cap of 3: blocked for good.)
#  3  end: kv computed 10: run-done; b releases kv then kw, and ends.         0       10
RESUME = """
stage gpu step { budget 8; time 1; }
pool kw { cap 3; block 1; preempt lifo; admit via gpu; }
pool kv { admit via gpu; }
session b { arrive at (0);
  hold kw (1) { hold kv (10) { run gpu prefill (10); } } }
session g { arrive at (0);
  hold kw (1) { wait (1); grow kw (2); wait (1); } }
"""


def test_outer_hold_resumes_with_its_inner_runs_tokens() -> None:
    sim = sim_of(RESUME)
    events = run_all(sim)
    assert_clean(sim)
    pre = [(t(e.time), e.session, e.pool) for e in events if e.moment == "preempt"]
    assert pre == [(1, "b", "kw")]
    admits = [(t(e.time), e.pool, e.units) for e in events if e.moment == "admit"]
    assert admits == [(0, "kw", 1), (0, "kw", 1), (0, "kv", 10), (2, "kw", 1)]
    sched = [
        (t(e.time), [tuple(x) for x in dict(e.data)["scheduled"]])
        for e in events
        if e.moment == "iteration"
    ]
    assert sched == [(0, [("b", "prefill", 8)]), (2, [("b", "prefill", 2)])]
    last = [(t(e.time), e.moment, e.session, e.pool) for e in events[-4:]]
    assert last == [
        (3, "run-done", "b", None),
        (3, "release", "b", "kv"),
        (3, "release", "b", "kw"),
        (3, "end", "b", None),
    ]


def test_resume_agrees_in_fast_mode() -> None:
    check_same(RESUME, ".", invariants=True)


# The same, with kv bounded (12 units) and b's kv hold 4 units that its prefill grows; o
# holds 6 units of kv from t = 1 to t = 3 and runs nothing. The resumed run's tokens must
# find room in kv, whose hold they grow: while they cannot, kw's admission is blocked
# (admission never preempts, nor waits to grow).
#
#  t  what happens                                              kw used  kv: b size/computed, o, free
#  0  iteration: kw admits b, g. kv admits b: size 4, first run     2        4/0, -, 8
#     min(10, 4) = 4 tokens, grown 4: fits. b takes 4 (no growth).
#  1  end: b's kv computed 4. g grows kw: victim b's kw, re-queued.  3        4/4, -, 8
#     o arrives, queues on kv. Iteration: kw's b, 0 free: blocked.
#     kv admits o (6 units, its first statement no run): an event
#     of no tokens (lasts no time); the next one moves nothing.     3        4/4, 6, 2
#  2  g releases kw, ends. Iteration: kw's b: size 1 fits (3 free);  1        4/4, 6, 2
#     its run's tokens min(10 - 4, 4) = 4 grow b's kv 4 -> 8: 4
#     blocks, 2 free: blocked (not an event).
#  3  o releases kv (nothing computed: freed), ends. Iteration:      1        4/4, -, 8
#     kv has 8 free >= 4: kw admits b (size 1); b rejoins, grows kv
#     to 8 (4 blocks) and takes 4 tokens.                            1        8/4, -, 4
#  4  end: computed 8. Iteration: b takes 2, grows kv to 10 (2).      1       10/8, -, 2
#  5  end: computed 10: run-done; b releases kv then kw, ends.       0        -
BOUNDED = """
stage gpu step { budget 4; time 1; }
pool kw { cap 3; block 1; preempt lifo; admit via gpu; }
pool kv { cap 12; block 1; admit via gpu; }
session b { arrive at (0);
  hold kw (1) { hold kv (4) { run gpu prefill (10); } } }
session g { arrive at (0);
  hold kw (1) { wait (1); grow kw (2); wait (1); } }
session o { arrive at (1);
  hold kv (6) { wait (2); } }
"""


def test_resumed_tokens_must_find_room_in_the_pool_they_grow() -> None:
    sim = sim_of(BOUNDED)
    events = run_all(sim)
    assert_clean(sim)
    assert not [e for e in events if e.moment == "grow-wait"]
    admits = [(t(e.time), e.session, e.pool, e.units) for e in events if e.moment == "admit"]
    assert admits == [
        (0, "b", "kw", 1),
        (0, "g", "kw", 1),
        (0, "b", "kv", 4),
        (1, "o", "kv", 6),
        (3, "b", "kw", 1),
    ]
    grows = [(t(e.time), e.session, e.pool, e.units) for e in events if e.moment == "grow"]
    assert grows == [(1, "g", "kw", 3), (3, "b", "kv", 8), (4, "b", "kv", 10)]
    sched = [
        (t(e.time), [tuple(x) for x in dict(e.data)["scheduled"]])
        for e in events
        if e.moment == "iteration" and dict(e.data)["tokens"]
    ]
    assert sched == [
        (0, [("b", "prefill", 4)]),
        (3, [("b", "prefill", 4)]),
        (4, [("b", "prefill", 2)]),
    ]
    last = [(t(e.time), e.moment, e.session, e.pool) for e in events[-4:]]
    assert last == [
        (5, "run-done", "b", None),
        (5, "release", "b", "kv"),
        (5, "release", "b", "kw"),
        (5, "end", "b", None),
    ]


def test_bounded_resume_agrees_in_fast_mode() -> None:
    check_same(BOUNDED, ".", invariants=True)
