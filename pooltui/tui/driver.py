"""The controller: runs debugger commands against a `Simulation`, in one worker thread.

No Textual here. The app puts `Command`s on a queue; its single worker thread calls
`Controller.execute(cmd, post)`, and `post` receives `Frame`s: immutable snapshots plus the
events the UI has not seen yet. The UI never touches the simulation itself.

Long commands (continue, reverse continue, run, goto) watch `interrupt_gen`: any later
command (or pause) bumps it and the run stops between two steps (a continue with no
breakpoint goes in batches of events sized to take about a millisecond, `BATCH_SECONDS`).
Between the same two steps a run takes the `Change`s the UI posted meanwhile
(`Controller.follow`): the breakpoints and watches as the user has them now, immutable
copies, so a run follows them from the next event it checks without being stopped.
Frames of a long run are posted at most every `FRAME_INTERVAL` seconds, only when the
screen has shown the last one, and only between two actions, where the state is the
simulation's own (a state inside an action is a replay from a checkpoint). A frame carries
the log as an immutable view (`events`, read on the UI's thread), not copies of events.
"""

from __future__ import annotations

import bisect
import math
import queue
import time as _time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from pooltui.lang.errors import render as render_diagnostic
from pooltui.lang.words import seconds
from pooltui.sim.events import Event
from pooltui.sim.snapshot import Shown, Snapshot, Violation
from pooltui.tui.breakpoints import Breakpoint, BreakpointSet, Hit, expression_error, truthy
from pooltui.tui.commands import FOLLOWS, LONG, Change, Command, Frame, Number, Refused, WatchValue

SAMPLES = 1024  # the timeline's samples: about this many over the run so far
FRAME_INTERVAL = 0.05  # at most ~20 frames a second while running
FRAME_SHARE = 9  # frames (built and drawn) take at most 1/(1+FRAME_SHARE) of a run
BATCH_SECONDS = 0.001  # a continue checks for a pause about this often
MAX_BATCH = 1 << 16


class SimLike(Protocol):
    """The part of `pooltui.sim.Simulation` the debugger uses (tests pass a fake)."""

    program: Any

    def step(self) -> Event | None: ...
    def skip(
        self, n: int, *, whole: bool = False, each: Callable[[], None] | None = None
    ) -> int: ...
    def events_reader(self) -> Any: ...
    def step_iteration(self, stage: str | None = None) -> list[Event]: ...
    def back(self) -> Event | None: ...
    def goto(self, index: int) -> None: ...
    def snapshot(self, shown: Shown | None = None) -> Snapshot: ...
    def evaluate(self, expr: Any) -> Number: ...
    @property
    def events(self) -> Sequence[Event]: ...
    @property
    def cursor(self) -> int: ...
    @property
    def time(self) -> float: ...
    @property
    def finished(self) -> bool: ...
    @property
    def halted(self) -> str | None: ...
    @property
    def violation(self) -> Violation | None: ...


@dataclass
class Controller:
    """Owns the simulation. Only the worker thread calls `execute`."""

    sim: SimLike
    interrupt_gen: int = 0  # bumped by the UI thread; a long run stops when it changes
    run_rate: float = 10.0  # set by the UI thread; a run at a speed follows it at once
    _known: int = 0  # events the UI has been sent
    _watches: tuple[tuple[str, Any], ...] = ()
    _watches_seq: int = 0  # the command or change that set them
    _watch_prev: dict[str, Number | None] = field(default_factory=dict)
    # Filled by the UI thread (`follow`), emptied by the worker between two steps.
    _changes: queue.SimpleQueue[Change] = field(default_factory=queue.SimpleQueue)
    _breakpoints_now: tuple[Breakpoint, ...] | None = None  # taken, for the run to follow
    _find_from: int = -1  # where a search (`find`) began
    _ended: bool = False  # a search ran to the end, then went back to where it began
    _reverse_from: int = -1  # where a reverse continue began
    ui_ready: Callable[[], bool] = lambda: True  # the UI has shown every frame posted
    ui_cost: Callable[[], float] = lambda: 0.0  # the UI's CPU seconds per frame shown
    _frame_cost: float = 0.0  # CPU seconds the last progress frame took to build
    _frame_cpu: float = 0.0  # this thread's CPU time when it last posted one
    sample_expr: Any = None  # the timeline's figure (a pool's allocated units), or None
    _samples: list[tuple[float, float]] = field(default_factory=list)
    _next_sample: float = 0.0
    _reader: Any = None  # the log's reader for the UI thread (`events_reader`)
    _last_check: float = 0.0  # when a long command last looked for a pause
    _last_check_cpu: float = 0.0  # the same in this thread's CPU time
    longest_gap: float = 0.0  # the longest time between two such looks (benchmarks)
    longest_gap_cpu: float = 0.0  # the same in CPU time (a busy machine adds to the first)
    # Set by the UI thread: the sessions its frames carry (the inspected one); None: all.
    shown: Shown | None = None
    _progress_snapshot: tuple[tuple[object, ...], Snapshot] | None = None
    _last_final: tuple[str | None, str | None, tuple[WatchValue, ...]] = (None, None, ())

    def _at_frontier(self) -> bool:
        """Between two actions at the newest event: the state is the simulation's own, so
        a snapshot or an evaluation costs no replay."""
        return self.sim.cursor + 1 >= len(self.sim.events)

    def _sample(self) -> None:
        """After a step: the timeline's figure, when the time has moved on enough (about
        SAMPLES samples over the run so far, however many events it has); only between
        two actions, where reading it costs no replay."""
        if self.sample_expr is None:
            return
        t = self.sim.time
        if t < self._next_sample or not self._at_frontier():
            return
        try:
            value = float(self.sim.evaluate(self.sample_expr))
        except Exception:  # a figure it cannot read: no timeline, never a failure
            self.sample_expr = None
            return
        self._samples.append((t, value))
        self._next_sample = t + max(1e-9, t / SAMPLES)

    # ----------------------------------------------------------------- helpers
    def _log(self) -> tuple[int, Sequence[Event]]:
        """(the first event not sent before, the log so far as an immutable view)."""
        if self._reader is None:
            self._reader = self.sim.events_reader()
        view: Sequence[Event] = self._reader.upto(len(self.sim.events))
        start = min(self._known, len(view))
        self._known = len(view)
        return start, view

    def _eval_watches(self, final: bool) -> tuple[WatchValue, ...]:
        out = []
        for text, expr in self._watches:
            caret: tuple[int, int] | None = None
            try:
                if isinstance(expr, Refused):
                    raise expr.error
                value: Number | None = self.sim.evaluate(expr)
                error = None
            except Exception as exc:  # a spec runtime error in the watch: show it
                value, error = None, expression_error(exc)
                span = getattr(exc, "span", None)
                if span is not None and span.line == span.end_line == 1:
                    caret = (span.col, span.end_col)
            prev = self._watch_prev.get(text, value)
            changed = text in self._watch_prev and prev != value
            if final:
                self._watch_prev[text] = value
            out.append(WatchValue(text, value, error, changed, caret))
        return tuple(out)

    def _halt_reason(self) -> tuple[str | None, str | None, str | None]:
        """(stop text, stop kind, located error text) when the simulation cannot go on."""
        sim = self.sim
        halted = sim.halted
        if halted:
            err = getattr(sim, "error", None)
            if err is not None:
                source = getattr(getattr(sim, "program", None), "source", "") or ""
                try:
                    text = render_diagnostic(err, source)
                except Exception:
                    text = str(err)
                return f"runtime error: {getattr(err, 'message', halted)}", "error", text
            if sim.violation is not None:  # its message alone: `halted` says "invariant broken" too
                return f"invariant violated: {sim.violation.message}", "violation", None
            return halted, "halt", None
        if sim.finished:
            return "end of the simulation", "end", None
        return None, None, None

    def frame(
        self,
        cmd: Command,
        *,
        final: bool = True,
        running: bool = False,
        stop: str | None = None,
        stop_kind: str | None = None,
        bps: BreakpointSet | None = None,
        look: bool = False,
        exact: bool = False,
        hit: Hit | None = None,
    ) -> Frame:
        error_text = None
        if hit is not None:  # a breakpoint stops it (a condition's error: located in it)
            stop, stop_kind, error_text = hit.describe(), "breakpoint", hit.located
        elif final and stop_kind not in ("breakpoint",):
            h_stop, h_kind, error_text = self._halt_reason()
            # At the end or a halt, a goal or an end says so; an `exact` end keeps its
            # words (it says more: "there is no event #5000 ...") unless it halted.
            if (
                h_stop is not None
                and stop_kind in (None, "goal", "end")
                and not (exact and h_kind == "end")
            ):
                stop, stop_kind = h_stop, h_kind
        self._sample()
        samples = tuple(self._samples)
        self._samples.clear()
        # A run's last frame at the state of its last progress frame (a pause that came
        # while that frame was being built): the same snapshot, not a second one to wait for.
        shown = self.shown
        at = (self.sim.cursor, len(self.sim.events), self.sim.time, shown)
        kept, self._progress_snapshot = self._progress_snapshot, None
        snapshot = kept[1] if kept is not None and kept[0] == at else self.sim.snapshot(shown)
        if not final:
            self._progress_snapshot = (at, snapshot)
        start, log = self._log()
        watches = self._last_final[2] if look else self._eval_watches(final)
        if final and not look:
            self._last_final = (stop, stop_kind, watches)
        return Frame(
            seq=cmd.seq,
            final=final,
            snapshot=snapshot,
            events_from=start,
            events=log,
            watches=watches,
            running=running,
            stop=stop,
            stop_kind=stop_kind,
            breakpoints=bps,
            error_text=error_text,
            samples=samples,
            look=look,
            ended=self._ended,
        )

    def _interrupted(self, cmd: Command) -> bool:
        """Called between two steps (or batches) of every long loop. The UI thread gets
        the GIL by Python's own switching (the app shortens its interval while it runs).
        The changes posted meanwhile are taken here too."""
        now, cpu = _time.perf_counter(), _time.thread_time()
        if self._last_check:
            self.longest_gap = max(self.longest_gap, now - self._last_check)
            self.longest_gap_cpu = max(self.longest_gap_cpu, cpu - self._last_check_cpu)
        self._last_check, self._last_check_cpu = now, cpu
        if not self._changes.empty():
            self._take_changes(cmd)
        return self.interrupt_gen != cmd.gen

    def follow(self, change: Change) -> None:
        """Called by the UI thread: a change for the command running now, which takes it
        between two steps (the only way anything reaches a run once it has started)."""
        self._changes.put(change)

    def _take_changes(self, cmd: Command) -> None:
        while True:
            try:
                change = self._changes.get_nowait()
            except queue.Empty:
                return
            if change.watches is not None and change.seq >= self._watches_seq:
                self._set_watches(change.watches, change.seq)
            if change.breakpoints is not None and change.seq == cmd.seq and cmd.kind in FOLLOWS:
                self._breakpoints_now = change.breakpoints  # the run takes it at its next step

    def _follow_breakpoints(self, bps: BreakpointSet, *, prime: bool = True) -> Hit | None:
        """The run's breakpoints become the user's as they are now (`_breakpoints_now`);
        what `BreakpointSet.follow` says of a condition it cannot evaluate."""
        now, self._breakpoints_now = self._breakpoints_now, None
        assert now is not None
        return bps.follow(now, self.sim.evaluate if prime else None)

    def _took_breakpoints(
        self, cmd: Command, post: Callable[[Frame], None], bps: BreakpointSet
    ) -> bool:
        """A run going forward takes the user's breakpoints as they are now; False when a
        condition among them cannot be evaluated (the run stops there, saying so)."""
        problem = self._follow_breakpoints(bps)
        if problem is not None:
            post(self.frame(cmd, hit=problem, bps=bps))
        return problem is None

    def _probe(self, bps: BreakpointSet | None) -> None:
        """The simulation evaluates the run's conditions as each event happens (`probe`),
        rather than the state being replayed inside an action after each step."""
        probe = getattr(self.sim, "probe", None)
        if probe is not None:
            probe([b.expr for b in bps.active() if b.kind == "condition"] if bps else ())

    def _begin(self) -> None:
        """A long command starts: the time between pause checks is counted from here."""
        self._last_check, self._last_check_cpu = _time.perf_counter(), _time.thread_time()

    def _stopped_by_sim(self) -> bool:
        return bool(self.sim.halted) or self.sim.finished

    # ----------------------------------------------------------------- commands
    def execute(self, cmd: Command, post: Callable[[Frame], None]) -> None:
        handler = getattr(self, f"_do_{cmd.kind}")
        long = cmd.kind in LONG
        self._breakpoints_now = None  # taken for a run before this one
        if long:
            self._begin()
            # A pause gives up a checkpoint half-written (it is taken at a later move)
            # rather than wait for it: a big state's is tens of milliseconds.
            self._set_abandon(lambda: self._interrupted(cmd))
        try:
            handler(cmd, post)
        finally:
            self._last_check = 0.0
            if long:
                self._set_abandon(None)

    def _set_abandon(self, stop: Callable[[], bool] | None) -> None:
        if hasattr(self.sim, "abandon_checkpoint"):  # a simulation with a history
            self.sim.abandon_checkpoint = stop

    def _do_refresh(self, cmd: Command, post: Callable[[Frame], None]) -> None:
        post(self.frame(cmd, stop=None))

    def _do_look(self, cmd: Command, post: Callable[[Frame], None]) -> None:
        """The state shown again for other sessions (`shown` changed: a session or block
        inspected), saying what the last frame said (its stop, its watches)."""
        stop, stop_kind, _ = self._last_final
        post(self.frame(cmd, stop=stop, stop_kind=stop_kind, look=True))

    def _do_watches(self, cmd: Command, post: Callable[[Frame], None]) -> None:
        """New watches: the state shown again with them, saying what the last frame said
        (nothing moved, so why it stopped there still holds)."""
        self._set_watches(cmd.watches, cmd.seq)
        stop, stop_kind, _ = self._last_final
        post(self.frame(cmd, stop=stop, stop_kind=stop_kind))

    def _set_watches(self, watches: tuple[tuple[str, Any], ...], seq: int) -> None:
        self._watches, self._watches_seq = watches, seq
        keep = {text for text, _ in watches}
        self._watch_prev = {k: v for k, v in self._watch_prev.items() if k in keep}

    def _do_step(self, cmd: Command, post: Callable[[Frame], None]) -> None:
        event = self.sim.step()
        stop = None if event is not None else "nothing more happens"
        post(self.frame(cmd, stop=stop, stop_kind=None if event else "end"))

    def _do_iteration(self, cmd: Command, post: Callable[[Frame], None]) -> None:
        events = self.sim.step_iteration()
        if not events:
            post(self.frame(cmd, stop="no iteration to come", stop_kind="end"))
            return
        last = events[-1]
        stop = f"end of iteration (#{last.index})" if last.moment == "iteration-end" else None
        post(self.frame(cmd, stop=stop, stop_kind="goal"))

    def _do_back(self, cmd: Command, post: Callable[[Frame], None]) -> None:
        if self.sim.cursor < 0:
            post(self.frame(cmd, stop="at the start", stop_kind="start"))
            return
        self.sim.back()
        post(self.frame(cmd))

    def _goal(self, cmd: Command, post: Callable[[Frame], None], what: str) -> None:
        post(self.frame(cmd, stop=what, stop_kind="goal"))

    def _maybe_progress(
        self, cmd: Command, post: Callable[[Frame], None], last: float, *, anywhere: bool = False
    ) -> float:
        now = _time.monotonic()
        # Backpressure: no new frame until the UI has shown the last one, so a slow
        # screen never queues up frames (and keys) behind a fast run. A frame costly to
        # build (a big pool's snapshot) or to draw (the screen's CPU time per frame, which
        # the app measures) spaces the next ones out, so frames take at most about a
        # tenth of the time: the GIL serializes the screen's work with the simulation's.
        # That spacing is in this thread's CPU time (a busy machine stretches wall time).
        if (
            now - last >= FRAME_INTERVAL
            and self.interrupt_gen == cmd.gen  # paused meanwhile: the final frame comes next
            and _time.thread_time() - self._frame_cpu
            >= FRAME_SHARE * (self._frame_cost + self.ui_cost())
            and (anywhere or self._at_frontier())
            and self.ui_ready()
        ):
            began = _time.thread_time()
            post(self.frame(cmd, final=False, running=True))
            self._frame_cpu = _time.thread_time()
            self._frame_cost = self._frame_cpu - began
            return _time.monotonic()
        return last

    def _do_goto(self, cmd: Command, post: Callable[[Frame], None]) -> None:
        target = max(-1, cmd.index)
        sim = self.sim
        recorded = len(sim.events)
        if target < recorded:
            sim.goto(target)
            self._goal(cmd, post, "at the start" if target < 0 else f"went to event #{target}")
            return
        # Past the recorded log: step there ourselves so a pause can interrupt.
        if sim.cursor < recorded - 1:
            sim.goto(recorded - 1)
        last = _time.monotonic()
        batch = _Batch()
        while sim.cursor < target:
            if self._interrupted(cmd):
                post(self.frame(cmd, stop="paused", stop_kind="pause"))
                return
            if not batch.skip(sim, target - sim.cursor, whole=False, each=self._sample):
                break
            last = self._maybe_progress(cmd, post, last)
        if sim.cursor == target:
            self._goal(cmd, post, f"went to event #{target}")
            return
        # It ended (or halted: the halt is said instead) before event `target`.
        n = len(sim.events)
        stop = (
            f"there is no event #{target}; the simulation ended after {n} events (#0 to #{n - 1})"
        )
        post(self.frame(cmd, stop=stop, stop_kind="end", exact=True))

    def _do_goto_time(self, cmd: Command, post: Callable[[Frame], None]) -> None:
        sim = self.sim
        t = cmd.time
        events = sim.events
        if events and (t < sim.time or t <= events[-1].time):
            # Within the log: the last event at or before t (times never decrease).
            idx = bisect.bisect_right(events, t, key=_event_time) - 1
            sim.goto(idx)
            self._goal(cmd, post, f"went to time {seconds(t)}")
            return
        if sim.cursor < len(events) - 1:
            sim.goto(len(events) - 1)
        last = _time.monotonic()
        batch = _Batch()
        while True:
            if self._interrupted(cmd):
                post(self.frame(cmd, stop="paused", stop_kind="pause"))
                return
            if not batch.skip(sim, batch.size, whole=True, each=self._sample):
                stop = f"the simulation ends at {seconds(sim.time)}"
                stop += f", before {seconds(t)}" if math.isfinite(t) else ""
                post(self.frame(cmd, stop=stop, stop_kind="end", exact=True))
                return
            if sim.time > t:  # past it: back to the last event at or before t
                sim.goto(bisect.bisect_right(sim.events, t, key=_event_time) - 1)
                break
            last = self._maybe_progress(cmd, post, last)
        self._goal(cmd, post, f"went to time {seconds(t)}")

    def _do_continue(self, cmd: Command, post: Callable[[Frame], None]) -> None:
        self._forward(cmd, post, rate=None)

    def _do_run(self, cmd: Command, post: Callable[[Frame], None]) -> None:
        self.run_rate = cmd.rate
        self._forward(cmd, post, rate=cmd.rate)

    def _forward(self, cmd: Command, post: Callable[[Frame], None], rate: float | None) -> None:
        sim = self.sim
        bps = cmd.breakpoints or BreakpointSet()
        if self._stopped_by_sim():
            post(self.frame(cmd, bps=bps))
            return
        problem = bps.prime(sim.evaluate)
        if problem is not None:
            post(self.frame(cmd, hit=problem, bps=bps))
            return
        # Each way goes on in the other when the breakpoints change while it runs: every
        # event checked while one is active, in batches while none is (a continue).
        try:
            while (
                self._forward_free(cmd, post, bps)
                if rate is None and not bps.active()
                else self._forward_steps(cmd, post, bps, rate)
            ):
                pass
        finally:
            self._probe(None)

    def _forward_steps(
        self, cmd: Command, post: Callable[[Frame], None], bps: BreakpointSet, rate: float | None
    ) -> bool:
        """Event by event, each checked; True: on in batches (no breakpoint active now)."""
        sim = self.sim
        last_post = _time.monotonic()
        started = last_post
        steps = 0
        self._probe(bps)
        while True:
            if self._interrupted(cmd):
                post(self.frame(cmd, stop="paused", stop_kind="pause", bps=bps))
                return False
            if self._breakpoints_now is not None:
                if not self._took_breakpoints(cmd, post, bps):
                    return False
                if rate is None and not bps.active():
                    return True
                self._probe(bps)
            prev_time = sim.time
            event = sim.step()
            if event is None:
                self._ran_out(cmd, post, bps, forward=True)
                return False
            steps += 1
            self._sample()
            if sim.halted:
                post(self.frame(cmd, bps=bps))
                return False
            hit: Hit | None = bps.check(event, prev_time, sim.evaluate)
            if hit is not None:
                post(self.frame(cmd, hit=hit, bps=bps))
                return False
            if rate is None:
                last_post = self._maybe_progress(cmd, post, last_post)
                continue
            # Run at a speed: show every event when slow enough, else ~20 frames a second.
            now = _time.monotonic()
            if (rate <= 20 or now - last_post >= FRAME_INTERVAL) and self.ui_ready():
                post(self.frame(cmd, final=False, running=True))
                last_post = now
            if self.run_rate != rate:  # + or - while it runs: the new speed from here
                rate, started, steps = self.run_rate, _time.monotonic(), 1
            due = started + steps / rate
            while not self._interrupted(cmd) and self.run_rate == rate:
                left = due - _time.monotonic()
                if left <= 0:
                    break
                _time.sleep(min(left, 0.02))

    def _forward_free(
        self, cmd: Command, post: Callable[[Frame], None], bps: BreakpointSet
    ) -> bool:
        """Continue with no breakpoint: nothing looks at each event, so the simulation goes
        in batches of whole actions, and no `Event` is made. True: on event by event (a
        breakpoint became active while it ran), from the end of an action."""
        sim = self.sim
        last_post = _time.monotonic()
        batch = _Batch()
        while True:
            if self._interrupted(cmd):
                post(self.frame(cmd, stop="paused", stop_kind="pause", bps=bps))
                return False
            if self._breakpoints_now is not None:
                if not self._took_breakpoints(cmd, post, bps):
                    return False
                if bps.active():
                    return True
            if not batch.skip(sim, batch.size, whole=True, each=self._sample):
                post(self.frame(cmd, stop="end of the simulation", stop_kind="end", bps=bps))
                return False
            if sim.halted:
                post(self.frame(cmd, bps=bps))
                return False
            # Always at the end of an action: inside the recorded log (after going back),
            # the state there is the last one shown carried forward, not a long replay.
            last_post = self._maybe_progress(cmd, post, last_post, anywhere=True)

    def _do_find(self, cmd: Command, post: Callable[[Frame], None]) -> None:
        """The next (index 1) or previous (index -1) event matching `cmd.breakpoints` (a
        private set: the user's breakpoints neither stop it nor count its hits)."""
        forward = cmd.index >= 0
        word = "next" if forward else "previous"
        # Where it was: a search that finds nothing comes back here (`_ran_out`), rather
        # than leave the user at the end (or the start) of a long run.
        self._find_from = origin = self.sim.cursor

        def found(frame: Frame) -> None:
            if frame.final:
                if frame.stop_kind == "breakpoint":
                    index = frame.snapshot.event_index
                    frame = replace(
                        frame, stop=f"{word} {cmd.what}: event #{index}", stop_kind="goal"
                    )
                elif frame.stop_kind in ("end", "start", None, "goal"):
                    where = f"#{origin}" if origin >= 0 else "the start"
                    side = "after" if forward else "before"
                    frame = replace(
                        frame,
                        stop=f"no {cmd.what} {side} {where}",
                        stop_kind=frame.stop_kind or "end",
                    )
                frame = replace(frame, breakpoints=None)
            post(frame)

        if forward:
            self._forward(cmd, found, rate=None)
        else:
            self._do_reverse(cmd, found)

    def _do_reverse(self, cmd: Command, post: Callable[[Frame], None]) -> None:
        sim = self.sim
        bps = cmd.breakpoints or BreakpointSet()
        events = sim.events
        conds = self._conditions_back(bps)
        self._reverse_from = sim.cursor
        if sim.cursor >= 0:
            sim.back()  # leave the current state: a hit here is where we already are
        index = sim.cursor
        after = conds(index)
        last_post = _time.monotonic()
        while index >= 0:
            if self._interrupted(cmd):
                post(self.frame(cmd, stop="paused", stop_kind="pause", bps=bps))
                return
            if self._breakpoints_now is not None:  # changed while it runs: from here on
                self._follow_breakpoints(bps, prime=False)  # conditions: `conds`, below
                conds = self._conditions_back(bps)
                after = conds(index)
            event = events[index]
            sim.back()
            before = conds(index - 1)
            prev_time = _time_of(events, index - 1) if index > 0 else 0.0
            hit = bps.check_reverse(event, prev_time, before, after)
            if hit is not None:
                sim.goto(index)  # stop right after the event, as a forward run would
                post(self.frame(cmd, hit=hit, bps=bps))
                return
            after = before
            index -= 1
            # Off the frontier a frame's state is a replay: spaced out by its cost.
            last_post = self._maybe_progress(cmd, post, last_post, anywhere=True)
        self._ran_out(cmd, post, bps, forward=False)

    def _ran_out(
        self, cmd: Command, post: Callable[[Frame], None], bps: BreakpointSet, *, forward: bool
    ) -> None:
        """Nothing stopped a run before the end (forwards) or the first event (backwards).
        A search (`find`) goes back to where it began; its wrapper says what it missed.
        Reverse continue stops at event 0, as continue stops at the last event: on an
        event, its why on screen (README: "back to the previous breakpoint hit, or event
        0"); `p` goes on to the start."""
        sim = self.sim
        if cmd.kind == "find":
            self._ended = self._ended or forward
            sim.goto(self._find_from)
            post(self.frame(cmd, stop_kind="end" if forward else "start", bps=bps))
        elif forward:
            post(self.frame(cmd, stop="end of the simulation", stop_kind="end", bps=bps))
        elif self._reverse_from >= 0:
            sim.goto(0)
            post(self.frame(cmd, stop="at the first event (#0)", stop_kind="start", bps=bps))
        else:
            post(self.frame(cmd, stop="at the start", stop_kind="start", bps=bps))

    def _conditions_back(self, bps: BreakpointSet) -> Callable[[int], dict[int, bool]]:
        """For reverse continue: the conditions' truth right after event i (-1: the start),
        i going down. From the simulation's replays a checkpoint's worth at a time when
        it offers them (`values_until`), else evaluated at the cursor (then at i)."""
        active = [b for b in bps.active() if b.kind == "condition"]
        if not active:
            return lambda i: {}
        values_until = getattr(self.sim, "values_until", None)
        if values_until is None:
            return lambda i: bps.conditions(self.sim.evaluate)
        exprs = [b.expr for b in active]
        cache: list[Any] = [0, []]  # first index, values from it on

        def at(i: int) -> dict[int, bool]:
            first, values = cache
            if not first <= i < first + len(values):
                first, values = cache[:] = values_until(exprs, i)
            row = values[i - first]
            return {
                b.id: not isinstance(v, Exception) and truthy(v)
                for b, v in zip(active, row, strict=True)
            }

        return at


class _Batch:
    """How many events a batch of a long run takes: about BATCH_SECONDS of simulation,
    so the pause is looked for that often whatever one event costs."""

    __slots__ = ("size",)

    def __init__(self) -> None:
        self.size = 1

    def skip(
        self, sim: SimLike, most: int, *, whole: bool, each: Callable[[], None] | None = None
    ) -> bool:
        """`sim.skip` at most `most` events (and `size` past the recorded log: the events
        recorded already cost nothing to go past); False when nothing moved."""
        ahead = max(0, len(sim.events) - 1 - sim.cursor)
        t = _time.monotonic()
        moved = sim.skip(min(most, ahead + self.size), whole=whole, each=each)
        took = _time.monotonic() - t
        if moved > ahead:  # it simulated: the time says how big the next batch may be
            if took < BATCH_SECONDS / 2:
                self.size = min(MAX_BATCH, self.size * 2)
            elif took > BATCH_SECONDS * 2:
                self.size = max(1, self.size // 2)
        return moved > 0


def _time_of(events: Sequence[Event], index: int) -> float:
    """Event `index`'s time, without building the event when the log can say it."""
    time_at = getattr(events, "time_at", None)
    return float(time_at(index)) if time_at is not None else events[index].time


def _event_time(event: Event) -> float:
    return event.time
