"""The debugger's panels: pools, queue, stages, status, watches, notes (the inspector's texts are
inspector.py's).

Each panel takes a `Snapshot` (immutable) and redraws from it; none keeps live simulator
objects. Sessions are clickable everywhere (`app.inspect_session(ID)`), in their colour.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from functools import partial
from typing import NamedTuple

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.geometry import Size
from textual.reactive import reactive
from textual.widgets import Static

from pooltui.lang.words import number
from pooltui.sim.events import Event
from pooltui.sim.snapshot import (
    QUEUE_PLANNED,
    PoolView,
    QueueItemView,
    ResidentView,
    Snapshot,
    StageView,
    Violation,
)
from pooltui.tui.colors import Palette, on, session_hex
from pooltui.tui.commands import WatchValue
from pooltui.tui.messages import QueueShown, SafeRender, guarded, guarded_compose
from pooltui.tui.widgets import sharing
from pooltui.tui.widgets.blockmap import BlockMapView, map_marks
from pooltui.tui.widgets.legend import SEP, key_lines, pool_legend, session_text
from pooltui.tui.widgets.lines import grows_only
from pooltui.tui.widgets.rows import Row, TextRows
from pooltui.tui.widgets.statictext import set_text

Number = int | float


def bar(pool: PoolView, width: int, palette: Palette) -> Text:
    """allocated / cached / free against cap, as a one-line bar."""
    text = Text()
    if pool.nblocks is None or math.isinf(pool.cap):
        used = pool.allocated + pool.cached
        a = round(width * pool.allocated / used) if used else 0
        c = round(width * pool.cached / used) if used else 0
        text.append("█" * a, Style(color=palette.allocated))
        text.append("▒" * c, Style(color=palette.cached))
        text.append("·" * (width - a - c), Style(color=palette.free))
        return text
    cap = pool.cap or 1
    a = math.ceil(width * pool.allocated / cap) if pool.allocated else 0
    c = math.ceil(width * pool.cached / cap) if pool.cached else 0
    over = a + c > width
    if over:  # a broken pool: show the excess in the error colour
        c = max(0, width - a)
    text.append("█" * a, Style(color=palette.allocated))
    text.append("▒" * c, Style(color=palette.cached))
    text.append("·" * max(0, width - a - c), Style(color=palette.free))
    return text


def pool_head(pool: PoolView, violation: Violation | None, width: int, palette: Palette) -> Text:
    """A pool member's header: its options, its bar, its figures and invariant status.

    Spaces that separate two runs belong to the run before them (`kv  ` then `cap 512`),
    so every renderer of an exported screenshot keeps them."""
    head = Text()
    head.append(f"{pool.label}  ", Style(bold=True))
    cap = "inf" if math.isinf(pool.cap) else number(pool.cap, 4)
    opts = [f"cap {cap}"]
    if pool.block:
        opts.append(f"block {pool.block} ({number(pool.nblocks, 4)} blocks)")
    opts += [f"evict {pool.evict}", f"queue {pool.queue_policy}", f"preempt {pool.preempt}"]
    if pool.admit_via:
        opts.append(f"admit via {pool.admit_via}")
    if pool.tier_of:
        opts.append(f"tier of {', '.join(pool.tier_of)}")
    # The options, wrapped at a separator when they do not fit on one line.
    room = max(20, width - len(pool.label) - 2)
    line = ""
    for opt in opts:
        if line and len(line) + len(SEP) + len(opt) > room:
            head.append(line, "dim")
            head.append("\n" + " " * (len(pool.label) + 2))
            line = opt
        else:
            line = f"{line}{SEP}{opt}" if line else opt
    head.append(line, "dim")
    head.append("\n")
    head.append_text(bar(pool, min(width, 60), palette))
    head.append("\n")
    figures = Text()
    figures.append("allocated ", "dim")
    figures.append(number(pool.allocated, 4), Style(color=palette.allocated, bold=True))
    figures.append(SEP + "cached ", "dim")
    figures.append(number(pool.cached, 4), Style(color=palette.cached, bold=True))
    figures.append(SEP + "free ", "dim")
    figures.append(number(pool.free, 4), Style(bold=True))
    figures.append_text(sharing.shared_head(pool, palette))
    head.append_text(figures)
    broken = violation if violation is not None and violation.pool in (None, pool.label) else None
    if broken is not None:
        status = Text(f"✗ {broken.invariant}", Style(color=palette.error, bold=True))
    else:
        status = Text("✓ invariants hold", Style(color=palette.good))
    # On the figures' line when it fits; a line of its own rather than cut at the edge.
    head.append("   " if figures.cell_len + 3 + status.cell_len <= width else "\n")
    head.append_text(status)
    if broken is not None:
        head.append("\n")
        head.append(broken.message, Style(color=palette.error, bold=True))
    if pool.nblocks is None:
        head.append("\n")
        head.append("cap inf: no block map; the bar shows allocated against cached", "dim italic")
    return head


class PoolCard(SafeRender, Vertical):
    """One pool member: a header with its bar and invariant status, then its block map
    (or, for `cap inf`, nothing more: the bar says it all), then a legend of who holds
    what."""

    DEFAULT_CSS = """
    PoolCard { height: auto; margin-bottom: 1; }
    PoolCard.solo { height: 1fr; margin-bottom: 0; }
    PoolCard > .pool-head { height: auto; }
    PoolCard > .pool-legend {
        height: auto; margin-top: 1; text-wrap: nowrap; text-overflow: ellipsis;
    }
    """

    LEGEND_LINES = 4  # a member of a family, or one of several pools
    MAP_ROWS = 4  # a lone pool's map rows below which its shared contents take one line

    def __init__(self, pool: PoolView, solo: bool) -> None:
        super().__init__(classes="solo" if solo else "", id=f"pool-{_safe(pool.label)}")
        self.pool = pool
        self.solo = solo
        self.head = Static(classes="pool-head")
        self.map: BlockMapView | None = BlockMapView(pool) if pool.blocks is not None else None
        self.legend = Static(classes="pool-legend")
        self._map_height: int | None = None
        self.fold = False  # the legend's shared contents on one line (`legend_lines`)
        self._shown: tuple[Violation | None, Event | None, Palette] | None = None
        self._fitted_at: Size | None = None  # the size its texts were made for
        self._screen_at = Size()  # the screen's size at its last resize

    @guarded_compose
    def compose(self) -> ComposeResult:
        yield self.head
        if self.map is not None:
            yield self.map
        yield self.legend

    def legend_lines(self, head_lines: int, key: int = 0) -> int:
        """How many legend lines fit. A lone pool's map takes the rows it needs (a big one
        scrolls) and leaves the rest of the panel to its legend, which keeps at least its
        first rows and the marks' key above them (`key` lines)."""
        self.fold = False
        if not self.solo:
            return self.LEGEND_LINES
        height = self.size.height or 30
        room = max(2, height - head_lines - 1)  # one blank line above the legend
        if self.map is None:
            return max(self.LEGEND_LINES, room)
        wanted = len(self.pool.holds) + len(self.pool.entries)
        map_rows = self.map.rows(self.map.size.width or self.size.width or None)
        more = sharing.legend_lines(self.pool)  # shared contents' lines, above the holds
        least = min(self.LEGEND_LINES + more, wanted + more) + key
        # A map of a row or two shows no prompt's blocks whole: below MAP_ROWS the contents
        # fold into one line, one of the rows the legend keeps (decisions.md).
        self.fold = more > 1 and room - least < min(self.MAP_ROWS, map_rows)
        if self.fold:
            least = min(self.LEGEND_LINES, wanted + 1) + key
        legend = max(least, room - map_rows)
        map_height = max(1, min(map_rows, room - legend))
        if map_height != self._map_height:
            self._map_height = map_height
            self.map.styles.height = map_height
            self.map.styles.max_height = map_height
        return max(1, room - map_height)

    def update_pool(
        self,
        pool: PoolView,
        violation: Violation | None,
        event: Event | None,
        palette: Palette,
        *,
        fitting: bool = False,
    ) -> None:
        """Show `pool`. `fitting`: for a new size of the card (a layout is made anyway),
        its texts fitted to it even while heights only grow."""
        self.pool = pool
        self._shown = (violation, event, palette)
        self._fitted_at = self.size
        grow = grows_only(self) and not fitting
        width = max(10, (self.size.width or 60) - 2)
        head = pool_head(pool, violation, width, palette)
        highlight: frozenset[int] = frozenset()
        vblocks: frozenset[int] = frozenset()
        marks: tuple[str, ...] = ()
        if self.map is not None:
            if event is not None and event.pool == pool.label and event.blocks:
                highlight = frozenset(event.blocks)
            if violation is not None and violation.pool == pool.label:
                vblocks = frozenset(violation.blocks)
            marks = map_marks(pool, highlight, vblocks, self.map.selected is not None)
        # The head's lines as shown: while heights only grow, fewer keep their height.
        shown = set_text(self.head, head, grow_only=grow)
        lines = self.legend_lines(shown, key_lines(marks, palette, width))
        set_text(
            self.legend,
            pool_legend(pool, lines, palette, marks, width, self.fold),
            grow_only=grow,
        )
        if self.map is not None:
            self.map.set_palette(palette)
            self.map.set_pool(pool, highlight, vblocks)
            if vblocks:
                self.map.scroll_to_block(min(vblocks))
            elif highlight:
                self.map.scroll_to_block(min(highlight))

    def on_resize(self, event: events.Resize) -> None:
        # Made for the size it had when its panel's snapshot came (or its panel's own
        # resize, which comes before the cards are laid out again): the legend's lines and
        # the map's rows fit that size, not this one (after 80x24 -> 100x28 every row was
        # folded; made for one line more, the last row hid under the panel's border).
        # Fitted again, but while heights only grow, not for more height on the same
        # screen (all it shows is still seen; the next frame fits it): a second layout.
        fitted, shown = self._fitted_at, self._shown
        screen, self._screen_at = self._screen_at, self.screen.size
        if shown is None or fitted is None or fitted == self.size:
            return
        taller = fitted.width == self.size.width and fitted.height < self.size.height
        if grows_only(self) and screen == self.screen.size and taller:
            return
        self.update_pool(self.pool, *shown, fitting=True)


def _safe(label: str) -> str:
    return label.replace("[", "-").replace("]", "")


class Room(NamedTuple):
    """A panel's size, its room inside its scroll bars, and the screen's size."""

    size: Size
    inner: Size
    screen: Size

    def but_heights(self) -> tuple[int, int, Size]:
        return self.size.width, self.inner.width, self.screen


class PoolsPanel(SafeRender, VerticalScroll):
    """Every pool member, in declaration order. Redraws when the app sets `snapshot`,
    `palette` (on a theme change) or `inspected` (the block shown in Details)."""

    # Its own overflow: Textual takes a widget's default CSS from its first base only
    # (SafeRender), so VerticalScroll's `overflow-y: auto` is not inherited: pools below
    # the fold were out of reach, with no scroll bar.
    DEFAULT_CSS = """
    PoolsPanel { padding: 0 1; overflow-x: hidden; overflow-y: auto; scrollbar-size-vertical: 1; }
    """

    snapshot: reactive[Snapshot | None] = reactive(None, always_update=True, repaint=False)
    palette: reactive[Palette] = reactive(Palette, repaint=False)
    inspected: reactive[tuple[str, int] | None] = reactive(None, repaint=False)

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.cards: dict[str, PoolCard] = {}
        self._shown_at: Room | None = None  # the room when the cards were made

    def watch_snapshot(self, snap: Snapshot | None) -> None:
        if snap is not None:
            self.update_snapshot(snap, self.palette)

    def watch_palette(self, palette: Palette) -> None:
        if self.snapshot is not None:
            self.update_snapshot(self.snapshot, palette)

    def on_resize(self, event: events.Resize) -> None:
        # The cards' heads are wrapped to the width, a lone pool's legend fits the height:
        # a layout change (teaching mode, tabs, the terminal) that lands after the last
        # snapshot would otherwise leave them made for the old size. Not on the cards' own
        # growth (a new scroll range, the same size), nor while heights only grow (a run
        # and its pause) on a change of height alone on a screen of the same size (the
        # why's line grew): the next frame fits them; remaking them at once laid the
        # screen out a second time after a paused frame (30-50 ms more).
        room = self._room()
        if self.snapshot is None or room == self._shown_at:
            return
        was = self._shown_at
        if was is not None and grows_only(self) and room.but_heights() == was.but_heights():
            return
        self.update_snapshot(self.snapshot, self.palette)

    def watch_inspected(self, inspected: tuple[str, int] | None) -> None:
        for label, card in self.cards.items():
            if card.map is not None:
                selected = inspected[1] if inspected is not None and inspected[0] == label else None
                card.map.selected = selected
        if self.snapshot is not None:
            self.update_snapshot(self.snapshot, self.palette)  # the legend explains the mark

    def update_snapshot(self, snap: Snapshot, palette: Palette) -> None:
        labels = [p.label for p in snap.pools]
        if list(self.cards) != labels:
            self.remove_children()
            solo = len(snap.pools) == 1
            self.cards = {}
            for p in snap.pools:
                card = PoolCard(p, solo and p.blocks is not None)
                self.cards[p.label] = card
            self.mount_all(self.cards.values())
            for label, card in self.cards.items():
                if card.map is not None and self.inspected is not None:
                    card.map.selected = self.inspected[1] if self.inspected[0] == label else None
        self._shown_at = self._room()
        for p in snap.pools:
            self.cards[p.label].update_pool(p, snap.violation, snap.last_event, palette)

    def _room(self) -> Room:
        screen = self.screen.size if self.is_attached else Size(0, 0)
        return Room(self.size, self.scrollable_content_region.size, screen)

    def card(self, label: str) -> PoolCard | None:
        return self.cards.get(label)


def _keys(keys: tuple[Number, ...]) -> str:
    return "(" + ", ".join(number(k, 4) for k in keys) + ")" if keys else ""


def waited(seconds: float) -> str:
    """A wait as people read it: 0.52s, 3.1s, 12s, 1234s."""
    if seconds < 10:
        return f"{seconds:.2f}s"
    if seconds < 100:
        return f"{seconds:.1f}s"
    return f"{seconds:.0f}s"


QUEUE_ROWS = 32  # the queue rows a screen asks planned, in steps of this many (`QueueShown`)


def queue_rows(bottom: int) -> int:
    """The planned positions asked for when the Queue panel shows rows down to `bottom`:
    in steps (a scroll of a few rows asks nothing new), at least one step. A queue's
    position p is on row p + 2 or further down (its pool's title and header first)."""
    return QUEUE_ROWS * max(1, -(-bottom // QUEUE_ROWS))


class QueuePanel(SafeRender, Vertical):
    """Waiting holds of every pool, in selection order. Redraws when the app sets
    `snapshot`. Says which rows it shows (`QueueShown`): only those are planned in the
    frames of a debugger (the 200 of a full GPU's queue were half of each snapshot)."""

    LIMIT = QUEUE_PLANNED  # rows per pool (the snapshot's planned head); the rest is counted
    _rows_asked = 0

    snapshot: reactive[Snapshot | None] = reactive(None, always_update=True, repaint=False)
    palette: reactive[Palette] = reactive(Palette, repaint=False)

    @guarded_compose
    def compose(self) -> ComposeResult:
        yield TextRows(id="queue-body")

    @guarded
    def on_mount(self) -> None:
        body = self.query_one_optional("#queue-body", TextRows)  # (none if compose failed)
        if body is not None:
            self.watch(body, "scroll_y", self._rows_shown)

    @guarded
    def on_resize(self) -> None:
        self._rows_shown()

    @guarded
    def _rows_shown(self, *_: object) -> None:
        body = self.query_one_optional("#queue-body", TextRows)
        if body is None:
            return
        rows = queue_rows(int(body.scroll_y) + self.size.height)
        if rows != self._rows_asked:
            self._rows_asked = rows
            self.post_message(QueueShown(rows))

    def watch_snapshot(self) -> None:
        if self.snapshot is not None:
            self.update_snapshot(self.snapshot)

    def watch_palette(self) -> None:
        self.watch_snapshot()

    def update_snapshot(self, snap: Snapshot) -> None:
        palette = self.palette
        rows: list[Row] = []
        for pool in snap.pools:
            if not pool.queue:
                continue
            head = Text()
            head.append(f"{pool.label}  ", Style(bold=True))
            head.append(f"{len(pool.queue)} waiting{SEP}{pool.queue_policy}", "dim")
            rows.append(head)
            shown = pool.queue[: self.LIMIT]
            keys_w = max([4] + [len(_keys(item.keys)) for item in shown])
            name_w = max([7] + [len(item.session) for item in shown]) + 2
            rows.append(
                Text(
                    f"{'#':>3}  {'session':<{name_w}}{'units':>6} {'need':>6} {'reserve':>7} "
                    f"{'hit':>5}  {'keys':<{keys_w}}  {'waited':>8}",
                    "dim",
                )
            )
            for item in shown:
                rows.extend(queue_item_rows(item, name_w, keys_w, palette))
            if len(pool.queue) > self.LIMIT:
                rows.append(Text(f"  … {len(pool.queue) - self.LIMIT} more", "dim"))
        if rows:
            rows.append(Text())  # as the stages: a blank row ends the list
        else:
            rows.append(Text("no hold is waiting", "dim italic"))
        self.query_one("#queue-body", TextRows).update_rows(rows)


def queue_item_rows(item: QueueItemView, name_w: int, keys_w: int, palette: Palette) -> list[Row]:
    """A waiting hold's rows: its figures (made only when on screen), then, when it waits
    for another session's reload in flight of its blocks, a line that says so (under the
    columns, so a narrow panel does not cut it off)."""
    rows: list[Row] = [partial(queue_row, item, name_w, keys_w, palette)]
    if item.waits_for is not None:  # why it waits with room to spare
        rows.append(Text(f"     ↓ waits for {item.waits_for}'s reload of its blocks", "bold"))
    return rows


def queue_row(item: QueueItemView, name_w: int, keys_w: int, palette: Palette) -> Text:
    """A waiting hold's row: its figures in the header's columns, then a mark when it was
    preempted."""
    text = Text(f"{item.position:>3}  ")
    name = session_text(item.session, item.session_id)
    name.pad_right(max(0, name_w - len(item.session)))
    text.append_text(name)
    text.append(
        f"{number(item.units, 4):>6} {number(item.need, 4):>6} {number(item.reserve, 4):>7} "
        f"{number(item.hit if item.planned else None, 4):>5}  {_keys(item.keys):<{keys_w}}  "
        f"{waited(item.waited):>8}"
    )
    if item.preempted:
        text.append("  ⟲ preempted", Style(color=palette.warn, bold=True))
    return text


# A resident between two iterations is "waiting" in the simulator's snapshot; vLLM users
# read that as the waiting queue (those are in the Queue panel), so it shows as "idle".
PHASE_WORDS = {"waiting": "idle"}


def phase_word(phase: str) -> str:
    """A resident's phase as the Stages panel and Details say it."""
    return PHASE_WORDS.get(phase, phase)


def stage_rows(stage: StageView, palette: Palette) -> list[Row]:
    """A stage's rows: its head, then a row per resident (or link job), each resident's
    made only when it is on screen (a full GPU has hundreds)."""
    rows: list[Row] = []
    text = Text()
    text.append(f"{stage.label}  ", Style(bold=True))
    if stage.kind == "step":
        state = "busy" if stage.busy else "idle"
        head = f"step{SEP}iteration #{stage.iteration} ({state}"
        if stage.busy and stage.iteration_end is not None:
            head += f", ends {number(stage.iteration_end, 4)}s"
        text.append(head + ")", "dim")
        if stage.preempted:
            text.append(SEP, "dim")
            text.append("preempted", Style(color=palette.warn, bold=True))
        rows.append(text)
        text = Text(
            f"  budget {number(stage.budget, 4)}: used {number(stage.budget_used, 4)}, left {number(stage.budget_left, 4)}"
            f"{SEP}seats {number(stage.seats, 4)}: left {number(stage.seats_left, 4)}"
        )
        if stage.memory:
            text.append(f"{SEP}memory {', '.join(stage.memory)}", "dim")
        rows.append(text)
        if stage.reloading:
            rows.append(Text(f"  reloading (no seat, no tokens yet): {', '.join(stage.reloading)}"))
        if stage.residents:
            rows.append(
                Text("  session        phase      tokens computed context  progress", "dim")
            )
        rows.extend(partial(_resident_row, r, palette) for r in stage.residents)
        return rows
    text.append(
        f"link{SEP}rate {number(stage.rate, 4)}{SEP}lanes {stage.lanes}{SEP}"
        f"queued {len(stage.queued_jobs)}",
        "dim",
    )
    rows.append(text)
    for job in stage.jobs:
        text = Text("  ")
        text.append_text(session_text(job.session, job.session_id))
        # The figure before the bar: a narrow panel cuts a row's end, the bar's tail.
        text.append(f" {job.what} {job.progress * 100:3.0f}% ")
        filled = round(job.progress * 20)
        text.append("█" * filled, Style(color=session_hex(job.session_id)))
        text.append("░" * (20 - filled), "dim")
        rows.append(text)
    for job in stage.queued_jobs:
        text = Text("  queued: ", "dim")
        text.append_text(session_text(job.session, job.session_id))
        text.append(f" {job.what}", "dim")
        rows.append(text)
    return rows


def stage_text(stage: StageView, palette: Palette) -> Text:
    """A stage's rows as one text, every row made."""
    return Text("\n").join(
        row if isinstance(row, Text) else row() for row in stage_rows(stage, palette)
    )


def _resident_row(r: ResidentView, palette: Palette) -> Text:
    text = Text("  ")
    name = session_text(r.session, r.session_id)
    name.pad_right(max(0, 13 - len(r.session)))
    text.append_text(name)
    phases = {
        "prefill": palette.allocated,
        "decode": palette.good,
        "recompute": palette.warn,
    }
    phase_style = phases.get(r.phase, palette.muted)
    text.append(f"  {phase_word(r.phase):<9}", Style(color=phase_style))
    progress = (
        f"{number(r.computed, 4)}/{number(r.target, 4)}" if r.phase in ("prefill", "recompute")
        else f"step {r.steps_done}/{number(r.target, 4)}"
    )  # fmt: skip
    text.append(f" {r.tokens:>6} {number(r.computed, 4):>8} {number(r.context, 4):>7}  {progress}")
    return text


class StagesPanel(SafeRender, Vertical):
    """Every stage: a step's iteration, budget and residents; a link's jobs. Redraws when
    the app sets `snapshot`."""

    snapshot: reactive[Snapshot | None] = reactive(None, always_update=True, repaint=False)
    palette: reactive[Palette] = reactive(Palette, repaint=False)

    @guarded_compose
    def compose(self) -> ComposeResult:
        yield TextRows(id="stages-body")

    def watch_snapshot(self) -> None:
        if self.snapshot is not None:
            self.update_snapshot(self.snapshot)

    def watch_palette(self) -> None:
        self.watch_snapshot()

    def update_snapshot(self, snap: Snapshot) -> None:
        rows: list[Row] = []
        for i, stage in enumerate(snap.stages):
            if i:
                rows.append(Text())
            rows.extend(stage_rows(stage, self.palette))
        if snap.stages:
            rows.append(Text())  # a blank row ends the list (room under the last row)
        else:
            rows.append(Text("no stage", "dim italic"))
        self.query_one("#stages-body", TextRows).update_rows(rows)


def watches_text(values: Iterable[WatchValue], palette: Palette) -> Text:
    text = Text()
    rows = list(values)
    if not rows:
        text.append(
            "no watch: press w to add one (an expression of the spec language)", "dim italic"
        )
        return text
    for w in rows:
        text.append(f"{w.text}", Style(bold=True))
        text.append(" = ")
        if w.error is not None:
            text.append(w.shown(), Style(color=palette.error))
            if w.caret is not None:  # under the culprit, as a located error points at it
                start, end = w.caret
                text.append("\n" + " " * cell_len(w.text[: start - 1]))
                carets = "^" * max(1, cell_len(w.text[start - 1 : end - 1]))
                text.append(carets, Style(color=palette.error))
        elif w.changed:
            text.append(w.shown(), on(palette.warn))
            text.append("  changed", Style(color=palette.warn))
        else:
            text.append(w.shown())
        text.append("\n")
    return text


class WatchesPanel(SafeRender, Static):
    """The watches' values at the current event; redraws when the app sets `values`."""

    values: reactive[tuple[WatchValue, ...]] = reactive((), always_update=True, repaint=False)
    palette: reactive[Palette] = reactive(Palette, repaint=False)

    def watch_values(self) -> None:
        set_text(self, watches_text(self.values, self.palette))

    def watch_palette(self) -> None:
        self.watch_values()
