"""Declarations: pools and stages (their one shared namespace, their options, how
families join), and checks.

Owns the limits on a pool's or stage's size, `register`, the `Sym` of each declaration
and the `CPool` / `CStage` / `CCheck` built from it (with a pool's `reload` and the tiers
it reads). It may not check sessions or their statements (`sessions`) or read a session's
source (`sources`).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING

from pooltui.lang import ast as A
from pooltui.lang import closed, constants, expressions, ir, names
from pooltui.lang.exprs import Number
from pooltui.lang.ir import Span
from pooltui.lang.names import Ctx, Sym
from pooltui.lang.words import number

if TYPE_CHECKING:
    from pooltui.lang.checker import Checker

# Pools and stages are simulated member by member, so a family's size is bounded (a typo
# in a count must not ask for terabytes). A pool's blocks cost memory only once used.
MAX_MEMBERS = 65_536  # members of one pool or stage family


def register(ck: Checker, syms: list[Sym], kind: str) -> None:
    for sym in syms:
        first = ck.syms.get(sym.name)
        if first is None:
            ck.syms[sym.name] = sym
        elif first.kind == sym.kind:
            ck.err(
                sym.span,
                f"duplicate {kind} '{sym.name}' (first declared at {names.at(first.span)})",
            )
        else:
            ck.err(
                sym.span,
                f"pool and stage share the name '{sym.name}' (the {first.kind} at "
                f"{names.at(first.span)}, the {sym.kind} at {names.at(sym.span)}); give one another name",
            )


def declare_stage(ck: Checker, d: A.StageD) -> Sym:
    n = constants.count_of(ck, d.count, f"stage '{d.name}'", MAX_MEMBERS)
    return Sym("stage", d.name, n, d.count is not None, d.name_span, stage_kind=d.kind)


def declare_pool(ck: Checker, d: A.PoolD) -> Sym:
    n = constants.count_of(ck, d.count, f"pool '{d.name}'", MAX_MEMBERS)
    admit = next((o.names[0][0] for o in d.options if o.key == "admit"), None)
    return Sym("pool", d.name, n, d.count is not None, d.name_span, admit_via=admit)


def options(ck: Checker, opts: list[A.Option]) -> dict[str, A.Option]:
    seen: dict[str, A.Option] = {}
    for o in opts:
        first = seen.get(o.key)
        if first is not None:
            ck.err(
                o.key_span,
                f"duplicate option '{o.key}' (first given at {names.at(first.key_span)})",
            )
        else:
            seen[o.key] = o
    return seen


def stage(ck: Checker, d: A.StageD, sym: Sym) -> ir.CStage | None:
    opts = options(ck, d.options)
    step_opts = ("budget", "seats", "time", "prefill", "serve")
    link_opts = ("rate", "lanes")
    mine, other = (step_opts, link_opts) if d.kind == "step" else (link_opts, step_opts)
    ok = True
    for key, o in opts.items():
        if key in other:
            ok = False
            ck.err(
                o.key_span,
                f"'{key}' is an option of {'link' if d.kind == 'step' else 'step'} stages; "
                f"'{d.name}' is a {d.kind} stage (its options: {', '.join(mine)})",
            )
    kw: dict[str, object] = {}
    if "budget" in opts and opts["budget"].expr is not None:
        v = constants.positive(ck, opts["budget"].expr, "budget", whole=False, allow_inf=True)
        ok &= v is not None
        kw["budget"] = float(v) if v is not None and math.isinf(v) else v
    if "seats" in opts and opts["seats"].expr is not None:
        v = constants.positive(ck, opts["seats"].expr, "seats", whole=True, allow_inf=True)
        ok &= v is not None
        kw["seats"] = v
    if "rate" in opts and opts["rate"].expr is not None:
        v = constants.positive(
            ck, opts["rate"].expr, "rate", whole=False, allow_inf=True, most=None
        )
        ok &= v is not None
        kw["rate"] = v
    if "lanes" in opts and opts["lanes"].expr is not None:
        v = constants.positive(ck, opts["lanes"].expr, "lanes", whole=True, allow_inf=False)
        ok &= v is not None
        kw["lanes"] = v
    if "time" in opts and opts["time"].expr is not None and d.kind == "step":
        cx = Ctx(
            where="a stage's time",
            vars=frozenset({"now", "tokens", "residents", "prefills", "decodes"}),
            draw="a stage's time is evaluated every iteration and must be reproducible",
        )
        t = expressions.top_expr(ck, opts["time"].expr, cx)
        ok &= t is not None
        kw["time"] = t
    if "prefill" in opts:
        kw["prefill"] = opts["prefill"].word
    if "serve" in opts:
        kw["exclusive_prefill"] = True
    if not ok:
        return None
    return ir.CStage(
        name=d.name,
        kind="step" if d.kind == "step" else "link",
        count=sym.count,
        family=sym.family,
        span=d.name_span,
        **{k: v for k, v in kw.items() if v is not None},  # type: ignore[arg-type]
    )


def join(ck: Checker, pool: Sym, other: Sym, clause: str, span: Span) -> bool:
    if other.count == pool.count or other.count == 1:
        return True
    ck.err(
        span,
        f"{clause}: pool '{pool.shown()}' (declared at {names.at(pool.span)}) and {other.kind} "
        f"'{other.shown()}' (declared at {names.at(other.span)}) do not join: families join "
        "member for member (equal counts), or share a family of one",
    )
    return False


def pool(ck: Checker, d: A.PoolD, sym: Sym) -> ir.CPool | None:
    opts = options(ck, d.options)
    ok = True
    kw: dict[str, object] = {}
    cap: Number | None = None
    block: int | None = None
    if "cap" in opts and opts["cap"].expr is not None:
        cap = constants.positive(ck, opts["cap"].expr, "cap", whole=False, allow_inf=True)
        if cap is not None and not math.isinf(cap) and not closed.is_int(cap):
            ck.err(opts["cap"].expr.span, f"cap must be a whole number of units, got {number(cap)}")
            cap = None
        ok &= cap is not None
        if cap is not None:
            kw["cap"] = cap if math.isinf(cap) else int(cap)
    if "block" in opts and opts["block"].expr is not None:
        b = constants.positive(ck, opts["block"].expr, "block", whole=True, allow_inf=False)
        ok &= b is not None
        if b is not None:
            block = int(b)
            kw["block"] = block
    if cap is not None and block is not None and not math.isinf(cap) and int(cap) % block:
        c = int(cap)
        lo = c // block * block
        hi = lo + block
        use = f"use {lo} or {hi}" if lo > 0 else f"use {hi}"
        ck.err(
            opts["cap"].span,
            f"cap {c} is not a multiple of block {block} (the pool would have "
            f"{number(c / block)} blocks); {use}",
        )
        ok = False
    if "evict" in opts:
        o = opts["evict"]
        if o.keys is not None:
            cx = Ctx(
                where="an evict key",
                vars=frozenset({"now", "serial", "size", "age", "last", "waiting"}),
                attrs=True,
                draw="evict keys are evaluated for cache entries whose session may have ended",
            )
            keys = [expressions.top_expr(ck, k, cx) for k in o.keys]
            ok &= all(k is not None for k in keys)
            kw["evict"] = ir.EvictBy(tuple(k for k in keys if k is not None), o.span)
        else:
            kw["evict"] = ir.EvictLru(o.span)
    if "queue" in opts:
        o = opts["queue"]
        if o.keys is not None:
            cx = Ctx(
                where="a queue key",
                vars=frozenset({"now", "serial", "waited", "waiting"}),
                attrs=True,
                draw="queue keys are evaluated again before every admission attempt",
            )
            keys = [expressions.top_expr(ck, k, cx) for k in o.keys]
            ok &= all(k is not None for k in keys)
            kw["queue"] = ir.QueueBy(tuple(k for k in keys if k is not None), o.span)
        else:
            kw["queue"] = ir.QueueFifo(o.span)
    if "admit" in opts:
        name, span = opts["admit"].names[0]
        st = names.lookup(ck, name, span, "step", "admit via")
        if st is None or not join(ck, sym, st, f"admit via {name}", span):
            ok = False
        else:
            kw["admit_via"] = name
    if "preempt" in opts:
        o = opts["preempt"]
        kw["preempt"] = o.word
        if o.word == "lifo" and "admit" not in opts:
            ck.err(
                o.span,
                "preempt lifo needs admit via: it names the stage whose residents can be preempted",
            )
            ok = False
    if "spill" in opts:
        o = opts["spill"]
        (tier, tier_span), (link, link_span) = o.names
        good = True
        tier_sym = names.lookup(ck, tier, tier_span, "pool", "spill")
        if tier_sym is not None and tier == d.name:
            ck.err(tier_span, f"pool '{d.name}' cannot spill to itself; name another pool")
            good = False
        elif tier_sym is None or not join(ck, sym, tier_sym, f"spill {tier}", tier_span):
            good = False
        link_sym = names.lookup(ck, link, link_span, "link", "spill … via")
        if link_sym is None or not join(ck, sym, link_sym, f"spill via {link}", link_span):
            good = False
        spill_vars = frozenset({"now", "size"})
        draw = "a spill is evaluated for cache entries whose session may have ended"
        work = when = None
        if o.work is not None and o.when is not None:
            work = expressions.top_expr(ck, o.work, Ctx("a spill's work", spill_vars, True, draw))
            when = expressions.top_expr(
                ck, o.when, Ctx("a spill's predicate", spill_vars, True, draw)
            )
        if good and work is not None and when is not None:
            kw["spill"] = ir.CSpill(tier, link, work, when, o.span)
        else:
            ok = False
    if "reload" in opts:
        r = reload(ck, sym, opts)
        ok &= r is not None
        kw["reload"] = r
    if not ok:
        return None
    return ir.CPool(name=d.name, count=sym.count, family=sym.family, span=d.name_span, **kw)  # type: ignore[arg-type]


# What a reload's work and predicate read (content-and-reload.md §3): the loadable units,
# and what the attempted hold's session reads outside its hold. Not `computed` or `context`:
# the attempt changes computed from the pool's own hit to hit + loadable around them.
RELOAD_VARS = frozenset({"now", "serial", "size"})
RELOAD_DRAW = (
    "a reload is evaluated at every admission attempt, and a draw there would make the "
    "session's draws depend on the cache"
)


def reload(ck: Checker, pool: Sym, opts: dict[str, A.Option]) -> ir.CReload | None:
    """`reload via LINK (WORK) [when (PRED)];`: its link, its expressions, and that the pool
    spills (a reload reads back down the spill chain). `tiers` is filled by `reload_tiers`."""
    o = opts["reload"]
    good = True
    if "spill" not in opts:
        ck.err(
            o.span,
            f"reload needs spill: pool '{pool.name}' reloads what it spilled to its tiers, and "
            "it does not spill (add spill POOL via LINK (WORK) when (PRED);)",
        )
        good = False
    (link, link_span), *_ = o.names
    link_sym = names.lookup(ck, link, link_span, "link", "reload via")
    if link_sym is None or not join(ck, pool, link_sym, f"reload via {link}", link_span):
        good = False
    assert o.work is not None
    work = expressions.top_expr(ck, o.work, Ctx("a reload's work", RELOAD_VARS, True, RELOAD_DRAW))
    good &= work is not None and closed.slot(ck, work, "work", "reload work")
    when: ir.Expr | None = None
    if o.when is not None:
        cx = Ctx("a reload's predicate", RELOAD_VARS, True, RELOAD_DRAW)
        when = expressions.top_expr(ck, o.when, cx)
        good &= when is not None and closed.slot(ck, when, "value", "")
    if not good or work is None:
        return None
    return ir.CReload(link, work, when, (), o.span)


def reload_tiers(pools: list[ir.CPool | None]) -> list[ir.CPool | None]:
    """Each reload's `tiers`: its pool's spill chain, each pool once (a chain that comes
    back to a pool on it stops there)."""
    tier_of = {p.name: p.spill.tier for p in pools if p is not None and p.spill is not None}
    out: list[ir.CPool | None] = []
    for p in pools:
        if p is None or p.reload is None:
            out.append(p)
            continue
        chain: list[str] = []
        at_pool = p.name
        while at_pool in tier_of and tier_of[at_pool] != p.name and tier_of[at_pool] not in chain:
            at_pool = tier_of[at_pool]
            chain.append(at_pool)
        out.append(replace(p, reload=replace(p.reload, tiers=tuple(chain))))
    return out


def check_decl(ck: Checker, c: A.CheckD) -> ir.CCheck | None:
    cx = Ctx("a check", frozenset({"now"}), draw="checks are tested after every settle")
    x = expressions.top_expr(ck, c.expr, cx)
    return None if x is None else ir.CCheck(c.label, x, c.span)
