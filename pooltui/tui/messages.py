"""The debugger's messages: how screens, widgets and the worker thread talk to the app.

Screens and widgets never import the app: they post one of these, and the app (the root of
every message's bubbling) handles it. The worker thread posts `SimFrame` / `SimFailed`.
`guarded` turns an exception in any handler into a `HandlerFailed` the app shows, so a bug
is a stop with a plain message, never a traceback.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from functools import wraps
from typing import Any, Literal, Protocol, TypeVar, cast, runtime_checkable

from textual.compose import compose
from textual.geometry import Region, Size
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Static

from pooltui.tui.commands import Frame

F = TypeVar("F", bound=Callable[..., Any])

DriveKind = Literal["step", "iteration", "back", "continue", "reverse", "run", "goto", "goto_time"]


# --------------------------------------------------------------------------- worker -> app


class SimFrame(Message):
    """The worker's answer to a command (or a moment of a run): what to show."""

    def __init__(self, frame: Frame) -> None:
        super().__init__()
        self.frame = frame


class SimFailed(Message):
    """The simulator raised (a bug, not a spec error): say so, never a traceback."""

    def __init__(self, seq: int, text: str) -> None:
        super().__init__()
        self.seq = seq
        self.text = text


# --------------------------------------------------------------------------- screens -> app


class Drive(Message):
    """Move the simulation: a step, a run, a jump (`index` for goto, `time` for goto_time)."""

    def __init__(self, kind: DriveKind, *, index: int = 0, time: float = 0.0) -> None:
        super().__init__()
        self.kind: DriveKind = kind
        self.index = index
        self.time = time


class Find(Message):
    """Go to the next (+1) or previous (-1) event of a moment and/or a session (`.`: the
    current event's session)."""

    def __init__(self, direction: int, moment: str | None, session: str | None = None) -> None:
        super().__init__()
        self.direction = direction
        self.moment = moment
        self.session = session


class Nowhere(Message):
    """A move that cannot be made (forward at the end or a halt, back at the start): the
    app says `said` as the stop, of `kind` (`pooltui.tui.details.nowhere_said`)."""

    def __init__(self, said: str, kind: str) -> None:
        super().__init__()
        self.said = said
        self.kind = kind


class Pause(Message):
    """Stop a run between two steps."""


class ChangeSpeed(Message):
    """One notch faster (+1) or slower (-1) on the speed scale."""

    def __init__(self, delta: int) -> None:
        super().__init__()
        self.delta = delta


class InspectBlock(Message):
    """Show a block of a pool in the Details tab."""

    def __init__(self, pool: str, block: int) -> None:
        super().__init__()
        self.pool = pool
        self.block = block


class DetailsShown(Message):
    """The Details tab came on screen (its text is made only while it is)."""


class QueueShown(Message):
    """The Queue panel shows its rows down to `rows` (its scroll and height): each queue's
    first `rows` positions are wanted with their planned figures."""

    def __init__(self, rows: int) -> None:
        super().__init__()
        self.rows = rows


class ClearInspection(Message):
    """Nothing inspected any more."""


class BreakpointsChanged(Message):
    """The breakpoint list was edited (it is the app's own `BreakpointSet`)."""


class WatchesChanged(Message):
    """The watch list was edited (it is the app's own list)."""


class Reload(Message):
    """Compile the spec again (from the compile-error screen)."""


class HandlerFailed(Message):
    """A handler raised: the app stops, shows it, and records it in `failures`."""

    def __init__(self, where: str, error: BaseException) -> None:
        super().__init__()
        self.where = where
        self.error = error


# --------------------------------------------------------------------------- guarding handlers


@runtime_checkable
class FailureSink(Protocol):
    """What the app offers to record a failure at once (no message round trip)."""

    def record_failure(self, where: str, error: BaseException) -> None: ...


def report_failure(node: Any, where: str, error: BaseException) -> None:
    """Record a failure at once on the app (or post `HandlerFailed` when the node is not
    attached to one yet); never raises."""
    try:
        app = node if isinstance(node, FailureSink) else getattr(node, "app", None)
    except Exception:  # no active app
        app = None
    try:
        if isinstance(app, FailureSink):
            app.record_failure(where, error)
        else:
            node.post_message(HandlerFailed(where, error))
    except Exception:
        pass


def guarded(method: F) -> F:
    """A handler that never lets an exception reach Textual (which would show a traceback
    and quit): on the app it is recorded at once, elsewhere it is posted as
    `HandlerFailed` and bubbles up to the app."""

    @wraps(method)
    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except Exception as exc:
            report_failure(self, f"{type(self).__name__}.{method.__name__}", exc)
            return None

    return cast(F, run)


def failure_line(where: str, error: BaseException) -> str:
    return (
        f"pooltui could not draw this part ({where}): {type(error).__name__}: {error}. "
        "This is a bug in pooltui; press q to quit."
    )


def guarded_compose(method: Callable[[Any], Iterable[Widget]]) -> Callable[[Any], Iterable[Widget]]:
    """A `compose` that never raises: the widgets are built first (Textual's public
    `compose` helper); if that fails, the failure is recorded and a one-line message takes
    their place (with the id `status`, so the app's status bar shows it too)."""

    @wraps(method)
    def run(self: Any) -> Iterator[Widget]:
        where = f"{type(self).__name__}.compose"
        try:
            widgets = compose(self, method(self))
        except Exception as exc:
            report_failure(self, where, exc)
            yield Static(failure_line(where, exc), id="status", classes="failure", markup=False)
            return
        yield from widgets

    return run


class SafeRender(Widget):
    """A mixin for widgets: a render (or measuring it) that fails draws blank and is
    recorded once, instead of reaching Textual as a traceback."""

    _pooltui_render_failed = False

    def _render_failed(self, error: BaseException) -> None:
        if not self._pooltui_render_failed:
            self._pooltui_render_failed = True
            report_failure(self, f"{type(self).__name__}.render", error)

    def render_lines(self, crop: Region) -> list[Strip]:
        try:
            return super().render_lines(crop)
        except Exception as exc:
            self._render_failed(exc)
            return [Strip.blank(crop.width, self.rich_style)] * crop.height

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        try:
            return super().get_content_height(container, viewport, width)
        except Exception as exc:
            self._render_failed(exc)
            return 1

    def get_content_width(self, container: Size, viewport: Size) -> int:
        try:
            return super().get_content_width(container, viewport)
        except Exception as exc:
            self._render_failed(exc)
            return 1
