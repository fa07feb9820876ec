"""Breakpoints that can never fire are refused with a reason and a suggestion; `render`
says when its breakpoint never fired or its event does not exist (exit 1); `pooltui
missing.pool` is one line."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from pooltui.cli.main import build_parser, main
from pooltui.tui.breakpoints import BreakpointError, Names, parse_breakpoint
from tests.tui.conftest import SIZE, keys, make_app, settle, submit

SPECS = Path(__file__).parent / "specs"
SMALL = str(SPECS / "small.pool")
NAMES = Names(("kv",), ("gpu",), ("chat",), (("chat", 16),), (("kv", 1),), (("gpu", 1),))


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("preempt pool=gpu0", "pool=gpu0 can never fire: this spec has no pool 'gpu0' (it has kv)"),
        ("admit session=chat[99]", "chat has 16 sessions (chat[0] to chat[15])"),
        ("admit chat[99]", "did you mean chat[15]?"),
        ("admit pool=kvv", "did you mean kv?"),
        ("admit class=chta", "did you mean chat?"),
        ("admit stage=gpu[3]", "gpu has 1 member"),
    ],
)
def test_a_breakpoint_that_can_never_fire_is_refused(text: str, said: str) -> None:
    with pytest.raises(BreakpointError) as caught:
        parse_breakpoint(text, NAMES)
    assert said in caught.value.text


def test_a_breakpoint_that_can_fire_is_taken() -> None:
    for text in ("admit session=chat[15]", "preempt pool=kv", "admit stage=gpu class=chat"):
        parse_breakpoint(text, NAMES)


async def test_the_breakpoints_screen_says_why_it_can_never_fire() -> None:
    app = make_app()  # the fake: one pool kv, a stage gpu, 6 chats
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await keys(pilot, "b")
        await submit(pilot, "preempt pool=gpu0")
        error = str(app.screen.query_one("#bp-error", Static).content)
        assert "can never fire" in error and "did you mean stage=gpu?" in error
        await submit(pilot, "admit session=chat[99]")
        error = str(app.screen.query_one("#bp-error", Static).content)
        assert "chat has 6 sessions" in error and "chat[5]" in error
        assert len(app.breakpoints) == 0


def test_render_a_breakpoint_that_never_fires_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "x.svg"
    assert main(["render", SMALL, "--break", "spill", "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert "--break 'spill' never fired" in err and "ended" in err
    assert not out.exists()


def test_render_an_event_past_the_end_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "x.svg"
    assert main(["render", SMALL, "--event", "99999", "-o", str(out)]) == 1
    assert "there is no event #99999" in capsys.readouterr().err
    assert not out.exists()


def test_render_without_event_is_at_the_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "x.svg"
    assert main(["render", SMALL, "-o", str(out)]) == 0
    said = capsys.readouterr().out
    assert "at the start" in said and "#-1" not in said
    assert "#-1" not in out.read_text()


def test_render_help_describes_its_options() -> None:
    sub = build_parser()._subparsers._group_actions[0].choices["render"]  # type: ignore[union-attr]
    text = sub.format_help()
    for option, words in (("--event", "after event #N"), ("--time", "time T"), ("--size", "WxH")):
        assert option in text and words in text


def test_a_missing_spec_is_one_line_and_no_app(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(SPECS / "missing.pool")]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.strip().splitlines() == [
        f"pooltui: cannot read '{SPECS / 'missing.pool'}': No such file or directory"
    ]
