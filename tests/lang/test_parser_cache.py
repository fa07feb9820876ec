"""The built parser is cached under the user's cache dir: a cache that cannot be written is
passed over silently, and every way of getting the parser parses the same. So is a spec's
parse (its AST), read back without lark. The folder stays bounded: the parses kept are the
most recently used (`parser.MAX_PARSES`, `parser.MAX_PARSE_BYTES`), whatever other
processes remove meanwhile; and the test session never writes into the user's folder."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import time
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


def test_the_cache_dir_follows_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("POOLTUI_CACHE_DIR", "/somewhere")
    assert parser.cache_dir() == Path("/somewhere")
    monkeypatch.delenv("POOLTUI_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", "/xdg")
    assert parser.cache_dir() == Path("/xdg/pooltui")
    # A folder of this test's own: the parse below writes into it (as root, /xdg would do).
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert compile_file(str(SPEC)).pools
    assert list((tmp_path / "pooltui").glob("ast-*.pickle"))


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


def test_the_test_session_does_not_write_into_the_users_cache_folder() -> None:
    # tests/conftest.py points the session at a temporary folder of its own.
    user = os.environ.get("POOLTUI_TESTS_USER_CACHE")
    assert user is not None and parser.cache_dir() != Path(user)
    assert Path(tempfile.gettempdir()) in parser.cache_dir().parents


def _texts(n: int) -> list[str]:
    return [f"pool kv{i} {{ cap 16; }}\n" for i in range(n)]


def _kept(texts: list[str]) -> list[bool]:
    return [parser._Cached(t, "x.pool", "start").path.exists() for t in texts]


def test_the_parse_cache_keeps_the_most_recent_parses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("POOLTUI_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(parser, "MAX_PARSES", 4)
    texts = _texts(7)
    for text in texts:
        assert parser.parse(text, "x.pool")[1] == []
    # 4 + 3 written: the first 3 removed, oldest first.
    assert _kept(texts) == [False] * 3 + [True] * 4
    assert len(list(tmp_path.glob("ast-*.pickle"))) == 4
    # A bound in bytes too: 2.5 entries' worth keeps the last two.
    size = parser._Cached(texts[-1], "x.pool", "start").path.stat().st_size
    monkeypatch.setattr(parser, "MAX_PARSE_BYTES", size * 5 // 2)
    more = _texts(9)[7:]
    for text in more:
        assert parser.parse(text, "x.pool")[1] == []
    assert _kept(texts + more) == [False] * 7 + [True] * 2


def test_a_parse_read_back_counts_as_a_use(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POOLTUI_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(parser, "MAX_PARSES", 4)
    first, later = _texts(4), _texts(6)[4:]
    for text in first:
        parser.parse(text, "x.pool")
    with monkeypatch.context() as m:
        m.setattr(parser, "_get_parser", lambda: pytest.fail("parsed again"))
        assert parser.parse(first[0], "x.pool")[1] == []  # read back: now the newest use
    for text in later:
        parser.parse(text, "x.pool")
    assert _kept(first + later) == [True, False, False, True, True, True]


def test_parses_removed_by_another_process_meanwhile_are_passed_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("POOLTUI_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(parser, "MAX_PARSES", 3)
    texts = _texts(6)
    for text in texts[:3]:
        parser.parse(text, "x.pool")
    oldest = parser._Cached(texts[0], "x.pool", "start").path
    scandir, unlink = os.scandir, os.unlink

    def listed_then_gone(path: str) -> object:
        # The folder as listed, then its oldest file removed (by another process) before
        # it is looked at.
        entries = list(scandir(path))
        if oldest.exists():
            unlink(oldest)
        return contextlib.nullcontext(iter(entries))

    def removed_first(path: str | os.PathLike[str]) -> None:
        # Another process removes each file just before this one does.
        if os.path.exists(path):
            unlink(path)
        unlink(path)

    with monkeypatch.context() as m:
        m.setattr(os, "scandir", listed_then_gone)
        m.setattr(os, "unlink", removed_first)
        for text in texts[3:]:
            assert parser.parse(text, "x.pool")[1] == []
    assert _kept(texts) == [False] * 3 + [True] * 3


def test_a_writers_temporary_left_behind_is_removed_when_old(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("POOLTUI_CACHE_DIR", str(tmp_path))
    old, fresh = tmp_path / "ast-0.pickle.11.tmp", tmp_path / "ast-1.pickle.12.tmp"
    for f in (old, fresh):
        f.write_bytes(b"half")
    two_hours_ago = time.time() - 7200
    os.utime(old, (two_hours_ago, two_hours_ago))
    parser.parse(_texts(1)[0], "x.pool")
    assert (old.exists(), fresh.exists()) == (False, True)  # fresh: maybe being written


def test_the_built_parsers_kept_are_the_most_recently_used(tmp_path: Path) -> None:
    # Parsers built for other grammars (or lark or Python versions), used hours ago.
    for hours, name in enumerate(["parser-a.lark", "parser-b.lark", "parser-c.lark"], 1):
        (tmp_path / name).write_bytes(b"tables")
        os.utime(tmp_path / name, (time.time() - 3600 * hours,) * 2)
    parser.build_parser(tmp_path)
    left = sorted(p.name for p in tmp_path.iterdir())
    assert len(left) == parser.MAX_PARSERS == 3
    assert left[:2] == ["parser-a.lark", "parser-b.lark"]  # this grammar's is the third
