"""`session NAME from "FILE.jsonl" [limit N]`: one session per line of a JSON Lines file.

Each line is a JSON object; its keys are the session's attributes. A value is a number, a
string (true and false are 1 and 0), or a list of numbers and strings (a tuple). Null, a
nested object, a list of lists: a located error (file, line, column of the key). Every line
has the keys of the first line, no more and no fewer. The file is read line by line
(`sourcefile`), and reading stops at `limit`. Errors never quote the file's content beyond
the keys.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pooltui.lang.errors import Diagnostic
from pooltui.lang.exprs import MAX_INT
from pooltui.lang.ir import Span
from pooltui.lang.sourcefile import (
    KIND_LIST,
    KIND_NUMBER,
    KIND_STRING,
    MAX_ROWS,
    MAX_VALUES,
    BadValue,
    SourceError,
    Table,
    kind_names,
    lines,
    list_value,
    open_source,
    reject_constant,
    scalar,
    shown_name,
    too_many_rows,
    too_many_values,
)

SUFFIXES = (".jsonl", ".ndjson")
# json's messages, without what some of them quote from the line ("Invalid \\escape: 'q'").
_JSON_ERRORS = (
    "Expecting value",
    "Expecting ',' delimiter",
    "Expecting ':' delimiter",
    "Expecting property name enclosed in double quotes",
    "Unterminated string",
    "Invalid control character",
    "Invalid \\uXXXX escape",
    "Invalid \\escape",
    "Extra data",
    "Illegal trailing comma",
)


class _Twice(dict[str, Any]):
    """An object that wrote a key twice (json keeps the last value, silently): `twice`."""

    twice = ""


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) == len(pairs):
        return obj
    seen: set[str] = set()
    twice = _Twice(obj)
    for key, _ in pairs:
        if key in seen:
            twice.twice = key
            break
        seen.add(key)
    return twice


# A line's decoder: as sourcefile.JSON, and it keeps a key written twice for the error.
_LINE = json.JSONDecoder(parse_constant=reject_constant, object_pairs_hook=_object)


def is_jsonl(path: str) -> bool:
    return path.lower().endswith(SUFFIXES)


def _type(v: Any) -> str:
    if isinstance(v, list):
        return "a list"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, bool | int | float):
        return "a number"
    return "null"


def read_jsonl(path: str, shown: str, limit: int | None, span: Span) -> Table:
    with open_source(path, shown, span) as f:
        columns: tuple[str, ...] | None = None
        index: dict[str, int] = {}
        rows: list[tuple[Any, ...]] = []
        bits: list[int] = []
        values = 0
        for n, text in lines(f, shown):
            if not text.strip():
                continue
            if len(rows) >= MAX_ROWS:
                raise too_many_rows(shown, n, MAX_ROWS)

            def err(msg: str, col: int = 1, n: int = n) -> SourceError:
                return SourceError(Diagnostic(Span(shown, n, col, n, col + 1), msg))

            try:
                obj = _LINE.decode(text)
            except BadValue as exc:
                raise err(f"line {n} holds {exc}") from None
            except json.JSONDecodeError as exc:
                why = next((m for m in _JSON_ERRORS if exc.msg.startswith(m)), "a syntax error")
                raise err(f"line {n} is not valid JSON: {why}", exc.colno) from None
            except RecursionError:
                raise err(f"line {n} is nested too deeply") from None
            except ValueError:  # an integer of thousands of digits
                raise err(f"line {n} holds a number too long to read") from None
            if not isinstance(obj, dict):
                raise err(
                    f"line {n} is {_type(obj)}, not a JSON object: a JSON Lines source has "
                    "one object per line, its keys the session's attributes"
                )
            if isinstance(obj, _Twice):  # as a CSV column written twice is
                key = obj.twice
                raise err(f"key '{shown_name(key)}' appears twice", _key_col(text, key, 2))
            if columns is None:
                columns = tuple(obj)
                index = {c: i for i, c in enumerate(columns)}
                bits = [0] * len(columns)
            row: list[Any] = [None] * len(columns)
            for key, v in obj.items():
                i = index.get(key)
                if i is None:
                    raise err(
                        f"key '{shown_name(key)}' is not a key of the first line; every line "
                        "has the same keys",
                        _key_col(text, key),
                    )
                try:
                    if isinstance(v, list):
                        value: Any = list_value(v)
                        values += len(value)
                        bits[i] |= KIND_LIST
                    else:
                        value = scalar(v)
                        bits[i] |= KIND_STRING if isinstance(value, str) else KIND_NUMBER
                        if value.__class__ is int and not -MAX_INT <= value <= MAX_INT:
                            # As a literal in a spec: arithmetic assumes every integer fits.
                            raise err(
                                f"key '{shown_name(key)}' holds an integer beyond 2^53 "
                                "(9,007,199,254,740,992), the largest whole number a spec can "
                                "use; a key that large can be a string",
                                _key_col(text, key),
                            )
                except BadValue as exc:
                    raise err(
                        f"key '{shown_name(key)}' holds {exc}; an attribute is a number, a "
                        "string or a list of numbers and strings",
                        _key_col(text, key),
                    ) from None
                row[i] = value
            if len(obj) != len(columns):
                missing = next(c for c in columns if c not in obj)
                raise err(
                    f"line {n} has no key '{shown_name(missing)}'; every line has the keys of "
                    "the first line"
                )
            values += len(columns)
            if values > MAX_VALUES:
                raise too_many_values(shown, n, MAX_VALUES)
            rows.append(tuple(row))
            if limit is not None and len(rows) >= limit:
                break  # before the next line is read
    if columns is None:
        raise SourceError(
            Diagnostic(
                span, f"'{shown}' holds no JSON object: a JSON Lines source has one per line"
            )
        )
    return Table(columns, tuple(rows), kind_names(bits))


def _key_col(text: str, key: str, nth: int = 1) -> int:
    """The column where `"key":` is written on the line the nth time (1 when it cannot be
    found)."""
    for written in dict.fromkeys((json.dumps(key, ensure_ascii=False), json.dumps(key))):
        found = list(re.finditer(re.escape(written) + r"\s*:", text))
        if len(found) >= nth:
            return found[nth - 1].start() + 1
    return 1
