"""Numbers and names in plain words: the one number formatter and the one "did you mean".

Every layer (error messages, the simulator's `why` texts, the debugger's panels, the command
line's summary) formats numbers and suggests names through this module, so a figure reads the
same wherever it is shown. It owns no state and imports nothing from the project.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable

Number = int | float


def number(x: Number | None, digits: int = 6, none: str = "-") -> str:
    """Integers without a point; other floats with up to `digits` significant digits;
    infinities as `inf` / `-inf`; `None` (no value) as `none`."""
    if x is None:
        return none
    if isinstance(x, float):
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
        if x.is_integer() and abs(x) < 1e15:
            return str(int(x))
        return f"{x:.{digits}g}"
    return str(x)


def seconds(t: float, digits: int = 6) -> str:
    """A simulated time or duration: `1.25s`."""
    return f"{number(t, digits)}s"


def count(n: int, word: str) -> str:
    """`1 pool`, `2 pools`, `19,366 sessions`."""
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def closest(word: str, choices: Iterable[str], n: int = 1, cutoff: float = 0.6) -> list[str]:
    """The names among `choices` nearest to `word` (best first), for "did you mean"."""
    return difflib.get_close_matches(word, sorted(set(choices)), n=n, cutoff=cutoff)
