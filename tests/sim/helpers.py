"""Helpers for the simulator tests: compile a spec, run it, and read the event log.

The expected behaviour in every test is worked out by hand from the documents
(the Pool reference, ../shared/design/language.md, ../shared/design/vllm-v1.md and
docs/decisions.md); these helpers only shape the recorded events so that the hand-written
expectations read like the tables in the comments.

The front end and the simulator are imported lazily, so the suite collects even while
they are still being written.
"""

from __future__ import annotations

import dataclasses
import textwrap
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

MAX_EVENTS = 50_000


def compile_spec(text: str, tmp_path: Path | None = None, file: str = "test.pool") -> Any:
    from pooltui.lang import compile_source

    base = str(tmp_path) if tmp_path is not None else "."
    return compile_source(textwrap.dedent(text), file, base)


def sim_of(
    text: str,
    tmp_path: Path | None = None,
    *,
    invariants: bool = True,
    history: bool = True,
    file: str = "test.pool",
) -> Any:
    """Compile spec `text` and return a fresh `Simulation` over it."""
    from pooltui.sim import Simulation

    program = compile_spec(text, tmp_path, file)
    return Simulation(program, invariants=invariants, history=history)


def run_all(sim: Any, limit: int = MAX_EVENTS) -> list[Any]:
    """Step until nothing more happens (or a halt); return the events up to the cursor."""
    for _ in range(limit):
        if sim.step() is None:
            break
    else:  # pragma: no cover - a runaway simulation is a failure of its own
        raise AssertionError(f"simulation still running after {limit} events")
    return list(sim.events)[: sim.cursor + 1]


def t(x: float) -> float:
    """A time rounded for exact comparison with hand-computed values."""
    return round(float(x), 9)


def moments(events: Iterable[Any], *names: str) -> list[Any]:
    """The events whose moment is one of `names` (all events when none given)."""
    return [e for e in events if not names or e.moment in names]


def of(events: Iterable[Any], moment: str, session: str | None = None) -> list[Any]:
    return [e for e in events if e.moment == moment and (session is None or e.session == session)]


def one(events: Iterable[Any], moment: str, session: str | None = None) -> Any:
    found = of(events, moment, session)
    assert len(found) == 1, (
        f"expected one {moment} of {session}, got {[describe(e) for e in found]}"
    )
    return found[0]


def describe(e: Any) -> str:
    return f"{e.time:g} {e.moment} {e.session} {e.pool} {e.stage} {e.units} {dict(e.data)}"


def _tuple(v: Any) -> tuple[Any, ...]:
    if v is None:
        return ()
    return tuple(tuple(x) if isinstance(x, list | tuple) else x for x in v)


def iterations(events: Iterable[Any], stage: str | None = None) -> list[dict[str, Any]]:
    """One dict per `iteration` event (of `stage`, a member label, if given)."""
    rows = []
    for e in events:
        if e.moment != "iteration" or (stage is not None and e.stage != stage):
            continue
        rows.append(
            {
                "n": e.get("iteration"),
                "time": t(e.time),
                "stage": e.stage,
                "scheduled": _tuple(e.get("scheduled")),
                "admitted": _tuple(e.get("admitted")),
                "preempted": bool(e.get("preempted")),
                "tokens": e.get("tokens"),
                "budget_used": e.get("budget_used"),
                "budget_left": e.get("budget_left"),
                "duration": e.get("duration"),
            }
        )
    return rows


def table(events: Iterable[Any], stage: str | None = None) -> list[tuple[Any, ...]]:
    """Iterations as (time, scheduled, admitted, preempted) rows, to compare with the
    tables worked out by hand in the tests."""
    return [
        (r["time"], r["scheduled"], r["admitted"], r["preempted"])
        for r in iterations(events, stage)
    ]


def row(
    time: float,
    scheduled: Sequence[tuple[str, str, int]],
    admitted: Sequence[str] = (),
    preempted: bool = False,
) -> tuple[Any, ...]:
    """A hand-written table row, in the shape `table` returns."""
    return (t(time), tuple(tuple(s) for s in scheduled), tuple(admitted), preempted)


def admits(events: Iterable[Any], pool: str | None = None) -> list[tuple[Any, ...]]:
    """(time, session, pool, units, hit) for every admission."""
    return [
        (t(e.time), e.session, e.pool, e.units, e.get("hit"))
        for e in events
        if e.moment == "admit" and (pool is None or e.pool == pool)
    ]


def evicts(events: Iterable[Any], pool: str | None = None) -> list[tuple[Any, ...]]:
    """(time, session, pool, units, left) for every eviction."""
    return [
        (t(e.time), e.session, e.pool, e.units, e.get("left"))
        for e in events
        if e.moment == "evict" and (pool is None or e.pool == pool)
    ]


def releases(events: Iterable[Any], pool: str | None = None) -> list[tuple[Any, ...]]:
    """(time, session, pool, units, cached) for every release."""
    return [
        (t(e.time), e.session, e.pool, e.units, e.get("cached"))
        for e in events
        if e.moment == "release" and (pool is None or e.pool == pool)
    ]


def grows(events: Iterable[Any], session: str | None = None) -> list[tuple[Any, ...]]:
    """(time, session, pool, units) for every grow event."""
    return [
        (t(e.time), e.session, e.pool, e.units)
        for e in events
        if e.moment == "grow" and (session is None or e.session == session)
    ]


def ends(events: Iterable[Any]) -> dict[str, tuple[float, str]]:
    """session -> (time, how) of its `end` event; fails on a second end of one session."""
    out: dict[str, tuple[float, str]] = {}
    for e in events:
        if e.moment == "end":
            assert e.session not in out, f"{e.session} ended twice"
            out[e.session] = (t(e.time), e.get("how"))
    return out


def run_dones(events: Iterable[Any]) -> list[tuple[Any, ...]]:
    """(time, session, kind) for every finished run."""
    return [(t(e.time), e.session, e.get("kind")) for e in events if e.moment == "run-done"]


def trace(events: Iterable[Any]) -> str:
    """The trace file's bytes: one JSON object per event."""
    return "\n".join(e.to_json() for e in events)


def comparable(snapshot: Any) -> Any:
    """A snapshot without the log length (which runs ahead of the cursor after back())."""
    return dataclasses.replace(snapshot, events_total=0)


def assert_clean(sim: Any) -> None:
    """The run ended without an invariant violation, a runtime error or a halt."""
    assert sim.violation is None, sim.violation
    assert getattr(sim, "error", None) is None, sim.error
    assert sim.halted is None, sim.halted


def check_structure(snap: Any) -> None:
    """What every snapshot must satisfy (language.md §8 and the snapshot contract): pool
    accounting, the physical block map agreeing with holds and entries, whole-block entries,
    preempted holds ahead of the others in each queue."""
    for pool in snap.pools:
        assert pool.allocated + pool.cached <= pool.cap, pool.label
        assert pool.cached == sum(x.units for x in pool.entries), pool.label
        flags = [q.preempted for q in pool.queue]
        assert flags == sorted(flags, reverse=True), (pool.label, flags)
        assert [x.rank for x in pool.entries] == list(range(len(pool.entries)))
        bm = pool.blocks
        if bm is None:
            continue
        unit = bm.unit
        # A block several holds share is allocated once (content-and-reload.md §2).
        physical = {b for h in pool.holds for b in h.physical}
        assert pool.allocated == len(physical) * unit, pool.label
        if pool.block:
            assert all(x.units % pool.block == 0 for x in pool.entries), pool.label
        owners = [bm.owner(i) for i in range(bm.nblocks)]
        held = sum(1 for o in owners if o is not None and o.kind == "hold")
        cached = sum(1 for o in owners if o is not None and o.kind == "cached")
        assert held * unit == pool.allocated, pool.label
        assert cached * unit == pool.cached, pool.label
        assert (bm.nblocks - held - cached) * unit == pool.free, pool.label
        for h in pool.holds:
            assert len(h.physical) == h.blocks, (pool.label, h.session)
            if h.computed > h.size:  # only a hold being admitted (its hit, then the rest)
                assert any(q.session == h.session for q in pool.queue), (pool.label, h.session)
            for b in h.physical:
                assert bm.state(b) == "held", (pool.label, h.session, b)
                assert h.session in [o.session for o in bm.holders(b)], (pool.label, b)
        for x in pool.entries:
            assert len(x.physical) == x.blocks, (pool.label, x.session)
            for b in x.physical:
                o = bm.owner(b)
                assert o is not None and o.kind == "cached" and o.session == x.session
                assert bm.state(b) == "cached" and bm.count(b) == 0


def vllm_spec(
    requests: Sequence[tuple[str, float, int, int]],
    *,
    budget: int,
    cap: int,
    block: int = 4,
    seats: int | None = None,
    whole: bool = False,
    max_model_len: int | None = None,
    need: bool = True,
) -> str:
    """The vLLM v1 request of language.md §16, written out, one plain session per request
    (name, arrival, prompt, max_tokens), declared in the order given. max_tokens is capped
    as vLLM's check_stop caps it: generation stops when prompt + outputs reach MAX.

    max_model_len defaults to the cap: vLLM refuses a KV cache smaller than one
    max_model_len request, and a reserve above the cap would be a never-fit rejection."""
    if max_model_len is None:
        max_model_len = cap
    stage_opts = [f"budget {budget};"]
    if seats is not None:
        stage_opts.append(f"seats {seats};")
    stage_opts.append("time 1;")
    if whole:
        stage_opts.append("prefill whole;")
    out = [
        f"const MAX = {max_model_len};",
        f"stage gpu step {{ {' '.join(stage_opts)} }}",
        f"pool kv {{ cap {cap}; block {block}; evict lru; preempt lifo; queue fifo; admit via gpu; }}",
    ]
    need_clause = "need (max(prompt, context + 1)) " if need else ""
    for name, at, prompt, max_tokens in requests:
        out.append(
            f"session {name} {{\n"
            f"  arrive at ({at});\n"
            f"  prompt = {prompt};\n"
            f"  max_tokens = min({max_tokens}, max(1, MAX - prompt));\n"
            f"  hold kv (min(max(prompt, context + 1), computed + budget_left(gpu)))\n"
            f"       {need_clause}reserve (MAX - 1) {{\n"
            f"    run gpu prefill (prompt);\n"
            f"    run gpu decode (max_tokens - 1);\n"
            f"  }}\n"
            f"}}"
        )
    return "\n".join(out) + "\n"


def kept_as_counted(sh: Any, label: str = "") -> None:
    """A ledger's `Shadow`, kept by deltas from what changed, equals one counted afresh
    from its ledger: each block's code, the totals, each entry's length and their sum, each
    table's length and their sum."""
    from pooltui.sim.ledgertouched import Shadow

    fresh = Shadow(sh.ledger)
    names = ("seen", "allocated", "cached", "registered", "refs", "elen", "esum", "tlen", "held")
    kept = {name: getattr(sh, name) for name in names}
    assert kept == {name: getattr(fresh, name) for name in names}, label
