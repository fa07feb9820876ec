"""Session classes and their statements: the attribute names a session assigns, its
arrival, and each statement (`set`, `hold`, `run`, `grow`, `send`, `wait`, `repeat`,
`if`) with the context it is read in and the holds around it.

It may not declare pools or stages (`declarations`), read a source (`sources`), or
evaluate anything but through `closed.slot`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from pooltui.lang import ast as A
from pooltui.lang import closed, constants, expressions, ir, names, pieces
from pooltui.lang.exprs import CONTEXT_VARIABLES
from pooltui.lang.names import Ctx
from pooltui.lang.sources import Table

if TYPE_CHECKING:
    from pooltui.lang.checker import Checker


@dataclass(slots=True)
class _Hold:
    pool: str


@dataclass(slots=True)
class _SessionScope:
    ctx_stmt: Ctx
    ctx_hold: Ctx  # statements inside a hold
    ctx_header: Ctx
    holds: list[_Hold] = field(default_factory=list)


def collect_attrs(ck: Checker, items: Sequence[A.Stmt | A.Arrive]) -> None:
    stack: list[A.Stmt | A.Arrive] = list(items)
    while stack:  # explicit stack: the depth limit is enforced later
        st = stack.pop()
        if isinstance(st, A.Assign):
            ck.attr_names.add(st.name)
        elif isinstance(st, A.HoldS | A.RepeatS):
            stack.extend(st.body)
        elif isinstance(st, A.IfS):
            stack.extend(st.then)
            stack.extend(st.otherwise)


def session(ck: Checker, s: A.SessionD, table: Table | None) -> ir.CSession | None:
    if s.path is not None and table is None:
        return None  # the CSV's error is reported already
    columns = table.columns if table else ()
    kinds = table.kinds if table else ()
    csv = s.path
    base = dict(attrs=True, columns=columns, csv=csv, in_session=True, kinds=kinds)
    stmt_cx = Ctx("a session statement", frozenset({"now", "serial"}), **base)  # type: ignore[arg-type]
    hold_vars = frozenset({"now", "serial", "computed", "context"})
    hold_cx = Ctx("a statement inside a hold", hold_vars, **base)  # type: ignore[arg-type]
    header_cx = Ctx("a hold header", hold_vars, **base)  # type: ignore[arg-type]
    scope = _SessionScope(stmt_cx, hold_cx, header_cx)
    count = (
        len(table.rows) if table else constants.count_of(ck, s.count, f"session class '{s.name}'")
    )
    arrive: ir.ArriveAt | ir.ArriveEvery | None = None
    first_arrive: A.Arrive | None = None
    body: list[ir.Stmt] = []
    ok = True
    for item in s.items:
        if not expressions.depth_ok(ck, item):
            ok = False
            continue
        if isinstance(item, A.Arrive):
            if first_arrive is not None:
                ck.err(item.span, f"arrive is given twice (first at {names.at(first_arrive.span)})")
                ok = False
                continue
            first_arrive = item
            cx = Ctx(
                "an arrival",
                frozenset(),
                attrs=False,
                queries=False,
                columns=columns,
                csv=csv,
                columns_only=True,
                in_session=True,
                kinds=kinds,
            )
            x = expressions.expr(ck, item.expr, cx)
            if x is None:
                ok = False
            elif item.kind == "at":
                arrive = ir.ArriveAt(x, item.span)
            else:
                arrive = ir.ArriveEvery(x, item.span)
            continue
        st = stmt(ck, item, scope)
        if st is None:
            ok = False
        else:
            body.append(st)
    if not ok:
        return None
    source = None
    if table is not None:
        source = ir.CSource(
            table.path, table.written, table.limit, table.columns, table.rows, table.span,
            table.format, table.kinds,
        )  # fmt: skip
    return ir.CSession(
        name=s.name,
        count=count,
        source=source,
        arrive=arrive if arrive is not None else ir.ArriveAt(ir.Num(0, s.name_span), s.name_span),
        body=tuple(body),
        family=s.count is not None,
        span=s.name_span,
    )


def block(ck: Checker, stmts: list[A.Stmt], scope: _SessionScope) -> tuple[ir.Stmt, ...] | None:
    out = [stmt(ck, st, scope) for st in stmts]
    if any(x is None for x in out):
        return None
    return tuple(x for x in out if x is not None)


def joined(ck: Checker, pools: Iterable[str]) -> frozenset[str]:
    out = set()
    for name in pools:
        sym = ck.syms.get(name)
        if sym is not None and sym.admit_via is not None:
            out.add(sym.admit_via)
    return frozenset(out)


def stmt(ck: Checker, st: A.Stmt | A.Arrive, scope: _SessionScope) -> ir.Stmt | None:
    cx = scope.ctx_hold if scope.holds else scope.ctx_stmt
    if scope.holds:
        cx = replace(cx, joined=joined(ck, (h.pool for h in scope.holds)))
    if isinstance(st, A.Assign):
        if st.name in ck.const_decls:
            ck.err(st.name_span, f"'{st.name}' is a constant; it cannot be assigned")
            expressions.expr(ck, st.value, cx)
            return None
        if st.name in CONTEXT_VARIABLES:
            ck.err(st.name_span, f"'{st.name}' is a context variable; it cannot be assigned")
            expressions.expr(ck, st.value, cx)
            return None
        v = expressions.expr(ck, st.value, cx)
        if v is None or not closed.slot(ck, v, "value", ""):
            return None
        return ir.SetAttr(st.name, v, st.span)
    if isinstance(st, A.HoldS):
        ref = expressions.ref(ck, st.ref, "pool", "hold", cx)
        header = replace(
            scope.ctx_header,
            joined=joined(ck, [*(h.pool for h in scope.holds), st.ref.name]),
        )
        units = expressions.expr(ck, st.units, header)
        need = expressions.expr(ck, st.need, header) if st.need is not None else None
        reserve = expressions.expr(ck, st.reserve, header) if st.reserve is not None else None
        content = pieces.content(ck, st.content, header)
        scope.holds.append(_Hold(st.ref.name))
        try:
            body = block(ck, st.body, scope)
        finally:
            scope.holds.pop()
        good = units is None or closed.slot(ck, units, "units", "the hold's units")
        good &= need is None or closed.slot(ck, need, "units", "need")
        good &= reserve is None or closed.slot(ck, reserve, "reserve", "reserve")
        if not good or ref is None or units is None or body is None:
            return None
        if (st.need is not None and need is None) or (st.reserve is not None and reserve is None):
            return None
        if content is None:
            return None
        return ir.Hold(ref, units, need, reserve, body, st.span, content)
    if isinstance(st, A.RunS):
        shared_ok = st.ref.name in cx.joined
        ref = expressions.ref(ck, st.ref, "step", "run", cx, bare_family_ok=shared_ok)
        amount = expressions.expr(ck, st.amount, cx)
        if not scope.holds:
            ck.err(st.span, "run must be inside a hold: a run computes its hold's context")
            return None
        if ref is None or amount is None:
            return None
        what = "the prefill" if st.kind == "prefill" else "the decode steps"
        if not closed.slot(ck, amount, "units", what):
            return None
        return ir.Run(ref, "prefill" if st.kind == "prefill" else "decode", amount, st.span)
    if isinstance(st, A.GrowS):
        amount = expressions.expr(ck, st.amount, cx)
        sym = names.lookup(ck, st.ref.name, st.ref.name_span, "pool", "grow")
        if sym is None:
            return None
        if st.ref.index is not None:
            ck.err(
                st.ref.span,
                f"grow takes a pool without an index: it grows the innermost hold on '{sym.name}'",
            )
            return None
        if not any(h.pool == sym.name for h in scope.holds):
            ck.err(st.span, f"grow {sym.name} must be inside a hold on '{sym.name}'")
            return None
        if amount is None or not closed.slot(ck, amount, "units", "the growth"):
            return None
        return ir.Grow(sym.name, amount, st.span)
    if isinstance(st, A.SendS):
        ref = expressions.ref(ck, st.ref, "link", "send", cx)
        work = expressions.expr(ck, st.work, cx)
        if ref is None or work is None or not closed.slot(ck, work, "work", "send work"):
            return None
        return ir.Send(ref, work, st.span)
    if isinstance(st, A.WaitS):
        secs = expressions.expr(ck, st.seconds, cx)
        if secs is None or not closed.slot(ck, secs, "seconds", "wait"):
            return None
        return ir.Wait(secs, st.span)
    if isinstance(st, A.RepeatS):
        n = expressions.expr(ck, st.count, cx)
        if n is not None and not closed.slot(ck, n, "count", "the repeat count"):
            n = None
        body = block(ck, st.body, scope)
        return None if n is None or body is None else ir.Repeat(n, body, st.span)
    if isinstance(st, A.IfS):
        c = expressions.expr(ck, st.cond, cx)
        if c is not None and not closed.slot(ck, c, "value", ""):
            c = None
        then = block(ck, st.then, scope)
        other = block(ck, st.otherwise, scope)
        if c is None or then is None or other is None:
            return None
        return ir.If(c, then, other, st.span)
    ck.err(st.span, "arrive belongs at the top of a session's body")  # pragma: no cover
    return None
