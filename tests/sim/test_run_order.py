"""The order of an iteration's `run-done` events: resident order (language.md §12, "for
each finished run in resident order"), i.e. admission order of each run's hold, even when
the runs joined in this iteration's admission in another order.

Worked out by hand from docs/language.md §4.3 (settling, iterations), §5.4 (`preempt
lifo`), §7 (`run` works on the innermost hold whose pool is the stage's memory) and
§12 (event order). gpu takes 1 s per iteration, unbounded budget and seats.
"""

from __future__ import annotations

from tests.sim.helpers import assert_clean, run_all, sim_of, t
from tests.sim.test_fast import check_same

# kw: 3 units, lifo, memory of gpu (declared first: its queue is tried first); kv: unbounded,
# memory of gpu. b1 and b2 hold kw (1) and, inside it, kv: their runs work on kv (the
# innermost hold on gpu's memory), so their resident order is their kv holds' admission
# order. g holds kw (1) and grows it twice, preempting whichever b is then a resident.
#
#  t  what happens                                              admission order (kw / kv)
#  0  all arrive, enqueue on kw. Iteration: kw admits b1 (kw#0; b1 enqueues on kv), b2
#     (kw#1; waits 2 s), g (kw#2; waits 1 s): kw full. kv admits b1 (kv#3): prefill 2.
#  1  end: b1's prefill done; b1 joins for its decode (a resident). Then g's wait is over:
#     grow kw by 1, no room: lifo victim = newest kw hold whose session is a resident of
#     gpu = b1's (b2 waits, g is no resident): b1 preempted (its kv hold stays, computed
#     2), its kw hold re-queued at the head. g's kw is 2. Iteration: no resident; kw's
#     head b1 does not fit (0 free): not an event.
#  2  b2's wait is over: enqueue on kv. Iteration: kw blocked; kv admits b2 (kv#4): prefill 2.
#  3  end: b2's prefill done; b2 joins for its decode. g's wait is over: grow kw by 1, no
#     room: victim = b2's kw (the only resident): preempted, re-queued at the head: kw
#     queue [b2, b1]. g's kw is 3. Iteration: kw's head b2 does not fit: not an event.
#  4  g's wait is over: it releases kw (3) and ends. Iteration: kw admits b2 (kw#5): it goes
#     back to its decode and takes 1 token at once; then b1 (kw#6): its decode, 1 token.
#     Scheduled in that order [b2, b1]; residents by their kv holds: [b1 (kv#3), b2 (kv#4)].
#  5  end: both decodes are done (1 step each). In resident order: b1's run-done, its
#     releases (kv then kw) and end; then b2's.
NESTED = """
stage gpu step { time 1; }
pool kw { cap 3; block 1; preempt lifo; admit via gpu; }
pool kv { admit via gpu; }
session b1 { arrive at (0);
  hold kw (1) { hold kv (2) { run gpu prefill (2); run gpu decode (1); } } }
session b2 { arrive at (0);
  hold kw (1) { wait (2); hold kv (2) { run gpu prefill (2); run gpu decode (1); } } }
session g { arrive at (0);
  hold kw (1) { wait (1); grow kw (1); wait (2); grow kw (1); wait (1); } }
"""


def test_run_done_in_resident_order_not_the_order_runs_joined() -> None:
    sim = sim_of(NESTED)
    events = run_all(sim)
    assert_clean(sim)
    pre = [(t(e.time), e.session) for e in events if e.moment == "preempt"]
    assert pre == [(1, "b1"), (3, "b2")]
    it = [e for e in events if e.moment == "iteration" and t(e.time) == 4]
    assert [s[0] for s in dict(it[0].data)["scheduled"]] == ["b2", "b1"]
    last = [
        (e.moment, e.session, e.pool)
        for e in events
        if t(e.time) == 5 and e.moment in ("run-done", "release", "end")
    ]
    assert last == [
        ("run-done", "b1", None),
        ("release", "b1", "kv"),
        ("release", "b1", "kw"),
        ("end", "b1", None),
        ("run-done", "b2", None),
        ("release", "b2", "kv"),
        ("release", "b2", "kw"),
        ("end", "b2", None),
    ]


def test_fast_mode_gives_the_same_order() -> None:
    check_same(NESTED, ".")


# The spec where the fast mode first disagreed (t = 75.4067: b[6] and b[7] both finish their
# prefills; they rejoined in admission order b[7], b[6] of their kw holds, while their run
# holds on kv were admitted b[6] (t 60.4) then b[7] (t 62.4): resident order b[6], b[7]).
DIVERGED = """
seed 463;
stage gpu step { budget 8; seats 16; time 1; }
pool kv { cap 47 * 4; block 4; evict lru; preempt lifo; queue fifo; admit via gpu; }
pool kw { cap 40 * 1; block 1; evict lru; preempt lifo; queue fifo; admit via gpu; }
session a[19] {
  arrive every (draw exponential(0.5));
  prompt = draw uniform(1, 4);
  max_tokens = draw uniform(1, 40);
  hold kv (min(max(prompt, context + 1), computed + budget_left(gpu)))
       need (max(prompt, context + 1)) {
    run gpu prefill (prompt);
    run gpu decode (max_tokens - 1);
  }
}
session b[9] {
  arrive every (draw exponential(0.3));
  prompt = draw uniform(1, 4);
  max_tokens = draw uniform(1, 40);
  hold kw (3) {
    hold kv (min(max(prompt, context + 1), computed + budget_left(gpu)))
         need (max(prompt, context + 1)) {
      run gpu prefill (prompt);
      run gpu decode (max_tokens - 1);
    }
  }
}
session c[4] {
  arrive every (draw exponential(0.5));
  prompt = draw uniform(1, 4);
  max_tokens = draw uniform(1, 40);
  hold kv (3) {
    hold kw (min(max(prompt, context + 1), computed + budget_left(gpu)))
         need (max(prompt, context + 1)) {
      run gpu prefill (prompt);
      run gpu decode (max_tokens - 1);
    }
  }
}
"""


def test_nested_holds_in_two_pools_agree_in_fast_mode() -> None:
    check_same(DIVERGED, ".", invariants=True)
