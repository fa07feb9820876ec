"""`Simulation`: the engine with a history, so the debugger can step back and jump.

The live engine state always sits at the end of an action (the frontier). The log of events
may be ahead of the cursor after `back()`. To show the state right after any event, the
simulation restores the nearest checkpoint (a pickle of the plain-data state) and replays
deterministically; an event in the middle of an action is reached by replaying that action
with `stop_after`, which stops it right after the event's own state change.

Owns the history (checkpoints, the cursor, replays) and the choice of mode. It changes the
state only by asking the engine to advance (and by restoring checkpoints).
"""

from __future__ import annotations

import bisect
import math
import pickle
import time
import zlib
from array import array
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from pooltui.lang.errors import Diagnostic, SpecRuntimeError
from pooltui.lang.ir import Expr, Program
from pooltui.sim.collector import hold_collector, release_collector
from pooltui.sim.engine import Engine, Env, Schedule, Stats, StopReplay
from pooltui.sim.eventlog import EventLog, LogReader
from pooltui.sim.events import Event, Violation
from pooltui.sim.state import State
from pooltui.sim.summary import RunSummary, summarize
from pooltui.sim.tables import Tables, build_tables

if TYPE_CHECKING:  # headless runs make no snapshot: not loaded by them
    from pooltui.sim.snapshot import Shown, Snapshot
    from pooltui.sim.views import AttrsMade, SessionsMade

Number = int | float

# Checkpoints are bounded: past either figure, every other one goes (the first and the
# last stay) and the spacing of new ones doubles, so a replay stays short next to the run.
MAX_CHECKPOINTS = 4096
MAX_CHECKPOINT_BYTES = 64 << 20
# A checkpoint that takes long to pack (a big state) is spaced out in time too: at least
# this many times its own cost of simulating goes between two, so checkpoints take at most
# about a tenth of a run, and a replay (no invariants, nothing recorded) stays short.
CHECKPOINT_SHARE = 10
COMPRESS_PIECE = 1 << 20  # bytes of a checkpoint compressed between two looks for a pause
COSTLY_CHECKPOINT = 0.001  # seconds: a cheaper one is taken every `checkpoint_every` events


def _pack(state: State) -> bytes:
    return zlib.compress(pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL), 1)


class _Abandoned(Exception):
    """A checkpoint given up half-written (`Simulation.abandon_checkpoint`)."""


class _Frames:
    """A file for `pickle.Pickler`: it is given the pickle a frame (about 64 KB) at a
    time, each by a call into Python code, where another thread can take the GIL, and
    where `stop` is asked whether to give the checkpoint up."""

    __slots__ = ("parts", "stop")

    def __init__(self, stop: Callable[[], bool] | None) -> None:
        self.parts: list[bytes] = []
        self.stop = stop

    def write(self, data: bytes) -> int:
        if self.stop is not None and self.stop():
            raise _Abandoned
        self.parts.append(bytes(data))
        return len(data)


def _pickle_in_frames(state: State, stop: Callable[[], bool] | None = None) -> bytes:
    """The same bytes as `pickle.dumps`; but one C call over a big state holds the GIL for
    tens of milliseconds, and the debugger's screen (another thread) could not answer a
    key meanwhile: written in frames, it can between two. Raises _Abandoned when `stop`
    says so between two frames."""
    out = _Frames(stop)
    pickle.Pickler(out, protocol=pickle.HIGHEST_PROTOCOL).dump(state)
    return b"".join(out.parts)


def _unpack(data: bytes) -> State:
    """A checkpoint's state; the newest checkpoint may not be compressed yet (a pickle
    begins with its PROTO opcode, 0x80; a zlib stream never does)."""
    hold_collector()  # a burst of objects that all stay alive (`collector`)
    try:
        state: State = pickle.loads(data if data[:1] == b"\x80" else zlib.decompress(data))
    finally:
        release_collector()
    return state


class Simulation:
    """Simulates `program`. One `step()` is one event.

    invariants: check language.md §8 after every event (a violation halts).
    history: keep checkpoints so back()/goto() work (off for headless speed runs).
    checkpoint_every: events between automatic checkpoints at first (replays are at most
    this long); the spacing doubles each time the checkpoints pass MAX_CHECKPOINTS or
    MAX_CHECKPOINT_BYTES, so their count and size stay bounded however long the run.
    The events are kept compact (`EventLog`); `events` reads them as `Event`s.
    """

    def __init__(
        self,
        program: Program,
        *,
        invariants: bool = True,
        history: bool = True,
        checkpoint_every: int = 500,
        record: bool = True,
        fast: bool = False,
    ) -> None:
        self.program = program
        self.tables: Tables = build_tables(program)
        self._invariants = invariants
        # The fast mode counts decode-only work arithmetically and records no iteration
        # events: it is for headless runs, without history.
        self.fast = fast
        self._history = history and not fast
        history = self._history
        self._every = checkpoint_every
        self._events = EventLog()
        self.error: Diagnostic | None = None
        self._ckpt_at: list[int] = []  # event counts of checkpoints, sorted
        self._ckpt: list[bytes] = []  # packed states (`_pack`)
        self._ckpt_bytes = 0
        # The event count of the checkpoint that is still a plain pickle, or -1
        # (`_compress_last`): found by its count, as a checkpoint remembered at an
        # action's start (`_replay_to`) may be put after it.
        self._plain_at = -1
        # What the last snapshot made that the next may reuse (`build_snapshot`): the
        # sessions' attributes, the queued sessions' views.
        self._attrs_made: AttrsMade = {}
        self._sessions_made: SessionsMade = {}
        # Asked between two frames (about 64 KB) of a checkpoint's pickle whether to give it
        # up (then it is taken at a later move), and before compressing the newest one
        # (then it is compressed at a later move): the debugger sets it while a run goes,
        # so a pause is never kept waiting by a big state's checkpoint.
        self.abandon_checkpoint: Callable[[], bool] | None = None
        self._ckpt_given_up = False  # one was given up in this move: no other till the next
        self._ckpt_due = 0.0  # thread time before which no costly checkpoint is taken
        self._probes: tuple[Expr, ...] = ()  # see `probe`
        self._probed: dict[int, dict[int, Number | SpecRuntimeError]] = {}
        # the event count at the start of each action with events
        self._action_starts = array("q")
        # the state shown last, away from the frontier: (cursor, engine, between actions)
        self._view: tuple[int, Engine, bool] | None = None
        self._cursor = -1
        state = Engine.initial_state(self.tables)
        try:
            self.schedule = Schedule(self.tables)
        except SpecRuntimeError as exc:
            self.schedule = Schedule(self.tables, empty=True)
            state.halted = f"runtime error: {exc.message}"
            state.error = exc.diagnostic()
        from pooltui.sim.fast import FastEngine

        self.engine = (FastEngine if fast else Engine)(
            self.tables,
            self.schedule,
            state,
            invariants=invariants,
            events=self._events,
            record=record,
        )
        self._probe_env = Env(self.engine)
        if state.halted is None:
            self.engine.start()
        self.error = state.error
        if history:
            self._checkpoint()

    # ------------------------------------------------------------------ frontier
    def _checkpoint(self) -> None:
        n = self.engine.s.n_events
        if self._ckpt_at and self._ckpt_at[-1] == n:
            return
        self._compress_last()
        began = time.thread_time()
        # Compressed at the next move (`_compress_last`), not now: a debugger's run looks
        # for a pause between two moves, so a big state's checkpoint keeps it from looking
        # for the pickle's time only, not the pickle's and the compression's.
        try:
            raw = _pickle_in_frames(self.engine.s, self.abandon_checkpoint)
        except _Abandoned:
            # Taken at a later move (not again in this one: each try costs a frame):
            # nothing was kept, the state is untouched.
            self._ckpt_given_up = True
            return
        self._ckpt_at.append(n)
        done = time.thread_time()
        cost = done - began
        self._ckpt_due = done + CHECKPOINT_SHARE * cost if cost >= COSTLY_CHECKPOINT else 0.0
        self._ckpt.append(raw)
        self._plain_at = n
        self._ckpt_bytes += len(raw)
        if len(self._ckpt) > MAX_CHECKPOINTS or self._ckpt_bytes > MAX_CHECKPOINT_BYTES:
            self._thin()

    @property
    def _ckpt_raw(self) -> bool:
        """Whether a checkpoint is still a plain pickle."""
        return self._plain_at >= 0

    def _compress_last(self) -> None:
        """The newest checkpoint taken compressed, if it is not yet."""
        if self._plain_at < 0:
            return
        stop = self.abandon_checkpoint
        if stop is not None and stop():  # a pause waits: compressed at a later move
            return
        i = bisect.bisect_left(self._ckpt_at, self._plain_at)
        began = time.thread_time()
        raw = self._ckpt[i]
        # A piece at a time, `stop` asked between two (a full GPU's state is 20 ms of
        # zlib, which a pause waited for whole): given up, it stays a plain pickle and is
        # compressed at a later move. The same bytes as `zlib.compress(raw, 1)`.
        packer = zlib.compressobj(1)
        view = memoryview(raw)
        parts = []
        for at in range(0, len(raw), COMPRESS_PIECE):
            if at and stop is not None and stop():
                return
            parts.append(packer.compress(view[at : at + COMPRESS_PIECE]))
        parts.append(packer.flush())
        packed = b"".join(parts)
        self._plain_at = -1
        self._ckpt[i] = packed
        self._ckpt_bytes += len(packed) - len(raw)
        if self._ckpt_due:  # its cost counts in the spacing of the next one
            self._ckpt_due += CHECKPOINT_SHARE * (time.thread_time() - began)

    def _thin(self) -> None:
        """Drop every other checkpoint (keeping the first and the last); double the spacing."""
        last = len(self._ckpt) - 1
        keep = [i for i in range(len(self._ckpt)) if i % 2 == 0 or i == last]
        self._ckpt_at = [self._ckpt_at[i] for i in keep]
        self._ckpt = [self._ckpt[i] for i in keep]
        self._ckpt_bytes = sum(len(c) for c in self._ckpt)
        if self._plain_at >= 0 and self._plain_at not in self._ckpt_at:
            self._plain_at = -1  # dropped
        self._every *= 2

    def _advance_frontier(self) -> bool:
        """Run actions until at least one new event is recorded. False at the end/halt."""
        eng = self.engine
        if self._probed:
            self._probed.clear()  # only the newest action's events keep their values
        while True:
            n0 = eng.s.n_events
            if not self._history and not self.fast:
                # Without history, keep just the current action's start, so the events
                # inside it can still be looked at one by one.
                self._ckpt_at = [n0]
                self._ckpt = [_pack(eng.s)]
                self._action_starts = array("q", [n0])
            ok = eng.advance()
            n1 = eng.s.n_events
            if n1 > n0:
                if not self._action_starts or self._action_starts[-1] != n0:
                    self._action_starts.append(n0)
                if (
                    self._history
                    and n1 - self._ckpt_at[-1] >= self._every
                    and eng.s.halted is None
                    and (not self._ckpt_due or time.thread_time() >= self._ckpt_due)
                    and not self._ckpt_given_up
                ):
                    self._checkpoint()
                self.error = eng.s.error
                return True
            if not ok:
                self.error = eng.s.error
                return False

    # ------------------------------------------------------------------ moving forward
    def step(self) -> Event | None:
        """Apply the next event; return it (None when nothing more can happen or halted)."""
        self._compress_last()
        self._ckpt_given_up = False
        if self._cursor + 1 >= len(self._events) and not self._advance_frontier():
            return None
        self._cursor += 1
        return self._events[self._cursor]

    def skip(self, n: int, *, whole: bool = False, each: Callable[[], None] | None = None) -> int:
        """Move forward up to `n` events without making `Event`s (the debugger's continue
        when nothing needs to look at each event); with `whole`, on to the end of the
        action the n-th event is in, where the state is at hand without a replay. `each`
        is called after each new action, the cursor at its last event (cheap to look at
        then). Returns how many events the cursor moved (0 at the end or a halt)."""
        self._compress_last()
        self._ckpt_given_up = False
        start = self._cursor
        goal = start + max(0, n)
        log = self._events
        while self._cursor < goal:
            if self._cursor + 1 >= len(log):
                if not self._advance_frontier():
                    break
                if each is not None:
                    self._cursor = len(log) - 1
                    each()
            self._cursor = min(goal, len(log) - 1)
        if whole and self._cursor > start and self._cursor < len(log) - 1:
            k = bisect.bisect_right(self._action_starts, self._cursor)
            if k < len(self._action_starts):  # else the action runs to the frontier
                self._cursor = self._action_starts[k] - 1
            else:
                self._cursor = len(log) - 1
        return self._cursor - start

    def step_iteration(self, stage: str | None = None) -> list[Event]:
        out: list[Event] = []
        while True:
            ev = self.step()
            if ev is None:
                return out
            out.append(ev)
            if ev.moment == "iteration-end" and (stage is None or ev.stage == stage):
                return out
            if ev.moment in ("check-failed", "deadlock"):
                return out

    def run(self, until: float | None = None, events: int | None = None) -> None:
        """Step until simulated time would pass `until`, `events` more events, a halt or the end."""
        from pooltui.sim.fast import FastEngine

        eng = self.engine
        if isinstance(eng, FastEngine) and until is not None:
            eng.horizon = until  # fused iterations stop at the cut (see run_headless)
            try:
                self._run(until, events)
            finally:
                eng.horizon = math.inf
            return
        self._run(until, events)

    def _run(self, until: float | None, events: int | None) -> None:
        n = 0
        while events is None or n < events:
            if until is not None:
                ahead = self._cursor + 1 < len(self._events)
                # The next event's time: recorded already, or the frontier's next action.
                t = self._events.time_at(self._cursor + 1) if ahead else self._next_time()
                if t > until:
                    return
            if self.step() is None:
                return
            n += 1

    def run_headless(
        self,
        until: float | None = None,
        events: int | None = None,
        on_event: Callable[[Event], None] | None = None,
        progress: Callable[[float, int], None] | None = None,
    ) -> None:
        """Run at the frontier without keeping events (each goes to `on_event`) and
        without history: the fast way to simulate a whole trace."""
        eng = self.engine
        eng.keep = False
        eng.record = on_event is not None
        eng.on_event = on_event
        from pooltui.sim.fast import FastEngine

        if isinstance(eng, FastEngine):  # nothing records or checks events: lean paths
            eng.lean = on_event is None and not eng.invariants and events is None
            eng.horizon = until if until is not None else math.inf
        s = eng.s
        steps = 0
        eng.stop_after = events
        try:
            while True:
                if until is not None and self._next_time() > until:
                    return
                if not eng.advance():
                    return
                steps += 1
                if progress is not None and steps % 4096 == 0:
                    progress(s.now, s.n_events)
        except StopReplay:
            return  # `events` reached, possibly in the middle of an action
        finally:
            self.error = s.error
            eng.on_event = None
            eng.stop_after = None
            if isinstance(eng, FastEngine):
                eng.lean = False
                eng.horizon = math.inf

    def _next_time(self) -> float:
        s = self.engine.s
        if not s.settled or (s.heap and s.heap[0][0] <= s.now):
            return s.now
        return s.heap[0][0] if s.heap else float("inf")

    def run_until(
        self, predicate: Callable[[Event], bool], limit: int | None = None
    ) -> Event | None:
        n = 0
        while limit is None or n < limit:
            ev = self.step()
            if ev is None:
                return None
            n += 1
            if predicate(ev):
                return ev
        return None

    # ------------------------------------------------------------------ moving back
    def back(self) -> Event | None:
        if self._cursor < 0:
            return None
        self.goto(self._cursor - 1)
        return self._events[self._cursor] if self._cursor >= 0 else None

    def goto(self, index: int) -> None:
        index = max(-1, index)
        while index >= len(self._events):
            if not self._advance_frontier():
                index = len(self._events) - 1
                break
        self._cursor = index

    # ------------------------------------------------------------------ the state at the cursor
    def _at_frontier(self) -> bool:
        return self._cursor == len(self._events) - 1

    def _engine_at_cursor(self) -> Engine:
        if self._at_frontier():
            return self.engine
        if self._view is not None and self._view[0] == self._cursor:
            return self._view[1]
        if not self._history and (not self._ckpt_at or self._cursor + 1 <= self._ckpt_at[0]):
            raise RuntimeError("this simulation keeps no history (history=False)")
        eng, whole = self._replay_to(self._cursor + 1)
        self._view = (self._cursor, eng, whole)
        return eng

    def _replay_to(self, count: int) -> tuple[Engine, bool]:
        """An engine whose state is right after `count` events (count ≥ 0), and whether
        it stands between two actions (then it can go on from there)."""
        # The action holding event count-1 starts at a; replay whole actions up to a, then
        # the action itself, stopping after event count-1 unless that is its last.
        k = bisect.bisect_right(self._action_starts, count - 1) - 1
        start = self._action_starts[k] if k >= 0 else 0
        next_start = (
            self._action_starts[k + 1] if k + 1 < len(self._action_starts) else len(self._events)
        )
        c = bisect.bisect_right(self._ckpt_at, start) - 1
        view = self._view
        if view is not None and view[2] and self._ckpt_at[c] <= view[0] + 1 <= start:
            # Stepping forward through the log: go on from the state last shown (nearer
            # than any checkpoint) rather than replay from a checkpoint again.
            eng = view[1]
            state = eng.s
            self._view = None
        else:
            eng = self._replay_engine(c, record=False)
            state = eng.s
        while state.n_events < start:
            if not eng.advance():
                break
        if state.n_events == start and start - self._ckpt_at[c] >= 64 and state.halted is None:
            # Remember this action boundary: stepping within the action is then cheap.
            i = bisect.bisect_left(self._ckpt_at, start)
            if i >= len(self._ckpt_at) or self._ckpt_at[i] != start:
                packed = _pack(state)
                self._ckpt_at.insert(i, start)
                self._ckpt.insert(i, packed)
                self._ckpt_bytes += len(packed)
        if count > start and count < next_start:
            eng.stop_after = count
        whole = True
        try:
            while state.n_events < count:
                if not eng.advance():
                    break
        except StopReplay:
            whole = False
        eng.stop_after = None
        return eng, whole

    def snapshot(self, shown: Shown | None = None) -> Snapshot:
        """The state at the cursor; with `shown`, only those sessions' views."""
        from pooltui.sim.views import build_snapshot  # not loaded by headless runs

        eng = self._engine_at_cursor()
        hold_collector()  # a burst of objects that all stay alive (`collector`)
        try:
            if self.fast:
                from pooltui.sim.fast import FastEngine

                assert isinstance(eng, FastEngine)
                saved = eng.write_out()
                try:
                    return build_snapshot(
                        eng,
                        self._events,
                        self._cursor,
                        self._attrs_made,
                        self._sessions_made,
                        shown,
                    )
                finally:
                    eng.restore(saved)
            return build_snapshot(
                eng, self._events, self._cursor, self._attrs_made, self._sessions_made, shown
            )
        finally:
            release_collector()

    def probe(self, exprs: Sequence[Expr]) -> None:
        """Evaluate `exprs` (breakpoint conditions) right after each new event, as the
        simulation makes it, so `evaluate` reads them at any event of the newest action
        without replaying it: a condition checked after every event of a run costs its
        evaluation only. An empty sequence stops it."""
        self._probes = tuple(exprs)
        self._probed.clear()
        self.engine.on_event = self._probe_event if self._probes else None

    def _probe_event(self, ev: Event) -> None:
        # Inside the engine's emit, right after the event's state change: the state a
        # replay stopping after this event would show. An env of its own: the engine's
        # may be bound to a session in the middle of its action.
        env = self._probe_env.bind(None, None, self.engine.s.now)
        values: dict[int, Number | SpecRuntimeError] = {}
        for expr in self._probes:
            try:
                values[id(expr)] = self.tables.fn(expr)(env)
            except SpecRuntimeError as exc:  # raised again when it is read
                values[id(expr)] = exc
        self._probed[ev.index] = values

    def _replay_engine(self, c: int, *, record: bool = True) -> Engine:
        """An engine on checkpoint `c`'s state, to replay from: invariants were checked
        when the events were first made."""
        return Engine(
            self.tables,
            self.schedule,
            _unpack(self._ckpt[c]),
            invariants=False,
            stats=Stats(len(self.tables.sessions)),
            record=record,
        )

    def values_until(
        self, exprs: Sequence[Expr], last: int
    ) -> tuple[int, list[tuple[Number | SpecRuntimeError, ...]]]:
        """The values of `exprs` right after each event from some `first` to `last`
        (-1: at the start), from one replay of the events since the nearest checkpoint:
        (first, [values after event first, …, after event last]). A runtime error of an
        expression is its value. Reverse continue reads its conditions this way, a
        replay per checkpoint rather than one per event."""
        last = min(last, len(self._events) - 1)
        c = max(0, bisect.bisect_right(self._ckpt_at, last) - 1)
        eng = self._replay_engine(c)
        state = eng.s
        first = state.n_events - 1
        eng.keep = False  # recorded already: only `on_event` (right after each event)
        env = Env(eng)
        out: list[tuple[Number | SpecRuntimeError, ...]] = []

        def grab(_event: Event | None = None) -> None:
            bound = env.bind(None, None, state.now)
            values: list[Number | SpecRuntimeError] = []
            for expr in exprs:
                try:
                    values.append(self.tables.fn(expr)(bound))
                except SpecRuntimeError as exc:
                    values.append(exc)
            out.append(tuple(values))
            if _event is not None and state.n_events > last:
                raise StopReplay()  # the rest of the action is not wanted

        grab()
        eng.on_event = grab
        try:
            while state.n_events <= last and eng.advance():
                pass
        except StopReplay:
            pass
        return first, out

    def evaluate(self, expr: Expr) -> Number:
        """Evaluate a condition/watch at the cursor (raises SpecRuntimeError)."""
        probed = self._probed.get(self._cursor)
        if probed is not None and id(expr) in probed:
            seen = probed[id(expr)]
            if isinstance(seen, SpecRuntimeError):
                raise seen
            return seen
        eng = self._engine_at_cursor()
        env = eng.env.bind(None, None, eng.s.now)
        value: Number = self.tables.fn(expr)(env)
        return value

    # ------------------------------------------------------------------ looking
    @property
    def events(self) -> Sequence[Event]:
        """The log, as a read-only sequence of `Event`s (built on demand: keep none)."""
        return self._events

    def events_reader(self) -> LogReader:
        """The log for one other thread: `reader.upto(n)`, the first n events, never
        changes; reading it does not disturb this (not thread-safe) simulation."""
        return self._events.reader()

    def last_event(self) -> Event | None:
        """The frontier's last event, also when nothing records them (a headless run's
        halt); None when it cannot be told."""
        return self.engine.last_event()

    @property
    def cursor(self) -> int:
        return self._cursor

    @property
    def time(self) -> float:
        if self._cursor >= 0:
            return self._events.time_at(self._cursor)
        return 0.0

    @property
    def finished(self) -> bool:
        return self._at_frontier() and (self.engine.is_over() or self.engine.s.halted is not None)

    @property
    def halted(self) -> str | None:
        """Why the simulation stopped, once the cursor is at the stop."""
        return self.engine.s.halted if self._at_frontier() else None

    @property
    def violation(self) -> Violation | None:
        v: Violation | None = self.engine.s.violation if self._at_frontier() else None
        return v

    def summary(self) -> RunSummary:
        """The figures of the run so far (at the frontier)."""
        return summarize(self.engine)

    @property
    def stats(self) -> Stats:
        return self.engine.stats

    @property
    def state(self) -> State:
        """The frontier's raw state (for the command line's summary and tests)."""
        return self.engine.s

    def trace_lines(self) -> list[str]:
        return [e.to_json() for e in self._events]
