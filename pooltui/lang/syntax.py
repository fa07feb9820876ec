"""lark's syntax errors as located, friendly diagnostics: what was expected, in the
language's words, and where the statement or block in question began.

`friendly(exc, text, file, parser)` words one error; the parser (`parser.py`) calls it and
resumes after it. The reserved words and each terminal's name for messages are read from the
built parser (`learn_terminals`). It may not build the AST (`parser._Builder`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # lark is imported when a spec is parsed
    import lark
    from lark.exceptions import UnexpectedCharacters, UnexpectedInput
    from lark.lexer import Token

from pooltui.lang.errors import Diagnostic, escaped
from pooltui.lang.ir import Span
from pooltui.lang.words import nearest

DECL_KEYWORDS = ("seed", "const", "stage", "pool", "session", "check")
POOL_OPTIONS = ("cap", "block", "evict", "preempt", "queue", "admit", "spill", "reload")
STAGE_OPTIONS = ("budget", "seats", "time", "prefill", "serve", "rate", "lanes")
STMT_KEYWORDS = ("hold", "run", "grow", "send", "wait", "repeat", "if")

KEYWORDS: set[str] = set()  # the reserved words, read from the grammar (learn_terminals)
_DECL_T = frozenset(k.upper() for k in DECL_KEYWORDS)
_POOL_T = frozenset(k.upper() for k in POOL_OPTIONS)
_STAGE_T = frozenset(k.upper() for k in STAGE_OPTIONS)
_STMT_T = frozenset(k.upper() for k in STMT_KEYWORDS)
_EXPR_START_T = frozenset(
    {"NUMBER", "INF", "NAME", "DRAW", "LPAR", "MINUS", "PLUS", "BANG", "STRING"}
)
_OPERATOR_T = frozenset(
    {"OROR", "ANDAND", "EQ", "NE", "LE", "GE", "LT", "GT", "PLUS", "MINUS", "STAR", "SLASH",
     "PERCENT", "QMARK", "LSQB", "LPAR"}
)  # fmt: skip
_CLOSERS = ("SEMICOLON", "RPAR", "RSQB", "COLON", "COMMA", "RBRACE")
RESYNC = re.compile(r"^[ \t]*(?:seed|const|stage|pool|session|check)\b", re.M)
_names: dict[str, str] = {}


def tok_span(file: str, t: Token) -> Span:
    return Span(file, t.line or 1, t.column or 1, t.end_line or 1, t.end_column or 1)


def clip(text: str, n: int = 40) -> str:
    text = escaped(text[: n + 1])
    return text if len(text) <= n else text[:n] + "…"


def learn_terminals(parser: lark.Lark) -> None:
    """Name each terminal of the built parser for messages, and note the reserved words."""
    for t in parser.terminals:
        pat = t.pattern
        if t.name == "NAME":
            _names[t.name] = "a name"
        elif t.name == "NUMBER":
            _names[t.name] = "a number"
        elif t.name == "STRING":
            _names[t.name] = "a string"
        elif pat.type == "str":
            _names[t.name] = f"'{pat.value}'"
            if pat.value.isalpha():
                KEYWORDS.add(pat.value)
        else:  # pragma: no cover - every regex terminal is named above
            _names[t.name] = t.name.lower()


def terminal_display(name: str) -> str:
    if name == "$END":
        return "end of file"
    return _names.get(name, name.lower())


def _prefix_tokens(parser: lark.Lark, text: str, end: int) -> list[Token]:
    """The tokens of the declaration before `end` (from the last line that starts one), so
    that an error late in a large spec does not relex all of it. Lines stay exact."""
    start = 0
    for m in RESYNC.finditer(text, 0, end):
        start = m.start()
    pad = "\n" * text.count("\n", 0, start)
    from lark.exceptions import UnexpectedInput

    try:
        return list(parser.lex(pad + text[start:end]))
    except UnexpectedInput:  # pragma: no cover - the parser lexed this prefix already
        return []


def _open_braces(tokens: list[Token]) -> list[Token]:
    stack: list[Token] = []
    for t in tokens:
        if t.type == "LBRACE":
            stack.append(t)
        elif t.type == "RBRACE" and stack:
            stack.pop()
    return stack


def _statement_start(tokens: list[Token]) -> tuple[Token | None, Token | None]:
    """The first two tokens of the statement (or option) the error is in."""
    depth = 0
    i = len(tokens)
    while i > 0:
        t = tokens[i - 1]
        if t.type in ("RPAR", "RSQB"):
            depth += 1
        elif t.type in ("LPAR", "LSQB"):
            if depth == 0:
                pass  # inside an open parenthesis: keep walking back to the statement
            else:
                depth -= 1
        elif t.type in ("SEMICOLON", "LBRACE", "RBRACE") and depth == 0:
            break
        i -= 1
    first = tokens[i] if i < len(tokens) else None
    second = tokens[i + 1] if i + 1 < len(tokens) else None
    return first, second


def _what(first: Token | None, second: Token | None) -> str:
    if first is None:
        return "this"
    k = first.type.lower()
    if k in POOL_OPTIONS or k in STAGE_OPTIONS:
        return "the option"
    if k in STMT_KEYWORDS or k == "arrive":
        return f"the '{k}' statement"
    if k in ("seed", "const", "check"):
        return f"the '{k}' declaration"
    if first.type == "NAME" and second is not None and second.type == "EQUAL":
        return "the assignment"
    return f"'{clip(str(first))}'"


def _describe(expected: set[str]) -> str:
    if {"NAME", "SEED", "LIMIT", "INF"} <= expected:  # after `row.`: any name, keywords too
        return "a column name (row.NAME)"
    if expected >= _DECL_T:
        return "a declaration (seed, const, stage, pool, session or check)"
    if expected >= _POOL_T:
        return (
            "a pool option (cap, block, evict, preempt, queue, admit via, spill, reload via) or '}'"
        )
    if expected >= _STAGE_T:
        return "a stage option (budget, seats, time, prefill, serve, rate, lanes) or '}'"
    if {"HOLD", "RUN"} <= expected:
        return "a statement or '}'"
    for closer in ("SEMICOLON",):
        if closer in expected:
            return terminal_display(closer)
    closers = [c for c in _CLOSERS if c in expected]
    if closers and (expected & _OPERATOR_T):
        return _one_of([terminal_display(c) for c in closers])
    if expected >= _EXPR_START_T:
        return "an expression"
    binary = _OPERATOR_T - {"LPAR", "LSQB"}
    names = sorted(terminal_display(e) for e in expected if e not in binary)
    if not names:
        names = sorted(terminal_display(e) for e in expected)
    return _one_of(names)


def _one_of(names: list[str]) -> str:
    if len(names) == 1:
        return names[0]
    if len(names) > 8:
        return "one of " + ", ".join(names[:8]) + ", …"
    return ", ".join(names[:-1]) + " or " + names[-1]


def _found(t: Token) -> str:
    if t.type == "STRING":
        return clip(str(t))
    return f"'{clip(str(t))}'"


def _character(exc: UnexpectedCharacters, text: str, file: str) -> tuple[Diagnostic, int]:
    """A character no token starts with (and the offset to resume after)."""
    pos = exc.pos_in_stream or 0
    ch = text[pos] if 0 <= pos < len(text) else ""
    span = Span(file, exc.line, exc.column, exc.line, exc.column + 1)
    if ch == '"':
        msg = "unterminated string: a string ends with '\"' on the same line"
    elif ch == "\ufffd":
        msg = "unexpected character '\\ufffd' (the spec is not valid UTF-8 here)"
    else:
        msg = f"unexpected character '{clip(ch)}'"
    return Diagnostic(span, msg), pos


def _end_span(text: str, file: str) -> Span:
    """Just past the last thing written (rustc does too), not at a blank last line."""
    body = text.rstrip()
    end_line = body.count("\n") + 1
    end_col = len(body) - (body.rfind("\n") + 1) + 1
    return Span(file, end_line, end_col, end_line, end_col + 1)


def friendly(
    exc: UnexpectedInput, text: str, file: str, parser: lark.Lark
) -> tuple[Diagnostic, int | None]:
    """A lark exception as a located Diagnostic, and the offset to resume after."""
    from lark.exceptions import UnexpectedCharacters, UnexpectedToken

    if isinstance(exc, UnexpectedCharacters):
        return _character(exc, text, file)
    if isinstance(exc, UnexpectedToken) and exc.token.type != "$END":
        tok = exc.token
        pos = tok.start_pos if tok.start_pos is not None else 0
        expected = set(exc.expected)
        tokens = _prefix_tokens(parser, text, pos)
        span = tok_span(file, tok)
        found = _found(tok)
        kind = tok.type
        word = str(tok)
        if expected >= _POOL_T or expected >= _STAGE_T:
            pool = expected >= _POOL_T
            valid = POOL_OPTIONS if pool else STAGE_OPTIONS
            what = "pool" if pool else "stage"
            listing = (
                "cap, block, evict, preempt, queue, admit via, spill, reload via"
                if pool
                else (
                    "budget, seats, time, prefill, serve (step stages); rate, lanes (link stages)"
                )
            )
            if kind == "NAME":
                near = nearest(word, valid)
                hint = f" (did you mean '{near}'?)" if near else ""
                return Diagnostic(
                    span, f"unknown {what} option {found}{hint}; the options are {listing}"
                ), pos
            if kind.lower() in POOL_OPTIONS + STAGE_OPTIONS:
                return Diagnostic(
                    span, f"{found} is not a {what} option; the options are {listing}"
                ), pos
            opened = _open_braces(tokens)
            if kind in _DECL_T and opened:
                o = opened[-1]
                return Diagnostic(
                    span,
                    f"expected '}}' before {found}: the block opened at {o.line}:{o.column} is not closed",
                ), pos
        if kind in _DECL_T and "RBRACE" in expected:
            opened = _open_braces(tokens)
            if opened:
                o = opened[-1]
                return Diagnostic(
                    span,
                    f"expected '}}' before {found}: the block opened at {o.line}:{o.column} is not closed",
                ), pos
        if kind == "RBRACE" and expected >= _DECL_T:
            return Diagnostic(span, "unexpected '}': no block is open here"), pos
        if kind == "NAME" and expected >= _DECL_T:
            near = nearest(word, DECL_KEYWORDS)
            hint = f" (did you mean '{near}'?)" if near else ""
            return Diagnostic(
                span,
                f"expected a declaration (seed, const, stage, pool, session or check), found {found}{hint}",
            ), pos
        if kind == "ARRIVE" and {"HOLD", "RUN"} <= expected:
            msg = "arrive belongs at the top of a session's body, not inside a block"
            return Diagnostic(span, msg), pos
        if "NAME" in expected and kind.lower() in KEYWORDS:
            msg = (
                f"expected {_describe(expected)}, found {found} (a keyword: keywords are reserved)"
            )
            return Diagnostic(span, msg), pos
        if "SEMICOLON" in expected:
            first, second = _statement_start(tokens)
            msg = f"expected ';' after {_what(first, second)}, found {found}"
            if tokens and tokens[-1].end_line is not None and tokens[-1].end_line < (tok.line or 0):
                prev = tokens[-1]
                ec = prev.end_column or 1
                span = Span(file, prev.end_line or 1, ec, prev.end_line or 1, ec + 1)
            if (
                first is not None
                and first.type == "NAME"
                and second is None
                and "EQUAL" in expected
            ):
                near = nearest(str(first), (*STMT_KEYWORDS, "arrive"))
                if near:
                    msg += f" (did you mean '{near}'?)"
            return Diagnostic(span, msg), pos
        first, _second = _statement_start(tokens)
        if first is not None and first.type in ("HOLD", "GROW", "SEND"):
            # LALR shares the state after a pool/stage name between statements; only a
            # run goes on with prefill/decode.
            expected -= {"PREFILL", "DECODE"}
        msg = f"expected {_describe(expected)}, found {found}"
        if expected == {"EQUAL"} and tokens and tokens[-1].type == "NAME":
            near = nearest(str(tokens[-1]), (*STMT_KEYWORDS, "arrive"))
            if near:
                msg += f" (did you mean '{near}'?)"
        return Diagnostic(span, msg), pos
    # the end of the input
    expected = set(getattr(exc, "expected", None) or ())
    span = _end_span(text, file)
    opened = _open_braces(_prefix_tokens(parser, text, len(text)))
    if opened:
        o = opened[-1]
        msg = f"unexpected end of file: a '}}' is missing (the block opened at {o.line}:{o.column})"
    elif expected:
        msg = f"unexpected end of file: expected {_describe(expected)}"
    else:
        msg = "unexpected end of file"
    return Diagnostic(span, msg), None


def friendly_expression(exc: UnexpectedInput, text: str, file: str, what: str) -> Diagnostic:
    """A syntax error in an expression parsed alone (`what`: "a watch", "a breakpoint
    condition"), in an expression's words: an operator, a ')', its end. What the parser
    accepts there, not the LALR state's merged lookaheads, which offer a spec's ';' or ','
    after any expression."""
    from lark.exceptions import UnexpectedCharacters, UnexpectedToken

    if isinstance(exc, UnexpectedCharacters):
        return _character(exc, text, file)[0]
    if not isinstance(exc, UnexpectedToken):  # pragma: no cover - LALR raises only these two
        return Diagnostic(_end_span(text, file), f"{what} does not parse")
    the = "the " + what.split(" ", 1)[-1]
    try:
        expected = set(exc.interactive_parser.accepts())  # type: ignore[no-untyped-call]
    except Exception:  # no interactive parser: lark's own set
        expected = set(exc.expected)
    end = "$END" in expected
    expected.discard("$END")
    closers = [terminal_display(c) for c in _CLOSERS if c in expected]
    if closers:  # an operator would do too, but the bracket is what is missing
        wanted = _one_of(closers)
    elif end:
        wanted = f"an operator or the end of {the}" if expected else f"the end of {the}"
    elif expected >= _EXPR_START_T - {"STRING"}:
        wanted = "an expression"
    else:
        wanted = _describe(expected)
    tok = exc.token
    if tok.type == "$END":
        return Diagnostic(_end_span(text, file), f"unexpected end of {the}: expected {wanted}")
    msg = f"expected {wanted}, found {_found(tok)}"
    if "NAME" in expected and tok.type.lower() in KEYWORDS:
        msg += " (a keyword: keywords are reserved)"
    return Diagnostic(tok_span(file, tok), msg)
