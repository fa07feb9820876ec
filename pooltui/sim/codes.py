"""The engine's shared codes: heap priorities, admission outcomes, and the two exceptions
that stop an action.

A leaf module (it imports nothing from the simulator) so every engine module can name
these without an import cycle. It owns no state and no behaviour.
"""

from __future__ import annotations

from typing import Final

Number = int | float

# Heap priorities at one instant (decisions.md: time and order).
P_ITER_END: Final = 0
P_LINK: Final = 1
P_WAKE: Final = 2
P_ARRIVE: Final = 3

# The livelock guard: this many events at one instant with no session arriving or ending,
# or this many statements in a row without an event, is a runtime error (decisions.md).
MAX_STILL: Final = 1_000_000

# What one admission attempt did. DEFERRED: it waits for another hold's reload in flight
# of its blocks, and the holds behind it are tried (`admit.try_admit`).
ADMITTED, BLOCKED, REJECTED, DEFERRED = 1, 0, -1, 2


class StopReplay(Exception):
    """Raised when a replay reaches `stop_after` events (the state is then that event's)."""


class Halt(Exception):
    """Raised inside an action when the simulation must stop (violation, check, deadlock)."""
