"""`pooltui run`: the summary, the trace, the exit codes (issue: the simulator core)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pooltui.cli.main import main

# Three requests of 10 prompt tokens and 6 output tokens (5 decode steps) on a pool of six
# blocks of 4, budget 8 (vLLM §9). Worked out by hand from vllm-v1.md:
#   t0 r0 chunk 8            t1 r0 2, r1 chunk 6       t2 r0 d, r1 4 (r2: need 3 blocks, 0 free)
#   t3 r0 d, r1 d            t4 r0 needs a 4th block: preempt r1 (the latest; 8 cached)
#   t5, t6 r0 d              r0 done at t7: 15 units, 12 cached
#   t7 r1 re-admitted (hit 8, recompute 4), r2 chunk 4 (evicts one block of r0's entry)
#   t8 r2 needs 2 more blocks, only 1 evictable: r2 preempts itself (4 cached)
#   ... r1 done at t11, r2 re-admitted at t11 (hit 4), done at t17.
VLLM3 = """
const MAX = 24;
stage gpu step { budget 8; seats 4; time 1; }
pool kv { cap 24; block 4; evict lru; preempt lifo; queue fifo; admit via gpu; }
session req[3] {
  prompt = 10;
  max_tokens = 6;
  hold kv (min(max(prompt, context + 1), computed + budget_left(gpu)))
       need (max(prompt, context + 1)) reserve (MAX) {
    run gpu prefill (prompt);
    run gpu decode (max_tokens - 1);
  }
}
"""


def _spec(tmp_path: Path, text: str) -> str:
    path = tmp_path / "spec.pool"
    path.write_text(text)
    return str(path)


def test_summary_figures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", _spec(tmp_path, VLLM3), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "simulated 17s" in out
    assert "sessions: 3 arrived, 3 done, 0 rejected, 0 still live" in out
    assert "preemptions 2" in out
    # Latency: r0 ends at 7, r1 at 11, r2 at 17 (all arrived at 0).
    assert "latency   p50 11s  p90 17s  p99 17s  max 17s" in out


def test_summary_splits_the_hit_rate_and_counts_duplicates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """tests/sim/test_shared.py's IDENTICAL, worked out there by hand: a (8 of "p") hits 0;
    b (8) hits 4 on a's block 0, which a still holds (shared, held), and computes its last
    block again (the cap), a duplicate; c (12, at 2) hits 8 on a's first copies, cached
    (blocks another session computed: shared, none held). Asked 8 + 8 + 12 = 28, hit
    0 + 4 + 8 = 12: 42.9 %, all of it shared; 4 units held; 1 duplicate block."""
    from tests.sim.test_shared import IDENTICAL

    assert main(["run", _spec(tmp_path, IDENTICAL), "--quiet"]) == 0
    lines = capsys.readouterr().out.splitlines()
    at = lines.index("cache hit rate: 42.9% (12 of 28 units asked at admissions)")
    assert lines[at + 1 : at + 3] == [
        "  own 0.0%  shared 42.9%  reloaded 0.0%  (units: own 0, shared 12, reloaded 0)",
        "  shared with holds still holding them: 4 units; duplicate blocks 1",
    ]


def test_fast_mode_gives_the_same_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = _spec(tmp_path, VLLM3)
    assert main(["run", spec, "--quiet"]) == 0
    slow = capsys.readouterr().out.splitlines()
    assert main(["run", spec, "--quiet", "--fast"]) == 0
    fast = capsys.readouterr().out.splitlines()
    # Everything but the first line (event counts and wall time differ) agrees.
    assert slow[1:] == fast[1:]


def test_trace_is_byte_identical(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = _spec(tmp_path, VLLM3)
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert main(["run", spec, "--quiet", "--trace", str(a)]) == 0
    assert main(["run", spec, "--quiet", "--trace", str(b)]) == 0
    assert a.read_bytes() == b.read_bytes()
    events = [json.loads(line) for line in a.read_text().splitlines()]
    assert [e["i"] for e in events] == list(range(len(events)))
    assert [e["session"] for e in events if e["moment"] == "preempt"] == ["req[1]", "req[2]"]


def test_the_trace_says_which_blocks_an_eviction_took(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """tests/sim/test_shared.py's KEPT, worked out there by hand: at 7, d's admission
    evicts a's entry [2], then b's tail, block 3 ("sys", blocks 0 1, stays cached)."""
    from tests.sim.test_shared import KEPT

    trace = tmp_path / "t.jsonl"
    assert main(["run", _spec(tmp_path, KEPT), "--quiet", "--trace", str(trace)]) == 0
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    assert [(e["t"], e["session"], e["blocks"], e["left"]) for e in events
            if e["moment"] == "evict"] == [(7.0, "a", [2], 0), (7.0, "b", [3], 8)]  # fmt: skip
    assert all("blocks" not in e for e in events if e["moment"] != "evict")


def test_until_and_events_stop_early(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = _spec(tmp_path, VLLM3)
    assert main(["run", spec, "--quiet", "--until", "5"]) == 0
    assert "simulated 5s" in capsys.readouterr().out
    trace = tmp_path / "t.jsonl"
    assert main(["run", spec, "--quiet", "--events", "10", "--trace", str(trace)]) == 0
    assert len(trace.read_text().splitlines()) == 10


def test_runtime_error_is_located_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = _spec(
        tmp_path,
        "stage gpu step { time 1; }\npool kv { cap 16; admit via gpu; }\n"
        "session s { x = 0; hold kv (4 / x) { run gpu prefill (4); } }\n",
    )
    assert main(["run", spec, "--quiet"]) == 1
    err = capsys.readouterr().err
    # at the divisor `x` of `4 / x` (docs/decisions.md: a division by zero is located at
    # its divisor; it was the whole `4 / x`, from 3:29)
    assert f"{spec}:3:33: error: division by zero" in err
    assert "3 | session s { x = 0; hold kv (4 / x)" in err
    assert "  |                                 ^\n" in err
    assert "enqueue" in err  # the event it stopped at
    assert "Traceback" not in err


def test_a_non_positive_piece_at_run_time_is_located(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """content-and-reload.md §1: UNITS is a positive expression; one the checker cannot
    know (an attribute) is checked when the hold is first attempted, and located at the
    units (column 49: `n` in `content ("sys" : n)`)."""
    spec = _spec(
        tmp_path,
        "stage gpu step { time 1; }\npool kv { cap 16; block 4; admit via gpu; }\n"
        'session s { n = 0; hold kv (4) content ("sys" : n) { run gpu prefill (4); } }\n',
    )
    assert main(["run", spec, "--quiet"]) == 1
    err = capsys.readouterr().err.splitlines()
    at = err.index(
        f"{spec}:3:49: error: a content piece's units must be a positive whole number, got 0"
    )
    assert err[at + 1 : at + 3] == [
        '3 | session s { n = 0; hold kv (4) content ("sys" : n) { run gpu prefill (4); } }',
        "  |                                                 ^",
    ]
    assert not any("Traceback" in line for line in err)


def test_failed_check_and_deadlock_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    check = _spec(
        tmp_path,
        "stage gpu step { budget 8; time 1; }\npool kv { cap 16; block 4; admit via gpu; }\n"
        "session s[3] { hold kv (8) { run gpu prefill (8); run gpu decode (8); } }\n"
        'check "room left" (free(kv) > 0);\n',
    )
    assert main(["run", check, "--quiet"]) == 1
    assert 'check "room left" failed' in capsys.readouterr().err
    (tmp_path / "d").mkdir()
    stuck = _spec(
        tmp_path / "d",
        "stage gpu step { time 1; }\npool kv { cap 8; block 4; preempt none; admit via gpu; }\n"
        "session s[2] { hold kv (4) { run gpu prefill (4); grow kv (4); grow kv (4); } }\n",
    )
    assert main(["run", stuck, "--quiet"]) == 1
    assert "deadlock" in capsys.readouterr().err


def test_spec_errors_exit_1_without_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", _spec(tmp_path, "pool kv { cap 10; block 4; }\n")]) == 1
    err = capsys.readouterr().err
    assert "error:" in err and "Traceback" not in err
    assert main(["run", str(tmp_path / "missing.pool")]) == 1
    assert "cannot read" in capsys.readouterr().err


def test_version_says_which_build(capsys: pytest.CaptureFixture[str]) -> None:
    from pooltui.sim import engine

    assert main(["--version"]) == 0
    out = capsys.readouterr().out.strip()
    assert out.startswith("pooltui ")
    # A plain install runs engine.py; POOLTUI_COMPILE=1 puts a compiled module in its place.
    compiled = not engine.__file__.endswith(".py")
    assert out.endswith(", compiled (mypyc)" if compiled else ", pure Python")
