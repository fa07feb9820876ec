"""vLLM v1 (0.33, FCFS) scenarios, each written as language.md §16 says:

    stage gpu step { budget B; [seats S;] time 1; }
    pool kv { cap C; block 4; evict lru; preempt lifo; queue fifo; admit via gpu; }
    max_tokens = min(N, max(1, MAX - prompt));
    hold kv (min(max(prompt, context + 1), computed + budget_left(gpu)))
         need (max(prompt, context + 1)) reserve (MAX - 1) {
      run gpu prefill (prompt);
      run gpu decode (max_tokens - 1);
    }

The per-iteration tables below are derived by hand from ../shared/design/vllm-v1.md (one
`schedule()` call per iteration: running requests first in admission order, then the
waiting loop only if nothing was preempted; preemption of running[-1]; blocks freed tail
first; hits in full blocks, costing no budget; strict head of line; the full-sequence gate).
Notation: rN = request N (name, arrival, prompt, max_tokens); a row is
  time: scheduled (request, phase, tokens) in serve order | admitted | preempted.
The first output token is sampled by the prefill's last step, so max_tokens = N is N - 1
decode steps; the hold's units follow vLLM's num_computed_tokens + the step's tokens.
"""

from __future__ import annotations

import pytest

from tests.sim.helpers import (
    admits,
    assert_clean,
    ends,
    evicts,
    grows,
    iterations,
    of,
    one,
    releases,
    row,
    run_all,
    sim_of,
    t,
    table,
    vllm_spec,
)


def run_vllm(requests: list[tuple[str, float, int, int]], **kw: object) -> tuple[object, list]:
    sim = sim_of(vllm_spec(requests, **kw))  # type: ignore[arg-type]
    events = run_all(sim)
    assert_clean(sim)
    return sim, events


def test_v1_fcfs_admission_until_the_budget_runs_out_with_a_chunked_last_prefill() -> None:
    # budget 16, 16 blocks (no memory pressure). r0 6, r1 7, r2 9, r3 3 prompts; max_tokens 2.
    #  t0: waiting loop: r0 6 (left 10), r1 7 (left 3), r2 chunk 3 (left 0): stop.
    #  t1: running: r0 1, r1 1, r2 the rest 6 (left 8); waiting: r3 3 (left 5).
    #  t2: r2 1, r3 1 (r0, r1 finished their one decode step at t1)
    _, events = run_vllm(
        [("r0", 0, 6, 2), ("r1", 0, 7, 2), ("r2", 0, 9, 2), ("r3", 0, 3, 2)], budget=16, cap=64
    )
    assert table(events) == [
        row(
            0,
            [("r0", "prefill", 6), ("r1", "prefill", 7), ("r2", "prefill", 3)],
            ["r0", "r1", "r2"],
        ),
        row(
            1,
            [("r0", "decode", 1), ("r1", "decode", 1), ("r2", "prefill", 6), ("r3", "prefill", 3)],
            ["r3"],
        ),
        row(2, [("r2", "decode", 1), ("r3", "decode", 1)]),
    ]
    its = iterations(events)
    assert [(r["tokens"], r["budget_used"], r["budget_left"]) for r in its] == [
        (16, 16, 0),
        (11, 11, 5),
        (2, 2, 14),
    ]
    # The chunked prefill allocates only its chunk: r2 is admitted with 3 units.
    assert [a for a in admits(events) if a[1] == "r2"] == [(0, "r2", "kv", 3, 0)]
    assert ends(events) == {
        "r0": (2, "done"),
        "r1": (2, "done"),
        "r2": (3, "done"),
        "r3": (3, "done"),
    }


def test_v2_seats_limit_the_running_requests() -> None:
    # seats 2 (max_num_seqs): r2 waits until r0 and r1 finish (2 decode steps each).
    _, events = run_vllm(
        [("r0", 0, 4, 3), ("r1", 0, 4, 3), ("r2", 0, 4, 3)], budget=64, seats=2, cap=64
    )
    assert table(events) == [
        row(0, [("r0", "prefill", 4), ("r1", "prefill", 4)], ["r0", "r1"]),
        row(1, [("r0", "decode", 1), ("r1", "decode", 1)]),
        row(2, [("r0", "decode", 1), ("r1", "decode", 1)]),
        row(3, [("r2", "prefill", 4)], ["r2"]),
        row(4, [("r2", "decode", 1)]),
        row(5, [("r2", "decode", 1)]),
    ]


def test_v3_full_sequence_gate_blocks_a_request_whose_chunk_would_fit() -> None:
    # 4 blocks of 4, budget 4. r0: prompt 8 (2 chunks), 1 decode step. r1: prompt 12.
    #  t0: r0 chunk 4 (need 8 = 2 blocks: fits)                 admitted r0
    #  t1: r0 chunk 4 (2 blocks)
    #  t2: r0 decode 1 (size 9: 3 blocks, 1 free); r1: need 12 = 3 blocks > 1 free, although
    #      its 3-token chunk would fit in one: not admitted (scheduler_reserve_full_isl)
    #  t3: r0 released (9 units: cached 8 = 2 blocks, 1 block freed; 2 free): r1 need 3
    #      blocks <= 2 free + 2 cached: admitted, chunk 4 from a free block
    #  t4: r1 chunk 4 (takes the last free block)
    #  t5: r1 chunk 4: evicts r0's tail block (4, left 4)
    #  t6: r1 decode 1 (size 13): evicts r0's last block (4, left 0)
    _, events = run_vllm([("r0", 0, 8, 2), ("r1", 0, 12, 2)], budget=4, cap=16)
    assert table(events) == [
        row(0, [("r0", "prefill", 4)], ["r0"]),
        row(1, [("r0", "prefill", 4)]),
        row(2, [("r0", "decode", 1)]),
        row(3, [("r1", "prefill", 4)], ["r1"]),
        row(4, [("r1", "prefill", 4)]),
        row(5, [("r1", "prefill", 4)]),
        row(6, [("r1", "decode", 1)]),
    ]
    assert evicts(events) == [(5, "r0", "kv", 4, 4), (6, "r0", "kv", 4, 0)]
    assert releases(events)[0] == (3, "r0", "kv", 9, 8)

    # Without the gate (no `need`), r1's 3-token chunk is admitted at t2.
    sim = sim_of(vllm_spec([("r0", 0, 8, 2), ("r1", 0, 12, 2)], budget=4, cap=16, need=False))
    events = run_all(sim)
    assert table(events)[2] == row(2, [("r0", "decode", 1), ("r1", "prefill", 3)], ["r1"])


def test_v4_decode_growth_crossing_a_block_boundary() -> None:
    # r0: prompt 3 (1 block), 3 decode steps: sizes 4 (same block), 5 (a new block), 6.
    # Only the step to 5 allocates a block, so only it is a `grow` event. Released with 6
    # computed: 4 cached (full blocks only).
    _, events = run_vllm([("r0", 0, 3, 4)], budget=16, cap=64)
    assert [r["tokens"] for r in iterations(events)] == [3, 1, 1, 1]
    assert grows(events) == [(2, "r0", "kv", 5)]
    g = one(events, "grow")
    added = g.get("added_blocks")
    assert (len(added) if isinstance(added, tuple | list) else added) == 1
    assert releases(events) == [(4, "r0", "kv", 6, 4)]


def test_v5_preempt_running_tail_and_fold_the_recompute_into_the_first_decode() -> None:
    # 4 blocks of 4, budget 16. r0, r1: prompt 6, max_tokens 6 (5 decode steps).
    #  t0: r0 6, r1 6 (2 blocks each: kv full)                    admitted r0 r1
    #  t1: r0 1 (size 7), r1 1 (size 7)
    #  t2: r0 1 (8), r1 1 (8)
    #  t3: r0 needs a 3rd block: preempt running[-1] = r1 (8 computed: 2 full blocks
    #      cached); retry: r0 takes r1's tail block (evict 4, left 4). No waiting loop.
    #  t4: r0 1 (10). r1: num_tokens 9, hit 4 (1 surviving block), needs 2 more blocks: 0 free
    #  t5: r0 1 (11): its 5 steps are done; released at 6: cached 8, 1 block freed
    #  t6: r1: hit 4, header min(9, 4 + 16) = 9, num_tokens 9 - hit 4 = 5 tokens in one step
    #      (context 8 - computed 4 + 1: the recompute folded into the decode step); 2 blocks: 1 free + r0's tail (4, left 4)
    #  t7, t8: r1 decode (its 4th and 5th steps; 2 were done before the preemption)
    _, events = run_vllm([("r0", 0, 6, 6), ("r1", 0, 6, 6)], budget=16, cap=16)
    assert table(events) == [
        row(0, [("r0", "prefill", 6), ("r1", "prefill", 6)], ["r0", "r1"]),
        row(1, [("r0", "decode", 1), ("r1", "decode", 1)]),
        row(2, [("r0", "decode", 1), ("r1", "decode", 1)]),
        row(3, [("r0", "decode", 1)], [], True),
        row(4, [("r0", "decode", 1)]),
        row(5, [("r0", "decode", 1)]),
        row(6, [("r1", "recompute", 5)], ["r1"]),
        row(7, [("r1", "decode", 1)]),
        row(8, [("r1", "decode", 1)]),
    ]
    p = one(events, "preempt")
    assert (t(p.time), p.session, tuple(p.others), p.get("cached")) == (3, "r1", ("r0",), 8)
    assert "r1" in p.why and "r0" in p.why
    assert evicts(events) == [(3, "r1", "kv", 4, 4), (6, "r0", "kv", 4, 4)]
    assert [a for a in admits(events) if a[1] == "r1"] == [
        (0, "r1", "kv", 6, 0),
        (6, "r1", "kv", 9, 4),
    ]
    assert ends(events) == {"r0": (6, "done"), "r1": (9, "done")}


def test_v6_prefix_hit_after_preemption_costs_no_budget() -> None:
    # 4 blocks of 4, budget 4. r0, r1: prompt 4, max_tokens 8 (7 decode steps).
    #  t0: r0 4 (budget gone)                                     admitted r0
    #  t1: r0 1 (size 5: 2nd block); r1 chunk 3 (need 4: 1 block)  admitted r1
    #  t2: r0 1 (6); r1 the last prompt token, 1
    #  t3: r0 1 (7); r1 decode 1 (size 5: 2nd block; kv full)
    #  t4: r0 1 (8); r1 1 (6)
    #  t5: r0 needs a 3rd block: preempt r1 (6 computed: 1 full block cached, the partial
    #      block freed); r0 takes the freed block (nothing evicted)
    #  t6, t7: r0 1; r1 (num_tokens 7, hit 4) needs 1 more block: 0 free
    #  t8: r0 released at 8 (11: cached 8, 1 block freed). r1: hit 4 costs nothing; it
    #      schedules 7 - 4 = 3 tokens (context 6 - computed 4 + 1): budget used 3, left 1
    #  t9-t12: r1 decode (steps 4-7); at t10 (size 9) it evicts r0's tail (4, left 4)
    _, events = run_vllm([("r0", 0, 4, 8), ("r1", 0, 4, 8)], budget=4, cap=16)
    d = [("r0", "decode", 1)]
    assert table(events) == [
        row(0, [("r0", "prefill", 4)], ["r0"]),
        row(1, [("r0", "decode", 1), ("r1", "prefill", 3)], ["r1"]),
        row(2, [("r0", "decode", 1), ("r1", "prefill", 1)]),
        row(3, [("r0", "decode", 1), ("r1", "decode", 1)]),
        row(4, [("r0", "decode", 1), ("r1", "decode", 1)]),
        row(5, d, [], True),
        row(6, d),
        row(7, d),
        row(8, [("r1", "recompute", 3)], ["r1"]),
        row(9, [("r1", "decode", 1)]),
        row(10, [("r1", "decode", 1)]),
        row(11, [("r1", "decode", 1)]),
        row(12, [("r1", "decode", 1)]),
    ]
    t8 = next(r for r in iterations(events) if r["time"] == 8)
    assert (t8["tokens"], t8["budget_used"], t8["budget_left"]) == (3, 3, 1)
    p = one(events, "preempt")
    assert (t(p.time), p.session, tuple(p.others), p.get("cached")) == (5, "r1", ("r0",), 4)
    assert [a for a in admits(events) if a[1] == "r1"] == [
        (1, "r1", "kv", 3, 0),
        (8, "r1", "kv", 7, 4),
    ]
    assert evicts(events) == [(10, "r0", "kv", 4, 4)]
    assert ends(events) == {"r0": (8, "done"), "r1": (13, "done")}


def test_v7_strict_head_of_line() -> None:
    # 5 blocks of 4, budget 64. r0: prompt 8, 3 decode steps. r1 (prompt 12) and r2 (prompt
    # 2) arrive at 0.5, r1 first.
    #  t0: r0 8                                                    admitted r0
    #  t1-t3: r0 1 (size 9: 3 blocks, 2 free); r1 needs 3 blocks: stops the loop; r2 (1 block)
    #      would fit but is never tried
    #  t4: r0 released (11: cached 8, 1 block freed; 3 free): r1 12 (3 free blocks),
    #      r2 2 (evicts r0's tail, 4 left 4)                        admitted r1 r2
    #  t5: r1 1 (size 13: evicts r0's last block), r2 1
    _, events = run_vllm(
        [("r0", 0, 8, 4), ("r1", 0.5, 12, 2), ("r2", 0.5, 2, 2)], budget=64, cap=20
    )
    assert table(events) == [
        row(0, [("r0", "prefill", 8)], ["r0"]),
        row(1, [("r0", "decode", 1)]),
        row(2, [("r0", "decode", 1)]),
        row(3, [("r0", "decode", 1)]),
        row(4, [("r1", "prefill", 12), ("r2", "prefill", 2)], ["r1", "r2"]),
        row(5, [("r1", "decode", 1), ("r2", "decode", 1)]),
    ]
    assert evicts(events) == [(4, "r0", "kv", 4, 4), (5, "r0", "kv", 4, 0)]
    assert ends(events) == {"r0": (4, "done"), "r1": (6, "done"), "r2": (6, "done")}


@pytest.mark.parametrize(
    ("whole", "expected"),
    [
        (
            True,
            # enable_chunked_prefill=False: a prompt larger than the budget left stops the loop.
            #  t0: r0 5 (left 3); r1 6 > 3: stop (r2 not tried)
            #  t1: r0 1 (left 7); r1 6 (left 1); r2 2 > 1: stop
            #  t2: r0 1, r1 1 (left 6); r2 2
            #  t3: r2 1
            [
                row(0, [("r0", "prefill", 5)], ["r0"]),
                row(1, [("r0", "decode", 1), ("r1", "prefill", 6)], ["r1"]),
                row(2, [("r0", "decode", 1), ("r1", "decode", 1), ("r2", "prefill", 2)], ["r2"]),
                row(3, [("r2", "decode", 1)]),
            ],
        ),
        (
            False,
            # chunked: t0 r0 5, r1 chunk 3; t1 r0 1, r1 3, r2 2; t2 all decode
            [
                row(0, [("r0", "prefill", 5), ("r1", "prefill", 3)], ["r0", "r1"]),
                row(1, [("r0", "decode", 1), ("r1", "prefill", 3), ("r2", "prefill", 2)], ["r2"]),
                row(2, [("r0", "decode", 1), ("r1", "decode", 1), ("r2", "decode", 1)]),
            ],
        ),
    ],
)
def test_v8_without_chunked_prefill_a_prompt_over_the_budget_left_stops_the_loop(
    whole: bool, expected: list[tuple[object, ...]]
) -> None:
    _, events = run_vllm(
        [("r0", 0, 5, 3), ("r1", 0, 6, 2), ("r2", 0, 2, 2)], budget=8, cap=64, whole=whole
    )
    assert table(events) == expected


def test_v9_the_running_tail_preempts_itself_and_stops_the_running_loop() -> None:
    # 2 blocks of 4, budget 64. r0: prompt 2, 3 decode steps; r1: prompt 4, 2 decode steps.
    #  t0: r0 2 (1 block), r1 4 (1 block: kv full)                admitted r0 r1
    #  t1: r0 1 (size 3); r1 needs a 2nd block: running[-1] is r1 itself: preempt it
    #      (cached 4), break. No waiting loop.
    #  t2: r0 1 (4); r1: num_tokens 5 = 2 blocks, hit 4 (1 block), 1 more: 0 free
    #  t3: r0 1 (size 5: a 2nd block, evicting r1's cached block: 4, left 0)
    #  t4: r0 released (5: cached 4, 1 block freed); r1: hit 0, 2 blocks (1 free + r0's
    #      block: 4, left 0), recompute 4 + 1 = 5 tokens            admitted r1
    #  t5: r1 1
    _, events = run_vllm([("r0", 0, 2, 4), ("r1", 0, 4, 3)], budget=64, cap=8)
    assert table(events) == [
        row(0, [("r0", "prefill", 2), ("r1", "prefill", 4)], ["r0", "r1"]),
        row(1, [("r0", "decode", 1)], [], True),
        row(2, [("r0", "decode", 1)]),
        row(3, [("r0", "decode", 1)]),
        row(4, [("r1", "recompute", 5)], ["r1"]),
        row(5, [("r1", "decode", 1)]),
    ]
    p = one(events, "preempt")
    assert (t(p.time), p.session, tuple(p.others), p.get("cached")) == (1, "r1", ("r1",), 4)
    assert evicts(events) == [(3, "r1", "kv", 4, 0), (4, "r0", "kv", 4, 0)]
    assert [a for a in admits(events) if a[1] == "r1"] == [
        (0, "r1", "kv", 4, 0),
        (4, "r1", "kv", 5, 0),
    ]
    assert ends(events) == {"r0": (4, "done"), "r1": (6, "done")}


def test_v10_two_preemptions_in_one_step_requeue_the_older_victim_first() -> None:
    # 4 blocks of 4, budget 64. r0-r3: prompt 4, max_tokens 3 (2 decode steps).
    #  t0: r0 4, r1 4, r2 4, r3 4 (a block each: kv full)        admitted r0 r1 r2 r3
    #  t1: r0 needs a 2nd block: preempt running[-1] = r3 (cached 4; its block goes to the
    #      free queue's tail), r0 takes it (evict r3: 4, left 0); r1 needs one: preempt r2,
    #      r1 takes its block. Each victim is prepended to waiting: [r2, r3]. No waiting loop.
    #  t2: r0 1, r1 1; r2 (num_tokens 5, hit 0: its block was evicted) needs 2 blocks: 0 free
    #  t3: r0, r1 released at 3 (6 computed: cached 4 each, a partial block freed each);
    #      r2 first: 5 tokens into the 2 freed partial blocks; r3: 5 tokens, evicting r0's
    #      then r1's cached block (the free queue's LRU order)      admitted r2 r3
    #  t4: r2 1, r3 1
    _, events = run_vllm([(f"r{i}", 0, 4, 3) for i in range(4)], budget=64, cap=16)
    assert table(events) == [
        row(
            0,
            [
                ("r0", "prefill", 4),
                ("r1", "prefill", 4),
                ("r2", "prefill", 4),
                ("r3", "prefill", 4),
            ],
            ["r0", "r1", "r2", "r3"],
        ),
        row(1, [("r0", "decode", 1), ("r1", "decode", 1)], [], True),
        row(2, [("r0", "decode", 1), ("r1", "decode", 1)]),
        row(3, [("r2", "recompute", 5), ("r3", "recompute", 5)], ["r2", "r3"]),
        row(4, [("r2", "decode", 1), ("r3", "decode", 1)]),
    ]
    assert [
        (t(e.time), e.session, e.get("grower"), e.get("cached")) for e in of(events, "preempt")
    ] == [(1, "r3", "r0", 4), (1, "r2", "r1", 4)]
    assert evicts(events) == [
        (1, "r3", "kv", 4, 0),
        (1, "r2", "kv", 4, 0),
        (3, "r0", "kv", 4, 0),
        (3, "r1", "kv", 4, 0),
    ]
    assert ends(events) == {
        "r0": (3, "done"),
        "r1": (3, "done"),
        "r2": (5, "done"),
        "r3": (5, "done"),
    }


def test_v11_a_request_admitted_later_in_the_step_hits_blocks_being_computed() -> None:
    # 8 blocks of 4, budget 64. r0, r1: the same 8-unit system prompt ("sys"), prompt 10,
    # max_tokens 2. Hashes are registered at scheduling (allocate_slots -> cache_blocks).
    #  t0: r0 10 tokens (3 blocks; blocks 0, 1 registered now). r1: hit min(8, 9) = 8 on
    #      r0's blocks (held: they cost no free block), 10 - 8 = 2 tokens, 1 new block
    #  t1: r0 1, r1 1
    #  t2: released in admission order: r0's shared blocks stay with r1 (cached 0), then
    #      r1's go to count 0 and are cached (8); each partial block is freed
    spec = vllm_spec([("r0", 0, 10, 2), ("r1", 0, 10, 2)], budget=64, cap=32)
    spec = spec.replace("reserve (MAX - 1) {", 'reserve (MAX - 1) content ("sys" : 8) {')
    sim = sim_of(spec)
    events = run_all(sim)
    assert_clean(sim)
    assert table(events) == [
        row(0, [("r0", "prefill", 10), ("r1", "prefill", 2)], ["r0", "r1"]),
        row(1, [("r0", "decode", 1), ("r1", "decode", 1)]),
    ]
    assert [(a, s, p, u, h) for a, s, p, u, h in admits(events)] == [
        (0, "r0", "kv", 10, 0),
        (0, "r1", "kv", 10, 8),
    ]
    assert [e.get("shared") for e in of(events, "admit")] == [0, 8]
    assert releases(events) == [(2, "r0", "kv", 11, 0), (2, "r1", "kv", 11, 8)]
    assert evicts(events) == []


def test_v12_a_request_reaching_max_model_len_ends_done_with_fewer_tokens() -> None:
    # vLLM's check_stop ends a request when num_tokens (prompt + outputs) reaches
    # max_model_len (finish reason `length`), whatever its max_tokens. MAX 8 (the cap),
    # blocks of 4. r0: prompt 5, max_tokens 10.
    #  t0: prefill 5 (output 1, num_tokens 6); t1: decode 1 (7); t2: decode 1 (8 = MAX:
    #  finished). Released at 3 with 7 computed (cached 4). It is not rejected.
    _, events = run_vllm([("r0", 0, 5, 10)], budget=64, cap=8)
    assert table(events) == [
        row(0, [("r0", "prefill", 5)], ["r0"]),
        row(1, [("r0", "decode", 1)]),
        row(2, [("r0", "decode", 1)]),
    ]
    assert ends(events) == {"r0": (3, "done")}
    assert releases(events) == [(3, "r0", "kv", 7, 4)]


def test_v13_a_prompt_of_max_model_len_is_refused_one_shorter_is_served() -> None:
    # vLLM refuses a prompt of max_model_len tokens (it must sample at least one token:
    # "the decoder prompt (length 2048) plus the number of requested output tokens (at
    # least 1) is longer than the maximum model length"; vLLM's own
    # tests/v1/e2e/test_context_length.py: 2047 with max_tokens 1 is served, 2048 refused).
    # A request's KV never holds its last sampled token, so it reaches MAX - 1 at most.
    # MAX 8 (the cap), blocks of 4. r0: prompt 8, refused at its first attempt, before any
    # iteration. r1: prompt 7, max_tokens 5, capped to 1 (7 + 1 = MAX):
    #  t0: prefill 7 (samples its one token: num_tokens 8 = MAX, finished).
    # Released at 1 with 7 computed (cached 4).
    _, events = run_vllm([("r0", 0, 8, 1), ("r1", 0, 7, 5)], budget=64, cap=8)
    assert [e.session for e in of(events, "reject")] == ["r0"]
    assert table(events) == [row(0, [("r1", "prefill", 7)], ["r1"])]
    assert ends(events) == {"r0": (0, "rejected"), "r1": (1, "done")}
    assert releases(events) == [(1, "r1", "kv", 7, 4)]
