"""Opening a session source (`session NAME from "FILE" …`) safely, and reading it line by line.

A source names any file the user can read, inside the spec's folder or not, but it must be
a **regular file**: a device (`/dev/zero`), a FIFO, a socket, a directory or a file of a kernel
file system (`/proc`, `/sys`) is refused before anything is read. The file is opened
non-blocking, so a path swapped for a FIFO after the check cannot block either, and checked
again on the open descriptor.

Reading is streaming: one line at a time, at most MAX_LINE_BYTES each, and the readers stop at
the source's `limit`. MAX_ROWS and MAX_VALUES bound what a source may hold in memory.

Errors never quote the file's content: they give the file, the line (and column where one is
known) and say what is wrong. Only the column names a reader parsed from the file (a CSV's
header, a JSON object's keys) are named, clipped and with control characters escaped.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

from pooltui.lang.errors import Diagnostic, escaped
from pooltui.lang.ir import Span

MAX_LINE_BYTES = 1 << 20  # one line of a source (a JSON object with its lists, a CSV row)
MAX_ROWS = 1_000_000  # sessions from one source
MAX_VALUES = 5_000_000  # cells plus list elements, all rows of one source together
KERNEL_FILE_SYSTEMS = ("/proc", "/sys", "/dev")


class SourceError(Exception):
    """A located error about a source. Its diagnostic's span is in the spec (the file cannot
    be read) or in the source file (file, line, column); the latter renders without a
    source line, so the file's content is never shown."""

    def __init__(self, diagnostic: Diagnostic):
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


@dataclass(frozen=True, slots=True)
class Table:
    """A source as read: column names, then one tuple of values per row (a session).

    A value is a number (int or float), a string, or a tuple of numbers and strings (a list).
    `kinds` says, per column, which of these its rows hold: "number", "string", "list", or
    several joined with "|" in that order (e.g. "number|list")."""

    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    kinds: tuple[str, ...]


KIND_NUMBER, KIND_STRING, KIND_LIST = 1, 2, 4


def kind_names(bits: list[int]) -> tuple[str, ...]:
    out = []
    for b in bits:
        names = [n for n, k in (("number", 1), ("string", 2), ("list", 4)) if b & k]
        out.append("|".join(names) if names else "number")
    return tuple(out)


def shown_name(name: str, n: int = 40) -> str:
    """A column name fit to print: control characters escaped, at most n characters."""
    text = escaped(name[: n + 1])
    return text if len(text) <= n else text[:n] + "…"


def shown_columns(columns: tuple[str, ...], most: int = 12) -> str:
    names = [shown_name(c) for c in columns[:most]]
    return ", ".join(names) + (", …" if len(columns) > most else "")


def _what(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (a named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _refuse(span: Span, shown: str, why: str) -> SourceError:
    return SourceError(Diagnostic(span, f"cannot read '{shown_name(shown, 200)}': {why}"))


def _in_kernel_fs(path: str) -> str | None:
    real = os.path.realpath(path)
    for root in KERNEL_FILE_SYSTEMS:
        if real == root or real.startswith(root + "/"):
            return root
    return None


def open_source(path: str, shown: str, span: Span) -> BinaryIO:
    """The source at `path` opened for binary reading, or a SourceError located at `span`
    (the file name in the spec). `shown` is the name as the spec wrote it."""
    if "\0" in path:  # no file is named so; `os.stat` would raise ValueError
        raise _refuse(span, shown, "a file name cannot hold a NUL character")
    try:
        st = os.stat(path)
    except OSError as exc:
        raise _refuse(span, shown, exc.strerror or type(exc).__name__) from None
    if not stat.S_ISREG(st.st_mode):
        raise _refuse(span, shown, f"it is {_what(st.st_mode)}; a source must be a regular file")
    root = _in_kernel_fs(path)
    if root is not None:
        raise _refuse(
            span, shown, f"it is in {root}, a kernel file system; a source must be a regular file"
        )
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise _refuse(span, shown, exc.strerror or type(exc).__name__) from None
    try:
        st2 = os.fstat(fd)
        if not stat.S_ISREG(st2.st_mode) or (st2.st_dev, st2.st_ino) != (st.st_dev, st.st_ino):
            raise _refuse(
                span, shown, "it changed while being opened; a source must be a regular file"
            )
        return os.fdopen(fd, "rb", buffering=1 << 16)
    except BaseException:
        os.close(fd)
        raise


def lines(f: BinaryIO, shown: str) -> Iterator[tuple[int, str]]:
    """(line number, text without its line end) for each line, decoded as UTF-8 (a byte order
    mark at the start is skipped). A line longer than MAX_LINE_BYTES, or not UTF-8, is an
    error located at that line."""
    n = 0
    while True:
        try:
            raw = f.readline(MAX_LINE_BYTES + 1)
        except OSError as exc:
            raise SourceError(
                Diagnostic(
                    Span(shown, n + 1, 1, n + 1, 2), f"cannot read line {n + 1}: {exc.strerror}"
                )
            ) from None
        if not raw:
            return
        n += 1
        if raw.endswith(b"\n"):
            raw = raw[:-1]
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        if len(raw) > MAX_LINE_BYTES:
            # (a file of lines ended by a bare \r, as old Mac software saved them, is one line)
            cr = (
                "; it holds carriage returns (\\r), which do not end a line: a line ends with "
                "\\n or \\r\\n (old Mac line ends: convert them, e.g. tr '\\r' '\\n')"
            )
            raise SourceError(
                Diagnostic(
                    Span(shown, n, 1, n, 2),
                    f"line {n} is longer than {MAX_LINE_BYTES:,} bytes (the limit of a source's "
                    "line)" + (cr if b"\r" in raw else ""),
                )
            )
        try:
            text = raw.decode("utf-8-sig" if n == 1 else "utf-8")
        except UnicodeDecodeError as exc:
            col = exc.start + 1
            raise SourceError(
                Diagnostic(
                    Span(shown, n, col, n, col + 1),
                    f"line {n} is not UTF-8 text (byte {exc.start + 1} of the line)",
                )
            ) from None
        yield n, text


def too_many_rows(shown: str, n: int, most: int) -> SourceError:
    return SourceError(
        Diagnostic(
            Span(shown, n, 1, n, 2),
            f"more than {most:,} rows (the most one source may give); read fewer with `limit N`",
        )
    )


def too_many_values(shown: str, n: int, most: int) -> SourceError:
    return SourceError(
        Diagnostic(
            Span(shown, n, 1, n, 2),
            f"more than {most:,} values (cells and list elements, the most one source "
            "may hold); read fewer rows with `limit N`",
        )
    )


_PLAIN = {int, float, str}


class BadValue(Exception):
    """A JSON value that is not an attribute value; the message says why (no content)."""


def scalar(v: Any) -> int | float | str:
    """A JSON number or string as an attribute value (true and false are 1 and 0)."""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int | float | str):
        return v
    if v is None:
        raise BadValue("null")
    if isinstance(v, dict):
        raise BadValue("a nested object")
    raise BadValue("a list")  # pragma: no cover - callers handle lists first


def list_value(items: list[Any]) -> tuple[int | float | str, ...]:
    """A JSON list of numbers and strings as a tuple; BadValue for anything nested."""
    if {type(v) for v in items} <= _PLAIN:
        return tuple(items)  # the usual case, fast: no bool, None, list or dict in it
    out: list[int | float | str] = []
    for v in items:
        if isinstance(v, list):
            raise BadValue("a list of lists")
        try:
            out.append(scalar(v))
        except BadValue as exc:
            raise BadValue(f"a list with {exc} in it") from None
    return tuple(out)


def reject_constant(name: str) -> Any:
    """json's parse_constant: NaN, Infinity and -Infinity are not JSON numbers."""
    raise BadValue(f"{name}, which is not a JSON number")


JSON = json.JSONDecoder(parse_constant=reject_constant)  # one decoder for every line
