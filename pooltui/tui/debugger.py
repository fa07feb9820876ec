"""The main screen: the panels and the debugger's keys (its commands in the palette are
`pooltui.tui.palette`'s).

Its keys post messages (`pooltui.tui.messages`) that the app handles; it never imports the
app. What it shows comes in through reactives the app sets: `snapshot` and `running` (which
keys apply now) here, and each widget's own `snapshot` / `cursor` / `span`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, ClassVar

from rich.style import Style
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.command import Provider
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.css.query import NoMatches
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Static, Tab, TabbedContent, TabPane, Tabs

from pooltui.lang.errors import escaped, shown_line
from pooltui.sim.events import MOMENTS, Event
from pooltui.sim.snapshot import Snapshot
from pooltui.tui.breakpoint_text import Names, never_made, never_named
from pooltui.tui.colors import Palette, session_hex
from pooltui.tui.details import nowhere_said
from pooltui.tui.driver import SimLike
from pooltui.tui.messages import (
    ChangeSpeed,
    ClearInspection,
    DetailsShown,
    Drive,
    Find,
    InspectBlock,
    Nowhere,
    Pause,
    Reload,
    guarded,
    guarded_compose,
)
from pooltui.tui.palette import DebuggerCommands, nowhere_bindings
from pooltui.tui.prose import Notes, reflow
from pooltui.tui.screens import (
    BreakpointsScreen,
    FilterScreen,
    GotoScreen,
    MomentScreen,
    WatchesScreen,
    parse_filter,
)
from pooltui.tui.widgets.blockmap import BlockMapView
from pooltui.tui.widgets.eventlog import EventLog
from pooltui.tui.widgets.keybar import KeyBar
from pooltui.tui.widgets.panels import PoolsPanel, QueuePanel, StagesPanel, WatchesPanel
from pooltui.tui.widgets.source import SourceView
from pooltui.tui.widgets.statictext import set_text
from pooltui.tui.widgets.statusline import StatusLine
from pooltui.tui.widgets.timeline import Timeline
from pooltui.tui.widgets.whyline import WhyLine


def why_text(event: Event | None) -> Text:
    """The why line: `#index moment session: why`, all of it."""
    text = Text()
    if event is None:
        text.append("why: ", Style(bold=True))
        text.append("no event yet (n steps one)", "dim italic")
        return text
    text.append(f"#{event.index} {event.moment}", Style(bold=True))
    if event.session:
        text.append(f" {event.session}", Style(color=session_hex(event.session_id), bold=True))
    text.append(": ", Style(bold=True))
    text.append(event.why)
    return text


VIEWS = (
    ("pools", "Pools"),
    ("events", "Events"),
    ("queue", "Queue"),
    ("stages", "Stages"),
    ("source", "Source"),
    ("side", "Notes·Watches·Details"),
)
NARROW_WIDTH = 100  # narrower than this, or lower than NARROW_HEIGHT: one panel at a time
NARROW_HEIGHT = 28
COMPACT_WIDTH = 150  # narrower: the footer packs its keys tighter
KEY_LINE_WIDTH = 140  # narrower: the key line instead of the footer (which would cut q, ?)
# The narrow layout's key line (its footer would cut b, w, q and ?): the essentials first.
KEYS = (
    ("?", "help"),
    ("q", "quit"),
    ("b", "break"),
    ("w", "watch"),
    ("v", "panel"),
    ("n/p", "step"),
    ("c", "cont"),
    ("g", "goto"),
    ("]/[", "next"),
    ("/", "filter"),
    ("t", "teach"),
    ("r", "run"),
    ("^r", "reload"),
)


def keys_line(narrow: bool = True) -> Text:
    text = Text()
    for key, what in KEYS:
        if key == "v" and not narrow:
            continue  # every panel is on screen
        if text:
            text.append("  ")
        text.append(key, Style(bold=True))
        text.append(f" {what}")
    return text


class DetailsBody(Static):
    """The Details tab's text, laid out for its width (`show`) and again when the width
    changes: a located error's lines are fitted to it (`pooltui.lang.errors.fit`), where
    wrapped their caret would point at another part of the line. A text set otherwise
    (`show_details_text`: a failure, a reload's errors) is kept as it is."""

    _layout: Callable[[int], Text] | None = None
    _width = -1

    def show(self, layout: Callable[[int], Text]) -> None:
        self._layout, self._width = layout, self.content_size.width
        set_text(self, layout(self._width), wrap=True)

    def show_text(self, text: Text) -> None:
        self._layout = None
        set_text(self, text, wrap=True)

    def on_resize(self, event: events.Resize) -> None:
        if self._layout is not None and self.content_size.width != self._width:
            self.show(self._layout)


class DebuggerScreen(Screen[None]):
    """Pools, queue and stages above; the event log, the source and the side tabs below."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n,right", "step", "Step", id="step", priority=True),
        Binding("i", "step_iteration", "Iteration", id="step_iteration"),
        Binding("p,left", "back", "Back", id="back", priority=True),
        Binding("c", "continue", "Continue", id="continue"),
        Binding("C,shift+c", "reverse_continue", "Reverse", id="reverse_continue"),
        # The keys that open a box are priority bindings, so the box opens before the keys
        # typed after them are handled (else one of those, `p` say, steps back first).
        Binding("g", "goto", "Go to", id="goto", priority=True),
        Binding("r", "run", "Run", id="run"),
        Binding("space", "pause", "Pause", id="pause", priority=True),
        Binding("plus,equals_sign", "speed(1)", "Faster", id="faster", show=False),
        Binding("minus", "speed(-1)", "Slower", id="slower", show=False),
        Binding("b", "breakpoints", "Breakpoints", id="breakpoints", priority=True),
        Binding("w", "watches", "Watches", id="watches", priority=True),
        Binding("escape", "clear_inspect", "Clear inspection", id="clear_inspect", show=False),
        Binding(
            "right_square_bracket", "find(1)", "Next…", id="find_next", show=False, priority=True
        ),
        Binding(
            "left_square_bracket",
            "find(-1)",
            "Previous…",
            id="find_previous",
            show=False,
            priority=True,
        ),
        Binding("slash", "filter", "Filter", id="filter", show=False, priority=True),
        Binding("t", "teach", "Teach", id="teach", show=False),
        Binding("ctrl+r", "reload", "Reload spec", id="reload", show=False),
        Binding("v", "next_view", "Next panel (narrow)", id="next_view", show=False),
    ]
    BINDINGS += nowhere_bindings(BINDINGS)
    COMMANDS: ClassVar[set[type[Provider] | Callable[[], type[Provider]]]] = {DebuggerCommands}

    snapshot: reactive[Snapshot | None] = reactive(None, always_update=True, repaint=False)
    running: reactive[bool] = reactive(False, repaint=False)
    narrow: reactive[bool] = reactive(False, repaint=False)
    view: reactive[str] = reactive("pools", repaint=False)
    teaching: reactive[bool] = reactive(False, repaint=False)

    def __init__(
        self,
        sim: SimLike,
        spec_name: str,
        *,
        breakpoints: Any = None,
        parse_breakpoint: Callable[[str], Any] | None = None,
        watches: list[tuple[str, Any]] | None = None,
        compile_expression: Callable[..., Any] | None = None,
        carry: dict[str, Any] | None = None,
    ) -> None:
        super().__init__()
        self.carry = carry or {}  # the layout of the screen this one replaces (a reload)
        # The view the user had when Details was brought forward (`show_details_text`).
        self._chosen_view: str | None = None
        self._log_gave_focus = False  # the event log, hidden, gave its focus up
        self.sim = sim
        self.spec_name = escaped(spec_name)  # a file name can hold terminal escapes
        program = getattr(sim, "program", None)
        self.source_text = getattr(program, "source", "") or ""
        self.header_comment = getattr(program, "header_comment", "") or ""
        self.breakpoints = breakpoints
        self.parse_breakpoint = parse_breakpoint
        self.watches = watches if watches is not None else []
        self.compile_expression = compile_expression
        self._bindings_key: tuple[bool, ...] = ()
        self._why_from_log = False
        # Heights only grow (the app sets it): while a run goes on and on its last frame,
        # so that neither re-lays the screen out; the next step's frame fits them again.
        self.grow_only = False
        self.filter_text = ""
        self.key_line = False

    @guarded_compose
    def compose(self) -> ComposeResult:
        yield StatusLine(id="status")
        yield Timeline(id="timeline")
        # The tabs open on the view a reload carries: opened on the first, their activation
        # of it came after the carried view was set, and put Pools in front again.
        yield Tabs(
            *(Tab(label, id=f"view-{name}") for name, label in VIEWS),
            active=f"view-{self.carry.get('view', self.view)}",
            id="views",
        )
        with Horizontal(id="main"):
            with Vertical(id="left"):
                yield from self._top()
                yield from self._bottom()
            teach = VerticalScroll(
                Static(self.notes_text(), id="teach-body", markup=False), id="teach-notes"
            )
            teach.border_title = "Notes"
            yield teach
        yield WhyLine(id="why")
        yield Static(keys_line(), id="keys", markup=False)
        yield KeyBar()

    def _top(self) -> ComposeResult:
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

    def _bottom(self) -> ComposeResult:
        with Horizontal(id="bottom"):
            log = EventLog(id="events", classes="panel")
            log.border_title = "Events"
            yield log
            src = SourceView(self.source_text, id="source", classes="panel")
            src.border_title = "Source"
            yield src
            with TabbedContent(id="side", classes="panel", initial="notes"):
                with TabPane("Notes", id="notes"):
                    yield Static(self.notes_text(), id="notes-body", markup=False)
                with TabPane("Watches", id="watches"):
                    yield WatchesPanel(id="watches-body")
                with TabPane("Details", id="details"):
                    yield DetailsBody(
                        "Click a block or a session to inspect it.", id="details-body"
                    )

    def notes_text(self) -> Notes:
        shown = "\n".join(shown_line(line) for line in self.header_comment.split("\n"))
        return Notes(reflow(shown) or "(the spec opens with no comment)")

    # -- layout: wide (every panel), narrow (one panel at a time, chosen by tabs), teaching
    @guarded
    def on_resize(self, event: events.Resize) -> None:
        self.narrow = event.size.width < NARROW_WIDTH or event.size.height < NARROW_HEIGHT
        self.key_line = event.size.width < KEY_LINE_WIDTH
        for footer in self.query(KeyBar):
            footer.compact = event.size.width < COMPACT_WIDTH
        self.call_after_refresh(self.show_why)  # its cap is a third of the screen's height
        self._apply_layout()

    def watch_narrow(self) -> None:
        self._apply_layout()

    def watch_view(self) -> None:
        if self.view != "side":
            self._chosen_view = None  # chosen by the user (or brought forward and left)
        self._apply_layout()

    def watch_teaching(self) -> None:
        self._apply_layout()

    @guarded
    def on_tabs_tab_activated(self, message: Tabs.TabActivated) -> None:
        if message.tabs.id != "views":
            return
        message.stop()
        tab_id = message.tab.id if message.tab is not None else None
        if tab_id and tab_id.startswith("view-"):
            self.view = tab_id[len("view-") :]

    def _apply_layout(self) -> None:
        """Show what the layout and the view say: every panel when wide; when narrow, the
        tabs and the one panel chosen; when teaching, the notes take the right side."""
        if not self.is_mounted or not self.query_one_optional("#pools"):
            return  # not composed yet, or its compose failed (its message shows instead)
        narrow, view, teaching = self.narrow, self.view, self.teaching
        self.set_class(narrow, "narrow")
        self.set_class(teaching, "teaching")
        shown = {name: not narrow or view == name for name, _ in VIEWS}
        if teaching:
            shown["queue"] = shown["stages"] = shown["side"] = False
            if narrow:
                shown = dict.fromkeys(shown, False)
        for name, on_screen in shown.items():
            self.query_one(f"#{name}").display = on_screen
        self.query_one("#right").display = shown["queue"] or shown["stages"]
        self.query_one("#top").display = shown["pools"] or shown["queue"] or shown["stages"]
        self.query_one("#bottom").display = shown["events"] or shown["source"] or shown["side"]
        self.query_one("#left").display = any(shown.values())
        self.query_one("#views").display = narrow and not teaching
        key_line = narrow or self.key_line
        keys = self.query_one("#keys", Static)
        keys.display = key_line
        set_text(keys, keys_line(narrow))
        self.query_one(KeyBar).display = not key_line
        notes = self.query_one("#teach-notes")
        notes.display = teaching
        tabs = self.query_one("#views", Tabs)
        if tabs.active != f"view-{view}":
            tabs.active = f"view-{view}"
        self._focus_what_is_shown(shown["events"])
        if self.details_shown():
            self.post_message(DetailsShown())

    @guarded
    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        if event.widget is self.query_one(EventLog) and event.widget not in self.focus_chain:
            self._focus_what_is_shown(False)  # its focus at mount, applied after the layout

    def _focus_what_is_shown(self, log_shown: bool) -> None:
        """Keys act on what is on screen. The event log, behind its tab (80x24) or hidden
        by teaching, gives the focus to the first widget shown in the panels (the block
        map, the source, the notes), or to none: its keys moved a selection no one saw,
        and `enter` went there. It takes the focus back when it is shown again, after
        giving it up, or on the Events tab; given it while hidden, it gives it up."""
        log = self.query_one(EventLog)
        if log_shown:
            if self._log_gave_focus or self.focused is None or (self.narrow and not self.teaching):
                self._log_gave_focus = False
                log.focus()
            return
        focused = self.focused
        if focused is None or focused in self.focus_chain:
            return  # nothing focused, or something on screen
        # Not the tabs above the panels: their focus is drawn, and the keys are the panel's.
        chain = [widget for widget in self.focus_chain if widget.id != "views"]
        self._log_gave_focus = focused is log or self._log_gave_focus
        if chain:
            chain[0].focus()
        else:
            self.set_focus(None)

    @guarded
    def action_next_view(self) -> None:
        """The next panel, on screen: at 80x24 the notes of teaching mode take the whole
        screen, so it leaves them for it (`t` brings them back); it changed a panel
        behind them, nothing moving on screen."""
        if self.narrow:
            self.teaching = False
        names = [name for name, _ in VIEWS]
        self.view = names[(names.index(self.view) + 1) % len(names)]

    @guarded
    def action_reload(self) -> None:
        self.post_message(Reload())

    @guarded
    def action_teach(self) -> None:
        self.teaching = not self.teaching

    def details_shown(self) -> bool:
        """Whether the Details tab is on screen: its side panel shown, the tab active."""
        side = self.query_one_optional("#side", TabbedContent)  # (none if compose failed)
        return side is not None and bool(side.display) and side.active == "details"

    def show_details_text(self, text: Text) -> None:
        """`text` in the Details tab, brought forward (a failure, a reload's errors)."""
        self.query_one("#details-body", DetailsBody).show_text(text)
        self.query_one(TabbedContent).active = "details"
        if self.view != "side":
            self._chosen_view = self.view
        self.show_view("side")

    @guarded
    def on_tabbed_content_tab_activated(self, message: TabbedContent.TabActivated) -> None:
        if message.pane.id == "details":
            self.post_message(DetailsShown())

    def set_palette(self, palette: Palette) -> None:
        """The theme's colours for the panels and the timeline (rich styles, not CSS)."""
        self.query_one(PoolsPanel).palette = palette
        self.query_one(QueuePanel).palette = palette
        self.query_one(StagesPanel).palette = palette
        self.query_one(WatchesPanel).palette = palette
        timeline = self.query_one(Timeline)
        if timeline.palette != palette:
            timeline.palette = palette
            timeline.refresh()

    def show_tab(self, tab: str) -> None:
        """A side tab (Watches) brought forward; at 80x24 the side tab in front too, where
        it was switched behind the panel shown (a watch added was nowhere to be seen)."""
        self.query_one(TabbedContent).active = tab
        self.show_view("side")

    def show_view(self, name: str) -> None:
        """In the narrow layout, bring a panel forward (the app shows Details this way)."""
        if self.narrow and not self.teaching:
            self.view = name

    @guarded
    def on_mount(self) -> None:
        self.query_one(EventLog).focus()
        carry = self.carry
        if carry:
            self.view = carry.get("view", self.view)
            self.teaching = carry.get("teaching", False)
            self.filter_text = carry.get("filter", "")
            if self.filter_text:
                self._set_filter(self.filter_text)
        self._apply_layout()

    def carry_state(self) -> dict[str, Any]:
        """What a reload keeps of this screen: the panel the user chose (not the Details
        tab a reload's errors brought forward), teaching, the log's filter."""
        view = self._chosen_view if self.view == "side" and self._chosen_view else self.view
        return {"view": view, "teaching": self.teaching, "filter": self.filter_text}

    # -- what the footer shows follows the state the app sets
    def watch_snapshot(self) -> None:
        self._bindings_changed()
        self._why_from_log = False
        self.show_why()

    def fit(self) -> None:
        """Fit the heights a run's frames only let grow to what is shown now (the next
        step's frame does it too): for a picture taken right after a run (`render`)."""
        if not self.grow_only:
            return
        self.grow_only = False
        if self.snapshot is not None:  # drawn again, fitted
            for panel in (PoolsPanel, QueuePanel, StagesPanel):
                found = self.query_one_optional(panel)
                if found is not None:
                    found.snapshot = self.snapshot
        self.show_why()

    def show_why(self) -> None:
        """The why of the event the log's selection is on (if it moved last), else of the
        current event: whole, wrapped, under the panels (the log cuts long ones); one
        longer than a third of the screen scrolls, and says so."""
        # `query_one` by id, not `query`: a query matched every node's CSS, ~0.5 ms a frame.
        try:
            log = self.query_one("#events", EventLog)
            bar = self.query_one("#why", WhyLine)
        except NoMatches:
            return  # not composed yet, or its compose failed (its message shows instead)
        event = None
        if self._why_from_log and log.selected is not None:
            event = log.event_at(log.selected)
        if event is None and self.snapshot is not None:
            event = self.snapshot.last_event
        bar.show(why_text(event), grow_only=self.grow_only)

    def watch_running(self) -> None:
        self._bindings_changed()

    def _bindings_changed(self) -> None:
        # Only when what the footer shows can change: refresh_bindings rebuilds the footer.
        snap = self.snapshot
        if snap is None:
            key: tuple[bool, ...] = (self.running,)
        else:
            behind_halt = bool(snap.halted) and snap.event_index < snap.events_total - 1
            key = (
                self.running,
                bool(snap.halted),
                snap.finished,
                snap.event_index >= 0,
                behind_halt,
            )
        if key != self._bindings_key:
            self._bindings_key = key
            self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The footer shows the keys that apply now."""
        snap = self.snapshot
        if action == "pause":
            return self.running
        if action == "nowhere":  # only where the move it stands behind does not apply
            move = "step" if parameters == (1,) else "back"
            return snap is not None and not self.check_action(move, ())
        if snap is None:
            return True
        stuck = bool(snap.halted) or snap.finished
        if action in ("step", "step_iteration", "continue", "run"):
            if snap.halted and snap.event_index < snap.events_total - 1:
                return True  # went back from a halt: the way forward replays the log
            return not stuck
        if action in ("back", "reverse_continue"):
            return snap.event_index >= 0
        return True

    # -- actions: each one a message to the app
    @guarded
    def action_step(self) -> None:
        self.post_message(Drive("step"))

    @guarded
    def action_step_iteration(self) -> None:
        self.post_message(Drive("iteration"))

    @guarded
    def action_back(self) -> None:
        self.post_message(Drive("back"))

    @guarded
    def action_continue(self) -> None:
        self.post_message(Drive("continue"))

    @guarded
    def action_reverse_continue(self) -> None:
        self.post_message(Drive("reverse"))

    @guarded
    def action_run(self) -> None:
        self.post_message(Drive("run"))

    @guarded
    def action_nowhere(self, direction: int) -> None:
        if self.snapshot is not None:
            self.post_message(Nowhere(*nowhere_said(self.snapshot, direction)))

    @guarded
    def action_pause(self) -> None:
        self.post_message(Pause())

    @guarded
    def action_speed(self, delta: int) -> None:
        self.post_message(ChangeSpeed(delta))

    @guarded
    def action_goto(self) -> None:
        def done(target: tuple[str, float] | None) -> None:
            if target is None:
                return
            kind, value = target
            if kind == "event":
                self.post_message(Drive("goto", index=int(value)))
            else:
                self.post_message(Drive("goto_time", time=value))

        self.app.push_screen(GotoScreen(), done)

    @guarded
    def action_find(
        self, direction: int, moment: str | None = None, session: str | None = None
    ) -> None:
        """`]` / `[`: a key then names the moment; from the palette, the moment is given."""
        if moment is not None or session is not None:
            self.post_message(Find(direction, moment, session))
            return

        def done(picked: tuple[str | None, str | None] | None) -> None:
            if picked is not None:
                self.post_message(Find(direction, picked[0], picked[1]))

        self.app.push_screen(MomentScreen(direction), done)

    @guarded
    def action_filter(self) -> None:
        check = self._filter_check

        def done(text: str | None) -> None:
            if text is None:
                return
            self._set_filter(text)
            self.show_view("events")

        self.app.push_screen(FilterScreen(self.filter_text, check), done)

    def _filter_check(self, text: str) -> tuple[frozenset[str], frozenset[str]]:
        """The filter `text` says, or ValueError: an unknown word, and (as a breakpoint on
        them is refused) a moment the spec never makes or a session it does not have, which
        showed an empty log as if they had not happened yet."""
        program = getattr(self.sim, "program", None)
        classes = [c.name for c in getattr(program, "sessions", ())]
        moments, sessions = parse_filter(text, MOMENTS, classes)
        names = Names.of(program)
        for said in (
            *(never_made(moment, names) for moment in sorted(moments)),
            *(never_named(session, names) for session in sorted(sessions)),
        ):
            if said is not None:
                raise ValueError(said)
        return moments, sessions

    def _set_filter(self, text: str) -> None:
        log = self.query_one(EventLog)
        self.filter_text = text
        try:
            log.set_filter(self._filter_check(text) if text else None)
        except ValueError:  # a session class the reloaded spec no longer has
            self.filter_text = ""
            log.set_filter(None)
        log.border_title = (
            f"Events — only {self.filter_text} (/ to change)" if self.filter_text else "Events"
        )

    @guarded
    def action_breakpoints(self) -> None:
        assert self.parse_breakpoint is not None
        self.app.push_screen(BreakpointsScreen(self.breakpoints, self.parse_breakpoint))

    @guarded
    def action_watches(self) -> None:
        assert self.compile_expression is not None
        self.app.push_screen(
            WatchesScreen(self.watches, partial(self.compile_expression, watch=True))
        )

    @guarded
    def action_clear_inspect(self) -> None:
        self.post_message(ClearInspection())

    # -- messages from widgets, passed on in the app's words
    @guarded
    def on_event_log_selected(self, message: EventLog.Selected) -> None:
        message.stop()
        self._why_from_log = message.index is not None
        self.show_why()

    @guarded
    def on_event_log_chosen(self, message: EventLog.Chosen) -> None:
        message.stop()
        self.post_message(Drive("goto", index=message.index))

    @guarded
    def on_timeline_clicked(self, message: Timeline.Clicked) -> None:
        message.stop()
        if message.index is not None:  # a mark: its event, not the column's middle time
            self.post_message(Drive("goto", index=message.index))
        else:
            self.post_message(Drive("goto_time", time=message.time))

    @guarded
    def on_block_map_view_block_clicked(self, message: BlockMapView.BlockClicked) -> None:
        message.stop()
        self.post_message(InspectBlock(message.pool, message.block))


def help_groups(app_bindings: list[BindingType]) -> list[tuple[str, list[Binding]]]:
    """The help screen's keys, by where they apply."""
    groups = (
        ("Debugger", DebuggerScreen.BINDINGS),
        ("Event log (when focused)", EventLog.BINDINGS),
        ("Breakpoints screen", BreakpointsScreen.BINDINGS),
        ("Watches screen", WatchesScreen.BINDINGS),
        ("App", app_bindings),
    )
    return [
        (title, [b for b in keys if isinstance(b, Binding) and not b.action.startswith("nowhere")])
        for title, keys in groups
    ]
