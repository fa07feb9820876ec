"""The bundled specs in specs/: each runs headless with no violation, and each shows what
its opening comment says it shows.

The figures checked here were worked out from the documents (the Pool reference,
language.md, vllm-v1.md and docs/decisions.md) before the specs were run: they are
properties the rules guarantee for these workloads (a hit is the session's own entry in
whole blocks; a preempted hold re-enters at the head; LRU evicts the least recently
released entry from its tail; an exclusive-prefill iteration never mixes phases; ...),
not numbers copied from a run.

The two Azure specs replay an hour of real traffic; here they run for their first
minutes only, to keep the suite quick.
"""

from __future__ import annotations

import csv
import datetime
import re
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pooltui.cli.main import main
from pooltui.lang import compile_file, compile_source
from pooltui.sim import Event, Simulation

ROOT = Path(__file__).resolve().parents[2]
SPECS = ROOT / "specs"
DATA = ROOT / "data"

# Simulated seconds the Azure specs run for in these tests (the whole hour takes minutes).
UNTIL = {"azure_conv.pool": 120.0, "azure_code.pool": 300.0, "mooncake_conv.pool": 30.0}

EXPECTED = {
    "vllm_v1.pool",
    "prefix_cache.pool",
    "evict_by.pool",
    "preempt_lifo.pool",
    "preempt_none.pool",
    "ascend_lanes.pool",
    "exclusive_prefill.pool",
    "spill_tiers.pool",
    "data_parallel.pool",
    "multiturn.pool",
    "azure_conv.pool",
    "azure_code.pool",
    "shared_prefix.pool",
    "mooncake_conv.pool",
    "offload.pool",
}

ALL = sorted(p.name for p in SPECS.glob("*.pool"))


# ---------------------------------------------------------------------------- helpers
def events_of(program: Any, until: float | None = None) -> tuple[Simulation, list[Event]]:
    """Run a program to its end (or `until`), invariants on; the events and the sim."""
    sim = Simulation(program, invariants=True, history=False)
    out: list[Event] = []
    sim.run_headless(until=until, on_event=out.append)
    assert sim.violation is None, sim.violation
    assert sim.error is None, sim.error
    assert sim.state.halted is None, sim.state.halted
    return sim, out


_cache: dict[str, tuple[Simulation, list[Event]]] = {}

# One worker runs the whole module (pytest-xdist, `--dist loadgroup`), so each spec's run
# above is made once, not once per worker.
pytestmark = pytest.mark.xdist_group("bundled_specs")


def run_spec(name: str) -> tuple[Simulation, list[Event]]:
    if name not in _cache:
        _cache[name] = events_of(compile_file(str(SPECS / name)), UNTIL.get(name))
    return _cache[name]


def run_text(text: str) -> tuple[Simulation, list[Event]]:
    return events_of(compile_source(text, str(SPECS / "variant.pool"), str(SPECS)))


def spec_text(name: str) -> str:
    return (SPECS / name).read_text(encoding="utf-8")


def of(events: list[Event], moment: str) -> list[Event]:
    return [e for e in events if e.moment == moment]


def scheduled(e: Event) -> list[tuple[str, str, int]]:
    return [tuple(x) for x in e.get("scheduled")]  # type: ignore[misc]


def klass(session: str) -> str:
    return session.split("[")[0]


def track_cache(
    events: list[Event], on_evict: Callable[[Event, dict[str, int], str | None], None]
) -> None:
    """Follow each session's cache entry in a single pool from the events: a release
    makes it (its `cached` units), an evict cuts it to `left`, an admission takes it.
    The entries are kept in release order (a new release moves an entry to the end).
    `on_evict(event, entries before the cut, the session being admitted)` sees each
    eviction; the session being admitted (the next `admit`) is the one whose own
    entry is protected from eviction. (Used on specs whose holds allocate their whole
    size at admission, so every eviction there is made by an admission.)"""
    entries: dict[str, int] = {}
    for i, e in enumerate(events):
        if e.moment == "release" or (e.moment == "preempt" and e.get("cached")):
            entries.pop(e.session, None)  # type: ignore[arg-type]
            if e.get("cached"):
                entries[e.session] = e.get("cached")  # type: ignore[index]
        elif e.moment == "evict":
            admitting = next((x.session for x in events[i:] if x.moment == "admit"), None)
            on_evict(e, dict(entries), admitting)
            left = e.get("left")
            if left:
                entries[e.get("entry")] = left
            else:
                entries.pop(e.get("entry"), None)
        elif e.moment == "admit":
            entries.pop(e.session, None)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------- (a) all run
def test_every_expected_spec_is_bundled() -> None:
    assert set(ALL) >= EXPECTED


@pytest.mark.parametrize("name", ALL)
def test_spec_runs_headless_without_violation(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", str(SPECS / name), "--quiet"]
    if name in UNTIL:
        argv += ["--until", str(UNTIL[name])]
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert "halted" not in out
    if name not in UNTIL:
        assert "0 still live" in out, out  # every session ended


@pytest.mark.parametrize("name", ALL)
def test_spec_opens_with_a_comment_and_is_deterministic(name: str) -> None:
    program = compile_file(str(SPECS / name))
    assert len(program.header_comment.splitlines()) >= 3
    if name not in UNTIL:
        assert re.search(r"^seed \d+;", program.source, re.M), "teaching specs set a seed"


# ---------------------------------------------------------------------------- (b) figures
def test_vllm_v1_admits_chunks_preempts_and_recomputes() -> None:
    _, ev = run_spec("vllm_v1.pool")
    iters = of(ev, "iteration")
    # budget 64 and 8 seats hold in every iteration
    assert all(e.get("tokens") <= 64 and len(scheduled(e)) <= 8 for e in iters)
    # chunked prefill: some request's prefill spans more than one iteration
    prefills = Counter(s for e in iters for s, ph, _ in scheduled(e) if ph == "prefill")
    assert max(prefills.values()) >= 2
    # an iteration that preempted admits nobody (vLLM's waiting loop is skipped)
    assert any(e.get("preempted") for e in iters)
    assert all(not e.get("admitted") for e in iters if e.get("preempted"))
    # the victim is the most recently admitted holder (running[-1])
    holding: dict[str, int] = {}
    order = 0
    for e in ev:
        if e.moment == "admit":
            order += 1
            holding[e.session] = order  # type: ignore[index]
        elif e.moment in ("release", "end"):
            holding.pop(e.session, None)  # type: ignore[arg-type]
        elif e.moment == "preempt":
            assert e.session == max(holding, key=holding.__getitem__)
            holding.pop(e.session)  # type: ignore[arg-type]
    # a preempted request re-enters at the head: the next admission is a re-admission
    preempted = {e.session for e in of(ev, "preempt")}
    for i, e in enumerate(ev):
        if e.moment == "preempt":
            nxt = next(x for x in ev[i + 1 :] if x.moment == "admit")
            assert nxt.session in preempted
    # re-admitted with a hit on its own full blocks, it recomputes the rest
    recomputes = {s for e in iters for s, ph, _ in scheduled(e) if ph == "recompute"}
    assert recomputes and recomputes <= preempted
    readmits = [e for e in of(ev, "admit") if e.session in preempted and e.get("hit")]
    assert readmits and all(e.get("hit") % 16 == 0 for e in readmits)
    assert all(e.get("how") == "done" for e in of(ev, "end"))


def test_prefix_cache_hits_later_turns_and_evicts_lru_tail_first() -> None:
    _, ev = run_spec("prefix_cache.pool")
    admits = of(ev, "admit")
    per_session = defaultdict(list)
    for e in admits:
        per_session[e.session].append(e.get("hit"))
    # a first turn has nothing cached; later turns hit, in whole blocks of 4
    assert all(hits[0] == 0 for hits in per_session.values())
    later = [h for hits in per_session.values() for h in hits[1:]]
    assert any(h > 0 for h in later)
    assert all(h % 4 == 0 for h in later)
    # tail first: an eviction can leave the front of an entry in place
    evicts = of(ev, "evict")
    assert any(e.get("left") > 0 for e in evicts)

    # LRU: the entry cut is the least recently released one (the admitted session's
    # own entry is protected); `entries` is in release order
    checked = []

    def lru(e: Event, entries: dict[str, int], admitting: str | None) -> None:
        if e.get("entry") == admitting:
            return  # the part of its own entry past its hit, freed at admission
        oldest = next(s for s in entries if s != admitting)
        assert e.get("entry") == oldest, (e.describe(), entries)
        checked.append(e)

    track_cache(ev, lru)
    assert checked

    # a session whose entry was cut back hits only what was left of it
    partial = False
    left: dict[str, int] = {}
    for e in ev:
        if e.moment == "release":
            left.pop(e.session, None)  # type: ignore[arg-type]
        elif e.moment == "evict" and e.get("left") > 0:
            left[e.get("entry")] = e.get("left")
        elif e.moment == "admit" and e.session in left:
            assert e.get("hit") <= left.pop(e.session)  # type: ignore[arg-type]
            partial = partial or e.get("hit") > 0
    assert partial


def test_evict_by_keeps_premium_prefixes_longer() -> None:
    _, ev = run_spec("evict_by.pool")

    def premium_last(e: Event, entries: dict[str, int], admitting: str | None) -> None:
        if klass(e.get("entry")) == "premium_user":
            free_left = [s for s in entries if klass(s) == "free" and s != admitting]
            assert not free_left, f"{e.describe()} while free entries {free_left} are cached"

    track_cache(ev, premium_last)
    assert any(klass(e.get("entry")) == "free" for e in of(ev, "evict"))

    # every later turn of a premium user hits its whole previous turn; free users do not
    last_cached: dict[str, int] = {}
    short_free = 0
    for e in ev:
        if e.moment == "release":
            last_cached[e.session] = e.get("cached")  # type: ignore[index]
        elif e.moment == "admit" and e.session in last_cached:
            if klass(e.session) == "premium_user":  # type: ignore[arg-type]
                assert e.get("hit") == last_cached[e.session]  # type: ignore[index]
            elif e.get("hit") < last_cached[e.session]:  # type: ignore[index]
                short_free += 1
    assert short_free > 0

    # the same workload under plain LRU gives premium users fewer hits
    def premium_hits(events: list[Event]) -> int:
        return sum(e.get("hit") for e in of(events, "admit") if klass(e.session) == "premium_user")  # type: ignore[arg-type]

    lru_text = spec_text("evict_by.pool").replace("evict by (premium, last);", "evict lru;")
    _, ev_lru = run_text(lru_text)
    assert premium_hits(ev_lru) < premium_hits(ev)


def _body(name: str) -> str:
    """The spec without comments and blank lines."""
    lines = (line.split("#")[0].rstrip() for line in spec_text(name).splitlines())
    return "\n".join(line for line in lines if line)


def test_preempt_lifo_and_none_are_the_same_workload_but_the_preempt_line() -> None:
    lifo, none = _body("preempt_lifo.pool"), _body("preempt_none.pool")
    assert "preempt lifo;" in lifo
    assert lifo.replace("preempt lifo;", "preempt none;") == none


def test_preempt_lifo_preempts_and_readmits_with_a_hit() -> None:
    _, ev = run_spec("preempt_lifo.pool")
    preempts = of(ev, "preempt")
    assert preempts and not of(ev, "grow-wait")
    for p in preempts:
        # it re-enters the queue marked preempted, and comes back hitting what is left
        # of its cached prefix (other admissions may have evicted its tail meanwhile)
        i = ev.index(p)
        assert ev[i + 1].moment == "enqueue" and ev[i + 1].get("preempted") is True
        left = p.get("cached")
        for e in ev[i + 1 :]:
            if e.moment == "evict" and e.get("entry") == p.session:
                left = e.get("left")
            if e.moment == "admit" and e.session == p.session:
                assert e.get("hit") == left
                break
        else:
            raise AssertionError(f"{p.session} never came back")
    assert any(e.get("hit") for e in of(ev, "admit"))
    assert all(e.get("how") == "done" for e in of(ev, "end"))


def test_preempt_none_waits_instead_and_resumes_in_place() -> None:
    _, ev = run_spec("preempt_none.pool")
    assert not of(ev, "preempt")
    waits = of(ev, "grow-wait")
    assert waits
    admits = Counter(e.session for e in of(ev, "admit"))
    for w in waits:
        # no re-admission: the waiting request keeps its hold and later grows to it
        assert admits[w.session] == 1
        i = ev.index(w)
        assert any(
            e.moment == "grow" and e.session == w.session and e.units >= w.units for e in ev[i:]
        )
    assert len(of(ev, "end")) == 16
    assert all(e.get("how") == "done" for e in of(ev, "end"))


def test_ascend_lanes_admits_in_lane_order_with_aging() -> None:
    _, ev = run_spec("ascend_lanes.pool")
    serial = {e.session: e.get("serial") for e in of(ev, "arrive")}
    reference_line = (
        "queue by (immediate ? 0 : prompt > 128 && waited >= 3 ? 1 : prompt <= 128 ? 2 : 3,\n"
        "            serial);"
    )
    assert reference_line in spec_text("ascend_lanes.pool")  # unchanged from the reference

    def lane(session: str, waited: float) -> int:
        # urgent: immediate = 1; long: prompt 200..400; short: prompt 32..128
        k = klass(session)
        if k == "urgent":
            return 0
        if k == "long":
            return 1 if waited >= 3 else 3
        return 2

    queued: dict[str, float] = {}
    aged_over_short = 0
    for e in ev:
        if e.moment == "enqueue":
            queued[e.session] = e.time  # type: ignore[index]
        elif e.moment == "admit":
            keys = {s: (lane(s, e.time - t), serial[s]) for s, t in queued.items()}
            assert min(keys, key=keys.__getitem__) == e.session, (e.describe(), keys)
            if keys[e.session][0] == 1 and any(k[0] == 2 for k in keys.values()):
                aged_over_short += 1
            del queued[e.session]  # type: ignore[arg-type]
    assert aged_over_short >= 1  # an aged long request went ahead of waiting short ones
    assert all(e.get("how") == "done" for e in of(ev, "end"))


def test_exclusive_prefill_never_mixes_prefill_and_decode() -> None:
    _, ev = run_spec("exclusive_prefill.pool")
    iters = of(ev, "iteration")
    kinds = [
        {"prefill" if ph in ("prefill", "recompute") else "decode" for _, ph, _ in scheduled(e)}
        for e in iters
    ]
    assert all(len(k) <= 1 for k in kinds)
    assert {"prefill"} in kinds and {"decode"} in kinds
    # prefill whole: each prompt is computed in one iteration, never in chunks
    prefills = Counter(s for e in iters for s, ph, _ in scheduled(e) if ph == "prefill")
    assert set(prefills.values()) == {1}
    assert len(prefills) == 14
    assert all(e.get("tokens") <= 256 for e in iters)


def test_spill_tiers_spills_down_the_tiers_and_drops() -> None:
    _, ev = run_spec("spill_tiers.pool")
    # A spill of content the tier already has entirely starts no job (a `spill` of 0
    # units, content-and-reload.md §2): only the others land or drop. (ssd is 6 blocks
    # now, not 10: with per-release entries and known blocks not written again, dram's
    # spills are at most 10 blocks, which a 10-block ssd always held.)
    spills = [e for e in of(ev, "spill") if e.units]
    landed, drops = of(ev, "spilled"), of(ev, "spill-drop")
    assert spills and landed and drops
    # every spill lands or is dropped
    assert len(spills) == len(landed) + len(drops)
    route = {(e.pool, e.get("tier"), e.stage) for e in spills}
    assert route == {("hbm", "dram", "pcie"), ("dram", "ssd", "nvme")}
    # dram writes to disk only prefixes of 8 units or more; hbm writes every one
    assert all(e.units >= 8 for e in spills if e.pool == "dram")
    assert {e.pool for e in landed} | {e.pool for e in drops} <= {"dram", "ssd"}
    assert any(e.pool == "ssd" for e in drops)
    # hbm reads back down the chain (content-and-reload.md §3): from dram, from ssd where
    # dram's copy stops, and from both in one reload; every reload lands
    reloads, reloaded = of(ev, "reload"), of(ev, "reloaded")
    assert reloads and len(reloads) == len(reloaded)
    assert all(e.units >= 8 and e.stage == "pcie" and e.pool == "hbm" for e in reloads)
    tiers = {tuple(label for label, _ in e.get("tiers")) for e in reloads}
    assert {("dram",), ("ssd",), ("dram", "ssd")} <= tiers
    assert all(sum(u for _, u in e.get("tiers")) == e.units for e in reloads)
    # each link serves its jobs FIFO on one lane, work / rate seconds each (pcie: the
    # spills into dram and the reloads): the k-th job ends (lands, drops or is reloaded)
    # in order, no sooner than its work allows
    rate = {"pcie": 1000, "nvme": 250}
    for tier, link in (("dram", "pcie"), ("ssd", "nvme")):
        starts = [e for e in ev if e.units and e.moment in ("spill", "reload") and e.stage == link]
        ends = [
            e for e in ev
            if (e.moment in ("spilled", "spill-drop") and e.pool == tier)
            or (e.moment == "reloaded" and e.stage == link)
        ]  # fmt: skip
        assert all(e.get("work") == e.units for e in starts)  # work (size): units moved
        assert len(starts) == len(ends)
        free_at = 0.0
        for s, end in zip(starts, ends, strict=True):
            assert s.session == end.session
            assert (s.moment == "reload") == (end.moment == "reloaded")
            free_at = max(free_at, s.time) + s.get("work") / rate[s.stage]
            assert end.time == pytest.approx(free_at)


def test_data_parallel_uses_every_member_and_its_joined_worker() -> None:
    _, ev = run_spec("data_parallel.pool")
    admits = of(ev, "admit")
    member = {e.session: e.pool for e in admits}
    assert set(member.values()) == {"kv[0]", "kv[1]", "kv[2]", "kv[3]"}
    # the first request finds every queue empty: the tie goes to member 0
    assert admits[0].pool == "kv[0]"
    # kv[i] is admitted by gpu[i], and its requests run on gpu[i] only
    assert all(e.stage == "gpu" + e.pool[2:] for e in admits)  # type: ignore[index, operator]
    for e in of(ev, "iteration"):
        for s, _, _ in scheduled(e):
            assert member[s][2:] == e.stage[3:]  # type: ignore[index]
    assert len(of(ev, "end")) == 40


def test_multiturn_later_turns_hit_their_own_history() -> None:
    sim, ev = run_spec("multiturn.pool")
    turns = Counter(e.session for e in of(ev, "admit"))
    assert set(turns) == {f"user[{i}]" for i in range(10)}
    assert all(n >= 4 for n in turns.values())
    # without an eviction in between, a turn hits all its previous turn cached
    cached: dict[str, int] = {}
    full = 0
    for e in ev:
        if e.moment == "release":
            cached[e.session] = e.get("cached")  # type: ignore[index]
        elif e.moment == "evict":
            cached.pop(e.get("entry"), None)
        elif e.moment == "admit" and e.session in cached:
            assert e.get("hit") == cached.pop(e.session)  # type: ignore[arg-type]
            full += 1
    assert full >= 20  # most of the 30 later turns
    hit, asked = sim.state.hit_units[:2]
    assert hit / asked > 0.5


def _rows_until(csv_name: str, until: float) -> int:
    with open(DATA / csv_name, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    t0 = datetime.datetime.fromisoformat(rows[0]["TIMESTAMP"][:26])
    return sum(
        1
        for r in rows
        if (datetime.datetime.fromisoformat(r["TIMESTAMP"][:26]) - t0).total_seconds() <= until
    )


def test_azure_conv_replays_the_trace() -> None:
    _, ev = run_spec("azure_conv.pool")
    assert len(of(ev, "arrive")) == _rows_until("azure_llm_conv_2023.csv", UNTIL["azure_conv.pool"])
    assert not of(ev, "reject")  # every prompt is within max_model_len and the cache
    assert all(e.get("tokens") <= 8192 for e in of(ev, "iteration"))
    assert of(ev, "end")


def test_azure_code_pool_is_the_bottleneck_in_a_burst() -> None:
    _, ev = run_spec("azure_code.pool")
    assert len(of(ev, "arrive")) == _rows_until("azure_llm_code_2023.csv", UNTIL["azure_code.pool"])
    assert not of(ev, "reject")
    # full-sequence admission with a 16,384-token cache and prompts of ~2,000 tokens:
    # in the first minutes some request waits over a second for room
    enq: dict[str, float] = {}
    waits = []
    for e in ev:
        if e.moment == "enqueue" and not e.get("preempted"):
            enq[e.session] = e.time  # type: ignore[index]
        elif e.moment == "admit" and e.session in enq:
            waits.append(e.time - enq.pop(e.session))  # type: ignore[arg-type]
    assert max(waits) > 1.0
    # with room for everyone the same minutes queue far less
    big = spec_text("azure_code.pool").replace("cap 1024 * BLOCK;", "cap 100000 * BLOCK;")
    program = compile_source(big, str(SPECS / "azure_code_big.pool"), str(SPECS))
    sim = Simulation(program, invariants=False, history=False)
    enq2: dict[str, float] = {}
    waits2: list[float] = []

    def on(e: Event) -> None:
        if e.moment == "enqueue":
            enq2[e.session] = e.time  # type: ignore[index]
        elif e.moment == "admit" and e.session in enq2:
            waits2.append(e.time - enq2.pop(e.session))  # type: ignore[arg-type]

    sim.run_headless(until=UNTIL["azure_code.pool"], on_event=on)
    assert sum(waits2) < sum(waits) / 2


def test_shared_prefix_tenants_prompts_are_computed_once_and_shared() -> None:
    # From the spec: content (tenant : 512) is 32 blocks of 16; every header is at least
    # 513 units once 512 are found (budget_left > 0 at an admission), so the cap
    # ⌊(U − 1)/16⌋ never cuts a tenant's prompt: a first admission hits 0 (its tenant's
    # prompt not registered yet) or exactly 512. With 60 requests in about a second, each
    # living seconds, a tenant's prompt is always held by one of its requests: never
    # evicted, so only each tenant's first request (3 tenants at most) computes it, and the
    # later ones share blocks other requests still hold (shared > 0).
    sim, ev = run_spec("shared_prefix.pool")
    first: dict[str, Event] = {}
    for e in of(ev, "admit"):
        first.setdefault(e.session or "", e)
    assert len(first) == 60
    hits = [e.get("hit") for e in first.values()]
    assert set(hits) <= {0, 512}
    assert 1 <= hits.count(0) <= 3
    assert all(0 <= e.get("shared") <= e.get("hit") for e in of(ev, "admit"))
    assert all(e.get("hit") % 16 == 0 for e in of(ev, "admit"))
    assert any(e.get("shared") == 512 for e in first.values())
    s = sim.summary()
    assert s.hit_shared >= 512 * (60 - 3) and s.hit_held > 0
    assert s.hit_own + s.hit_shared + s.hit_reloaded == s.hit_units


def test_mooncake_conv_shares_hash_ids_and_evicts() -> None:
    # From the spec: hits are whole blocks of 16, never the hold's last unit; a
    # conversation's later turns share their earlier turns' hash_ids, so some admissions
    # hit; 30 s of the trace bring about a hundred prompts of ~12,000 tokens into a cache
    # of 131,072: it evicts.
    sim, ev = run_spec("mooncake_conv.pool")
    admits = of(ev, "admit")
    assert admits and all(e.get("hit") % 16 == 0 for e in admits)
    assert all(e.get("hit") < max(e.units or 0, 1) for e in admits)
    assert any(e.get("hit") > 0 for e in admits)
    assert of(ev, "evict")
    s = sim.summary()
    assert s.hit_own + s.hit_shared == s.hit_units and s.hit_shared > 0


def test_offload_runs_one_workload_with_and_without_its_tier() -> None:
    # From the spec: TIER switches hbm's spill and reload on (1) or off (0); nothing else
    # changes, and no expression that draws reads the cache, so the same conversations
    # arrive at the same times in both runs. With the tier, evicted prefixes are written
    # to dram and later turns reload them (from dram, the only tier), every reload lands
    # (the run ends with nobody live), and the reloaded units are part of the hits; without
    # it nothing is spilled or reloaded.
    text = spec_text("offload.pool")
    assert "const TIER = 1;" in text
    with_tier, ev1 = run_spec("offload.pool")
    without, ev0 = run_text(text.replace("const TIER = 1;", "const TIER = 0;"))

    def arrivals(ev: list[Event]) -> list[tuple[float, str | None]]:
        return [(e.time, e.session) for e in of(ev, "arrive")]

    assert arrivals(ev1) == arrivals(ev0) and len(arrivals(ev1)) == 24
    s1, s0 = with_tier.summary(), without.summary()
    assert (s0.spills, s0.reloads, s0.hit_reloaded) == (0, 0, 0)
    assert not of(ev0, "spill") and not of(ev0, "reload")
    reloads = of(ev1, "reload")
    assert reloads and len(reloads) == len(of(ev1, "reloaded")) == s1.reloads
    assert all(e.get("tiers") == (("dram", e.units),) for e in reloads)
    assert s1.reloaded_units == s1.hit_reloaded == sum(e.units or 0 for e in reloads) > 0
    assert s1.hit_own + s1.hit_shared + s1.hit_reloaded == s1.hit_units
    assert s1.live == s0.live == 0 and s1.done == s0.done == 24
