"""Colours: one per session (from its `session_id`), the same in every panel."""

from __future__ import annotations

from functools import lru_cache

from rich.style import Style
from textual.color import Color

# Distinct hues that read on dark and light themes; a session keeps its colour forever
# because the index comes from its stable session_id.
PALETTE = (
    "#4e9ae6",
    "#e6994e",
    "#5fc46a",
    "#d9534f",
    "#a07ad6",
    "#c9a227",
    "#3bb8b0",
    "#e374c2",
    "#8fa13a",
    "#6f7de8",
    "#d67a5a",
    "#48a7d6",
)

# Eviction rank glyphs: 0-9 then a-z; deeper ranks show as "+".
RANK_GLYPHS = "0123456789abcdefghijklmnopqrstuvwxyz"


def session_hex(session_id: int | None) -> str:
    if session_id is None:
        return "#888888"
    return PALETTE[session_id % len(PALETTE)]


def rank_glyph(rank: int | None) -> str:
    if rank is None:
        return " "
    return RANK_GLYPHS[rank] if 0 <= rank < len(RANK_GLYPHS) else "+"


@lru_cache(maxsize=4096)
def session_style(session_id: int | None, bold: bool = False) -> Style:
    return Style(color=session_hex(session_id), bold=bold)


@lru_cache(maxsize=4096)
def dimmed_hex(session_id: int | None, background: str) -> str:
    """The session's colour faded towards the background: cached blocks."""
    base = Color.parse(session_hex(session_id))
    return base.blend(Color.parse(background), 0.6).hex6


def contrast_text(hex_colour: str) -> str:
    c = Color.parse(hex_colour)
    return "#000000" if c.brightness > 0.5 else "#ffffff"
