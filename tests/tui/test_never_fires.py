"""Breakpoints that can never fire are refused with a reason and a suggestion; `render`
says when its breakpoint never fired or its event does not exist (exit 1); `pooltui
missing.pool` is one line."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from pooltui.cli.main import build_parser, main
from pooltui.lang import compile_file
from pooltui.tui.app import PoolApp
from pooltui.tui.breakpoint_text import Names, parse_breakpoint
from pooltui.tui.breakpoints import BreakpointError
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
    # A reject could happen on small.pool (any hold may never fit), but none does. (This
    # test used `spill`, which small.pool, with no spill tier, now refuses up front.)
    out = tmp_path / "x.svg"
    assert main(["render", SMALL, "--break", "reject", "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert "--break 'reject' never fired" in err and "ended" in err
    assert not out.exists()


# Moments only some pools make: `spill` needs a pool with `spill … via …` (its pool is the
# one that spills), `spilled` and `spill-drop` a tier something spills into (their pool is
# the tier), `reload` and `reloaded` a pool with `reload via` (their pool is that pool).
# `shared` is above 0 only when blocks are shared: by `content`, or between a session's
# holds of one pool nested in each other (both private streams of one session).
REPO_SPECS = Path(__file__).parents[2] / "specs"


def names_of(path: Path | str) -> Names:
    return Names.of(compile_file(str(path)))


@pytest.mark.parametrize(
    ("spec", "text", "said"),
    [
        ("shared_prefix", "spill", "spill can never fire: no pool of this spec spills"),
        ("shared_prefix", "spilled", "spilled can never fire: no pool of this spec spills"),
        ("shared_prefix", "spill-drop class=chat", "spill-drop can never fire: no pool of this spec spills"),
        ("shared_prefix", "reload", "reload can never fire: no pool of this spec reloads"),
        ("shared_prefix", "reloaded pool=kv", "reloaded can never fire: no pool of this spec reloads"),
        ("spill_tiers", "spill pool=ssd", "spill pool=ssd can never fire: ssd does not spill (the pools that do: hbm, dram)"),
        ("spill_tiers", "spilled pool=hbm", "spilled pool=hbm can never fire: nothing spills into hbm (the pools that are spilled into: dram, ssd)"),
        ("spill_tiers", "reload pool=dram", "reload pool=dram can never fire: dram does not reload (the pools that do: hbm)"),
        ("preempt_lifo", "admit shared>0", "shared>0 can never fire: no hold of this spec shares blocks"),
        ("preempt_lifo", "admit shared>=1 pool=kv", "shared>=1 can never fire: no hold of this spec shares blocks"),
    ],
)  # fmt: skip
def test_a_moment_no_pool_makes_is_refused(spec: str, text: str, said: str) -> None:
    with pytest.raises(BreakpointError) as caught:
        parse_breakpoint(text, names_of(REPO_SPECS / f"{spec}.pool"))
    assert said in caught.value.text


@pytest.mark.parametrize(
    ("spec", "text"),
    [
        ("spill_tiers", "spill"),
        ("spill_tiers", "spill pool=dram"),
        ("spill_tiers", "spilled pool=ssd"),
        ("spill_tiers", "spill-drop"),
        ("spill_tiers", "reloaded pool=hbm"),
        ("offload", "reload"),
        ("shared_prefix", "admit shared>0"),
        ("preempt_lifo", "admit shared=0"),  # true of every admission
        ("preempt_lifo", "admit shared<5"),
    ],
)
def test_a_moment_some_pool_makes_is_taken(spec: str, text: str) -> None:
    parse_breakpoint(text, names_of(REPO_SPECS / f"{spec}.pool"))


# Without `content`, a session's hold nested in its own hold of the same pool hits the outer
# one's blocks (its private stream, the same in every hold of the session), which the outer
# hold still holds: shared 8. Worked out by hand (language.md §8.6, content-and-reload §2):
#  0  admit a's outer hold (8, blocks 0 1), prefill 8 registers both
#  1  admit the inner hold (12): E = 2, cap ⌊11/4⌋ = 2: hit 8, shared 8 (the outer holds them)
NESTED = """
stage gpu step { time 1; }
pool kv { cap 64; block 4; admit via gpu; }
session a { arrive at (0);
  hold kv (8) { run gpu prefill (8); hold kv (12) { run gpu prefill (4); } } }
"""


def test_shared_can_fire_without_content_between_a_sessions_nested_holds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "nested.pool"
    spec.write_text(NESTED)
    parse_breakpoint("admit shared>0", names_of(spec))
    out = tmp_path / "x.svg"
    assert main(["render", str(spec), "--break", "admit shared>0", "-o", str(out)]) == 0
    assert "breakpoint #1: admit shared>0" in capsys.readouterr().out


def test_render_refuses_a_moment_no_pool_makes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "x.svg"
    spec = str(REPO_SPECS / "shared_prefix.pool")
    assert main(["render", spec, "--break", "spill", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("pooltui render: --break 'spill': spill can never fire: ")
    assert not out.exists()


async def test_the_breakpoints_screen_refuses_spill_on_a_spec_that_never_spills() -> None:
    app = PoolApp.from_spec(str(REPO_SPECS / "shared_prefix.pool"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await keys(pilot, "b")
        await submit(pilot, "spill")
        error = str(app.screen.query_one("#bp-error", Static).content)
        assert error.startswith("spill can never fire: no pool of this spec spills")
        assert len(app.breakpoints) == 0


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


async def test_the_breakpoints_screen_says_a_moment_takes_no_condition() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await keys(pilot, "b")
        await submit(pilot, "evict if 1/0 > 0")
        error = str(app.screen.query_one("#bp-error", Static).content).splitlines()
        assert error[0].startswith("<breakpoint>:1:7: error: a moment breakpoint takes no")
        assert "`if EXPR` on its own" in error[0]
        assert error[1:3] == ["1 | evict if 1/0 > 0", "  |       ^^^^^^^^^^"]
        assert len(app.breakpoints) == 0
