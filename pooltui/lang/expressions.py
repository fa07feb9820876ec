"""Expressions checked and lowered to IR: operators, conditionals, function calls,
queries (`free(kv[0])`, `argmin(kv, queued)`), draws, and a member named by a pool or
stage reference (`kv[i]`); and the nesting limit, checked before any recursion.

(`exprs.py` is the other side: it compiles the IR this module makes into closures.)

It reads names through `names` and may not evaluate anything: folding is `constants`,
compile-time evaluation of closed expressions is `closed`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pooltui.lang import ast as A
from pooltui.lang import closed, ir, names
from pooltui.lang.exprs import DISTRIBUTIONS, FUNCTIONS, POOL_QUERIES, STAGE_QUERIES
from pooltui.lang.ir import Span
from pooltui.lang.names import Ctx, Sym
from pooltui.lang.words import nearest, number

if TYPE_CHECKING:
    from pooltui.lang.checker import Checker

MAX_DEPTH = 200


def depth_ok(ck: Checker, node: A.Expr | A.Stmt | A.Arrive | A.PieceA) -> bool:
    if node.depth <= MAX_DEPTH:
        return True
    cur: object = node
    for _ in range(MAX_DEPTH):  # walk down the deepest path to where the limit is crossed
        kids = _node_children(cur)
        if not kids:
            break
        cur = max(kids, key=lambda k: getattr(k, "depth", 0))
    span = getattr(cur, "span", node.span)
    ck.err(span, f"nesting deeper than {MAX_DEPTH} levels")
    return False


def _node_children(node: object) -> list[object]:
    if isinstance(node, A.Assign):
        return [node.value]
    if isinstance(node, A.HoldS):
        return [x for x in (node.ref, node.units, node.need, node.reserve) if x is not None] + [
            *(node.content or ()),
            *node.body,
        ]
    if isinstance(node, A.PieceA):
        return [node.key, node.units]
    if isinstance(node, A.StringE):
        return []
    if isinstance(node, A.RunS):
        return [node.ref, node.amount]
    if isinstance(node, A.GrowS):
        return [node.ref, node.amount]
    if isinstance(node, A.SendS):
        return [node.ref, node.work]
    if isinstance(node, A.WaitS):
        return [node.seconds]
    if isinstance(node, A.RepeatS):
        return [node.count, *node.body]
    if isinstance(node, A.IfS):
        return [node.cond, *node.then, *node.otherwise]
    if isinstance(node, A.Arrive):
        return [node.expr]
    if isinstance(node, A.RefA):
        return [node.index] if node.index is not None else []
    return list(A.children(node))  # type: ignore[arg-type]


def top_expr(ck: Checker, e: A.Expr, cx: Ctx) -> ir.Expr | None:
    return expr(ck, e, cx)


def expr(ck: Checker, e: A.Expr, cx: Ctx) -> ir.Expr | None:
    if e.depth > MAX_DEPTH and not depth_ok(ck, e):
        return None
    return subexpr(ck, e, cx)


def subexpr(ck: Checker, e: A.Expr, cx: Ctx) -> ir.Expr | None:
    if isinstance(e, A.Number):
        return ir.Num(e.value, e.span)
    if isinstance(e, A.Name):
        return names.name(ck, e.name, e.span, cx)
    if isinstance(e, A.UnaryE):
        x = subexpr(ck, e.operand, cx)
        return None if x is None else ir.Unary(e.op, x, e.span)  # type: ignore[arg-type]
    if isinstance(e, A.BinaryE):
        left = subexpr(ck, e.left, cx)
        right = subexpr(ck, e.right, cx)
        if left is None or right is None:
            return None
        return ir.Binary(e.op, left, right, e.span)  # type: ignore[arg-type]
    if isinstance(e, A.CondE):
        c, a, b = subexpr(ck, e.cond, cx), subexpr(ck, e.then, cx), subexpr(ck, e.otherwise, cx)
        if c is None or a is None or b is None:
            return None
        return ir.Cond(c, a, b, e.span)
    if isinstance(e, A.CallE):
        return call(ck, e, cx)
    if isinstance(e, A.DrawE):
        return draw(ck, e, cx)
    if isinstance(e, A.FieldE):
        return names.field(ck, e, cx)
    if isinstance(e, A.StringE):
        text = f'"{e.value}"'
        ck.err(
            e.span,
            f"{text} is a string; a string can only be a content key: content ({text} : UNITS)",
        )
        return None
    # A.Index outside a query
    assert isinstance(e, A.Index)
    sym = ck.syms.get(e.name)
    if sym is None:
        names.name(ck, e.name, e.name_span, cx)
        return None
    ck.err(
        e.span,
        f"'{e.name}[…]' is a member of {sym.desc()}; read it through a query, "
        f"e.g. {'free' if sym.kind == 'pool' else 'residents'}({e.name}[…])",
    )
    return None


def call(ck: Checker, e: A.CallE, cx: Ctx) -> ir.Expr | None:
    fn = e.name
    if fn in ("argmin", "argmax"):
        return argquery(ck, e, cx)
    if fn in POOL_QUERIES or fn in STAGE_QUERIES:
        if not cx.queries or cx.const is not None:
            what = names.must(cx.const) if cx.const else f"{cx.where} cannot query"
            ck.err(e.name_span, f"{what}: '{fn}(…)' is a query")
            return None
        if len(e.args) != 1:
            ck.err(
                e.span,
                f"{fn} takes 1 argument (a {'pool' if fn in POOL_QUERIES else 'stage'}), got {len(e.args)}",
            )
            return None
        want = "pool" if fn in POOL_QUERIES else "stage"
        arg = e.args[0]
        if isinstance(arg, A.Name):
            r = A.RefA(arg.name, arg.span, None, arg.span)
        elif isinstance(arg, A.Index):
            r = A.RefA(arg.name, arg.name_span, arg.index, arg.span)
        else:
            ck.err(
                arg.span,
                f"{fn} takes a {want} name, e.g. {fn}({'kv' if want == 'pool' else 'gpu'})",
            )
            return None
        shared = want == "stage" and r.name in cx.joined
        target = ref(ck, r, want, f"{fn}(…)", cx, bare_family_ok=shared)
        return None if target is None else ir.Query(fn, target, e.span)
    if fn in FUNCTIONS:
        lo, hi = FUNCTIONS[fn]
        n = len(e.args)
        if n < lo or (hi is not None and n > hi):
            ck.err(e.span, f"{fn} takes {_arity(lo, hi)}, got {n}")
            for a in e.args:
                subexpr(ck, a, cx)
            return None
        args = [subexpr(ck, a, cx) for a in e.args]
        if any(a is None for a in args):
            return None
        return ir.Call(fn, tuple(a for a in args if a is not None), e.span)
    if fn in DISTRIBUTIONS:
        ck.err(e.name_span, f"'{fn}' is a distribution: write draw {fn}(…)")
        return None
    near = nearest(fn, [*FUNCTIONS, *POOL_QUERIES, *STAGE_QUERIES, "argmin", "argmax"])
    hint = f"; did you mean '{near}'?" if near else ""
    ck.err(e.name_span, f"unknown function '{fn}'{hint}")
    return None


def argquery(ck: Checker, e: A.CallE, cx: Ctx) -> ir.Expr | None:
    fn = e.name
    if not cx.queries or cx.const is not None:
        what = names.must(cx.const) if cx.const else f"{cx.where} cannot query"
        ck.err(e.name_span, f"{what}: '{fn}(…)' is a query")
        return None
    if len(e.args) != 2 or not all(isinstance(a, A.Name) for a in e.args):
        ck.err(e.span, f"{fn} takes a family and a query name, e.g. {fn}(kv, queued)")
        return None
    fam, q = e.args
    assert isinstance(fam, A.Name) and isinstance(q, A.Name)
    sym = ck.syms.get(fam.name)
    if sym is None:
        near = nearest(fam.name, ck.vocab(("syms", len(ck.syms)), lambda: ck.syms))
        hint = f"; did you mean '{near}'?" if near else ""
        ck.err(fam.span, f"unknown pool or stage '{fam.name}'{hint}")
        return None
    if not sym.family:
        ck.err(fam.span, f"{fn} needs a family; '{fam.name}' is declared without [N]")
        return None
    queries = POOL_QUERIES if sym.kind == "pool" else STAGE_QUERIES
    if q.name not in queries:
        near = nearest(q.name, queries)
        hint = f" (did you mean '{near}'?)" if near else ""
        ck.err(
            q.span,
            f"'{q.name}' is not a {sym.kind} query{hint}; {sym.kind} queries are "
            f"{', '.join(queries)}",
        )
        return None
    return ir.ArgQuery(fn, ir.Ref(sym.kind, sym.name, None, fam.span), q.name, e.span)  # type: ignore[arg-type]


def draw(ck: Checker, e: A.DrawE, cx: Ctx) -> ir.Expr | None:
    if cx.draw is not None:
        if cx.const is not None:
            ck.err(e.span, f"{names.must(cx.const)}: it cannot draw")
        else:
            ck.err(e.span, f"a draw is not allowed in {cx.where}: {cx.draw}")
        return None
    if e.dist not in DISTRIBUTIONS:
        near = nearest(e.dist, DISTRIBUTIONS)
        if near:
            ck.err(e.dist_span, f"unknown distribution '{e.dist}'; did you mean '{near}'?")
        else:
            ck.err(
                e.dist_span,
                f"unknown distribution '{e.dist}'; the distributions are {', '.join(DISTRIBUTIONS)}",
            )
        return None
    lo, hi = DISTRIBUTIONS[e.dist]
    n = len(e.args)
    if n < lo or (hi is not None and n > hi):
        ck.err(e.span, f"draw {e.dist} takes {_arity(lo, hi)}, got {n}")
        return None
    args = [subexpr(ck, a, cx) for a in e.args]
    if any(a is None for a in args):
        return None
    return ir.Draw(e.dist, tuple(a for a in args if a is not None), e.span)


def ref(
    ck: Checker, r: A.RefA, want: str, clause: str, cx: Ctx, bare_family_ok: bool = False
) -> ir.Ref | None:
    sym = names.lookup(ck, r.name, r.name_span, want, clause)
    index: ir.Expr | None = None
    if r.index is not None:
        index = expr(ck, r.index, cx)
        if index is None:
            return None
    if sym is None:
        return None
    if not index_ok(ck, sym, r.index, index, r.span, clause, bare_family_ok):
        return None
    return ir.Ref(sym.kind, sym.name, index, r.span)


def index_ok(
    ck: Checker,
    sym: Sym,
    index_ast: A.Expr | None,
    index: ir.Expr | None,
    span: Span,
    clause: str,
    bare_family_ok: bool = False,
) -> bool:
    if index_ast is None:
        if sym.family and sym.count > 1 and not bare_family_ok:
            ck.err(
                span,
                f"'{sym.name}' is a family of {sym.count}: {clause} must name a member, "
                f"e.g. {sym.name}[0]",
            )
            return False
        return True
    if not sym.family:
        ck.err(
            span,
            f"'{sym.name}' is not a family (it is declared without [N]): it takes no index",
        )
        return False
    if isinstance(index, ir.Num):
        i = index.value
        if not closed.is_int(i) or not 0 <= i < sym.count:
            ck.err(
                index_ast.span,
                f"index {number(i)} is out of range: '{sym.name}' has members 0 to {sym.count - 1}",
            )
            return False
    return True


def _arity(lo: int, hi: int | None) -> str:
    if hi == lo:
        return f"{lo} argument{'s' if lo != 1 else ''}"
    if hi is None:
        return f"at least {lo} argument{'s' if lo != 1 else ''}"
    return f"{lo} to {hi} arguments"
