"""Step stages (exclusive prefill, chunked vs whole prefill, `time`), link stages, families
(joined and shared), arrivals (`at`, `every`, CSV rows) and `serial`.

Worked out by hand from language.md §3-§5 and docs/decisions.md.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.sim.helpers import (
    admits,
    assert_clean,
    ends,
    evicts,
    grows,
    of,
    row,
    run_all,
    run_dones,
    sim_of,
    t,
    table,
)

# --------------------------------------------------------------------------- exclusive prefill

# budget 8. a: prefill 4, decode 3. b arrives at 0.5: header min(8, computed + budget_left),
# prefill 8, decode 2.
# serve exclusive prefill (nano-vllm / vLLM v0): an iteration is prefill-only or decode-only.
#  t0  a prefill 4                                   admitted a
#  t1  a's decode is tentative; b fits with the *full* budget (the cancelled decode takes
#      none): header min(8, 0 + 8) = 8 -> b prefill 8; a takes nothing (its grow to 5 is
#      not done)                                     admitted b
#  t2  no waiting prefill: decodes: a 1 (size 5: new block), b 1 (size 9: new block)
#  t3  a 1, b 1 -> b's 2 steps done: run-done at 4
#  t4  a 1 -> a's 3 steps done: run-done at 5
# Shared iterations (no exclusive):
#  t0  a prefill 4
#  t1  a 1 (size 5), then b: header min(8, 0 + 7) = 7 -> chunk 7    admitted b
#  t2  a 1, b prefill 1 (size 8)
#  t3  a 1 (a done at 4), b decode 1 (size 9)
#  t4  b 1 (done at 5)
EXCLUSIVE = """
stage gpu step {{ budget 8; time 1; {opt} }}
pool kv {{ cap 64; block 4; preempt lifo; admit via gpu; }}
session a {{ arrive at (0); hold kv (4) {{ run gpu prefill (4); run gpu decode (3); }} }}
session b {{
  arrive at (0.5);
  hold kv (min(8, computed + budget_left(gpu))) {{ run gpu prefill (8); run gpu decode (2); }}
}}
"""


def test_exclusive_prefill_displaces_decodes() -> None:
    sim = sim_of(EXCLUSIVE.format(opt="serve exclusive prefill;"))
    events = run_all(sim)
    assert_clean(sim)
    assert table(events) == [
        row(0, [("a", "prefill", 4)], ["a"]),
        row(1, [("b", "prefill", 8)], ["b"]),
        row(2, [("a", "decode", 1), ("b", "decode", 1)]),
        row(3, [("a", "decode", 1), ("b", "decode", 1)]),
        row(4, [("a", "decode", 1)]),
    ]
    assert grows(events, "a") == [(2, "a", "kv", 5)]
    assert [x for x in run_dones(events) if x[2] == "decode"] == [
        (4, "b", "decode"),
        (5, "a", "decode"),
    ]


def test_shared_iterations_without_exclusive_prefill() -> None:
    sim = sim_of(EXCLUSIVE.format(opt=""))
    events = run_all(sim)
    assert_clean(sim)
    assert table(events) == [
        row(0, [("a", "prefill", 4)], ["a"]),
        row(1, [("a", "decode", 1), ("b", "prefill", 7)], ["b"]),
        row(2, [("a", "decode", 1), ("b", "prefill", 1)]),
        row(3, [("a", "decode", 1), ("b", "decode", 1)]),
        row(4, [("b", "decode", 1)]),
    ]
    assert grows(events, "a") == [(1, "a", "kv", 5)]
    assert ends(events) == {"a": (4, "done"), "b": (5, "done")}


# --------------------------------------------------------------------------- chunked vs whole

# budget 8; headers min(P, computed + budget_left(gpu)) as in language.md §9.
# a prompt 6, b prompt 4, c prompt 2, all at 0, declared in that order.
#   chunked: t0 a 6, b chunk 2 (budget gone: c not tried); t1 b 2 more, c 2
#   whole:   t0 a 6; b needs all 4 > 2 left: it does not fit and blocks c; t1 b 4, c 2
CHUNKS = """
stage gpu step {{ budget 8; time 1; prefill {mode}; }}
pool kv {{ cap 64; block 4; admit via gpu; }}
session a {{ arrive at (0); hold kv (min(6, computed + budget_left(gpu))) {{ run gpu prefill (6); }} }}
session b {{ arrive at (0); hold kv (min(4, computed + budget_left(gpu))) {{ run gpu prefill (4); }} }}
session c {{ arrive at (0); hold kv (min(2, computed + budget_left(gpu))) {{ run gpu prefill (2); }} }}
"""


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        (
            "chunked",
            [
                row(0, [("a", "prefill", 6), ("b", "prefill", 2)], ["a", "b"]),
                row(1, [("b", "prefill", 2), ("c", "prefill", 2)], ["c"]),
            ],
        ),
        (
            "whole",
            [
                row(0, [("a", "prefill", 6)], ["a"]),
                row(1, [("b", "prefill", 4), ("c", "prefill", 2)], ["b", "c"]),
            ],
        ),
    ],
)
def test_chunked_vs_whole_prefill(mode: str, expected: list[tuple[object, ...]]) -> None:
    sim = sim_of(CHUNKS.format(mode=mode))
    events = run_all(sim)
    assert_clean(sim)
    assert table(events) == expected
    assert all(sum(s[2] for s in x[1]) <= 8 for x in table(events))
    assert ends(events) == {"a": (1, "done"), "b": (2, "done"), "c": (2, "done")}


# A prompt larger than the whole budget: chunked, it is served in chunks of the budget; whole,
# it can never be scheduled, blocks the queue, and nothing can ever move: a deadlock.
BIG_PROMPT = """
stage gpu step {{ budget 8; time 1; prefill {mode}; }}
pool kv {{ cap 64; block 4; admit via gpu; }}
session big {{ arrive at (0); hold kv (min(12, computed + budget_left(gpu))) {{ run gpu prefill (12); }} }}
session small {{ arrive at (0); hold kv (min(2, computed + budget_left(gpu))) {{ run gpu prefill (2); }} }}
"""


def test_prompt_over_budget_chunked() -> None:
    sim = sim_of(BIG_PROMPT.format(mode="chunked"))
    events = run_all(sim)
    assert_clean(sim)
    # t0 big 8 (budget gone); t1 big 4, small 2
    assert table(events) == [
        row(0, [("big", "prefill", 8)], ["big"]),
        row(1, [("big", "prefill", 4), ("small", "prefill", 2)], ["small"]),
    ]
    assert grows(events, "big") == [(1, "big", "kv", 12)]


def test_prompt_over_budget_whole_blocks_forever() -> None:
    sim = sim_of(BIG_PROMPT.format(mode="whole"))
    events = run_all(sim)
    assert sim.violation is None
    assert of(events, "admit") == []
    assert of(events, "iteration") == []
    last = events[-1]
    assert last.moment == "deadlock"
    assert t(last.time) == 0
    assert sorted(last.others) == ["big", "small"]
    assert sim.halted is not None


# --------------------------------------------------------------------------- stage time


def test_stage_time_expression_reads_tokens() -> None:
    # time 0.5 + 0.25 * tokens: prefill 4 -> 1.5 s [0, 1.5]; each decode step 0.75 s:
    # [1.5, 2.25], [2.25, 3]. run-done decode at 3.
    sim = sim_of(
        """
        stage gpu step { time 0.5 + 0.25 * tokens; }
        pool kv { admit via gpu; }
        session a { hold kv (4) { run gpu prefill (4); run gpu decode (2); } }
        """
    )
    events = run_all(sim)
    assert_clean(sim)
    its = [
        (t(e.time), e.get("tokens"), e.get("duration")) for e in events if e.moment == "iteration"
    ]
    assert [(x[0], x[1]) for x in its] == [(0, 4), (1.5, 1), (2.25, 1)]
    assert [t(x[2]) for x in its] == [1.5, 0.75, 0.75]
    assert [t(e.time) for e in events if e.moment == "iteration-end"] == [1.5, 2.25, 3]
    assert run_dones(events) == [(1.5, "a", "prefill"), (3, "a", "decode")]


# --------------------------------------------------------------------------- families

# kv[2] joined member for member with gpu[2]; each member holds one block of 4.
# Five sessions arrive at 0; each routes to the member with the fewest queued holds at its
# hold statement (ties to the lowest index), evaluated as it enqueues:
#   s[0]: (0,0) -> kv[0]; s[1]: (1,0) -> kv[1]; s[2]: (1,1) -> kv[0]; s[3]: (2,1) -> kv[1];
#   s[4]: (2,2) -> kv[0]
# Each prefills 4 on its joined gpu member [start, +1], sleeps 10 s, releases (entry 4).
#   kv[0]: s[0] at 0, s[2] at 11 (evicts s[0]'s entry), s[4] at 22 (evicts s[2]'s)
#   kv[1]: s[1] at 0, s[3] at 11 (evicts s[1]'s entry)
JOINED = """
stage gpu[2] step { time 1; }
pool kv[2] { cap 4; block 4; admit via gpu; }
session s[5] {
  arrive at (0);
  hold kv[argmin(kv, queued)] (4) { run gpu prefill (4); wait (10); }
}
"""


def test_family_joined_member_for_member_with_argmin_routing() -> None:
    sim = sim_of(JOINED)
    events = run_all(sim)
    assert_clean(sim)
    enq = [(e.session, e.pool) for e in events if e.moment == "enqueue"]
    assert enq == [
        ("s[0]", "kv[0]"),
        ("s[1]", "kv[1]"),
        ("s[2]", "kv[0]"),
        ("s[3]", "kv[1]"),
        ("s[4]", "kv[0]"),
    ]
    assert admits(events) == [
        (0, "s[0]", "kv[0]", 4, 0),
        (0, "s[1]", "kv[1]", 4, 0),
        (11, "s[2]", "kv[0]", 4, 0),
        (11, "s[3]", "kv[1]", 4, 0),
        (22, "s[4]", "kv[0]", 4, 0),
    ]
    assert table(events, "gpu[0]") == [
        row(0, [("s[0]", "prefill", 4)], ["s[0]"]),
        row(11, [("s[2]", "prefill", 4)], ["s[2]"]),
        row(22, [("s[4]", "prefill", 4)], ["s[4]"]),
    ]
    assert table(events, "gpu[1]") == [
        row(0, [("s[1]", "prefill", 4)], ["s[1]"]),
        row(11, [("s[3]", "prefill", 4)], ["s[3]"]),
    ]
    # s[4]'s admission at 22 evicts s[2]'s entry (released at 22) in turn.
    assert evicts(events) == [
        (11, "s[0]", "kv[0]", 4, 0),
        (11, "s[1]", "kv[1]", 4, 0),
        (22, "s[2]", "kv[0]", 4, 0),
    ]
    assert ends(events)["s[4]"] == (33, "done")
    snap = sim.snapshot()
    assert [p.label for p in snap.pools] == ["kv[0]", "kv[1]"]
    assert [s.label for s in snap.stages] == ["gpu[0]", "gpu[1]"]


# A family of one stage is shared by every member (N–1): gpu serves kv[0] then kv[1] (pools
# in declaration order, members by index). Four sessions at 0, routed by serial % 2:
# c[0], c[2] -> kv[0]; c[1], c[3] -> kv[1]. One iteration at 0 admits kv[0]'s queue first.
SHARED = """
stage gpu step { time 1; }
pool kv[2] { cap 64; block 4; admit via gpu; }
session c[4] { arrive at (0); hold kv[serial % 2] (4) { run gpu prefill (4); } }
"""


def test_family_shared_stage_routed_by_serial() -> None:
    sim = sim_of(SHARED)
    events = run_all(sim)
    assert_clean(sim)
    assert table(events, "gpu") == [
        row(
            0,
            [
                ("c[0]", "prefill", 4),
                ("c[2]", "prefill", 4),
                ("c[1]", "prefill", 4),
                ("c[3]", "prefill", 4),
            ],
            ["c[0]", "c[2]", "c[1]", "c[3]"],
        )
    ]
    assert [(a[1], a[2]) for a in admits(events)] == [
        ("c[0]", "kv[0]"),
        ("c[2]", "kv[0]"),
        ("c[1]", "kv[1]"),
        ("c[3]", "kv[1]"),
    ]
    assert [(a[0], a[1]) for a in admits(events)] == [
        (0, "c[0]"),
        (0, "c[2]"),
        (0, "c[1]"),
        (0, "c[3]"),
    ]


# --------------------------------------------------------------------------- links

SEND = """
stage pcie link {{ rate 4; lanes {lanes}; }}
session s[3] {{ arrive at (0); send pcie (8); }}
"""


@pytest.mark.parametrize(("lanes", "wakes"), [(1, [2, 4, 6]), (2, [2, 2, 4])])
def test_send_occupies_a_lane_for_work_over_rate_fifo(lanes: int, wakes: list[float]) -> None:
    # 8 work at rate 4: 2 s per job; one lane serves s[0], s[1], s[2] in turn; two lanes
    # serve s[0] and s[1] together, then s[2].
    sim = sim_of(SEND.format(lanes=lanes))
    events = run_all(sim)
    assert_clean(sim)
    assert [(t(e.time), e.session, e.stage) for e in events if e.moment == "send"] == [
        (0, "s[0]", "pcie"),
        (0, "s[1]", "pcie"),
        (0, "s[2]", "pcie"),
    ]
    woke = sorted((t(e.time), e.session) for e in events if e.moment == "wake")
    assert woke == sorted(zip(wakes, ["s[0]", "s[1]", "s[2]"], strict=True))
    assert all(e.get("reason") == "send" for e in events if e.moment == "wake")
    assert {s: v[0] for s, v in ends(events).items()} == dict(
        zip(["s[0]", "s[1]", "s[2]"], wakes, strict=True)
    )


# --------------------------------------------------------------------------- arrivals


def test_arrive_every_and_serial_order() -> None:
    # b2 is declared first and arrives at 1 (both members); a1 arrives every 0.5: a1[0] at
    # 0.5 (after one gap), a1[1] at 1. serial: a1[0] 0; at t=1 by declaration then index:
    # b2[0] 1, b2[1] 2, a1[1] 3.
    sim = sim_of(
        """
        session b2[2] { arrive at (1); n = serial; wait (1); }
        session a1[2] { arrive every (0.5); n = serial; wait (1); }
        """
    )
    events = run_all(sim)
    assert_clean(sim)
    arrivals = [(t(e.time), e.session, e.get("serial")) for e in events if e.moment == "arrive"]
    assert arrivals == [
        (0.5, "a1[0]", 0),
        (1, "b2[0]", 1),
        (1, "b2[1]", 2),
        (1, "a1[1]", 3),
    ]
    assert ends(events) == {
        "a1[0]": (1.5, "done"),
        "b2[0]": (2, "done"),
        "b2[1]": (2, "done"),
        "a1[1]": (2, "done"),
    }


def test_csv_sessions_arrive_at_their_timestamps(tmp_path: Path) -> None:
    (tmp_path / "trace.csv").write_text(
        "TIMESTAMP,ContextTokens,GeneratedTokens\n"
        "2023-11-16 18:15:46.0000000,10,3\n"
        "2023-11-16 18:15:47.0000000,20,1\n"
        "2023-11-16 18:15:48.5000000,5,2\n"
    )
    spec = """
    pool q { cap 64; }
    session req from "trace.csv" limit 2 {
      arrive at (TIMESTAMP);
      hold q (ContextTokens) { wait (GeneratedTokens); }
    }
    """
    sim = sim_of(spec, tmp_path)
    events = run_all(sim)
    assert_clean(sim)
    # Date-times become seconds since the first row; rows are named req[0], req[1]; limit 2.
    assert [(t(e.time), e.session) for e in events if e.moment == "arrive"] == [
        (0, "req[0]"),
        (1, "req[1]"),
    ]
    assert admits(events) == [(0, "req[0]", "q", 10, 0), (1, "req[1]", "q", 20, 0)]
    assert ends(events) == {"req[0]": (3, "done"), "req[1]": (2, "done")}


# serve exclusive prefill with a chunked prefill in progress: resident prefills are served
# first, then admission with the budget they left; decodes run only in an iteration where
# nothing was prefilled. budget 4; headers min(P, computed + budget_left(gpu)).
#   a: prompt 6 at 0; b: prompt 2 at 0.5; c: prompt 3 at 1.5; each decodes 2 steps.
#  t0  a chunk 4 (budget gone)                                  admitted a
#  t1  a's last 2 prompt tokens first (resident prefill), then b 2 (budget left 2)
#  t2  a, b would decode, but c (3 <= the full budget 4) is admitted: a prefill iteration
#  t3  a 1, b 1, c 1
#  t4  a 1, b 1, c 1 (all done at 5)
EXCLUSIVE_CHUNKED = """
stage gpu step { budget 4; time 1; serve exclusive prefill; }
pool kv { cap 64; block 4; admit via gpu; }
session a { arrive at (0); hold kv (min(6, computed + budget_left(gpu))) { run gpu prefill (6); run gpu decode (2); } }
session b { arrive at (0.5); hold kv (min(2, computed + budget_left(gpu))) { run gpu prefill (2); run gpu decode (2); } }
session c { arrive at (1.5); hold kv (min(3, computed + budget_left(gpu))) { run gpu prefill (3); run gpu decode (2); } }
"""


def test_exclusive_prefill_serves_resident_prefills_first() -> None:
    sim = sim_of(EXCLUSIVE_CHUNKED)
    events = run_all(sim)
    assert_clean(sim)
    decodes = [("a", "decode", 1), ("b", "decode", 1), ("c", "decode", 1)]
    assert table(events) == [
        row(0, [("a", "prefill", 4)], ["a"]),
        row(1, [("a", "prefill", 2), ("b", "prefill", 2)], ["b"]),
        row(2, [("c", "prefill", 3)], ["c"]),
        row(3, decodes),
        row(4, decodes),
    ]
    assert ends(events) == {"a": (5, "done"), "b": (5, "done"), "c": (5, "done")}
