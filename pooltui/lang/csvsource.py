"""`session NAME from "FILE.csv" [limit N]`: the trace read at compile time.

A cell becomes a number (a plain number as itself, a date-time `YYYY-MM-DD HH:MM:SS[.fffffff]`
as seconds since the first row's date-time in that column) or, when it starts with `[`, a
JSON list of numbers and strings (a tuple). The file is read line by line (`sourcefile`) and
reading stops at `limit`. Errors inside the CSV are located in the CSV (its path, line and
column) and never quote its cells.
"""

from __future__ import annotations

import csv
import datetime as _dt
import re
from typing import Any

from pooltui.lang.errors import Diagnostic
from pooltui.lang.ir import Span
from pooltui.lang.sourcefile import (
    JSON,
    KIND_LIST,
    KIND_NUMBER,
    MAX_LINE_BYTES,
    MAX_ROWS,
    MAX_VALUES,
    BadValue,
    SourceError,
    Table,
    kind_names,
    lines,
    list_value,
    open_source,
    shown_columns,
    shown_name,
    too_many_rows,
    too_many_values,
)

CsvError = SourceError  # the name the checker knew it by

_DATETIME = re.compile(r"(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(\.\d+)?\Z")


# A line may hold up to 1 MiB (sourcefile.MAX_LINE_BYTES), one quoted cell too: the csv
# module's own limit on a field (128 KiB) would refuse a long list of content keys.
csv.field_size_limit(max(csv.field_size_limit(), MAX_LINE_BYTES + 1))


def _split(line: str, shown: str, n: int) -> tuple[list[str], list[int]]:
    """Cells of one line and their 1-based start columns (quotes handled by the csv module;
    a quoted cell starts after its opening quote)."""
    if '"' not in line:
        cells = line.split(",")
        cols: list[int] = []
        col = 1
        for c in cells:
            cols.append(col)
            col += len(c) + 1
        return cells, cols
    try:
        cells = next(csv.reader([line]), [])
    except csv.Error:  # the one it raises on a line: a carriage return outside quotes
        raise _carriage_return(line, shown, n) from None
    return cells, _quoted_starts(line)


def _carriage_return(line: str, shown: str, n: int, last: bool = False) -> SourceError:
    """A carriage return that does not end line `n`, located at it. `last`: the header is
    the file's only line, as a file whose lines end in a bare \\r (old Mac software) reads."""
    col = _bare_return(line) or 1
    mac = ", and this file's lines end in a bare carriage return (old Mac line ends): "
    return SourceError(
        Diagnostic(
            Span(shown, n, col, n, col + 1),
            f"line {n} holds a carriage return (\\r) that does not end it; a CSV line ends "
            "with \\n or \\r\\n" + (mac + "convert them, e.g. tr '\\r' '\\n'" if last else ""),
        )
    )


def _bare_return(line: str) -> int | None:
    """The 1-based column of the first carriage return outside quotes (None if none)."""
    quoted = False
    for i, ch in enumerate(line):
        if ch == '"':
            quoted = not quoted  # `""` inside a quoted cell flips twice
        elif ch == "\r" and not quoted:
            return i + 1
    return None


def _quoted_starts(line: str) -> list[int]:
    """Where each cell of a line with quotes starts, cut as csv.reader cuts it: a quote
    opens a quoted cell only as its first character, `""` inside one is a quote. (The
    cell's text cannot be searched for: `""` is one character in it.)"""
    cols: list[int] = []
    i, end = 0, len(line)
    while True:
        if i < end and line[i] == '"':
            cols.append(i + 2)
            i += 1
            while i < end:
                if line[i] == '"':
                    if line.startswith('""', i):
                        i += 2
                        continue
                    i += 1
                    break
                i += 1
        else:
            cols.append(i + 1)
        comma = line.find(",", i)
        if comma < 0:
            return cols
        i = comma + 1


def read_table(path: str, shown: str, limit: int | None, span: Span) -> Table:
    """Read and convert the CSV at `path` (`shown` is the name used in messages)."""
    with open_source(path, shown, span) as f:
        return _read(lines(f, shown), shown, limit, span)


def _read(it: Any, shown: str, limit: int | None, span: Span) -> Table:
    columns: tuple[str, ...] | None = None
    rows: list[tuple[Any, ...]] = []
    bits: list[int] = []
    epoch: list[tuple[int, float] | None] = []
    day_cache: dict[str, int] = {}
    values = 0
    for n, raw in it:
        if columns is None:
            if not raw.strip():
                raise SourceError(Diagnostic(Span(shown, n, 1, n, 2), "the CSV has no header line"))
            if "\r" in raw and _bare_return(raw):  # lines ended by a bare \r read as one
                try:
                    last = next(it, None) is None
                except SourceError:  # (the next line's own error comes after this one)
                    last = False
                raise _carriage_return(raw, shown, n, last)
            header, cols = _split(raw, shown, n)
            columns = tuple(h.strip() for h in header)
            seen: set[str] = set()
            for c, c0 in zip(columns, cols, strict=True):
                if c in seen:
                    raise SourceError(
                        Diagnostic(
                            Span(shown, n, c0, n, c0 + max(1, len(c))),
                            f"column '{shown_name(c)}' appears twice",
                        )
                    )
                seen.add(c)
            bits = [0] * len(columns)
            epoch = [None] * len(columns)
            continue
        if not raw.strip():
            continue  # blank lines (a trailing one, usually) carry no row
        if len(rows) >= MAX_ROWS:
            raise too_many_rows(shown, n, MAX_ROWS)
        cells, cols = _split(raw, shown, n)
        width = len(columns)
        if len(cells) != width:
            raise SourceError(
                Diagnostic(
                    Span(shown, n, 1, n, len(raw) + 1),
                    f"row has {len(cells)} cell{'s' if len(cells) != 1 else ''}, "
                    f"the header has {width} ({shown_columns(columns)})",
                )
            )
        row: list[Any] = []
        values += width
        for i, cell in enumerate(cells):
            s = cell.strip()
            try:
                v: Any = float(s)
            except ValueError:
                if s.startswith("["):
                    v = _json_list(s, columns[i], _at(shown, n, cols[i], cell))
                    values += len(v)
                    bits[i] |= KIND_LIST
                    row.append(v)
                    continue
                m = _DATETIME.match(s)
                stamp = _seconds(m, day_cache) if m is not None else None
                if stamp is None:
                    raise SourceError(
                        Diagnostic(
                            _at(shown, n, cols[i], cell),
                            f"a cell in column '{shown_name(columns[i])}' is neither a number, "
                            "a date-time (YYYY-MM-DD HH:MM:SS) nor a JSON list ([…])",
                        )
                    ) from None
                e = epoch[i]
                if e is None:
                    epoch[i] = e = stamp
                # whole seconds and fractions apart, so 2023's epoch seconds keep microseconds
                v = (stamp[0] - e[0]) + (stamp[1] - e[1])
            else:
                if v != v:  # float() reads "nan"; NaN never exists in a spec (decisions.md)
                    raise SourceError(
                        Diagnostic(
                            _at(shown, n, cols[i], cell),
                            f"a cell in column '{shown_name(columns[i])}' is NaN, which is "
                            "not a number",
                        )
                    )
            bits[i] |= KIND_NUMBER
            row.append(v)
        if values > MAX_VALUES:
            raise too_many_values(shown, n, MAX_VALUES)
        rows.append(tuple(row))
        if limit is not None and len(rows) >= limit:
            break  # before the next line is read
    if columns is None:
        raise SourceError(Diagnostic(Span(shown, 1, 1, 1, 2), "the CSV has no header line"))
    return Table(columns, tuple(rows), kind_names(bits))


def _at(shown: str, n: int, col: int, cell: str) -> Span:
    return Span(shown, n, col, n, col + max(1, len(cell)))


def _json_list(s: str, column: str, where: Span) -> tuple[int | float | str, ...]:
    col = shown_name(column)
    try:
        v = JSON.decode(s)
    except BadValue as exc:
        why = f"it holds {exc}"
    except RecursionError:
        why = "it is nested too deeply"
    except ValueError:  # not JSON (JSONDecodeError), or a number too long to convert
        why = "it is not valid JSON"
    else:
        if not isinstance(v, list):
            why = "it is not valid JSON"  # `[1] 2` and the like: JSON, then more
        else:
            try:
                return list_value(v)
            except BadValue as exc:
                why = f"it holds {exc}"
    raise SourceError(
        Diagnostic(
            where,
            f"a cell in column '{col}' starts with '[' but is not a JSON list of numbers or "
            f"strings: {why}",
        )
    )


def _seconds(m: re.Match[str], day_cache: dict[str, int]) -> tuple[int, float] | None:
    """(whole seconds, fraction) of a date-time; None when it is not a real date-time."""
    key = m.group(1) + m.group(2) + m.group(3)
    day = day_cache.get(key)
    if day is None:
        try:
            day = _dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3))).toordinal()
        except ValueError:
            return None
        day_cache[key] = day
    hh, mm, ss = int(m.group(4)), int(m.group(5)), int(m.group(6))
    if hh > 23 or mm > 59 or ss > 60:
        return None
    frac = m.group(7)
    return day * 86400 + hh * 3600 + mm * 60 + ss, (float(frac) if frac else 0.0)
