"""Class 5 (issue 14): the last-resort handler never fails itself; and the listed
reproducers, in process, and a few as the user runs them (a subprocess under a 2 GiB
address-space limit and a generous timeout)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import pooltui.cli.check
from pooltui.cli.main import main

from .helpers import assert_clean, assert_located, cli, sub


def _raise(exc: BaseException):  # type: ignore[no-untyped-def]
    def boom(*args: object, **kwargs: object) -> int:
        raise exc

    return boom


def test_out_of_memory_is_a_message_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(pooltui.cli.check, "run_check", _raise(MemoryError()))
    assert main(["check", "x.pool"]) == 1
    err = capfd.readouterr().err
    assert err.startswith("pooltui: out of memory: this spec needs more memory than there is")
    assert "Traceback" not in err and "During handling" not in err


class _Unprintable(Exception):
    def __str__(self) -> str:
        raise MemoryError


@pytest.mark.parametrize(
    ("exc", "code", "says"),
    [
        (RuntimeError("boom"), 3, "pooltui: internal error: RuntimeError: boom"),
        (RecursionError(), 3, "pooltui: internal error: RecursionError"),
        (_Unprintable(), 1, "pooltui: out of memory"),
        (KeyboardInterrupt(), 130, "pooltui: interrupted"),
    ],
)
def test_the_handler_survives_what_it_handles(
    exc: BaseException,
    code: int,
    says: str,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(pooltui.cli.check, "run_check", _raise(exc))
    assert main(["check", "x.pool"]) == code
    err = capfd.readouterr().err
    assert err.startswith(says), err
    assert "Traceback" not in err


# ---- the reproducers of the adversarial run, as subprocesses

BIG = "9" * 400


@pytest.mark.parametrize(
    "text",
    [
        f"pool kv {{ cap {BIG}; }}\nsession s {{ hold kv (1) {{ wait (1); }} }}\n",
        f"stage g step {{ budget {BIG}; }}\nsession s {{ wait (1); }}\n",
        f"pool kv {{ cap 64; block {BIG}; }}\nsession s {{ hold kv (1) {{ wait (1); }} }}\n",
        f"pool kv {{ cap 64; }}\nsession s {{ hold kv ({BIG}) {{ wait (1); }} }}\n",
        f"session s {{ x = {BIG}; wait (1); }}\n",
        "pool kv { cap 1e308; }\nsession s { hold kv (1) { wait (1); } }\n",
        "session s { repeat (inf) { wait (1); } }\n",
        "pool kv { cap 64; }\nsession s { hold kv (1) reserve (-1) { wait (1); } }\n",
        "pool kv { cap 64; }\nsession s { hold kv (1) reserve (inf - inf) { wait (1); } }\n",
    ],
    ids=[
        "cap",
        "budget",
        "block",
        "hold",
        "statement",
        "cap_1e308",
        "repeat_inf",
        "reserve_negative",
        "reserve_nan",
    ],
)
def test_reproducer_is_a_located_error(
    text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "r.pool"
    path.write_text(text)
    assert_located(cli(["check", str(path)], capsys), str(path))
    assert_located(cli(["run", str(path), "-q"], capsys), str(path))


def test_reproducer_170_constants(tmp_path: Path) -> None:
    path = tmp_path / "c.pool"
    lines = [f"const C{i} = C{i + 1};" for i in range(170)] + ["const C170 = 2;"]
    path.write_text("\n".join(lines) + "\nsession s { wait (C0); }\n")
    o = sub(["run", str(path), "-q"])
    assert_clean(o)
    assert o.code == 0 and "simulated 2s" in o.out, o.text()


# This one and the next run in this process: neither needs a limit or a stream of its own,
# and the other reproducers here run `run` as a subprocess.
def test_reproducer_wait_inf(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A session that sleeps forever: the run ends cleanly and the trace is strict JSON."""
    path = tmp_path / "w.pool"
    path.write_text("pool kv { cap 64; }\nsession s { hold kv (1) { wait (inf); } }\n")
    trace = tmp_path / "t.jsonl"
    o = cli(["run", str(path), "-q", "--trace", str(trace)], capsys)
    assert_clean(o)
    for line in trace.read_text().splitlines():
        json.loads(line, parse_constant=lambda word: pytest.fail(f"not strict JSON: {word}"))


def test_reproducer_trace_onto_the_spec(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.pool"
    text = "session s { wait (1); }\n"
    path.write_text(text)
    o = cli(["run", str(path), "--trace", str(path)], capsys)
    assert o.code == 1 and "cannot write" in o.err, o.text()
    assert path.read_text() == text


def test_reproducer_a_billion_sessions(tmp_path: Path) -> None:
    path = tmp_path / "b.pool"
    for arrive in ("", "arrive every (draw exponential(1));"):
        path.write_text(
            f"pool kv {{ cap 64; }}\nsession req[1000000000] {{ {arrive} "
            "hold kv (1) { wait (1); } }\n"
        )
        o = sub(["run", str(path), "-q", "--events", "1000"])
        assert_clean(o)
        assert o.code == 0 and "1,000 events" in o.out, o.text()


def test_reproducer_an_endless_repeat_at_one_instant(tmp_path: Path) -> None:
    path = tmp_path / "l.pool"
    path.write_text("session s { repeat (1e15) { x = 1; } }\n")
    o = sub(["run", str(path), "-q", "--events", "10"])
    assert_located(o, str(path))
    assert "1,000,000 statements in a row without an event" in o.err, o.text()
