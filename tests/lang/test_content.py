"""`content (…)` on holds, lists, JSON Lines sources, `row.NAME`, and hostile sources.

Expectations are written by hand from docs/language.md and the content design (§1)."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from pooltui.lang import SpecError, SpecRuntimeError, compile_source, csvsource, jsonlsource
from pooltui.lang.content import compile_content, content_of
from pooltui.lang.exprs import compile_expr
from pooltui.lang.ir import (
    NO_SPAN,
    ArriveAt,
    Attr,
    Binary,
    CondKey,
    ContentPiece,
    CSource,
    Hold,
    Num,
    QueueBy,
    Ref,
    SetAttr,
    Str,
    Var,
)
from pooltui.lang.irjson import to_data

from .helpers import strip_spans

REPO = Path(__file__).resolve().parents[2]

MOONCAKE_LIKE = (
    '{"timestamp": 0, "input_length": 1000, "output_length": 5, "hash_ids": [0, 1]}\n'
    '{"timestamp": 1500, "input_length": 600, "output_length": 2, "hash_ids": [0, 2]}\n'
    '{"timestamp": 3000, "input_length": 10, "output_length": 1, "hash_ids": []}\n'
)


def write(tmp: Path, name: str, text: str | bytes) -> Path:
    p = tmp / name
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_text(text, encoding="utf-8")
    return p


def error_of(spec: str, base: Path) -> SpecError:
    with pytest.raises(SpecError) as info:
        compile_source(spec, "t.pool", str(base))
    return info.value


# --------------------------------------------------------------------------- JSON Lines


def test_jsonl_source_with_lists(tmp_path: Path) -> None:
    path = write(tmp_path, "t.jsonl", MOONCAKE_LIKE)
    prog = compile_source(
        'session req from "t.jsonl" limit 2 { arrive at (timestamp / 1000); }',
        "t.pool",
        str(tmp_path),
    )
    (req,) = prog.sessions
    assert req.count == 2
    assert strip_spans(req.source) == CSource(
        str(path),
        "t.jsonl",
        2,
        ("timestamp", "input_length", "output_length", "hash_ids"),
        ((0, 1000, 5, (0, 1)), (1500, 600, 2, (0, 2))),
        NO_SPAN,
        "jsonl",
        ("number", "number", "number", "list"),
    )
    assert strip_spans(req.arrive) == ArriveAt(Binary("/", Attr("timestamp"), Num(1000)))


def test_jsonl_values(tmp_path: Path) -> None:
    write(
        tmp_path,
        "v.jsonl",
        '{"a": 1.5, "b": "x", "c": true, "d": ["k", 2, false]}\n'
        "\n"  # a blank line carries no session
        '{"d": [], "c": 0, "b": 7, "a": -2}\n',  # key order does not matter
    )
    prog = compile_source('session s from "v.jsonl" { }', "t.pool", str(tmp_path))
    src = prog.sessions[0].source
    assert src is not None
    assert src.columns == ("a", "b", "c", "d")
    assert src.rows == ((1.5, "x", 1, ("k", 2, 0)), (-2, 7, 0, ()))
    assert src.kinds == ("number", "number|string", "number", "list")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"a": 1}\n{"a": null}\n', "v.jsonl:2:2: error: key 'a' holds null; an attribute is"),
        ('{"a": 1}\n{"a": [1, {"b": 2}]}\n', "v.jsonl:2:2: error: key 'a' holds a list with a nested object in it"),
        ('{"a": 1}\n[1, 2]\n', "v.jsonl:2:1: error: line 2 is a list, not a JSON object"),
        ('{"a": 1}\n{"a": 1, "b": 2}\n', "v.jsonl:2:10: error: key 'b' is not a key of the first line"),
        ('{"a": 1, "b": 2}\n{"b": 3}\n', "v.jsonl:2:1: error: line 2 has no key 'a'"),
        ('{"a": 1}\n{"a": 1,\n', "v.jsonl:2:9: error: line 2 is not valid JSON: Expecting"),
        ('{"a": NaN}\n', "v.jsonl:1:1: error: line 1 holds NaN, which is not a JSON number"),
        ('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}\n", "v.jsonl:1:1: error: line 1 is nested too deeply"),
    ],
)  # fmt: skip
def test_jsonl_errors(tmp_path: Path, text: str, message: str) -> None:
    write(tmp_path, "v.jsonl", text)
    exc = error_of('session s from "v.jsonl" { }', tmp_path)
    assert exc.render().startswith(message)


def test_empty_jsonl_is_an_error(tmp_path: Path) -> None:
    write(tmp_path, "v.jsonl", "\n")
    exc = error_of('session s from "v.jsonl" { }', tmp_path)
    assert exc.diagnostics[0].message == (
        "'v.jsonl' holds no JSON object: a JSON Lines source has one per line"
    )


def test_mooncake_traces_compile() -> None:
    for name, rows in (("mooncake_conversation.jsonl", 12031), ("mooncake_synthetic.jsonl", 3993)):
        prog = compile_source(
            f'session req from "data/{name}" {{ arrive at (timestamp / 1000); }}',
            "t.pool",
            str(REPO),
        )
        src = prog.sessions[0].source
        assert src is not None and len(src.rows) == rows
        assert src.columns == ("timestamp", "input_length", "output_length", "hash_ids")
        assert src.kinds == ("number", "number", "number", "list")


# --------------------------------------------------------------------------- CSV lists


def test_csv_list_cell(tmp_path: Path) -> None:
    write(tmp_path, "t.csv", 't,blocks\n0,"[1, 2, ""a""]"\n1.5,[]\n')
    prog = compile_source('session s from "t.csv" { }', "t.pool", str(tmp_path))
    src = prog.sessions[0].source
    assert src is not None
    assert src.rows == ((0.0, (1, 2, "a")), (1.5, ()))
    assert src.kinds == ("number", "list")
    assert src.format == "csv"


def test_csv_list_of_lists(tmp_path: Path) -> None:
    write(tmp_path, "t.csv", 't,blocks\n0,"[[1], 2]"\n')
    exc = error_of('session s from "t.csv" { }', tmp_path)
    assert exc.render() == (
        "t.csv:2:4: error: a cell in column 'blocks' starts with '[' but is not a JSON list of "
        "numbers or strings: it holds a list of lists"
    )


# --------------------------------------------------------------------------- row.NAME


def test_keyword_columns_through_row(tmp_path: Path) -> None:
    write(tmp_path, "k.csv", "time,block,n\n1,16,3\n")
    prog = compile_source(
        "pool kv { queue by (row.block); }\n"
        'session s from "k.csv" { arrive at (row.time); x = row.block * 2 + n; }',
        "t.pool",
        str(tmp_path),
    )
    s = prog.sessions[0]
    assert strip_spans(s.arrive) == ArriveAt(Attr("time"))
    assert strip_spans(s.body) == (
        SetAttr("x", Binary("+", Binary("*", Attr("block"), Num(2)), Attr("n"))),
    )
    assert strip_spans(prog.pools[0].queue) == QueueBy((Attr("block"),))


def test_row_errors(tmp_path: Path) -> None:
    write(tmp_path, "k.csv", "time,block,n\n1,16,3\n")
    for spec, message in [
        ('session s from "k.csv" { x = rows.time; }',
         "'rows.time' means nothing: only row.NAME, a column of the session's source, is "
         "written with a dot"),
        ("pool kv { queue by (row.nope); }\nsession s { }",
         "unknown column 'nope': no session's source has it"),
        ('const A = row.time;\nsession s from "k.csv" { }',
         "constant 'A' must be known at compile time: 'row.time' is a column of a session's "
         "source"),
        ('session s from "k.csv" { }\ncheck "c" (row.n > 0);',
         "'row.n' is a column of a session's source; a check cannot read session attributes"),
    ]:  # fmt: skip
        exc = error_of(spec, tmp_path)
        assert exc.diagnostics[0].message == message


# --------------------------------------------------------------------------- content, IR


def test_content_pieces_in_the_ir(tmp_path: Path) -> None:
    write(tmp_path, "t.jsonl", MOONCAKE_LIKE)
    prog = compile_source(
        """
        const SYS = 512;
        pool kv { }
        session s from "t.jsonl" {
          tenant = 1;
          hold kv (input_length) need (input_length) reserve (4096)
               content ("sys" : SYS, tenant : 256, hash_ids : 512,
                        context > 0 ? hash_ids : tenant : 16) { }
        }
        """,
        "t.pool",
        str(tmp_path),
    )
    hold = prog.sessions[0].body[1]
    assert strip_spans(hold) == Hold(
        Ref("pool", "kv"),
        Attr("input_length"),
        Attr("input_length"),
        Num(4096),
        (),
        NO_SPAN,
        (
            ContentPiece(Str("sys"), Num(512)),
            ContentPiece(Attr("tenant"), Num(256)),
            ContentPiece(Attr("hash_ids"), Num(512)),
            ContentPiece(  # a conditional key chooses a key, not a number: CondKey
                CondKey(Binary(">", Var("context"), Num(0)), Attr("hash_ids"), Attr("tenant")),
                Num(16),
            ),
        ),
    )
    assert isinstance(hold, Hold)
    # spans: a piece from its key to its units; the string key's span covers its quotes
    assert (hold.content[0].span.line, hold.content[0].span.col) == (7, 25)
    assert (hold.content[0].key.span.col, hold.content[0].key.span.end_col) == (25, 30)
    assert to_data(hold.content[0]) == {
        "node": "ContentPiece",
        "key": {"node": "Str", "value": "sys", "span": "7:25"},
        "units": {"node": "Num", "value": 512, "span": "7:33"},
        "span": "7:25",
    }


def test_hold_without_content_has_none() -> None:
    prog = compile_source("pool kv { }\nsession s { hold kv (1) { } }", "t.pool")
    hold = prog.sessions[0].body[0]
    assert isinstance(hold, Hold) and hold.content == ()
    assert to_data(hold)["content"] == []


def test_content_reads_what_a_header_reads_but_computed(tmp_path: Path) -> None:
    prog = compile_source(
        "stage gpu step { }\npool kv { admit via gpu; }\n"
        "session s { hold kv (1) content (serial : 1, now + context : budget_left(gpu)) { } }",
        "t.pool",
    )
    hold = prog.sessions[0].body[0]
    assert isinstance(hold, Hold) and len(hold.content) == 2
    exc = error_of(
        'pool kv { }\nsession s { hold kv (1) content (waited : 1, "a" : 1.5, "b" : -1) { } }',
        tmp_path,
    )
    assert [d.message for d in exc.diagnostics] == [
        "'waited' cannot be read in a hold's content; it is meaningful in queue keys",
        "a content piece's units must be a positive whole number, got 1.5",
        "a content piece's units must be a positive whole number, got -1",
    ]


def test_lists_elsewhere_are_compile_errors(tmp_path: Path) -> None:
    write(tmp_path, "t.jsonl", MOONCAKE_LIKE)
    for spec in [
        'pool kv { }\nsession s from "t.jsonl" { hold kv (hash_ids) { } }',
        'session s from "t.jsonl" { arrive at (hash_ids); }',
        'session s from "t.jsonl" { x = hash_ids; }',  # not even copied
        'pool kv { }\nsession s from "t.jsonl" { hold kv (1) content (max(hash_ids) : 1) { } }',
        'pool kv { }\nsession s from "t.jsonl" { hold kv (1) content ((hash_ids ? 1 : 2) : 1) { } }',
        'pool kv { evict by (hash_ids); }\nsession s from "t.jsonl" { }',
    ]:
        exc = error_of(spec, tmp_path)
        assert len(exc.diagnostics) == 1
        assert "holds lists" in exc.diagnostics[0].message, spec
    # a mixed column is a list in some rows
    write(tmp_path, "m.jsonl", '{"k": 1}\n{"k": [1]}\n')
    exc = error_of('session s from "m.jsonl" { x = k + 1; }', tmp_path)
    assert exc.diagnostics[0].message == (
        "'k' holds lists in some rows (a column of 'm.jsonl'); a list can only be a content "
        "key: content (k : UNITS)"
    )


# A conditional may choose the key (language.md §8.6: `turn > 0 ? hash_ids : "fresh"`): its
# branches are keys (a number, a string literal, a list or string attribute, or another
# conditional), with or without parentheses around it; the condition itself is a number.
FRESH = CondKey(Binary(">", Attr("timestamp"), Num(0)), Attr("hash_ids"), Str("fresh"))


@pytest.mark.parametrize(
    "key",
    [
        'timestamp > 0 ? hash_ids : "fresh"',
        '(timestamp > 0 ? hash_ids : "fresh")',
        '((timestamp > 0) ? (hash_ids) : ("fresh"))',
    ],
)
def test_a_conditional_key_may_choose_a_string_literal(tmp_path: Path, key: str) -> None:
    write(tmp_path, "t.jsonl", MOONCAKE_LIKE)
    prog = compile_source(
        f'pool kv {{ }}\nsession s from "t.jsonl" {{ hold kv (1) content ({key} : 16) {{ }} }}',
        "t.pool",
        str(tmp_path),
    )
    hold = prog.sessions[0].body[0]
    assert isinstance(hold, Hold)
    assert strip_spans(hold.content) == (ContentPiece(FRESH, Num(16)),)
    fn = compile_content(hold.content)
    assert fn(env(timestamp=0, hash_ids=(1, 2))) == (("fresh", 16),)
    assert fn(env(timestamp=1500, hash_ids=(1, 2))) == ((1, 16), (2, 16))


def test_conditional_keys_nest_and_choose_numbers(tmp_path: Path) -> None:
    got = pieces_of('u > 1 ? (u > 2 ? "big" : 7) : hash_ids : 4', tmp_path, hash_ids=(5,), u=3)
    assert got == (("big", 4),)
    assert pieces_of(
        'u > 1 ? (u > 2 ? "big" : 7) : hash_ids : 4', tmp_path, hash_ids=(5,), u=2
    ) == ((7, 4),)
    assert pieces_of(
        'u > 1 ? (u > 2 ? "big" : 7) : hash_ids : 4', tmp_path, hash_ids=(5,), u=1
    ) == ((5, 4),)


def test_a_conditional_string_key_in_the_ir_json(tmp_path: Path) -> None:
    write(tmp_path, "t.jsonl", MOONCAKE_LIKE)
    prog = compile_source(
        'pool kv { }\nsession s from "t.jsonl" {\n'
        '  hold kv (1) content (timestamp > 0 ? hash_ids : "fresh" : 16) { }\n}',
        "t.pool",
        str(tmp_path),
    )
    hold = prog.sessions[0].body[0]
    assert isinstance(hold, Hold)
    key = to_data(hold.content[0].key)
    assert key["node"] == "CondKey" and key["span"] == "3:24"
    assert key["then"] == {"node": "Attr", "name": "hash_ids", "span": "3:40"}
    assert key["otherwise"] == {"node": "Str", "value": "fresh", "span": "3:51"}


@pytest.mark.parametrize(
    ("spec", "col"),
    [
        ('hold kv ("a") { }', 29),  # a hold's units
        ('hold kv (1) content (1 : "a") { }', 45),  # a piece's units
        ('hold kv (1) content ("a" ? 1 : 2 : 4) { }', 41),  # a conditional's condition
        ('hold kv (1) content ((u > 1 ? "a" : 2) + 1 : 4) { }', 50),  # computed from a key
        ('x = "a";', 24),
    ],
)
def test_string_literals_elsewhere_are_located_compile_errors(
    tmp_path: Path, spec: str, col: int
) -> None:
    exc = error_of(f"pool kv {{ }}\nsession s {{ u = 1; {spec} }}", tmp_path)
    assert [(d.span.line, d.span.col) for d in exc.diagnostics] == [(2, col)]
    assert exc.diagnostics[0].message == (
        '"a" is a string; a string can only be a content key: content ("a" : UNITS)'
    )


def test_check_and_ir_take_a_conditional_string_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from pooltui.cli.main import main

    write(tmp_path, "t.jsonl", MOONCAKE_LIKE)
    spec = write(
        tmp_path,
        "c.pool",
        "stage gpu step { budget 2048; }\n"
        "pool kv { cap 4096; block 16; evict lru; admit via gpu; }\n"
        'session req from "t.jsonl" {\n'
        "  arrive at (timestamp / 1000);\n"
        '  hold kv (input_length) content ((timestamp > 0 ? hash_ids : "fresh") : 16) {\n'
        "    run gpu prefill (input_length);\n"
        "  }\n"
        "}\n",
    )
    assert main(["check", str(spec)]) == 0
    assert capsys.readouterr().out == f"{spec}: ok — 1 pool, 1 stage, 1 session class, 3 sessions\n"
    assert main(["ir", str(spec)]) == 0
    data = json.loads(capsys.readouterr().out)
    key = data["sessions"][0]["body"][0]["content"][0]["key"]
    assert (key["node"], key["otherwise"]["value"]) == ("CondKey", "fresh")
    assert main(["run", str(spec), "--quiet"]) == 0
    assert "3 arrived, 3 done" in capsys.readouterr().out


# --------------------------------------------------------------------------- content, runtime


def env(**attrs: Any) -> SimpleNamespace:
    return SimpleNamespace(attrs=attrs, now=0.0, serial=3, context=0, computed=0)


def pieces_of(spec_content: str, tmp_path: Path, **attrs: Any) -> Any:
    write(tmp_path, "t.jsonl", MOONCAKE_LIKE)
    prog = compile_source(
        f'pool kv {{ }}\nsession s from "t.jsonl" {{ u = 2; hold kv (1) content ({spec_content}) {{ }} }}',
        "t.pool",
        str(tmp_path),
    )
    hold = prog.sessions[0].body[1]
    assert isinstance(hold, Hold)
    return compile_content(hold.content)(env(**attrs))


def test_content_of_expands_lists(tmp_path: Path) -> None:
    got = pieces_of('"sys" : 512, hash_ids : 16, serial : u * 8, "x" : 2.0', tmp_path,
                    hash_ids=(7, 8, "z"), u=2)  # fmt: skip
    assert got == (("sys", 512), (7, 16), (8, 16), ("z", 16), (3, 16), ("x", 2))
    assert all(type(u) is int for _, u in got)
    assert pieces_of("hash_ids : 16", tmp_path, hash_ids=(), u=2) == ()
    # a float key that is whole is an int (16.0 and 16 are one key)
    assert pieces_of("u / 2 : 1", tmp_path, u=32) == ((16, 1),)


@pytest.mark.parametrize(
    ("content", "attrs", "message"),
    [
        ("hash_ids : u", {"hash_ids": (1,), "u": 0}, "a content piece's units must be a positive whole number, got 0"),
        ("hash_ids : u", {"hash_ids": (1,), "u": 2.5}, "a content piece's units must be a positive whole number, got 2.5"),
        ("hash_ids : u", {"hash_ids": ((1, 2),), "u": 1}, "a content key's list holds a list"),
        ("hash_ids : u", {"hash_ids": None, "u": 1}, "a content key must be a number or a string, not nothing"),
        ("hash_ids : u + 1", {"hash_ids": 4, "u": "s"}, "attribute 'u' is a string here; a string can only be a content key"),
        ("hash_ids : 1", {"u": 1}, "attribute 'hash_ids' is read before it is set"),
    ],
)  # fmt: skip
def test_content_of_runtime_errors(
    tmp_path: Path, content: str, attrs: dict[str, Any], message: str
) -> None:
    with pytest.raises(SpecRuntimeError) as info:
        pieces_of(content, tmp_path, **attrs)
    assert info.value.message.startswith(message)
    assert info.value.span.file == "t.pool" and info.value.span.line == 2


def test_list_in_arithmetic_at_run_time_is_located() -> None:
    f = compile_expr(Binary("+", Attr("ids"), Num(1)))
    with pytest.raises(SpecRuntimeError) as info:
        f(env(ids=(1, 2)))
    assert info.value.message == "attribute 'ids' is a list here; a list can only be a content key"


def test_content_of_on_a_hold() -> None:
    hold = Hold(Ref("pool", "kv"), Num(1), None, None, (), NO_SPAN,
                (ContentPiece(Str("a"), Num(3)),))  # fmt: skip
    assert content_of(hold, env()) == (("a", 3),)


def test_specs_with_content_run(tmp_path: Path) -> None:
    """A spec with every kind of piece (a drawn attribute, a list) runs to its end cleanly."""
    from pooltui.sim import Simulation

    write(tmp_path, "t.jsonl", MOONCAKE_LIKE)
    prog = compile_source(
        """
        stage gpu step { budget 512; }
        pool kv { cap 4096; block 16; evict lru; preempt lifo; admit via gpu; }
        session req from "t.jsonl" {
          arrive at (timestamp / 1000);
          tenant = draw uniform(0, 2);
          hold kv (min(max(input_length, context + 1), computed + budget_left(gpu)))
               need (max(input_length, context + 1)) reserve (4096)
               content (tenant : 16, hash_ids : 512) {
            run gpu prefill (input_length);
            run gpu decode (output_length);
          }
        }
        """,
        "t.pool",
        str(tmp_path),
    )
    sim = Simulation(prog)
    sim.run()
    assert sim.finished and sim.violation is None
    assert sum(1 for e in sim.events if e.moment == "end") == 3


# --------------------------------------------------------------------------- hostile sources


@pytest.fixture
def alarm() -> Iterator[None]:
    """Fail instead of hanging if reading a source blocks."""

    def boom(signum: int, frame: object) -> None:
        raise TimeoutError("reading the source blocked")

    old = signal.signal(signal.SIGALRM, boom)
    signal.alarm(5)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def test_a_fifo_is_refused_without_blocking(tmp_path: Path, alarm: None) -> None:
    os.mkfifo(tmp_path / "p.csv")
    exc = error_of('session s from "p.csv" { }', tmp_path)
    assert exc.diagnostics[0].message == (
        "cannot read 'p.csv': it is a FIFO (a named pipe); a source must be a regular file"
    )
    assert (exc.diagnostics[0].span.file, exc.diagnostics[0].span.line) == ("t.pool", 1)


def test_a_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "d.jsonl").mkdir()
    exc = error_of('session s from "d.jsonl" { }', tmp_path)
    assert exc.diagnostics[0].message == (
        "cannot read 'd.jsonl': it is a directory; a source must be a regular file"
    )


def test_a_nul_in_a_source_name_is_refused(tmp_path: Path) -> None:
    # No file name holds a NUL byte (the system cannot be asked for one): a located error,
    # not the internal error `open` raising ValueError was.
    exc = error_of('session s from "a\x00b.csv" { }', tmp_path)
    assert [(d.span.line, d.span.col, d.message) for d in exc.diagnostics] == [
        (1, 16, "cannot read 'a\\u0000b.csv': a file name cannot hold a NUL character")
    ]


def test_a_control_character_in_a_source_name_is_escaped(tmp_path: Path) -> None:
    # A file name is printed as the spec's text is: control characters escaped, so a
    # name cannot drive the terminal that shows the message.
    exc = error_of('session s from "a\x1b[31mb.csv" { }', tmp_path)
    (d,) = exc.diagnostics
    assert d.message == "cannot read 'a\\u001b[31mb.csv': No such file or directory"
    assert "\x1b" not in exc.render()


def test_devices_and_proc_are_refused(tmp_path: Path) -> None:
    for path, why in [
        ("/dev/zero", "it is a character device"),
        ("/proc/self/status", "it is in /proc, a kernel file system"),
    ]:
        exc = error_of(f'session s from "{path}" {{ }}', tmp_path)
        assert exc.diagnostics[0].message.startswith(f"cannot read '{path}': {why}")


SECRET = "s3cr3t-t0ken-value"


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("a.csv", f"a,b\n1,{SECRET}\n"),
        ("b.csv", f"a\n{SECRET},{SECRET}\n"),
        ("c.csv", f"a\n[{SECRET}\n"),
        ("d.csv", f'a\n"[""{SECRET}"", [1]]"\n'),
        ("e.jsonl", f'"{SECRET}"\n'),
        ("f.jsonl", f'{{"a": 1}}\n{{"a": {SECRET}}}\n'),
        ("g.jsonl", f'{{"a": {{"{SECRET}": 1}}}}\n'),
        ("h.csv", b"a\n\xff" + SECRET.encode() + b"\n"),
    ],
)
def test_errors_never_quote_the_file(tmp_path: Path, name: str, text: str | bytes) -> None:
    write(tmp_path, name, text)
    exc = error_of(f'session s from "{name}" {{ }}', tmp_path)
    out = exc.render()
    assert SECRET not in out and "s3cr3t" not in out
    assert out.startswith(f"{name}:2:" if name not in ("e.jsonl", "g.jsonl") else f"{name}:1:")


def test_reading_stops_at_limit(tmp_path: Path) -> None:
    """Past `limit` nothing is read: not even a line too long or a broken one."""
    big = "x" * (2 << 20)
    write(tmp_path, "t.csv", f"a,b\n1,2\n3,4\n{big}\n")
    write(tmp_path, "t.jsonl", f'{{"a": 1}}\n{{"a": 2}}\n{big}\n')
    for name in ("t.csv", "t.jsonl"):
        prog = compile_source(f'session s from "{name}" limit 2 {{ }}', "t.pool", str(tmp_path))
        assert prog.sessions[0].count == 2
        exc = error_of(f'session s from "{name}" {{ }}', tmp_path)
        line = 4 if name == "t.csv" else 3
        assert exc.render() == (
            f"{name}:{line}:1: error: line {line} is longer than 1,048,576 bytes (the limit of "
            "a source's line)"
        )


def test_row_and_value_caps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(csvsource, "MAX_ROWS", 3)
    monkeypatch.setattr(jsonlsource, "MAX_VALUES", 10)
    write(tmp_path, "t.csv", "a\n1\n2\n3\n4\n")
    exc = error_of('session s from "t.csv" { }', tmp_path)
    assert exc.render() == (
        "t.csv:5:1: error: more than 3 rows (the most one source may give); read fewer with "
        "`limit N`"
    )
    assert compile_source('session s from "t.csv" limit 3 { }', "t.pool", str(tmp_path))
    write(
        tmp_path,
        "t.jsonl",
        json.dumps({"a": list(range(6))}) + "\n" + json.dumps({"a": [1, 2, 3]}) + "\n",
    )
    exc = error_of('session s from "t.jsonl" { }', tmp_path)
    assert exc.render() == (
        "t.jsonl:2:1: error: more than 10 values (cells and list elements, the most one source "
        "may hold); read fewer rows with `limit N`"
    )


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("session s { x = row.; }", "expected a column name (row.NAME), found ';'"),
        ("pool kv { }\nsession s { hold kv (1) content (7) { } }", "expected ':', found ')'"),
        ("pool kv { }\nsession s { hold kv (1) content (1 : 1) need (2) { } }",
         "expected '{', found 'need'"),
        ("session s { content = 3; }",
         "expected a statement or '}', found 'content' (a keyword: keywords are reserved)"),
    ],
)  # fmt: skip
def test_syntax(spec: str, message: str, tmp_path: Path) -> None:
    assert error_of(spec, tmp_path).diagnostics[0].message == message


# --------------------------------------------------------------------------- hostile cells


def test_a_csv_quoted_cell_past_128_kib_is_read(tmp_path: Path) -> None:
    """A line may hold up to 1 MiB, a quoted list cell too: 70,000 keys (about 140 KB) are
    read, not refused by the csv module's own limit on a field (an internal error)."""
    keys = ", ".join(["1"] * 70_000)
    write(tmp_path, "t.csv", f't,blocks\n0,"[{keys}]"\n')
    prog = compile_source('session s from "t.csv" { }', "t.pool", str(tmp_path))
    src = prog.sessions[0].source
    assert src is not None and len(src.rows[0][1]) == 70_000


@pytest.mark.parametrize(
    ("text", "col"), [('t,n\n4,"5"\r6\n', 6), ('t,n\na\r,"b"\n', 2), ('t,"n"\r\n1,2\n', 0)]
)
def test_a_carriage_return_inside_a_csv_line_is_located(
    tmp_path: Path, text: str, col: int
) -> None:
    """A lone carriage return (not the end of a line) in a line with quotes is a located
    error at the carriage return, not the csv module's internal one."""
    write(tmp_path, "t.csv", text)
    if col == 0:  # `\r\n` ends a line: the header is read whole
        prog = compile_source('session s from "t.csv" { }', "t.pool", str(tmp_path))
        assert prog.sessions[0].source is not None
        return
    exc = error_of('session s from "t.csv" { }', tmp_path)
    assert exc.render() == (
        f"t.csv:2:{col}: error: line 2 holds a carriage return (\\r) that does not end it; "
        "a CSV line ends with \\n or \\r\\n"
    )


ENDS = "a CSV line ends with \\n or \\r\\n"
MAC_ENDS = (
    f"{ENDS}, and this file's lines end in a bare carriage return (old Mac line ends): "
    "convert them, e.g. tr '\\r' '\\n'"
)


@pytest.mark.parametrize(
    ("text", "col", "said"),
    [
        ("t,p\r0.5,40\r1.0,60\r", 4, MAC_ENDS),
        ('"t","p"\r0.5,40\r1.0,60\r', 8, MAC_ENDS),
        ("t,p\rx\n1,2\n", 4, ENDS),
    ],
)
def test_a_csv_whose_lines_end_in_a_bare_carriage_return_is_located(
    tmp_path: Path, text: str, col: int, said: str
) -> None:
    """Lines ended by a bare \\r (old Mac software) were one header line: the checker's
    `its columns are t, p\\r0.5, 40\\r1.0, …` quoted the file's data as column names (and
    a spec reading only `t` got a trace of no session, without a word). A
    carriage return in the header line is an error at it (as one inside a line with quotes
    is), which says, when no line follows it, that the file's lines end that way."""
    write(tmp_path, "t.csv", text)
    rendered = error_of('session s from "t.csv" { arrive at (t); }', tmp_path).render()
    assert rendered == (
        f"t.csv:1:{col}: error: line 1 holds a carriage return (\\r) that does not end it; " + said
    ), rendered


def test_an_over_long_csv_line_of_bare_carriage_returns_says_so(tmp_path: Path) -> None:
    """Past 1 MiB a file of bare-\\r line ends is one line too long: the error says why."""
    write(tmp_path, "t.csv", "t,p\r" + "0.5,40\r" * 150_000)
    rendered = error_of('session s from "t.csv" { }', tmp_path).render()
    assert rendered == (
        "t.csv:1:1: error: line 1 is longer than 1,048,576 bytes (the limit of a source's "
        "line); it holds carriage returns (\\r), which do not end a line: a line ends with "
        "\\n or \\r\\n (old Mac line ends: convert them, e.g. tr '\\r' '\\n')"
    ), rendered


@pytest.mark.parametrize("number", [str(2**53 + 1), "-" + str(2**53 + 1), "9" * 500])
def test_a_jsonl_integer_past_2_53_is_located(tmp_path: Path, number: str) -> None:
    """As an integer literal in a spec is: every integer a spec computes with is at most
    2^53 (a 500-digit one made `t / 1000` an internal OverflowError at run time). A list's
    elements are content keys, never computed with: kept as they are."""
    write(tmp_path, "v.jsonl", f'{{"t": 1, "ids": [1]}}\n{{"t": {number}, "ids": [{number}]}}\n')
    exc = error_of('session s from "v.jsonl" { }', tmp_path)
    assert exc.render() == (
        "v.jsonl:2:2: error: key 't' holds an integer beyond 2^53 (9,007,199,254,740,992), the "
        "largest whole number a spec can use; a key that large can be a string"
    )
    write(tmp_path, "w.jsonl", f'{{"t": 1, "ids": [{number}]}}\n')
    prog = compile_source('session s from "w.jsonl" { }', "t.pool", str(tmp_path))
    src = prog.sessions[0].source
    assert src is not None and src.rows == ((1, (int(number),)),)
