"""The timeline: a pool's utilisation over simulated time, with marks where it preempted,
rejected or halted (Line API, two rows). Clicking a column with a mark goes to the first
event of the kind it shows (the column's first rejection under a ✗ that hides a ▲ too);
clicking any other column goes to the column's middle time.

It stays cheap for a run of a million events: time is cut into `BUCKETS` buckets over a
range that doubles (two buckets merge into one) when the simulation outgrows it; each frame
adds its snapshot's utilisation to one bucket and its new events' marks to theirs (read from
the packed log: only the marked events are built), and drawing reads `BUCKETS` numbers.
A bucket keeps the index of its first event of each mark, for a click to go to.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.message import Message
from textual.strip import Strip

from pooltui.lang.words import number, seconds
from pooltui.sim.events import Event
from pooltui.sim.snapshot import Snapshot
from pooltui.tui.colors import Palette
from pooltui.tui.messages import report_failure
from pooltui.tui.widgets.lines import StylePerRepaint

BUCKETS = 512
BARS = " ▁▂▃▄▅▆▇█"
GUTTER = 12
# What a mark means, by moment; the first in this order wins a column.
MARKS = (("halt", "■"), ("reject", "✗"), ("preempt", "▲"))
MARK_OF = {"preempt": "preempt", "reject": "reject", "check-failed": "halt", "deadlock": "halt"}
NONE = -1  # no event of that mark in the bucket


class Timeline(StylePerRepaint):
    """Utilisation of the first pool with a finite cap, over simulated time, and marks."""

    DEFAULT_CSS = """
    Timeline { height: 2; background: $panel; }
    """

    class Clicked(Message):
        """A column was clicked: go to the event `index` (the mark it shows), else (None:
        no mark) to the simulated time `time`."""

        def __init__(self, time: float, index: int | None = None) -> None:
            super().__init__()
            self.time = time
            self.index = index

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.palette = Palette()
        self.reset()

    def reset(self) -> None:
        self.span = 1.0  # the simulated seconds the buckets cover; doubles as needed
        self.level: list[float] = [math.nan] * BUCKETS  # utilisation 0..1, NaN: no sample
        self.marks: list[int] = [0] * BUCKETS  # bit i: MARKS[i] happened in the bucket
        # first[i][b]: the index of the first event of MARKS[i] in bucket b (or NONE)
        self.first: list[list[int]] = [[NONE] * BUCKETS for _ in MARKS]
        self.now = 0.0
        self.latest = 0.0  # the latest simulated time seen
        self.pool: str | None = None
        self.current = math.nan
        self._failed = False
        self.refresh()

    # ----------------------------------------------------------------- data
    def _bucket(self, t: float) -> int:
        while t >= self.span and math.isfinite(t):
            self._double()
        return max(0, min(BUCKETS - 1, int(t / self.span * BUCKETS)))

    def _double(self) -> None:
        half = BUCKETS // 2
        level, marks = self.level, self.marks
        new_level = [math.nan] * BUCKETS
        new_marks = [0] * BUCKETS
        for i in range(half):
            a, b = level[2 * i], level[2 * i + 1]
            new_level[i] = a if math.isnan(b) else (b if math.isnan(a) else max(a, b))
            new_marks[i] = marks[2 * i] | marks[2 * i + 1]
        self.level, self.marks = new_level, new_marks
        self.first = [
            [_earliest(firsts[2 * i], firsts[2 * i + 1]) for i in range(half)] + [NONE] * half
            for firsts in self.first
        ]
        self.span *= 2

    def add(
        self,
        snap: Snapshot,
        events: Sequence[Event],
        samples: Iterable[tuple[float, float]] = (),
        start: int = 0,
    ) -> None:
        """A frame: its snapshot's utilisation, the marks of the events from `start` on
        (those new to the screen), and the samples the worker took between two frames
        (allocated units of `pool` at a time)."""
        find = getattr(events, "find_moments", None)
        if find is not None:  # the simulator's log: only the marked events are read
            time_at = events.time_at  # type: ignore[attr-defined]
            for i in find(start, MARK_OF):
                self._mark(time_at(i), MARK_OF[events.moment_at(i)], i)  # type: ignore[attr-defined]
            if len(events) > start:
                self._mark(time_at(len(events) - 1), None)  # times never decrease
        else:
            for i in range(start, len(events)):
                ev = events[i]
                self._mark(ev.time, MARK_OF.get(ev.moment), ev.index)
        if snap.halted and math.isfinite(snap.time):
            self._mark(snap.time, "halt", snap.event_index)
        finite = [p for p in snap.pools if math.isfinite(p.cap) and p.cap > 0]
        pool = next((p for p in finite if p.label == self.pool), finite[0] if finite else None)
        if pool is not None:
            # A bucket shows the highest utilisation sampled in it. The samples are taken
            # by the worker on simulated time, and max does not depend on their order, so
            # the strip is the same however the frames that carried them were spaced.
            for t, units in samples:
                if math.isfinite(t):
                    self.latest = max(self.latest, t)
                    b = self._bucket(t)
                    old = self.level[b]
                    value = units / pool.cap
                    self.level[b] = value if math.isnan(old) else max(old, value)
        if pool is not None and math.isfinite(snap.time):
            self.pool = pool.label
            self.current = pool.allocated / pool.cap
        if math.isfinite(snap.time):
            self.now = snap.time
            self.latest = max(self.latest, snap.time)
            self._bucket(self.latest)
        self.refresh()

    def _mark(self, t: float, kind: str | None, index: int = NONE) -> None:
        if math.isfinite(t):
            self.latest = max(self.latest, t)
            if kind is not None:
                # The bucket first: finding it may double the range, which makes a new
                # list of marks (`self.marks[self._bucket(t)] |= …` would mark the old).
                b = self._bucket(t)
                bit = _mark_bit(kind)
                self.marks[b] |= 1 << bit
                if index >= 0:
                    firsts = self.first[bit]
                    firsts[b] = _earliest(firsts[b], index)

    # ----------------------------------------------------------------- drawing
    def columns(self) -> int:
        return max(1, self.size.width - GUTTER)

    def _column_spans(self, cols: int) -> list[tuple[int, int]]:
        """Each column's buckets [start, end), worked out once per line drawn."""
        shown = self._shown_buckets()
        spans = []
        for col in range(cols):
            start = col * shown // cols
            end = max(start + 1, (col + 1) * shown // cols)
            spans.append((start, min(end, BUCKETS)))
        return spans

    def _shown_buckets(self) -> int:
        """Buckets up to the latest time seen (the rest of the range is the future)."""
        return max(1, min(BUCKETS, int(self.latest / self.span * BUCKETS) + 1))

    def render_line(self, y: int) -> Strip:
        try:
            return self._line(y)
        except Exception as exc:  # never a traceback from a repaint: blank, and said once
            if not self._failed:
                self._failed = True
                report_failure(self, "Timeline.render_line", exc)
            return Strip.blank(self.size.width, Style(bgcolor=self.palette.background))

    def _line(self, y: int) -> Strip:
        pal = self.palette
        width = self.size.width
        base = self.line_style
        cols = self.columns()
        spans = self._column_spans(cols)
        now_col = _column_of(self._bucket_of(self.now), spans)
        # Cells of one style are one segment: a cell each made the compositor split and
        # style 300 segments a frame.
        cells: list[tuple[str, Style]] = []
        if y == 0:
            label = f"{self.pool or 'pool'} {number(self.current * 100, 3) if not math.isnan(self.current) else '-'}%"
            cells.append((label[: GUTTER - 1].ljust(GUTTER), base + Style(bold=True)))
            bar = base + Style(color=pal.allocated)
            last = math.nan
            level = self.level
            # A column with no sample of its own holds the last one, after the cursor as
            # before it: what is drawn is the history so far, wherever the cursor stands.
            for col, (start, end) in enumerate(spans):
                seen = [v for v in level[start:end] if v == v]  # NaN (no sample) is not
                if seen:
                    last = max(seen)
                glyph = (
                    " "
                    if math.isnan(last)
                    else BARS[min(8, max(1 if last > 0 else 0, round(last * 8)))]
                )
                cells.append((glyph, bar + Style(reverse=True) if col == now_col else bar))
        else:
            label = f"0–{seconds(self.span * self._shown_buckets() / BUCKETS, 3)}"
            dim = base + Style(dim=True)
            cells.append((label[: GUTTER - 1].ljust(GUTTER), dim))
            colours = {"halt": pal.error, "reject": pal.error, "preempt": pal.warn}
            shown_marks = [  # in MARKS' order: the first that happened in a column shows
                (1 << _mark_bit(kind), mark, base + Style(color=colours[kind], bold=True))
                for kind, mark in MARKS
            ]
            marks = self.marks
            for col, (start, end) in enumerate(spans):
                bits = 0
                for b in marks[start:end]:
                    bits |= b
                glyph, style = "─", dim
                for bit, mark, mark_style in shown_marks:
                    if bits & bit:
                        glyph, style = mark, mark_style
                        break
                if col == now_col:
                    glyph, style = ("●" if glyph == "─" else glyph), style + Style(reverse=True)
                cells.append((glyph, style))
        segments: list[Segment] = []
        run: list[str] = []
        run_style: Style | None = None
        for text, style in cells:
            if style is not run_style and style != run_style:
                if run and run_style is not None:
                    segments.append(Segment("".join(run), run_style))
                run, run_style = [], style
            run.append(text)
        if run and run_style is not None:
            segments.append(Segment("".join(run), run_style))
        return Strip(segments).crop_extend(0, width, base)

    def _bucket_of(self, t: float) -> int:
        return min(BUCKETS - 1, int(t / self.span * BUCKETS)) if math.isfinite(t) else 0

    def time_at(self, x: int) -> float | None:
        """The simulated time under column x (content offset), or None (the gutter)."""
        col = x - GUTTER
        cols = self.columns()
        if col < 0 or col >= cols:
            return None
        shown = self._shown_buckets()
        return (col + 0.5) / cols * shown * self.span / BUCKETS

    def mark_at(self, x: int) -> int | None:
        """The event the mark in column x (content offset) stands for: the column's first
        event of the kind its glyph shows (a halt over a rejection over a preemption);
        None where it shows no mark (or the gutter)."""
        col = x - GUTTER
        cols = self.columns()
        if col < 0 or col >= cols:
            return None
        start, end = self._column_spans(cols)[col]
        bits = 0
        for b in self.marks[start:end]:
            bits |= b
        for bit in range(len(MARKS)):
            if bits & (1 << bit):
                found = NONE
                for index in self.first[bit][start:end]:
                    found = _earliest(found, index)
                return found if found >= 0 else None
        return None

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        t = self.time_at(offset.x)
        if t is not None:
            event.stop()
            self.post_message(self.Clicked(t, self.mark_at(offset.x)))


def timeline_figure(program: object) -> str | None:
    """The figure the timeline shows, as an expression of the spec language:
    `allocated(POOL)` of the first pool with a finite cap (its first member); None if
    there is none."""
    for pool in getattr(program, "pools", ()):
        cap = getattr(pool, "cap", math.inf)
        if isinstance(cap, int | float) and math.isfinite(cap):
            label = f"{pool.name}[0]" if getattr(pool, "family", False) else pool.name
            return f"allocated({label})"
    return None


def timeline_expression(program: object, compile_expression: Callable[..., Any]) -> Any:
    """`timeline_figure` compiled for the worker to sample (`compile_expression(text,
    program)`); None when there is none, or it does not compile (the timeline then shows
    the frames' marks only)."""
    text = timeline_figure(program)
    try:
        return compile_expression(text, program) if text is not None else None
    except Exception:
        return None


def _column_of(bucket: int, spans: list[tuple[int, int]]) -> int:
    """The column that holds `bucket` (the first, when a bucket takes several columns):
    the one its marks are drawn in. `bucket * cols // shown` was one column short of it
    where the bucket's columns begin past that fraction: on a short run, whose buckets take
    several columns each, the cursor stood beside its own ■."""
    starts = [start for start, _ in spans]
    col = max(0, bisect_right(starts, bucket) - 1)  # the last column starting by it
    return bisect_left(starts, starts[col])  # the first column of that start


def _earliest(a: int, b: int) -> int:
    """The earlier of two event indices, NONE being none."""
    return b if a < 0 else (a if b < 0 else min(a, b))


def _mark_bit(kind: str) -> int:
    return next(i for i, (name, _) in enumerate(MARKS) if name == kind)
