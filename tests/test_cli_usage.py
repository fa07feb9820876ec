"""The command line's usage messages tell the truth: a wrong option of a command is
refused with that command's usage (not the top-level one), the top-level usage names every
command, `tui` (the default: `pooltui SPEC`) too, and no input gives a traceback.

Expectations from README.md (The command line) and argparse's documented exit status 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from pooltui.cli.main import main

SPEC = str(Path(__file__).parent / "tui" / "specs" / "small.pool")


def usage_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> list[str]:
    """Run `argv`, which must be refused as a usage error (exit 2); stderr's lines."""
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    out, err = capsys.readouterr()
    assert out == "" and "Traceback" not in err
    return err.splitlines()


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["run", SPEC, "--bogus"], "run"),
        (["run", "--bogus", SPEC], "run"),
        (["check", SPEC, "--bogus"], "check"),
        (["ir", SPEC, "--bogus"], "ir"),
        (["render", SPEC, "-o", "x.svg", "--bogus"], "render"),
        (["tui", SPEC, "--bogus"], "tui"),
        ([SPEC, "--bogus"], "tui"),  # `pooltui SPEC` is `pooltui tui SPEC`
        (["run", SPEC, "extra"], "run"),
    ],
)
def test_a_wrong_option_of_a_command_shows_that_commands_usage(
    capsys: pytest.CaptureFixture[str], argv: list[str], command: str
) -> None:
    lines = usage_error(capsys, argv)
    assert lines[0].startswith(f"usage: pooltui {command} ")
    assert lines[-1].startswith(f"pooltui {command}: error: unrecognized arguments: ")
    assert ("--bogus" if "--bogus" in argv else "extra") in lines[-1]


def test_the_top_level_usage_names_every_command_and_the_default(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    text = capsys.readouterr().out
    usage = text.split("\n\n", 1)[0]
    assert usage.startswith("usage: pooltui ")
    for command in ("tui", "check", "run", "render", "ir"):
        assert command in usage, command
    assert "SPEC" in usage  # `pooltui SPEC` opens the debugger
    assert "pooltui SPEC" in text  # said in words too
    lines = usage_error(capsys, ["--bogus"])
    assert lines[0] == usage.splitlines()[0]


def command_help(capsys: pytest.CaptureFixture[str], command: str) -> str:
    """`pooltui COMMAND --help`, its words joined on single spaces (argparse wraps them)."""
    with pytest.raises(SystemExit) as info:
        main([command, "--help"])
    assert info.value.code == 0
    return " ".join(capsys.readouterr().out.split())


def test_render_help_says_break_is_repeatable(capsys: pytest.CaptureFixture[str]) -> None:
    # README (The command line): `--break "BREAKPOINT"` (repeatable).
    text = command_help(capsys, "render")
    option = text.split("--break BREAKPOINT", 2)[2]  # its description, after the usage line
    assert "repeatable" in option.split(" -o ", 1)[0]


def test_ir_help_says_rows_covers_every_source_row(capsys: pytest.CaptureFixture[str]) -> None:
    # README: `--rows` includes every source row; a JSON Lines trace's rows are included too
    # (language.md §6.2), so the help must not say CSV only.
    text = command_help(capsys, "ir")
    option = text.split("--rows", 2)[2]
    assert "CSV" in option and "JSON Lines" in option


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["-"],
        ["--"],
        ["--version", "extra"],
        ["tui"],
        ["run"],
        ["run", "--until", "nan", SPEC],
        ["run", "--events", "0", SPEC],
        ["render", SPEC],
        ["render", SPEC, "-o"],
        ["check", "--", "--bogus"],
        ["help"],
        ["run", "\x00"],  # not from a shell, but through main() from Python
        ["check", "a\x00b"],
        ["render", "\x00", "-o", "x.svg"],
    ],
)
def test_no_input_gives_a_traceback(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code  # argparse's usage errors and --help
    out, err = capsys.readouterr()
    assert code in (0, 1, 2), (code, err)
    assert "Traceback" not in out + err
    assert "internal error" not in out + err


@pytest.mark.parametrize("command", ["check", "ir", "run", "render"])
def test_a_spec_that_cannot_be_read_is_one_line_for_every_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    missing = str(tmp_path / "missing.pool")
    extra = ["-o", str(tmp_path / "x.svg")] if command == "render" else []
    assert main([command, missing, *extra]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"pooltui: cannot read '{missing}': No such file or directory\n"


@pytest.mark.parametrize("command", ["check", "ir", "run", "render", "tui"])
def test_a_file_names_control_characters_are_escaped_when_it_cannot_be_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    # As control characters of a spec's text are (`\u001b`): a file name cannot drive the
    # terminal the message is printed on.
    missing = str(tmp_path / "a\x1b[31mb\x07.pool")
    extra = ["-o", str(tmp_path / "x.svg")] if command == "render" else []
    assert main([command, missing, *extra]) == 1
    out, err = capsys.readouterr()
    shown = str(tmp_path / "a\\u001b[31mb\\u0007.pool")
    assert out == ""
    assert err == f"pooltui: cannot read '{shown}': No such file or directory\n"


def test_a_file_names_control_characters_are_escaped_where_it_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # docs/decisions.md: file names are printed with their control characters escaped;
    # `check`'s ok line and `cannot write` name files too.
    odd = tmp_path / "a\x1b[2Jb.pool"
    odd.write_text(Path(SPEC).read_text())
    assert main(["check", str(odd)]) == 0
    out, _ = capsys.readouterr()
    assert out.startswith(str(tmp_path / "a\\u001b[2Jb.pool") + ": ok — ")
    assert "\x1b" not in out
    unwritable = tmp_path / "no such folder" / "t\x1bx.jsonl"
    assert main(["run", SPEC, "--quiet", "--trace", str(unwritable)]) == 1
    _, err = capsys.readouterr()
    assert "\x1b" not in err
    assert f"cannot write {tmp_path / 'no such folder' / 't'}\\u001bx.jsonl" in err


@pytest.mark.parametrize("command", ["tui", "check", "run", "render", "ir"])
def test_each_commands_help_says_what_it_does_and_describes_every_argument(
    capsys: pytest.CaptureFixture[str], command: str
) -> None:
    """Issue 13: `render --help` left options undescribed. Every command's own help opens
    with a paragraph of what it does on SPEC and how it exits when it fails (more than its
    one line in `pooltui -h`), and says what each argument is, SPEC included."""
    import argparse

    from pooltui.cli.main import build_parser

    text = command_help(capsys, command)
    paragraph = text.split(" positional arguments: ", 1)[0].split(" spec ", 1)[1]
    assert "SPEC" in paragraph and "1" in paragraph and "xit" in paragraph
    assert "spec the .pool file" in text
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    for action in sub.choices[command]._actions:
        assert action.help, f"{command}: {action.dest} is not described"


def test_double_dash_ends_the_options_of_the_default_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`pooltui -- -x.pool` opens the spec `-x.pool`, as `pooltui tui -- -x.pool` does (`--`
    ends the options, as everywhere); it was refused as an unknown command `--`."""
    missing = str(tmp_path / "-x.pool")  # not there: the one line of a spec not read
    assert main(["--", missing]) == 1
    assert (
        capsys.readouterr().err == f"pooltui: cannot read '{missing}': No such file or directory\n"
    )
    assert main(["tui", "--", missing]) == 1
    assert (
        capsys.readouterr().err == f"pooltui: cannot read '{missing}': No such file or directory\n"
    )
