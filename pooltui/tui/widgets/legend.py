"""The legend under a pool's block map: what its marks mean, then who holds what (each hold
with its size, computed and context) and each cache entry with its eviction rank; and the
way a session's name is written everywhere (its colour; a click inspects it)."""

from __future__ import annotations

from collections.abc import Iterable

from rich.style import Style
from rich.text import Text

from pooltui.lang.words import number
from pooltui.sim.snapshot import EntryView, PoolView
from pooltui.tui.colors import Palette, contrast_text, dimmed_hex, rank_glyph, session_hex
from pooltui.tui.widgets import sharing

SEP = " · "


def session_text(name: str, session_id: int | None, *, bold: bool = True) -> Text:
    """A session's name in its colour; clicking it inspects the session."""
    meta = {"@click": f"app.inspect_session({session_id})"} if session_id is not None else {}
    return Text(name, style=Style(color=session_hex(session_id), bold=bold, meta=meta))


def _n(count: int, one: str, many: str | None = None) -> str:
    return f"{count} {one if count == 1 else (many or one + 's')}"


MARKS = {
    "event": ("◆", "blocks of this event"),
    "landing": ("↓", "landing: a reload in flight loads them"),
    "inspected": ("[ ]", "the inspected block"),
    "shared": ("×N", "held by N holds"),
    "violation": ("!!", "blocks of the violation"),
}


def marks_key(marks: Iterable[str], palette: Palette) -> Text:
    """What the marks drawn on the block map mean (only those it shows now)."""
    text = Text()
    for name in marks:
        glyph, meaning = MARKS[name]
        if text:
            text.append("   ")
        text.append(glyph, Style(bold=True, color=palette.highlight))
        text.append(f" {meaning}", "dim")
    return text


def protected_entries(pool: PoolView) -> tuple[frozenset[int], EntryView | None]:
    """The sessions whose cache entry is protected (each waits on the pool: its own entry is
    its hit, and its admission never evicts it, language.md §8.2), and the entry evicted
    next: the first by rank whose session is not waiting."""
    waiting = frozenset(item.session_id for item in pool.queue)
    victim = next((e for e in pool.entries if e.session_id not in waiting), None)
    return waiting, victim


def pool_legend(
    pool: PoolView, lines: int, palette: Palette, marks: tuple[str, ...] = (), width: int = 80
) -> Text:
    """Who holds what, under the block map: what the map's marks mean (`marks`, those it
    shows), each hold in its colour with its size and computed / context, then each cache
    entry with its eviction rank (0 goes first). At most `lines` lines; what does not fit
    is counted."""
    text = Text()
    if marks:
        text.append_text(marks_key(marks, palette))
        lines -= 1
    holds, entries = pool.holds, pool.entries
    if not holds and not entries:
        if not pool.allocated and not pool.cached:
            if text:
                text.append("\n")
            text.append("no hold and no cache entry: every block is free", "dim italic")
        return text
    if text:
        text.append("\n")
    for row in (shared := sharing.shared_legend(pool, lines, width)):
        text.append_text(row + "\n")
    lines -= len(shared)
    unit = pool.block or 1
    waiting, victim = protected_entries(pool)
    name_w = max([len(h.session) for h in holds] + [len(e.session) for e in entries]) + 2
    lines = max(1, lines)
    total = len(holds) + len(entries)
    keep = total if total <= lines else lines - 1  # the rows made: only those shown
    rows: list[Text] = []
    for h in holds[:keep]:
        row = Text()
        colour = session_hex(h.session_id)
        row.append("██", Style(color=colour))
        row.append(" ")
        name = session_text(h.session, h.session_id)
        name.pad_right(max(0, name_w - len(h.session)))
        row.append_text(name)
        row.append(f"holds {_n(h.blocks, 'block')} ({number(h.size, 4)} units)".ljust(30))
        row.append(f"computed {number(h.computed, 4)}{SEP}context {number(h.context, 4)}", "dim")
        if h.reloading:
            row.append(f"{SEP}reloading {number(h.reloading, 4)} units", "bold")
        rows.append(row)
    for e in entries[: max(0, keep - len(holds))]:
        row = Text()
        colour = dimmed_hex(e.session_id, palette.background)
        row.append(f"{rank_glyph(e.rank)} ", Style(color=contrast_text(colour), bgcolor=colour))
        row.append(" ")
        name = session_text(e.session, e.session_id)
        name.pad_right(max(0, name_w - len(e.session)))
        row.append_text(name)
        blocks = e.blocks or -(-e.units // unit)
        row.append(f"cached {_n(blocks, 'block')} ({number(e.units, 4)} units)".ljust(30))
        if e is victim:
            row.append(f"rank {e.rank} = evicted next", "dim")
        else:
            row.append(f"rank {e.rank}", "dim")
        if e.session_id in waiting:
            row.append(f"{SEP}protected: {e.session} waits for {pool.label}", "bold")
        if e.spilled:
            row.append(f"{SEP}spilled here", "dim")
        if not e.alive:
            row.append(f"{SEP}session ended", "dim")
        rows.append(row)
    if keep < total:
        more_h = max(0, len(holds) - keep)
        more_e = total - keep - more_h
        parts = []
        if more_h:
            parts.append(_n(more_h, "hold"))
        if more_e:
            parts.append(_n(more_e, "cache entry", "cache entries"))
        rows.append(Text("+" + " and ".join(parts) + " more", "dim"))
    for i, row in enumerate(rows):
        if i:
            text.append("\n")
        text.append_text(row)
    return text
