"""Hypothesis profiles for the whole suite.

`default`: every property test draws the same examples at every run (derandomized), so a
red run is a change's doing, never a new draw: the suite decides whether a change lands.
`explore`: new random examples at every run, to search for defects by hand
(`pytest --hypothesis-profile=explore tests/sim`, as often as wanted); a case it finds goes
into the suite as a named test (tests/sim/test_fast.py's `LOCKSTEP` was found so).
A test's own `@settings` still set its example count and deadline.
"""

from __future__ import annotations

from hypothesis import settings

settings.register_profile("default", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile("default")
