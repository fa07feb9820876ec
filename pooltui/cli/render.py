"""`pooltui SPEC` (the debugger) and `pooltui render SPEC ... -o FILE.svg` (a screenshot).

`render` builds the same app, runs it headless at a fixed size, moves it to the event or
time asked for, and saves what the screen shows as SVG. No terminal, no clock on screen:
the same spec and arguments give the same file.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

from pooltui.cli.output import OutputError, atomic_text, check_target, emit
from pooltui.lang.words import seconds


def run_tui(spec: str, **run: Any) -> int:
    """Open the debugger (`run` goes to `App.run`: tests pass headless=True)."""
    from pooltui.tui.app import PoolApp

    app = PoolApp.from_spec(spec)
    if cannot_read(app):
        print(said_by_cli(app), file=sys.stderr)  # one line, as `pooltui check` says it
        return 1
    result, said = run_quietly(app, **run)
    if app.compile_error is not None and app.sim is None:
        # Leave the errors on the terminal too, as `pooltui check` prints them.
        print(said_by_cli(app), file=sys.stderr)
        return 1
    if said is not None:
        print(said, file=sys.stderr)
        return 1
    return int(result or 0)


def cannot_read(app: Any) -> bool:
    """The spec could not even be read (missing, a directory, no permission): nothing for
    the full-screen app to show."""
    from pooltui.tui.loading import unreadable

    return app.sim is None and unreadable(app.spec, app.compile_error)


def said_by_cli(app: Any) -> str:
    """The app's compile errors as `pooltui check` prints them: a spec that cannot be read
    is a command line's one line, `pooltui: cannot read …` (the app says it without)."""
    return f"pooltui: {app.compile_error}" if cannot_read(app) else str(app.compile_error)


def run_quietly(app: Any, **run: Any) -> tuple[Any, str | None]:
    """Run a Textual app so that nothing it would print on its way out (Textual's own
    traceback of a failure no guard caught) reaches the terminal: return its result and,
    if it printed anything, one line that says what went wrong."""
    import io

    from rich.console import Console

    buffer = io.StringIO()
    app.error_console = Console(file=buffer, markup=False, highlight=False, width=400)
    result = app.run(**run)
    return result, last_words(buffer.getvalue())


def last_words(printed: str) -> str | None:
    """One line for what a Textual app printed on exit: our own message as it is; of a
    traceback, its last line (`Type: message`)."""
    lines = [line.strip(" │╰╯─") for line in printed.splitlines()]
    lines = [line for line in lines if line.strip()]
    if not lines:
        return None
    if lines[0].startswith("pooltui:"):
        return lines[0]
    # A traceback ends with `Type: message`; Textual may add a NOTE after it.
    errors = [line for line in lines if _ERROR_LINE.match(line)]
    said = errors[-1] if errors else next((x for x in lines if not x.startswith("NOTE")), lines[0])
    return f"pooltui: internal error: {said[:300]} (this is a bug in pooltui; please report it with the spec)"


_ERROR_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Failed)\w*: ")


def parse_size(text: str) -> tuple[int, int]:
    try:
        w, h = text.lower().split("x")
        width, height = int(w), int(h)
    except ValueError:
        raise ValueError(f"--size wants WxH (e.g. 160x48), not {text!r}") from None
    if not (20 <= width <= 1000 and 8 <= height <= 500):
        raise ValueError(f"--size {text}: width 20..1000, height 8..500")
    return width, height


def render_app(
    app: Any,
    output: str,
    *,
    event: int | None = None,
    time: float | None = None,
    size: tuple[int, int] = (160, 48),
    title: str | None = None,
    breaks: tuple[str, ...] = (),
    refuse: Any = None,
) -> str | None:
    """Run `app` headless, go to `event` or `time` (or, with `breaks`, add those
    breakpoints and continue to the first hit, as `c` does), write the SVG to `output`.
    Returns why the simulation stopped there (or None)."""
    from textual.pilot import Pilot

    from pooltui.tui.app import PoolApp

    assert isinstance(app, PoolApp)
    stop: list[str | None] = [None]
    shot: list[str] = []
    refused: list[str | None] = []

    async def auto_pilot(pilot: Pilot[Any]) -> None:
        await pilot.pause()
        await app.settle()
        if app.sim is not None:
            for text in breaks:
                app.breakpoints.add(app.parse_breakpoint(text))
            if breaks:
                app.breakpoints_changed()
                app.send("continue")
            elif event is not None:
                app.send("goto", index=event)
            elif time is not None:
                app.send("goto_time", time=time)
            await app.settle(timeout=600)
        if app.debugger is not None:
            app.debugger.fit()  # a picture has no next step to fit the panels' heights
        # Let callbacks scheduled after a refresh (scrolling to the event) run first.
        await pilot.pause(0.05)
        if app.debugger is not None and app.snapshot is not None:
            from pooltui.tui.widgets.eventlog import EventLog
            from pooltui.tui.widgets.source import SourceView

            index = app.snapshot.event_index
            # Placed canonically (not "only if out of view"), and again after the frames
            # still queued have landed, so the last placement uses the final event.
            for _ in range(3):
                for log in app.debugger.query(EventLog):
                    log.scroll_to_index(index, always=True)
                for source in app.debugger.query(SourceView):
                    source.place()
                await pilot.pause(0.05)
            # On a busy machine the scroll lands a few refreshes later: wait for it (a
            # condition with a bound), so the same command draws the same picture.
            for _ in range(1500):
                if all(log.shows(log.cursor) for log in app.debugger.query(EventLog)):
                    break
                await pilot.pause(0.02)
        await pilot.wait_for_scheduled_animations()
        await pilot.pause()
        stop[0] = app.stop
        if refuse is not None:
            refused.append(refuse(app))
        svg = app.export_screenshot(title=title or f"pooltui {Path(app.spec).name}")
        shot.append(place_leading_spaces(svg))
        app.exit(0)

    async def guarded_pilot(pilot: Pilot[Any]) -> None:
        try:
            await auto_pilot(pilot)
        except Exception as exc:  # said in one line below, never a traceback
            app.failures.append(f"render: {type(exc).__name__}: {exc}")
        app.exit(0)

    _, said = run_quietly(app, headless=True, auto_pilot=guarded_pilot, size=size)
    if said is not None:
        raise RenderFailed(said)
    if app.failures:
        raise RenderFailed(f"pooltui render: internal error: {app.failures[0]}"[:400])
    if refused and refused[0] is not None:
        raise Refused(refused[0])
    if shot:  # written outside the app, so a failure is the command's, in one line
        with atomic_text(output) as f:
            f.write(shot[0])
    return stop[0]


_TEXT = re.compile(
    r'(<text [^>]*?x=")([0-9.]+)(" [^>]*?textLength=")([0-9.]+)("[^>]*>)((?:&#160;)+)'
)


def place_leading_spaces(svg: str) -> str:
    """Move the leading spaces of each text run into its x position.

    Textual writes one `<text>` per run of cells in one style, with spaces as `&#160;`.
    Some SVG renderers (librsvg, which most converters to PNG use) drop a run's leading
    spaces and ignore `textLength`, so `kv` + `  cap 512` would read `kvcap 512`. Shifting
    the run right by its leading spaces draws the same picture in every renderer."""

    def shift(m: re.Match[str]) -> str:
        x, length = float(m.group(2)), float(m.group(4))
        end = svg.find("</text>", m.end())
        n = m.group(6).count("&#160;")
        rest = _cell_count(svg[m.end() : end]) if end >= 0 else 0
        if rest == 0:
            return m.group(0)  # all spaces: nothing is drawn either way
        cell = length / (n + rest)
        return f"{m.group(1)}{x + n * cell:.1f}{m.group(3)}{rest * cell:.1f}{m.group(5)}"

    return _TEXT.sub(shift, svg)


def _cell_count(fragment: str) -> int:
    """Characters of an SVG text fragment, counting each entity as one."""
    return len(re.sub(r"&[#a-zA-Z0-9]+;", "x", fragment))


def where_text(snap: Any) -> str:
    """`event #12, t=0.5s`, or `the start` before the first event (never `event #-1`)."""
    if snap.event_index < 0:
        return "the start"
    return f"event #{snap.event_index}, t={seconds(snap.time)}"


def stopped(app: Any) -> str:
    if app.stop_kind in ("violation", "error", "halt"):
        return f"halted ({app.stop})"
    return "ended"


class Refused(Exception):
    """The screenshot would not show what was asked for (a breakpoint that never fired,
    an event past the end)."""


class RenderFailed(Exception):
    """The debugger failed while drawing the screenshot (its one line)."""


def run_render(args: argparse.Namespace) -> int:
    from pooltui.tui.app import PoolApp

    try:
        size = parse_size(args.size)
    except ValueError as exc:
        print(f"pooltui render: {exc}", file=sys.stderr)
        return 2
    if args.event is not None and args.time is not None:
        print("pooltui render: give --event or --time, not both", file=sys.stderr)
        return 2
    if args.time is not None and not args.time >= 0:
        print("pooltui render: --time must be >= 0", file=sys.stderr)
        return 2
    breaks = tuple(getattr(args, "breaks", None) or ())
    if breaks and (args.event is not None or args.time is not None):
        print("pooltui render: give --break, or --event / --time, not both", file=sys.stderr)
        return 2
    app = PoolApp.from_spec(args.spec)
    if cannot_read(app):
        print(said_by_cli(app), file=sys.stderr)
        return 1
    try:
        from pooltui.cli.run import inputs

        check_target(args.output, inputs(args.spec, getattr(app.sim, "program", None)))
    except OutputError as exc:
        print(f"pooltui render: {exc}", file=sys.stderr)
        return 1
    if breaks and app.sim is not None:
        for text in breaks:
            try:
                app.parse_breakpoint(text)
            except Exception as exc:
                print(f"pooltui render: --break {text!r}: {exc}", file=sys.stderr)
                return 2

    def refuse(app: Any) -> str | None:
        """What the screenshot would show is not what was asked for: say so instead."""
        snap = app.snapshot
        if app.sim is None or snap is None:
            return None
        if breaks and app.stop_kind != "breakpoint":
            said = " or ".join(repr(b) for b in breaks)
            return (
                f"--break {said} never fired: the simulation {stopped(app)} at "
                f"{where_text(snap)} without reaching it"
            )
        if args.event is not None and snap.event_index != args.event:
            n = snap.events_total
            ran = f"after {n} events (#0 to #{n - 1})" if n else "before its first event"
            return (
                f"--event {args.event}: there is no event #{args.event}; the simulation "
                f"{stopped(app)} {ran}"
            )
        return None

    try:
        stop = render_app(
            app,
            args.output,
            event=args.event,
            time=args.time,
            size=size,
            breaks=breaks,
            refuse=refuse,
        )
    except Refused as exc:
        print(f"pooltui render: {exc}", file=sys.stderr)
        say_runtime_error(app)
        return 1
    except OutputError as exc:
        print(f"pooltui render: {exc}", file=sys.stderr)
        return 1
    except RenderFailed as exc:
        print(str(exc), file=sys.stderr)
        return 1
    if app.sim is None:
        # The screenshot shows the errors; the terminal gets them as `check` prints them.
        print(said_by_cli(app), file=sys.stderr)
        return 1
    snap = app.snapshot
    where = where_text(snap) if snap is not None else "the start"
    emit(f"wrote {args.output} ({size[0]}x{size[1]}) at {where}" + (f": {stop}" if stop else ""))
    say_runtime_error(app)
    return 0


def say_runtime_error(app: Any) -> None:
    """The runtime error the run halted on, located as `pooltui run` prints it (the line
    on standard output names it only in words)."""
    if app.stop_kind == "error" and app.error_text:
        print(app.error_text, file=sys.stderr)
