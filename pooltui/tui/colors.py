"""Colours, in one place: the per-session palette (data), and the `Palette` of rich colours
the panels and the block map draw with, resolved from the Textual theme.

Widgets drawn with CSS take their colours from theme variables and component classes
(see each widget's `DEFAULT_CSS`); the panels and the block map build rich `Text` / strips,
so they take a `Palette` the app resolves from the theme's variables on every theme change.
The hex values here are the session hues and the fallbacks when a theme lacks a variable.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
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
NO_SESSION = "#888888"
BLACK = "#000000"
WHITE = "#ffffff"

# Eviction rank glyphs: 0-9 then a-z; deeper ranks show as "+".
RANK_GLYPHS = "0123456789abcdefghijklmnopqrstuvwxyz"


@dataclass(frozen=True)
class Palette:
    """The theme's colours as solid #rrggbb, for rich styles (resolved per theme)."""

    background: str = "#1e1e1e"  # the panels' surface
    free: str = "#3a3a3a"  # a free block
    muted: str = "#808080"  # gutters, secondary figures
    highlight: str = WHITE  # marked blocks' glyphs
    error: str = "#ff4444"  # violations, errors
    allocated: str = "#4e9ae6"  # allocated units in bars and figures
    cached: str = "#808080"  # cached units
    good: str = "#5fc46a"  # invariants hold, decode
    warn: str = "#e6994e"  # preempted, recompute, a watch that changed


# Palette field <- theme variable (over the surface: variables may carry alpha).
THEME_VARIABLES = {
    "muted": "foreground-muted",
    "highlight": "foreground",
    "error": "error",
    "allocated": "primary",
    "cached": "foreground-muted",
    "good": "success",
    "warn": "warning",
}


def palette_from_theme(variables: Mapping[str, str]) -> Palette:
    """The Palette of a theme, from `App.get_css_variables()`; a missing or unreadable
    variable keeps the default."""
    default = Palette()

    def solid(name: str, fallback: str, over: str) -> str:
        value = variables.get(name)
        try:
            return (Color.parse(over) + Color.parse(value)).hex6 if value else fallback
        except Exception:
            return fallback

    background = solid("surface", default.background, BLACK)
    colours = {
        field: solid(name, getattr(default, field), background)
        for field, name in THEME_VARIABLES.items()
    }
    foreground = Color.parse(solid("foreground", default.highlight, background))
    free = foreground.blend(Color.parse(background), 0.75).hex6
    return Palette(background=background, free=free, **colours)


def session_hex(session_id: int | None) -> str:
    if session_id is None:
        return NO_SESSION
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
    """Black or white, whichever reads on `hex_colour`."""
    c = Color.parse(hex_colour)
    return BLACK if c.brightness > 0.5 else WHITE


def on(colour: str, bold: bool = True) -> Style:
    """Text on a background of `colour`, in black or white, whichever reads."""
    return Style(color=contrast_text(colour), bgcolor=colour, bold=bold)
