"""Constants: `const NAME = …;` resolved dependencies first (iteratively, cycles
reported), and everything folded at compile time: a constant expression's value, a
positive option (`cap`, `block`, `rate`, …), a count (`[N]`, `x N`).

It may not declare anything (`declarations`) or lower anything but through
`expressions.expr`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from pooltui.lang import ast as A
from pooltui.lang import closed, expressions
from pooltui.lang.exprs import MAX_INT, Number
from pooltui.lang.names import Ctx
from pooltui.lang.words import number

if TYPE_CHECKING:
    from pooltui.lang.checker import Checker


def resolve(ck: Checker) -> None:
    """Fold every constant, dependencies first, with an explicit stack: a chain of
    constants each defined by the next is as deep as the user makes it."""
    for root in ck.const_decls:
        if root in ck.const_values or root in ck.const_failed:
            continue
        path: list[str] = [root]  # the chain being resolved
        on_path = {root}
        todo: list[list[str]] = [dependencies(ck, root)]
        while path:
            deps = todo[-1]
            name = path[-1]
            if deps:
                dep = deps.pop()
                if dep in ck.const_values or dep in ck.const_failed:
                    continue
                if dep in on_path:
                    cycle = [*path[path.index(dep) :], dep]
                    decl = ck.const_decls[dep]
                    ck.err(
                        decl.name_span,
                        f"constant '{dep}' depends on itself: {' → '.join(cycle)}",
                    )
                    ck.const_failed.update(cycle)
                    continue
                path.append(dep)
                on_path.add(dep)
                todo.append(dependencies(ck, dep))
                continue
            path.pop()
            on_path.discard(name)
            todo.pop()
            if name in ck.const_failed:
                continue
            value = fold(ck, ck.const_decls[name].expr, f"constant '{name}'")
            if value is None:
                ck.const_failed.add(name)
            else:
                ck.const_values[name] = value


def dependencies(ck: Checker, name: str) -> list[str]:
    """The constants the expression of constant `name` names (in reverse source order,
    so they are resolved, and their errors reported, in source order)."""
    out: list[str] = []
    stack: list[A.Expr] = [ck.const_decls[name].expr]
    while stack:
        e = stack.pop()
        if isinstance(e, A.Name) and e.name in ck.const_decls:
            out.append(e.name)
        stack.extend(reversed(A.children(e)))
    out.reverse()
    return out


def fold(ck: Checker, e: A.Expr, what: str) -> Number | None:
    """The value of a constant expression (numbers, constants, arithmetic, functions)."""
    cx = Ctx(where=what, queries=False, draw="it is folded at compile time", const=what)
    x = expressions.expr(ck, e, cx)
    if x is None:
        return None
    return closed.evaluate(ck, x, e.span)


def positive(
    ck: Checker,
    e: A.Expr,
    what: str,
    *,
    whole: bool,
    allow_inf: bool,
    most: int | None = MAX_INT,
) -> Number | None:
    """A positive option folded at compile time; finite values at most `most` (None:
    unbounded), so a whole number always fits the simulator's integers."""
    v = fold(ck, e, what)
    if v is None:
        return None
    if math.isinf(v) and v > 0:
        if allow_inf:
            return v
        ck.err(e.span, f"{what} must be a positive whole number, got inf")
        return None
    if v <= 0 or (whole and not closed.is_int(v)):
        kind = "a positive whole number" if whole else "positive"
        ck.err(e.span, f"{what} must be {kind}, got {number(v)}")
        return None
    if most is not None and v > most:
        inf = " (or inf)" if allow_inf else ""
        ck.err(e.span, f"{what} must be at most {_most(most)}{inf}, got {number(v)}")
        return None
    return int(v) if whole else v


def count_of(ck: Checker, e: A.Expr | None, what: str, most: int = MAX_INT) -> int:
    if e is None:
        return 1
    v = positive(ck, e, f"the count of {what}", whole=True, allow_inf=False, most=most)
    return int(v) if v is not None else 1


def _most(n: int) -> str:
    return "2^53" if n == MAX_INT else f"{n:,}"
