"""Breakpoints: what they are and when they hit (how they are written is
breakpoint_text.py's). No Textual here.

Three kinds:
- moment: an event whose moment is NAME (language.md §7), optionally narrowed to a pool,
  a stage, a session class or one session: `admit pool=kv class=chat`; and by comparisons
  of the event's own figures (its `units`, its moment's numeric data, language.md §13):
  `admit shared>0` stops on an admission that hit blocks other holds still hold.
- condition: `if EXPR`, an expression of the spec language. It hits when the expression
  *becomes* true (false before the event, true after), like a watchpoint, so `continue` from
  a state where it already holds goes on to the next time it turns true.
- time: `at T` hits at the first event at or after simulated time T.

Options follow a `;`: `once` (one-shot: disabled after it stops), `ignore N` (its first N
hits do not stop), `off` (added disabled). Example: `if free(kv) < 64; once, ignore 2`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from pooltui.lang.errors import excerpt
from pooltui.lang.words import number
from pooltui.sim.events import Event

Evaluate = Callable[[Any], float]  # sim.evaluate: compiled Expr -> number


class BreakpointError(ValueError):
    """A breakpoint that cannot be understood; `text` is what to show (may be multi-line,
    e.g. the located errors of a condition)."""

    def __init__(self, text: str):
        super().__init__(text)
        self.text = text


@dataclass
class Breakpoint:
    id: int
    kind: Literal["moment", "condition", "time"]
    moment: str | None = None
    pool: str | None = None
    stage: str | None = None
    session_class: str | None = None
    session: str | None = None
    figures: tuple[tuple[str, str, float], ...] = ()  # (figure, operator, number): all hold
    condition: str | None = None  # the text, as written
    expr: Any = None  # compiled condition (pooltui.lang.ir.Expr)
    time: float | None = None
    enabled: bool = True
    one_shot: bool = False
    ignore: int = 0  # the first `ignore` hits do not stop
    hits: int = 0  # every match counts, stopping or not

    def describe(self) -> str:
        if self.kind == "moment":
            parts = [self.moment or "?"]
            for key, value in (
                ("pool", self.pool),
                ("stage", self.stage),
                ("class", self.session_class),
                ("session", self.session),
            ):
                if value is not None:
                    parts.append(f"{key}={value}")
            parts += [f"{key}{op}{number(value)}" for key, op, value in self.figures]
            text = " ".join(parts)
        elif self.kind == "condition":
            text = f"if {self.condition}"
        else:
            text = f"at {number(self.time)}"
        return text

    def options(self) -> str:
        opts = []
        if not self.enabled:
            opts.append("off")
        if self.one_shot:
            opts.append("once")
        if self.ignore:
            opts.append(f"ignore {self.ignore}")
        return ", ".join(opts)


@dataclass(frozen=True)
class Hit:
    """A breakpoint that stops the run (error: evaluating its condition failed; located:
    the condition with a caret under the culprit, `expression_located`)."""

    breakpoint: Breakpoint
    error: str | None = None
    located: str | None = None

    @classmethod
    def failed(cls, bp: Breakpoint, exc: BaseException) -> Hit:
        """`bp`'s condition could not be evaluated: `exc` says why, and where in it."""
        return cls(bp, expression_error(exc), expression_located(bp.condition or "", exc))

    def describe(self) -> str:
        bp = self.breakpoint
        if self.error is not None:
            return f"breakpoint #{bp.id} ({bp.describe()}): error: {self.error}"
        return f"breakpoint #{bp.id}: {bp.describe()}"


def expression_error(exc: BaseException) -> str:
    """A runtime error of a breakpoint's condition or a watch, as the line that shows it
    says it: `LINE:COL: MESSAGE`, a place in the expression's own text (the breakpoint or
    the watch it belongs to names it, in place of a file); an error with no place, its
    words."""
    span, message = getattr(exc, "span", None), getattr(exc, "message", None)
    if span is not None and isinstance(message, str):
        return f"{span.line}:{span.col}: {message}"
    return str(exc)


def expression_located(text: str, exc: BaseException) -> str | None:
    """The expression `text` with a caret under the culprit of its runtime error `exc`,
    as a located error shows its source line (`1 | TEXT`, `  |   ^`); None when the error
    has no place in it."""
    span = getattr(exc, "span", None)
    if span is None or not (span.line == span.end_line == 1) or "\n" in text:
        return None
    return "\n".join(excerpt(text, 1, span.col, span.end_col))


# --------------------------------------------------------------------------- matching


def _member_matches(wanted: str, label: str | None) -> bool:
    """`kv` matches the pool `kv` and every member `kv[i]` of a family; `kv[2]` only itself."""
    if label is None:
        return False
    if wanted == label:
        return True
    return "[" not in wanted and label.startswith(wanted + "[")


def moment_matches(bp: Breakpoint, event: Event) -> bool:
    if bp.moment is not None and bp.moment != event.moment:
        return False
    if bp.pool is not None and not _member_matches(bp.pool, event.pool):
        return False
    if bp.stage is not None and not _member_matches(bp.stage, event.stage):
        return False
    if bp.session_class is not None and event.session_class != bp.session_class:
        return False
    if bp.session is not None and event.session != bp.session and bp.session not in event.others:
        return False
    return all(_compare(_figure(event, key), op, value) for key, op, value in bp.figures)


# The numeric figures of each moment a breakpoint can compare (language.md §13's table);
# every moment has `units` too. Others (names, lists) are not numbers to compare.
FIGURES = {
    "arrive": ("serial",),
    "admit": ("hit", "shared"),
    "grow": ("added_blocks",),
    "preempt": ("cached",),
    "release": ("cached",),
    "evict": ("left",),
    "spill": ("work", "have"),
    "reload": ("hit", "work", "ahead"),
    "reloaded": ("took",),
    "iteration": ("iteration", "tokens", "budget_used", "budget_left", "duration"),
    "iteration-end": ("iteration", "tokens"),
    "send": ("work",),
}
OPERATORS = {
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    "=": lambda a, b: a == b,
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
}


def _figure(event: Event, key: str) -> Any:
    return event.units if key == "units" else event.get(key)


def _compare(value: Any, op: str, number: float) -> bool:
    """A figure the event lacks, or that is no number, never matches."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return bool(OPERATORS[op](value, number))


def time_matches(bp: Breakpoint, prev_time: float, event: Event) -> bool:
    assert bp.time is not None
    return prev_time < bp.time <= event.time or (prev_time == event.time == bp.time == 0)


def event_matches(bp: Breakpoint, prev_time: float, event: Event) -> bool:
    """A moment or time breakpoint against one event (the same forwards and backwards)."""
    if bp.kind == "moment":
        return moment_matches(bp, event)
    return time_matches(bp, prev_time, event)


def truthy(value: float) -> bool:
    return bool(value) and not (isinstance(value, float) and math.isnan(value))


@dataclass
class BreakpointSet:
    """The breakpoints of one debugging session, in the order they were added.

    The worker that runs the simulation works on a `copy()` and hands it back with the hit
    counts, so the UI thread and the worker never share one; a change while it runs reaches
    it as `frozen()` copies, which it `follow`s."""

    items: list[Breakpoint] = field(default_factory=list)
    next_id: int = 1
    # condition breakpoints: their value at the current state (for "becomes true")
    _last: dict[int, bool] = field(default_factory=dict)

    def add(self, bp: Breakpoint) -> Breakpoint:
        bp.id = self.next_id
        self.next_id += 1
        self.items.append(bp)
        return bp

    def remove(self, bp_id: int) -> None:
        self.items = [b for b in self.items if b.id != bp_id]
        self._last.pop(bp_id, None)

    def get(self, bp_id: int) -> Breakpoint | None:
        return next((b for b in self.items if b.id == bp_id), None)

    def copy(self) -> BreakpointSet:
        return BreakpointSet([replace(b) for b in self.items], self.next_id, {})

    def frozen(self) -> tuple[Breakpoint, ...]:
        """The breakpoints as they are now, for a run in another thread (`follow`): copies
        that no one changes (the run copies them again to count its hits)."""
        return tuple(replace(b) for b in self.items)

    def follow(self, now: Sequence[Breakpoint], evaluate: Evaluate | None) -> Hit | None:
        """A run's set takes the breakpoints as the user has them `now` (added, deleted,
        enabled, disabled, options changed while it runs), each keeping the hits this run
        counted. A condition active now and not before is evaluated at the current state
        (with `evaluate`), so it stops where it *becomes* true from here; an error doing so
        is said as `prime` says it."""
        counted = {b.id: b.hits for b in self.items}
        was_active = {b.id for b in self.active()}
        self.items = [replace(b, hits=counted.get(b.id, b.hits)) for b in now]
        active = self.active()
        self._last = {b.id: self._last[b.id] for b in active if b.id in self._last}
        if evaluate is None:
            return None
        return self._prime(evaluate, [b for b in active if b.id not in was_active])

    def take_hits(self, ran: BreakpointSet) -> None:
        """A run's copy handed back: its hit counts, and the one-shots it disabled."""
        for bp in ran:
            mine = self.get(bp.id)
            if mine is not None:
                mine.hits = bp.hits
                if mine.one_shot and not bp.enabled:
                    mine.enabled = False

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Any:
        return iter(self.items)

    def active(self) -> list[Breakpoint]:
        return [b for b in self.items if b.enabled]

    def prime(self, evaluate: Evaluate) -> Hit | None:
        """Evaluate the condition breakpoints at the current state (before a run); the
        first that cannot be evaluated stops it (`Hit.failed`)."""
        return self._prime(evaluate, self.active())

    def _prime(self, evaluate: Evaluate, breakpoints: Iterable[Breakpoint]) -> Hit | None:
        for bp in breakpoints:
            if bp.kind == "condition":
                try:
                    self._last[bp.id] = truthy(evaluate(bp.expr))
                except Exception as exc:  # a spec runtime error: stop, with its message
                    return Hit.failed(bp, exc)
        return None

    def check(self, event: Event, prev_time: float, evaluate: Evaluate) -> Hit | None:
        """After `event` was applied (the time before it was `prev_time`): the breakpoint
        that stops here, if any. Counts hits, honours ignore counts and one-shots."""
        matched: list[Breakpoint] = []
        for bp in self.active():
            if bp.kind != "condition":
                if event_matches(bp, prev_time, event):
                    matched.append(bp)
            else:
                try:
                    value = truthy(evaluate(bp.expr))
                except Exception as exc:
                    return Hit.failed(bp, exc)
                before = self._last.get(bp.id, False)
                self._last[bp.id] = value
                if value and not before:
                    matched.append(bp)
        return self._count(matched)

    def check_reverse(
        self,
        event: Event,
        prev_time: float,
        value_before: dict[int, bool],
        value_after: dict[int, bool],
    ) -> Hit | None:
        """Going backwards: would `event` (taking the state from `value_before` to
        `value_after`) have stopped a forward run? Used by reverse continue."""
        matched: list[Breakpoint] = []
        for bp in self.active():
            if bp.kind != "condition":
                if event_matches(bp, prev_time, event):
                    matched.append(bp)
            elif value_after.get(bp.id, False) and not value_before.get(bp.id, False):
                matched.append(bp)
        return self._count(matched)

    def conditions(self, evaluate: Evaluate) -> dict[int, bool]:
        """Every active condition's truth at the current state (errors count as false)."""
        out: dict[int, bool] = {}
        for bp in self.active():
            if bp.kind == "condition":
                try:
                    out[bp.id] = truthy(evaluate(bp.expr))
                except Exception:
                    out[bp.id] = False
        return out

    def has_conditions(self) -> bool:
        return any(b.kind == "condition" for b in self.active())

    def _count(self, matched: Sequence[Breakpoint]) -> Hit | None:
        stop: Breakpoint | None = None
        for bp in matched:
            bp.hits += 1
            if bp.hits <= bp.ignore:
                continue
            if stop is None:
                stop = bp
        if stop is not None and stop.one_shot:
            stop.enabled = False
        return Hit(stop) if stop is not None else None
