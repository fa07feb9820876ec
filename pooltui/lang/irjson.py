"""The IR as JSON (`pooltui ir SPEC`): deterministic, one object per node.

Each dataclass becomes {"node": TYPE, field: value, ...} in field order; spans are
"line:col"; infinities are the strings "inf" / "-inf"; a CSV source's rows are left out
unless asked for (its `row_count` and `columns` are always there). The program's `source`
is left out: it is the spec itself.
"""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

from pooltui.lang.ir import CSource, Program, Span


def to_data(obj: Any, rows: bool = False) -> Any:
    if isinstance(obj, Span):
        return f"{obj.line}:{obj.col}"
    if isinstance(obj, bool) or obj is None or isinstance(obj, str | int):
        return obj
    if isinstance(obj, float):
        if math.isinf(obj):
            return "inf" if obj > 0 else "-inf"
        if math.isnan(obj):
            return "nan"
        return int(obj) if obj.is_integer() and abs(obj) < 2**53 else obj
    if isinstance(obj, tuple | list):
        return [to_data(x, rows) for x in obj]
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        out: dict[str, Any] = {"node": type(obj).__name__}
        for f in dataclasses.fields(obj):
            if isinstance(obj, Program) and f.name == "source":
                continue
            if isinstance(obj, CSource) and f.name == "rows":
                out["row_count"] = len(obj.rows)
                if rows:
                    out["rows"] = to_data(obj.rows, rows)
                continue
            out[f.name] = to_data(getattr(obj, f.name), rows)
        return out
    raise TypeError(f"not IR: {type(obj).__name__}")  # pragma: no cover


def dumps(program: Program, rows: bool = False) -> str:
    return json.dumps(to_data(program, rows), indent=2, ensure_ascii=False)
