"""Text to AST: the LALR parser (built once, cached), and each parse cached (the cache
bounded: the most recently used kept, `prune`).

The AST is built by callbacks the LALR parser calls as it reduces (lark's inline
transformer), so building never recurses however deep the input nests. After a syntax error
the parser resumes at the next line that starts a top-level declaration, so one run reports
the syntax errors of several declarations (each worded by `syntax.friendly`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import re
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:  # lark is imported when a spec is parsed, not for one found in the cache
    import lark
    from lark.lexer import Token

from pooltui.lang import ast as A
from pooltui.lang.errors import Diagnostic
from pooltui.lang.exprs import MAX_INT
from pooltui.lang.ir import Span
from pooltui.lang.syntax import (
    RESYNC,
    clip,
    friendly,
    friendly_expression,
    learn_terminals,
    tok_span,
)

GRAMMAR_PATH = Path(__file__).with_name("grammar.lark")
MAX_SYNTAX_ERRORS = 10
# The cache folder's bounds (docs/decisions.md, "The cache folder"): the parses kept, the
# most recently used first (a reload in the app or a test's example adds one each); the
# built parsers kept (one per grammar); how old a writer's temporary must be to be taken
# for one a stopped run left.
MAX_PARSES = 256
MAX_PARSE_BYTES = 32 * 2**20
MAX_PARSERS = 3
STALE_SECONDS = 3600

_NUMBER_OK = re.compile(r"[0-9]+(?:_[0-9]+)*(?:\.[0-9]+(?:_[0-9]+)*)?(?:[eE][+-]?[0-9]+)?\Z")


def _first_last(items: Sequence[Any]) -> tuple[Any, Any]:
    flat: list[Any] = []
    for it in items:
        if isinstance(it, list):
            flat.extend(x for x in it if x is not None)
        elif it is not None:
            flat.append(it)
    return flat[0], flat[-1]


class _Builder:
    """The parser's reduce callbacks (lark looks them up by rule or alias name)."""

    def __init__(self) -> None:
        self.file = "<spec>"
        self.errors: list[Diagnostic] = []

    # ---- helpers
    def sp(self, *items: Any) -> Span:
        first, last = _first_last(items)
        # A token is lark's `Token`, a str; the AST's nodes are not.
        a = tok_span(self.file, cast("Token", first)) if isinstance(first, str) else first.span
        b = tok_span(self.file, cast("Token", last)) if isinstance(last, str) else last.span
        return Span(self.file, a.line, a.col, b.end_line, b.end_col)

    def ts(self, t: Token) -> Span:
        return tok_span(self.file, t)

    @staticmethod
    def dp(*items: Any) -> int:
        d = 0
        for it in items:
            if isinstance(it, list):
                for x in it:
                    d = max(d, getattr(x, "depth", 0))
            elif it is not None:
                d = max(d, getattr(it, "depth", 0))
        return d + 1

    # ---- top level
    def start(self, c: list[Any]) -> list[Any]:
        return c

    def condition(self, c: list[Any]) -> Any:
        return c[0]

    def seed_decl(self, c: list[Any]) -> A.SeedD:
        return A.SeedD(c[1], self.sp(c[0], c[1]))

    def const_decl(self, c: list[Any]) -> A.ConstD:
        return A.ConstD(str(c[1]), self.ts(c[1]), c[2], self.sp(c[0], c[2]))

    def check_decl(self, c: list[Any]) -> A.CheckD:
        return A.CheckD(str(c[1])[1:-1], c[2], self.sp(c[0], c[2]))

    def count(self, c: list[Any]) -> Any:
        return c[0]

    def stage_decl(self, c: list[Any]) -> A.StageD:
        kw, name, count, kind, *opts = c
        return A.StageD(str(name), self.ts(name), count, str(kind), opts, self.sp(kw, kind, opts))

    def pool_decl(self, c: list[Any]) -> A.PoolD:
        kw, name, count, *opts = c
        return A.PoolD(str(name), self.ts(name), count, opts, self.sp(kw, name, count, opts))

    # ---- options
    def opt_expr(self, c: list[Any]) -> A.Option:
        return A.Option(str(c[0]), self.sp(c[0], c[1]), self.ts(c[0]), expr=c[1])

    def opt_word(self, c: list[Any]) -> A.Option:
        return A.Option(str(c[0]), self.sp(c[0], c[1]), self.ts(c[0]), word=str(c[1]))

    def opt_serve(self, c: list[Any]) -> A.Option:
        return A.Option("serve", self.sp(c[0], c[2]), self.ts(c[0]), word="exclusive prefill")

    def opt_keys(self, c: list[Any]) -> A.Option:
        return A.Option(str(c[0]), self.sp(c[0], c[2]), self.ts(c[0]), word="by", keys=c[2])

    def opt_admit(self, c: list[Any]) -> A.Option:
        return A.Option(
            "admit", self.sp(c[0], c[2]), self.ts(c[0]), names=[(str(c[2]), self.ts(c[2]))]
        )

    def opt_spill(self, c: list[Any]) -> A.Option:
        kw, tier, _via, link, work, _when, pred = c
        names = [(str(tier), self.ts(tier)), (str(link), self.ts(link))]
        return A.Option("spill", self.sp(kw, pred), self.ts(kw), names=names, work=work, when=pred)

    def opt_reload(self, c: list[Any]) -> A.Option:
        kw, _via, link, work, rpar, _when, pred, pred_rpar = c
        names = [(str(link), self.ts(link))]
        span = self.sp(kw, pred_rpar if pred_rpar is not None else rpar)
        return A.Option("reload", span, self.ts(kw), names=names, work=work, when=pred)

    # ---- sessions
    def session_count(self, c: list[Any]) -> A.SessionD:
        kw, name, count, *items = c
        return A.SessionD(
            str(name), self.ts(name), count, None, None, None, items, self.sp(kw, name, count)
        )

    def session_from(self, c: list[Any]) -> A.SessionD:
        kw, name, _from, path, _limit, limit, *items = c
        return A.SessionD(
            str(name), self.ts(name), None, str(path)[1:-1], self.ts(path), limit, items,
            self.sp(kw, path, limit),
        )  # fmt: skip

    def arrive(self, c: list[Any]) -> A.Arrive:
        return A.Arrive(str(c[1]), c[2], self.sp(c[0], c[3]), self.dp(c[2]))

    def assign(self, c: list[Any]) -> A.Assign:
        return A.Assign(str(c[0]), self.ts(c[0]), c[1], self.sp(c[0], c[1]), self.dp(c[1]))

    def block(self, c: list[Any]) -> list[Any]:
        return c[1:-1]

    def ref(self, c: list[Any]) -> A.RefA:
        name, index, close = c
        return A.RefA(str(name), self.ts(name), index, self.sp(name, close), self.dp(index))

    def hold(self, c: list[Any]) -> A.HoldS:
        kw, ref, units, _n, need, _r, reserve, content, body = c
        span = self.sp(kw, units, need, reserve)
        pieces, content_span = content if content is not None else (None, None)
        depth = self.dp(ref, units, need, reserve, body, pieces)
        return A.HoldS(ref, units, need, reserve, body, span, depth, pieces, content_span)

    def content(self, c: list[Any]) -> tuple[list[A.PieceA], Span]:
        return c[1:-1], self.ts(c[0])

    def piece(self, c: list[Any]) -> A.PieceA:
        key, units = c
        return A.PieceA(key, units, self.sp(key, units), self.dp(key, units))

    def run(self, c: list[Any]) -> A.RunS:
        kw, ref, kind, amount, rpar = c
        return A.RunS(ref, str(kind), amount, self.sp(kw, rpar), self.dp(ref, amount))

    def grow(self, c: list[Any]) -> A.GrowS:
        return A.GrowS(c[1], c[2], self.sp(c[0], c[3]), self.dp(c[1], c[2]))

    def send(self, c: list[Any]) -> A.SendS:
        return A.SendS(c[1], c[2], self.sp(c[0], c[3]), self.dp(c[1], c[2]))

    def wait(self, c: list[Any]) -> A.WaitS:
        return A.WaitS(c[1], self.sp(c[0], c[2]), self.dp(c[1]))

    def repeat(self, c: list[Any]) -> A.RepeatS:
        return A.RepeatS(c[1], c[2], self.sp(c[0], c[1]), self.dp(c[1], c[2]))

    def if_stmt(self, c: list[Any]) -> A.IfS:
        kw, cond, then, _else, other = c
        if other is None:
            other = []
        elif isinstance(other, A.IfS):
            other = [other]  # `else if` is sugar for `else { if … }`
        return A.IfS(cond, then, other, self.sp(kw, cond), self.dp(cond, then, other))

    # ---- expressions
    def cond(self, c: list[Any]) -> A.CondE:
        return A.CondE(c[0], c[1], c[2], self.sp(c[0], c[2]), self.dp(*c))

    def binary(self, c: list[Any]) -> A.BinaryE:
        return A.BinaryE(str(c[1]), c[0], c[2], self.sp(c[0], c[2]), self.dp(c[0], c[2]))

    def unary(self, c: list[Any]) -> A.UnaryE:
        return A.UnaryE(str(c[0]), c[1], self.sp(c[0], c[1]), self.dp(c[1]))

    def number(self, c: list[Any]) -> A.Number:
        t = c[0]
        span = self.ts(t)
        text = str(t)
        if text == "inf":
            return A.Number(float("inf"), span)
        if not _NUMBER_OK.match(text):
            self.errors.append(Diagnostic(span, f"bad number '{clip(text)}'"))
            return A.Number(0, span)
        digits = text.replace("_", "")
        if len(digits) > 400:
            self.errors.append(Diagnostic(span, "number too long (more than 400 digits)"))
            return A.Number(0, span)
        if any(ch in digits for ch in ".eE"):
            # Past the largest float (about 1.8e308) a literal is inf, as in IEEE 754.
            value = float(digits)
            return A.Number(value, span)
        value = int(digits)
        if value > MAX_INT:
            self.errors.append(
                Diagnostic(
                    span,
                    f"integer too large: '{clip(text)}' is above 2^53 "
                    "(9,007,199,254,740,992), the largest whole number a spec can use",
                )
            )
            return A.Number(0, span)
        return A.Number(value, span)

    def name(self, c: list[Any]) -> A.Name:
        return A.Name(str(c[0]), self.ts(c[0]))

    def index(self, c: list[Any]) -> A.Index:
        return A.Index(str(c[0]), self.ts(c[0]), c[1], self.sp(c[0], c[2]), self.dp(c[1]))

    def args(self, c: list[Any]) -> list[Any]:
        return c

    def call(self, c: list[Any]) -> A.CallE:
        name, args, rpar = c
        args = args or []
        return A.CallE(str(name), self.ts(name), args, self.sp(name, rpar), self.dp(args))

    def draw(self, c: list[Any]) -> A.DrawE:
        kw, name, args, rpar = c
        args = args or []
        return A.DrawE(str(name), self.ts(name), args, self.sp(kw, rpar), self.dp(args))

    def string(self, c: list[Any]) -> A.StringE:
        return A.StringE(str(c[0])[1:-1], self.ts(c[0]))

    def field(self, c: list[Any]) -> A.FieldE:
        base, _dot, name = c
        return A.FieldE(str(base), self.ts(base), str(name), self.ts(name), self.sp(base, name))

    def paren(self, c: list[Any]) -> Any:
        inner = c[1]
        inner.depth += 1  # parentheses nest too: they count toward the depth limit
        return inner


_lock = threading.Lock()
_builder = _Builder()
_parser: lark.Lark | None = None


def grammar_text() -> str:
    return GRAMMAR_PATH.read_text(encoding="utf-8")


def cache_dir() -> Path:
    """Where the built parser is cached: $POOLTUI_CACHE_DIR, else the user's cache dir
    ($XDG_CACHE_HOME or ~/.cache) /pooltui."""
    explicit = os.environ.get("POOLTUI_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "pooltui"


def build_parser(cache: Path | None) -> lark.Lark:
    """The LALR parser. Building its tables takes a few tenths of a second, so the built
    parser is kept in `cache` (a directory; None: no cache), in a file named by the
    grammar's, lark's and Python's versions (lark checks the grammar's hash again when it
    loads it). A cache that cannot be read or written is passed over silently."""
    text = grammar_text()
    options: dict[str, Any] = {
        "parser": "lalr",
        "lexer": "basic",
        "start": ["start", "condition"],
        "propagate_positions": True,
        "maybe_placeholders": True,
        "transformer": _builder,
    }
    from pooltui.lang import _lark  # noqa: F401  (first: lark without what it does not need)

    # isort: split
    import lark

    if cache is None:
        return lark.Lark(text, **options)
    key = hashlib.sha256(f"{text}\0{lark.__version__}\0{sys.version}".encode()).hexdigest()
    path = cache / f"parser-{key[:20]}.lark"
    if not path.is_file():
        try:
            cache.mkdir(parents=True, exist_ok=True)
        except OSError:
            return lark.Lark(text, **options)
        if not os.access(cache, os.W_OK):
            return lark.Lark(text, **options)
    # lark loads the file (rebuilding when it will not load: a half-written file from a
    # concurrent first run too) or writes it, and keeps quiet when it cannot.
    built = lark.Lark(text, cache=str(path), **options)
    _used(path)
    prune(cache, "parser-", ".lark", MAX_PARSERS, None, path)
    return built


def _get_parser() -> lark.Lark:
    global _parser
    if _parser is None:
        _parser = build_parser(cache_dir())
        learn_terminals(_parser)
    return _parser


def parse(
    text: str, file: str, start: str = "start", what: str | None = None
) -> tuple[Any, list[Diagnostic]]:
    """Parse `text`; returns (decls or expr, diagnostics). On a syntax error the result is
    None and the diagnostics hold every syntax error found (after resuming). A spec parsed
    without a diagnostic is kept in the cache (`_Cached`): parsed again, it is read back
    without lark. `what` names an expression parsed alone (start "condition": "a watch",
    "a breakpoint condition"), for its syntax error."""
    entry = _Cached(text, file, start)
    found = entry.read()
    if found is not None:
        return found, []
    parser = _get_parser()
    from lark.exceptions import UnexpectedInput

    diags: list[Diagnostic] = []
    result: Any = None
    current = text
    with _lock:
        while True:
            _builder.file = file
            _builder.errors = []
            try:
                result = parser.parse(current, start=start)
                diags.extend(_builder.errors)
                break
            except UnexpectedInput as exc:
                diags.extend(_builder.errors)
                if what is not None:
                    diags.append(friendly_expression(exc, current, file, what))
                    break
                diag, pos = friendly(exc, current, file, parser)
                diags.append(diag)
                result = None
                if start != "start" or len(diags) >= MAX_SYNTAX_ERRORS or pos is None:
                    break
                nxt = _resync(current, pos)
                if nxt is None:
                    break
                # Blank what was already reported, keeping line numbers and columns exact.
                current = "\n" * current.count("\n", 0, nxt) + current[nxt:]
    if not diags and result is not None:
        entry.write(result)
    return result, diags


class _Cached:
    """A parsed spec in the cache folder (`cache_dir`), named by a hash of its text, its
    file name, the start rule and what builds the AST (the grammar, this module, the AST's
    classes, Python's version): a cache written by another version is never read. One that
    cannot be read or written is passed over silently."""

    __slots__ = ("path",)

    def __init__(self, text: str, file: str, start: str) -> None:
        h = hashlib.sha256(_builds())
        h.update(f"{start}\0{file}\0".encode("utf-8", "surrogatepass"))
        h.update(text.encode("utf-8", "surrogatepass"))
        self.path = cache_dir() / f"ast-{h.hexdigest()[:32]}.pickle"

    def read(self) -> Any:
        """The parse kept here, or None (none kept, or one that does not load whole). One
        read back counts as a use: the last to be removed (`prune`)."""
        try:
            with open(self.path, "rb") as f:
                found = pickle.load(f)
        except Exception:  # a cache that does not load is not there
            return None
        _used(self.path)
        return found

    def write(self, result: Any) -> None:
        """Kept, whole or not at all; then the oldest in use removed past the bounds."""
        tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(tmp, "wb") as f:
                pickle.dump(result, f, protocol=pickle.HIGHEST_PROTOCOL)
            _used(tmp)
            os.replace(tmp, self.path)  # whole or not at all, whoever writes it too
        except (OSError, pickle.PicklingError, RecursionError):
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            return
        prune(self.path.parent, "ast-", ".pickle", MAX_PARSES, MAX_PARSE_BYTES, self.path)


def _used(path: Path) -> None:
    """Marks a use of a kept file: its modification time set to now, from the fine clock
    (the file system's own stamp of a write is coarse, a few milliseconds: two writes in a
    row would tie). Access times are not used: `relatime` mounts seldom update them."""
    now = time.time_ns()
    with contextlib.suppress(OSError):  # gone meanwhile, or a folder we may only read
        os.utime(path, ns=(now, now))


def prune(
    folder: Path, prefix: str, suffix: str, most: int, most_bytes: int | None, keep: Path
) -> None:
    """Removes the files `prefix*suffix` of `folder` least recently used (`_used`) until at
    most `most` are left, of at most `most_bytes` in all (None: no bound), never `keep`
    (just written), and the writers' temporaries (`prefix*.tmp`) older than STALE_SECONDS
    (a stopped run's). Other processes may read, write and prune the folder meanwhile: a
    file gone before it is looked at or removed is passed over, and a reader holding one
    open still reads it whole. Never raises: a cache is only a cache."""
    files: list[tuple[int, int, str]] = []  # (last use, size, path)
    total = 0
    stale = time.time() - STALE_SECONDS
    try:
        with os.scandir(folder) as listing:
            for entry in listing:
                name = entry.name
                if not name.startswith(prefix):
                    continue
                try:
                    st = entry.stat()
                except OSError:  # removed by another process since the listing
                    continue
                if name.endswith(suffix):
                    files.append((st.st_mtime_ns, st.st_size, entry.path))
                    total += st.st_size
                elif name.endswith(".tmp") and st.st_mtime < stale:
                    with contextlib.suppress(OSError):
                        os.unlink(entry.path)
    except OSError:
        return
    over = len(files) - most
    if over <= 0 and (most_bytes is None or total <= most_bytes):
        return
    files.sort()  # least recently used first
    for _, size, path in files:
        if over <= 0 and (most_bytes is None or total <= most_bytes):
            break
        if path == str(keep):
            continue
        with contextlib.suppress(OSError):  # removed by another process first
            os.unlink(path)
        over -= 1
        total -= size


_BUILDS: list[bytes] = []


def _builds() -> bytes:
    """What the AST a parse gives depends on, besides the text: a digest, made once."""
    if not _BUILDS:
        h = hashlib.sha256()
        for path in (GRAMMAR_PATH, Path(__file__), Path(A.__file__)):
            h.update(path.read_bytes() + b"\0")
        h.update(sys.version.encode())
        _BUILDS.append(h.digest())
    return _BUILDS[0]


def _resync(text: str, pos: int) -> int | None:
    line_end = text.find("\n", pos)
    if line_end < 0:
        return None
    m = RESYNC.search(text, line_end + 1)
    return m.start() if m else None
