"""Helpers for the front end's tests."""

from __future__ import annotations

import dataclasses
from typing import Any

from pooltui.lang.ir import NO_SPAN, Span


def strip_spans(obj: Any) -> Any:
    """The same IR with every span replaced by NO_SPAN (to compare against hand-built IR)."""
    if isinstance(obj, Span):
        return NO_SPAN
    if isinstance(obj, tuple):
        return tuple(strip_spans(x) for x in obj)
    if isinstance(obj, list):
        return [strip_spans(x) for x in obj]
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        changes = {f.name: strip_spans(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
        return dataclasses.replace(obj, **changes)
    return obj
