"""`EventLog`: the event log kept compact, with `Event` objects made on demand.

A million events as `Event` objects cost about a kilobyte each (the object, its `why`
string, its tuples) and keep the garbage collector busy. The log keeps instead:

- the times, packed doubles (8 bytes an event), and the moments, one byte each: what
  searches by time and by moment read without building anything;
- the other fields as one plain tuple per event, in chunks of `CHUNK` events; a full
  chunk is serialized (`marshal`, which writes plain tuples of numbers and strings about
  three times as fast as pickle; pickle for anything else) and compressed (zlib, level 1:
  `why` texts repeat a lot), so an event costs some 30-50 bytes once its chunk is full.
  Spans are kept once, by number.

`log[i]` builds the `Event` (unpacking its chunk once: the last few unpacked chunks are
kept). The log is a read-only `Sequence[Event]` to everyone but the engine, which appends
with `add` (its fields, in `Event`'s order, after the index).

Another thread (the debugger's screen) reads it through a `LogReader`: `reader.upto(n)` is
a `LogView`, the first n events, which never change however the log grows; the reader keeps
its own unpacked chunks, so the two threads share nothing that either one rewrites.

Owns the log's storage only: what an event says is `events.Event`'s.
"""

from __future__ import annotations

import bisect
import marshal
import math
import pickle
import zlib
from array import array
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, overload

from pooltui.lang.ir import Span
from pooltui.sim.events import MOMENTS, Event

CHUNK = 1024
_KEEP_UNPACKED = 4  # unpacked chunks kept for reading


def _pack(rows: list[tuple[Any, ...]]) -> bytes:
    try:
        return b"m" + zlib.compress(marshal.dumps(rows), 1)
    except ValueError:  # a value marshal does not write
        return b"p" + zlib.compress(pickle.dumps(rows, pickle.HIGHEST_PROTOCOL), 1)


def _unpack(data: bytes) -> list[tuple[Any, ...]]:
    raw = zlib.decompress(memoryview(data)[1:])
    rows: list[tuple[Any, ...]] = marshal.loads(raw) if data[:1] == b"m" else pickle.loads(raw)
    return rows


class EventLog(Sequence[Event]):
    """The events of one simulation, by index (an event's index is its place here)."""

    __slots__ = (
        "_chunk",
        "_chunks",
        "_moment_code",
        "_moment_names",
        "_moments",
        "_span_no",
        "_spans",
        "_tail",
        "_times",
        "_unpacked",
        "_widest",
        "_widest_at",
        "_widths",
    )

    def __init__(self, events: Sequence[Event] = ()) -> None:
        self._chunk = CHUNK  # events a packed chunk holds
        self._times = array("d")
        self._moments = bytearray()
        self._moment_names: list[str] = list(MOMENTS)
        self._moment_code: dict[str, int] = {m: i for i, m in enumerate(MOMENTS)}
        self._chunks: list[bytes] = []  # full chunks, packed
        self._tail: list[tuple[Any, ...]] = []  # the chunk being filled
        self._spans: list[Span] = []
        self._span_no: dict[int, int] = {}  # id(span) -> its number (spans are kept alive)
        self._unpacked: dict[int, list[tuple[Any, ...]]] = {}
        self._widest = 0  # the longest `why` so far (the screen's log scrolls that wide)
        self._widest_at = array("q")  # the events that made it longer, in order
        self._widths = array("q")  # and the length each made it
        for ev in events:
            self.append(ev)

    # ------------------------------------------------------------------ writing
    def add(
        self,
        time: float,
        moment: str,
        why: str,
        session: str | None,
        session_id: int | None,
        session_class: str | None,
        pool: str | None,
        stage: str | None,
        others: tuple[str, ...],
        units: int | None,
        blocks: tuple[int, ...],
        span: Span | None,
        data: tuple[tuple[str, Any], ...],
    ) -> None:
        """Append the next event (its index is the log's length). Its time goes in last:
        the log's length is what a reader on another thread trusts, so every other part of
        the event is in place before the length counts it."""
        index = len(self._times)
        code = self._moment_code.get(moment)
        if code is None:
            code = self._moment_code[moment] = len(self._moment_names)
            self._moment_names.append(moment)
        sno = -1
        if span is not None:
            sno = self._span_no.get(id(span), -1)
            if sno < 0:
                sno = self._span_no[id(span)] = len(self._spans)
                self._spans.append(span)
        if len(why) > self._widest:
            self._widest = len(why)
            self._widths.append(len(why))  # before its index: a reader bisects the indices
            self._widest_at.append(index)
        tail = self._tail
        tail.append(
            (why, session, session_id, session_class, pool, stage, others, units, blocks, sno, data)
        )
        if len(tail) >= self._chunk:
            self._chunks.append(_pack(tail))
            self._tail = []
        self._moments.append(code)
        self._times.append(time)

    def append(self, ev: Event) -> None:
        """Append an `Event` (its index must be the log's length)."""
        if ev.index != len(self._times):
            raise ValueError(f"event #{ev.index} appended at place {len(self._times)}")
        self.add(ev.time, ev.moment, ev.why, ev.session, ev.session_id, ev.session_class,
                 ev.pool, ev.stage, ev.others, ev.units, ev.blocks, ev.span, ev.data)  # fmt: skip

    # ------------------------------------------------------------------ reading
    def __len__(self) -> int:
        return len(self._times)

    def time_at(self, index: int) -> float:
        return self._times[index]

    def moment_at(self, index: int) -> str:
        return self._moment_names[self._moments[index]]

    @property
    def times(self) -> Sequence[float]:
        """Every event's time, by index (a packed array: bisect it, do not change it)."""
        return self._times

    @property
    def widest(self) -> int:
        """The length of the longest `why` recorded."""
        return self._widest

    def _row(self, index: int, unpacked: dict[int, list[tuple[Any, ...]]]) -> tuple[Any, ...]:
        k, j = divmod(index, self._chunk)
        return self._rows_of(k, unpacked)[j]

    def _rows_of(self, k: int, unpacked: dict[int, list[tuple[Any, ...]]]) -> list[tuple[Any, ...]]:
        """Chunk k's rows (the tail's when it is the one being filled)."""
        # The tail before the chunks: the engine packs a full tail into the chunks first and
        # only then starts a new tail, so a reader on another thread sees the row in one of
        # the two (an old tail is never changed once replaced).
        tail = self._tail
        if k >= len(self._chunks):
            return tail
        rows = unpacked.get(k)
        if rows is None:
            rows = _unpack(self._chunks[k])
            if len(unpacked) >= _KEEP_UNPACKED:
                del unpacked[next(iter(unpacked))]
            unpacked[k] = rows
        return rows

    def _event(self, index: int, unpacked: dict[int, list[tuple[Any, ...]]] | None = None) -> Event:
        r = self._row(index, self._unpacked if unpacked is None else unpacked)
        return Event(
            index,
            self._times[index],
            self.moment_at(index),
            r[0],
            r[1],
            r[2],
            r[3],
            r[4],
            r[5],
            r[6],
            r[7],
            r[8],
            self._spans[r[9]] if r[9] >= 0 else None,
            r[10],
        )

    @overload
    def __getitem__(self, index: int) -> Event: ...
    @overload
    def __getitem__(self, index: slice) -> list[Event]: ...
    def __getitem__(self, index: int | slice) -> Event | list[Event]:
        n = len(self._times)
        if isinstance(index, slice):
            return [self._event(i) for i in range(*index.indices(n))]
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError("event index out of range")
        return self._event(index)

    def __iter__(self) -> Iterator[Event]:
        for i in range(len(self._times)):
            yield self._event(i)

    def __reversed__(self) -> Iterator[Event]:
        for i in range(len(self._times) - 1, -1, -1):
            yield self._event(i)

    def __bool__(self) -> bool:
        return len(self._times) > 0

    def __eq__(self, other: object) -> bool:
        if isinstance(other, EventLog | list | tuple):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"EventLog({len(self)} events, {len(self._chunks)} packed chunks)"

    def nbytes(self) -> int:
        """The packed part's size in bytes (times, moments, packed chunks)."""
        return (
            self._times.itemsize * len(self._times)
            + len(self._moments)
            + sum(len(c) for c in self._chunks)
        )

    def reader(self) -> LogReader:
        """A reader for one other thread (see the module's docstring)."""
        return LogReader(self)


class LogReader:
    """Reads an `EventLog` from one other thread: `upto(n)` views share its unpacked chunks."""

    __slots__ = ("_log", "_unpacked")

    def __init__(self, log: EventLog) -> None:
        self._log = log
        self._unpacked: dict[int, list[tuple[Any, ...]]] = {}

    def upto(self, n: int) -> LogView:
        """The first `n` events (at most the log's length now)."""
        return LogView(self._log, min(n, len(self._log)), self._unpacked)


class LogView(Sequence[Event]):
    """The first `n` events of a log, read from one other thread: immutable, as those
    events never change. Times, moments and the longest `why` read without building events."""

    __slots__ = ("_log", "_n", "_unpacked")

    def __init__(self, log: EventLog, n: int, unpacked: dict[int, list[tuple[Any, ...]]]) -> None:
        self._log = log
        self._n = n
        self._unpacked = unpacked

    def __len__(self) -> int:
        return self._n

    def time_at(self, index: int) -> float:
        return self._log._times[index] if 0 <= index < self._n else math.nan

    def moment_at(self, index: int) -> str:
        return self._log.moment_at(index) if 0 <= index < self._n else ""

    @property
    def widest(self) -> int:
        """The length of the longest `why` of these events."""
        log = self._log
        k = bisect.bisect_left(log._widest_at, self._n) - 1
        return log._widths[k] if k >= 0 else 0

    @overload
    def __getitem__(self, index: int) -> Event: ...
    @overload
    def __getitem__(self, index: slice) -> list[Event]: ...
    def __getitem__(self, index: int | slice) -> Event | list[Event]:
        n = self._n
        if isinstance(index, slice):
            return [self._log._event(i, self._unpacked) for i in range(*index.indices(n))]
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError("event index out of range")
        return self._log._event(index, self._unpacked)

    def __iter__(self) -> Iterator[Event]:
        for i in range(self._n):
            yield self._log._event(i, self._unpacked)

    def __bool__(self) -> bool:
        return self._n > 0

    def __repr__(self) -> str:
        return f"LogView({self._n} events)"

    def find_parties(self, start: int, names: Iterable[str], stop: int | None = None) -> list[int]:
        """The indices from `start` (to `stop`) of the events whose session, session class
        or one of the other sessions is in `names`, in order (a chunk at a time: no event
        is built, but each chunk is unpacked: a second or so a million events)."""
        log = self._log
        wanted = set(names)
        size = log._chunk
        end = self._n if stop is None else min(stop, self._n)
        out: list[int] = []
        i = start
        while i < end:
            k = i // size
            base = k * size
            rows = log._rows_of(k, self._unpacked)
            for j in range(i - base, min(len(rows), end - base)):
                r = rows[j]
                if r[1] in wanted or r[3] in wanted or (r[6] and not wanted.isdisjoint(r[6])):
                    out.append(base + j)
            i = base + size
        return out

    def find_moments(
        self, start: int, moments: Iterable[str], stop: int | None = None
    ) -> list[int]:
        """The indices from `start` (to `stop`) of the events whose moment is one of
        `moments`, in order (read from the packed moments: no event is built)."""
        log = self._log
        codes = [log._moment_code[m] for m in moments if m in log._moment_code]
        packed = log._moments
        end = self._n if stop is None else min(stop, self._n)
        out: list[int] = []
        for code in codes:
            i = packed.find(code, start, end)
            while i >= 0:
                out.append(i)
                i = packed.find(code, i + 1, end)
        out.sort()
        return out
