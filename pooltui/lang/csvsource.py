"""`session NAME from "FILE.csv" [limit N]`: the trace read at compile time.

Every cell becomes a number: a plain number as itself, a date-time
`YYYY-MM-DD HH:MM:SS[.fffffff]` as seconds since the first row's date-time in that column.
Errors inside the CSV are located in the CSV (its path, line and column), so they render
with the CSV's own line under them.
"""

from __future__ import annotations

import csv
import datetime as _dt
import re
from dataclasses import dataclass

from pooltui.lang.errors import Diagnostic
from pooltui.lang.ir import Span

_DATETIME = re.compile(r"(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(\.\d+)?\Z")


class CsvError(Exception):
    def __init__(self, diagnostic: Diagnostic, text: str | None = None):
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic
        self.text = text  # the CSV's text, to render the culprit's line; None: not readable


@dataclass(frozen=True, slots=True)
class Table:
    columns: tuple[str, ...]
    rows: tuple[tuple[float, ...], ...]
    text: str


def _split(line: str) -> tuple[list[str], list[int]]:
    """Cells of one line and their 1-based start columns (quotes handled by the csv module)."""
    cells = line.split(",") if '"' not in line else next(csv.reader([line]), [])
    cols: list[int] = []
    col = 1
    if '"' not in line:
        for c in cells:
            cols.append(col)
            col += len(c) + 1
    else:  # a quoted line: columns are approximate (the cell's text is searched for)
        at = 0
        for c in cells:
            found = line.find(c, at)
            found = at if found < 0 else found
            cols.append(found + 1)
            at = found + len(c)
    return cells, cols


def read_table(path: str, shown: str, limit: int | None, span: Span) -> Table:
    """Read and convert the CSV at `path` (`shown` is the name used in messages)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise CsvError(Diagnostic(span, f"cannot read '{shown}': {reason}")) from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CsvError(
            Diagnostic(span, f"cannot read '{shown}': not UTF-8 text (byte {exc.start})")
        ) from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not lines or not lines[0].strip():
        raise CsvError(Diagnostic(Span(shown, 1, 1, 1, 2), "the CSV has no header line"), text)
    header, _ = _split(lines[0].rstrip("\r"))
    columns = tuple(h.strip() for h in header)
    seen: set[str] = set()
    for c in columns:
        if c in seen:
            raise CsvError(
                Diagnostic(Span(shown, 1, 1, 1, len(lines[0]) + 1), f"column '{c}' appears twice"),
                text,
            )
        seen.add(c)
    width = len(columns)
    rows: list[tuple[float, ...]] = []
    epoch: list[tuple[int, float] | None] = [None] * width
    day_cache: dict[str, int] = {}
    for lineno in range(1, len(lines)):
        if limit is not None and len(rows) >= limit:
            break
        raw = lines[lineno].rstrip("\r")
        if not raw.strip():
            continue  # blank lines (a trailing one, usually) carry no row
        cells, cols = _split(raw)
        if len(cells) != width:
            n = lineno + 1
            raise CsvError(
                Diagnostic(
                    Span(shown, n, 1, n, len(raw) + 1),
                    f"row has {len(cells)} cell{'s' if len(cells) != 1 else ''}, "
                    f"the header has {width} ({', '.join(columns)})",
                ),
                text,
            )
        row: list[float] = []
        for i, cell in enumerate(cells):
            s = cell.strip()
            try:
                v = float(s)
            except ValueError:
                m = _DATETIME.match(s)
                stamp = _seconds(m, day_cache) if m is not None else None
                if stamp is None:
                    n = lineno + 1
                    c0 = cols[i]
                    raise CsvError(
                        Diagnostic(
                            Span(shown, n, c0, n, c0 + max(1, len(cell))),
                            f"cell '{s[:40]}' in column '{columns[i]}' is neither a number "
                            "nor a date-time (YYYY-MM-DD HH:MM:SS)",
                        ),
                        text,
                    ) from None
                e = epoch[i]
                if e is None:
                    epoch[i] = e = stamp
                # whole seconds and fractions apart, so 2023's epoch seconds keep microseconds
                v = (stamp[0] - e[0]) + (stamp[1] - e[1])
            row.append(v)
        rows.append(tuple(row))
    return Table(columns, tuple(rows), text)


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
