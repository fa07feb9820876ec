"""`KeyBar`: the footer line of the keys that apply now, drawn as one line of text.

Owns showing a screen's active bindings as Textual's `Footer` shows them (the same theme
variables, the keys a `check_action` hides left out and those it disables dimmed, the
command palette's key on the right; binding groups, which pooltui does not use, as plain
keys) and pressing a key when it is clicked. Textual's
Footer is a widget per key, recomposed whenever the bindings change: every `c` and every
`space` (the pause key applies only while running) mounted and styled twenty widgets again,
70 ms of the screen's time in which a key typed waited. Here a change of bindings is one
re-render of one line."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import ActiveBinding, Binding
from textual.reactive import reactive
from textual.screen import Screen
from textual.strip import Strip

from pooltui.tui.widgets.lines import StylePerRepaint

DRAWN_KEPT = 8  # lines kept drawn (bindings x hover x width seen lately)


@dataclass(frozen=True)
class KeyItem:
    """One key on the bar: the cells [start, end) it covers, what pressing it does."""

    key: str  # the key to simulate when clicked
    label: Text  # what is drawn, unstyled by hover
    enabled: bool
    tooltip: str
    start: int = 0
    end: int = 0


class KeyBar(StylePerRepaint):
    """The keys of the screen's active bindings on one line (as Textual's Footer)."""

    ALLOW_SELECT = False
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "keybar--key",
        "keybar--description",
        "keybar--item",
        "keybar--hover",
        "keybar--palette",
    }
    DEFAULT_CSS = """
    KeyBar {
        dock: bottom;
        height: 1;
        color: $footer-foreground;
        background: $footer-background;
        .keybar--item { background: $footer-item-background; }
        .keybar--key {
            color: $footer-key-foreground;
            background: $footer-key-background;
            text-style: bold;
        }
        .keybar--description {
            color: $footer-description-foreground;
            background: $footer-description-background;
        }
        .keybar--hover {
            color: $footer-key-foreground;
            background: $block-hover-background;
        }
        .keybar--palette { color: $foreground 20%; }
    }
    """

    compact = reactive(False)
    """Pack the keys tighter (no padding around a key)."""
    show_command_palette = reactive(True)

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._hover: int | None = None
        self._items: list[KeyItem] = []
        self._palette: KeyItem | None = None
        # Lines drawn, by what they show, with the keys they place (a click reads them):
        # a run and a pause alternate two sets of bindings (`space` applies only while
        # running), so each is drawn once, not at every `c` and `space`.
        self._drawn: dict[tuple[object, ...], tuple[Strip, list[KeyItem], KeyItem | None]] = {}

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_changed)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def _bindings_changed(self, screen: Screen[object]) -> None:
        self.refresh()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._drawn.clear()  # a theme's colours for the keys: drawn again

    # -- what is shown
    def _styles(self) -> tuple[Style, Style, Style]:
        return (
            self.get_component_rich_style("keybar--key"),
            self.get_component_rich_style("keybar--description"),
            self.get_component_rich_style("keybar--item"),
        )

    def _label(self, binding: Binding, enabled: bool, compact: bool = False) -> Text:
        key_style, description_style, item_style = self._styles()
        display = self.app.get_key_display(binding)
        if compact or self.compact:
            key, description = display, " " + binding.description
        else:
            key, description = f" {display} ", binding.description + " "
        text = Text.assemble((key, key_style), (description, description_style))
        text.stylize_before(item_style)
        if not enabled:
            text.stylize(Style(dim=True))
        return text

    def _make_items(self, active: dict[str, ActiveBinding]) -> None:
        """The keys to show, in the order of the active bindings, one per action."""
        first: dict[str, tuple[Binding, bool, str]] = {}  # an action's first key, as the Footer
        for _node, binding, enabled, tooltip in active.values():
            if binding.show and binding.action not in first:
                first[binding.action] = (binding, enabled, tooltip)
        items: list[KeyItem] = []
        x = 0
        for binding, enabled, tooltip in first.values():
            label = self._label(binding, enabled)
            items.append(KeyItem(binding.key, label, enabled, tooltip, x, x + len(label)))
            x += len(label) + (1 if self.compact else 0)
        self._items = items
        self._palette = None
        app = self.app
        if self.show_command_palette and app.ENABLE_COMMAND_PALETTE:
            found = active.get(app.COMMAND_PALETTE_BINDING)
            if found is not None:
                _node, binding, enabled, tooltip = found
                label = self._label(binding, enabled, compact=True)
                # The Footer's padding on the right: its background only.
                label.append(" ", Style(bgcolor=self._styles()[2].bgcolor))
                tip = binding.tooltip or binding.description
                self._palette = KeyItem(binding.key, label, enabled, tip)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        # Gaps show the bar's background only, as the Footer's gaps between its widgets.
        style = self.line_style
        gap = Style(bgcolor=style.bgcolor)
        if y != 0:
            return Strip.blank(width, gap)
        active = self.screen.active_bindings
        # Drawn again only when what it shows changed (a frame of a run refreshes the
        # screen's bindings without changing them).
        drawn_for = (
            width,
            self.compact,
            self._hover,
            style,
            self.show_command_palette,
            tuple((k, b.action, b.description, b.show, on) for k, (_, b, on, _) in active.items()),
        )
        drawn = self._drawn.get(drawn_for)
        if drawn is None:
            if len(self._drawn) >= DRAWN_KEPT:
                self._drawn.clear()
            strip = self._draw(active, width, gap)
            drawn = self._drawn[drawn_for] = (strip, self._items, self._palette)
        strip, self._items, self._palette = drawn
        return strip

    def _draw(self, active: dict[str, ActiveBinding], width: int, gap: Style) -> Strip:
        self._make_items(active)
        console = self.app.console
        segments: list[Segment] = []
        x = 0
        for i, item in enumerate(self._items):
            if item.start > x:
                segments.append(Segment(" " * (item.start - x), gap))
            segments.extend(self._hovered(item, i).render(console))
            x = item.end
        palette = self._palette
        if palette is None:
            return Strip(segments).crop_extend(0, width, gap)
        bar = Text()
        bar.append("▏", self.get_component_rich_style("keybar--palette"))
        bar.append_text(self._hovered(palette, len(self._items)))
        room = max(0, width - len(bar))
        self._palette = KeyItem(
            palette.key, palette.label, palette.enabled, palette.tooltip, room + 1, width
        )
        left = Strip(segments).crop_extend(0, room, gap)
        return Strip.join([left, Strip(list(bar.render(console)))]).crop_extend(0, width, gap)

    def _hovered(self, item: KeyItem, index: int) -> Text:
        if index != self._hover or not item.key:
            return item.label
        text = item.label.copy()
        text.stylize(self.get_component_rich_style("keybar--hover"))
        return text

    # -- the mouse: a key clicked is pressed, as the Footer's keys are
    def _item_at(self, x: int) -> tuple[int, KeyItem] | None:
        candidates = list(enumerate(self._items))
        if self._palette is not None:
            candidates.append((len(self._items), self._palette))
        for i, item in reversed(candidates):  # the palette key is drawn over the others
            if item.key and item.start <= x < item.end:
                return i, item
        return None

    def on_mouse_move(self, event: events.MouseMove) -> None:
        found = self._item_at(event.x)
        hover = found[0] if found is not None else None
        if hover != self._hover:
            self._hover = hover
            self.tooltip = found[1].tooltip or None if found is not None else None
            self.refresh()

    def on_leave(self, event: events.Leave) -> None:
        if self._hover is not None:
            self._hover = None
            self.refresh()

    def on_mouse_down(self, event: events.MouseDown) -> None:
        found = self._item_at(event.x)
        if found is None:
            return
        item = found[1]
        if item.enabled:
            self.app.simulate_key(item.key)
        else:
            self.app.bell()
