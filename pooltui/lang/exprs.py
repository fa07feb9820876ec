"""Expressions compile to closures over the IR: spec text is data, never `eval`-ed.

`compile_expr(expr)` returns `fn(env) -> number`. The simulator supplies `env`, an object
that follows `Env`: context variables are attributes of it (`env.now`, `env.computed`, ...),
session attributes live in `env.attrs`, and queries, arg-queries and draws are methods.
Booleans are 1 and 0. Errors of the spec found while evaluating (division by zero, an
attribute read before it is set, `inf - inf`) raise `SpecRuntimeError` located at the
expression.

The value domain is closed: an integer is at most `MAX_INT` (2^53) in size (a larger
result of `+ - *` becomes a float, so integers never grow without bound), a float is
finite or ±inf, and NaN never appears (an operation that would give it is an error).
Where a value becomes an integer (units, a repeat count), `to_units` and `to_count` check
it and raise a located error; nothing downstream meets an OverflowError.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any, Final, Protocol

from pooltui.lang.errors import SpecRuntimeError
from pooltui.lang.ir import (
    ArgQuery,
    Attr,
    Binary,
    Call,
    Cond,
    Draw,
    Expr,
    Num,
    Query,
    Unary,
    Var,
)
from pooltui.lang.words import number

Number = int | float
Compiled = Callable[[Any], Number]

# The largest integer a spec works with: literals, whole-number options and unit counts.
# Every integer up to it is exact as a float too, so `16.0` and `16` stay the same number.
MAX_INT: Final = 2**53

CONTEXT_VARIABLES = (
    "now",
    "serial",
    "computed",
    "context",
    "waited",
    "size",
    "age",
    "last",
    "waiting",
    "tokens",
    "residents",
    "prefills",
    "decodes",
)
POOL_QUERIES = ("cap", "allocated", "cached", "free", "queued")
STAGE_QUERIES = ("budget_left", "residents", "seats_left")
FUNCTIONS = {"min": (1, None), "max": (1, None), "abs": (1, 1), "floor": (1, 1),
             "ceil": (1, 1), "round": (1, 1), "log": (1, 1), "sqrt": (1, 1)}  # fmt: skip
DISTRIBUTIONS = {"uniform": (2, 2), "real": (2, 2), "exponential": (1, 1), "normal": (2, 2),
                 "lognormal": (2, 2), "bernoulli": (1, 1), "poisson": (1, 1),
                 "choice": (1, None)}  # fmt: skip


class Env(Protocol):
    """What a compiled expression reads. Context variables are plain attributes."""

    attrs: dict[str, Number]

    def query(self, name: str, kind: str, target: str, index: int | None) -> Number: ...

    def argquery(self, fn: str, kind: str, family: str, query: str) -> int: ...

    def draw(self, dist: str, args: list[Number]) -> Number: ...


def normal(x: Number) -> Number:
    """Integer where whole (so `16.0` prints as `16` and indexes work)."""
    if isinstance(x, float) and x.is_integer() and abs(x) < 2**53:
        return int(x)
    return x


# floor, ceil and round keep ±inf, and a float too large to have a fraction stays a
# float (math.floor(1e300) would be a 300-digit integer).
def _round_half_away(x: Number) -> Number:
    if isinstance(x, float) and not abs(x) < MAX_INT:
        return x
    return math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5)


def _floor(x: Number) -> Number:
    return x if isinstance(x, float) and not abs(x) < MAX_INT else math.floor(x)


def _ceil(x: Number) -> Number:
    return x if isinstance(x, float) and not abs(x) < MAX_INT else math.ceil(x)


def _big(r: int) -> float:
    try:
        return float(r)
    except OverflowError:
        return math.inf if r > 0 else -math.inf


def to_units(value: Number, span: Any, what: str) -> int:
    """A number of units: rounded up (tolerance 1e-9); negative, inf, NaN or more than
    MAX_INT is a located runtime error. (`span` is the expression's Span.)"""
    if value != value:  # NaN
        raise SpecRuntimeError(f"{what} is not a number (NaN)", span)
    if value < 0:
        raise SpecRuntimeError(f"{what} is {number(value)}, which is negative", span)
    if value > MAX_INT:  # inf too
        raise SpecRuntimeError(
            f"{what} is {number(value)}, not a number of units (at most 2^53)", span
        )
    return math.ceil(value - 1e-9)


def to_count(value: Number, span: Any, what: str) -> int:
    """How many times (a repeat): ⌊value⌋ (tolerance 1e-9), 0 when below 1; ±inf, NaN or
    more than MAX_INT is a located runtime error."""
    if value != value:
        raise SpecRuntimeError(f"{what} is not a number (NaN)", span)
    if value > MAX_INT or value == -math.inf:
        raise SpecRuntimeError(
            f"{what} is {number(value)}, not a whole number of times (at most 2^53)", span
        )
    if value < 1:
        return 0
    return math.floor(value + 1e-9)


def _nan(a: Number, op: str, b: Number, span: Any) -> SpecRuntimeError:
    return SpecRuntimeError(f"{number(a)} {op} {number(b)} is not a number", span)


_ARITH = ("+", "-", "*")
_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}


def compile_expr(expr: Expr) -> Compiled:
    """The closure that evaluates `expr` against an `Env`."""
    if isinstance(expr, Num):
        value = normal(expr.value)
        return lambda env: value
    if isinstance(expr, Var):
        return operator.attrgetter(expr.name)
    if isinstance(expr, Attr):
        return _compile_attr(expr)
    if isinstance(expr, Unary):
        inner = compile_expr(expr.operand)
        if expr.op == "-":
            return lambda env: -inner(env)
        if expr.op == "!":
            return lambda env: 0 if inner(env) else 1
        return inner
    if isinstance(expr, Binary):
        return _compile_binary(expr)
    if isinstance(expr, Cond):
        c, a, b = compile_expr(expr.cond), compile_expr(expr.then), compile_expr(expr.otherwise)
        return lambda env: a(env) if c(env) else b(env)
    if isinstance(expr, Call):
        return _compile_call(expr)
    if isinstance(expr, Draw):
        args = [compile_expr(a) for a in expr.args]
        dist = expr.dist
        span = expr.span

        def draw(env: Any) -> Number:
            values = [f(env) for f in args]
            try:
                v = env.draw(dist, values)
            except (ValueError, OverflowError) as exc:
                raise SpecRuntimeError(f"draw {dist}: {exc}", span) from None
            if v.__class__ is int:
                if v > MAX_INT or v < -MAX_INT:
                    return _big(v)
            elif v != v:
                raise SpecRuntimeError(f"draw {dist} gave no number (NaN)", span)
            return v  # type: ignore[no-any-return]

        return draw
    if isinstance(expr, Query):
        return _compile_query(expr)
    if isinstance(expr, ArgQuery):
        fn, kind, family, query = expr.fn, expr.family.kind, expr.family.name, expr.query
        return lambda env: env.argquery(fn, kind, family, query)
    raise TypeError(f"not an expression: {expr!r}")  # pragma: no cover


def _compile_attr(expr: Attr) -> Compiled:
    name, span = expr.name, expr.span

    def attr(env: Any) -> Number:
        try:
            v = env.attrs[name]
        except KeyError:
            raise SpecRuntimeError(f"attribute '{name}' is read before it is set", span) from None
        if isinstance(v, int | float):
            return v
        # A source's list or string: only a content key may use one (pooltui.lang.content).
        kind = "a string" if isinstance(v, str) else "a list"
        raise SpecRuntimeError(
            f"attribute '{name}' is {kind} here; {kind} can only be a content key", span
        )

    return attr


def _compile_binary(expr: Binary) -> Compiled:
    left, right, op, span = compile_expr(expr.left), compile_expr(expr.right), expr.op, expr.span
    if op in _ARITH:
        # One closure per operator, the operator inline: these run on every evaluation.
        lo, hi = -MAX_INT, MAX_INT
        if op == "+":

            def add(env: Any) -> Number:
                a, b = left(env), right(env)
                r = a + b
                if r.__class__ is int:
                    return r if lo <= r <= hi else _big(r)
                if r != r:
                    raise _nan(a, op, b, span)
                return r

            return add
        if op == "-":

            def sub(env: Any) -> Number:
                a, b = left(env), right(env)
                r = a - b
                if r.__class__ is int:
                    return r if lo <= r <= hi else _big(r)
                if r != r:
                    raise _nan(a, op, b, span)
                return r

            return sub

        def mul(env: Any) -> Number:
            a, b = left(env), right(env)
            r = a * b
            if r.__class__ is int:
                return r if lo <= r <= hi else _big(r)
            if r != r:
                raise _nan(a, op, b, span)
            return r

        return mul
    if op in _COMPARE:
        g = _COMPARE[op]
        return lambda env: 1 if g(left(env), right(env)) else 0
    if op == "&&":
        return lambda env: 1 if (left(env) and right(env)) else 0
    if op == "||":
        return lambda env: 1 if (left(env) or right(env)) else 0
    # A zero divisor is the culprit: the error points at it, not at the whole operation.
    divisor = expr.right.span
    if op == "/":

        def div(env: Any) -> Number:
            d = right(env)
            if d == 0:
                raise SpecRuntimeError("division by zero", divisor)
            n = left(env)
            r = n / d
            if r != r:
                raise _nan(n, "/", d, span)
            return normal(r)

        return div
    if op == "%":

        def mod(env: Any) -> Number:
            d = right(env)
            if d == 0:
                raise SpecRuntimeError("modulo by zero", divisor)
            n = left(env)
            r = n % d
            if r != r:
                raise _nan(n, "%", d, span)
            return normal(r)

        return mod
    raise TypeError(f"unknown operator {op}")  # pragma: no cover


def _compile_call(expr: Call) -> Compiled:
    args = [compile_expr(a) for a in expr.args]
    fn, span = expr.fn, expr.span
    if fn in ("min", "max"):
        pick = min if fn == "min" else max
        if len(args) == 2:
            a, b = args
            return lambda env: pick(a(env), b(env))
        return lambda env: pick(f(env) for f in args)
    (a,) = args
    if fn == "abs":
        return lambda env: abs(a(env))
    if fn == "floor":
        return lambda env: _floor(a(env))
    if fn == "ceil":
        return lambda env: _ceil(a(env))
    if fn == "round":
        return lambda env: _round_half_away(a(env))
    if fn == "log":

        def log(env: Any) -> Number:
            x = a(env)
            if x <= 0:
                raise SpecRuntimeError(f"log of {normal(x)}, which is not positive", span)
            return math.log(x)

        return log
    if fn == "sqrt":

        def sqrt(env: Any) -> Number:
            x = a(env)
            if x < 0:
                raise SpecRuntimeError(f"sqrt of {normal(x)}, which is negative", span)
            return normal(math.sqrt(x))

        return sqrt
    raise TypeError(f"unknown function {fn}")  # pragma: no cover


def _compile_query(expr: Query) -> Compiled:
    name, kind, target, span = expr.name, expr.target.kind, expr.target.name, expr.span
    index = None if expr.target.index is None else compile_expr(expr.target.index)

    def query(env: Any) -> Number:
        i = None if index is None else index(env)
        if i is not None and not float(i).is_integer():
            raise SpecRuntimeError(f"member index {i} of {target} is not a whole number", span)
        try:
            return env.query(name, kind, target, None if i is None else int(i))  # type: ignore[no-any-return]
        except IndexError as exc:
            raise SpecRuntimeError(str(exc), span) from None

    return query
