"""Shared and duplicate blocks in the debugger: the block map's marks, the head line's
counts, the legend's content groups and what the block inspector says about a block.

A block is shared when more than one hold has it in its block table (reference count > 1,
content-and-reload.md §1); it is a duplicate when another block registered its content
first (§2). Pure functions of a `PoolView`: the panels call them, nothing here touches a
widget.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rich.style import Style
from rich.text import Text

from pooltui.lang.words import number
from pooltui.sim.snapshot import BlockMap, BlockOwner, PoolView
from pooltui.tui.colors import Palette, contrast_text, session_hex

SHARED_GLYPH = "×"  # a shared block's cell: × then its reference count
DUPLICATE_GLYPH = "="  # a duplicate's cell: its second character (its first is kept)
GROUP_LINES = 3  # legend lines for content groups at most; the rest are counted


def shared_cell(count: int) -> str:
    """A shared block's two-character cell: `×2` … `×9`, `×+` past nine holders."""
    return SHARED_GLYPH + (str(count) if count < 10 else "+")


def own_tokens(bm: BlockMap) -> Callable[[int], str]:
    """How a block's private stream is said: `chat[2]'s own tokens`, the session named as
    everywhere else (a private block is its session's only, held or cached: one of the
    map's owners), not the simulator's `private 2`."""
    names = {o.session_id: o.session for o in bm.owners}
    return lambda sid: f"{names.get(sid, f'session #{sid}')}'s own tokens"


def shared_blocks(pool: PoolView) -> frozenset[int]:
    """The blocks of `pool` more than one hold holds."""
    bm = pool.blocks
    return frozenset(bm.sharers) if bm is not None else frozenset()


@dataclass(frozen=True, slots=True)
class SharedGroup:
    """Shared blocks with the same content (a content's summary, or the first and last of
    a chain of keys the same holds share), and the sessions holding them, first first."""

    content: str
    blocks: int
    holders: tuple[BlockOwner, ...]


def shared_groups(pool: PoolView) -> list[SharedGroup]:
    """The pool's shared blocks grouped by content, most blocks first.

    Blocks whose piece keys read the same (a system prompt `tenant : 512` is one key over
    many blocks) make one group; groups the same holders hold are then one line (a list
    key gives every block its own key: a chain of them shared by one conversation's turns
    reads `17 … 48`)."""
    bm = pool.blocks
    if bm is None or not bm.sharers:
        return []
    by_content: dict[str, list[int]] = {}
    own = own_tokens(bm)
    for b in sorted(bm.sharers):
        by_content.setdefault(bm.content(b, own) or "?", []).append(b)
    by_holders: dict[tuple[int, ...], list[tuple[str, list[int]]]] = {}
    for content, blocks in by_content.items():
        key = tuple(sorted({o.session_id for b in blocks for o in bm.holders(b)}))
        by_holders.setdefault(key, []).append((content, blocks))
    groups = []
    for parts in by_holders.values():
        blocks = [b for _, bs in parts for b in bs]
        content = parts[0][0] if len(parts) == 1 else f"{parts[0][0]} … {parts[-1][0]}"
        groups.append(SharedGroup(content, len(blocks), _holders(bm, blocks)))
    groups.sort(key=lambda g: (-g.blocks, g.content))
    return groups


def _holders(bm: BlockMap, blocks: list[int]) -> tuple[BlockOwner, ...]:
    seen: dict[int, BlockOwner] = {}
    for b in blocks:
        for o in bm.holders(b):
            seen.setdefault(o.session_id, o)
    return tuple(seen.values())


def _n(count: int, one: str) -> str:
    return f"{count} {one}{'' if count == 1 else 's'}"


def _names(holders: tuple[BlockOwner, ...], room: int) -> Text:
    """Holders' names in their colours, as many as fit in `room` characters."""
    text = Text()
    for i, o in enumerate(holders):
        word = ("" if not i else ", ") + o.session
        if text.cell_len + len(word) + 5 > room and i:
            text.append(f", +{len(holders) - i}", "dim")
            break
        if i:
            text.append(", ", "dim")
        meta = {"@click": f"app.inspect_session({o.session_id})"}
        text.append(o.session, Style(color=session_hex(o.session_id), meta=meta))
    return text


def shared_legend(pool: PoolView, lines: int, width: int = 100, fold: bool = False) -> list[Text]:
    """The legend's lines for shared blocks, one per content group:
    `×  content 1: 32 blocks, 5 holders: chat[3], chat[7], +3`, at most `lines - 1` of them
    (and GROUP_LINES), so one line is left for the holds; groups that do not fit share the
    last line, without their holders' names. `fold`: every group on one line (`folded`).
    Each line fits in `width`."""
    groups = shared_groups(pool)
    if fold and len(groups) > 1:
        return [folded(groups, width)]
    limit = max(1, min(lines - 1, GROUP_LINES))
    rows = []
    full = groups if len(groups) <= limit else groups[: limit - 1]
    for g in full:
        row = _glyph(g)
        row.append(
            f"content {g.content}: {_n(g.blocks, 'block')}, {_n(len(g.holders), 'holder')}: "
        )
        row.append_text(_names(g.holders, max(10, width - row.cell_len)))
        rows.append(row)
    rest = groups[len(full) :]
    if rest:
        row = _glyph(rest[0])
        row.append(" · ".join(f"content {g.content}: {_n(g.blocks, 'block')}, "
                              f"{_n(len(g.holders), 'holder')}" for g in rest))  # fmt: skip
        row.truncate(width, overflow="ellipsis")
        rows.append(row)
    return rows


def folded(groups: list[SharedGroup], width: int) -> Text:
    """Every group on one line, for a map short of rows: `×  3 contents shared: 0: 32
    blocks, 6 holders · 1: 32 blocks, 5 holders · +1 more`, each group whole or counted."""
    row = _glyph(groups[0])
    row.append(f"{len(groups)} contents shared: ")
    for i, g in enumerate(groups):
        item = f"{'' if not i else ' · '}{g.content}: {_n(g.blocks, 'block')}, {_n(len(g.holders), 'holder')}"
        more = f" · +{len(groups) - i - 1} more" if i < len(groups) - 1 else ""
        if i and row.cell_len + len(item) + len(more) > width:
            row.append(f" · +{len(groups) - i} more", "dim")
            break
        row.append(item)
    row.truncate(width, overflow="ellipsis")
    return row


def legend_lines(pool: PoolView) -> int:
    """Lines a lone pool's legend takes more for its shared contents (the map gives them):
    one a group, GROUP_LINES at most, as `shared_legend` shows them (not GROUP_LINES for
    one group: the map gave up lines the legend filled with more holds)."""
    return min(GROUP_LINES, len(shared_groups(pool))) if pool.shared else 0


def _glyph(group: SharedGroup) -> Text:
    """A group's key: the shared mark in its first holder's colour, as on the map."""
    colour = session_hex(group.holders[0].session_id if group.holders else None)
    text = Text()
    text.append(SHARED_GLYPH + " ", Style(color=contrast_text(colour), bgcolor=colour, bold=True))
    text.append(" ")
    return text


def shared_head(pool: PoolView, palette: Palette) -> Text:
    """The head line's counts of shared and of duplicate blocks (each only when some are)."""
    text = Text()
    for word, count in (("shared", pool.shared), ("duplicates", pool.duplicates)):
        if count:
            text.append(f" · {word} ", "dim")
            text.append(number(count, 4), Style(bold=True, color=palette.highlight))
    return text


def block_sharing_text(pool: PoolView, block: int) -> Text:
    """What the block inspector says of a block beyond its owner: its state, reference
    count, holders (first holder first) and content. Nothing for a free block."""
    bm = pool.blocks
    text = Text()
    if bm is None or not 0 <= block < bm.nblocks:
        return text
    info = bm.info(block, own_tokens(bm))
    if info.state == "free":
        return text
    text.append(f"state {info.state}{' · '}reference count {info.count}")
    if info.count > 1:
        text.append(" (shared)", Style(bold=True))
    flags = []
    if info.registered:
        flags.append("registered: others can hit it")
    if info.duplicate:
        flags.append("a duplicate: another block registered the same content first")
    if flags:
        text.append(" · " + " · ".join(flags), "dim")
    text.append("\n")
    if info.holders:
        text.append(f"{_n(len(info.holders), 'holder')}: ")
        for i, o in enumerate(info.holders):
            if i:
                text.append(", ", "dim")
            meta = {"@click": f"app.inspect_session({o.session_id})"}
            text.append(o.session, Style(color=session_hex(o.session_id), bold=True, meta=meta))
        if len(info.holders) > 1:
            text.append(" (first holder first)", "dim")
        text.append("\n")
    text.append(f"content: {info.content or 'none recorded'}\n")
    return text
