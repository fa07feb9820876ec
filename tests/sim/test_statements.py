"""`grow` statements (lifo preempting residents, waiting), `if`, growth past the cap, and
the stepping API (step_iteration, run(until), run_until, history across a halt).

Worked out by hand from language.md §5 and docs/decisions.md ("grow POOL (N) statements grow
at once; with no room, lifo preempts residents of the pool's stage (most recent first) while
that helps, then the session waits (grow-wait) and retries at every settle").
"""

from __future__ import annotations

from tests.sim.helpers import (
    admits,
    assert_clean,
    check_structure,
    comparable,
    ends,
    evicts,
    grows,
    of,
    one,
    row,
    run_all,
    sim_of,
    t,
    table,
)

# kv: 4 blocks of 4, memory of gpu. r: prompt 4, then 10 decode steps. g arrives at 0.5,
# prefills 4, then grows its hold by 8 (to 12 = 3 blocks) and sleeps 1 s.
#  t0  r prefill 4 (1 block)                                   admitted r
#  t1  r 1 (size 5: 2nd block); g admitted (1 block), prefill 4
#  t2  g's prefill is done; `grow kv (8)` needs 2 more blocks, 1 free:
#      lifo: preempt r, the resident (cached 4: 1 block, its partial block freed) -> 2 free:
#      g grows to 12. At t2 r cannot come back (its step needs a block; 0 free).
#  t3  g releases (12: cached 4 = 1 block; 2 blocks freed). r: hit 4, recompute
#      5 - 4 + 1 = 2 tokens (size 6: 2nd block from the free ones)  admitted r
#  t4-t11 r 1 each (sizes 7..14); at t6 (size 9) the last free block; at t10 (size 13) it
#      evicts g's entry (4, left 0). run-done at 12.
GROW_LIFO = """
stage gpu step {{ time 1; }}
pool kv {{ cap 16; block 4; preempt {preempt}; admit via gpu; }}
session r {{ arrive at (0); hold kv (4) {{ run gpu prefill (4); run gpu decode (10); }} }}
session g {{ arrive at (0.5); hold kv (4) {{ run gpu prefill (4); grow kv (8); wait (1); }} }}
"""


def test_grow_statement_preempts_the_resident_under_lifo() -> None:
    sim = sim_of(GROW_LIFO.format(preempt="lifo"))
    events = run_all(sim)
    assert_clean(sim)
    d = [("r", "decode", 1)]
    assert table(events) == [
        row(0, [("r", "prefill", 4)], ["r"]),
        row(1, [("r", "decode", 1), ("g", "prefill", 4)], ["g"]),
        row(3, [("r", "recompute", 2)], ["r"]),
        *[row(x, d) for x in range(4, 12)],
    ]
    p = one(events, "preempt")
    assert (t(p.time), p.session, p.pool, tuple(p.others), p.get("cached")) == (
        2,
        "r",
        "kv",
        ("g",),
        4,
    )
    assert grows(events, "g") == [(2, "g", "kv", 12)]
    assert admits(events) == [
        (0, "r", "kv", 4, 0),
        (1, "g", "kv", 4, 0),
        (3, "r", "kv", 4, 4),
    ]
    assert evicts(events) == [(10, "g", "kv", 4, 0)]
    assert ends(events) == {"g": (3, "done"), "r": (12, "done")}


# The same under preempt none: g's grow waits (grow-wait at 2) and retries at every settle;
# r keeps decoding (sizes 6..12, taking the last free block at t5 for size 9) until it needs
# a 4th block at t9 (size 13): it waits too, nothing can move: deadlock at 9 naming both.
def test_grow_statement_waits_under_preempt_none_then_deadlock() -> None:
    sim = sim_of(GROW_LIFO.format(preempt="none"))
    events = run_all(sim)
    assert sim.violation is None
    d = [("r", "decode", 1)]
    assert table(events) == [
        row(0, [("r", "prefill", 4)], ["r"]),
        row(1, [("r", "decode", 1), ("g", "prefill", 4)], ["g"]),
        *[row(x, d) for x in range(2, 9)],
    ]
    waits = [(t(e.time), e.session, e.units) for e in events if e.moment == "grow-wait"]
    assert waits == [(2, "g", 12), (9, "r", 13)]
    assert of(events, "preempt") == []
    last = events[-1]
    assert (last.moment, t(last.time), sorted(last.others)) == ("deadlock", 9, ["g", "r"])
    assert sim.halted is not None


def test_grow_past_the_cap_is_rejected() -> None:
    # cap 16: a hold of 4 that grows by 16 would be 20 > cap: rejected at 0.5, session ends.
    sim = sim_of(
        """
        pool kv { cap 16; block 4; }
        session h { arrive at (0); hold kv (4) { wait (0.5); grow kv (16); wait (1); } }
        session k { arrive at (0); hold kv (12) { wait (2); } }
        """
    )
    events = run_all(sim)
    assert_clean(sim)
    r = one(events, "reject", "h")
    assert (t(r.time), r.pool) == (0.5, "kv")
    assert ends(events) == {"h": (0.5, "rejected"), "k": (2, "done")}
    assert sim.snapshot().pool("kv").allocated == 0


def test_if_else_and_attributes() -> None:
    # s[0] (serial 0) holds q; s[1] sleeps 2 s instead.
    sim = sim_of(
        """
        pool q { cap 8; }
        session s[2] {
          arrive at (0);
          n = serial * 3 + 1;
          if (serial == 0) { hold q (n + 1) { wait (1); } } else { wait (2); }
        }
        """
    )
    events = run_all(sim)
    assert_clean(sim)
    assert admits(events) == [(0, "s[0]", "q", 2, 0)]
    assert ends(events) == {"s[0]": (1, "done"), "s[1]": (2, "done")}


# --------------------------------------------------------------------------- stepping API

STEPPING = GROW_LIFO.format(preempt="lifo")


def test_step_iteration_and_run_until() -> None:
    sim = sim_of(STEPPING)
    first = sim.step_iteration()
    assert first[-1].moment == "iteration-end"
    assert t(first[-1].time) == 1
    assert [e.moment for e in first].count("iteration") == 1
    e = sim.run_until(lambda e: e.moment == "preempt")
    assert e is not None and e.moment == "preempt" and t(e.time) == 2
    assert sim.events[sim.cursor] == e
    assert sim.run_until(lambda e: e.moment == "check-failed") is None
    assert sim.finished


def test_run_until_time_stops_before_passing_it() -> None:
    sim = sim_of(STEPPING)
    sim.run(until=3.5)
    done = list(sim.events)[: sim.cursor + 1]
    assert done and all(e.time <= 3.5 for e in done)
    assert t(done[-1].time) == 3
    nxt = sim.step()
    assert nxt is not None and nxt.time > 3.5


def test_history_across_a_halt() -> None:
    # Back from a deadlock and forward again: the same deadlock, the same events.
    sim = sim_of(GROW_LIFO.format(preempt="none"))
    events = run_all(sim)
    assert events[-1].moment == "deadlock"
    halted_snap = comparable(sim.snapshot())
    sim.back()
    assert sim.halted is None
    assert sim.cursor == len(events) - 2
    again = sim.step()
    assert again == events[-1]
    assert sim.halted is not None
    assert comparable(sim.snapshot()) == halted_snap


def test_block_maps_agree_with_the_accounting_at_every_event() -> None:
    from tests.sim.test_cache import SPILL_SPEC
    from tests.sim.test_preempt import NO_ADMIT_WHEN_PREEMPTED

    for spec in (SPILL_SPEC, NO_ADMIT_WHEN_PREEMPTED, STEPPING):
        sim = sim_of(spec)
        while sim.step() is not None:
            check_structure(sim.snapshot())
        assert_clean(sim)


# A `grow` statement right after an iteration end, while another session's run finished in
# the same iteration. language.md §3 (4): "finished runs leave the stage and their sessions
# go on" — so b, whose prefill also finished at t1, is no longer a resident of gpu when a's
# grow (run-done first: a was admitted first) finds kv full, and cannot be its lifo victim.
#   t0  a (4) and b (4) admitted, both prefill 4: kv (2 blocks) full
#   t1  a's run-done; `grow kv (4)` needs a block: no free, no cache, no resident to
#       preempt: grow-wait. b's run-done; b sleeps 1 s.
#   t2  b releases (cached 4); at the settle a's grow evicts b's entry (4, left 0), grows to 8
#   t3  a releases (8 units, computed 4: cached 4)
GROW_AFTER_ITERATION = """
stage gpu step { time 1; }
pool kv { cap 8; block 4; preempt lifo; admit via gpu; }
session a { arrive at (0); hold kv (4) { run gpu prefill (4); grow kv (4); wait (1); } }
session b { arrive at (0); hold kv (4) { run gpu prefill (4); wait (1); } }
"""


def test_grow_after_an_iteration_does_not_preempt_a_finished_run() -> None:
    sim = sim_of(GROW_AFTER_ITERATION)
    events = run_all(sim)
    assert_clean(sim)
    assert of(events, "preempt") == []
    waits = [(t(e.time), e.session, e.units) for e in events if e.moment == "grow-wait"]
    assert waits == [(1, "a", 8)]
    assert grows(events, "a") == [(2, "a", "kv", 8)]
    assert evicts(events) == [(2, "b", "kv", 4, 0)]
    assert ends(events) == {"b": (2, "done"), "a": (3, "done")}
