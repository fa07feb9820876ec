"""The IR: what a checked spec means, as frozen dataclasses.

The checker lowers the AST to these. The simulator reads only these (and the closures
`pooltui.lang.exprs.compile_expr` makes from `Expr` nodes). Every node keeps the `Span` of
the source it came from, so a runtime error or an event can point back at the spec.

Names follow the language: a pool, a stage, a session class, a hold, a run.
"""

from __future__ import annotations

import math
from dataclasses import field
from typing import Any, Literal

from pooltui.lang.records import record

INF = math.inf
# A whole number stays an int (it prints as one); `float` alone would let the compiled build
# (mypyc) store it as a double.
Number = int | float


@record(frozen=True)
class Span:
    """A source range: 1-based lines and columns, end exclusive (end_col is one past the last)."""

    file: str
    line: int
    col: int
    end_line: int
    end_col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


NO_SPAN = Span("<builtin>", 0, 0, 0, 0)


# --------------------------------------------------------------------------- expressions
# Constants are folded by the checker: a `const` name never reaches the IR, only its Num.


@record(frozen=True)
class Num:
    value: float | int
    span: Span = NO_SPAN


@record(frozen=True)
class Var:
    """A context variable: now serial computed context waited size age last waiting
    tokens residents prefills decodes."""

    name: str
    span: Span = NO_SPAN


@record(frozen=True)
class Attr:
    """A session attribute (assigned with `NAME = EXPR;`, or a column of the session's source,
    read bare or as `row.NAME`). A source column may hold strings or lists; the checker lets
    only a content key read those (`ContentPiece`)."""

    name: str
    span: Span = NO_SPAN


@record(frozen=True)
class Unary:
    op: Literal["-", "!", "+"]
    operand: Expr
    span: Span = NO_SPAN


@record(frozen=True)
class Binary:
    op: Literal["+", "-", "*", "/", "%", "<", "<=", ">", ">=", "==", "!=", "&&", "||"]
    left: Expr
    right: Expr
    span: Span = NO_SPAN


@record(frozen=True)
class Cond:
    cond: Expr
    then: Expr
    otherwise: Expr
    span: Span = NO_SPAN


@record(frozen=True)
class Call:
    """A pure function: min max abs floor ceil round log sqrt."""

    fn: str
    args: tuple[Expr, ...]
    span: Span = NO_SPAN


@record(frozen=True)
class Draw:
    """`draw DIST(args)`: uniform real exponential normal lognormal bernoulli poisson choice."""

    dist: str
    args: tuple[Expr, ...]
    span: Span = NO_SPAN


@record(frozen=True)
class Ref:
    """A pool or stage named in a spec, with the member index when it is a family.

    `index` is None when the name is used bare: a family of one, or a name that the
    checker resolved to be shared (N–1 join). A stage family named bare in a `run`, or in a
    stage query inside a hold (header or body), is the `admit via` stage of an enclosing
    hold's pool: it means the member joined with that hold's pool member."""

    kind: Literal["pool", "stage"]
    name: str
    index: Expr | None = None
    span: Span = NO_SPAN


@record(frozen=True)
class Query:
    """cap allocated cached free queued (pool) | budget_left residents seats_left (stage)."""

    name: str
    target: Ref
    span: Span = NO_SPAN


@record(frozen=True)
class ArgQuery:
    """argmin / argmax over the members of a pool (or stage) family: the index where
    QUERY is least / greatest, ties to the lowest index."""

    fn: Literal["argmin", "argmax"]
    family: Ref
    query: str
    span: Span = NO_SPAN


Expr = Num | Var | Attr | Unary | Binary | Cond | Call | Draw | Query | ArgQuery


@record(frozen=True)
class Str:
    """A string literal: only a content piece's key may be one (`content ("sys" : 512)`)."""

    value: str
    span: Span = NO_SPAN


@record(frozen=True)
class CondKey:
    """`C ? A : B` as a content piece's key: it chooses a key (a number, a string literal, a
    source's list or string attribute, or another conditional), not a number."""

    cond: Expr
    then: Key
    otherwise: Key
    span: Span = NO_SPAN


# A content piece's key (`ContentPiece.key`).
Key = Expr | Str | CondKey


# --------------------------------------------------------------------------- stages


@record(frozen=True)
class CStage:
    """A step stage (an engine that runs iterations) or a link stage (a FIFO channel)."""

    name: str
    kind: Literal["step", "link"]
    count: int = 1  # family size; 1 for a plain stage
    family: bool = False  # declared with [N]
    # step options
    budget: Number = INF
    seats: Number = INF
    time: Expr | None = None  # None: 1 second per iteration
    prefill: Literal["chunked", "whole"] = "chunked"
    exclusive_prefill: bool = False
    # link options
    rate: Number = 1.0
    lanes: int = 1
    span: Span = NO_SPAN


# --------------------------------------------------------------------------- pools


@record(frozen=True)
class EvictLru:
    span: Span = NO_SPAN


@record(frozen=True)
class EvictBy:
    keys: tuple[Expr, ...]
    span: Span = NO_SPAN


@record(frozen=True)
class QueueFifo:
    span: Span = NO_SPAN


@record(frozen=True)
class QueueBy:
    keys: tuple[Expr, ...]
    span: Span = NO_SPAN


@record(frozen=True)
class CSpill:
    tier: str  # a pool (family joined member for member, or shared)
    via: str  # a link stage (family joined member for member, or shared)
    work: Expr
    when: Expr
    span: Span = NO_SPAN


@record(frozen=True)
class CReload:
    """`reload via LINK (WORK) [when (PRED)];` (content-and-reload.md §3): at an attempt,
    the continuation of a hold's content past its hit in this pool is looked for in `tiers`
    (the spill chain, in order); the loadable units come back over `via` as one job of
    `work` before the hold runs. `work` and `when` read `size` (the loadable units), `now`,
    `serial`, the hold's session's attributes, constants and queries; `when` None: always."""

    via: str  # a link stage (family joined member for member, or shared)
    work: Expr
    when: Expr | None
    # The pools looked in, in order: this pool's spill tier, then that pool's tier, … up to a
    # pool that does not spill, or one already on the chain (a spill cycle is walked once).
    tiers: tuple[str, ...] = ()
    span: Span = NO_SPAN


@record(frozen=True)
class CPool:
    """A pool, field for field as the Pool reference names it, plus its family size."""

    name: str
    cap: Number = INF  # units; an int when finite
    block: int | None = None  # None: unit granularity
    evict: EvictLru | EvictBy = field(default_factory=EvictLru)
    preempt: Literal["none", "lifo"] = "none"
    queue: QueueFifo | QueueBy = field(default_factory=QueueFifo)
    spill: CSpill | None = None
    admit_via: str | None = None
    count: int = 1
    family: bool = False
    span: Span = NO_SPAN
    reload: CReload | None = None  # read back from the spill chain (content-and-reload.md §3)


# --------------------------------------------------------------------------- statements


@record(frozen=True)
class SetAttr:
    name: str
    value: Expr
    span: Span = NO_SPAN


@record(frozen=True)
class ContentPiece:
    """`KEY : UNITS` in a hold's `content (…)`: UNITS units of content named KEY.

    KEY is a string literal, an expression whose value is a number, a string (a source's
    attribute) or a list of them (one piece per element, in order), or a conditional choosing
    one of those. Evaluated once, at the hold's first attempt:
    `pooltui.lang.content.compile_content`."""

    key: Key
    units: Expr
    span: Span = NO_SPAN


@record(frozen=True)
class Hold:
    pool: Ref
    units: Expr
    need: Expr | None
    reserve: Expr | None
    body: tuple[Stmt, ...]
    span: Span = NO_SPAN
    # `content (PIECE, …)`: the pieces laid end to end from unit 0; past them (and for a hold
    # without the clause, all of it) the session's private stream.
    content: tuple[ContentPiece, ...] = ()


@record(frozen=True)
class Run:
    stage: Ref
    kind: Literal["prefill", "decode"]
    amount: Expr
    span: Span = NO_SPAN


@record(frozen=True)
class Grow:
    pool: str  # the innermost enclosing hold on this pool (any member)
    amount: Expr
    span: Span = NO_SPAN


@record(frozen=True)
class Send:
    link: Ref
    work: Expr
    span: Span = NO_SPAN


@record(frozen=True)
class Wait:
    seconds: Expr
    span: Span = NO_SPAN


@record(frozen=True)
class Repeat:
    count: Expr
    body: tuple[Stmt, ...]
    span: Span = NO_SPAN


@record(frozen=True)
class If:
    cond: Expr
    then: tuple[Stmt, ...]
    otherwise: tuple[Stmt, ...]
    span: Span = NO_SPAN


Stmt = SetAttr | Hold | Run | Grow | Send | Wait | Repeat | If


# --------------------------------------------------------------------------- sessions


@record(frozen=True)
class ArriveAt:
    """`arrive at (EXPR)`: the arrival time of each session, in seconds."""

    at: Expr
    span: Span = NO_SPAN


@record(frozen=True)
class ArriveEvery:
    """`arrive every (EXPR)`: the gap before each session (the first arrives after one gap)."""

    gap: Expr
    span: Span = NO_SPAN


# A value read from a source: a number, a string, or a list of numbers and strings (a tuple).
# Lists and strings exist only as source attributes; only a content key may use them.
Value = int | float | str | tuple[int | float | str, ...]


@record(frozen=True)
class CSource:
    """The rows of `from "FILE.csv" [limit N]` or `from "FILE.jsonl" [limit N]`, read and
    checked at compile time.

    A CSV cell is a number (date-times become seconds since the first row's date-time in the
    same column) or, when it starts with `[`, a JSON list. A JSON Lines value is a number, a
    string or a list of numbers and strings. Each row value is a `Value` (typed Any here so
    the simulator's number-typed attributes take rows as they are)."""

    path: str  # as resolved (absolute)
    written: str  # as written in the spec
    limit: int | None
    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    span: Span = NO_SPAN
    format: Literal["csv", "jsonl"] = "csv"
    # Per column, what its rows hold: "number", "string", "list", or several joined by "|"
    # in that order ("number|list"). Empty for a source built by hand: all numbers.
    kinds: tuple[str, ...] = ()

    def kind(self, column: str) -> str:
        if column in self.columns and self.kinds:
            return self.kinds[self.columns.index(column)]
        return "number"


@record(frozen=True)
class CSession:
    name: str
    count: int  # sessions of this class (the row count for a CSV source)
    source: CSource | None
    arrive: ArriveAt | ArriveEvery
    body: tuple[Stmt, ...]
    family: bool = False  # declared with [N]
    span: Span = NO_SPAN


# --------------------------------------------------------------------------- checks, program


@record(frozen=True)
class CCheck:
    label: str
    cond: Expr
    span: Span = NO_SPAN


@record(frozen=True)
class Program:
    """A whole checked spec. Tuples keep declaration order, which the simulator uses
    (pools served in declaration order, sessions arriving at one instant by declaration)."""

    file: str
    source: str  # the spec's text, for the debugger's Source panel
    seed: int
    stages: tuple[CStage, ...]
    pools: tuple[CPool, ...]
    sessions: tuple[CSession, ...]
    checks: tuple[CCheck, ...]
    consts: tuple[tuple[str, float | int], ...] = ()
    header_comment: str = ""  # the comment the spec opens with (what to watch)

    def pool(self, name: str) -> CPool:
        for p in self.pools:
            if p.name == name:
                return p
        raise KeyError(name)

    def stage(self, name: str) -> CStage:
        for s in self.stages:
            if s.name == name:
                return s
        raise KeyError(name)
