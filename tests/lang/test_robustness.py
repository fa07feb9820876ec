"""No input makes the front end raise anything but SpecError, or hang."""

from __future__ import annotations

from pathlib import Path

import lark
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pooltui.lang import SpecError, compile_source
from pooltui.lang.frontend import compile_bytes
from pooltui.lang.parser import grammar_text

HERE = Path(__file__).parent
VALID = (HERE / "specs" / "lang_examples.pool").read_text()
FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def compiles_or_spec_error(data: bytes | str) -> None:
    try:
        if isinstance(data, bytes):
            compile_bytes(data, "fuzz.pool", str(HERE / "specs"))
        else:
            compile_source(data, "fuzz.pool", str(HERE / "specs"))
    except SpecError as exc:
        assert exc.diagnostics
        exc.render()  # rendering must not fail either


def test_grammar_is_conflict_free() -> None:
    # strict=True makes any shift/reduce or reduce/reduce conflict (and any terminal
    # collision) an error instead of being resolved silently.
    parser = lark.Lark(grammar_text(), parser="lalr", strict=True, start=["start", "condition"])
    assert parser.parse("seed 1;", start="start") is not None


@FUZZ
@given(st.binary(max_size=400))
def test_random_bytes(data: bytes) -> None:
    compiles_or_spec_error(data)


@FUZZ
@given(
    st.text(
        alphabet=st.sampled_from(list('pool kv{}();=+-*/%<>!&|?:,[]"#\n 0123456789._eabcdrsx')),
        max_size=300,
    )
)
def test_random_text(text: str) -> None:
    compiles_or_spec_error(text)


TOKENS = ["pool", "stage", "session", "hold", "run", "{", "}", "(", ")", ";", "[", "]", "kv",
          "gpu", "1", "draw", "inf", "?", ":", "=", "cap", "block", "via", "\n", "#", "\""]  # fmt: skip


@st.composite
def edited(draw: st.DrawFn) -> str:
    text = VALID
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(text)))
        op = draw(st.sampled_from(["delete", "duplicate", "insert_char", "insert_token"]))
        n = draw(st.integers(1, 12))
        if op == "delete":
            text = text[:i] + text[i + n :]
        elif op == "duplicate":
            text = text[:i] + text[i : i + n] + text[i:]
        elif op == "insert_char":
            text = text[:i] + draw(st.characters()) + text[i:]
        else:
            text = text[:i] + " " + draw(st.sampled_from(TOKENS)) + " " + text[i:]
    return text


@FUZZ
@given(edited())
def test_edited_valid_spec(text: str) -> None:
    compiles_or_spec_error(text)


def _error(text: str | bytes) -> SpecError:
    try:
        if isinstance(text, bytes):
            compile_bytes(text, "x.pool")
        else:
            compile_source(text, "x.pool")
    except SpecError as exc:
        return exc
    raise AssertionError("compiled")


def test_deep_parentheses() -> None:
    exc = _error("session s { x = " + "(" * 5000 + "1" + ")" * 5000 + "; }")
    assert exc.diagnostics[0].message == "nesting deeper than 200 levels"


def test_deep_blocks() -> None:
    exc = _error("session s { " + "if (1) { " * 5000 + "}" * 5000 + " }")
    assert exc.diagnostics[0].message == "nesting deeper than 200 levels"


def test_deep_operators() -> None:
    for text in ("-" * 5000 + "1", "1" + " + 1" * 5000, "!" * 5000 + "1", "1 ? 1 : " * 3000 + "1"):
        exc = _error("session s { x = " + text + "; }")
        assert exc.diagnostics[0].message == "nesting deeper than 200 levels"


def test_moderate_nesting_is_fine() -> None:
    compile_source("session s { x = " + "(" * 150 + "1" + ")" * 150 + "; }", "x")
    compile_source("session s { " + "if (1) { " * 100 + "}" * 100 + " }", "x")


def test_ten_megabytes_does_not_hang() -> None:
    for data in (b"x" * 10_000_000, b"# comment\n" * 1_000_000, VALID.encode() * 5000):
        exc = _error(data)  # refused by its size, before parsing (timing: benchmarks)
        assert "spec too large" in exc.diagnostics[0].message


def test_empty_and_blank() -> None:
    for text in ("", "\n\n  \n", "# only a comment\n"):
        exc = _error(text)
        d = exc.diagnostics[0]
        assert d.message == "empty spec: declare at least one session"
        assert (d.span.line, d.span.col) == (1, 1)


def test_binary_garbage_renders_safely() -> None:
    exc = _error(b"pool kv { \x1b[31m }\x00\xff")
    out = exc.render()
    assert "\x1b" not in out and "\x00" not in out


def test_nul_in_valid_utf8() -> None:
    exc = _error("pool kv { \x00 }")
    assert exc.diagnostics[0].message == "unexpected character '\\u0000'"


def test_huge_numbers() -> None:
    exc = _error("pool kv { cap " + "9" * 5000 + "; }\nsession s { }")
    assert exc.diagnostics[0].message == "number too long (more than 400 digits)"
    compile_source("const A = 1e999;\nsession s { x = A; }", "x")  # inf is a number


def test_syntax_errors_recover_per_declaration() -> None:
    exc = _error("pool a { cap 1 }\npool b { cap 2 }\npool c { cap 3 }\nsession s { }\n")
    assert [d.span.line for d in exc.diagnostics] == [1, 2, 3]


def test_missing_file_is_a_spec_error(tmp_path: Path) -> None:
    from pooltui.lang import compile_file

    try:
        compile_file(str(tmp_path / "nope.pool"))
    except SpecError as exc:
        assert "cannot read" in exc.diagnostics[0].message
    else:
        raise AssertionError("compiled")


def test_spec_errors_render_their_lines_source_errors_none(tmp_path: Path) -> None:
    (tmp_path / "t.csv").write_text("a,b\n1,2\n3,4,5\n")
    spec = 'session s from "t.csv" { }\nsession u { x = nope; }\n'
    try:
        compile_source(spec, "x.pool", str(tmp_path))
    except SpecError as exc:
        out = exc.render()
    else:
        raise AssertionError("compiled")
    assert out.startswith("x.pool:2:17: error: unknown name 'nope'\n2 | session u { x = nope; }\n")
    # A source's lines are never quoted (it may be any file the user can read).
    assert out.endswith("\nt.csv:3:1: error: row has 3 cells, the header has 2 (a, b)")
