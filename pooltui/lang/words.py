"""Numbers and names in plain words: the one number formatter and the one "did you mean".

Every layer (error messages, the simulator's `why` texts, the debugger's panels, the command
line's summary) formats numbers and suggests names through this module, so a figure reads the
same wherever it is shown. It owns no state and imports nothing from the project.
"""

from __future__ import annotations

import bisect
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


def value_text(value: object, items: int = 4) -> str:
    """A value as a panel shows it: a number (4 digits), a string quoted, a list (a trace's
    column) in brackets, its first `items` elements then an ellipsis."""
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, tuple | list):
        inner = ", ".join(value_text(x, items) for x in value[:items])
        return f"[{inner}{', …' if len(value) > items else ''}]"
    return number(value if isinstance(value, int | float) else None, 4)


def seconds(t: float, digits: int = 6) -> str:
    """A simulated time or duration: `1.25s`."""
    return f"{number(t, digits)}s"


def count(n: int, word: str, plural: str | None = None) -> str:
    """`1 pool`, `2 pools`, `19,366 sessions` (`plural` where adding `s` is wrong)."""
    return f"{n:,} {word if n == 1 else (plural or word + 's')}"


def closest(
    word: str, choices: Iterable[str] | Vocabulary, n: int = 1, cutoff: float = 0.6
) -> list[str]:
    """The names among `choices` nearest to `word` (best first), for "did you mean"."""
    vocab = choices if isinstance(choices, Vocabulary) else Vocabulary(choices)
    return vocab.closest(word, n, cutoff)


def nearest(word: str, choices: Iterable[str] | Vocabulary) -> str | None:
    """The one name to suggest for `word` ("did you mean '…'?"), or None."""
    m = closest(word, choices)
    return m[0] if m else None


class Vocabulary:
    """A fixed set of names to suggest from, sorted once.

    Comparing a word with every name costs O(names); a spec with thousands of names and
    thousands of misspellings would make that quadratic. Past `WINDOW` names, a word is
    compared only with the WINDOW names on each side of where it sorts (a typo that keeps
    its first letters still finds its name), so each suggestion costs O(log names)."""

    WINDOW = 64

    __slots__ = ("names",)

    def __init__(self, names: Iterable[str]) -> None:
        self.names = sorted(set(names))

    def __len__(self) -> int:
        return len(self.names)

    def closest(self, word: str, n: int = 1, cutoff: float = 0.6) -> list[str]:
        names = self.names
        if len(names) > 2 * self.WINDOW:
            i = bisect.bisect_left(names, word)
            names = names[max(0, i - self.WINDOW) : i + self.WINDOW]
        return difflib.get_close_matches(word, names, n=n, cutoff=cutoff)
