"""The spec's opening comment as prose for the Notes panel: its hard line breaks are the
author's terminal width, not meaning, so lines are joined into paragraphs and list items
(a blank line ends a paragraph; a line starting with `-`, `*` or `N.` starts an item)."""

from __future__ import annotations

import re

_ITEM = re.compile(r"^\s*(?:[-*]|\d+[.)])\s+")


def reflow(text: str) -> str:
    blocks: list[str] = []
    current: list[str] = []

    def flush() -> None:
        if current:
            blocks.append(" ".join(current))
            current.clear()

    for raw in text.split("\n"):
        line = raw.strip()
        if not line:
            flush()
            blocks.append("")
            continue
        if _ITEM.match(raw):
            flush()
            current.append(raw.rstrip())
            continue
        current.append(line)
    flush()
    out = "\n".join(blocks)
    return re.sub(r"\n{3,}", "\n\n", out).strip("\n")
