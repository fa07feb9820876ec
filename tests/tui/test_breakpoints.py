"""The breakpoint logic on its own (no Textual): parsing, matching, counting."""

from __future__ import annotations

from typing import Any

import pytest

from pooltui.sim.events import MOMENTS, Event
from pooltui.tui.breakpoint_text import Names, parse_breakpoint
from pooltui.tui.breakpoints import Breakpoint, BreakpointError, BreakpointSet, moment_matches

NAMES = Names(
    pools=("kv", "host", "kv[0]", "kv[1]"), stages=("gpu", "pcie"), classes=("chat", "batch")
)


def ev(moment: str, index: int = 0, time: float = 0.0, **kw: Any) -> Event:
    return Event(index=index, time=time, moment=moment, why="", **kw)


def test_every_moment_parses() -> None:
    for moment in MOMENTS:
        bp = parse_breakpoint(moment, NAMES)
        assert bp.kind == "moment" and bp.moment == moment


def test_narrowing_by_keyword_and_by_bare_name() -> None:
    bp = parse_breakpoint("admit pool=kv class=chat", NAMES)
    assert (bp.pool, bp.session_class, bp.stage, bp.session) == ("kv", "chat", None, None)
    bp = parse_breakpoint("preempt gpu chat[3]", NAMES)
    assert (bp.stage, bp.session) == ("gpu", "chat[3]")
    bp = parse_breakpoint("evict kv[1] batch", NAMES)
    assert (bp.pool, bp.session_class) == ("kv[1]", "batch")


def test_unknown_words_suggest() -> None:
    with pytest.raises(BreakpointError, match="did you mean admit"):
        parse_breakpoint("admitt", NAMES)
    with pytest.raises(BreakpointError, match="did you mean kv"):
        parse_breakpoint("admit kw", NAMES)
    with pytest.raises(BreakpointError, match="unknown narrowing 'pol'"):
        parse_breakpoint("admit pol=kv", NAMES)
    with pytest.raises(BreakpointError, match="empty"):
        parse_breakpoint("  ", NAMES)


def test_options() -> None:
    bp = parse_breakpoint("admit; once, ignore 3", NAMES)
    assert bp.one_shot and bp.ignore == 3 and bp.enabled
    bp = parse_breakpoint("if free(kv) < 3; off", NAMES)
    assert not bp.enabled and bp.condition == "free(kv) < 3"
    with pytest.raises(BreakpointError, match="unknown option"):
        parse_breakpoint("admit; twice", NAMES)


def test_ignore_takes_a_whole_number_as_a_spec_writes_it() -> None:
    """`ignore N`: N a whole number ≥ 0 written as in a spec (language.md §2, `1_000`), as
    the go-to box takes an event number. Anything else after `ignore` is said as such,
    not as an unknown option (`ignore -1` read "unknown option 'ignore -1'")."""
    assert parse_breakpoint("admit; ignore 1_000", NAMES).ignore == 1000
    for typed in ("-1", "2.5", "nan", "x"):
        with pytest.raises(BreakpointError) as refused:
            parse_breakpoint(f"admit; ignore {typed}", NAMES)
        assert refused.value.text == (
            f"ignore takes a whole number of hits to let by (ignore 2), not {typed!r}"
        )


def test_time_breakpoints() -> None:
    assert parse_breakpoint("at 12.5", NAMES).time == 12.5
    assert parse_breakpoint("at 3s", NAMES).time == 3.0
    with pytest.raises(BreakpointError, match="seconds"):
        parse_breakpoint("at noon", NAMES)


def test_condition_errors_come_from_the_compiler() -> None:
    class Located(Exception):
        def render(self) -> str:
            return "<condition>:1:1: error: unknown name 'fre'"

    def compile_condition(text: str) -> Any:
        raise Located()

    with pytest.raises(BreakpointError) as info:
        parse_breakpoint("if fre(kv) < 1", NAMES, compile_condition)
    assert info.value.text == "<condition>:1:1: error: unknown name 'fre'"


def test_family_member_matching() -> None:
    bp = Breakpoint(0, "moment", moment="admit", pool="kv")
    assert moment_matches(bp, ev("admit", pool="kv[1]"))
    assert moment_matches(bp, ev("admit", pool="kv"))
    assert not moment_matches(bp, ev("admit", pool="kvx"))
    one = Breakpoint(0, "moment", moment="admit", pool="kv[1]")
    assert not moment_matches(one, ev("admit", pool="kv[0]"))


def test_session_matches_the_other_parties_too() -> None:
    bp = Breakpoint(0, "moment", moment="preempt", session="chat[2]")
    assert moment_matches(bp, ev("preempt", session="chat[5]", others=("chat[2]",)))
    assert not moment_matches(bp, ev("preempt", session="chat[5]"))


def test_ignore_counts_and_one_shot() -> None:
    bps = BreakpointSet()
    bp = bps.add(Breakpoint(0, "moment", moment="arrive", ignore=2, one_shot=True))
    hits = [bps.check(ev("arrive", i), 0.0, lambda e: 0) for i in range(4)]
    assert [h is not None for h in hits] == [False, False, True, False]
    assert bp.hits == 3 and not bp.enabled


def test_conditions_hit_when_they_become_true() -> None:
    bps = BreakpointSet()
    bps.add(Breakpoint(0, "condition", condition="x", expr="x"))
    values = iter([1, 1, 0, 1])
    state = {"x": 0}
    assert bps.prime(lambda e: state["x"]) is None
    out = []
    for i, v in enumerate(values):
        state["x"] = v
        out.append(bps.check(ev("arrive", i), 0.0, lambda e: state["x"]) is not None)
    assert out == [True, False, False, True]


def test_condition_errors_stop_with_the_message() -> None:
    bps = BreakpointSet()
    bps.add(Breakpoint(0, "condition", condition="1/0", expr="boom"))

    def evaluate(expr: Any) -> float:
        raise ZeroDivisionError("division by zero")

    hit = bps.check(ev("arrive"), 0.0, evaluate)
    assert hit is not None and hit.error == "division by zero"
    assert "division by zero" in hit.describe()


def test_time_breakpoint_hits_once_when_time_reaches_it() -> None:
    bps = BreakpointSet()
    bps.add(Breakpoint(0, "time", time=2.0))
    assert bps.check(ev("arrive", 0, 1.5), 1.0, lambda e: 0) is None
    assert bps.check(ev("arrive", 1, 2.5), 1.5, lambda e: 0) is not None
    assert bps.check(ev("arrive", 2, 3.0), 2.5, lambda e: 0) is None


def test_copy_is_independent() -> None:
    bps = BreakpointSet()
    bps.add(Breakpoint(0, "moment", moment="arrive"))
    other = bps.copy()
    other.items[0].hits = 5
    assert bps.items[0].hits == 0
    assert bps.add(Breakpoint(0, "moment", moment="end")).id == 2


def test_a_runs_copy_follows_the_breakpoints_as_they_are_now() -> None:
    """A run's copy takes the user's breakpoints as they are now, while it runs: the hits
    it counted kept, a condition new to it true only once it *becomes* true from here."""
    user = BreakpointSet()
    user.add(Breakpoint(0, "moment", moment="arrive"))
    run = user.copy()
    state = {"x": 1}
    assert run.prime(lambda e: state["x"]) is None
    assert run.check(ev("arrive", 0), 0.0, lambda e: state["x"]) is not None
    user.add(Breakpoint(0, "condition", condition="x", expr="x"))  # true already
    user.items[0].ignore = 5
    assert run.follow(user.frozen(), lambda e: state["x"]) is None
    assert [(b.id, b.hits, b.ignore) for b in run] == [(1, 1, 5), (2, 0, 0)]
    assert run.check(ev("release", 1), 0.0, lambda e: state["x"]) is None  # still true
    state["x"] = 0
    assert run.check(ev("release", 2), 0.0, lambda e: state["x"]) is None
    state["x"] = 1
    hit = run.check(ev("release", 3), 0.0, lambda e: state["x"])
    assert hit is not None and hit.breakpoint.id == 2
    # What the user holds is not the run's: neither its hits nor its objects.
    assert [b.hits for b in user] == [0, 0]
    assert all(a is not b for a, b in zip(run, user, strict=True))


def test_a_condition_that_fails_when_followed_says_so() -> None:
    user = BreakpointSet()
    run = user.copy()
    user.add(Breakpoint(0, "condition", condition="1/0", expr="boom"))

    def evaluate(expr: Any) -> float:
        raise ZeroDivisionError("division by zero")

    said = run.follow(user.frozen(), evaluate)
    assert said is not None
    assert said.describe() == "breakpoint #1 (if 1/0): error: division by zero"
    assert said.located is None  # an error with no place in the condition has no caret


@pytest.mark.parametrize(
    ("text", "located"),
    [
        (
            "evict if 1/0 > 0",
            [
                "<breakpoint>:1:7: error: a moment breakpoint takes no condition: a condition"
                " breakpoint is `if EXPR` on its own (it stops where EXPR becomes true)",
                "1 | evict if 1/0 > 0",
                "  |       ^^^^^^^^^^",
                "  = note: after `evict` come pool=, stage=, class=, session= (or a bare name)"
                " and comparisons of its figures, units, left (`evict left>0`)",
            ],
        ),
        (
            "admit pool=kv when free(kv) < 3; once",
            [
                "<breakpoint>:1:15: error: a moment breakpoint takes no condition: a condition"
                " breakpoint is `if EXPR` on its own (it stops where EXPR becomes true)",
                "1 | admit pool=kv when free(kv) < 3; once",
                "  |               ^^^^^^^^^^^^^^^^^",
                "  = note: after `admit` come pool=, stage=, class=, session= (or a bare name)"
                " and comparisons of its figures, units, hit, shared (`admit shared>0`)",
            ],
        ),
        (
            "enqueue  at 5",
            [
                "<breakpoint>:1:10: error: a moment breakpoint takes no time: a time breakpoint"
                " is `at T` on its own (the first event at or after T seconds)",
                "1 | enqueue  at 5",
                "  |          ^^^^",
                "  = note: after `enqueue` come pool=, stage=, class=, session= (or a bare name)"
                " and comparisons of its figures, units (`enqueue units>0`)",
            ],
        ),
    ],
)
def test_a_moment_with_a_condition_or_a_time_is_refused_where_it_goes_wrong(
    text: str, located: list[str]
) -> None:
    """The three kinds of breakpoint (language.md §12.2) are one each: a moment narrowed
    by its parties and figures, `if EXPR`, `at T`. A moment followed by `if` or `at` says
    so, located at that word with a caret under what follows, and what may follow a
    moment (it said "'if' is not a pool, stage or session class of this spec")."""
    for names in (NAMES, None):  # with the spec's names known or not
        with pytest.raises(BreakpointError) as refused:
            parse_breakpoint(text, names)
        assert refused.value.text.splitlines() == located
