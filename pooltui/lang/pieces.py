"""Content pieces: a hold's `content (KEY : UNITS, …)`.

Owns what a piece may read (a hold header's names but `computed`, and no draws), its key
(a string literal, a list or string attribute, or a conditional choosing one) and its fixed
units checked at compile time. (`content.py` is the simulator's side: it compiles the
pieces this module makes.) It may not check the hold itself (`sessions`).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING

from pooltui.lang import ast as A
from pooltui.lang import closed, expressions, ir, names
from pooltui.lang.names import Ctx
from pooltui.lang.words import number

if TYPE_CHECKING:
    from pooltui.lang.checker import Checker


def content(
    ck: Checker, pieces: list[A.PieceA] | None, header: Ctx
) -> tuple[ir.ContentPiece, ...] | None:
    """A hold's `content (…)`: what a header may read but `computed`, and no draws."""
    if pieces is None:
        return ()
    cx = replace(
        header,
        where="a hold's content",
        vars=header.vars - {"computed"},
        draw="the content is evaluated once, at the hold's first attempt; "
        "draw into an attribute before the hold",
    )
    out = [piece(ck, p, cx) for p in pieces]
    if any(x is None for x in out):
        return None
    return tuple(x for x in out if x is not None)


def piece(ck: Checker, p: A.PieceA, cx: Ctx) -> ir.ContentPiece | None:
    if not expressions.depth_ok(ck, p):
        return None
    key = content_key(ck, p.key, cx)
    units = expressions.expr(ck, p.units, cx)
    if units is not None and closed.is_constant(units):
        v = closed.evaluate(ck, units, p.units.span)
        if v is None:
            return None
        if not (v > 0 and closed.is_int(v) and not math.isinf(v)):
            ck.err(
                p.units.span,
                f"a content piece's units must be a positive whole number, got {number(v)}",
            )
            return None
    if key is None or units is None:
        return None
    return ir.ContentPiece(key, units, p.span)


def content_key(ck: Checker, e: A.Expr, cx: Ctx) -> ir.Key | None:
    """A key's value may be a string literal, a list or string attribute, or a conditional
    choosing one of those (its condition a number); anything computed from a list or a
    string is still a compile error (`expressions.subexpr` says so)."""
    if isinstance(e, A.StringE):
        return ir.Str(e.value, e.span)
    if isinstance(e, A.Name):
        return names.name(ck, e.name, e.span, replace(cx, lists=True))
    if isinstance(e, A.FieldE):
        return names.field(ck, e, replace(cx, lists=True))
    if isinstance(e, A.CondE):
        c = expressions.subexpr(ck, e.cond, cx)
        a = content_key(ck, e.then, cx)
        b = content_key(ck, e.otherwise, cx)
        if c is None or a is None or b is None:
            return None
        return ir.CondKey(c, a, b, e.span)
    return expressions.subexpr(ck, e, cx)
