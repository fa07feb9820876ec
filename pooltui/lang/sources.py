"""A session's source, `session NAME from "FILE" [limit N]`, read at compile time: the
glue between the checker and the readers (`csvsource`, `jsonlsource`), and the `Table`
the checker keeps of it.

It may not parse a file itself (the readers do) or check the session's statements.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from pooltui.lang import ast as A
from pooltui.lang import constants
from pooltui.lang.csvsource import read_table
from pooltui.lang.ir import Span
from pooltui.lang.jsonlsource import is_jsonl, read_jsonl
from pooltui.lang.sourcefile import SourceError

if TYPE_CHECKING:
    from pooltui.lang.checker import Checker


@dataclass(frozen=True, slots=True)
class Table:
    path: str
    written: str
    limit: int | None
    columns: tuple[str, ...]
    rows: tuple[tuple[object, ...], ...]
    span: Span
    format: Literal["csv", "jsonl"]
    kinds: tuple[str, ...]


def read_source(ck: Checker, s: A.SessionD) -> Table | None:
    assert s.path is not None and s.path_span is not None
    limit: int | None = None
    if s.limit is not None:
        v = constants.positive(ck, s.limit, "limit", whole=True, allow_inf=False)
        if v is None:
            return None
        limit = int(v)
    full = s.path if os.path.isabs(s.path) else os.path.join(ck.base_dir, s.path)
    jsonl = is_jsonl(s.path)
    try:
        table = (read_jsonl if jsonl else read_table)(full, s.path, limit, s.path_span)
    except SourceError as exc:
        d = exc.diagnostic
        if d.span.file != ck.file:
            ck.sources[d.span.file] = None  # a source's lines are never shown
        ck.diags.append(d)
        return None
    return Table(
        os.path.abspath(full), s.path, limit, table.columns, table.rows, s.path_span,
        "jsonl" if jsonl else "csv", table.kinds,
    )  # fmt: skip
