"""Events: the simulator's public record. One event is one debugger step.

Every change of state is one `Event` with a time, an index (its place in the log, from 0),
a moment (language.md §7), its parties, and a plain-words `why`. The trace file is one JSON
object per event, written by `Event.to_json`; the same spec and seed give the same bytes.

Owns the event type, the moments and `Violation` (what a halt on a broken invariant
names); events are built by `Engine.emit`, their sentences by `why`.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from pooltui.lang.ir import Span

MOMENTS = (
    "arrive",
    "enqueue",
    "admit",
    "reject",
    "grow",
    "grow-wait",
    "preempt",
    "release",
    "evict",
    "spill",
    "spilled",
    "spill-drop",
    "reload",  # content-and-reload.md §3: a hold that reloads from its tiers is admitted
    "reloaded",  # its copy lands
    "iteration",
    "iteration-end",
    "run-done",
    "send",
    "wake",
    "end",
    "check-failed",
    "deadlock",
)

# Moments that halt the simulation.
HALTING = ("check-failed", "deadlock")


@dataclass(frozen=True, slots=True)
class Event:
    index: int
    time: float
    moment: str
    why: str
    session: str | None = None  # "chat[7]"
    session_id: int | None = None  # stable per session: colours, inspection
    session_class: str | None = None
    pool: str | None = None  # pool member label: "kv" or "kv[2]"
    stage: str | None = None  # stage member label
    others: tuple[str, ...] = ()  # other sessions involved (a victim, the waiting ones)
    units: int | None = None
    blocks: tuple[int, ...] = ()  # physical blocks of `pool` involved (for highlighting)
    span: Span | None = None  # the statement or declaration behind the event
    data: tuple[tuple[str, Any], ...] = ()  # the moment's own figures, in a fixed order

    def get(self, key: str, default: Any = None) -> Any:
        for k, v in self.data:
            if k == key:
                return v
        return default

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"i": self.index, "t": self.time, "moment": self.moment}
        for key in ("session", "pool", "stage", "units"):
            value = getattr(self, key)
            if value is not None:
                d[key] = value
        if self.others:
            d["others"] = list(self.others)
        if self.moment == "evict":
            # which blocks went, tail first (content-and-reload.md §2); other moments'
            # blocks only light the block map, and an admission's would swell the trace
            d["blocks"] = list(self.blocks)
        for k, v in self.data:
            d[k] = list(v) if isinstance(v, tuple) else v
        if self.span is not None:
            d["at"] = f"{self.span.line}:{self.span.col}"
        d["why"] = self.why
        return d

    def to_json(self) -> str:
        """The trace line: strict JSON (JSON has no inf or NaN, so a non-finite number is
        written as the string "inf", "-inf" or "nan")."""
        d = self.to_dict()
        try:
            return json.dumps(d, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        except ValueError:
            return json.dumps(
                _finite(d), separators=(",", ":"), ensure_ascii=False, allow_nan=False
            )

    def describe(self) -> str:
        """One line for logs: `12.500s #42 admit: why`."""
        return f"{self.time:.6g}s #{self.index} {self.moment}: {self.why}"


def _finite(x: Any) -> Any:
    """`x` with every non-finite float written as a string."""
    if isinstance(x, float) and not math.isfinite(x):
        return "nan" if x != x else ("inf" if x > 0 else "-inf")
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_finite(v) for v in x]
    return x


@dataclass(frozen=True, slots=True)
class Violation:
    """An invariant of language.md §8 that broke, with the pool and blocks involved."""

    invariant: str
    message: str
    pool: str | None = None
    blocks: tuple[int, ...] = ()
