"""The block map of one pool: one cell per physical block, on the Line API, and which of
its marks it draws now (`map_marks`, for the legend to key).

Only the visible rows are rendered (`render_line`), and each row's strip is cached by
(snapshot generation, row, width), so a 100,000-block pool scrolls as fast as a small one.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from pooltui.sim.snapshot import BlockOwner, PoolView
from pooltui.tui.colors import Palette, contrast_text, dimmed_hex, on, rank_glyph, session_hex
from pooltui.tui.widgets.sharing import DUPLICATE_GLYPH, shared_blocks, shared_cell

CELL = 2  # characters per block: a square-ish cell (big pools)
GUTTER = 7  # the block index of each row's first cell
WIDE_MAX = 8  # widest cell of a small pool
OWNER_STYLES_KEPT = 4096  # owners' styles kept across snapshots, then made again
WIDE_ROWS = 16  # a small pool spreads over at most this many rows of wide cells


class BlockMapView(ScrollView, can_focus=True):
    """The physical blocks of a pool member, row by row."""

    DEFAULT_CSS = """
    BlockMapView {
        height: auto;
        max-height: 24;
        scrollbar-size-vertical: 1;
    }
    BlockMapView.solo { height: 1fr; max-height: 100%; }
    """

    class BlockClicked(Message):
        def __init__(self, pool: str, block: int) -> None:
            super().__init__()
            self.pool = pool
            self.block = block

    selected: reactive[int | None] = reactive(None, repaint=False)  # the inspected block

    def __init__(self, pool: PoolView | None = None, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.pool: PoolView | None = pool
        self.highlight: frozenset[int] = frozenset()
        self.violation_blocks: frozenset[int] = frozenset()
        self.shared: frozenset[int] = frozenset()  # blocks more than one hold holds
        self.duplicates: frozenset[int] = frozenset()  # content another block registered first
        self.landing: frozenset[int] = frozenset()  # blocks a reload in flight loads
        self.palette = Palette()
        self._generation = 0
        self._cache: LRUCache[tuple[int, int, int], Strip] = LRUCache(1024)
        self._styles: dict[int, tuple[Style, str]] = {}  # by owner number: this snapshot's
        self._owner_styles: dict[tuple[bool, int, int | None], tuple[Style, str]] = {}
        self._cell_key: tuple[int, int] = (-1, -1)
        self._cell = CELL
        self._marks: tuple[int, frozenset[int]] = (-1, frozenset())

    # ----------------------------------------------------------------- data
    def set_pool(
        self,
        pool: PoolView,
        highlight: frozenset[int] = frozenset(),
        violation_blocks: frozenset[int] = frozenset(),
    ) -> None:
        self.pool = pool
        self.highlight = highlight
        self.violation_blocks = violation_blocks
        self.shared = shared_blocks(pool)
        self.duplicates = pool.blocks.duplicates if pool.blocks is not None else frozenset()
        self.landing = pool.blocks.landing if pool.blocks is not None else frozenset()
        self._invalidate()

    def set_palette(self, palette: Palette) -> None:
        if palette != self.palette:
            self.palette = palette
            self._owner_styles.clear()
            self._invalidate()

    def watch_selected(self) -> None:
        self._invalidate()

    def _invalidate(self) -> None:
        self._generation += 1
        self._styles.clear()
        self._update_virtual_size()
        self.refresh()

    @property
    def nblocks(self) -> int:
        if self.pool is None or self.pool.blocks is None:
            return 0
        return self.pool.blocks.nblocks

    def cell_width(self, width: int | None = None) -> int:
        """Characters per block: 2 for a big pool; a small pool takes wider cells (with a
        gap between blocks, so they can be counted) to fill the width."""
        usable = (self.scrollable_content_region.width if width is None else width) - GUTTER
        n = self.nblocks
        key = (n, usable)
        if self._cell_key == key:
            return self._cell
        cell = CELL
        if n > 0 and usable > 0 and n <= usable * WIDE_ROWS // 4:
            for rows in range(1, WIDE_ROWS + 1):
                fits = usable // -(-n // rows)
                if fits >= 4:
                    cell = min(WIDE_MAX, fits)
                    break
        self._cell_key, self._cell = key, cell
        return cell

    def columns(self, width: int | None = None) -> int:
        usable = (self.scrollable_content_region.width if width is None else width) - GUTTER
        return max(1, usable // self.cell_width(width))

    def rows(self, width: int | None = None) -> int:
        cols = self.columns(width)
        return max(1, -(-self.nblocks // cols))

    def _update_virtual_size(self) -> None:
        width = self.scrollable_content_region.width
        if width <= 0:
            return
        self.virtual_size = Size(width, self.rows(width))

    def on_resize(self, event: events.Resize) -> None:
        self._cache.clear()
        self._update_virtual_size()

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return self.rows(max(width, GUTTER + CELL))

    def render_line(self, y: int) -> Strip:
        try:
            return self._line(y)
        except Exception:  # never a traceback from a repaint
            return Strip.blank(self.size.width, Style(bgcolor=self.palette.background))

    # ----------------------------------------------------------------- rendering
    def _owner_style(self, k: int) -> tuple[Style, str]:
        """Style and glyph of cells whose `cells` value is k (0: free)."""
        cached = self._styles.get(k)
        if cached is not None:
            return cached
        pal = self.palette
        if k == 0 or self.pool is None or self.pool.blocks is None:
            result = (Style(color=pal.free, bgcolor=pal.background), "· ")
        else:
            owner = self.pool.blocks.owners[k - 1]
            # Kept across snapshots (an owner's number is a snapshot's; its session and
            # rank are not): the same Style objects, so the strips' caches downstream
            # hit too, and a frame makes no Style per owner.
            key = (owner.kind == "hold", owner.session_id, owner.rank)
            made = self._owner_styles.get(key)
            if made is None:
                if len(self._owner_styles) >= OWNER_STYLES_KEPT:
                    self._owner_styles.clear()
                made = self._owner_styles[key] = self._new_owner_style(owner)
            result = made
        self._styles[k] = result
        return result

    def _new_owner_style(self, owner: BlockOwner) -> tuple[Style, str]:
        if owner.kind == "hold":
            colour = session_hex(owner.session_id)
            return Style(color=contrast_text(colour), bgcolor=colour), "  "
        colour = dimmed_hex(owner.session_id, self.palette.background)
        glyph = rank_glyph(owner.rank)
        return Style(color=contrast_text(colour), bgcolor=colour, dim=False), glyph + " "

    def _line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        row = y + scroll_y
        key = (self._generation, row, width)
        strip = self._cache.get(key)
        if strip is None:
            strip = self._render_row(row, width)
            self._cache[key] = strip
        return strip.crop_extend(scroll_x, scroll_x + width, Style(bgcolor=self.palette.background))

    def _render_row(self, row: int, width: int) -> Strip:
        try:
            return self._render_row_cells(row, width)
        except Exception:  # never a traceback from a repaint: a blank row says less, safely
            return Strip.blank(width, Style(bgcolor=self.palette.background))

    def _render_row_cells(self, row: int, width: int) -> Strip:
        pal = self.palette
        blank = Style(bgcolor=pal.background)
        blocks = self.pool.blocks if self.pool is not None else None
        if blocks is None:
            return Strip.blank(width, blank)
        cell = self.cell_width(width)
        cols = self.columns(width)
        start = row * cols
        if start >= blocks.nblocks:
            return Strip.blank(width, blank)
        end = min(start + cols, blocks.nblocks)
        gutter_style = Style(color=pal.muted, bgcolor=pal.background)
        segments = [Segment(f"{start:>{GUTTER - 1}} ", gutter_style)]
        cells = blocks.cells[start:end]  # the row's blocks read at once
        marks = self._all_marks()
        if cell != CELL:
            return self._wide_row(segments, start, cells, cell, marks, width)
        # Group runs of equal cells into one segment: few segments per row.
        run_k = cells[0]
        run_len = 0
        for i, k in enumerate(cells, start):
            if marks and i in marks:
                if run_len:
                    style, glyph = self._owner_style(run_k)
                    segments.append(Segment(glyph * run_len, style))
                    run_len = 0
                segments.append(self._marked(i, k))
                run_k = cells[i + 1 - start] if i + 1 < end else k
                continue
            if k != run_k and run_len:
                style, glyph = self._owner_style(run_k)
                segments.append(Segment(glyph * run_len, style))
                run_len = 0
            run_k = k
            run_len += 1
        if run_len:
            style, glyph = self._owner_style(run_k)
            segments.append(Segment(glyph * run_len, style))
        used = GUTTER + (end - start) * CELL
        if used < width:
            segments.append(Segment(" " * (width - used), blank))
        return Strip(segments, max(width, used))

    def _wide_row(
        self,
        segments: list[Segment],
        start: int,
        cells: Sequence[int],
        cell: int,
        marks: frozenset[int] | set[int],
        width: int,
    ) -> Strip:
        """A row of a small pool (`cells`: its blocks', from block `start`): one tile per
        block, a gap between tiles."""
        blank = Style(bgcolor=self.palette.background)
        for i, k in enumerate(cells, start):
            if i in marks:
                seg = self._marked(i, k)
                style, text = seg.style or blank, seg.text
            else:
                style, glyph = self._owner_style(k)
                text = glyph
            if text == "[]" and cell >= 4:  # the inspected block: its brackets around the tile
                text = "[" + " " * (cell - 3) + "]"
            segments.append(Segment(text[: cell - 1].ljust(cell - 1), style))
            segments.append(Segment(" ", blank))
        used = GUTTER + len(cells) * cell
        if used < width:
            segments.append(Segment(" " * (width - used), blank))
        return Strip(segments, max(width, used))

    def _marked(self, i: int, k: int) -> Segment:
        """A marked block: the event's blocks, a violation's, the inspected one, one a
        reload in flight is loading (landing), a shared one or a duplicate.

        A mark that says what the block is (`×N` shared, `=` a duplicate) stays on the
        event's blocks too: a shared block of the event is its `×N` on the highlight
        colour, a duplicate keeps its `=` after the ◆, so neither fact hides the other."""
        pal = self.palette
        style, glyph = self._owner_style(k)
        if i in self.duplicates:  # its second character: a rank digit or ◆ stays first
            glyph = glyph[0] + DUPLICATE_GLYPH
        if i in self.violation_blocks:
            return Segment("!!", on(pal.error))
        if i == self.selected:
            return Segment("[]", style + Style(bold=True, color=pal.highlight))
        event = i in self.highlight
        if i in self.landing and not event:  # its content is on its way
            return Segment("↓" + glyph[1:], style + Style(bold=True))
        if i in self.shared:
            return self._shared(i, on(pal.highlight) if event else style + Style(bold=True))
        if event:
            return Segment("◆" + glyph[1:], style + Style(bold=True, color=pal.highlight))
        return Segment(glyph, style + Style(bold=True))  # a duplicate

    def _all_marks(self) -> frozenset[int]:
        """The blocks drawn one by one (marked, shared or duplicates), once per generation:
        a pool can share many blocks, and every row asks."""
        if self._marks[0] != self._generation:
            marks = self.highlight | self.violation_blocks | self.shared | self.landing
            marks = marks | self.duplicates
            if self.selected is not None:
                marks = marks | {self.selected}
            self._marks = (self._generation, marks)
        return self._marks[1]

    def _shared(self, i: int, style: Style) -> Segment:
        """A block several holds share: × and its reference count, in `style` (its first
        holder's colour, or the event's)."""
        blocks = self.pool.blocks if self.pool is not None else None
        count = blocks.count(i) if blocks is not None else 2
        return Segment(shared_cell(count), style)

    # ----------------------------------------------------------------- input
    def block_at(self, x: int, y: int) -> int | None:
        """The block under content offset (x, y), or None."""
        scroll_x, scroll_y = self.scroll_offset
        col_x = x + scroll_x - GUTTER
        if col_x < 0:
            return None
        cell = self.cell_width()
        col = col_x // cell
        if cell != CELL and col_x % cell == cell - 1:
            return None  # the gap between two tiles
        cols = self.columns()
        if col >= cols:
            return None
        i = (y + scroll_y) * cols + col
        return i if 0 <= i < self.nblocks else None

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None or self.pool is None:
            return
        block = self.block_at(offset.x, offset.y)
        if block is not None:
            event.stop()
            self.post_message(self.BlockClicked(self.pool.label, block))

    def scroll_to_block(self, block: int) -> None:
        self.call_after_refresh(self._scroll_to_block, block)

    def _scroll_to_block(self, block: int) -> None:
        row = block // self.columns()
        height = self.scrollable_content_region.height
        if not (self.scroll_offset.y <= row < self.scroll_offset.y + height):
            self.scroll_to(y=max(0, row - height // 2), animate=False)


def map_marks(
    pool: PoolView, highlight: frozenset[int], vblocks: frozenset[int], inspected: bool
) -> tuple[str, ...]:
    """The marks the block map draws now, for the legend to key (legend.MARKS' names): a
    shared block of the event keeps its `×N` (on the highlight colour), so `event` is
    keyed only for the event's other blocks; `ranks` when the map has cached blocks."""
    bm = pool.blocks
    if bm is None:
        return ()
    shared = bm.sharers.keys()
    event_shared = bool(highlight) and not highlight.isdisjoint(shared)
    shown = {
        "event": any(b not in shared for b in highlight),
        "event-shared": event_shared,
        "landing": bool(bm.landing),
        "inspected": inspected,
        "shared": any(b not in highlight for b in shared),
        "many": any(bm.count(b) >= 10 for b in shared),
        "duplicate": bool(bm.duplicates),
        "ranks": pool.cached > 0,
        "violation": bool(vblocks),
    }
    return tuple(name for name, on_map in shown.items() if on_map)
