"""Every construct of the language compiles to the IR written out here by hand."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from pooltui.lang import SpecError, compile_condition, compile_file, compile_source
from pooltui.lang.ir import (
    INF,
    ArgQuery,
    ArriveAt,
    ArriveEvery,
    Attr,
    Binary,
    Call,
    CCheck,
    Cond,
    CPool,
    CSession,
    CSpill,
    CStage,
    Draw,
    EvictBy,
    EvictLru,
    Grow,
    Hold,
    If,
    Num,
    Query,
    QueueBy,
    QueueFifo,
    Ref,
    Repeat,
    Run,
    Send,
    SetAttr,
    Unary,
    Var,
    Wait,
)

from .helpers import strip_spans

HERE = Path(__file__).parent
DATA = HERE.parent.parent / "data"  # the repository's own traces


def compile_ok(text: str) -> object:
    return strip_spans(compile_source(text, "t.pool", str(HERE)))


def session_body(text: str, prelude: str = "") -> tuple[object, ...]:
    prog = compile_source(prelude + "\nsession s {\n" + text + "\n}\n", "t.pool")
    return strip_spans(prog.sessions[0].body)  # type: ignore[no-any-return]


def expr_of(text: str, prelude: str = "") -> object:
    (stmt,) = session_body(f"x = {text};", prelude)
    assert isinstance(stmt, SetAttr)
    return stmt.value


# --------------------------------------------------------------------------- top level


def test_seed_const_check() -> None:
    prog = compile_source(
        """
        const B = A * 2;      # order does not matter
        const A = 8;
        const C = max(B, 3) + 0.5;
        seed 7;
        pool kv { cap B * 4; block A; }
        check "fits" (allocated(kv) + cached(kv) <= cap(kv));
        session s { }
        """,
        "t.pool",
    )
    assert prog.seed == 7
    assert prog.consts == (("B", 16), ("A", 8), ("C", 16.5))
    assert strip_spans(prog.pools[0]) == CPool("kv", cap=64, block=8)
    kv = Ref("pool", "kv")
    assert strip_spans(prog.checks) == (
        CCheck(
            "fits",
            Binary(
                "<=",
                Binary("+", Query("allocated", kv), Query("cached", kv)),
                Query("cap", kv),
            ),
        ),
    )


def test_defaults() -> None:
    prog = compile_source("pool kv { }\nstage gpu step { }\nstage l link { }\nsession s { }", "t")
    assert prog.seed == 0
    assert strip_spans(prog.pools) == (CPool("kv"),)
    assert prog.pools[0].cap == INF and prog.pools[0].block is None
    assert strip_spans(prog.stages) == (CStage("gpu", "step"), CStage("l", "link"))
    assert strip_spans(prog.sessions) == (CSession("s", 1, None, ArriveAt(Num(0)), ()),)


def test_step_stage_every_option() -> None:
    prog = compile_source(
        """
        stage gpu[4] step {
          budget 8192; seats 256;
          time 0.004 + 0.00002 * tokens + residents * 0 + prefills - decodes;
          prefill whole;
          serve exclusive prefill;
        }
        session s { }
        """,
        "t",
    )
    time = Binary(
        "-",
        Binary(
            "+",
            Binary(
                "+",
                Binary("+", Num(0.004), Binary("*", Num(2e-5), Var("tokens"))),
                Binary("*", Var("residents"), Num(0)),
            ),
            Var("prefills"),
        ),
        Var("decodes"),
    )
    assert strip_spans(prog.stages[0]) == CStage(
        "gpu", "step", count=4, family=True, budget=8192, seats=256, time=time,
        prefill="whole", exclusive_prefill=True,
    )  # fmt: skip


def test_link_stage() -> None:
    prog = compile_source("stage pcie link { rate 25e9; lanes 2; }\nsession s { }", "t")
    assert strip_spans(prog.stages[0]) == CStage("pcie", "link", rate=25e9, lanes=2)


def test_pool_every_option() -> None:
    prog = compile_source(
        """
        stage gpu step { }
        stage pcie link { }
        pool host { cap inf; }
        pool kv {
          cap 8191 * 16;
          block 16;
          evict by (size, -age, last, waiting, prio);
          preempt lifo;
          queue by (prio, waited, serial);
          admit via gpu;
          spill host via pcie (size * 2) when (size >= 16);
        }
        session s { prio = 1; }
        """,
        "t",
    )
    kv = strip_spans(prog.pool("kv"))
    assert kv == CPool(
        "kv",
        cap=131056,
        block=16,
        evict=EvictBy(
            (Var("size"), Unary("-", Var("age")), Var("last"), Var("waiting"), Attr("prio"))
        ),
        preempt="lifo",
        queue=QueueBy((Attr("prio"), Var("waited"), Var("serial"))),
        spill=CSpill(
            "host", "pcie", Binary("*", Var("size"), Num(2)), Binary(">=", Var("size"), Num(16))
        ),
        admit_via="gpu",
    )
    assert strip_spans(prog.pool("host")) == CPool("host", cap=INF)
    assert isinstance(prog.pool("kv").cap, int)


def test_pool_lru_fifo_none() -> None:
    prog = compile_source("pool kv { evict lru; preempt none; queue fifo; }\nsession s { }", "t")
    assert strip_spans(prog.pools[0]) == CPool(
        "kv", evict=EvictLru(), preempt="none", queue=QueueFifo()
    )


def test_families_join() -> None:
    prog = compile_source(
        """
        stage gpu[4] step { }
        stage pcie link { }
        pool host[4] { }
        pool kv[4] { admit via gpu; spill host via pcie (size) when (1); }
        pool one[1] { }
        session chat[3] {
          hold kv[argmin(kv, queued)] (1) {
            run gpu prefill (1);
            run gpu[0] decode (1);
          }
          hold one (1) { }
          hold one[0] (1) { }
        }
        """,
        "t",
    )
    assert prog.pool("kv").count == 4 and prog.pool("kv").family
    assert prog.pool("one").count == 1 and prog.pool("one").family
    chat = prog.sessions[0]
    assert (chat.count, chat.family) == (3, True)
    assert strip_spans(chat.body) == (
        Hold(
            Ref("pool", "kv", ArgQuery("argmin", Ref("pool", "kv"), "queued")),
            Num(1),
            None,
            None,
            (
                Run(Ref("stage", "gpu"), "prefill", Num(1)),
                Run(Ref("stage", "gpu", Num(0)), "decode", Num(1)),
            ),
        ),
        Hold(Ref("pool", "one"), Num(1), None, None, ()),
        Hold(Ref("pool", "one", Num(0)), Num(1), None, None, ()),
    )


# --------------------------------------------------------------------------- sessions


def test_session_statements() -> None:
    body = session_body(
        """
        arrive every (draw exponential(0.5));
        prompt = draw uniform(64, 2048);
        hold kv (min(prompt, computed + budget_left(gpu))) need (prompt) reserve (prompt + 8) {
          run gpu prefill (prompt);
          run gpu decode (8 - 1);
          grow kv (context);
          send pcie[1] (size_bytes);
          wait (0.5);
          repeat (3) { wait (1); }
          if (prompt > 100) { wait (2); } else if (prompt > 50) { wait (3); } else { wait (4); }
          if (1) { }
        }
        size_bytes = 2;
        """,
        "stage gpu step { }\nstage pcie[2] link { }\npool kv { }",
    )
    p = Attr("prompt")
    assert body == (
        SetAttr("prompt", Draw("uniform", (Num(64), Num(2048)))),
        Hold(
            Ref("pool", "kv"),
            Call(
                "min", (p, Binary("+", Var("computed"), Query("budget_left", Ref("stage", "gpu"))))
            ),
            p,
            Binary("+", p, Num(8)),
            (
                Run(Ref("stage", "gpu"), "prefill", p),
                Run(Ref("stage", "gpu"), "decode", Binary("-", Num(8), Num(1))),
                Grow("kv", Var("context")),
                Send(Ref("stage", "pcie", Num(1)), Attr("size_bytes")),
                Wait(Num(0.5)),
                Repeat(Num(3), (Wait(Num(1)),)),
                If(
                    Binary(">", p, Num(100)),
                    (Wait(Num(2)),),
                    (If(Binary(">", p, Num(50)), (Wait(Num(3)),), (Wait(Num(4)),)),),
                ),
                If(Num(1), (), ()),
            ),
        ),
        SetAttr("size_bytes", Num(2)),
    )


def test_arrive_forms() -> None:
    a = compile_source("session s[2] { arrive at (draw real(0, 1)); }", "t").sessions[0]
    assert strip_spans(a.arrive) == ArriveAt(Draw("real", (Num(0), Num(1))))
    b = compile_source("const G = 2;\nsession s { arrive every (G); }", "t").sessions[0]
    assert strip_spans(b.arrive) == ArriveEvery(Num(2))


needs_traces = pytest.mark.skipif(
    not (DATA / "azure_llm_conv_2023.csv").is_file(), reason="the repository's data/ is not here"
)


@needs_traces
def test_csv_session() -> None:
    path = DATA / "azure_llm_conv_2023.csv"
    prog = compile_source(
        f"""
        pool kv {{ }}
        stage gpu step {{ }}
        session req from "{path}" limit 2000 {{
          arrive at (TIMESTAMP);
          hold kv (ContextTokens) reserve (ContextTokens + GeneratedTokens) {{
            run gpu prefill (ContextTokens);
            run gpu decode (GeneratedTokens);
          }}
        }}
        """,
        "t",
    )
    (req,) = prog.sessions
    assert req.count == 2000 and not req.family
    src = req.source
    assert src is not None
    assert src.columns == ("TIMESTAMP", "ContextTokens", "GeneratedTokens")
    assert src.limit == 2000 and len(src.rows) == 2000
    assert src.written == str(path) and src.path == str(path)
    # 2023-11-16 18:15:46.6805900,374,44 then 18:15:50.9951690,396,109
    assert src.rows[0] == (0.0, 374.0, 44.0)
    assert src.rows[1][0] == pytest.approx(4.314579, abs=1e-6)
    assert src.rows[1][1:] == (396.0, 109.0)
    assert strip_spans(req.arrive) == ArriveAt(Attr("TIMESTAMP"))


def test_csv_relative_to_spec(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "t.csv").write_text("t,n\n1.5,2\n3,4\n")
    spec = tmp_path / "x.pool"
    spec.write_text('session s from "data/t.csv" { arrive at (t); y = n; }\n')
    prog = compile_file(str(spec))
    src = prog.sessions[0].source
    assert src is not None and src.rows == ((1.5, 2.0), (3.0, 4.0)) and src.limit is None
    assert prog.sessions[0].count == 2


@needs_traces
def test_full_traces_read_fast() -> None:

    # How fast they are read is measured by `python -m benchmarks compile_bench`, not here.
    for name in ("azure_llm_conv_2023.csv", "azure_llm_code_2023.csv"):
        prog = compile_source(f'session s from "{DATA / name}" {{ x = ContextTokens; }}', "t")
        assert prog.sessions[0].count in (19366, 8819)


# --------------------------------------------------------------------------- expressions


def test_precedence() -> None:
    # * over +, + over <, < over ==, == over &&, && over ||, ?: lowest and right-assoc
    e = expr_of("1 + 2 * 3 < 4 == 5 && 6 || 7 ? 8 : 9 ? 10 : 11")
    assert e == Cond(
        Binary(
            "||",
            Binary(
                "&&",
                Binary(
                    "==",
                    Binary("<", Binary("+", Num(1), Binary("*", Num(2), Num(3))), Num(4)),
                    Num(5),
                ),
                Num(6),
            ),
            Num(7),
        ),
        Num(8),
        Cond(Num(9), Num(10), Num(11)),
    )
    assert expr_of("10 - 2 - 3") == Binary("-", Binary("-", Num(10), Num(2)), Num(3))
    assert expr_of("-(1 + 2) % 4 / 2") == Binary(
        "/", Binary("%", Unary("-", Binary("+", Num(1), Num(2))), Num(4)), Num(2)
    )
    assert expr_of("!1 != +2 >= 3 > 4 <= 5") == Binary(
        "!=",
        Unary("!", Num(1)),
        Binary("<=", Binary(">", Binary(">=", Unary("+", Num(2)), Num(3)), Num(4)), Num(5)),
    )


def test_numbers() -> None:
    assert expr_of("16_384") == Num(16384)
    assert expr_of("0.5") == Num(0.5)
    assert expr_of("2e-5") == Num(2e-5)
    assert expr_of("1E3") == Num(1000.0)
    v = expr_of("inf")
    assert isinstance(v, Num) and math.isinf(v.value)


def test_calls_draws_queries() -> None:
    prelude = "pool kv[2] { }\nstage gpu[2] step { }"
    assert expr_of("min(1, 2, 3) + max(1) + abs(-1)", prelude) == Binary(
        "+",
        Binary("+", Call("min", (Num(1), Num(2), Num(3))), Call("max", (Num(1),))),
        Call("abs", (Unary("-", Num(1)),)),
    )
    for fn in ("floor", "ceil", "round", "log", "sqrt"):
        assert expr_of(f"{fn}(2)", prelude) == Call(fn, (Num(2),))
    for dist, args in (("uniform", 2), ("real", 2), ("exponential", 1), ("normal", 2),
                       ("lognormal", 2), ("bernoulli", 1), ("poisson", 1), ("choice", 4)):  # fmt: skip
        text = ", ".join(str(i) for i in range(1, args + 1))
        assert expr_of(f"draw {dist}({text})", prelude) == Draw(
            dist, tuple(Num(i) for i in range(1, args + 1))
        )
    for q in ("cap", "allocated", "cached", "free", "queued"):
        assert expr_of(f"{q}(kv[1])", prelude) == Query(q, Ref("pool", "kv", Num(1)))
    for q in ("budget_left", "residents", "seats_left"):
        assert expr_of(f"{q}(gpu[serial % 2])", prelude) == Query(
            q, Ref("stage", "gpu", Binary("%", Var("serial"), Num(2)))
        )
    assert expr_of("argmax(kv, cap) + argmin(gpu, residents)", prelude) == Binary(
        "+",
        ArgQuery("argmax", Ref("pool", "kv"), "cap"),
        ArgQuery("argmin", Ref("stage", "gpu"), "residents"),
    )


def test_ascend_example_compiles_unchanged() -> None:
    prog = compile_source(
        """
        stage npu step { budget 4096; }
        pool kv {
          cap 1024 * 128; block 128; admit via npu;
          queue by (immediate ? 0 : prompt > 128 && waited >= 3 ? 1 : prompt <= 128 ? 2 : 3,
                    serial);
        }
        session r[100] {
          immediate = draw bernoulli(0.1);
          prompt = draw uniform(16, 512);
          hold kv (prompt) { run npu prefill (prompt); run npu decode (16); }
        }
        """,
        "ascend.pool",
    )
    p = Attr("prompt")
    assert strip_spans(prog.pools[0].queue) == QueueBy(
        (
            Cond(
                Attr("immediate"),
                Num(0),
                Cond(
                    Binary("&&", Binary(">", p, Num(128)), Binary(">=", Var("waited"), Num(3))),
                    Num(1),
                    Cond(Binary("<=", p, Num(128)), Num(2), Num(3)),
                ),
            ),
            Var("serial"),
        )
    )


def test_documents_examples_compile() -> None:
    prog = compile_file(str(HERE / "specs" / "lang_examples.pool"))
    assert [s.name for s in prog.sessions] == ["chat", "req", "vllm"]
    assert prog.header_comment == "language.md's examples, together.\nSecond line."
    vllm = prog.sessions[2].body[2]
    assert isinstance(vllm, Hold)
    l_expr = Call("max", (Attr("prompt"), Binary("+", Var("context"), Num(1))))
    assert strip_spans(vllm.need) == l_expr
    assert strip_spans(vllm.units) == Call(
        "min", (l_expr, Binary("+", Var("computed"), Query("budget_left", Ref("stage", "gpu"))))
    )
    assert strip_spans(vllm.reserve) == Num(4096)


def test_vllm_section_9_compiles() -> None:
    prog = compile_file(str(HERE / "specs" / "vllm_v1.pool"))
    assert strip_spans(prog.stages) == (CStage("gpu", "step", budget=2048, seats=128),)
    assert strip_spans(prog.pools) == (
        CPool("kv", cap=131056, block=16, evict=EvictLru(), preempt="lifo", queue=QueueFifo(),
              admit_via="gpu"),
    )  # fmt: skip
    assert prog.sessions[0].count == 100
    assert prog.header_comment == "language.md §9: vLLM v1 (FCFS) in this language, written out."


def test_family_stage_named_bare_inside_a_joined_hold() -> None:
    # kv[i] is the memory of gpu[i]: inside a hold on kv[...], `gpu` means the joined member.
    prog = compile_source(
        """
        stage gpu[2] step { }
        pool kv[2] { admit via gpu; }
        session s {
          hold kv[serial % 2] (min(8, computed + budget_left(gpu))) {
            run gpu prefill (8);
            x = residents(gpu);
          }
        }
        """,
        "t",
    )
    (hold,) = prog.sessions[0].body
    assert isinstance(hold, Hold)
    assert strip_spans(hold.units) == Call(
        "min", (Num(8), Binary("+", Var("computed"), Query("budget_left", Ref("stage", "gpu"))))
    )
    assert strip_spans(hold.body[0]) == Run(Ref("stage", "gpu"), "prefill", Num(8))
    with pytest.raises(SpecError, match="'gpu' is a family of 2: budget_left"):
        compile_source(
            "stage gpu[2] step { }\npool kv[2] { }\nsession s { x = budget_left(gpu); }", "t"
        )


def test_constants_never_reach_the_ir() -> None:
    prog = compile_source("const N = 3;\nsession s { x = N + 1; }", "t")
    assert strip_spans(prog.sessions[0].body) == (SetAttr("x", Binary("+", Num(3), Num(1))),)


def test_spans_are_recorded() -> None:
    prog = compile_source("pool kv { }\nsession s {\n  x = 1 + 2;\n}\n", "f.pool")
    stmt = prog.sessions[0].body[0]
    assert isinstance(stmt, SetAttr)
    assert (stmt.span.file, stmt.span.line, stmt.span.col) == ("f.pool", 3, 3)
    assert (stmt.value.span.line, stmt.value.span.col, stmt.value.span.end_col) == (3, 7, 12)
    assert (prog.pools[0].span.line, prog.pools[0].span.col) == (1, 6)


def test_header_comment_and_source() -> None:
    text = "\n# Watch kv fill up.\n#\n#  indented\nseed 1; # not this\n# nor this\nsession s { }\n"
    prog = compile_source(text, "t")
    assert prog.header_comment == "Watch kv fill up.\n\n indented"
    assert prog.source == text


# --------------------------------------------------------------------------- conditions


def test_compile_condition() -> None:
    prog = compile_source("const K = 4;\npool kv[2] { }\nsession s { }", "t")
    e = compile_condition("free(kv[0]) < K && now > 1 || argmin(kv, queued) == 1", prog)
    assert strip_spans(e) == Binary(
        "||",
        Binary(
            "&&",
            Binary("<", Query("free", Ref("pool", "kv", Num(0))), Num(4)),
            Binary(">", Var("now"), Num(1)),
        ),
        Binary("==", ArgQuery("argmin", Ref("pool", "kv"), "queued"), Num(1)),
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("draw real(0, 1) > 0", "a draw is not allowed in a breakpoint condition"),
        ("prompt > 0", "'prompt' is a session attribute"),
        ("waited > 0", "'waited' cannot be read in a breakpoint condition"),
        ("free(kv) > 0", "'kv' is a family of 2"),
        ("free(kv[0] > 0", "expected ')'"),
        ("", "unexpected end of the breakpoint condition: expected an expression"),
    ],
)
def test_compile_condition_errors(text: str, message: str) -> None:
    prog = compile_source("pool kv[2] { }\nsession s { prompt = 1; }", "t")
    with pytest.raises(SpecError) as info:
        compile_condition(text, prog)
    assert message in info.value.render()
    assert info.value.diagnostics[0].span.file == "<condition>"


# An expression alone (a watch, a breakpoint condition) has no ';' and no '}': a syntax
# error in one says what an expression expects there, and names the watch or the condition.
@pytest.mark.parametrize(
    ("text", "what", "message"),
    [
        ("free(kv[0])free(kv[0])", "a watch", "1:12: expected an operator or the end of the watch, found 'free'"),
        ("1 2", "a breakpoint condition", "1:3: expected an operator or the end of the breakpoint condition, found '2'"),
        ("(1 2", "a watch", "1:4: expected ')', found '2'"),
        ("1 ? 2 3", "a watch", "1:7: expected ':', found '3'"),
        ("1)", "a watch", "1:2: expected the end of the watch, found ')'"),
        ("1 +", "a watch", "1:4: unexpected end of the watch: expected an expression"),
        ("free(kv[0]", "a watch", "1:11: unexpected end of the watch: expected ')' or ','"),
        ("prompt", "a watch", "1:1: 'prompt' is a session attribute; a watch cannot read session attributes"),
        ("draw real(0, 1)", "a watch", "1:1: a draw is not allowed in a watch: a watch is evaluated while debugging and must not change the run"),
    ],
)  # fmt: skip
def test_an_expression_alone_says_what_it_expects(text: str, what: str, message: str) -> None:
    prog = compile_source("pool kv[2] { }\nsession s { prompt = 1; }", "t")
    with pytest.raises(SpecError) as info:
        compile_condition(text, prog, "<x>", what=what)
    (d,) = info.value.diagnostics
    assert f"{d.span.line}:{d.span.col}: {d.message}" == message


def test_top_level_order_does_not_matter() -> None:
    prog = compile_source(
        """
        session s { hold kv (N) { run gpu prefill (N); } }
        check "c" (free(kv) >= 0);
        pool kv { admit via gpu; cap N * 4; }
        const N = M + 1;
        stage gpu step { }
        const M = 1;
        seed 3;
        """,
        "t",
    )
    assert strip_spans(prog.pools) == (CPool("kv", cap=8, admit_via="gpu"),)
    assert strip_spans(prog.sessions[0].body) == (
        Hold(Ref("pool", "kv"), Num(2), None, None, (Run(Ref("stage", "gpu"), "prefill", Num(2)),)),
    )
    assert prog.seed == 3 and prog.consts == (("N", 2), ("M", 1))
