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
    `12.5` -> ("time", 12.5). Raises GotoError for a negative event or time and for an
    empty box, ValueError for anything else."""
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
            value = float(s[len(prefix) :].rstrip("s"))
            return "time", _check_time(value)
    if s.endswith("s"):
        return "time", _check_time(float(s[:-1]))
    return "time", _check_time(float(s))


def _check_time(value: float) -> float:
    if math.isnan(value) or value < 0:
        raise GotoError("a time must be >= 0")
    return value
