"""Golden tests: each golden/NAME.pool must fail with exactly the text of golden/NAME.err.

The .err files are written by hand from the language documents (not captured from the
implementation): the full rendered diagnostics, one per rule of the checker.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pooltui.lang import SpecError
from pooltui.lang.frontend import compile_bytes

GOLDEN = Path(__file__).parent / "golden"
CASES = sorted(p.stem for p in GOLDEN.glob("*.pool"))


def test_enough_cases() -> None:
    assert len(CASES) >= 40


@pytest.mark.parametrize("name", CASES)
def test_golden(name: str) -> None:
    data = (GOLDEN / f"{name}.pool").read_bytes()
    expected = (GOLDEN / f"{name}.err").read_text(encoding="utf-8")
    with pytest.raises(SpecError) as info:
        compile_bytes(data, f"{name}.pool", str(GOLDEN))
    assert info.value.render() + "\n" == expected
