"""Class 1 and 6 (issue 14): hostile numbers in every place a number enters a spec.

One spec with a slot for each number (options, counts, constants, statement amounts, a
condition), mutated one slot at a time with each hostile value: written directly (the
checker knows it), and, for the statement amounts, through a session attribute (the run
meets it). Whatever the value, `check` and `run` end with exit 0 or a located error.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .helpers import assert_clean, assert_located, cli

BASE = """\
seed {seed};
const K = {const};
stage gpu step {{ budget {budget}; seats {seats}; time 0.01; }}
stage pcie link {{ rate {rate}; lanes {lanes}; }}
pool kv[{members}] {{ cap {cap}; block {block}; admit via gpu; }}
session req[{sessions}] {{
  arrive at ({arrive});
  v = {attr};
  hold kv[0] ({units}) need ({need}) reserve ({reserve}) {{
    run gpu prefill ({prefill});
    grow kv ({grow});
    run gpu decode ({decode});
  }}
  send pcie ({work});
  wait ({wait});
  repeat ({repeat}) {{ wait (1); }}
  if ({cond}) {{ wait (0); }}
}}
"""
DEFAULTS = dict(
    seed="1", const="2", budget="64", seats="4", rate="100", lanes="1", members="1",
    cap="256", block="16", sessions="2", arrive="0", attr="1", units="16", need="16",
    reserve="256", prefill="16", grow="1", decode="2", work="10", wait="1", repeat="2",
    cond="1",
)  # fmt: skip
# Slots whose value the run evaluates (a statement's expression).
RUNTIME = ("arrive", "units", "need", "reserve", "prefill", "grow", "decode", "work", "wait",
           "repeat", "cond")  # fmt: skip

VALUES = {
    "too_long": "9" * 401,
    "too_large": "9" * 30,
    "two53_plus_1": "9007199254740993",
    "two53": "9007199254740992",
    "e308": "1e308",
    "e400": "1e400",
    "inf": "inf",
    "minus_inf": "-inf",
    "minus_one": "-1",
    "zero": "0",
    "half": "0.5",
    "tiny": "1e-400",
    "inf_minus_inf": "(inf - inf)",
    "zero_times_inf": "(0 * inf)",
    "inf_over_inf": "(inf / inf)",
    "inf_mod": "(inf % 2)",
    "div_zero": "(1 / 0)",
    "floor_inf": "floor(inf)",
    "round_inf": "round(inf)",
    "ceil_minus_inf": "ceil(-inf)",
    "square_big": "(9007199254740992 * 9007199254740992 * 9007199254740992)",
}
# A value that passes the checker but is a legitimately enormous workload: not run. (2^53
# sessions are run: arrivals are produced when due, so the run starts at once.)
HUGE_WORK = {("repeat", "two53"), ("members", "two53")}


def spec(**slots: str) -> str:
    return BASE.format(**{**DEFAULTS, **slots})


def test_the_base_spec_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "base.pool"
    path.write_text(spec())
    o = cli(["run", str(path), "--quiet"], capsys)
    assert o.code == 0, o.text()
    assert "sessions: 2 arrived, 2 done" in o.out


def _check_then_run(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    checked = cli(["check", str(path)], capsys)
    assert_clean(checked)
    if checked.code == 1:
        assert_located(checked, str(path))
        return  # `run` compiles the same way (tests/lang); running it would add nothing
    ran = cli(["run", str(path), "--quiet", "--events", "3000"], capsys)
    assert_clean(ran)
    if ran.code == 1 and "stopped:" not in ran.err:
        assert_located(ran, str(path))


@pytest.mark.parametrize("slot", sorted(DEFAULTS))
def test_hostile_number_written_in_place(
    slot: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, value in VALUES.items():
        path = tmp_path / f"{slot}_{name}.pool"
        path.write_text(spec(**{slot: value}))
        if (slot, name) in HUGE_WORK:
            assert_clean(cli(["check", str(path)], capsys))
            continue
        _check_then_run(path, capsys)


def _runtime_cases() -> list[object]:
    out: list[object] = []
    for slot in RUNTIME:
        for name in VALUES:
            out.append(pytest.param(slot, name, id=f"{slot}-{name}"))
    return out


@pytest.mark.parametrize(("slot", "name"), _runtime_cases())
def test_hostile_number_through_an_attribute(
    slot: str, name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "spec.pool"
    attr = "v" if slot != "arrive" else "K"  # an arrival cannot read attributes
    text = spec(**{slot: attr, "attr": VALUES[name]})
    if slot == "arrive":
        text = text.replace("const K = 2;", f"const K = {VALUES[name]};")
    path.write_text(text)
    _check_then_run(path, capsys)


@pytest.mark.parametrize("value", ["floor(inf)", "round(inf)", "ceil(inf)"])
def test_rounding_keeps_inf(value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`floor(inf)` is inf (no OverflowError), in a constant and in a statement."""
    path = tmp_path / "r.pool"
    path.write_text(f"const A = {value};\nsession s {{ x = {value}; y = A; wait (1); }}\n")
    o = cli(["run", str(path), "--quiet"], capsys)
    assert o.code == 0, o.text()


DRAWS = ["uniform(0, inf)", "uniform(0, 1e300)", "uniform(-inf, inf)", "real(-inf, inf)",
         "real(0, inf)", "exponential(inf)", "exponential(-1)", "normal(0, inf)",
         "normal(inf, 1)", "lognormal(1000, 1000)", "lognormal(0, inf)", "poisson(inf)",
         "poisson(1e300)", "poisson(-1)", "bernoulli(inf)", "bernoulli(-1)",
         "choice(inf, -inf)"]  # fmt: skip


@pytest.mark.parametrize("draw", DRAWS)
def test_hostile_draws(draw: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A draw with hostile parameters gives a number or a located runtime error; what it
    gives, used as units, is checked like any other value."""
    path = tmp_path / "d.pool"
    path.write_text(
        f"pool kv {{ cap 64; }}\nsession s {{ x = draw {draw}; wait (1); hold kv (x) {{ }} }}\n"
    )
    _check_then_run(path, capsys)


@pytest.mark.parametrize(
    ("draw", "says"),
    [
        ("uniform(0, inf)", "draw uniform: bound inf is not finite"),
        ("uniform(-inf, 0)", "draw uniform: bound -inf is not finite"),
        ("uniform(inf, inf)", "draw uniform: bound inf is not finite"),
        ("poisson(inf)", "draw poisson: lambda inf is not finite"),
    ],
)
def test_a_draw_that_cannot_be_made_says_why_in_its_words(
    draw: str, says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No draw's error is Python's (`cannot convert float infinity to integer`): an
    integer drawn between infinite bounds, a Poisson count of infinite mean, each a located
    runtime error naming the argument."""
    path = tmp_path / "d.pool"
    path.write_text(f"session s {{ x = 0; y = draw {draw}; wait (1); }}\n")
    o = cli(["run", str(path), "-q"], capsys)
    assert_located(o, str(path))
    assert f"{path}:1:24: error: {says}\n" in o.err, o.text()


def test_a_lognormal_past_the_largest_float_is_inf(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """e to a power past 709 is inf, as `1e308 * 10` is (not Python's `math range
    error`)."""
    path = tmp_path / "d.pool"
    path.write_text("session s { y = draw lognormal(1000, 1); wait (y == inf); }\n")
    o = cli(["run", str(path), "-q"], capsys)
    assert_clean(o)
    assert o.code == 0 and "simulated 1s" in o.out, o.text()
