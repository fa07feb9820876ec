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


HALTS_AT_ONCE = "session s[2] { arrive every (draw exponential(-1)); wait (1); }\n"
SAYS = "error: draw exponential: mean -1 is not positive"


def test_render_past_a_runtime_error_locates_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An --event past a runtime error that stopped the run before its first event: the
    refusal says so in words ("before its first event", not "#0 to #-1"), then the error
    located as `pooltui run` prints it (file:line:col, the line, a caret)."""
    spec = tmp_path / "h.pool"
    spec.write_text(HALTS_AT_ONCE)
    out = tmp_path / "h.svg"
    assert main(["render", str(spec), "--event", "4", "--size", "80x24", "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(
        "pooltui render: --event 4: there is no event #4; the simulation halted (runtime "
        "error: draw exponential: mean -1 is not positive) before its first event\n"
    ), err
    assert f"\n{spec}:1:30: {SAYS}\n1 | {HALTS_AT_ONCE}" in err, err
    assert "  |                              ^^^^^^^^^^^^^^^^^^^^\n" in err, err
    assert "#-1" not in err and not out.exists()


def test_render_at_a_runtime_error_locates_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The screenshot is of the moment asked for (exit 0); when the run halted there on a
    runtime error, the terminal gets the error located too, as `pooltui run` prints it."""
    spec = tmp_path / "h.pool"
    spec.write_text(HALTS_AT_ONCE)
    out = tmp_path / "h.svg"
    assert main(["render", str(spec), "--size", "80x24", "-o", str(out)]) == 0
    got = capsys.readouterr()
    assert got.out == f"wrote {out} (80x24) at the start: runtime error: {SAYS[7:]}\n"
    assert got.err.startswith(f"{spec}:1:30: {SAYS}\n1 | {HALTS_AT_ONCE}"), got.err
    assert out.exists()
