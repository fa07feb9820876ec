"""AST to IR: names, kinds, families, constants, and where each name may be read.

The checker reports every independent error it finds (a failed part yields None and the
check goes on; uses of a failed part stay silent so one mistake is reported once). It is
recursive over expressions and statements, so it first refuses anything nested deeper than
MAX_DEPTH; the AST records each node's depth for that.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from pooltui.lang import ast as A
from pooltui.lang import ir
from pooltui.lang.csvsource import read_table
from pooltui.lang.errors import Diagnostic, SpecRuntimeError
from pooltui.lang.exprs import (
    CONTEXT_VARIABLES,
    DISTRIBUTIONS,
    FUNCTIONS,
    MAX_INT,
    POOL_QUERIES,
    STAGE_QUERIES,
    compile_expr,
    to_count,
    to_units,
)
from pooltui.lang.ir import Span
from pooltui.lang.jsonlsource import is_jsonl, read_jsonl
from pooltui.lang.sourcefile import SourceError, shown_columns
from pooltui.lang.words import Vocabulary, nearest, number

MAX_DEPTH = 200
# Pools and stages are simulated member by member and a finite pool block by block, so
# their sizes are bounded (a typo in a count or a cap must not ask for terabytes).
MAX_MEMBERS = 65_536  # members of one pool or stage family
MAX_BLOCKS = 1 << 22  # blocks of one pool, all its members together (4,194,304)

# Where each context variable means something (for the error when it is read elsewhere).
VAR_PLACES = {
    "now": "every expression but constants and arrivals",
    "serial": "session statements, hold headers, queue keys and evict keys",
    "computed": "hold headers and the statements inside a hold",
    "context": "hold headers and the statements inside a hold",
    "waited": "queue keys",
    "size": "evict keys and a spill's work and predicate",
    "age": "evict keys",
    "last": "evict keys",
    "waiting": "queue keys and evict keys",
    "tokens": "a step stage's time",
    "residents": "a step stage's time (residents(STAGE), with parentheses, is a query)",
    "prefills": "a step stage's time",
    "decodes": "a step stage's time",
}

Number = int | float


def at(span: Span) -> str:
    return f"{span.line}:{span.col}"


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


@dataclass(slots=True)
class _Hold:
    pool: str


@dataclass(slots=True)
class _SessionScope:
    ctx_stmt: Ctx
    ctx_hold: Ctx  # statements inside a hold
    ctx_header: Ctx
    holds: list[_Hold] = field(default_factory=list)


class Checker:
    def __init__(self, file: str, base_dir: str) -> None:
        self.file = file
        self.base_dir = base_dir
        self.diags: list[Diagnostic] = []
        self.sources: dict[str, str | None] = {}  # source files by shown path: never shown
        self.const_decls: dict[str, A.ConstD] = {}
        self.const_values: dict[str, Number] = {}
        self.const_failed: set[str] = set()
        self.syms: dict[str, Sym] = {}  # pools and stages (a shared namespace)
        self.attr_names: set[str] = set()
        # What each source column holds, all sources together (for policy keys).
        self.column_kinds: dict[str, set[str]] = {}
        # Sorted names for "did you mean" and the notes, built once the names are known
        # (one sort per kind of place, not one per error: thousands of errors stay linear).
        self._vocab: dict[tuple[object, ...], Vocabulary] = {}
        self._readable: dict[tuple[object, ...], list[str]] = {}

    # ------------------------------------------------------------------ diagnostics
    def err(self, span: Span, msg: str, notes: Sequence[str] = ()) -> None:
        self.diags.append(Diagnostic(span, msg, notes=tuple(notes)))

    # ------------------------------------------------------------------ program
    def program(self, decls: list[A.Decl], source: str, header: str) -> ir.Program | None:
        seeds: list[A.SeedD] = []
        stages: list[A.StageD] = []
        pools: list[A.PoolD] = []
        sessions: list[A.SessionD] = []
        checks: list[A.CheckD] = []
        for d in decls:
            if isinstance(d, A.SeedD):
                if seeds:
                    self.err(d.span, f"seed is given twice (first at {at(seeds[0].span)})")
                else:
                    seeds.append(d)
            elif isinstance(d, A.ConstD):
                first = self.const_decls.get(d.name)
                if first is not None:
                    self.err(
                        d.name_span,
                        f"duplicate constant '{d.name}' (first declared at {at(first.name_span)})",
                    )
                else:
                    self.const_decls[d.name] = d
            elif isinstance(d, A.StageD):
                stages.append(d)
            elif isinstance(d, A.PoolD):
                pools.append(d)
            elif isinstance(d, A.SessionD):
                sessions.append(d)
            else:
                checks.append(d)
        if not decls:
            self.err(Span(self.file, 1, 1, 1, 2), "empty spec: declare at least one session")
            return None

        for name, cd in self.const_decls.items():
            if name in CONTEXT_VARIABLES:
                self.err(
                    cd.name_span, f"'{name}' is a context variable; a constant cannot take its name"
                )
                self.const_failed.add(name)
        self.resolve_consts()

        seed = 0
        if seeds:
            v = self.fold(seeds[0].expr, "seed")
            if v is not None:
                if not _is_int(v) or v < 0:
                    self.err(
                        seeds[0].expr.span, f"seed must be a whole number ≥ 0, got {number(v)}"
                    )
                elif v > MAX_INT:
                    self.err(seeds[0].expr.span, f"seed must be at most 2^53, got {number(v)}")
                else:
                    seed = int(v)

        # Pools and stages share one namespace; session classes have their own.
        stage_syms = [self.declare_stage(s) for s in stages]
        pool_syms = [self.declare_pool(p) for p in pools]
        self.register(stage_syms, "stage")
        self.register(pool_syms, "pool")
        seen_sessions: dict[str, A.SessionD] = {}
        for s in sessions:
            first_s = seen_sessions.get(s.name)
            if first_s is not None:
                self.err(
                    s.name_span,
                    f"duplicate session class '{s.name}' (first declared at {at(first_s.name_span)})",
                )
            else:
                seen_sessions[s.name] = s

        tables = {id(s): self.read_source(s) for s in sessions if s.path is not None}
        for s in sessions:
            self.collect_attrs(s.items)
            table = tables.get(id(s))
            if table is not None:
                self.attr_names.update(table.columns)
                for c, k in zip(table.columns, table.kinds, strict=True):
                    self.column_kinds.setdefault(c, set()).update(k.split("|"))

        c_stages = [self.stage(d, sym) for d, sym in zip(stages, stage_syms, strict=True)]
        c_pools = [self.pool(d, sym) for d, sym in zip(pools, pool_syms, strict=True)]
        c_sessions = [self.session(s, tables.get(id(s))) for s in sessions]
        c_checks = [self.check_decl(c) for c in checks]
        if self.diags:
            return None
        return ir.Program(
            file=self.file,
            source=source,
            seed=seed,
            stages=tuple(x for x in c_stages if x is not None),
            pools=tuple(x for x in c_pools if x is not None),
            sessions=tuple(x for x in c_sessions if x is not None),
            checks=tuple(x for x in c_checks if x is not None),
            consts=tuple(
                (n, self.const_values[n]) for n in self.const_decls if n in self.const_values
            ),
            header_comment=header,
        )

    def register(self, syms: list[Sym], kind: str) -> None:
        for sym in syms:
            first = self.syms.get(sym.name)
            if first is None:
                self.syms[sym.name] = sym
            elif first.kind == sym.kind:
                self.err(
                    sym.span, f"duplicate {kind} '{sym.name}' (first declared at {at(first.span)})"
                )
            else:
                self.err(
                    sym.span,
                    f"pool and stage share the name '{sym.name}' (the {first.kind} at "
                    f"{at(first.span)}, the {sym.kind} at {at(sym.span)}); give one another name",
                )

    # ------------------------------------------------------------------ constants
    def resolve_consts(self) -> None:
        """Fold every constant, dependencies first, with an explicit stack: a chain of
        constants each defined by the next is as deep as the user makes it."""
        for root in self.const_decls:
            if root in self.const_values or root in self.const_failed:
                continue
            path: list[str] = [root]  # the chain being resolved
            on_path = {root}
            todo: list[list[str]] = [self.const_deps(root)]
            while path:
                deps = todo[-1]
                name = path[-1]
                if deps:
                    dep = deps.pop()
                    if dep in self.const_values or dep in self.const_failed:
                        continue
                    if dep in on_path:
                        cycle = [*path[path.index(dep) :], dep]
                        decl = self.const_decls[dep]
                        self.err(
                            decl.name_span,
                            f"constant '{dep}' depends on itself: {' → '.join(cycle)}",
                        )
                        self.const_failed.update(cycle)
                        continue
                    path.append(dep)
                    on_path.add(dep)
                    todo.append(self.const_deps(dep))
                    continue
                path.pop()
                on_path.discard(name)
                todo.pop()
                if name in self.const_failed:
                    continue
                value = self.fold(self.const_decls[name].expr, f"constant '{name}'")
                if value is None:
                    self.const_failed.add(name)
                else:
                    self.const_values[name] = value

    def const_deps(self, name: str) -> list[str]:
        """The constants the expression of constant `name` names (in reverse source order,
        so they are resolved, and their errors reported, in source order)."""
        out: list[str] = []
        stack: list[A.Expr] = [self.const_decls[name].expr]
        while stack:
            e = stack.pop()
            if isinstance(e, A.Name) and e.name in self.const_decls:
                out.append(e.name)
            stack.extend(reversed(A.children(e)))
        out.reverse()
        return out

    def const_value(self, name: str) -> Number | None:
        return self.const_values.get(name)

    def fold(self, e: A.Expr, what: str) -> Number | None:
        """The value of a constant expression (numbers, constants, arithmetic, functions)."""
        cx = Ctx(where=what, queries=False, draw="it is folded at compile time", const=what)
        x = self.expr(e, cx)
        if x is None:
            return None
        return self.evaluate(x, e.span)

    def evaluate(self, x: ir.Expr, span: Span) -> Number | None:
        try:
            v = compile_expr(x)(None)
        except SpecRuntimeError as exc:
            self.err(exc.span, exc.message)
            return None
        except (OverflowError, ValueError, TypeError, ZeroDivisionError) as exc:
            self.err(span, f"cannot evaluate this constant: {exc}")
            return None
        if isinstance(v, float) and math.isnan(v):
            self.err(span, "this constant is not a number (NaN)")
            return None
        return v

    def positive(
        self,
        e: A.Expr,
        what: str,
        *,
        whole: bool,
        allow_inf: bool,
        most: int | None = MAX_INT,
    ) -> Number | None:
        """A positive option folded at compile time; finite values at most `most` (None:
        unbounded), so a whole number always fits the simulator's integers."""
        v = self.fold(e, what)
        if v is None:
            return None
        if math.isinf(v) and v > 0:
            if allow_inf:
                return v
            self.err(e.span, f"{what} must be a positive whole number, got inf")
            return None
        if v <= 0 or (whole and not _is_int(v)):
            kind = "a positive whole number" if whole else "positive"
            self.err(e.span, f"{what} must be {kind}, got {number(v)}")
            return None
        if most is not None and v > most:
            inf = " (or inf)" if allow_inf else ""
            self.err(e.span, f"{what} must be at most {_most(most)}{inf}, got {number(v)}")
            return None
        return int(v) if whole else v

    # ------------------------------------------------------------------ declarations
    def count_of(self, e: A.Expr | None, what: str, most: int = MAX_INT) -> int:
        if e is None:
            return 1
        v = self.positive(e, f"the count of {what}", whole=True, allow_inf=False, most=most)
        return int(v) if v is not None else 1

    def declare_stage(self, d: A.StageD) -> Sym:
        n = self.count_of(d.count, f"stage '{d.name}'", MAX_MEMBERS)
        return Sym("stage", d.name, n, d.count is not None, d.name_span, stage_kind=d.kind)

    def declare_pool(self, d: A.PoolD) -> Sym:
        n = self.count_of(d.count, f"pool '{d.name}'", MAX_MEMBERS)
        admit = next((o.names[0][0] for o in d.options if o.key == "admit"), None)
        return Sym("pool", d.name, n, d.count is not None, d.name_span, admit_via=admit)

    def options(self, opts: list[A.Option]) -> dict[str, A.Option]:
        seen: dict[str, A.Option] = {}
        for o in opts:
            first = seen.get(o.key)
            if first is not None:
                self.err(
                    o.key_span, f"duplicate option '{o.key}' (first given at {at(first.key_span)})"
                )
            else:
                seen[o.key] = o
        return seen

    def stage(self, d: A.StageD, sym: Sym) -> ir.CStage | None:
        opts = self.options(d.options)
        step_opts = ("budget", "seats", "time", "prefill", "serve")
        link_opts = ("rate", "lanes")
        mine, other = (step_opts, link_opts) if d.kind == "step" else (link_opts, step_opts)
        ok = True
        for key, o in opts.items():
            if key in other:
                ok = False
                self.err(
                    o.key_span,
                    f"'{key}' is an option of {'link' if d.kind == 'step' else 'step'} stages; "
                    f"'{d.name}' is a {d.kind} stage (its options: {', '.join(mine)})",
                )
        kw: dict[str, object] = {}
        if "budget" in opts and opts["budget"].expr is not None:
            v = self.positive(opts["budget"].expr, "budget", whole=False, allow_inf=True)
            ok &= v is not None
            kw["budget"] = float(v) if v is not None and math.isinf(v) else v
        if "seats" in opts and opts["seats"].expr is not None:
            v = self.positive(opts["seats"].expr, "seats", whole=True, allow_inf=True)
            ok &= v is not None
            kw["seats"] = v
        if "rate" in opts and opts["rate"].expr is not None:
            v = self.positive(opts["rate"].expr, "rate", whole=False, allow_inf=True, most=None)
            ok &= v is not None
            kw["rate"] = v
        if "lanes" in opts and opts["lanes"].expr is not None:
            v = self.positive(opts["lanes"].expr, "lanes", whole=True, allow_inf=False)
            ok &= v is not None
            kw["lanes"] = v
        if "time" in opts and opts["time"].expr is not None and d.kind == "step":
            cx = Ctx(
                where="a stage's time",
                vars=frozenset({"now", "tokens", "residents", "prefills", "decodes"}),
                draw="a stage's time is evaluated every iteration and must be reproducible",
            )
            t = self.top_expr(opts["time"].expr, cx)
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

    def join(self, pool: Sym, other: Sym, clause: str, span: Span) -> bool:
        if other.count == pool.count or other.count == 1:
            return True
        self.err(
            span,
            f"{clause}: pool '{pool.shown()}' (declared at {at(pool.span)}) and {other.kind} "
            f"'{other.shown()}' (declared at {at(other.span)}) do not join: families join "
            "member for member (equal counts), or share a family of one",
        )
        return False

    def lookup(self, name: str, span: Span, want: str, clause: str) -> Sym | None:
        """A pool or stage by name; `want` is pool | stage | step | link."""
        sym = self.syms.get(name)
        if sym is None:
            kind = "pool" if want == "pool" else "stage"
            near = nearest(
                name,
                self.vocab(
                    ("syms", kind, len(self.syms)),
                    lambda: (s.name for s in self.syms.values() if s.kind == kind),
                ),
            )
            hint = f"; did you mean '{near}'?" if near else ""
            noun = {"pool": "pool", "stage": "stage", "step": "step stage", "link": "link stage"}[
                want
            ]
            self.err(span, f"unknown {noun} '{name}'{hint}")
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
            self.err(
                span,
                f"{clause} needs {need}; '{name}' is {sym.desc()} (declared at {at(sym.span)})",
            )
            return None
        return sym

    def pool(self, d: A.PoolD, sym: Sym) -> ir.CPool | None:
        opts = self.options(d.options)
        ok = True
        kw: dict[str, object] = {}
        cap: Number | None = None
        block: int | None = None
        if "cap" in opts and opts["cap"].expr is not None:
            cap = self.positive(opts["cap"].expr, "cap", whole=False, allow_inf=True)
            if cap is not None and not math.isinf(cap) and not _is_int(cap):
                self.err(
                    opts["cap"].expr.span, f"cap must be a whole number of units, got {number(cap)}"
                )
                cap = None
            ok &= cap is not None
            if cap is not None:
                kw["cap"] = cap if math.isinf(cap) else int(cap)
        if "block" in opts and opts["block"].expr is not None:
            b = self.positive(opts["block"].expr, "block", whole=True, allow_inf=False)
            ok &= b is not None
            if b is not None:
                block = int(b)
                kw["block"] = block
        if cap is not None and block is not None and not math.isinf(cap) and int(cap) % block:
            c = int(cap)
            lo = c // block * block
            hi = lo + block
            use = f"use {lo} or {hi}" if lo > 0 else f"use {hi}"
            self.err(
                opts["cap"].span,
                f"cap {c} is not a multiple of block {block} (the pool would have "
                f"{number(c / block)} blocks); {use}",
            )
            ok = False
        elif cap is not None and not math.isinf(cap):
            blocks = int(cap) // (block or 1) * sym.count
            if blocks > MAX_BLOCKS:
                members = f" × {sym.count:,} members" if sym.count > 1 else ""
                self.err(
                    opts["cap"].span,
                    f"pool '{d.name}' would have {blocks:,} blocks (cap {int(cap):,} / block "
                    f"{block or 1}{members}); a pool has at most {MAX_BLOCKS:,} blocks: use a "
                    "larger block, a smaller cap, or cap inf",
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
                keys = [self.top_expr(k, cx) for k in o.keys]
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
                keys = [self.top_expr(k, cx) for k in o.keys]
                ok &= all(k is not None for k in keys)
                kw["queue"] = ir.QueueBy(tuple(k for k in keys if k is not None), o.span)
            else:
                kw["queue"] = ir.QueueFifo(o.span)
        if "admit" in opts:
            name, span = opts["admit"].names[0]
            st = self.lookup(name, span, "step", "admit via")
            if st is None or not self.join(sym, st, f"admit via {name}", span):
                ok = False
            else:
                kw["admit_via"] = name
        if "preempt" in opts:
            o = opts["preempt"]
            kw["preempt"] = o.word
            if o.word == "lifo" and "admit" not in opts:
                self.err(
                    o.span,
                    "preempt lifo needs admit via: it names the stage whose residents can be preempted",
                )
                ok = False
        if "spill" in opts:
            o = opts["spill"]
            (tier, tier_span), (link, link_span) = o.names
            good = True
            tier_sym = self.lookup(tier, tier_span, "pool", "spill")
            if tier_sym is not None and tier == d.name:
                self.err(tier_span, f"pool '{d.name}' cannot spill to itself; name another pool")
                good = False
            elif tier_sym is None or not self.join(sym, tier_sym, f"spill {tier}", tier_span):
                good = False
            link_sym = self.lookup(link, link_span, "link", "spill … via")
            if link_sym is None or not self.join(sym, link_sym, f"spill via {link}", link_span):
                good = False
            spill_vars = frozenset({"now", "size"})
            draw = "a spill is evaluated for cache entries whose session may have ended"
            work = when = None
            if o.work is not None and o.when is not None:
                work = self.top_expr(o.work, Ctx("a spill's work", spill_vars, True, draw))
                when = self.top_expr(o.when, Ctx("a spill's predicate", spill_vars, True, draw))
            if good and work is not None and when is not None:
                kw["spill"] = ir.CSpill(tier, link, work, when, o.span)
            else:
                ok = False
        if not ok:
            return None
        return ir.CPool(name=d.name, count=sym.count, family=sym.family, span=d.name_span, **kw)  # type: ignore[arg-type]

    # ------------------------------------------------------------------ sessions
    def read_source(self, s: A.SessionD) -> _Table | None:
        assert s.path is not None and s.path_span is not None
        limit: int | None = None
        if s.limit is not None:
            v = self.positive(s.limit, "limit", whole=True, allow_inf=False)
            if v is None:
                return None
            limit = int(v)
        full = s.path if os.path.isabs(s.path) else os.path.join(self.base_dir, s.path)
        jsonl = is_jsonl(s.path)
        try:
            table = (read_jsonl if jsonl else read_table)(full, s.path, limit, s.path_span)
        except SourceError as exc:
            d = exc.diagnostic
            if d.span.file != self.file:
                self.sources[d.span.file] = None  # a source's lines are never shown
            self.diags.append(d)
            return None
        return _Table(
            os.path.abspath(full), s.path, limit, table.columns, table.rows, s.path_span,
            "jsonl" if jsonl else "csv", table.kinds,
        )  # fmt: skip

    def collect_attrs(self, items: Sequence[A.Stmt | A.Arrive]) -> None:
        stack: list[A.Stmt | A.Arrive] = list(items)
        while stack:  # explicit stack: the depth limit is enforced later
            st = stack.pop()
            if isinstance(st, A.Assign):
                self.attr_names.add(st.name)
            elif isinstance(st, A.HoldS | A.RepeatS):
                stack.extend(st.body)
            elif isinstance(st, A.IfS):
                stack.extend(st.then)
                stack.extend(st.otherwise)

    def session(self, s: A.SessionD, table: _Table | None) -> ir.CSession | None:
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
        count = len(table.rows) if table else self.count_of(s.count, f"session class '{s.name}'")
        arrive: ir.ArriveAt | ir.ArriveEvery | None = None
        first_arrive: A.Arrive | None = None
        body: list[ir.Stmt] = []
        ok = True
        for item in s.items:
            if not self.depth_ok(item):
                ok = False
                continue
            if isinstance(item, A.Arrive):
                if first_arrive is not None:
                    self.err(item.span, f"arrive is given twice (first at {at(first_arrive.span)})")
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
                x = self.expr(item.expr, cx)
                if x is None:
                    ok = False
                elif item.kind == "at":
                    arrive = ir.ArriveAt(x, item.span)
                else:
                    arrive = ir.ArriveEvery(x, item.span)
                continue
            st = self.stmt(item, scope)
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
            arrive=arrive
            if arrive is not None
            else ir.ArriveAt(ir.Num(0, s.name_span), s.name_span),
            body=tuple(body),
            family=s.count is not None,
            span=s.name_span,
        )

    def block(self, stmts: list[A.Stmt], scope: _SessionScope) -> tuple[ir.Stmt, ...] | None:
        out = [self.stmt(st, scope) for st in stmts]
        if any(x is None for x in out):
            return None
        return tuple(x for x in out if x is not None)

    def joined(self, pools: Iterable[str]) -> frozenset[str]:
        out = set()
        for name in pools:
            sym = self.syms.get(name)
            if sym is not None and sym.admit_via is not None:
                out.add(sym.admit_via)
        return frozenset(out)

    def stmt(self, st: A.Stmt | A.Arrive, scope: _SessionScope) -> ir.Stmt | None:
        cx = scope.ctx_hold if scope.holds else scope.ctx_stmt
        if scope.holds:
            cx = replace(cx, joined=self.joined(h.pool for h in scope.holds))
        if isinstance(st, A.Assign):
            if st.name in self.const_decls:
                self.err(st.name_span, f"'{st.name}' is a constant; it cannot be assigned")
                self.expr(st.value, cx)
                return None
            if st.name in CONTEXT_VARIABLES:
                self.err(st.name_span, f"'{st.name}' is a context variable; it cannot be assigned")
                self.expr(st.value, cx)
                return None
            v = self.expr(st.value, cx)
            if v is None or not self.slot(v, "value", ""):
                return None
            return ir.SetAttr(st.name, v, st.span)
        if isinstance(st, A.HoldS):
            ref = self.ref(st.ref, "pool", "hold", cx)
            header = replace(
                scope.ctx_header,
                joined=self.joined([*(h.pool for h in scope.holds), st.ref.name]),
            )
            units = self.expr(st.units, header)
            need = self.expr(st.need, header) if st.need is not None else None
            reserve = self.expr(st.reserve, header) if st.reserve is not None else None
            content = self.content(st.content, header)
            scope.holds.append(_Hold(st.ref.name))
            try:
                body = self.block(st.body, scope)
            finally:
                scope.holds.pop()
            good = units is None or self.slot(units, "units", "the hold's units")
            good &= need is None or self.slot(need, "units", "need")
            good &= reserve is None or self.slot(reserve, "reserve", "reserve")
            if not good or ref is None or units is None or body is None:
                return None
            if (st.need is not None and need is None) or (
                st.reserve is not None and reserve is None
            ):
                return None
            if content is None:
                return None
            return ir.Hold(ref, units, need, reserve, body, st.span, content)
        if isinstance(st, A.RunS):
            shared_ok = st.ref.name in cx.joined
            ref = self.ref(st.ref, "step", "run", cx, bare_family_ok=shared_ok)
            amount = self.expr(st.amount, cx)
            if not scope.holds:
                self.err(st.span, "run must be inside a hold: a run computes its hold's context")
                return None
            if ref is None or amount is None:
                return None
            what = "the prefill" if st.kind == "prefill" else "the decode steps"
            if not self.slot(amount, "units", what):
                return None
            return ir.Run(ref, "prefill" if st.kind == "prefill" else "decode", amount, st.span)
        if isinstance(st, A.GrowS):
            amount = self.expr(st.amount, cx)
            sym = self.lookup(st.ref.name, st.ref.name_span, "pool", "grow")
            if sym is None:
                return None
            if st.ref.index is not None:
                self.err(
                    st.ref.span,
                    f"grow takes a pool without an index: it grows the innermost hold on '{sym.name}'",
                )
                return None
            if not any(h.pool == sym.name for h in scope.holds):
                self.err(st.span, f"grow {sym.name} must be inside a hold on '{sym.name}'")
                return None
            if amount is None or not self.slot(amount, "units", "the growth"):
                return None
            return ir.Grow(sym.name, amount, st.span)
        if isinstance(st, A.SendS):
            ref = self.ref(st.ref, "link", "send", cx)
            work = self.expr(st.work, cx)
            if ref is None or work is None or not self.slot(work, "work", "send work"):
                return None
            return ir.Send(ref, work, st.span)
        if isinstance(st, A.WaitS):
            secs = self.expr(st.seconds, cx)
            if secs is None or not self.slot(secs, "seconds", "wait"):
                return None
            return ir.Wait(secs, st.span)
        if isinstance(st, A.RepeatS):
            n = self.expr(st.count, cx)
            if n is not None and not self.slot(n, "count", "the repeat count"):
                n = None
            body = self.block(st.body, scope)
            return None if n is None or body is None else ir.Repeat(n, body, st.span)
        if isinstance(st, A.IfS):
            c = self.expr(st.cond, cx)
            if c is not None and not self.slot(c, "value", ""):
                c = None
            then = self.block(st.then, scope)
            other = self.block(st.otherwise, scope)
            if c is None or then is None or other is None:
                return None
            return ir.If(c, then, other, st.span)
        self.err(st.span, "arrive belongs at the top of a session's body")  # pragma: no cover
        return None

    # ------------------------------------------------------------------ content
    def content(
        self, pieces: list[A.PieceA] | None, header: Ctx
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
        out = [self.piece(p, cx) for p in pieces]
        if any(x is None for x in out):
            return None
        return tuple(x for x in out if x is not None)

    def piece(self, p: A.PieceA, cx: Ctx) -> ir.ContentPiece | None:
        if not self.depth_ok(p):
            return None
        key: ir.Expr | ir.Str | None
        if isinstance(p.key, A.StringE):
            key = ir.Str(p.key.value, p.key.span)
        else:
            key = self.content_key(p.key, cx)
        units = self.expr(p.units, cx)
        if units is not None and _constant(units):
            v = self.evaluate(units, p.units.span)
            if v is None:
                return None
            if not (v > 0 and _is_int(v) and not math.isinf(v)):
                self.err(
                    p.units.span,
                    f"a content piece's units must be a positive whole number, got {number(v)}",
                )
                return None
        if key is None or units is None:
            return None
        return ir.ContentPiece(key, units, p.span)

    def content_key(self, e: A.Expr, cx: Ctx) -> ir.Expr | None:
        """A key's value may be a list or string attribute (or a conditional choosing one);
        anything computed from one is still a compile error."""
        if isinstance(e, A.Name):
            return self.name(e.name, e.span, replace(cx, lists=True))
        if isinstance(e, A.FieldE):
            return self.field(e, replace(cx, lists=True))
        if isinstance(e, A.CondE):
            c = self._expr(e.cond, cx)
            a = self.content_key(e.then, cx)
            b = self.content_key(e.otherwise, cx)
            if c is None or a is None or b is None:
                return None
            return ir.Cond(c, a, b, e.span)
        return self._expr(e, cx)

    def attr(self, name: str, span: Span, cx: Ctx, shown: str) -> ir.Attr | None:
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
                kinds = self.column_kinds.get(name, set())
                whose = "a column of a session's source"
            for kind in ("list", "string"):
                if kind in kinds:
                    some = "" if kinds == {kind} else " in some rows"
                    self.err(
                        span,
                        f"'{shown}' holds {kind}s{some} ({whose}); a {kind} can only be a "
                        f"content key: content ({shown} : UNITS)",
                    )
                    return None
        return ir.Attr(name, span)

    def field(self, e: A.FieldE, cx: Ctx) -> ir.Expr | None:
        """`row.NAME`: a column of the session's source (any name, keywords included)."""
        shown = f"row.{e.name}"
        if e.base != "row":
            self.err(
                e.span,
                f"'{e.base}.{e.name}' means nothing: only row.NAME, a column of the session's "
                "source, is written with a dot",
            )
            return None
        if cx.const is not None:
            self.err(e.span, f"{_must(cx.const)}: '{shown}' is a column of a session's source")
            return None
        if cx.in_session:
            if cx.csv is None:
                self.err(
                    e.span,
                    f"'{shown}' reads a column of the session's source, and this session has "
                    'none (session NAME from "FILE" …)',
                )
                return None
            if e.name not in cx.columns:
                near = nearest(e.name, cx.columns)
                hint = f"; did you mean '{near}'?" if near else ""
                self.err(
                    e.name_span,
                    f"unknown column '{e.name}': the columns of '{cx.csv}' are "
                    f"{shown_columns(cx.columns)}{hint}",
                )
                return None
            return self.attr(e.name, e.span, cx, shown)
        if not cx.attrs:
            self.err(
                e.span,
                f"'{shown}' is a column of a session's source; {cx.where} cannot read "
                "session attributes",
            )
            return None
        if e.name not in self.column_kinds:
            self.err(e.name_span, f"unknown column '{e.name}': no session's source has it")
            return None
        return self.attr(e.name, e.span, cx, shown)

    def slot(self, x: ir.Expr, kind: str, what: str) -> bool:
        """A statement's expression that reads nothing (no variable, attribute, query or
        draw) is evaluated now, so what would stop the run (`1 / 0`, `inf - inf`, units of
        -1 or inf, a repeat count of inf) is a compile-time error. False when it failed.

        `kind`: units | count (made whole as the simulator does), reserve | seconds |
        work (a number ≥ 0, inf allowed), value (anything)."""
        if not _closed(x):
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
            self.err(exc.span, exc.message)
            return False
        except (ArithmeticError, ValueError) as exc:  # pragma: no cover - the domain is closed
            self.err(x.span, f"cannot evaluate this expression: {exc}")
            return False
        return True

    def ref(
        self, r: A.RefA, want: str, clause: str, cx: Ctx, bare_family_ok: bool = False
    ) -> ir.Ref | None:
        sym = self.lookup(r.name, r.name_span, want, clause)
        index: ir.Expr | None = None
        if r.index is not None:
            index = self.expr(r.index, cx)
            if index is None:
                return None
        if sym is None:
            return None
        if not self.index_ok(sym, r.index, index, r.span, clause, bare_family_ok):
            return None
        return ir.Ref(sym.kind, sym.name, index, r.span)

    def index_ok(
        self,
        sym: Sym,
        index_ast: A.Expr | None,
        index: ir.Expr | None,
        span: Span,
        clause: str,
        bare_family_ok: bool = False,
    ) -> bool:
        if index_ast is None:
            if sym.family and sym.count > 1 and not bare_family_ok:
                self.err(
                    span,
                    f"'{sym.name}' is a family of {sym.count}: {clause} must name a member, "
                    f"e.g. {sym.name}[0]",
                )
                return False
            return True
        if not sym.family:
            self.err(
                span,
                f"'{sym.name}' is not a family (it is declared without [N]): it takes no index",
            )
            return False
        if isinstance(index, ir.Num):
            i = index.value
            if not _is_int(i) or not 0 <= i < sym.count:
                self.err(
                    index_ast.span,
                    f"index {number(i)} is out of range: '{sym.name}' has members 0 to {sym.count - 1}",
                )
                return False
        return True

    def check_decl(self, c: A.CheckD) -> ir.CCheck | None:
        cx = Ctx("a check", frozenset({"now"}), draw="checks are tested after every settle")
        x = self.top_expr(c.expr, cx)
        return None if x is None else ir.CCheck(c.label, x, c.span)

    # ------------------------------------------------------------------ expressions
    def depth_ok(self, node: A.Expr | A.Stmt | A.Arrive | A.PieceA) -> bool:
        if node.depth <= MAX_DEPTH:
            return True
        cur: object = node
        for _ in range(MAX_DEPTH):  # walk down the deepest path to where the limit is crossed
            kids = _node_children(cur)
            if not kids:
                break
            cur = max(kids, key=lambda k: getattr(k, "depth", 0))
        span = getattr(cur, "span", node.span)
        self.err(span, f"nesting deeper than {MAX_DEPTH} levels")
        return False

    def top_expr(self, e: A.Expr, cx: Ctx) -> ir.Expr | None:
        return self.expr(e, cx)

    def expr(self, e: A.Expr, cx: Ctx) -> ir.Expr | None:
        if e.depth > MAX_DEPTH and not self.depth_ok(e):
            return None
        return self._expr(e, cx)

    def _expr(self, e: A.Expr, cx: Ctx) -> ir.Expr | None:
        if isinstance(e, A.Number):
            return ir.Num(e.value, e.span)
        if isinstance(e, A.Name):
            return self.name(e.name, e.span, cx)
        if isinstance(e, A.UnaryE):
            x = self._expr(e.operand, cx)
            return None if x is None else ir.Unary(e.op, x, e.span)  # type: ignore[arg-type]
        if isinstance(e, A.BinaryE):
            left = self._expr(e.left, cx)
            right = self._expr(e.right, cx)
            if left is None or right is None:
                return None
            return ir.Binary(e.op, left, right, e.span)  # type: ignore[arg-type]
        if isinstance(e, A.CondE):
            c, a, b = self._expr(e.cond, cx), self._expr(e.then, cx), self._expr(e.otherwise, cx)
            if c is None or a is None or b is None:
                return None
            return ir.Cond(c, a, b, e.span)
        if isinstance(e, A.CallE):
            return self.call(e, cx)
        if isinstance(e, A.DrawE):
            return self.draw(e, cx)
        if isinstance(e, A.FieldE):
            return self.field(e, cx)
        # A.Index outside a query
        assert isinstance(e, A.Index)
        sym = self.syms.get(e.name)
        if sym is None:
            self.name(e.name, e.name_span, cx)
            return None
        self.err(
            e.span,
            f"'{e.name}[…]' is a member of {sym.desc()}; read it through a query, "
            f"e.g. {'free' if sym.kind == 'pool' else 'residents'}({e.name}[…])",
        )
        return None

    def vocab(self, key: tuple[object, ...], names: Callable[[], Iterable[str]]) -> Vocabulary:
        """The names `names()` gives, sorted once per `key` (a kind of place)."""
        v = self._vocab.get(key)
        if v is None:
            v = self._vocab[key] = Vocabulary(names())
        return v

    def readable(self, cx: Ctx) -> list[str]:
        key = ("readable", cx.vars, cx.attrs, cx.columns_only, cx.columns,
               len(self.attr_names), len(self.const_decls))  # fmt: skip
        cached = self._readable.get(key)
        if cached is None:
            cached = self._readable[key] = self._readable_uncached(cx)
        return cached

    def _readable_uncached(self, cx: Ctx) -> list[str]:
        parts: list[str] = []
        if cx.vars:
            parts.append(
                "context variables " + ", ".join(v for v in CONTEXT_VARIABLES if v in cx.vars)
            )
        if cx.attrs:
            names = sorted(self.attr_names)
            if names:
                shown = ", ".join(names[:12]) + (", …" if len(names) > 12 else "")
                parts.append("session attributes " + shown)
        elif cx.columns_only and cx.columns:
            parts.append("columns " + ", ".join(cx.columns))
        if self.const_decls:
            names = sorted(self.const_decls)
            parts.append("constants " + ", ".join(names[:12]) + (", …" if len(names) > 12 else ""))
        if not parts:
            return ["no names can be read here"]
        return ["here one can read: " + "; ".join(parts)]

    def name(self, name: str, span: Span, cx: Ctx) -> ir.Expr | None:
        if name in self.const_decls:
            value = self.const_values.get(name)
            return None if value is None else ir.Num(value, span)
        if cx.const is not None:
            if name in CONTEXT_VARIABLES or name in self.attr_names or name in self.syms:
                self.err(span, f"{_must(cx.const)}: '{name}' is not one")
            else:
                consts = self.vocab(("consts", len(self.const_decls)), lambda: self.const_decls)
                near = nearest(name, consts)
                hint = f"; did you mean '{near}'?" if near else ""
                self.err(span, f"{_must(cx.const)}: unknown name '{name}'{hint}")
            return None
        if name in CONTEXT_VARIABLES:
            if name in cx.vars:
                return ir.Var(name, span)
            self.err(
                span,
                f"'{name}' cannot be read in {cx.where}; it is meaningful in {VAR_PLACES[name]}",
                self.readable(cx),
            )
            return None
        if cx.columns_only:
            if name in cx.columns:
                return self.attr(name, span, cx, name)
            if name in self.attr_names:
                self.err(
                    span,
                    f"an arrival cannot read the attribute '{name}': it may read draws, constants "
                    "and the columns of its CSV",
                )
                return None
        elif cx.attrs and name in self.attr_names:
            return self.attr(name, span, cx, name)
        if name in self.attr_names and not cx.attrs:
            self.err(
                span, f"'{name}' is a session attribute; {cx.where} cannot read session attributes"
            )
            return None
        sym = self.syms.get(name)
        if sym is not None:
            q = "free" if sym.kind == "pool" else "residents"
            self.err(span, f"'{name}' is {sym.desc()}; read it through a query, e.g. {q}({name})")
            return None

        def candidates() -> list[str]:
            names = list(cx.vars) + list(self.const_decls)
            if cx.attrs:
                names += list(self.attr_names)
            if cx.columns_only:
                names += list(cx.columns)
            return names

        key = ("names", cx.vars, cx.attrs, cx.columns_only, cx.columns,
               len(self.attr_names), len(self.const_decls))  # fmt: skip
        near = nearest(name, self.vocab(key, candidates))
        hint = f"; did you mean '{near}'?" if near else ""
        if cx.csv is not None and (cx.attrs or cx.columns_only):
            self.err(
                span,
                f"unknown name '{name}': it is not a column of '{cx.csv}' (its columns are "
                f"{', '.join(cx.columns)}) nor an attribute{hint}",
            )
            return None
        self.err(span, f"unknown name '{name}'{hint}", self.readable(cx))
        return None

    def call(self, e: A.CallE, cx: Ctx) -> ir.Expr | None:
        fn = e.name
        if fn in ("argmin", "argmax"):
            return self.argquery(e, cx)
        if fn in POOL_QUERIES or fn in STAGE_QUERIES:
            if not cx.queries or cx.const is not None:
                what = _must(cx.const) if cx.const else f"{cx.where} cannot query"
                self.err(e.name_span, f"{what}: '{fn}(…)' is a query")
                return None
            if len(e.args) != 1:
                self.err(
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
                self.err(
                    arg.span,
                    f"{fn} takes a {want} name, e.g. {fn}({'kv' if want == 'pool' else 'gpu'})",
                )
                return None
            shared = want == "stage" and r.name in cx.joined
            ref = self.ref(r, want, f"{fn}(…)", cx, bare_family_ok=shared)
            return None if ref is None else ir.Query(fn, ref, e.span)
        if fn in FUNCTIONS:
            lo, hi = FUNCTIONS[fn]
            n = len(e.args)
            if n < lo or (hi is not None and n > hi):
                self.err(e.span, f"{fn} takes {_arity(lo, hi)}, got {n}")
                for a in e.args:
                    self._expr(a, cx)
                return None
            args = [self._expr(a, cx) for a in e.args]
            if any(a is None for a in args):
                return None
            return ir.Call(fn, tuple(a for a in args if a is not None), e.span)
        if fn in DISTRIBUTIONS:
            self.err(e.name_span, f"'{fn}' is a distribution: write draw {fn}(…)")
            return None
        near = nearest(fn, [*FUNCTIONS, *POOL_QUERIES, *STAGE_QUERIES, "argmin", "argmax"])
        hint = f"; did you mean '{near}'?" if near else ""
        self.err(e.name_span, f"unknown function '{fn}'{hint}")
        return None

    def argquery(self, e: A.CallE, cx: Ctx) -> ir.Expr | None:
        fn = e.name
        if not cx.queries or cx.const is not None:
            what = _must(cx.const) if cx.const else f"{cx.where} cannot query"
            self.err(e.name_span, f"{what}: '{fn}(…)' is a query")
            return None
        if len(e.args) != 2 or not all(isinstance(a, A.Name) for a in e.args):
            self.err(e.span, f"{fn} takes a family and a query name, e.g. {fn}(kv, queued)")
            return None
        fam, q = e.args
        assert isinstance(fam, A.Name) and isinstance(q, A.Name)
        sym = self.syms.get(fam.name)
        if sym is None:
            near = nearest(fam.name, self.vocab(("syms", len(self.syms)), lambda: self.syms))
            hint = f"; did you mean '{near}'?" if near else ""
            self.err(fam.span, f"unknown pool or stage '{fam.name}'{hint}")
            return None
        if not sym.family:
            self.err(fam.span, f"{fn} needs a family; '{fam.name}' is declared without [N]")
            return None
        queries = POOL_QUERIES if sym.kind == "pool" else STAGE_QUERIES
        if q.name not in queries:
            near = nearest(q.name, queries)
            hint = f" (did you mean '{near}'?)" if near else ""
            self.err(
                q.span,
                f"'{q.name}' is not a {sym.kind} query{hint}; {sym.kind} queries are "
                f"{', '.join(queries)}",
            )
            return None
        return ir.ArgQuery(fn, ir.Ref(sym.kind, sym.name, None, fam.span), q.name, e.span)  # type: ignore[arg-type]

    def draw(self, e: A.DrawE, cx: Ctx) -> ir.Expr | None:
        if cx.draw is not None:
            if cx.const is not None:
                self.err(e.span, f"{_must(cx.const)}: it cannot draw")
            else:
                self.err(e.span, f"a draw is not allowed in {cx.where}: {cx.draw}")
            return None
        if e.dist not in DISTRIBUTIONS:
            near = nearest(e.dist, DISTRIBUTIONS)
            if near:
                self.err(e.dist_span, f"unknown distribution '{e.dist}'; did you mean '{near}'?")
            else:
                self.err(
                    e.dist_span,
                    f"unknown distribution '{e.dist}'; the distributions are {', '.join(DISTRIBUTIONS)}",
                )
            return None
        lo, hi = DISTRIBUTIONS[e.dist]
        n = len(e.args)
        if n < lo or (hi is not None and n > hi):
            self.err(e.span, f"draw {e.dist} takes {_arity(lo, hi)}, got {n}")
            return None
        args = [self._expr(a, cx) for a in e.args]
        if any(a is None for a in args):
            return None
        return ir.Draw(e.dist, tuple(a for a in args if a is not None), e.span)


@dataclass(frozen=True, slots=True)
class _Table:
    path: str
    written: str
    limit: int | None
    columns: tuple[str, ...]
    rows: tuple[tuple[object, ...], ...]
    span: Span
    format: Literal["csv", "jsonl"]
    kinds: tuple[str, ...]


def _constant(x: ir.Expr) -> bool:
    """Whether x is known at compile time (numbers and pure functions of them)."""
    if isinstance(x, ir.Num):
        return True
    if isinstance(x, ir.Unary):
        return _constant(x.operand)
    if isinstance(x, ir.Binary):
        return _constant(x.left) and _constant(x.right)
    if isinstance(x, ir.Cond):
        return _constant(x.cond) and _constant(x.then) and _constant(x.otherwise)
    if isinstance(x, ir.Call):
        return all(_constant(a) for a in x.args)
    return False


def _most(n: int) -> str:
    return "2^53" if n == MAX_INT else f"{n:,}"


def _must(what: str) -> str:
    if what.startswith(
        "constant "
    ):  # `const A = now;`: "constant 'A' must be a constant" reads badly
        return f"{what} must be known at compile time"
    return f"{what} must be a constant"


def _arity(lo: int, hi: int | None) -> str:
    if hi == lo:
        return f"{lo} argument{'s' if lo != 1 else ''}"
    if hi is None:
        return f"at least {lo} argument{'s' if lo != 1 else ''}"
    return f"{lo} to {hi} arguments"


def _closed(x: ir.Expr) -> bool:
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


def _is_int(v: Number) -> bool:
    return isinstance(v, int) or (isinstance(v, float) and v.is_integer())


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
