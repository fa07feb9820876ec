"""The debugger app: `pooltui SPEC`. It owns the session's state and the worker thread.

Threading: one worker thread (`_sim_worker`) owns the simulation through `Controller`;
the UI sends it `Command`s on a queue and gets back `SimFrame`s carrying immutable `Frame`s
(a `Snapshot`, new events, watch values, why it stopped); breakpoints and watches changed
while a command runs reach it frozen (`Controller.follow`); nothing else crosses. A new
command bumps `interrupt_gen`: a long run stops between two steps, a key answers at once.
Screens and widgets talk to the app only by messages (`pooltui.tui.messages`); the app
shows a frame by setting the widgets' reactives. A handler that fails is recorded in
`failures`, shown in the status bar and the Details tab, and the app goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

from rich.style import Style
from textual import work
from textual.app import App
from textual.binding import Binding, BindingType
from textual.css.query import NoMatches
from textual.reactive import reactive
from textual.widgets import Static, TabbedContent
from textual.worker import get_current_worker

from pooltui.sim.snapshot import Snapshot
from pooltui.tui.breakpoint_text import Names, never_made, parse_breakpoint, parsed_again
from pooltui.tui.breakpoints import Breakpoint, BreakpointSet
from pooltui.tui.colors import Palette, palette_from_theme
from pooltui.tui.commands import FOLLOWS, LONG, Change, Command, Frame, WatchValue
from pooltui.tui.debugger import DebuggerScreen, DetailsBody, help_groups
from pooltui.tui.details import (
    HALTS,
    details_text,
    failure_text,
    halt_text,
    lacks_view,
    reload_failed,
    seen_session,
    shown_for,
    start_failure,
    status_fields,
)
from pooltui.tui.driver import Controller, SimLike
from pooltui.tui.loading import compile_expression, compile_watch, load_spec
from pooltui.tui.messages import (
    BreakpointsChanged,
    ChangeSpeed,
    ClearInspection,
    DetailsShown,
    Drive,
    Find,
    HandlerFailed,
    InspectBlock,
    Nowhere,
    Pause,
    QueueShown,
    Reload,
    SimFailed,
    SimFrame,
    WatchesChanged,
    guarded,
)
from pooltui.tui.pacing import IDLE_COLLECT, Pacing
from pooltui.tui.screens import CompileErrorScreen, HelpScreen
from pooltui.tui.widgets.eventlog import EventLog
from pooltui.tui.widgets.panels import QUEUE_ROWS, PoolsPanel, QueuePanel, StagesPanel, WatchesPanel
from pooltui.tui.widgets.source import SourceView
from pooltui.tui.widgets.statictext import set_text
from pooltui.tui.widgets.statusline import StatusLine, fit
from pooltui.tui.widgets.timeline import Timeline, timeline_expression

FRAME_DRAWN_WAIT = 0.25  # seconds a run's worker waits at most for its frame to be drawn
SPEEDS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 5000, 10000, 100000)


class PoolApp(App[int]):
    """The debugger. Build it with `PoolApp.from_spec(path)`, or give it a simulation."""

    CSS_PATH = "app.tcss"
    TITLE = "pooltui"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit", id="quit"),
        Binding("question_mark,f1", "help", "Help", id="help"),
        Binding(
            "ctrl+p", "command_palette", "Commands", False, id="command_palette", priority=True
        ),  # priority, as the keys that open a box: the palette gets the keys typed after it
    ]

    running: reactive[bool] = reactive(False, repaint=False)  # a repaint is the whole screen

    def __init__(
        self,
        spec: str | None = None,
        *,
        sim: SimLike | None = None,
        compile_error: str | None = None,
        compile_condition: Callable[[str], Any] | None = None,
    ) -> None:
        super().__init__()
        # `spec is None`, not falsy: `pooltui ''` is a spec named '' that cannot be read.
        named = getattr(getattr(sim, "program", None), "file", "spec")
        self.spec: str = str(named) if spec is None else spec
        self.sim = sim
        self.compile_error = compile_error
        self._compile_condition = compile_condition
        self._frames_posted = self._frames_shown = 0
        self._frame_drawn = threading.Event()  # set: no progress frame waits to be drawn
        self._frame_drawn.set()
        self.pacing = Pacing()  # the GIL, the garbage collector, the screen's cost per frame
        self.inspecting: tuple[Any, ...] | None = None  # ("session", id), ("block", pool, b)
        self._seen: tuple[int, str, float] | None = None  # a session seen live (`seen_session`)
        self.queue_rows = QUEUE_ROWS  # the Queue panel's rows, planned in frames (`QueueShown`)
        self._details_due = False  # the Details tab is to be made when shown
        self.controller: Controller | None = self._new_controller(sim) if sim is not None else None
        self._commands: queue.Queue[Command | None] = queue.Queue()
        self._seq = 0
        self._issued = 0
        self._issued_kind = ""  # the last command's kind (what a change while it runs is for)
        self._applied = 0
        self.snapshot: Snapshot | None = None
        self.stop: str | None = None
        self.stop_kind: str | None = None
        self.error_text: str | None = None
        self.breakpoints = BreakpointSet()
        self.watches: list[tuple[str, Any]] = []
        self.watch_values: tuple[WatchValue, ...] = ()
        self.rate = 10
        self.debugger: DebuggerScreen | None = None
        self.palette = Palette()
        self.running_style = Style(bold=True)
        self.frames_applied = 0
        self.failures: list[str] = []  # every handler that failed: "where: Type: message"
        self._failed = False  # the current stop is a failure of pooltui itself
        self._failed_seq = -1
        self._stale_seq = 0  # frames of commands up to this one belong to a replaced simulation
        self._stopped_seq = 0  # commands up to this one were told to stop: their runs' frames pass
        self._reload_note = ""  # said with the first frame after a reload
        self._reload_target = -1  # the event a reload goes back to
        self.ended = False  # the simulation has reached its end (or halted): no more events

    @classmethod
    def from_spec(cls, path: str) -> PoolApp:
        """Compile `path` and open it; a spec that does not compile opens the error screen."""
        sim, error = load_spec(path)
        return cls(path, sim=sim, compile_error=error)

    # ----------------------------------------------------------------- lifecycle
    def on_mount(self) -> None:
        self.pacing.start()
        try:
            self.theme_changed_signal.subscribe(self, self._on_theme_changed)
            self._resolve_palette()
            if self.sim is None:
                self.push_screen(
                    CompileErrorScreen(self.spec, self.compile_error or "unknown error")
                )
                return
            self._open_debugger()
        except Exception as exc:  # nothing to show it in: leave with one line, no traceback
            self.failures.append(f"PoolApp.on_mount: {type(exc).__name__}: {exc}")
            self.exit(1, message=start_failure(exc))

    def _open_debugger(
        self, *, start_worker: bool = True, carry: dict[str, Any] | None = None
    ) -> None:
        assert self.sim is not None
        self.debugger = DebuggerScreen(
            self.sim,
            Path(self.spec).name,
            breakpoints=self.breakpoints,
            parse_breakpoint=self.parse_breakpoint,
            watches=self.watches,
            compile_expression=self.compile_expression,
            carry=carry,
        )
        self.push_screen(self.debugger)
        if start_worker:
            self._sim_worker()
        self.send("refresh")

    @guarded
    def on_reload(self, message: Reload) -> None:
        """Compile the spec again: from the compile-error screen, or in place (ctrl+r)."""
        if self.debugger is not None and self.sim is not None:
            self.reload_in_place()
            return
        sim, error = load_spec(self.spec)
        if sim is None:
            self.compile_error = error
            screen = self.screen
            if isinstance(screen, CompileErrorScreen):
                screen.show_errors(error or "")
            return
        self.sim = sim
        self.compile_error = None
        self.ended = False
        self.controller = self._new_controller(sim)
        self.pop_screen()
        self._open_debugger()

    def reload_in_place(self) -> None:
        """Recompile; on success a new simulation with the same breakpoints and watches, at
        the same event when it still has one. On errors the old simulation stays and the
        errors show in the Details tab."""
        sim, error = load_spec(self.spec)
        if sim is None:
            self.stop, text = reload_failed(self.spec, error, Style(color=self.palette.error))
            self.stop_kind = "error"
            self._failed = False
            self._refresh_status()
            screen = self.debugger
            self._details_due = False  # the errors, not the state, when the tab shows
            if screen is not None and screen.is_mounted:
                screen.show_details_text(text)
            return
        index = self.snapshot.event_index if self.snapshot is not None else -1
        old = self.debugger
        carry = old.carry_state() if old is not None else None
        if self.controller is not None:
            self.controller.interrupt_gen += 1  # stop whatever it was doing
        self.sim = sim
        self._stale_seq = self._seq  # frames of the old simulation still on their way
        self.controller = self._new_controller(sim)
        self.snapshot = None
        self.ended = False
        self._inspect(None)
        self.running = False
        kept, dropped = parsed_again(self.breakpoints, self.parse_breakpoint)
        self.breakpoints.items[:] = kept  # one the new spec no longer takes is dropped, said
        again = partial(self.compile_expression, watch=True)
        self.watches[:] = [(text, compile_watch(again, text)) for text, _ in self.watches]
        if old is not None:
            self.pop_screen()
        self._open_debugger(start_worker=False, carry=carry)
        if self.watches:
            self.send("watches", watches=tuple(self.watches))
        if index >= 0:
            self.send("goto", index=index)
        self._reload_note = "; ".join(["reloaded the spec", *dropped])
        self._reload_target = index

    def on_unmount(self) -> None:
        # A run going on stops (a `q` during `c` left it running to its end, the process
        # waiting for it), and a frame waiting to be drawn is not waited for.
        if self.controller is not None:
            self.controller.interrupt_gen += 1
        self._frame_drawn.set()
        self._commands.put(None)
        self.pacing.stop()

    @work(thread=True, group="sim", exit_on_error=False)
    def _sim_worker(self) -> None:
        worker = get_current_worker()
        while not worker.is_cancelled:
            try:
                cmd = self._commands.get(timeout=0.05)
            except queue.Empty:
                continue
            if cmd is None:
                return
            controller = self.controller
            if controller is None:
                continue
            try:
                controller.execute(cmd, self._post_frame)
            except Exception as exc:  # a simulator bug: report it, keep the app alive
                self.post_message(SimFailed(cmd.seq, f"{type(exc).__name__}: {exc}"))

    def _post_frame(self, frame: Frame) -> None:
        # Written only by the worker; `_frames_shown` only by the UI thread.
        self._frames_posted += 1
        if frame.final:
            self.post_message(SimFrame(frame))
            return
        # A run's frame: the worker waits (bounded) until it is drawn; with the GIL, going on
        # only doubled the drawing a typed key waited for (docs/decisions.md, "The debugger").
        self._frame_drawn.clear()
        self.post_message(SimFrame(frame))
        self._frame_drawn.wait(FRAME_DRAWN_WAIT)

    def _ui_ready(self) -> bool:
        return self._frames_shown >= self._frames_posted

    def _new_controller(self, sim: SimLike) -> Controller:
        controller = Controller(sim)
        controller.ui_ready = self._ui_ready
        controller.ui_cost = self.pacing.cost
        program = getattr(sim, "program", None)
        controller.sample_expr = timeline_expression(program, self.compile_expression)
        controller.shown = shown_for(self.inspecting, self.queue_rows)
        return controller

    # ----------------------------------------------------------------- commands
    def send(self, kind: str, **kwargs: Any) -> None:
        """Give the worker a command; any run going on stops between two steps."""
        if self.controller is None:
            return
        self._seq += 1
        self.controller.interrupt_gen += 1  # stops a long run between two steps
        self._stopped_seq = self._issued  # its frames still on their way pass
        self._frame_drawn.set()  # a worker waiting for a draw stops now
        if kind in ("continue", "reverse", "run"):
            kwargs["breakpoints"] = self.breakpoints.copy()
        if kind == "run":
            kwargs["rate"] = float(self.rate)
        cmd = Command(kind, seq=self._seq, gen=self.controller.interrupt_gen, **kwargs)
        self._issued, self._issued_kind = self._seq, kind
        self.running = kind in LONG
        self._failed = False
        self._commands.put(cmd)
        self._refresh_status()

    def pause(self) -> None:
        if self.controller is not None:
            if self.running:
                self.pacing.hold()  # released once the paused frame is drawn
            self.controller.interrupt_gen += 1
            self._stopped_seq = self._issued  # its run's frames still on their way pass
            self._frame_drawn.set()  # a worker waiting for a draw stops now

    def change_speed(self, delta: int) -> None:
        i = min(range(len(SPEEDS)), key=lambda k: abs(SPEEDS[k] - self.rate))
        self.rate = SPEEDS[max(0, min(len(SPEEDS) - 1, i + delta))]
        if self.controller is not None:
            self.controller.run_rate = float(self.rate)  # a run at a speed follows at once
        self._refresh_status()

    @property
    def idle(self) -> bool:
        """No command pending and its last frame applied (tests and `render` wait on this)."""
        return self._applied >= self._issued

    async def settle(self, timeout: float = 30.0) -> None:
        """Wait until every command sent has been done and shown."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not self.idle and loop.time() < deadline:
            await asyncio.sleep(0.005)
        await asyncio.sleep(0)

    # ----------------------------------------------------------------- messages from screens
    @guarded
    def on_drive(self, message: Drive) -> None:
        if message.kind == "goto":
            self.send("goto", index=message.index)
        elif message.kind == "goto_time":
            self.send("goto_time", time=message.time)
        else:
            self.send(message.kind)

    @guarded
    def on_find(self, message: Find) -> None:
        """The next / previous event of a moment and/or a session (`]`, `[`, the palette)."""
        session, said = message.session, never_made(message.moment, self.names())
        if session == "." and said is None:  # the current event's session
            ev = self.snapshot.last_event if self.snapshot is not None else None
            session = ev.session if ev is not None else None
            said = "this event has no session" if session is None else None
        if said is not None:  # said at once, not after a search of the whole run
            self.stop, self.stop_kind = said, "goal"
            self._refresh_status()
            return
        bp = Breakpoint(1, "moment", moment=message.moment, session=session)
        moment = message.moment or "event"
        what = f"{moment} of {session}" if session else moment
        self.send("find", index=message.direction, breakpoints=BreakpointSet([bp], 2), what=what)

    @guarded
    def on_nowhere(self, message: Nowhere) -> None:
        self.stop, self.stop_kind = message.said, message.kind  # at every press of the key
        self._refresh_status()

    @guarded
    def on_pause(self, message: Pause) -> None:
        self.pause()

    @guarded
    def on_change_speed(self, message: ChangeSpeed) -> None:
        self.change_speed(message.delta)

    @guarded
    def on_inspect_block(self, message: InspectBlock) -> None:
        self.inspect_block(message.pool, message.block)

    @guarded
    def on_details_shown(self, message: DetailsShown) -> None:
        if self._details_due:
            self.show_details()

    @guarded
    def on_queue_shown(self, message: QueueShown) -> None:
        self.queue_rows = message.rows
        self._inspect(self.inspecting)

    @guarded
    def on_clear_inspection(self, message: ClearInspection) -> None:
        self._inspect(None)
        self._set_inspected_block(None)
        self.show_details()

    @guarded
    def on_breakpoints_changed(self, message: BreakpointsChanged) -> None:
        self.breakpoints_changed()

    @guarded
    def on_watches_changed(self, message: WatchesChanged) -> None:
        self.watches_changed()

    def on_handler_failed(self, message: HandlerFailed) -> None:
        self.record_failure(message.where, message.error)

    # ----------------------------------------------------------------- failures
    def record_failure(self, where: str, error: BaseException) -> None:
        """A bug in the debugger itself: record it, stop, and say so in plain words in the
        status bar and the Details tab (no traceback); the app keeps running."""
        self.failures.append(f"{where}: {type(error).__name__}: {error}")
        self.pacing.release(freeze=False)  # no paused frame will come to release it
        self._applied = self._issued  # nothing waits for a frame that will not come
        self._failed_seq = self._issued  # frames of commands sent before do not hide it
        self.running = False
        self.stop = f"internal error ({where}): {type(error).__name__}: {error}"
        self.stop_kind = "error"
        self._failed = True
        with contextlib.suppress(Exception):
            self._refresh_status()
        with contextlib.suppress(Exception):
            self._show_failure()

    def _show_failure(self) -> None:
        self._details_due = False  # the failure, not the state, when the tab shows
        screen = self.debugger
        if screen is not None and screen.is_mounted:
            screen.show_details_text(failure_text(self.stop or "", Style(color=self.palette.error)))

    # ----------------------------------------------------------------- frames
    @guarded
    def on_sim_frame(self, message: SimFrame) -> None:
        frame = message.frame
        self.pacing.frame_arrived(frame.final)
        drawn = True
        try:
            if frame.seq <= self._stale_seq:  # of a simulation reloaded since
                pass
            elif frame.final or frame.seq > self._stopped_seq:
                self.apply_frame(frame)
                drawn = frame.final
            else:
                self._note_passed_frame(frame)
        finally:
            self._frames_shown += 1
            if drawn:
                self._frame_drawn.set()
            else:
                self.call_after_refresh(self._frame_drawn.set)
        if frame.final:
            self.call_after_refresh(self.pacing.release)  # a pause's hold, once drawn
            if self.pacing.collect_due:
                self.set_timer(IDLE_COLLECT, self._collect_when_idle)

    def _note_passed_frame(self, frame: Frame) -> None:
        """A run's frame that came after its command was told to stop is not shown (the
        final frame, at that state or later, is next; a `space` waited 30-40 ms for it).
        The timeline keeps its samples and marks, which no other frame carries."""
        screen = self.debugger
        if screen is not None and screen.is_mounted:
            with contextlib.suppress(NoMatches):
                screen.query_one(Timeline).add(
                    frame.snapshot, frame.events, frame.samples, frame.events_from
                )

    def _collect_when_idle(self) -> None:
        if self.idle and not self.running and self.pacing.quiet(IDLE_COLLECT):
            self.pacing.collect()  # else a later frame's timer comes back here

    @guarded
    def on_sim_failed(self, message: SimFailed) -> None:
        self._applied = max(self._applied, message.seq)
        if message.seq >= self._issued:
            self.running = False
            self.pacing.release(freeze=False)
        self.stop = f"internal error in the simulator: {message.text}"
        self.stop_kind = "error"
        self._refresh_status()
        self.show_details(switch=True)

    def apply_frame(self, frame: Frame) -> None:
        screen = self.debugger
        run_frame = self.running  # a run's frame, its last one included
        self.snapshot = frame.snapshot
        snap = frame.snapshot
        self.ended = self.ended or frame.ended or snap.finished or bool(snap.halted)
        self.frames_applied += 1
        if frame.final:
            self._applied = max(self._applied, frame.seq)
            if frame.seq >= self._issued:
                self.running = False
            # (a look says what was said: the same stop, a reload's note kept)
            if not frame.look and not (self._failed and frame.seq <= self._failed_seq):
                self.stop = frame.stop
                self.stop_kind = frame.stop_kind
                self.error_text = frame.error_text
                if self._reload_note and frame.seq >= self._issued:
                    note, self._reload_note = self._reload_note, ""
                    at = frame.snapshot.event_index
                    missing = f"no event #{self._reload_target}"
                    if at < self._reload_target and missing not in (frame.stop or ""):
                        note += f"; it has {missing} now (it ends at #{at})"
                    self.stop = f"{note} — {frame.stop}" if frame.stop else note
            if frame.breakpoints is not None:
                self.breakpoints.take_hits(frame.breakpoints)
            watches = [text for text, _ in self.watches]
            if frame.seq >= self._issued and frame.shows_other_watches(watches):
                self.send("watches", watches=tuple(self.watches))
        elif not self._failed:
            self.stop = None
        self.watch_values = frame.watches
        if screen is None or not screen.is_mounted:
            return
        try:
            self._show_frame(screen, frame, run_frame)
        except NoMatches:  # the screen is being torn down (quit during a run)
            return

    def _show_frame(self, screen: DebuggerScreen, frame: Frame, run_frame: bool) -> None:
        snap = frame.snapshot
        # A run's last frame may carry its last progress frame's snapshot (`Controller.frame`):
        # the panels show it already (drawn again: a whole screen's update more, in a pause).
        on_screen = snap is screen.snapshot and run_frame and screen.grow_only
        # A run's frames only grow the panels' heights, its last one too: a pause that
        # re-laid the screen out (a shorter why, a shorter legend) took 30-70 ms more.
        screen.grow_only = run_frame
        screen.set_palette(self.palette)  # reactives: nothing happens unless the theme changed
        log = screen.query_one(EventLog)
        log.add_events(frame.events_from, frame.events)
        screen.query_one(Timeline).add(snap, frame.events, frame.samples, frame.events_from)
        log.cursor = snap.event_index
        if not on_screen:
            screen.query_one(PoolsPanel).snapshot = snap
            screen.query_one(QueuePanel).snapshot = snap
            screen.query_one(StagesPanel).snapshot = snap
        ev = snap.last_event
        span = ev.span if ev is not None else None
        if frame.error_text is not None:
            err = getattr(self.sim, "error", None)
            span = getattr(err, "span", span)
        screen.query_one(SourceView).span = span
        screen.query_one(WatchesPanel).values = frame.watches
        if frame.final and (frame.stop_kind in HALTS or frame.error_text):  # a condition's too
            self.show_details(switch=True)
        elif self.inspecting is not None or frame.final:
            self.show_details()
        self._refresh_status()
        screen.snapshot = snap

    def watch_running(self, running: bool) -> None:
        if self.debugger is not None:
            self.debugger.running = running

    # ----------------------------------------------------------------- status, details
    def _refresh_status(self) -> None:
        screen = self.debugger
        if screen is None or not screen.is_mounted:
            return
        status = screen.query_one_optional("#status", Static)
        if status is None:
            return
        fields = status_fields(
            screen.spec_name,
            self.snapshot,
            running=self.running,
            ended=self.ended,
            stop=self.stop,
            rate=self.rate,
            breakpoints=(len(self.breakpoints.active()), len(self.breakpoints)),
            running_style=self.running_style,
        )
        if isinstance(status, StatusLine):
            status.show(fields)
        else:  # the placeholder of a screen that failed to compose
            set_text(status, fit(fields, None))
        status.set_class(self.stop_kind in HALTS, "halted")
        status.set_class(self.stop_kind == "breakpoint", "stopped-bp")

    @guarded
    def action_inspect_session(self, session_id: int) -> None:
        self._inspect(("session", session_id))
        self._set_inspected_block(None)
        self.show_details(switch=True)

    def inspect_block(self, pool: str, block: int) -> None:
        """Show a block in the Details tab, marked in its pool's map."""
        self._inspect(("block", pool, block))
        self._set_inspected_block((pool, block))
        self.show_details(switch=True)

    def _inspect(self, what: tuple[Any, ...] | None) -> None:
        """Inspect a session, a block or nothing. Frames carry the inspected sessions'
        views only, and the Queue panel's rows planned (`Shown`): the worker shows the
        state again with what they lack (`look`)."""
        self.inspecting = what
        c, snap = self.controller, self.snapshot
        if c is None:
            return
        c.shown = shown_for(what, self.queue_rows)
        if snap is None or self.running or not lacks_view(snap, what, self.queue_rows):
            return
        self._seq += 1
        self._issued = self._seq
        self._commands.put(Command("look", seq=self._seq, gen=c.interrupt_gen))

    def _set_inspected_block(self, where: tuple[str, int] | None) -> None:
        screen = self.debugger
        if screen is not None and screen.is_mounted:
            screen.query_one(PoolsPanel).inspected = where

    def show_details(self, switch: bool = False) -> None:
        """The Details tab: why it stopped, what is inspected, the current event."""
        screen = self.debugger
        snap = self.snapshot
        if screen is None or snap is None or not screen.is_mounted:
            return
        if not switch and not screen.details_shown():
            # Made when shown (`DetailsShown`): a hidden widget refreshed has Textual map
            # every widget of the screen again (4 ms of a full GPU's paused frame).
            self._details_due = True
            return
        self._details_due = False
        body = screen.query_one_optional("#details-body", DetailsBody)
        if body is None:
            return
        stop, kind, error = self.stop, self.stop_kind, Style(color=self.palette.error)
        halted = partial(halt_text, stop, kind, self._failed, snap, self.error_text, error)
        self._seen = seen_session(snap, self.inspecting, self._seen)
        made = partial(details_text, snap, inspecting=self.inspecting, seen=self._seen)
        body.show(lambda width: made(halted=halted(width)))  # made again at a new width
        if switch:
            screen.query_one(TabbedContent).active = "details"
            screen.show_view("side")

    # ----------------------------------------------------------------- breakpoints, watches
    def names(self) -> Names:
        snap = self.snapshot
        return Names.of(
            getattr(self.sim, "program", None),
            [p.label for p in snap.pools] if snap is not None else (),
            [s.label for s in snap.stages] if snap is not None else (),
        )

    def compile_expression(self, text: str, program: Any = None, *, watch: bool = False) -> Any:
        if self._compile_condition is not None:
            return self._compile_condition(text)
        program = program if program is not None else getattr(self.sim, "program", None)
        return compile_expression(text, program, watch=watch)

    def parse_breakpoint(self, text: str) -> Any:
        return parse_breakpoint(text, self.names(), self.compile_expression)

    def breakpoints_changed(self) -> None:
        # A run going on follows them from its next step (it started with a copy of them).
        if self.running and self._issued_kind in FOLLOWS and self.controller is not None:
            self.controller.follow(Change(self._issued, breakpoints=self.breakpoints.frozen()))
        self._refresh_status()

    def watches_changed(self) -> None:
        # A run going on shows them from its next frame, without stopping.
        watches = tuple(self.watches)
        if self.running and self.controller is not None:
            self.controller.follow(Change(self._issued, watches=watches))
        else:
            self.send("watches", watches=watches)
        if self.debugger is not None and self.debugger.is_mounted:
            self.debugger.show_tab("watches")  # in front at 80x24 too

    # ----------------------------------------------------------------- help, theme
    @guarded
    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            return
        self.push_screen(HelpScreen(help_groups(self.BINDINGS)))

    @guarded
    def _on_theme_changed(self, theme: Any) -> None:
        self._resolve_palette()

    def _resolve_palette(self) -> None:
        """The panels' and block map's colours (rich styles, not CSS) from the theme."""
        self.palette = palette_from_theme(self.get_css_variables())
        self.running_style = Style(bold=True, color=self.palette.good)
        screen = self.debugger
        if screen is not None and screen.is_mounted:
            screen.set_palette(self.palette)
            self._refresh_status()
