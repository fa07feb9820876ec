"""`EventLog`: the event log kept compact, with `Event` objects made on demand.

A million events as `Event` objects cost about a kilobyte each (the object, its `why`
string, its tuples) and keep the garbage collector busy. The log keeps instead:

- the times, packed doubles (8 bytes an event), and the moments, one byte each: what
  searches by time and by moment read without building anything;
- the other fields as one plain tuple per event, in chunks of `CHUNK` events; a full
  chunk is pickled and compressed (zlib, level 1: `why` texts repeat a lot), so an event
  costs some 30-50 bytes once its chunk is full. Spans are kept once, by number.

`log[i]` builds the `Event` (unpacking its chunk once: the last few unpacked chunks are
kept). The log is a read-only `Sequence[Event]` to everyone but the engine, which appends
with `add` (its fields, in `Event`'s order, after the index).

Owns the log's storage only: what an event says is `events.Event`'s.
"""

from __future__ import annotations

import pickle
import zlib
from array import array
from collections.abc import Iterator, Sequence
from typing import Any, overload

from pooltui.lang.ir import Span
from pooltui.sim.events import MOMENTS, Event

CHUNK = 1024
_KEEP_UNPACKED = 4  # unpacked chunks kept for reading


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
        """Append the next event (its index is the log's length)."""
        self._times.append(time)
        code = self._moment_code.get(moment)
        if code is None:
            code = self._moment_code[moment] = len(self._moment_names)
            self._moment_names.append(moment)
        self._moments.append(code)
        sno = -1
        if span is not None:
            sno = self._span_no.get(id(span), -1)
            if sno < 0:
                sno = self._span_no[id(span)] = len(self._spans)
                self._spans.append(span)
        tail = self._tail
        tail.append(
            (why, session, session_id, session_class, pool, stage, others, units, blocks, sno, data)
        )
        if len(tail) >= self._chunk:
            self._chunks.append(zlib.compress(pickle.dumps(tail, pickle.HIGHEST_PROTOCOL), 1))
            self._tail = []

    def append(self, ev: Event) -> None:
        """Append an `Event` (its index must be the log's length)."""
        if ev.index != len(self._times):
            raise ValueError(f"event #{ev.index} appended at place {len(self._times)}")
        self.add(ev.time, ev.moment, ev.why, ev.session, ev.session_id, ev.session_class,
                 ev.pool, ev.stage, ev.others, ev.units, ev.blocks, ev.span, ev.data)  # fmt: skip

    def truncate(self, n: int) -> None:
        """Keep the first `n` events (the debugger's log forgets what a rewind undid)."""
        if n >= len(self._times):
            return
        n = max(n, 0)
        k, j = divmod(n, self._chunk)
        if k < len(self._chunks):
            self._tail = self._rows_of(k)[:j]
            del self._chunks[k:]
        else:
            del self._tail[j:]
        self._unpacked.clear()
        del self._times[n:]
        del self._moments[n:]

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

    def _row(self, index: int) -> tuple[Any, ...]:
        k, j = divmod(index, self._chunk)
        if k == len(self._chunks):
            return self._tail[j]
        return self._rows_of(k)[j]

    def _rows_of(self, k: int) -> list[tuple[Any, ...]]:
        """Packed chunk k's rows (the last few unpacked are kept)."""
        rows = self._unpacked.get(k)
        if rows is None:
            rows = pickle.loads(zlib.decompress(self._chunks[k]))
            if len(self._unpacked) >= _KEEP_UNPACKED:
                del self._unpacked[next(iter(self._unpacked))]
            self._unpacked[k] = rows
        return rows

    def _event(self, index: int) -> Event:
        r = self._row(index)
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
