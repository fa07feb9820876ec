"""Names, and where each may be read: the checker's contexts.

Owns `Ctx` (what an expression may read where it stands), `Sym` (a pool or stage as the
rest of the spec sees it), the reading of a bare name (a constant, a context variable, a
session attribute or source column, or a mistake), `row.NAME`, pools and stages looked up
by name, and the notes that say what one can read here.

It may not lower anything but a name: operators, calls, queries and draws are
`expressions`, and it never evaluates anything (`closed`, `constants`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from pooltui.lang import ast as A
from pooltui.lang import ir
from pooltui.lang.exprs import CONTEXT_VARIABLES
from pooltui.lang.ir import Span
from pooltui.lang.sourcefile import shown_columns
from pooltui.lang.words import nearest

if TYPE_CHECKING:
    from pooltui.lang.checker import Checker

# Where each context variable means something (for the error when it is read elsewhere).
VAR_PLACES = {
    "now": "every expression but constants and arrivals",
    "serial": "session statements, hold headers, queue keys, evict keys and a reload's work "
    "and predicate",
    "computed": "hold headers and the statements inside a hold",
    "context": "hold headers and the statements inside a hold",
    "waited": "queue keys",
    "size": "evict keys and the work and predicate of a spill or a reload",
    "age": "evict keys",
    "last": "evict keys",
    "waiting": "queue keys and evict keys",
    "tokens": "a step stage's time",
    "residents": "a step stage's time (residents(STAGE), with parentheses, is a query)",
    "prefills": "a step stage's time",
    "decodes": "a step stage's time",
}


@dataclass(frozen=True, slots=True)
class Ctx:
    """What an expression may read where it stands."""

    where: str  # "a queue key", used in messages
    vars: frozenset[str] = frozenset()
    attrs: bool = False  # session attributes (assigned names, CSV columns)
    draw: str | None = None  # None: draws allowed; else why not
    queries: bool = True
    const: str | None = None  # set: must fold to a constant (the option's name)
    columns: tuple[str, ...] = ()  # the CSV columns of the session
    csv: str | None = None  # the CSV (as written) of the session, for missing columns
    columns_only: bool = False  # arrive in a CSV session: columns but no other attributes
    # Stage families that may be named bare here: the `admit via` stages of the pools of the
    # enclosing holds (the member is the one joined with the hold's pool member).
    joined: frozenset[str] = frozenset()
    in_session: bool = False  # a session's own statement or arrival (not a policy key)
    kinds: tuple[str, ...] = ()  # per column of `columns`: what it holds (Table.kinds)
    lists: bool = False  # a content key's value: a list or string attribute may be read


@dataclass(slots=True)
class Sym:
    """A pool or stage as the rest of the spec sees it."""

    kind: Literal["pool", "stage"]
    name: str
    count: int
    family: bool
    span: Span
    stage_kind: str | None = None  # step | link
    admit_via: str | None = None

    def shown(self) -> str:
        return f"{self.name}[{self.count}]" if self.family else self.name

    def desc(self) -> str:
        if self.kind == "pool":
            return "a pool"
        return f"a {self.stage_kind} stage"


def at(span: Span) -> str:
    return f"{span.line}:{span.col}"


def lookup(ck: Checker, name: str, span: Span, want: str, clause: str) -> Sym | None:
    """A pool or stage by name; `want` is pool | stage | step | link."""
    sym = ck.syms.get(name)
    if sym is None:
        kind = "pool" if want == "pool" else "stage"
        # A step stage is no suggestion where a link is wanted, nor the reverse.
        near = nearest(
            name,
            ck.vocab(
                ("syms", want, len(ck.syms)),
                lambda: (
                    s.name
                    for s in ck.syms.values()
                    if s.kind == kind and want in (kind, s.stage_kind)
                ),
            ),
        )
        hint = f"; did you mean '{near}'?" if near else ""
        noun = {"pool": "pool", "stage": "stage", "step": "step stage", "link": "link stage"}[want]
        ck.err(span, f"unknown {noun} '{name}'{hint}")
        return None
    need = {
        "pool": "a pool",
        "stage": "a stage",
        "step": "a step stage",
        "link": "a link stage",
    }[want]
    good = (
        (want == "pool" and sym.kind == "pool")
        or (want == "stage" and sym.kind == "stage")
        or (want in ("step", "link") and sym.kind == "stage" and sym.stage_kind == want)
    )
    if not good:
        ck.err(
            span,
            f"{clause} needs {need}; '{name}' is {sym.desc()} (declared at {at(sym.span)})",
        )
        return None
    return sym


def readable(ck: Checker, cx: Ctx) -> list[str]:
    key = ("readable", cx.vars, cx.attrs, cx.columns_only, cx.columns,
           len(ck.attr_names), len(ck.const_decls))  # fmt: skip
    cached = ck.readable_notes.get(key)
    if cached is None:
        cached = ck.readable_notes[key] = _readable_uncached(ck, cx)
    return cached


def _readable_uncached(ck: Checker, cx: Ctx) -> list[str]:
    parts: list[str] = []
    if cx.vars:
        parts.append("context variables " + ", ".join(v for v in CONTEXT_VARIABLES if v in cx.vars))
    if cx.attrs:
        names = sorted(ck.attr_names)
        if names:
            shown = ", ".join(names[:12]) + (", …" if len(names) > 12 else "")
            parts.append("session attributes " + shown)
    elif cx.columns_only and cx.columns:
        parts.append("columns " + ", ".join(cx.columns))
    if ck.const_decls:
        names = sorted(ck.const_decls)
        parts.append("constants " + ", ".join(names[:12]) + (", …" if len(names) > 12 else ""))
    if not parts:
        return ["no names can be read here"]
    return ["here one can read: " + "; ".join(parts)]


def name(ck: Checker, name: str, span: Span, cx: Ctx) -> ir.Expr | None:
    if name in ck.const_decls:
        value = ck.const_values.get(name)
        return None if value is None else ir.Num(value, span)
    if cx.const is not None:
        if name in CONTEXT_VARIABLES or name in ck.attr_names or name in ck.syms:
            ck.err(span, f"{must(cx.const)}: '{name}' is not one")
        else:
            consts = ck.vocab(("consts", len(ck.const_decls)), lambda: ck.const_decls)
            near = nearest(name, consts)
            hint = f"; did you mean '{near}'?" if near else ""
            ck.err(span, f"{must(cx.const)}: unknown name '{name}'{hint}")
        return None
    if name in CONTEXT_VARIABLES:
        if name in cx.vars:
            return ir.Var(name, span)
        ck.err(
            span,
            f"'{name}' cannot be read in {cx.where}; it is meaningful in {VAR_PLACES[name]}",
            readable(ck, cx),
        )
        return None
    if cx.columns_only:
        if name in cx.columns:
            return attr(ck, name, span, cx, name)
        if name in ck.attr_names:
            ck.err(
                span,
                f"an arrival cannot read the attribute '{name}': it may read draws, constants "
                "and the columns of its CSV",
            )
            return None
    elif cx.attrs and name in ck.attr_names:
        return attr(ck, name, span, cx, name)
    if name in ck.attr_names and not cx.attrs:
        ck.err(span, f"'{name}' is a session attribute; {cx.where} cannot read session attributes")
        return None
    sym = ck.syms.get(name)
    if sym is not None:
        q = "free" if sym.kind == "pool" else "residents"
        ck.err(span, f"'{name}' is {sym.desc()}; read it through a query, e.g. {q}({name})")
        return None

    def candidates() -> list[str]:
        names = list(cx.vars) + list(ck.const_decls)
        if cx.attrs:
            names += list(ck.attr_names)
        if cx.columns_only:
            names += list(cx.columns)
        return names

    key = ("names", cx.vars, cx.attrs, cx.columns_only, cx.columns,
           len(ck.attr_names), len(ck.const_decls))  # fmt: skip
    near = nearest(name, ck.vocab(key, candidates))
    hint = f"; did you mean '{near}'?" if near else ""
    if cx.csv is not None and (cx.attrs or cx.columns_only):
        ck.err(
            span,
            f"unknown name '{name}': it is not a column of '{cx.csv}' (its columns are "
            f"{', '.join(cx.columns)}) nor an attribute{hint}",
        )
        return None
    ck.err(span, f"unknown name '{name}'{hint}", readable(ck, cx))
    return None


def attr(ck: Checker, name: str, span: Span, cx: Ctx, shown: str) -> ir.Attr | None:
    """An attribute read; a list or string one only as a content key's value."""
    if not cx.lists:
        if cx.in_session:
            kinds = (
                set(cx.kinds[cx.columns.index(name)].split("|"))
                if name in cx.columns and cx.kinds
                else set()
            )
            whose = f"a column of '{cx.csv}'"
        else:
            kinds = ck.column_kinds.get(name, set())
            whose = "a column of a session's source"
        for kind in ("list", "string"):
            if kind in kinds:
                some = "" if kinds == {kind} else " in some rows"
                ck.err(
                    span,
                    f"'{shown}' holds {kind}s{some} ({whose}); a {kind} can only be a "
                    f"content key: content ({shown} : UNITS)",
                )
                return None
    return ir.Attr(name, span)


def field(ck: Checker, e: A.FieldE, cx: Ctx) -> ir.Expr | None:
    """`row.NAME`: a column of the session's source (any name, keywords included)."""
    shown = f"row.{e.name}"
    if e.base != "row":
        ck.err(
            e.span,
            f"'{e.base}.{e.name}' means nothing: only row.NAME, a column of the session's "
            "source, is written with a dot",
        )
        return None
    if cx.const is not None:
        ck.err(e.span, f"{must(cx.const)}: '{shown}' is a column of a session's source")
        return None
    if cx.in_session:
        if cx.csv is None:
            ck.err(
                e.span,
                f"'{shown}' reads a column of the session's source, and this session has "
                'none (session NAME from "FILE" …)',
            )
            return None
        if e.name not in cx.columns:
            near = nearest(e.name, cx.columns)
            hint = f"; did you mean '{near}'?" if near else ""
            ck.err(
                e.name_span,
                f"unknown column '{e.name}': the columns of '{cx.csv}' are "
                f"{shown_columns(cx.columns)}{hint}",
            )
            return None
        return attr(ck, e.name, e.span, cx, shown)
    if not cx.attrs:
        ck.err(
            e.span,
            f"'{shown}' is a column of a session's source; {cx.where} cannot read "
            "session attributes",
        )
        return None
    if e.name not in ck.column_kinds:
        ck.err(e.name_span, f"unknown column '{e.name}': no session's source has it")
        return None
    return attr(ck, e.name, e.span, cx, shown)


def must(what: str) -> str:
    if what.startswith(
        "constant "
    ):  # `const A = now;`: "constant 'A' must be a constant" reads badly
        return f"{what} must be known at compile time"
    return f"{what} must be a constant"
