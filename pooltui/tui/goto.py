"""What the go-to box (`g`) takes: an event index or a simulated time, in the words the
README's keys table gives (`parse_goto`), and what it says of what it refuses."""

from __future__ import annotations

import math
import re


class GotoError(ValueError):
    """What the go-to box says of what was typed (shown as it is)."""


_EVENT = re.compile(r"#?(-?[0-9]+(?:_[0-9]+)*)")  # 42, #42, 1_000 (underscores as in specs)


def parse_goto(text: str) -> tuple[str, float]:
    """What the go-to box takes (README, "Keys in the debugger"): a whole number is an
    event, `42` / `#42` / `1_000` -> ("event", 42); a number with `s`, `t=`, `time=`, `@`
    or `t`, or with a point or an exponent, is a time, `12.5s` / `t=12.5` / `@12.5` /
    `12.5` -> ("time", 12.5). Raises GotoError for a negative event, a time that is
    negative or no finite number (`inf`, `1e999`, `nan`) and an empty box, ValueError for
    anything else."""
    s = text.strip().lower().replace(" ", "")
    if not s:
        raise GotoError("type an event index (42) or a time (12.5s)")
    if not s.isascii():  # float() and int() take other scripts' digits: not meant here
        raise ValueError(text)
    event = _EVENT.fullmatch(s)
    if event is not None:
        index = int(event.group(1))
        if index < 0:
            raise GotoError(f"there is no event #{index}: events are numbered from 0")
        return "event", index
    for prefix in ("t=", "time=", "@", "t"):
        if s.startswith(prefix) and len(s) > len(prefix):
            return "time", _time(s[len(prefix) :].rstrip("s"))
    return "time", _time(s.removesuffix("s"))


def _time(typed: str) -> float:
    """The seconds `typed` says: a finite number >= 0, else a GotoError saying which it
    is not (float() takes `inf`, `nan` and `1e999`, none of them a moment of a run)."""
    value = float(typed)
    if math.isnan(value):
        raise GotoError(f"a time must be a finite number: {typed} is not a number")
    if value < 0:
        raise GotoError("a time must be >= 0")
    if math.isinf(value):
        why = "is infinite" if "inf" in typed else "is past the largest float (about 1.8e308)"
        raise GotoError(f"a time must be a finite number: {typed} {why}")
    return value
