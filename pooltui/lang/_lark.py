"""lark, imported without loading `regex` and `interegular` up front.

lark imports both when they are installed (about half of its import time) but uses them
only for what a plain parse does not ask: the `regex` option (which pooltui never sets:
lark goes without `regex`), and the check of terminal collisions while it builds a lexer
(for a grammar's authors: `interegular` is then imported on first use; the parser itself
comes from the cache, `parser.build_parser`). The package imports this first, before
anything imports lark; `regex` stays importable for anyone else afterwards.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from typing import Any


class _OnFirstUse(types.ModuleType):
    """Stands for a module until an attribute is read: then imports it for real."""

    def __getattr__(self, name: str) -> Any:
        if sys.modules.get(self.__name__) is self:
            del sys.modules[self.__name__]
        return getattr(importlib.import_module(self.__name__), name)


def _import_lark() -> None:
    if "lark" in sys.modules:
        return
    blocked = [m for m in ("regex",) if m not in sys.modules]
    for m in blocked:
        sys.modules[m] = None  # type: ignore[assignment]  # `import regex` fails: lark goes without
    later = "interegular" not in sys.modules and importlib.util.find_spec("interegular")
    if later:
        sys.modules["interegular"] = _OnFirstUse("interegular")
    try:
        import lark.lexer  # noqa: F401
    finally:
        for m in blocked:
            if m in sys.modules and sys.modules[m] is None:
                del sys.modules[m]
        if later and isinstance(sys.modules.get("interegular"), _OnFirstUse):
            del sys.modules["interegular"]  # lark keeps its stand-in; others import it


_import_lark()
