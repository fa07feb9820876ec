"""Hostile command lines (issue 14): a bad option value is a usage error (exit 2, one line
naming the option), never a silent run or a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from pooltui.cli.main import main

BAD = [
    ["run", "{spec}", "--until", "nan"],
    ["run", "{spec}", "--until", "-1"],
    ["run", "{spec}", "--until", "soon"],
    ["run", "{spec}", "--events", "0"],
    ["run", "{spec}", "--events", "-5"],
    ["run", "{spec}", "--events", "1.5"],
    ["render", "{spec}", "-o", "x.svg", "--time", "nan"],
    ["render", "{spec}", "-o", "x.svg", "--time", "-inf"],
    ["render", "{spec}", "-o", "x.svg", "--event", "-1"],
]


@pytest.mark.parametrize("argv", BAD, ids=[" ".join(a[2:]) for a in BAD])
def test_bad_option_values(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "s.pool"
    spec.write_text("session s { wait (1); }\n")
    with pytest.raises(SystemExit) as info:
        main([a.format(spec=spec) for a in argv])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert f"error: argument {argv[-2]}: " in err, err
    assert "Traceback" not in err


@pytest.mark.parametrize("until", ["inf", "1e400", "0", "2.5"])
def test_good_until_values(until: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "s.pool"
    spec.write_text("session s { wait (1); }\n")
    assert main(["run", str(spec), "--quiet", "--until", until]) == 0


@pytest.mark.parametrize("path", ["/dev/zero", "/dev/urandom", "/", "/nonexistent/x.pool"])
def test_specs_that_are_not_files(path: str, capsys: pytest.CaptureFixture[str]) -> None:
    """An endless device is read up to the size limit; a folder or a missing file cannot be
    read: one clear error each, exit 1."""
    assert main(["check", path]) == 1
    err = capsys.readouterr().err
    assert "spec too large" in err or "cannot read" in err or "not UTF-8" in err, err
    assert "Traceback" not in err and "internal error" not in err


def test_an_empty_spec_name_cannot_be_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`pooltui ''` is a spec that cannot be read, as `pooltui check ''` says: one line,
    exit 1, for the debugger and `render` too (not the full-screen error page, not a
    screenshot of it)."""
    from pooltui.cli.render import cannot_read
    from pooltui.tui.app import PoolApp

    said = "pooltui: cannot read '': No such file or directory\n"
    assert main(["check", ""]) == 1
    assert capsys.readouterr().err == said
    shot = tmp_path / "x.svg"
    assert main(["render", "", "-o", str(shot)]) == 1
    assert capsys.readouterr().err == said
    assert not shot.exists()
    assert cannot_read(PoolApp.from_spec(""))  # what `pooltui ''` checks before opening
