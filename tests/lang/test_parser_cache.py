"""The built parser is cached under the user's cache dir: a cache that cannot be written is
passed over silently, and every way of getting the parser parses the same. So is a spec's
parse (its AST), read back without lark."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pooltui.lang import compile_file, parser

SPEC = Path(__file__).parents[2] / "specs" / "vllm_v1.pool"


def _parse_with(monkeypatch: pytest.MonkeyPatch, built: object) -> object:
    monkeypatch.setattr(parser, "_parser", built)
    monkeypatch.setattr(parser._Cached, "read", lambda self: None)  # parsed, not read back
    result, diags = parser.parse(SPEC.read_text(), str(SPEC))
    assert diags == []
    return result


def test_a_cached_parser_parses_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plain = _parse_with(monkeypatch, parser.build_parser(None))
    first = parser.build_parser(tmp_path)  # builds, writes the cache
    written = list(tmp_path.iterdir())
    assert len(written) == 1 and written[0].stat().st_size > 0
    second = parser.build_parser(tmp_path)  # loads it
    assert _parse_with(monkeypatch, first) == plain
    assert _parse_with(monkeypatch, second) == plain
    bad, diags = parser.parse("pool kv { cap 4 }\n", "x.pool")
    assert bad is None and diags


def test_an_unwritable_cache_is_passed_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = _parse_with(monkeypatch, parser.build_parser(None))
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    # A cache dir that cannot be made (its parent is a file), and a read-only one.
    assert _parse_with(monkeypatch, parser.build_parser(blocker / "cache")) == plain
    read_only = tmp_path / "ro"
    read_only.mkdir()
    read_only.chmod(0o500)
    try:
        assert _parse_with(monkeypatch, parser.build_parser(read_only)) == plain
        if os.geteuid() != 0:  # root writes anywhere
            assert list(read_only.iterdir()) == []
    finally:
        read_only.chmod(0o700)


def test_a_damaged_cache_file_is_rebuilt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plain = _parse_with(monkeypatch, parser.build_parser(None))
    parser.build_parser(tmp_path)
    (cached,) = tmp_path.iterdir()
    cached.write_bytes(cached.read_bytes()[:100])  # half a file, as a crashed writer leaves
    assert _parse_with(monkeypatch, parser.build_parser(tmp_path)) == plain


def test_the_cache_dir_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POOLTUI_CACHE_DIR", "/somewhere")
    assert parser.cache_dir() == Path("/somewhere")
    monkeypatch.delenv("POOLTUI_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", "/xdg")
    assert parser.cache_dir() == Path("/xdg/pooltui")
    assert compile_file(str(SPEC)).pools


def test_a_parse_is_read_back_from_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("POOLTUI_CACHE_DIR", str(tmp_path))
    text = SPEC.read_text()
    first, diags = parser.parse(text, str(SPEC))
    assert diags == [] and len(list(tmp_path.glob("ast-*.pickle"))) == 1
    monkeypatch.setattr(parser, "_get_parser", lambda: pytest.fail("parsed again"))
    again, diags = parser.parse(text, str(SPEC))
    assert diags == [] and again == first
    # Another file name, another start rule or another text is another parse.
    assert (
        parser._Cached(text, "other.pool", "start").path
        != parser._Cached(text, str(SPEC), "start").path
    )
    assert (
        parser._Cached(text, str(SPEC), "condition").path
        != parser._Cached(text, str(SPEC), "start").path
    )
    assert (
        parser._Cached(text + " ", str(SPEC), "start").path
        != parser._Cached(text, str(SPEC), "start").path
    )


def test_a_damaged_parse_in_the_cache_is_parsed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("POOLTUI_CACHE_DIR", str(tmp_path))
    text = SPEC.read_text()
    first, _ = parser.parse(text, str(SPEC))
    (kept,) = tmp_path.glob("ast-*.pickle")
    kept.write_bytes(kept.read_bytes()[:50])  # half a file, as a crashed writer leaves
    again, diags = parser.parse(text, str(SPEC))
    assert diags == [] and again == first
    assert parser._Cached(text, str(SPEC), "start").read() == first  # written whole again


def test_a_spec_with_errors_is_not_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POOLTUI_CACHE_DIR", str(tmp_path))
    bad, diags = parser.parse("pool kv { cap 4 }\n", "x.pool")
    assert bad is None and diags
    assert list(tmp_path.glob("ast-*.pickle")) == []


def test_a_spec_read_back_from_the_cache_loads_no_lark(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from pooltui.lang import compile_file\n"
        f"compile_file({str(SPEC)!r})\n"
        "print('lark' in sys.modules)\n"
    )
    env = {**os.environ, "POOLTUI_CACHE_DIR": str(tmp_path)}
    run = [sys.executable, "-c", code]
    first = subprocess.run(run, env=env, capture_output=True, text=True, check=True)
    second = subprocess.run(run, env=env, capture_output=True, text=True, check=True)
    assert (first.stdout.strip(), second.stdout.strip()) == ("True", "False")
