"""`reload via LINK (WORK) [when (PRED)];` (content-and-reload.md §3): parsed, checked,
lowered to `CReload` on the pool, shown by `pooltui ir`, accepted by `pooltui check`, and its
moments known to the breakpoint language.

Expectations are written by hand from the design (§3) and docs/language.md §5.7; the located
messages are golden files (tests/lang/golden/reload_*)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pooltui.cli.main import main
from pooltui.lang import SpecError, compile_source
from pooltui.lang.ir import Attr, Binary, CReload, CSpill, Num, Query, Ref, Var
from pooltui.sim.events import MOMENTS
from pooltui.tui.breakpoint_text import Names, parse_breakpoint

from .helpers import strip_spans

# The design's §3 example, with the stages it names.
DESIGN = """
stage gpu step { budget 64; }
stage pcie link { rate 1000; }
stage nvme link { rate 100; }
pool hbm  { cap 64 * 16; block 16; evict lru; preempt lifo; admit via gpu;
            spill dram via pcie (size) when (1);
            reload via pcie (size) when (size >= 64); }
pool dram { cap 1024 * 16; block 16; evict lru; spill ssd via nvme (size) when (1); }
pool ssd  { cap 8192 * 16; block 16; evict lru; }
session s { hold hbm (10) { run gpu prefill (10); } }
"""

# A spill to `host` over `pcie`, and a reload written in place of RELOAD.
TEMPLATE = """
stage gpu step { }
stage pcie link { }
pool host { }
pool kv { admit via gpu; spill host via pcie (size) when (1); RELOAD }
session s { prio = 1; hold kv (8) { run gpu prefill (8); } }
"""


def pool_of(text: str, name: str = "kv") -> object:
    return strip_spans(compile_source(text, "t.pool").pool(name))


def errors(text: str) -> list[str]:
    with pytest.raises(SpecError) as info:
        compile_source(text, "t.pool")
    return [d.message for d in info.value.diagnostics]


def test_the_designs_example() -> None:
    # hbm spills to dram, dram to ssd: the chain a reload looks down is (dram, ssd).
    prog = compile_source(DESIGN, "t.pool")
    hbm = strip_spans(prog.pool("hbm"))
    assert hbm.reload == CReload(
        "pcie", Var("size"), Binary(">=", Var("size"), Num(64)), ("dram", "ssd")
    )
    assert hbm.spill == CSpill("dram", "pcie", Var("size"), Num(1))
    assert prog.pool("dram").reload is None and prog.pool("ssd").reload is None
    # The span is the whole statement, `reload` to the `)` of its predicate (line 7 of
    # DESIGN, which opens with a newline; `reload` stands at column 13).
    span = prog.pool("hbm").reload.span  # type: ignore[union-attr]
    assert (span.line, span.col, span.end_line, span.end_col) == (7, 13, 7, 53)


def test_when_is_optional() -> None:
    kv = pool_of(TEMPLATE.replace("RELOAD", "reload via pcie (size / 2);"))
    assert kv.reload == CReload("pcie", Binary("/", Var("size"), Num(2)), None, ("host",))  # type: ignore[attr-defined]
    kv_ir = compile_source(TEMPLATE.replace("RELOAD", "reload via pcie (size);"), "t").pool("kv")
    # Before `reload`: `pool kv { ` (10) + `admit via gpu; ` (15) + `spill host via pcie
    # (size) when (1); ` (37) = 62 characters, so it starts at column 63; the statement
    # without its `;`, `reload via pcie (size)`, is 22 characters: end column 85.
    assert kv_ir.reload is not None
    assert (kv_ir.reload.span.col, kv_ir.reload.span.end_col) == (63, 85)


def test_what_work_and_predicate_read() -> None:
    # size, now, serial, the session's attributes, constants and queries.
    text = "const SETUP = 0.001;\n" + TEMPLATE.replace(
        "RELOAD",
        "reload via pcie (SETUP + size * prio) when (size >= 32 && residents(pcie) < 1 "
        "&& now >= serial);",
    )
    kv = pool_of(text)
    assert kv.reload == CReload(  # type: ignore[attr-defined]
        "pcie",
        Binary("+", Num(0.001), Binary("*", Var("size"), Attr("prio"))),
        Binary(
            "&&",
            Binary(
                "&&",
                Binary(">=", Var("size"), Num(32)),
                Binary("<", Query("residents", Ref("stage", "pcie")), Num(1)),
            ),
            Binary(">=", Var("now"), Var("serial")),
        ),
        ("host",),
    )


@pytest.mark.parametrize(
    ("var", "meaningful"),
    [
        ("computed", "hold headers and the statements inside a hold"),
        ("context", "hold headers and the statements inside a hold"),
        ("age", "evict keys"),
        ("last", "evict keys"),
        ("waiting", "queue keys and evict keys"),
        ("waited", "queue keys"),
        ("tokens", "a step stage's time"),
    ],
)
def test_other_context_variables_are_out_of_scope(var: str, meaningful: str) -> None:
    for where, clause in (
        ("work", f"reload via pcie ({var});"),
        ("predicate", f"reload via pcie (size) when ({var});"),
    ):
        assert errors(TEMPLATE.replace("RELOAD", clause)) == [
            f"'{var}' cannot be read in a reload's {where}; it is meaningful in {meaningful}"
        ]


def test_size_and_serial_say_reloads_read_them() -> None:
    assert errors("session s { x = serial + size; }") == [
        "'size' cannot be read in a session statement; it is meaningful in evict keys and "
        "the work and predicate of a spill or a reload"
    ]
    spill_serial = "pool kv { spill kv2 via l (serial) when (1); }\npool kv2 { }\nstage l link { }"
    assert errors(spill_serial) == [
        "'serial' cannot be read in a spill's work; it is meaningful in session statements, "
        "hold headers, queue keys, evict keys and a reload's work and predicate"
    ]


def test_a_list_column_cannot_be_reload_work(tmp_path: Path) -> None:
    (tmp_path / "t.jsonl").write_text('{"ids": [1, 2], "reload": 3}\n')
    text = (
        "stage pcie link { }\npool host { }\n"
        "pool kv { spill host via pcie (size) when (1); reload via pcie (ids); }\n"
        'session s from "t.jsonl" { }\n'
    )
    with pytest.raises(SpecError) as info:
        compile_source(text, "t.pool", str(tmp_path))
    assert [d.message for d in info.value.diagnostics] == [
        "'ids' holds lists (a column of a session's source); a list can only be a content "
        "key: content (ids : UNITS)"
    ]
    # A column named like the new keyword is still read, as row.reload.
    prog = compile_source(
        text.replace("reload via pcie (ids)", "reload via pcie (size * row.reload)"),
        "t.pool",
        str(tmp_path),
    )
    assert strip_spans(prog.pool("kv").reload.work) == Binary(  # type: ignore[union-attr]
        "*", Var("size"), Attr("reload")
    )


def test_reload_is_a_keyword() -> None:
    assert errors("session s { reload = 1; }") == [
        "expected a statement or '}', found 'reload' (a keyword: keywords are reserved)"
    ]


def test_spill_chain_is_walked_once() -> None:
    # a -> b -> c -> b: the chain from a is (b, c); b's own chain (c) stops before b.
    # x -> y -> x: x's chain is (y), stopping before x itself.
    text = """
    stage l link { }
    pool a { spill b via l (size) when (1); reload via l (size); }
    pool b { spill c via l (size) when (1); reload via l (size); }
    pool c { spill b via l (size) when (1); }
    pool x { spill y via l (size) when (1); reload via l (size); }
    pool y { spill x via l (size) when (1); }
    session s { }
    """
    prog = compile_source(text, "t.pool")
    tiers = {p.name: p.reload.tiers for p in prog.pools if p.reload is not None}
    assert tiers == {"a": ("b", "c"), "b": ("c",), "x": ("y",)}


def test_families_join_like_spill() -> None:
    # kv[2] joins pcie[2] member for member, and a shared link of one.
    for link in ("stage pcie[2] link { }", "stage pcie link { }"):
        prog = compile_source(
            f"{link}\npool host[2] {{ }}\n"
            "pool kv[2] { spill host via pcie (size) when (1); reload via pcie (size); }\n"
            "session s { }",
            "t.pool",
        )
        assert prog.pool("kv").reload == CReload(
            "pcie", Var("size", prog.pool("kv").reload.work.span), None, ("host",),  # type: ignore[union-attr]
            prog.pool("kv").reload.span,  # type: ignore[union-attr]
        )  # fmt: skip


def test_a_failed_spill_is_reported_once() -> None:
    # The spill names an unknown tier: its error, not also "reload needs spill".
    text = TEMPLATE.replace("spill host", "spill hots").replace("RELOAD", "reload via pcie (size);")
    assert errors(text) == ["unknown pool 'hots'; did you mean 'host'?"]


def test_every_error_of_one_reload_is_reported() -> None:
    # No spill, a step stage, a draw in the work, an unknown name in the predicate: four
    # independent mistakes, four errors, in the order they are written.
    text = (
        "stage gpu step { }\npool kv { reload via gpu (draw real(0, 1)) when (sise); }\n"
        "session s { }"
    )
    assert errors(text) == [
        "reload needs spill: pool 'kv' reloads what it spilled to its tiers, and it does "
        "not spill (add spill POOL via LINK (WORK) when (PRED);)",
        "reload via needs a link stage; 'gpu' is a step stage (declared at 1:7)",
        "a draw is not allowed in a reload's work: a reload is evaluated at every admission "
        "attempt, and a draw there would make the session's draws depend on the cache",
        "unknown name 'sise'; did you mean 'size'?",
    ]


def test_link_suggestions_are_links_only() -> None:
    # `pcix` is a step stage: no suggestion for a link named `pcie`; `nvme` is too far.
    text = (
        "stage pcix step { }\nstage nvme link { }\npool host { }\n"
        "pool kv { spill host via nvme (size) when (1); reload via pcie (size); }\nsession s { }"
    )
    assert errors(text) == ["unknown link stage 'pcie'"]
    # and a step stage for `admit via`: `pcie` (a link) is not offered for `pcia`.
    assert errors("stage pcie link { }\npool kv { admit via pcia; }\nsession s { }") == [
        "unknown step stage 'pcia'"
    ]


def test_a_closed_predicate_is_evaluated() -> None:
    assert errors(TEMPLATE.replace("RELOAD", "reload via pcie (size) when (1 / 0);")) == [
        "division by zero"
    ]
    # inf work is allowed (a load that never lands, as a send of inf work).
    kv = pool_of(TEMPLATE.replace("RELOAD", "reload via pcie (inf);"))
    assert kv.reload.work == Num(float("inf"))  # type: ignore[attr-defined]


def test_check_and_ir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "tiers.pool"
    spec.write_text(DESIGN)
    assert main(["check", str(spec)]) == 0
    assert (
        capsys.readouterr().out == f"{spec}: ok — 3 pools, 3 stages, 1 session class, 1 session\n"
    )
    assert main(["ir", str(spec)]) == 0
    pools = json.loads(capsys.readouterr().out)["pools"]
    assert pools[0]["reload"] == {
        "node": "CReload",
        "via": "pcie",
        "work": {"node": "Var", "name": "size", "span": "7:30"},
        "when": {
            "node": "Binary",
            "op": ">=",
            "left": {"node": "Var", "name": "size", "span": "7:42"},
            "right": {"node": "Num", "value": 64, "span": "7:50"},
            "span": "7:42",
        },
        "tiers": ["dram", "ssd"],
        "span": "7:13",
    }
    assert pools[1]["reload"] is None and pools[2]["reload"] is None


def test_moments_reload_and_reloaded_take_breakpoints() -> None:
    assert MOMENTS.index("reloaded") == MOMENTS.index("reload") + 1
    names = Names(pools=("hbm", "dram"), stages=("gpu", "pcie"), classes=("chat",))
    bp = parse_breakpoint("reload pool=hbm stage=pcie", names)
    assert (bp.kind, bp.moment, bp.pool, bp.stage) == ("moment", "reload", "hbm", "pcie")
    bp = parse_breakpoint("reloaded chat", names)
    assert (bp.moment, bp.session_class) == ("reloaded", "chat")
