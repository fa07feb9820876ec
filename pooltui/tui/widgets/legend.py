"""The legend under a pool's block map: what its marks mean, then who holds what (each hold
with its size, computed and context) and each cache entry with its eviction rank; and the
way a session's name is written everywhere (its colour; a click inspects it)."""

from __future__ import annotations

from collections.abc import Iterable

from rich.style import Style
from rich.text import Text

from pooltui.lang.words import number
from pooltui.sim.snapshot import EntryView, PoolView
from pooltui.tui.colors import (
    RANK_GLYPHS,
    Palette,
    contrast_text,
    dimmed_hex,
    on,
    rank_glyph,
    session_hex,
)
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
    "event-shared": ("×N", "held by N holds, of this event"),
    "landing": ("↓", "landing: a reload in flight loads them"),
    "inspected": ("[ ]", "the inspected block"),
    "shared": ("×N", "held by N holds"),
    "many": ("×+", "10 or more holds"),
    "duplicate": (
        sharing.DUPLICATE_GLYPH,
        "a duplicate: another block registered its content first",
    ),
    "ranks": ("0", "cached: eviction rank, 0 first"),
    "violation": ("!!", "blocks of the violation"),
}
MARK_GAP = "   "
SIZE_COLUMN = 30  # a row's "holds …" / "cached …" column, wider when a figure needs it


def rank_key(top: int) -> str:
    """The rank digits' key for ranks 0 .. top: `0`, `0–4`, `0–z`."""
    return "0" if top <= 0 else f"0–{rank_glyph(min(top, len(RANK_GLYPHS) - 1))}"


def marks_key(
    marks: Iterable[str], palette: Palette, width: int | None = None, top_rank: int = 0
) -> Text:
    """What the marks drawn on the block map mean (only those it shows now), each drawn as
    the map draws it, on as many lines of `width` as they take (a mark is never cut).
    `top_rank`: the deepest eviction rank on the map, for the rank digits' key."""
    text = Text()
    line = 0
    for name in marks:
        glyph, meaning = MARKS[name]
        if name == "ranks":
            glyph = rank_key(top_rank)
            if top_rank >= len(RANK_GLYPHS):
                meaning += ", + deeper"
        item = Text()
        style = on(palette.highlight) if name == "event-shared" else None
        item.append(glyph, style or Style(bold=True, color=palette.highlight))
        item.append(f" {meaning}", "dim")
        if line and width is not None and line + len(MARK_GAP) + item.cell_len > width:
            text.append("\n")
            line = 0
        elif line:
            text.append(MARK_GAP)
            line += len(MARK_GAP)
        text.append_text(item)
        line += item.cell_len
    return text


def protected_entries(pool: PoolView) -> tuple[frozenset[int], EntryView | None]:
    """The sessions whose cache entry is protected (each waits on the pool: its own entry is
    its hit, and its admission never evicts it, language.md §8.2), and the entry evicted
    next: the first by rank whose session is not waiting."""
    waiting = frozenset(item.session_id for item in pool.queue)
    victim = next((e for e in pool.entries if e.session_id not in waiting), None)
    return waiting, victim


def _lines(text: Text) -> int:
    return text.plain.count("\n") + 1 if text.plain else 0


def pool_legend(
    pool: PoolView, lines: int, palette: Palette, marks: tuple[str, ...] = (), width: int = 80
) -> Text:
    """Who holds what, under the block map: what the map's marks mean (`marks`, those it
    shows), each hold in its colour with its size and computed / context, then each cache
    entry with its eviction rank (0 goes first). At most `lines` lines; what does not fit
    is counted. The rank digits (`ranks` in `marks`: the map has cached blocks) are keyed
    only when some entry's row, which shows its digit, is among those counted."""
    holds, entries = pool.holds, pool.entries
    total = len(holds) + len(entries)
    top = entries[-1].rank if entries else 0  # in eviction order: the deepest last

    def fit(shown: tuple[str, ...]) -> tuple[Text, list[Text], int]:
        """The marks' key, the shared contents' lines and the rows kept, in `lines`."""
        key = marks_key(shown, palette, width, top)
        left = lines - _lines(key)
        shared = sharing.shared_legend(pool, left, width) if total else []
        left = max(1, left - len(shared))
        return key, shared, total if total <= left else left - 1

    key, shared, keep = fit(tuple(m for m in marks if m != "ranks"))
    if "ranks" in marks and keep < total and keep - len(holds) < len(entries):
        key, shared, keep = fit(marks)  # the digits on the map whose rows are folded
    text = Text()
    text.append_text(key)
    if not total:
        if not pool.allocated and not pool.cached:
            if text:
                text.append("\n")
            text.append("no hold and no cache entry: every block is free", "dim italic")
        return text
    if text:
        text.append("\n")
    for row in shared:
        text.append_text(row + "\n")
    unit = pool.block or 1
    waiting, victim = protected_entries(pool)
    name_w = max([len(h.session) for h in holds] + [len(e.session) for e in entries]) + 2
    shown_e = entries[: max(0, keep - len(holds))]
    sizes = [f"holds {_n(h.blocks, 'block')} ({number(h.size, 4)} units)" for h in holds[:keep]]
    sizes += [
        f"cached {_n(e.blocks or -(-e.units // unit), 'block')} ({number(e.units, 4)} units)"
        for e in shown_e
    ]
    size_w = max([SIZE_COLUMN - 2] + [len(size) for size in sizes]) + 2  # never run together
    rows: list[Text] = []
    for h in holds[:keep]:
        row = Text()
        colour = session_hex(h.session_id)
        row.append("██", Style(color=colour))
        row.append(" ")
        name = session_text(h.session, h.session_id)
        name.pad_right(max(0, name_w - len(h.session)))
        row.append_text(name)
        row.append(sizes[len(rows)].ljust(size_w))
        row.append(f"computed {number(h.computed, 4)}{SEP}context {number(h.context, 4)}", "dim")
        if h.reloading:
            row.append(f"{SEP}reloading {number(h.reloading, 4)} units", "bold")
        rows.append(row)
    for e in shown_e:
        row = Text()
        colour = dimmed_hex(e.session_id, palette.background)
        row.append(f"{rank_glyph(e.rank)} ", Style(color=contrast_text(colour), bgcolor=colour))
        row.append(" ")
        name = session_text(e.session, e.session_id)
        name.pad_right(max(0, name_w - len(e.session)))
        row.append_text(name)
        row.append(sizes[len(rows)].ljust(size_w))
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
