"""lark, imported without `regex` and `interegular`.

lark imports both when they are installed (about half of its import time) but uses them
only for what pooltui does not ask: the `regex` option, and the check of terminal
collisions while it builds a lexer (a warning for a grammar's authors; the parser comes
from the cache, `parser.build_parser`). The package imports this first, before anything
imports lark; both modules stay importable for anyone else afterwards.
"""

from __future__ import annotations

import sys


def _import_lark() -> None:
    if "lark" in sys.modules:
        return
    blocked = [m for m in ("regex", "interegular") if m not in sys.modules]
    for m in blocked:
        sys.modules[m] = None  # type: ignore[assignment]  # `import m` fails: lark goes without
    try:
        import lark  # noqa: F401
    finally:
        for m in blocked:
            if m in sys.modules and sys.modules[m] is None:
                del sys.modules[m]


_import_lark()
