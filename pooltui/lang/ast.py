"""The AST: what the parser read, with a span on every node.

Built bottom-up by the LALR parser's callbacks (no recursion), so any input depth is safe to
build; `depth` (1 for a leaf) lets the recursive checker refuse too-deep nesting first.
"""

from __future__ import annotations

from dataclasses import field

from pooltui.lang.ir import Span
from pooltui.lang.records import record

# --------------------------------------------------------------------------- expressions


@record
class Number:
    value: int | float
    span: Span
    depth: int = 1


@record
class Name:
    name: str
    span: Span
    depth: int = 1


@record
class Index:
    """`NAME[EXPR]`: a member of a pool or stage family."""

    name: str
    name_span: Span
    index: Expr
    span: Span
    depth: int = 1


@record
class CallE:
    name: str
    name_span: Span
    args: list[Expr]
    span: Span
    depth: int = 1


@record
class DrawE:
    dist: str
    dist_span: Span
    args: list[Expr]
    span: Span
    depth: int = 1


@record
class UnaryE:
    op: str
    operand: Expr
    span: Span
    depth: int = 1


@record
class BinaryE:
    op: str
    left: Expr
    right: Expr
    span: Span
    depth: int = 1


@record
class CondE:
    cond: Expr
    then: Expr
    otherwise: Expr
    span: Span
    depth: int = 1


@record
class FieldE:
    """`row.NAME`: a column of the session's source, keywords included (`row.time`)."""

    base: str  # `row`, or whatever was written before the dot (the checker refuses others)
    base_span: Span
    name: str
    name_span: Span
    span: Span
    depth: int = 1


@record
class StringE:
    """A string literal: parsed as an expression, but only a content piece's key (or a branch
    of a conditional key) may be one; the checker refuses it anywhere else."""

    value: str
    span: Span
    depth: int = 1


Expr = Number | Name | Index | CallE | DrawE | UnaryE | BinaryE | CondE | FieldE | StringE


def children(e: Expr) -> list[Expr]:
    if isinstance(e, Index):
        return [e.index]
    if isinstance(e, CallE | DrawE):
        return list(e.args)
    if isinstance(e, UnaryE):
        return [e.operand]
    if isinstance(e, BinaryE):
        return [e.left, e.right]
    if isinstance(e, CondE):
        return [e.cond, e.then, e.otherwise]
    return []


# --------------------------------------------------------------------------- statements


@record
class RefA:
    name: str
    name_span: Span
    index: Expr | None
    span: Span
    depth: int = 1


@record
class Assign:
    name: str
    name_span: Span
    value: Expr
    span: Span
    depth: int = 1


@record
class PieceA:
    """`KEY : UNITS` in `content (…)`."""

    key: Expr
    units: Expr
    span: Span
    depth: int = 1


@record
class HoldS:
    ref: RefA
    units: Expr
    need: Expr | None
    reserve: Expr | None
    body: list[Stmt]
    span: Span
    depth: int = 1
    content: list[PieceA] | None = None  # `content (…)`; None when the hold has no clause
    content_span: Span | None = None  # the `content` keyword


@record
class RunS:
    ref: RefA
    kind: str
    amount: Expr
    span: Span
    depth: int = 1


@record
class GrowS:
    ref: RefA
    amount: Expr
    span: Span
    depth: int = 1


@record
class SendS:
    ref: RefA
    work: Expr
    span: Span
    depth: int = 1


@record
class WaitS:
    seconds: Expr
    span: Span
    depth: int = 1


@record
class RepeatS:
    count: Expr
    body: list[Stmt]
    span: Span
    depth: int = 1


@record
class IfS:
    cond: Expr
    then: list[Stmt]
    otherwise: list[Stmt]
    span: Span
    depth: int = 1


@record
class Arrive:
    kind: str  # "at" | "every"
    expr: Expr
    span: Span
    depth: int = 1


Stmt = Assign | HoldS | RunS | GrowS | SendS | WaitS | RepeatS | IfS


# --------------------------------------------------------------------------- declarations


@record
class Option:
    """One option of a pool or a stage; which fields are set depends on `key`."""

    # cap block evict preempt queue admit spill reload; budget seats time rate lanes prefill serve
    key: str
    span: Span
    key_span: Span
    expr: Expr | None = None  # cap block budget seats time rate lanes
    word: str | None = None  # lru fifo none lifo chunked whole
    keys: list[Expr] | None = None  # evict by / queue by
    # admit via S; spill T via L; reload via L
    names: list[tuple[str, Span]] = field(default_factory=list)
    work: Expr | None = None  # spill, reload
    when: Expr | None = None  # spill; reload (None when it has no `when`)


@record
class SeedD:
    expr: Expr
    span: Span


@record
class ConstD:
    name: str
    name_span: Span
    expr: Expr
    span: Span


@record
class CheckD:
    label: str
    expr: Expr
    span: Span


@record
class StageD:
    name: str
    name_span: Span
    count: Expr | None
    kind: str
    options: list[Option]
    span: Span


@record
class PoolD:
    name: str
    name_span: Span
    count: Expr | None
    options: list[Option]
    span: Span


@record
class SessionD:
    name: str
    name_span: Span
    count: Expr | None
    path: str | None  # `from "FILE.csv"`
    path_span: Span | None
    limit: Expr | None
    items: list[Stmt | Arrive]
    span: Span


Decl = SeedD | ConstD | CheckD | StageD | PoolD | SessionD
