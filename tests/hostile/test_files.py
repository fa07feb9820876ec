"""Class 4 (issue 14): files the command line writes.

Every target that cannot be written gives the one line `cannot write FILE: reason`
(exit 1); an input of the run is never overwritten; a trace appears whole or not at all,
is strict JSON, and a trace that fails mid-run still leaves the summary printed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from pooltui.cli.output import OutputError, atomic_text

from .helpers import assert_cannot_write, assert_clean, cli, sub

SPEC = """\
pool kv { cap 64; block 4; }
session req[3] { hold kv (8) { wait (1); } }
"""


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    path = tmp_path / "spec.pool"
    path.write_text(SPEC)
    return path


TARGETS: dict[str, Callable[[Path], str]] = {
    "missing_folder": lambda d: str(d / "no" / "such" / "t.jsonl"),
    "a_directory": lambda d: str(d),
    "under_a_file": lambda d: str(d / "spec.pool" / "t.jsonl"),
    "dev_full": lambda d: "/dev/full",
    "empty_name": lambda d: "",
}


@pytest.mark.parametrize("where", sorted(TARGETS))
def test_trace_cannot_be_written(
    where: str, spec: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = TARGETS[where](spec.parent)
    o = cli(["run", str(spec), "--quiet", "--trace", target], capsys)
    assert_cannot_write(o, target if target else "''")
    assert spec.read_text() == SPEC
    assert [p.name for p in spec.parent.iterdir()] == ["spec.pool"]  # no temporary left


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_trace_into_a_read_only_folder(spec: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = spec.parent / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        target = str(folder / "t.jsonl")
        assert_cannot_write(cli(["run", str(spec), "-q", "--trace", target], capsys), target)
    finally:
        folder.chmod(0o755)


def test_a_mid_run_failure_still_prints_the_summary(
    spec: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """/dev/full accepts the open and fails the writes: the run goes on, the summary is
    printed, then the error."""
    o = cli(["run", str(spec), "--quiet", "--trace", "/dev/full"], capsys)
    assert_cannot_write(o, "/dev/full")
    assert "sessions: 3 arrived, 3 done" in o.out


@pytest.mark.parametrize("spelling", ["same", "dot_slash", "symlink", "hard_link"])
def test_trace_never_overwrites_the_spec(
    spelling: str, spec: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = {
        "same": str(spec),
        "dot_slash": str(spec.parent / "." / "spec.pool"),
        "symlink": str(spec.parent / "link.jsonl"),
        "hard_link": str(spec.parent / "hard.jsonl"),
    }[spelling]
    if spelling == "symlink":
        os.symlink(spec, target)
    if spelling == "hard_link":
        os.link(spec, target)
    o = cli(["run", str(spec), "--quiet", "--trace", target], capsys)
    assert_cannot_write(o, target)
    assert "it is the spec of this run" in o.err
    assert spec.read_text() == SPEC
    assert o.out == ""  # refused before running


def test_trace_never_overwrites_a_source(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    csv = tmp_path / "t.csv"
    csv.write_text("n\n1\n2\n")
    path = tmp_path / "s.pool"
    path.write_text('session s from "t.csv" { wait (n); }\n')
    o = cli(["run", str(path), "--quiet", "--trace", str(csv)], capsys)
    assert_cannot_write(o, str(csv))
    assert "source of the spec" in o.err
    assert csv.read_text() == "n\n1\n2\n"


def test_render_never_overwrites_the_spec(spec: Path, capsys: pytest.CaptureFixture[str]) -> None:
    o = cli(["render", str(spec), "-o", str(spec)], capsys)
    assert_cannot_write(o, str(spec))
    assert spec.read_text() == SPEC


def test_render_into_a_missing_folder(spec: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = str(spec.parent / "no" / "shot.svg")
    o = cli(["render", str(spec), "-o", target, "--size", "40x10"], capsys)
    assert_cannot_write(o, target)


def test_trace_is_whole_and_replaces_atomically(
    spec: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = spec.parent / "t.jsonl"
    target.write_text("old\n")
    o = cli(["run", str(spec), "--quiet", "--trace", str(target)], capsys)
    assert o.code == 0, o.text()
    lines = target.read_text().splitlines()
    assert [json.loads(line)["i"] for line in lines] == list(range(len(lines)))
    assert json.loads(lines[-1])["moment"] == "end"


def test_a_failed_write_leaves_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "t.jsonl"
    target.write_text("old\n")
    with pytest.raises(RuntimeError), atomic_text(str(target)) as f:
        f.write("new, half written\n")
        raise RuntimeError("stopped")
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.jsonl"]
    with pytest.raises(OutputError, match="cannot write"), atomic_text(str(tmp_path / "x" / "y")):
        pass


def _strict(line: str) -> object:
    def refuse(word: str) -> object:
        raise ValueError(f"not strict JSON: {word}")

    return json.loads(line, parse_constant=refuse)


def test_wait_inf_gives_a_strict_json_trace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "w.pool"
    path.write_text("pool kv { cap 64; }\nsession s { hold kv (1) { wait (inf); } }\n")
    target = tmp_path / "t.jsonl"
    o = cli(["run", str(path), "--quiet", "--trace", str(target)], capsys)
    assert_clean(o)
    for line in target.read_text().splitlines():
        _strict(line)


def test_trace_to_a_character_device_is_written_in_place(
    spec: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    o = cli(["run", str(spec), "--quiet", "--trace", os.devnull], capsys)
    assert o.code == 0, o.text()
    assert os.path.exists(os.devnull) and not os.path.isfile(os.devnull)


# ---- as subprocesses: a file-size limit and a full standard output


def test_file_size_limit(spec: Path) -> None:
    target = str(spec.parent / "t.jsonl")
    o = sub(["run", str(spec), "--quiet", "--trace", target], fsize=200)
    assert_cannot_write(o, target)
    assert "sessions: 3 arrived, 3 done" in o.out
    assert not os.path.exists(target)
    assert sorted(p.name for p in spec.parent.iterdir()) == ["spec.pool"]


@pytest.mark.parametrize("command", ["run", "ir"])
def test_standard_output_is_full(command: str, spec: Path) -> None:
    with open("/dev/full", "wb") as full:
        o = sub(
            [command, str(spec), *(["--quiet"] if command == "run" else [])], stdout=full.fileno()
        )
    assert_cannot_write(o, "standard output")


def test_standard_output_closed_early(spec: Path) -> None:
    """`pooltui ir SPEC | true`: the reader left before anything was read; exit 1 at most,
    no traceback."""
    r, w = os.pipe()
    os.close(r)
    try:
        o = sub(["ir", str(spec)], stdout=w)
    finally:
        os.close(w)
    assert_clean(o)
