"""The debugger app: `pooltui SPEC`.

Threading: one worker thread (`_sim_worker`) owns the simulation through `Controller`;
the UI sends it `Command`s on a queue and gets back `SimFrame` messages carrying immutable
`Frame`s (a `Snapshot`, new events, watch values, why it stopped). Nothing else crosses.
A new command bumps the controller's `interrupt_gen`, so a long run stops between two
steps and a key answers at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
from collections.abc import Callable, Iterable
from functools import partial, wraps
from pathlib import Path
from typing import Any, ClassVar, TypeVar, cast

from rich.style import Style
from rich.text import Text
from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.color import Color
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Footer, Static, TabbedContent, TabPane
from textual.worker import get_current_worker

from pooltui.sim.snapshot import Snapshot
from pooltui.tui.breakpoints import BreakpointSet, Names, parse_breakpoint
from pooltui.tui.driver import LONG, Command, Controller, Frame, SimLike, WatchValue
from pooltui.tui.prose import reflow
from pooltui.tui.screens import (
    BreakpointsScreen,
    CompileErrorScreen,
    GotoScreen,
    HelpScreen,
    WatchesScreen,
)
from pooltui.tui.widgets.blockmap import BlockMapView, Palette
from pooltui.tui.widgets.eventlog import EventLog
from pooltui.tui.widgets.panels import (
    PoolsPanel,
    QueuePanel,
    StagesPanel,
    fmt,
    inspect_block_text,
    inspect_session_text,
    set_text,
    watches_text,
)
from pooltui.tui.widgets.source import SourceView

SPEEDS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 5000, 10000, 100000)

F = TypeVar("F", bound=Callable[..., Any])


def guarded(method: F) -> F:
    """A handler that never lets an exception reach Textual (which would show a traceback
    and quit): a bug becomes a stop, with a plain message in the status bar and Details."""

    @wraps(method)
    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except Exception as exc:
            app = self if isinstance(self, PoolApp) else getattr(self, "app", None)
            if isinstance(app, PoolApp):
                app.report_internal_error(method.__name__, exc)
            return None

    return cast(F, run)


class SimFrame(Message):
    def __init__(self, frame: Frame) -> None:
        super().__init__()
        self.frame = frame


class SimFailed(Message):
    """The simulator raised (a bug, not a spec error): say so, never a traceback."""

    def __init__(self, seq: int, text: str) -> None:
        super().__init__()
        self.seq = seq
        self.text = text


# --------------------------------------------------------------------------- palette


class DebuggerCommands(Provider):
    """The main actions in the command palette."""

    COMMANDS: ClassVar[tuple[tuple[str, str, str], ...]] = (
        ("Step one event", "step", "apply the next event (n, →)"),
        ("Step one iteration", "step_iteration", "run to the next iteration-end (i)"),
        ("Step back", "back", "go back one event (p, ←)"),
        ("Continue", "continue", "run to a breakpoint, a violation, a deadlock or the end (c)"),
        ("Reverse continue", "reverse_continue", "step back to a breakpoint or event 0 (C)"),
        ("Go to event or time", "goto", "jump to an event index or a simulated time (g)"),
        ("Run at speed", "run", "play events at the chosen speed (r)"),
        ("Pause", "pause", "stop a run (space)"),
        ("Breakpoints", "breakpoints", "add, disable, delete breakpoints (b)"),
        ("Watches", "watches", "expressions shown at every step (w)"),
        ("Help: keys", "app.help", "every binding (?, F1)"),
    )

    def _callback(self, action: str) -> Callable[[], Any]:
        app = self.app
        assert isinstance(app, PoolApp)

        def run() -> None:
            screen = app.debugger
            if screen is None:
                return
            if action.startswith("app."):
                app.call_later(app.run_action, action[4:])
            else:
                app.call_later(screen.run_action, action)

        return run

    async def discover(self) -> Hits:
        for name, action, help_text in self.COMMANDS:
            yield DiscoveryHit(name, self._callback(action), help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, action, help_text in self.COMMANDS:
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), self._callback(action), help=help_text)


# --------------------------------------------------------------------------- the main screen


class DebuggerScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n,right", "step", "Step", id="step", priority=True),
        Binding("i", "step_iteration", "Iteration", id="step_iteration"),
        Binding("p,left", "back", "Back", id="back", priority=True),
        Binding("c", "continue", "Continue", id="continue"),
        Binding("C,shift+c", "reverse_continue", "Reverse", id="reverse_continue"),
        Binding("g", "goto", "Go to", id="goto"),
        Binding("r", "run", "Run", id="run"),
        Binding("space", "pause", "Pause", id="pause", priority=True),
        Binding("plus,equals_sign", "speed(1)", "Faster", id="faster", show=False),
        Binding("minus", "speed(-1)", "Slower", id="slower", show=False),
        Binding("b", "breakpoints", "Breakpoints", id="breakpoints"),
        Binding("w", "watches", "Watches", id="watches"),
        Binding("escape", "clear_inspect", "Clear inspection", id="clear_inspect", show=False),
    ]

    def __init__(self, sim: SimLike, spec_name: str) -> None:
        super().__init__()
        self.sim = sim
        self.spec_name = spec_name
        program = getattr(sim, "program", None)
        self.source_text = getattr(program, "source", "") or ""
        self.header_comment = getattr(program, "header_comment", "") or ""

    def compose(self) -> ComposeResult:
        yield Static(id="status")
        with Horizontal(id="top"):
            pools = PoolsPanel(id="pools", classes="panel")
            pools.border_title = "Pools"
            yield pools
            with Vertical(id="right"):
                q = QueuePanel(id="queue", classes="panel")
                q.border_title = "Queue"
                yield q
                s = StagesPanel(id="stages", classes="panel")
                s.border_title = "Stages"
                yield s
        with Horizontal(id="bottom"):
            log = EventLog(id="events", classes="panel")
            log.border_title = "Events"
            yield log
            src = SourceView(self.source_text, id="source", classes="panel")
            src.border_title = "Source"
            yield src
            with TabbedContent(id="side", classes="panel", initial="notes"):
                with TabPane("Notes", id="notes"):
                    yield Static(
                        reflow(self.header_comment) or "(the spec opens with no comment)",
                        id="notes-body",
                        markup=False,
                    )
                with TabPane("Watches", id="watches"):
                    yield Static(id="watches-body")
                with TabPane("Details", id="details"):
                    yield Static("Click a block or a session to inspect it.", id="details-body")
        yield Footer()

    @property
    def pool_app(self) -> PoolApp:
        app = self.app
        assert isinstance(app, PoolApp)
        return app

    def on_mount(self) -> None:
        self.query_one(EventLog).focus()

    # -- actions: all go to the worker
    @guarded
    def action_step(self) -> None:
        self.pool_app.send("step")

    @guarded
    def action_step_iteration(self) -> None:
        self.pool_app.send("iteration")

    @guarded
    def action_back(self) -> None:
        self.pool_app.send("back")

    @guarded
    def action_continue(self) -> None:
        self.pool_app.send("continue")

    @guarded
    def action_reverse_continue(self) -> None:
        self.pool_app.send("reverse")

    @guarded
    def action_run(self) -> None:
        self.pool_app.send("run")

    @guarded
    def action_pause(self) -> None:
        self.pool_app.pause()

    @guarded
    def action_speed(self, delta: int) -> None:
        self.pool_app.change_speed(delta)

    @guarded
    def action_goto(self) -> None:
        def done(target: tuple[str, float] | None) -> None:
            if target is None:
                return
            kind, value = target
            if kind == "event":
                self.pool_app.send("goto", index=int(value))
            else:
                self.pool_app.send("goto_time", time=value)

        self.app.push_screen(GotoScreen(), done)

    @guarded
    def action_breakpoints(self) -> None:
        app = self.pool_app
        self.app.push_screen(BreakpointsScreen(app.breakpoints, app.parse_breakpoint))

    @guarded
    def action_watches(self) -> None:
        app = self.pool_app
        self.app.push_screen(WatchesScreen(app.watches, app.compile_expression))

    @guarded
    def action_clear_inspect(self) -> None:
        self.pool_app.inspecting = None
        self.pool_app.show_details()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The footer shows the keys that apply now."""
        app = self.pool_app
        snap = app.snapshot
        if action == "pause":
            return app.running
        if snap is None:
            return True
        stuck = bool(snap.halted) or snap.finished
        if action in ("step", "step_iteration", "continue", "run"):
            if snap.halted and snap.event_index < snap.events_total - 1:
                return True  # went back from a halt: the way forward replays the log
            return not stuck
        if action in ("back", "reverse_continue"):
            return snap.event_index >= 0
        if action == "speed":
            return True
        return True

    # -- messages from widgets
    @guarded
    def on_event_log_chosen(self, message: EventLog.Chosen) -> None:
        self.pool_app.send("goto", index=message.index)

    @guarded
    def on_block_map_view_block_clicked(self, message: BlockMapView.BlockClicked) -> None:
        self.pool_app.inspect_block(message.pool, message.block)


# --------------------------------------------------------------------------- the app


class PoolApp(App[int]):
    """The debugger. Build it with `PoolApp.from_spec(path)`, or give it a simulation."""

    CSS_PATH = "app.tcss"
    TITLE = "pooltui"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit", id="quit"),
        Binding("question_mark,f1", "help", "Help", id="help"),
        Binding("ctrl+p", "command_palette", "Commands", id="command_palette", show=False),
    ]
    COMMANDS = App.COMMANDS | {DebuggerCommands}

    running: reactive[bool] = reactive(False)

    def __init__(
        self,
        spec: str | None = None,
        *,
        sim: SimLike | None = None,
        compile_error: str | None = None,
        compile_condition: Callable[[str], Any] | None = None,
    ) -> None:
        super().__init__()
        self.spec: str = spec or str(getattr(getattr(sim, "program", None), "file", "spec"))
        self.sim = sim
        self.compile_error = compile_error
        self._compile_condition = compile_condition
        self._frames_posted = 0
        self._frames_shown = 0
        self.controller: Controller | None = self._new_controller(sim) if sim is not None else None
        self._commands: queue.Queue[Command | None] = queue.Queue()
        self._seq = 0
        self._issued = 0
        self._applied = 0
        self.snapshot: Snapshot | None = None
        self.stop: str | None = None
        self.stop_kind: str | None = None
        self.error_text: str | None = None
        self.breakpoints = BreakpointSet()
        self.watches: list[tuple[str, Any]] = []
        self.watch_values: tuple[WatchValue, ...] = ()
        self.rate = 10
        self.inspecting: tuple[Any, ...] | None = None
        self.debugger: DebuggerScreen | None = None
        self.palette = Palette()
        self.frames_applied = 0
        self._bindings_key: tuple[bool, ...] = ()
        self.internal_errors: list[str] = []

    @classmethod
    def from_spec(cls, path: str) -> PoolApp:
        """Compile `path` and open it; a spec that does not compile opens the error screen."""
        sim, error = load_spec(path)
        return cls(path, sim=sim, compile_error=error)

    # ----------------------------------------------------------------- lifecycle
    def on_mount(self) -> None:
        self.theme_changed_signal.subscribe(self, self._on_theme_changed)
        self._resolve_palette()
        if self.sim is None:
            self.push_screen(CompileErrorScreen(self.spec, self.compile_error or "unknown error"))
            return
        self._open_debugger()

    def _open_debugger(self) -> None:
        assert self.sim is not None
        self.debugger = DebuggerScreen(self.sim, Path(self.spec).name)
        self.push_screen(self.debugger)
        self._sim_worker()
        self.send("refresh")

    @guarded
    def action_reload(self) -> None:
        """From the compile-error screen: compile again."""
        sim, error = load_spec(self.spec)
        if sim is None:
            self.compile_error = error
            screen = self.screen
            if isinstance(screen, CompileErrorScreen):
                screen.text = error or ""
                screen.query_one("#error-body", Static).update(error or "")
            return
        self.sim = sim
        self.controller = self._new_controller(sim)
        self.pop_screen()
        self._open_debugger()

    def on_unmount(self) -> None:
        self._commands.put(None)

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
        self.post_message(SimFrame(frame))

    def _ui_ready(self) -> bool:
        return self._frames_shown >= self._frames_posted

    def _new_controller(self, sim: SimLike) -> Controller:
        controller = Controller(sim)
        controller.ui_ready = self._ui_ready
        return controller

    # ----------------------------------------------------------------- commands
    def send(self, kind: str, **kwargs: Any) -> None:
        if self.controller is None:
            return
        self._seq += 1
        self.controller.interrupt_gen += 1  # stops a long run between two steps
        if kind in ("continue", "reverse", "run"):
            kwargs["breakpoints"] = self.breakpoints.copy()
        if kind == "run":
            kwargs["rate"] = float(self.rate)
        cmd = Command(kind, seq=self._seq, gen=self.controller.interrupt_gen, **kwargs)
        self._issued = self._seq
        self.running = kind in LONG
        self._commands.put(cmd)
        self._refresh_status()

    def pause(self) -> None:
        if self.controller is not None:
            self.controller.interrupt_gen += 1

    def change_speed(self, delta: int) -> None:
        i = min(range(len(SPEEDS)), key=lambda k: abs(SPEEDS[k] - self.rate))
        self.rate = SPEEDS[max(0, min(len(SPEEDS) - 1, i + delta))]
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

    # ----------------------------------------------------------------- frames
    @guarded
    def on_sim_frame(self, message: SimFrame) -> None:
        try:
            self.apply_frame(message.frame)
        finally:
            self._frames_shown += 1

    @guarded
    def on_sim_failed(self, message: SimFailed) -> None:
        self._applied = max(self._applied, message.seq)
        if message.seq >= self._issued:
            self.running = False
        self.stop = f"internal error in the simulator: {message.text}"
        self.stop_kind = "error"
        self._refresh_status()
        self.show_details(switch=True)

    def report_internal_error(self, where: str, exc: BaseException) -> None:
        """A bug in the debugger itself: stop, and say so in plain words (no traceback)."""
        self.internal_errors.append(f"{where}: {type(exc).__name__}: {exc}")
        self._applied = self._issued  # nothing waits for a frame that will not come
        self.running = False
        self.stop = f"internal error ({where}): {type(exc).__name__}: {exc}"
        self.stop_kind = "error"
        with contextlib.suppress(Exception):
            self._refresh_status()
        with contextlib.suppress(Exception):
            self._show_stop_details()

    def _show_stop_details(self) -> None:
        screen = self.debugger
        if screen is None or not screen.is_mounted:
            return
        text = Text()
        text.append("Stopped: ", Style(bold=True, color=self.palette.error))
        text.append((self.stop or "") + "\n", Style(bold=True))
        text.append(
            "This is a bug in pooltui, not in your spec. The run is paused; you can step, "
            "go back or quit.\n",
            "dim",
        )
        set_text(screen.query_one("#details-body", Static), text, wrap=True)
        screen.query_one(TabbedContent).active = "details"

    def _handle_exception(self, error: Exception) -> None:
        """The last resort, for an exception outside our handlers: quit with one plain
        line instead of Textual's traceback. (Tests still see the exception.)"""
        self._return_code = 1
        if self._exception is None:
            self._exception = error
            self._exception_event.set()
        self.panic(Text(f"pooltui: internal error: {type(error).__name__}: {error}"))

    def apply_frame(self, frame: Frame) -> None:
        screen = self.debugger
        self.snapshot = frame.snapshot
        self.frames_applied += 1
        if frame.final:
            self._applied = max(self._applied, frame.seq)
            if frame.seq >= self._issued:
                self.running = False
            self.stop = frame.stop
            self.stop_kind = frame.stop_kind
            self.error_text = frame.error_text
            if frame.breakpoints is not None:
                self._merge_hits(frame.breakpoints)
        else:
            self.stop = None
        self.watch_values = frame.watches
        if screen is None or not screen.is_mounted:
            return
        try:
            self._show_frame(screen, frame)
        except NoMatches:  # the screen is being torn down (quit during a run)
            return

    def _show_frame(self, screen: DebuggerScreen, frame: Frame) -> None:
        snap = frame.snapshot
        log = screen.query_one(EventLog)
        log.add_events(frame.events_from, frame.new_events)
        log.set_cursor(snap.event_index)
        screen.query_one(PoolsPanel).update_snapshot(snap, self.palette)
        screen.query_one(QueuePanel).update_snapshot(snap)
        screen.query_one(StagesPanel).update_snapshot(snap)
        ev = snap.last_event
        span = ev.span if ev is not None else None
        if frame.error_text is not None:
            err = getattr(self.sim, "error", None)
            span = getattr(err, "span", span)
        screen.query_one(SourceView).set_span(span)
        set_text(
            screen.query_one("#watches-body", Static),
            watches_text(frame.watches, self.palette.error),
        )
        if frame.final and frame.stop_kind in ("violation", "error", "halt"):
            self.show_details()
            screen.query_one(TabbedContent).active = "details"
        elif self.inspecting is not None or frame.final:
            self.show_details()
        self._refresh_status()
        # Only when what the footer shows can change: refresh_bindings rebuilds the footer.
        behind_halt = bool(snap.halted) and snap.event_index < snap.events_total - 1
        key = (self.running, bool(snap.halted), snap.finished, snap.event_index >= 0, behind_halt)
        if key != self._bindings_key:
            self._bindings_key = key
            screen.refresh_bindings()

    def _merge_hits(self, ran: BreakpointSet) -> None:
        for bp in ran:
            mine = self.breakpoints.get(bp.id)
            if mine is not None:
                mine.hits = bp.hits
                if mine.one_shot and not bp.enabled:
                    mine.enabled = False

    # ----------------------------------------------------------------- status
    def _refresh_status(self) -> None:
        screen = self.debugger
        if screen is None or not screen.is_mounted:
            return
        try:
            status = screen.query_one("#status", Static)
        except NoMatches:
            return
        snap = self.snapshot
        text = Text()
        text.append(f"{screen.spec_name}   ", Style(bold=True))
        if snap is not None:
            text.append(f"t={fmt(snap.time)}s · ")
            where = "start" if snap.event_index < 0 else f"event #{snap.event_index}"
            text.append(f"{where} of {snap.events_total} · ")
        if self.running:
            text.append("▶ running", Style(bold=True, color="#5fc46a"))
        else:
            text.append("paused", Style(bold=True))
        if self.stop:
            # What stopped it comes first: the counts can be cut, this cannot.
            text.append(" — ", "dim")
            text.append(self.stop, Style(bold=True))
        text.append(f" · speed {self.rate}/s", "dim")
        if self.breakpoints.items:
            text.append(
                f" · breakpoints {len(self.breakpoints.active())}/{len(self.breakpoints)}", "dim"
            )
        if snap is not None:
            c = snap.counts
            text.append(
                f" · arrived {c.arrived} · live {c.live} · done {c.done} · rejected {c.rejected}",
                "dim",
            )
        set_text(status, text)
        status.set_class(self.stop_kind in ("violation", "error", "halt"), "halted")
        status.set_class(self.stop_kind == "breakpoint", "stopped-bp")

    # ----------------------------------------------------------------- inspection
    @guarded
    def action_inspect_session(self, session_id: int) -> None:
        self.inspecting = ("session", session_id)
        self.show_details(switch=True)

    @guarded
    def inspect_block(self, pool: str, block: int) -> None:
        self.inspecting = ("block", pool, block)
        screen = self.debugger
        if screen is not None:
            card = screen.query_one(PoolsPanel).card(pool)
            if card is not None and card.map is not None:
                card.map.selected = block
                card.map._invalidate()
        self.show_details(switch=True)

    @guarded
    def show_details(self, switch: bool = False) -> None:
        screen = self.debugger
        snap = self.snapshot
        if screen is None or snap is None or not screen.is_mounted:
            return
        text = Text()
        if self.stop_kind in ("violation", "error", "halt") and self.stop:
            text.append("Stopped: ", Style(bold=True, color=self.palette.error))
            text.append(self.stop + "\n", Style(bold=True))
            if snap.violation is not None:
                v = snap.violation
                text.append(f"invariant: {v.invariant}\n{v.message}\n")
                if v.blocks:
                    text.append(f"blocks of {v.pool}: {', '.join(map(str, v.blocks[:32]))}\n")
            if self.error_text:
                text.append(self.error_text + "\n", Style(color=self.palette.error))
            if snap.last_event is not None:
                text.append(f"at {snap.last_event.describe()}\n", "dim")
            text.append("\n")
        if self.inspecting is not None:
            if self.inspecting[0] == "session":
                text.append_text(inspect_session_text(snap, self.inspecting[1]))
            else:
                _, pool, block = self.inspecting
                text.append_text(inspect_block_text(snap, pool, block))
        else:
            text.append("Click a block or a session to inspect it.\n", "dim italic")
        ev = snap.last_event
        if ev is not None:
            # The whole why, which the event log may have had to cut, and the figures.
            text.append(f"\nevent #{ev.index} at {fmt(ev.time)}s: ", "dim")
            text.append(ev.moment, Style(bold=True))
            text.append(f"\n{ev.why}\n")
            if ev.data:
                figures = "  ".join(f"{k}={_figure(v)}" for k, v in ev.data)
                text.append(figures + "\n", "dim")
        try:
            set_text(screen.query_one("#details-body", Static), text, wrap=True)
        except NoMatches:
            return
        if switch:
            screen.query_one(TabbedContent).active = "details"

    # ----------------------------------------------------------------- breakpoints, watches
    def names(self) -> Names:
        program = getattr(self.sim, "program", None)
        pools: list[str] = [p.name for p in getattr(program, "pools", ())]
        stages: list[str] = [s.name for s in getattr(program, "stages", ())]
        classes: list[str] = [c.name for c in getattr(program, "sessions", ())]
        if self.snapshot is not None:
            pools += [p.label for p in self.snapshot.pools]
            stages += [s.label for s in self.snapshot.stages]
        return Names(tuple(pools), tuple(stages), tuple(classes))

    def compile_expression(self, text: str) -> Any:
        if self._compile_condition is not None:
            return self._compile_condition(text)
        import pooltui.lang as lang

        # The front end loads lazily (module __getattr__), so mypy sees an object here.
        compile_condition = cast(Callable[..., Any], lang.compile_condition)
        program = getattr(self.sim, "program", None)
        return compile_condition(text, program, "<condition>")

    def parse_breakpoint(self, text: str) -> Any:
        return parse_breakpoint(text, self.names(), self.compile_expression)

    @guarded
    def breakpoints_changed(self) -> None:
        self._refresh_status()

    @guarded
    def watches_changed(self) -> None:
        self.send("watches", watches=tuple(self.watches))
        if self.debugger is not None and self.debugger.is_mounted:
            self.debugger.query_one(TabbedContent).active = "watches"

    # ----------------------------------------------------------------- help, theme
    @guarded
    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            return
        groups: list[tuple[str, list[Binding]]] = [("Debugger", _bindings(DebuggerScreen.BINDINGS))]
        groups.append(("Event log (when focused)", _bindings(EventLog.BINDINGS)))
        groups.append(("Breakpoints screen", _bindings(BreakpointsScreen.BINDINGS)))
        groups.append(("Watches screen", _bindings(WatchesScreen.BINDINGS)))
        groups.append(("App", _bindings(self.BINDINGS)))
        self.push_screen(HelpScreen(groups))

    @guarded
    def _on_theme_changed(self, theme: Any) -> None:
        self._resolve_palette()
        if self.snapshot is not None and self.debugger is not None and self.debugger.is_mounted:
            self.debugger.query_one(PoolsPanel).update_snapshot(self.snapshot, self.palette)
            self._apply_theme_to_views()

    def _resolve_palette(self) -> None:
        variables = self.get_css_variables()

        def colour(name: str, default: str, over: str = "#000000") -> str:
            # Theme variables may carry alpha; rich wants solid #rrggbb.
            value = variables.get(name)
            try:
                return (Color.parse(over) + Color.parse(value)).hex6 if value else default
            except Exception:
                return default

        background = colour("surface", "#1e1e1e")
        for_bg = partial(colour, over=background)
        self.palette = Palette(
            background=background,
            free=Color.parse(for_bg("foreground", "#e0e0e0"))
            .blend(Color.parse(background), 0.75)
            .hex6,
            muted=for_bg("foreground-muted", "#808080"),
            highlight=for_bg("foreground", "#ffffff"),
            error=for_bg("error", "#ff4444"),
        )
        self._apply_theme_to_views()

    def _apply_theme_to_views(self) -> None:
        screen = self.debugger
        if screen is None or not screen.is_mounted:
            return
        variables = self.get_css_variables()
        bg = self.palette.background
        log = screen.query_one(EventLog)
        log.background = bg
        accent = variables.get("primary", "#30507a")[:7]
        with contextlib.suppress(Exception):
            log.highlight_style = Style(
                bgcolor=Color.parse(accent).blend(Color.parse(bg), 0.5).hex6, bold=True
            )
        log._cache.clear()
        log.refresh()
        src = screen.query_one(SourceView)
        src.background = bg
        try:
            src.mark_bg = (
                Color.parse(variables.get("warning", "#c9a227")[:7])
                .blend(Color.parse(bg), 0.55)
                .hex6
            )
            src.line_bg = (
                Color.parse(variables.get("warning", "#c9a227")[:7])
                .blend(Color.parse(bg), 0.85)
                .hex6
            )
        except Exception:
            pass
        src.refresh()


def _figure(value: Any) -> str:
    if isinstance(value, tuple | list):
        return "(" + ", ".join(_figure(v) for v in value) + ")"
    if isinstance(value, float):
        return fmt(value)
    return str(value)


def _bindings(bindings: Iterable[BindingType]) -> list[Binding]:
    return [b for b in bindings if isinstance(b, Binding)]


# --------------------------------------------------------------------------- loading


def load_spec(path: str) -> tuple[SimLike | None, str | None]:
    """(simulation, None) or (None, the errors exactly as `pooltui check` prints them)."""
    from pooltui.lang import SpecError

    try:
        import pooltui.lang as lang

        program = cast(Callable[[str], Any], lang.compile_file)(path)
    except SpecError as exc:
        return None, check_text(exc)
    except OSError as exc:
        return None, f"pooltui: cannot read '{path}': {exc.strerror or exc}"
    try:
        from pooltui.sim import Simulation

        return Simulation(program), None
    except SpecError as exc:
        return None, check_text(exc)
    except Exception as exc:  # never a traceback: say what failed
        return None, f"{path}: error: cannot start the simulation: {type(exc).__name__}: {exc}"


def check_text(exc: Any) -> str:
    """What `pooltui check` prints for a spec that does not compile: the located errors,
    then how many."""
    n = len(exc.diagnostics)
    return f"{exc.render()}\n{n:,} error{'' if n == 1 else 's'}"
