"""What the status bar and the Details tab say: pure functions of the app's state.

The app calls these with the current snapshot, the stop and what is inspected; they return
`Text` and touch no widget, so they are easy to test and never half-update a screen; and
which sessions' views the frames must carry for what is inspected (`shown_for`).
"""

from __future__ import annotations

from typing import Any

from rich.style import Style
from rich.text import Text

from pooltui.lang.errors import fit
from pooltui.lang.words import number, seconds
from pooltui.sim.snapshot import Shown, Snapshot
from pooltui.tui.loading import unreadable
from pooltui.tui.widgets.inspector import inspect_block_text, inspect_session_text
from pooltui.tui.widgets.panels import QUEUE_ROWS
from pooltui.tui.widgets.statusline import Field

HALTS = ("violation", "error", "halt")


def events_total_text(snap: Snapshot, ended: bool) -> str:
    """How many events there are: all of them once the simulation has ended (`ended`: it
    got to its end or halted, even if we went back since), else how far it has got."""
    if ended or snap.finished or snap.halted:
        return f"{snap.events_total}"
    return f"{snap.events_total} so far"


def events_count_text(snap: Snapshot, ended: bool) -> str:
    """`events_total_text` as a count of events: `1925 events`, `58 events so far`."""
    total = snap.events_total
    noun = "event" if total == 1 else "events"
    return events_total_text(snap, ended).replace(f"{total}", f"{total} {noun}", 1)


def nowhere_said(snap: Snapshot, direction: int) -> tuple[str, str]:
    """What a key that cannot move says (the stop, its kind), at every press: why, and the
    way that goes (gdb's "The program is not being run"). Forward at the end or a halt
    (the halt's reason kept, last: at 80x24 the way back shows first), back at the
    start."""
    if direction < 0:
        return "nothing comes before event #0: n steps forward, c continues", "start"
    # Ended, or halted, before its first event: no way back to name.
    at = (
        "before its first event"
        if snap.event_index < 0
        else f"at event #{snap.event_index}: p steps back"
    )
    if not snap.halted:
        return f"the simulation ended {at}", "end"
    v = snap.violation
    reason = f"invariant violated: {v.message}" if v is not None else snap.halted
    error = snap.halted.startswith("runtime error")
    kind = "violation" if v is not None else "error" if error else "halt"
    return f"the simulation halted {at} — {reason}", kind


def status_fields(
    spec_name: str,
    snap: Snapshot | None,
    *,
    running: bool,
    ended: bool,
    stop: str | None,
    rate: int,
    breakpoints: tuple[int, int],
    running_style: Style,
) -> list[Field]:
    """The status line's fields: where we are, running or paused, what stopped it, the
    speed, the counts; each with its priority (the status bar drops the lowest first when
    the line does not fit: the counts before what stopped the run). `breakpoints` is
    (active, all); `running_style` comes from the theme."""
    plain, dim = Text(" · "), Text(" · ", "dim")
    fields = [Field(Text(spec_name, Style(bold=True)), 6, plain)]
    if snap is not None:
        fields.append(Field(Text(f"t={seconds(snap.time, 4)}"), 8, plain))
        if snap.event_index >= 0:
            fields.append(Field(Text(f"event #{snap.event_index}"), 10, plain))
            fields.append(Field(Text(f"of {events_total_text(snap, ended)}"), 5, Text(" ")))
        else:  # before event 0: "start of 0 so far" read as nonsense
            fields.append(Field(Text("at the start"), 10, plain))
            if snap.events_total:  # back at the start: how many there are (so far)
                fields.append(Field(Text(events_count_text(snap, ended)), 5, plain))
    if running:
        fields.append(Field(Text("▶ running", running_style), 10, plain))
    else:
        fields.append(Field(Text("paused", Style(bold=True)), 10, plain))
    at_start = snap is not None and snap.event_index < 0
    # Not "paused — paused", nor "at the start · paused — at the start".
    if (
        stop
        and not (stop == "paused" and not running)
        and not (at_start and stop == "at the start")
    ):
        # What stopped it stays longest after where we are: the counts go first.
        fields.append(Field(Text(stop, Style(bold=True)), 9, Text(" — ", "dim"), cut=True))
    fields.append(Field(Text(f"speed {rate}/s", "dim"), 2, dim))
    active, every = breakpoints
    if every:
        fields.append(Field(Text(f"breakpoints {active}/{every}", "dim"), 4, dim))
    if snap is not None:
        c = snap.counts
        for word, count, priority in (
            ("arrived", c.arrived, 3),
            ("live", c.live, 4),
            ("done", c.done, 3),
            ("rejected", c.rejected, 3 if c.rejected else 1),
        ):
            fields.append(Field(Text(f"{word} {count}", "dim"), priority, dim))
    fields[1] = fields[1]._replace(sep=Text("   ", Style(bold=True)))  # after the name
    return fields


def stop_text(
    stop: str, snap: Snapshot | None, error_text: str | None, error: Style, width: int = 0
) -> Text:
    """Why the run cannot go on: the violation, the located runtime error (its lines fitted
    to `width`, when known: `fit`), the event."""
    text = Text()
    text.append("Stopped: ", Style(bold=True) + error)
    text.append(stop + "\n", Style(bold=True))
    if snap is not None and snap.violation is not None:
        v = snap.violation
        text.append(f"invariant: {v.invariant}\n{v.message}\n")
        if v.blocks:
            text.append(f"blocks of {v.pool}: {', '.join(map(str, v.blocks[:32]))}\n")
    if error_text:
        text.append((fit(error_text, width) if width > 0 else error_text) + "\n", error)
    if snap is not None and snap.last_event is not None:
        text.append(f"at {snap.last_event.describe()}\n", "dim")
    return text


def failure_text(stop: str, error: Style) -> Text:
    """A bug in pooltui itself: what failed, and that the app is still usable."""
    text = Text()
    text.append("Stopped: ", Style(bold=True) + error)
    text.append(stop + "\n", Style(bold=True))
    text.append(
        "This is a bug in pooltui, not in your spec. The run is paused; you can step, "
        "go back or quit.\n",
        "dim",
    )
    return text


def start_failure(error: BaseException) -> str:
    """The one line `pooltui SPEC` prints when the debugger cannot even open."""
    return (
        f"pooltui: internal error: the debugger could not open: {type(error).__name__}: "
        f"{error} (this is a bug in pooltui; please report it with the spec)"
    )


def reload_failed(spec: str, error: str | None, style: Style) -> tuple[str, Text]:
    """A reload that found no spec to run: what the status says, and Details (the errors,
    and that the old run stays). A spec that cannot be read (deleted, a directory) is said
    so: it is not a spec with errors."""
    what = "cannot be read" if unreadable(spec, error) else "does not compile"
    text = Text()
    text.append(f"The spec {what}:\n", style + Style(bold=True))
    text.append(error or "unknown error")
    text.append(
        "\n\nFix it and press ctrl+r again; until then this is the simulation before.", "dim"
    )
    return f"reload: the spec {what}; the simulation before it stays", text


def halt_text(
    stop: str | None,
    stop_kind: str | None,
    failed: bool,
    snap: Snapshot,
    error_text: str | None,
    error: Style,
    width: int = 0,
) -> Text | None:
    """What the Details tab says first when the simulation halted (or the debugger
    failed), or a breakpoint's condition could not be evaluated (`error_text`: the
    condition, a caret under the culprit, as a watch's row shows its error): None
    otherwise. `width`: the tab's, which located lines are fitted to."""
    if not stop or not (stop_kind in HALTS or (stop_kind == "breakpoint" and error_text)):
        return None
    if failed:
        return failure_text(stop, error)
    return stop_text(stop, snap, error_text, error, width)


def details_text(
    snap: Snapshot,
    *,
    halted: Text | None,
    inspecting: tuple[Any, ...] | None,
    seen: tuple[int, str, float] | None = None,
) -> Text:
    """The Details tab: why it stopped (if it halted), what is inspected (an inspected
    session as `seen` while live: its id, name and arrival), the event."""
    text = Text()
    if halted is not None:
        text.append_text(halted)
        text.append("\n")
    if inspecting is not None:
        if inspecting[0] == "session":
            text.append_text(inspect_session_text(snap, inspecting[1], *(seen or ())[1:]))
        else:
            _, pool, block = inspecting
            text.append_text(inspect_block_text(snap, pool, block))
    else:
        text.append("Click a block or a session to inspect it.\n", "dim italic")
    ev = snap.last_event
    if ev is not None:
        # The whole why, which the event log may have had to cut, and the figures.
        text.append(f"\nevent #{ev.index} at {seconds(ev.time, 4)}: ", "dim")
        text.append(ev.moment, Style(bold=True))
        text.append(f"\n{ev.why}\n")
        if ev.data:
            figures = "  ".join(f"{k}={figure(v)}" for k, v in ev.data)
            text.append(figures + "\n", "dim")
    return text


def seen_session(
    snap: Snapshot, inspecting: tuple[Any, ...] | None, seen: tuple[int, str, float] | None
) -> tuple[int, str, float] | None:
    """The inspected session's id, name and arrival as `snap` shows them while it is
    live, else as last `seen`: Details names it, and says which, where it is not live."""
    if inspecting is None or inspecting[0] != "session":
        return None
    view = next((s for s in snap.sessions if s.session_id == inspecting[1]), None)
    if view is not None:
        return (view.session_id, view.name, view.arrived)
    return seen if seen is not None and seen[0] == inspecting[1] else None


def figure(value: Any) -> str:
    """A value of an event's data: numbers as everywhere else, tuples in brackets."""
    if isinstance(value, tuple | list):
        return "(" + ", ".join(figure(v) for v in value) + ")"
    if isinstance(value, float):
        return number(value, 4)
    return str(value)


def shown_for(what: tuple[Any, ...] | None, queue: int = QUEUE_ROWS) -> Shown:
    """What frames carry for the screen: the inspected session's view (or its block's
    holder's), and each queue's first `queue` positions planned (the Queue panel's rows)."""
    if what is None:
        return Shown(queue=queue)
    if what[0] == "session":
        return Shown(frozenset((what[1],)), queue=queue)
    return Shown(blocks=((what[1], what[2]),), queue=queue)


def lacks_view(snap: Snapshot, what: tuple[Any, ...] | None, queue: int = 0) -> bool:
    """Whether `snap` lacks the view of the session `what` inspects (or of its block's
    holder), or the planned figures of a queue's first `queue` positions."""
    wanted = Shown(queue=queue).planned
    if snap.queue_planned < wanted and any(len(p.queue) > snap.queue_planned for p in snap.pools):
        return True
    if what is None:
        return False
    if what[0] == "session":
        return not snap.covers(what[1])
    try:
        owner = snap.pool(what[1]).block_owner(what[2])
    except KeyError:  # no such pool at this event
        return False
    return owner is not None and not snap.covers(owner.session_id)
