"""Compile-time evaluation of closed expressions: those that read nothing but numbers.

A constant's value, a content piece's fixed units, and a statement's amount that reads no
variable, attribute, query or draw are evaluated here, so what would stop the run (`1 / 0`,
`inf - inf`, units of -1) is a compile-time error. It evaluates IR only (through
`exprs.compile_expr`) and may not lower AST or read names.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from pooltui.lang import ir
from pooltui.lang.errors import SpecRuntimeError
from pooltui.lang.exprs import Number, compile_expr, to_count, to_units
from pooltui.lang.ir import Span
from pooltui.lang.words import number

if TYPE_CHECKING:
    from pooltui.lang.checker import Checker


def is_closed(x: ir.Expr) -> bool:
    """Whether `x` reads nothing but numbers: its value is known at compile time."""
    stack: list[ir.Expr] = [x]
    while stack:
        e = stack.pop()
        if isinstance(e, ir.Unary):
            stack.append(e.operand)
        elif isinstance(e, ir.Binary):
            stack += (e.left, e.right)
        elif isinstance(e, ir.Cond):
            stack += (e.cond, e.then, e.otherwise)
        elif isinstance(e, ir.Call):
            stack.extend(e.args)
        elif not isinstance(e, ir.Num):
            return False
    return True


def is_constant(x: ir.Expr) -> bool:
    """Whether x is known at compile time (numbers and pure functions of them)."""
    if isinstance(x, ir.Num):
        return True
    if isinstance(x, ir.Unary):
        return is_constant(x.operand)
    if isinstance(x, ir.Binary):
        return is_constant(x.left) and is_constant(x.right)
    if isinstance(x, ir.Cond):
        return is_constant(x.cond) and is_constant(x.then) and is_constant(x.otherwise)
    if isinstance(x, ir.Call):
        return all(is_constant(a) for a in x.args)
    return False


def is_int(v: Number) -> bool:
    return isinstance(v, int) or (isinstance(v, float) and v.is_integer())


def evaluate(ck: Checker, x: ir.Expr, span: Span) -> Number | None:
    try:
        v = compile_expr(x)(None)
    except SpecRuntimeError as exc:
        ck.err(exc.span, exc.message)
        return None
    except (OverflowError, ValueError, TypeError, ZeroDivisionError) as exc:
        ck.err(span, f"cannot evaluate this constant: {exc}")
        return None
    if isinstance(v, float) and math.isnan(v):
        ck.err(span, "this constant is not a number (NaN)")
        return None
    return v


def slot(ck: Checker, x: ir.Expr, kind: str, what: str) -> bool:
    """A statement's expression that reads nothing (no variable, attribute, query or
    draw) is evaluated now, so what would stop the run (`1 / 0`, `inf - inf`, units of
    -1 or inf, a repeat count of inf) is a compile-time error. False when it failed.

    `kind`: units | count (made whole as the simulator does), reserve | seconds |
    work (a number ≥ 0, inf allowed), value (anything)."""
    if not is_closed(x):
        return True
    try:
        v = compile_expr(x)(None)
        if kind == "units":
            to_units(v, x.span, what)
        elif kind == "count":
            to_count(v, x.span, what)
        elif kind != "value" and v < 0:
            if kind == "seconds":
                shown = f"{what} of {number(v)} seconds"
            else:
                shown = f"{what} is {number(v)}"
            raise SpecRuntimeError(f"{shown}, which is negative", x.span)
    except SpecRuntimeError as exc:
        ck.err(exc.span, exc.message)
        return False
    except (ArithmeticError, ValueError) as exc:  # pragma: no cover - the domain is closed
        ck.err(x.span, f"cannot evaluate this expression: {exc}")
        return False
    return True
