"""The legend under a pool's block map: what its marks mean, then who holds what (each hold
with its size, computed and context) and each cache entry with its eviction rank; and the
way a session's name is written everywhere (its colour; a click inspects it)."""

from __future__ import annotations

from collections.abc import Iterable

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text

from pooltui.lang.words import number
from pooltui.sim.snapshot import EntryView, HoldView, PoolView
from pooltui.tui.colors import (
    RANK_GLYPHS,
    Palette,
    contrast_text,
    dimmed_hex,
    on,
    rank_glyph,
    session_hex,
)
from pooltui.tui.prose import flowed
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
    items: list[Text] = []
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
        items.append(item)
    return flowed([items], width, MARK_GAP)


def key_lines(marks: Iterable[str], palette: Palette, width: int) -> int:
    """The lines the marks' key takes above a legend that shows all its rows (the rank
    digits, then on each entry's row, are not keyed): a legend's least height counts
    them as well as its rows."""
    return _lines(marks_key([m for m in marks if m != "ranks"], palette, width))


def waiting_hits(pool: PoolView) -> dict[int, int]:
    """For each cache entry (by its index in `pool.entries`) of a session waiting on the
    pool: how many of its blocks that session's admission would hit, as planned now. Those
    leave the entry when it is admitted, before anything is evicted for it (language.md
    §8.2); until then the entry is evicted in its rank like any other (§5.2)."""
    unit = pool.block or 1
    hits = {item.session_id: item.hit // unit for item in pool.queue if item.hit}
    out: dict[int, int] = {}
    if not hits or pool.blocks is None:
        return out
    contents = pool.blocks.contents
    for i, e in enumerate(pool.entries):
        upto = hits.get(e.session_id, 0)
        n = sum(1 for b in e.physical if b < len(contents) and contents[b][1] < upto)
        if n:
            out[i] = n
    return out


def _lines(text: Text) -> int:
    return text.plain.count("\n") + 1 if text.plain else 0


def pool_legend(
    pool: PoolView,
    lines: int,
    palette: Palette,
    marks: tuple[str, ...] = (),
    width: int = 80,
    fold: bool = False,
) -> Text:
    """Who holds what, under the block map: what the map's marks mean (`marks`, those it
    shows), each hold in its colour with its size and computed / context (a reloading one
    says so first), then each cache entry with its eviction rank (0 goes first). At most
    `lines` lines; what does not fit is counted. The rank digits (`ranks` in `marks`: the
    map has cached blocks) are keyed only when some entry's row, which shows its digit, is
    among those counted. `fold`: the shared contents on one line (a lone pool's map short
    of rows)."""
    holds, entries = pool.holds, pool.entries
    total = len(holds) + len(entries)
    top = entries[-1].rank if entries else 0  # in eviction order: the deepest last

    def fit(shown: tuple[str, ...]) -> tuple[Text, list[Text], int]:
        """The marks' key, the shared contents' lines and the rows kept, in `lines`."""
        key = marks_key(shown, palette, width, top)
        left = lines - _lines(key)
        shared = sharing.shared_legend(pool, left, width, fold) if total else []
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
    shown_e = entries[: max(0, keep - len(holds))]
    rows = _fit(pool, holds[:keep], shown_e, palette, width)
    if keep < total:
        more_h = max(0, len(holds) - keep)
        more_e = total - keep - more_h
        parts = []
        if more_h:
            parts.append(_n(more_h, "hold"))
        if more_e:
            parts.append(_n(more_e, "cache entry", "cache entries"))
        more = Text("+" + " and ".join(parts) + " more", "dim")
        more.truncate(width, overflow="ellipsis")
        rows.append(more)
    for i, row in enumerate(rows):
        if i:
            text.append("\n")
        text.append_text(row)
    return text


def _fit(
    pool: PoolView,
    holds: tuple[HoldView, ...],
    entries: tuple[EntryView, ...],
    palette: Palette,
    width: int,
) -> list[Text]:
    """The rows of `holds` and `entries`, each one line of at most `width` cells: the holds
    in the first form all of theirs fit, the entries likewise (the figures whole, then
    without the units, then the notes shortened, then the words), else the last form with
    its last notes left out (`_cut`): a row never wraps, a note is never cut in the
    middle, and a kind's rows keep one column and one form."""
    forms = [_rows(pool, holds, entries, palette, form) for form in range(FORMS)]
    rows: list[Text] = []
    for lo, hi in ((0, len(holds)), (len(holds), len(holds) + len(entries))):
        kind = next((f[lo:hi] for f in forms if all(r.cell_len <= width for r in f[lo:hi])), None)
        if kind is None:
            kind = [_cut(row, width) for row in forms[-1][lo:hi]]
        rows += kind
    return rows


def _cut(row: Text, width: int) -> Text:
    """`row` in `width` cells, its last notes left out whole (`rank 0 · …`), never cut
    inside one; only a row whose first note does not fit either is cut where it ends."""
    if row.cell_len <= width:
        return row
    plain = row.plain
    ends = [i for i in range(len(plain)) if plain.startswith(SEP, i)]
    for end in reversed(ends):
        if cell_len(plain[:end]) + len(SEP) + 1 <= width:
            return row[:end] + Text(SEP + "…", "dim")
    row.truncate(width, overflow="ellipsis")
    return row


FORMS = 5  # a row's forms, the widest first: see `_rows`


def _rows(
    pool: PoolView,
    holds: tuple[HoldView, ...],
    entries: tuple[EntryView, ...],
    palette: Palette,
    form: int,
) -> list[Text]:
    """A row per hold then per entry, in form 0 (`holds 9 blocks (142 units)`, a size
    column of at least SIZE_COLUMN), 1 (`holds 9 blocks`), 2 (its notes shortened:
    `ended`, `would hit 8`, `rank 0` without `= evicted next`, which the rank's digit and
    the marks' key say), 3 (`9 blocks`) or 4 (an entry's rank left to its digit when
    the row has more to say: `waits; would hit 8`, `ended`)."""
    unit = pool.block or 1
    hits = waiting_hits(pool)
    names = [h.session for h in holds] + [e.session for e in entries]
    name_w = max(len(name) for name in names) + 2 if names else 0

    def size(word: str, blocks: int, units: int) -> str:
        if form >= 3:
            return _n(blocks, "block")
        text = f"{word} {_n(blocks, 'block')}"
        return f"{text} ({number(units, 4)} units)" if form == 0 else text

    sizes = [size("holds", h.blocks, h.size) for h in holds]
    sizes += [size("cached", e.blocks or -(-e.units // unit), e.units) for e in entries]
    least = SIZE_COLUMN - 2 if form == 0 else 0
    size_w = max([least] + [len(s) for s in sizes]) + 2  # never run together
    rows: list[Text] = []
    for h in holds:
        row = Text()
        row.append("██", Style(color=session_hex(h.session_id)))
        row.append(" ")
        _name(row, h.session, h.session_id, name_w)
        row.append(sizes[len(rows)].ljust(size_w))
        if h.reloading:  # first: what its ↓ blocks are, kept when a narrow row is cut
            units = " units" if form < 2 else ""  # short notes from form 2
            row.append(f"reloading {number(h.reloading, 4)}{units}", "bold")
            row.append(SEP, "dim")
        row.append(f"computed {number(h.computed, 4)}{SEP}context {number(h.context, 4)}", "dim")
        rows.append(row)
    for i, e in enumerate(entries):
        row = Text()
        colour = dimmed_hex(e.session_id, palette.background)
        row.append(f"{rank_glyph(e.rank)} ", Style(color=contrast_text(colour), bgcolor=colour))
        row.append(" ")
        _name(row, e.session, e.session_id, name_w)
        row.append(sizes[len(rows)].ljust(size_w))
        # The rank is the simulator's eviction order (language.md §5.2): the next eviction
        # takes rank 0, a waiting session's entry too, but for the blocks that session's
        # own admission hits (§8.2), which leave the entry before it evicts anything.
        notes: list[tuple[str, str]] = [
            (f"rank {e.rank}" + (" = evicted next" if e.rank == 0 and form < 2 else ""), "dim")
        ]
        hit = hits.get(i)
        if hit:
            what = _n(hit, "block") if form < 2 else str(hit)
            notes.append((f"waits; would hit {what}", "bold"))
        if e.spilled:
            notes.append(("spilled here", "dim"))
        if not e.alive:
            notes.append(("session ended" if form < 2 else "ended", "dim"))
        if form == 4 and len(notes) > 1:
            notes = notes[1:]  # the row's digit is its rank; what else it says matters more
        for n, (note, style) in enumerate(notes):
            row.append(f"{SEP if n else ''}{note}", style)
        rows.append(row)
    return rows


def _name(row: Text, session: str, session_id: int, width: int) -> None:
    name = session_text(session, session_id)
    name.pad_right(max(0, width - len(session)))
    row.append_text(name)
