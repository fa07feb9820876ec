"""`pooltui`: the entry point. Dispatches to the subcommands; no traceback ever escapes.

pooltui SPEC                 open the debugger on SPEC (`pooltui tui SPEC`)
pooltui check SPEC           compile, print a one-line summary (exit 1 on errors)
pooltui ir SPEC              print the IR as JSON
pooltui run SPEC [...]       simulate headless and print a summary
pooltui render SPEC [...]    write a screenshot of the debugger as SVG
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

# The last-resort messages, made before anything can run out of memory: printing them
# allocates nothing more.
_NO_MEMORY = (
    b"pooltui: out of memory: this spec needs more memory than there is (too many "
    b"sessions, members or blocks?); make it smaller, or run it with --until or --events\n"
)
_BUG = b"pooltui: this is a bug in pooltui; please report it with the spec.\n"

SUBCOMMANDS = ("tui", "check", "run", "render", "ir")  # in the order the help lists them


class _Parser(argparse.ArgumentParser):
    """argparse that exits 2 with a plain message (it already does; kept for one place)."""


class _CommandParser(_Parser):
    """A command's parser: it refuses what it does not know itself, with its own usage
    (`pooltui run: error: …` under `usage: pooltui run …`). argparse passes a command's
    unknown arguments up to the top-level parser, which refused them with the top-level
    usage, saying nothing of the command's options."""

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, extra = super().parse_known_args(args, namespace)
        if extra:
            self.error(f"unrecognized arguments: {' '.join(extra)}")
        return parsed, extra


def _time(text: str) -> float:
    """A simulated time for --until / --time: a number ≥ 0 (inf: no limit), never NaN."""
    try:
        t = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a time in seconds: {text!r}") from None
    if not t >= 0:  # NaN and negatives
        raise argparse.ArgumentTypeError(f"a time must be a number ≥ 0, not {text!r}")
    return t


def _whole(least: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            n = int(text.replace("_", ""))
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if n < least:
            raise argparse.ArgumentTypeError(f"must be at least {least}, not {n}")
        return n

    parse.__name__ = "whole number"
    return parse


def _command(sub: Any, name: str, summary: str, description: str) -> argparse.ArgumentParser:
    """A command's parser: its one line in `pooltui -h`, its paragraph and SPEC in its own."""
    p: argparse.ArgumentParser = sub.add_parser(name, help=summary, description=description)
    p.add_argument("spec", help="the .pool file")
    return p


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="pooltui",
        # `tui` is the default: `pooltui SPEC` is `pooltui tui SPEC` (`_main` adds it).
        usage=f"%(prog)s [-h] [--version] [{{{','.join(SUBCOMMANDS)}}}] SPEC ...",
        description="Visualize and step-debug LLM-serving pools. `pooltui SPEC` opens the "
        "debugger on SPEC (the same as `pooltui tui SPEC`); the other commands work "
        "without a screen. `pooltui COMMAND -h` describes a command's options.",
    )
    parser.add_argument("--version", action="store_true", help="print the version and build")
    sub = parser.add_subparsers(
        dest="command",
        metavar="{" + ",".join(SUBCOMMANDS) + "}",
        parser_class=_CommandParser,
        prog="pooltui",  # a command's usage: `pooltui run …`, not the usage above's words
    )

    p = _command(
        sub,
        "tui",
        "open the debugger (the default: pooltui SPEC)",
        "Open the step debugger on SPEC: n / p step, c / r run, space pauses, b sets "
        "breakpoints, ? lists every key. A spec that does not compile opens on its errors, "
        "located, to fix and reload (r); one that cannot be read is one line (exit 1).",
    )

    p = _command(
        sub,
        "check",
        "compile a spec and print a one-line summary",
        "Compile SPEC without simulating it and print a one-line summary (its pools, "
        "stages and session classes); exit 1 with each error located "
        "(file:line:col, the line, a caret).",
    )

    p = _command(
        sub,
        "run",
        "simulate headless and print a summary",
        "Simulate SPEC without a screen, event by event with every invariant checked "
        "(--fast batches decode-only iterations), and print a summary: sessions, "
        "preemptions, evictions, spills, the hit rate, latency percentiles, utilisation. "
        "Exit 0 when the run ends (or stops at --until / --events), 1 on a spec error, a "
        "runtime error, a failed check, a deadlock or an invariant violation.",
    )
    p.add_argument("--until", type=_time, default=None, metavar="T", help="stop at time T (s)")
    p.add_argument(
        "--events", type=_whole(1), default=None, metavar="N", help="stop after N events"
    )
    p.add_argument("--trace", default=None, metavar="FILE.jsonl", help="write every event")
    p.add_argument("--no-invariants", action="store_true", help="do not check invariants")
    p.add_argument("--fast", action="store_true", help="batch decode-only iterations")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")

    p = _command(
        sub,
        "render",
        "write a screenshot of the debugger (SVG)",
        "Draw the debugger on SPEC headless, as it stands at --event, --time or the first "
        "hit of --break, and write it as an SVG. Exit 1 when that moment never comes (no "
        "file written), 2 when a --break can never fire on SPEC.",
    )
    p.add_argument(
        "--event",
        type=_whole(0),
        default=None,
        metavar="N",
        help="show the debugger right after event #N (exit 1 if the run has no such event); "
        "without --event, --time or --break: the start, before the first event",
    )
    p.add_argument(
        "--time",
        type=_time,
        default=None,
        metavar="T",
        help="show the debugger at simulated time T seconds (after the last event at or before T)",
    )
    p.add_argument(
        "--size",
        default="160x48",
        metavar="WxH",
        help="the terminal size in characters, width x height (default 160x48; "
        "below 100x28 the debugger shows one panel at a time)",
    )
    p.add_argument(
        "--break",
        dest="breaks",
        action="append",
        default=[],
        metavar="BREAKPOINT",
        help="add a breakpoint (as the breakpoints screen takes it) and continue to its first "
        "hit (exit 1 if it never fires); repeatable: then to the first hit of any of them",
    )
    p.add_argument("-o", "--output", required=True, metavar="FILE.svg", help="the SVG to write")

    p = _command(
        sub,
        "ir",
        "print a spec's IR as JSON",
        "Compile SPEC and print its intermediate representation (what the simulator "
        "runs) as JSON; exit 1 with each error located.",
    )
    p.add_argument(
        "--rows", action="store_true", help="include every source row (CSV and JSON Lines traces)"
    )
    return parser


def version() -> str:
    """`pooltui 0.1.0, pure Python`, or `..., compiled (mypyc)` (POOLTUI_COMPILE=1)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    from pooltui.sim import build_label

    try:
        v = dist_version("pooltui")
    except PackageNotFoundError:  # run from a copy that is not installed
        v = "(not installed)"
    return f"pooltui {v}, {build_label()}"


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    except MemoryError:
        # Free what the failed command held (its frames hang on the traceback) before
        # saying anything, and say it without allocating.
        sys.last_value = sys.last_traceback = None
        _say(_NO_MEMORY)
        return 1
    except RecursionError:
        _say(b"pooltui: internal error: RecursionError: nesting too deep\n" + _BUG)
        return 3


def _say(message: bytes) -> None:
    """Write to stderr's descriptor directly: no Python objects, no formatting."""
    with contextlib.suppress(OSError):
        os.write(2, message)


def _internal(exc: BaseException) -> int:
    try:
        text = f"pooltui: internal error: {type(exc).__name__}: {exc}"[:2000]
        print(text, file=sys.stderr)
        print(_BUG.decode().rstrip(), file=sys.stderr)
    except MemoryError:
        _say(_NO_MEMORY)
        return 1
    except BaseException:
        _say(b"pooltui: internal error\n" + _BUG)
    return 3


def _main(argv: Sequence[str] | None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    first = args_list[0] if args_list else "-"
    # `pooltui SPEC`, or `pooltui -- -x.pool` (the options end, a spec follows): the debugger.
    if first == "--" or (first not in SUBCOMMANDS and not first.startswith("-")):
        args_list.insert(0, "tui")
    parser = build_parser()
    args = parser.parse_args(args_list)
    if args.version:
        print(version())
        return 0
    if args.command is None:
        parser.print_help()
        return 2
    from pooltui.cli.output import OutputError, ignore_file_size_signal, silence_stdout

    ignore_file_size_signal()
    try:
        if args.command == "check":
            from pooltui.cli.check import run_check

            return run_check(args.spec)
        if args.command == "ir":
            from pooltui.cli.check import run_ir

            return run_ir(args.spec, rows=args.rows)
        if args.command == "run":
            from pooltui.cli.run import run_headless

            return run_headless(args)
        if args.command == "render":
            from pooltui.cli.render import run_render

            return run_render(args)
        from pooltui.cli.render import run_tui

        return run_tui(args.spec)
    except KeyboardInterrupt:
        print("pooltui: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        silence_stdout()
        return 1
    except OutputError as exc:
        silence_stdout()
        print(f"pooltui: {exc}", file=sys.stderr)
        return 1
    except (MemoryError, RecursionError):
        raise  # main() words these without allocating
    except Exception as exc:  # the last guard: no traceback reaches a user
        return _internal(exc)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
