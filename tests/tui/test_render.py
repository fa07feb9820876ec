"""`pooltui render`: a screenshot of the debugger at an event or a time, without a terminal."""

from __future__ import annotations

from pathlib import Path

import pytest

from pooltui.cli.main import main
from pooltui.cli.render import parse_size

SPECS = Path(__file__).parent / "specs"
SMALL = str(SPECS / "small.pool")


def test_render_at_an_event_is_deterministic(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = tmp_path / "a.svg", tmp_path / "b.svg"
    assert main(["render", SMALL, "--event", "40", "--size", "120x40", "-o", str(first)]) == 0
    assert main(["render", SMALL, "--event", "40", "--size", "120x40", "-o", str(second)]) == 0
    svg = first.read_text()
    assert svg.startswith("<svg") and "preempt" in svg
    assert first.read_bytes() == second.read_bytes()
    assert "event #40" in capsys.readouterr().out


def test_render_at_a_time(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "t.svg"
    assert main(["render", SMALL, "--time", "0.5", "-o", str(out)]) == 0
    assert out.exists()
    said = capsys.readouterr().out
    assert "t=0.4" in said  # the last event at or before 0.5 s


def test_render_a_spec_that_does_not_compile(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "bad.svg"
    bad = str(SPECS / "bad.pool")
    assert main(["render", bad, "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{bad}:5:8: error: unknown pool 'kvv'")
    assert "does not compile" in out.read_text().replace("&#160;", " ")


def test_render_rejects_a_bad_size(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render", SMALL, "--size", "big", "-o", str(tmp_path / "x.svg")]) == 2
    assert "WxH" in capsys.readouterr().err
    with pytest.raises(ValueError):
        parse_size("10x2")
    assert parse_size("160x48") == (160, 48)


def test_render_stops_at_a_breakpoint(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "bp.svg"
    assert main(["render", SMALL, "--break", "preempt", "-o", str(out)]) == 0
    said = capsys.readouterr().out
    assert "breakpoint #1: preempt" in said
    svg = out.read_text().replace("&#160;", " ")
    assert "breakpoint #1" in svg
    # A bad breakpoint is a usage error, with the breakpoint screen's message.
    assert main(["render", SMALL, "--break", "if free(kv) <", "-o", str(out)]) == 2
    assert "--break" in capsys.readouterr().err
    assert main(["render", SMALL, "--break", "preempt", "--event", "3", "-o", str(out)]) == 2
