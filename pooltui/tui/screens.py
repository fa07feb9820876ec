"""Screens besides the main one: help, go to, breakpoints, watches, the compile errors."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, ClassVar

from rich.console import Console, ConsoleOptions, RenderResult
from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Input, Static

from pooltui.lang.errors import escaped, fit
from pooltui.sim.events import MOMENTS
from pooltui.tui.breakpoints import BreakpointError, BreakpointSet
from pooltui.tui.goto import GotoError, parse_goto
from pooltui.tui.loading import unreadable
from pooltui.tui.messages import BreakpointsChanged, Reload, WatchesChanged, guarded_compose
from pooltui.tui.prose import flowed
from pooltui.tui.widgets.keybar import KeyBar

ROOMY = 1000  # a width every layout fits in: the text as a big terminal shows it


class Fitted:
    """A text laid out for the width it is drawn at (Rich hands a renderable that width):
    a dialog that a small terminal narrows lays its columns out again instead of cutting
    them, and is drawn as before where there is room."""

    def __init__(self, layout: Callable[[int], Text]) -> None:
        self.layout = layout

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.layout(options.max_width)

    def __str__(self) -> str:
        return self.layout(ROOMY).plain


def located(text: str) -> Fitted:
    """Errors as a dialog shows them: a located error's source line is a window of itself
    around its caret at the width drawn (`fit`), so the caret stays under the culprit
    (wrapped, it pointed into the line's first row); the other lines wrap."""
    return Fitted(lambda width: Text(fit(text, width)))


def binding_rows(
    groups: Iterable[tuple[str, Iterable[Binding]]], key_style: Style, width: int = ROOMY
) -> Text:
    """Every binding of each group: its keys (in `key_style`), what it does, its id; the
    columns as wide as their longest entry when the usual ones do not fit in `width`, and
    the id on a row of its own when even those do not (a row is never cut or wrapped)."""
    table: list[tuple[str, list[tuple[str, str, str]]]] = []
    for title, bindings in groups:
        rows: list[tuple[str, str, str]] = []
        seen: set[str] = set()
        for b in bindings:
            if b.id is not None and b.id in seen:
                continue
            if b.id:
                seen.add(b.id)
            labels: list[str] = []
            for k in b.key.split(","):
                label = _key_label(k)
                if label not in labels:
                    labels.append(label)
            rows.append((", ".join(labels), b.description or b.action, b.id or ""))
        table.append((title, rows))
    every = [row for _, rows in table for row in rows]
    id_width = max((len(name) for _, _, name in every), default=0)
    keys_width, does_width = 22, 34
    if 2 + keys_width + does_width + id_width > width:
        keys_width = max((len(keys) for keys, _, _ in every), default=0) + 2
        does_width = max((len(does) for _, does, _ in every), default=0) + 2
    id_below = 2 + keys_width + does_width + id_width > width
    text = Text()
    for title, rows in table:
        text.append(f"{title}\n", Style(bold=True, underline=True))
        for keys, does, name in rows:
            text.append(f"  {keys:<{keys_width}}", key_style)
            if id_below:
                text.append(f"{does}\n{'':<{2 + keys_width}}")
            else:
                text.append(f"{does:<{does_width}}")
            text.append(f"{name}\n", Style(dim=True))
        text.append("\n")
    return text


def prose(*rows: str) -> Fitted:
    """Rows of words that wrap at the width drawn; `~` is a space that never breaks (as in
    TeX), so an example to type or a key and what it does stay on one line."""
    pieces = [[Text(word.replace("~", " ")) for word in row.split(" ")] for row in rows]
    return Fitted(lambda width: flowed(pieces, width, " "))


def _key_label(key: str) -> str:
    names = {
        "question_mark": "?",
        "right": "→",
        "left": "←",
        "space": "space",
        "plus": "+",
        "minus": "-",
        "equals_sign": "=",
        "shift+c": "C",
        "escape": "esc",
        "right_square_bracket": "]",
        "left_square_bracket": "[",
        "slash": "/",
        "full_stop": ".",
    }
    key = key.strip()
    return names.get(key, key)


class HelpScreen(ModalScreen[None]):
    """Every binding, with its id (for keymaps)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark,f1", "dismiss", "Close help", id="help.close"),
    ]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 96; max-width: 100%; height: 90%; border: thick $primary; background: $surface;
        padding: 0 1;
    }
    """

    def __init__(self, groups: list[tuple[str, list[Binding]]]) -> None:
        super().__init__()
        self.groups = groups

    @guarded_compose
    def compose(self) -> ComposeResult:
        with VerticalScroll() as scroll:
            scroll.border_title = "Keys (esc closes)"
            key_style = Style(bold=True, color=self.app.current_theme.primary)
            groups = self.groups
            yield Static(
                Fitted(lambda width: binding_rows(groups, key_style, width)), id="help-body"
            )
            yield Static(
                prose(
                    "Click a block or a session to inspect it; click an event to go there.",
                    "Breakpoints: `admit~pool=kv`, `evict~class=chat`, `preempt~session=chat[3]`,",
                    "`admit~shared>0` (an event's figures: units, and its moment's data),",
                    "`if~free(kv)~<~64`, `at~12.5`; options after `;`: once, ignore~N, off.",
                    f"Moments: {', '.join(MOMENTS)}",
                ),
                id="help-notes",
            )


class GotoScreen(ModalScreen[tuple[str, float] | None]):
    """Ask for an event index (42, #42, 1_000) or a time (12.5s, t=12.5): `parse_goto`."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss_none", "Cancel", id="goto.cancel")
    ]
    DEFAULT_CSS = """
    GotoScreen { align: center middle; }
    GotoScreen > Vertical {
        width: 60; max-width: 100%; height: auto; border: thick $primary; background: $surface;
        padding: 1 2;
    }
    GotoScreen #goto-error { color: $error; height: auto; }
    """

    @guarded_compose
    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "Go to"
            yield Static("An event index (42) or a time (12.5s):")
            yield Input(placeholder="42  or  12.5s", id="goto-input")
            yield Static("", id="goto-error", markup=False)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self._go(event.value)

    def _go(self, value: str) -> None:
        try:
            target = parse_goto(value)
        except ValueError as exc:
            text = str(exc) if isinstance(exc, GotoError) else f"not an event or a time: {value!r}"
            self.query_one("#goto-error", Static).update(text)
            return
        self.dismiss(target)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)


class ExpressionScreen(ModalScreen[None]):
    """A list of items with an input to add one: the base of breakpoints and watches."""

    # The input has the focus from the start (not the list, the first focusable): keys
    # typed as the box opens go into it.
    AUTO_FOCUS = "Input"

    DEFAULT_CSS = """
    ExpressionScreen { align: center middle; }
    ExpressionScreen > Vertical {
        width: 100; max-width: 100%; height: 80%; border: thick $primary; background: $surface;
        padding: 0 1; overflow-y: auto;
    }
    ExpressionScreen DataTable { height: 1fr; min-height: 3; }
    ExpressionScreen .error { color: $error; height: auto; }
    ExpressionScreen .hint { color: $text-muted; height: auto; }
    """


class ItemTable(DataTable[str]):
    """The list of breakpoints or watches: home and end move the cursor to the first and
    last row (DataTable scrolls sideways instead, leaving the cursor where it was)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("home", "first", "First", show=False),
        Binding("end", "last", "Last", show=False),
    ]

    def action_first(self) -> None:
        if self.row_count:
            self.move_cursor(row=0)

    def action_last(self) -> None:
        if self.row_count:
            self.move_cursor(row=self.row_count - 1)


class BreakpointsScreen(ExpressionScreen):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", id="breakpoints.close"),
        Binding("space", "toggle_enabled", "Enable/disable", id="breakpoints.toggle"),
        Binding("o", "once", "One-shot", id="breakpoints.once"),
        Binding("delete,d", "delete", "Delete", id="breakpoints.delete"),
        Binding("plus", "ignore(1)", "Ignore +1", id="breakpoints.ignore_more"),
        Binding("minus", "ignore(-1)", "Ignore -1", id="breakpoints.ignore_less"),
        Binding("tab", "app.focus_next", "Next field", show=False, id="breakpoints.next_field"),
    ]

    def __init__(self, breakpoints: BreakpointSet, parse: Callable[[str], Any]) -> None:
        super().__init__()
        self.breakpoints = breakpoints
        self.parse = parse

    @guarded_compose
    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "Breakpoints"
            yield ItemTable(id="bp-table", cursor_type="row", zebra_stripes=True)
            yield Static(
                prose(
                    "Add: a moment (admit~pool=kv, evict~class=chat, admit~shared>0), "
                    "a condition (if~free(kv)~<~64) or a time (at~12.5); "
                    "options after ';': once, ignore~N, off.",
                    "In the list: space~on/off, o~one-shot, +/-~ignore, d~delete.",
                ),
                classes="hint",
            )
            yield Input(
                placeholder="admit pool=kv   |   if queued(kv) > 3; once   |   at 2.5",
                id="bp-input",
            )
            yield Static("", id="bp-error", classes="error", markup=False)
            yield KeyBar()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("#", "on", "breakpoint", "options", "hits")
        self.refresh_table()
        self.query_one("#bp-input", Input).focus()

    def refresh_table(self) -> None:
        table = self.query_one(DataTable)
        row = table.cursor_row
        table.clear()
        for bp in self.breakpoints:
            table.add_row(
                str(bp.id),
                "●" if bp.enabled else "○",
                bp.describe(),
                bp.options(),
                str(bp.hits),
                key=str(bp.id),
            )
        if self.breakpoints.items:
            table.move_cursor(row=min(row, len(self.breakpoints.items) - 1))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        error = self.query_one("#bp-error", Static)
        try:
            bp = self.parse(event.value)
        except BreakpointError as exc:
            error.update(located(exc.text))
            return
        self.breakpoints.add(bp)
        self.post_message(BreakpointsChanged())
        error.update("")
        event.input.value = ""
        self.refresh_table()

    def _current(self) -> Any:
        table = self.query_one(DataTable)
        if not self.breakpoints.items or table.cursor_row < 0:
            return None
        if table.cursor_row >= len(self.breakpoints.items):
            return None
        return self.breakpoints.items[table.cursor_row]

    def _list_focused(self) -> bool:
        return isinstance(self.focused, DataTable)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Typing in the input must not toggle breakpoints.
        return not (action in ("toggle", "once", "delete", "ignore") and not self._list_focused())

    def action_toggle_enabled(self) -> None:
        bp = self._current()
        if bp is not None:
            bp.enabled = not bp.enabled
            self._changed()

    def action_once(self) -> None:
        bp = self._current()
        if bp is not None:
            bp.one_shot = not bp.one_shot
            self._changed()

    def action_ignore(self, delta: int) -> None:
        bp = self._current()
        if bp is not None:
            bp.ignore = max(0, bp.ignore + delta)
            self._changed()

    def action_delete(self) -> None:
        bp = self._current()
        if bp is not None:
            self.breakpoints.remove(bp.id)
            self._changed()

    def _changed(self) -> None:
        self.post_message(BreakpointsChanged())
        self.refresh_table()

    def action_close(self) -> None:
        self.dismiss(None)


class WatchesScreen(ExpressionScreen):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", id="watches.close"),
        Binding("delete,d", "delete", "Delete", id="watches.delete"),
        Binding("tab", "app.focus_next", "Next field", show=False, id="watches.next_field"),
    ]

    def __init__(self, watches: list[tuple[str, Any]], compile_watch: Callable[[str], Any]) -> None:
        super().__init__()
        self.watches = watches
        self.compile_watch = compile_watch

    @guarded_compose
    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "Watches"
            yield ItemTable(id="watch-table", cursor_type="row")
            yield Static(
                prose(
                    "An expression of the spec language over queries, shown at every step "
                    "(e.g. free(kv), queued(kv)~>~3, residents(gpu)).",
                    "In the list: d~deletes.",
                ),
                classes="hint",
            )
            yield Input(placeholder="free(kv)", id="watch-input")
            yield Static("", id="watch-error", classes="error", markup=False)
            yield KeyBar()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("watch")
        self.refresh_table()
        self.query_one("#watch-input", Input).focus()

    def refresh_table(self) -> None:
        table = self.query_one(DataTable)
        table.clear()
        for text, _ in self.watches:
            table.add_row(text)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        error = self.query_one("#watch-error", Static)
        if not text:
            return
        try:
            expr = self.compile_watch(text)
        except Exception as exc:
            render = getattr(exc, "render", None)
            error.update(located(render() if callable(render) else str(exc)))
            return
        error.update("")
        event.input.value = ""
        self.watches.append((text, expr))
        self.post_message(WatchesChanged())
        self.refresh_table()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return not (action == "delete" and not isinstance(self.focused, DataTable))

    def action_delete(self) -> None:
        table = self.query_one(DataTable)
        row = table.cursor_row
        if 0 <= row < len(self.watches):
            del self.watches[row]
            self.post_message(WatchesChanged())
            self.refresh_table()

    def action_close(self) -> None:
        self.dismiss(None)


class CompileErrorScreen(Screen[None]):
    """A spec that does not compile: its located errors, exactly as `pooltui check`."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q,escape", "app.quit", "Quit", id="errors.quit"),
        Binding("r", "reload", "Reload the spec", id="errors.reload"),
    ]
    DEFAULT_CSS = """
    CompileErrorScreen { padding: 1 2; }
    CompileErrorScreen #error-title { color: $error; text-style: bold; height: auto; }
    CompileErrorScreen #error-body { height: auto; padding: 1 0; }
    """

    def __init__(self, spec: str, text: str) -> None:
        super().__init__()
        self.spec = spec
        self.text = text

    def title_text(self) -> str:
        """What is wrong: a spec that cannot be read (deleted since `r` was pressed) is not
        a spec that does not compile."""
        what = "cannot be read" if unreadable(self.spec, self.text) else "does not compile"
        return f"{escaped(self.spec)} {what}"

    @guarded_compose
    def compose(self) -> ComposeResult:
        yield Static(self.title_text(), id="error-title", markup=False)
        with VerticalScroll():
            yield Static(located(self.text), id="error-body")
            yield Static("Fix the spec and press r to reload it, or q to quit.", markup=False)
        yield KeyBar()

    def action_reload(self) -> None:
        self.post_message(Reload())

    def show_errors(self, text: str) -> None:
        """The spec still does not compile: its new errors."""
        self.text = text
        self.query_one("#error-title", Static).update(self.title_text())
        self.query_one("#error-body", Static).update(located(text))


# `]` / `[` then one of these keys: the next / previous event of that moment.
MOMENT_KEYS = (
    ("a", "admit"),
    ("j", "reject"),
    ("p", "preempt"),
    ("e", "evict"),
    ("s", "spill"),
    ("l", "reload"),
    ("w", "grow-wait"),
    ("g", "grow"),
    ("r", "release"),
    ("q", "enqueue"),
    ("v", "arrive"),
    ("d", "run-done"),
    ("i", "iteration-end"),
    ("k", "check-failed"),
    ("x", "end"),
)


class MomentScreen(ModalScreen[tuple[str | None, str | None] | None]):
    """After `]` or `[`: one key names the moment (`.`: any event of the current event's
    session)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "pick(None)", "Cancel", id="moment.cancel"),
        *(
            Binding(key, f"pick('{moment}')", moment, show=False, id=f"moment.{moment}")
            for key, moment in MOMENT_KEYS
        ),
        Binding("full_stop", "pick('.')", "this session", show=False, id="moment.session"),
    ]
    DEFAULT_CSS = """
    MomentScreen { align: center bottom; }
    MomentScreen > Static {
        width: 100%; height: auto; border: round $primary; background: $surface;
        padding: 0 1;
    }
    """

    def __init__(self, direction: int) -> None:
        super().__init__()
        self.direction = direction

    @guarded_compose
    def compose(self) -> ComposeResult:
        bold = Style(bold=True)
        pairs = [
            *((Text(key, bold) + f" {moment}") for key, moment in MOMENT_KEYS),
            Text(".", bold) + " this session",
            Text("esc", bold) + " cancel",
        ]
        pairs[0] = Text("next " if self.direction > 0 else "previous ", bold) + pairs[0]
        yield Static(Fitted(lambda width: flowed([pairs], width, "  ")), id="moment-keys")

    def action_pick(self, moment: str | None) -> None:
        if moment is None:
            self.dismiss(None)
        elif moment == ".":
            self.dismiss((None, "."))
        else:
            self.dismiss((moment, None))


def parse_filter(
    text: str, moments: Iterable[str], classes: Iterable[str]
) -> tuple[frozenset[str], frozenset[str]]:
    """`preempt evict chat[3]` -> ({preempt, evict}, {chat[3]}): moments, and sessions or
    session classes; an unknown word raises ValueError with a suggestion."""
    from pooltui.lang.words import closest

    moment_set, sessions = set(), set()
    known_moments = tuple(moments)
    known_classes = tuple(classes)
    for word in text.replace(",", " ").split():
        base = word.split("[", 1)[0]
        if word in known_moments:
            moment_set.add(word)
        elif base in known_classes or (not known_classes and "[" in word):
            sessions.add(word)
        else:
            near = closest(word, (*known_moments, *known_classes), n=2, cutoff=0.5)
            hint = f"; did you mean {' or '.join(near)}?" if near else ""
            raise ValueError(f"{word!r} is not a moment or a session{hint}")
    return frozenset(moment_set), frozenset(sessions)


class FilterScreen(ModalScreen[str | None]):
    """`/`: show only the events of some moments and/or sessions (empty: all of them)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="filter.cancel")
    ]
    DEFAULT_CSS = """
    FilterScreen { align: center middle; }
    FilterScreen > Vertical {
        width: 70; max-width: 100%; height: auto; border: thick $primary; background: $surface;
        padding: 1 2;
    }
    FilterScreen #filter-error { color: $error; height: auto; }
    """

    def __init__(self, current: str, check: Callable[[str], object]) -> None:
        super().__init__()
        self.current = current
        self.check = check

    @guarded_compose
    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "Filter the event log"
            yield Static("Moments and/or sessions (preempt evict chat[3]); empty shows all:")
            yield Input(self.current, placeholder="preempt chat[3]", id="filter-input")
            yield Static("", id="filter-error", markup=False)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        try:
            self.check(event.value)
        except ValueError as exc:
            self.query_one("#filter-error", Static).update(str(exc))
            return
        self.dismiss(event.value.strip())

    def action_cancel(self) -> None:
        self.dismiss(None)
