"""What crosses between the UI thread and the debugger's worker thread, all frozen:
`Command`s down (what to do; the breakpoints a run begins with are a copy the worker
alone then touches), `Change`s down while a command runs (the breakpoints and watches as
the user has them now, `Controller.follow`), `Frame`s up (what to show)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pooltui.lang.words import number
from pooltui.sim.events import Event
from pooltui.sim.snapshot import Snapshot
from pooltui.tui.breakpoints import Breakpoint, BreakpointSet

Number = int | float


@dataclass(frozen=True)
class Command:
    kind: str  # step | iteration | back | continue | reverse | goto | goto_time | run | refresh | watches | look
    seq: int = 0
    gen: int = 0
    index: int = 0  # goto
    time: float = 0.0  # goto_time
    rate: float = 10.0  # run: events per second
    breakpoints: BreakpointSet | None = None  # continue / reverse / run: a private copy
    watches: tuple[tuple[str, Any], ...] = ()  # watches: (text, compiled expr)
    what: str = ""  # find: what is looked for, in words ("preempt of chat[3]")


LONG = ("continue", "reverse", "goto", "goto_time", "run", "find")
FOLLOWS = ("continue", "reverse", "run")  # the runs that follow the user's breakpoints


@dataclass(frozen=True)
class Change:
    """What the user changed while a command runs, posted by the UI thread
    (`Controller.follow`) and taken by the run between two steps: the breakpoints as they
    are now, for the run `seq` (a change for a run already over is dropped), and/or the
    watches (a list older than the one the controller has is dropped)."""

    seq: int
    breakpoints: tuple[Breakpoint, ...] | None = None
    watches: tuple[tuple[str, Any], ...] | None = None


@dataclass(frozen=True)
class Refused:
    """A kept watch the spec no longer compiles (a reload renamed what it reads), sent in
    place of its expression: the worker shows `error` where a watch's runtime error goes."""

    error: Exception


@dataclass(frozen=True)
class WatchValue:
    text: str
    value: Number | None
    error: str | None = None  # `LINE:COL: MESSAGE` (`breakpoints.expression_error`)
    changed: bool = False
    caret: tuple[int, int] | None = None  # the error's columns in `text`, from 1, end excluded

    def shown(self) -> str:
        if self.error is not None:
            return f"error: {self.error}"
        return number(self.value, 6, none="?")


@dataclass(frozen=True)
class Frame:
    """What the UI shows after (or during) a command. Immutable: crosses threads."""

    seq: int
    final: bool  # the command is done (a run posts non-final frames while it goes)
    snapshot: Snapshot
    events_from: int  # the first event the UI has not been sent before
    events: Sequence[Event]  # the whole log so far, an immutable view (no copies)
    watches: tuple[WatchValue, ...]
    running: bool
    stop: str | None = None  # what stopped it, in words
    stop_kind: str | None = (
        None  # breakpoint | violation | halt | error | end | pause | goal | start
    )
    breakpoints: BreakpointSet | None = None  # the run's copy, with hit counts
    # A runtime error of the spec, located, as `check` renders it; or, at a breakpoint,
    # its condition's, a caret under the culprit (`Hit.located`).
    error_text: str | None = None
    samples: tuple[tuple[float, float], ...] = ()  # (time, sample_expr's value) since the last
    look: bool = False  # the state shown again, with other sessions' views (`look`)
    ended: bool = False  # a search ran it to its end, then went back (the snapshot says not)

    def shows_other_watches(self, texts: list[str]) -> bool:
        """A command's frame showing other watches than `texts`: a run that ended before it
        took the watches changed while it ran (`PoolApp.watches_changed`)."""
        return not self.look and [w.text for w in self.watches] != texts

    @property
    def new_events(self) -> tuple[Event, ...]:
        """The events the UI has not been sent before (built now: for tests and tools)."""
        return tuple(self.events[self.events_from :])
