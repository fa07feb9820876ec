"""AST to IR: the checker, its diagnostics, and the order of its passes.

The checker reports every independent error it finds (a failed part yields None and the
check goes on; uses of a failed part stay silent so one mistake is reported once). It is
recursive over expressions and statements, so it first refuses anything nested deeper than
`expressions.MAX_DEPTH`; the AST records each node's depth for that.

`Checker` is one object: the names the spec declares (constants, pools and stages,
session attributes, source columns), the diagnostics, and the sorted vocabularies for
"did you mean". The rules live in one module per concern, as functions that take the
checker first:

    names         Ctx, Sym: names, and where each may be read
    expressions   operators, calls, queries, draws, references; the nesting limit
    closed        compile-time evaluation of closed expressions
    constants     constants (resolved iteratively), folded options and counts
    declarations  pools, stages, options, families; checks
    sources       a session's CSV or JSONL source, read at compile time
    pieces        a hold's content pieces
    sessions      session classes and their statements

This module owns `program`: the declarations sorted by kind, what a spec gives once (the
seed; each constant's and session class's name), and the passes in order. Every other rule
lives in the modules above; this one may not grow one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from pooltui.lang import ast as A
from pooltui.lang import closed, constants, declarations, expressions, ir, names, sources
from pooltui.lang.errors import Diagnostic
from pooltui.lang.exprs import CONTEXT_VARIABLES, MAX_INT, Number
from pooltui.lang.ir import Span
from pooltui.lang.names import Ctx, Sym
from pooltui.lang.sessions import collect_attrs, session
from pooltui.lang.words import Vocabulary, number

__all__ = ["Checker", "Ctx", "Sym"]


class Checker:
    """The names the spec declares, the diagnostics, and the passes over the AST."""

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
        self.readable_notes: dict[tuple[object, ...], list[str]] = {}

    def err(self, span: Span, msg: str, notes: Sequence[str] = ()) -> None:
        self.diags.append(Diagnostic(span, msg, notes=tuple(notes)))

    def vocab(self, key: tuple[object, ...], names: Callable[[], Iterable[str]]) -> Vocabulary:
        """The names `names()` gives, sorted once per `key` (a kind of place)."""
        v = self._vocab.get(key)
        if v is None:
            v = self._vocab[key] = Vocabulary(names())
        return v

    def program(self, decls: list[A.Decl], source: str, header: str) -> ir.Program | None:
        seeds: list[A.SeedD] = []
        stages: list[A.StageD] = []
        pools: list[A.PoolD] = []
        sessions: list[A.SessionD] = []
        checks: list[A.CheckD] = []
        for d in decls:
            if isinstance(d, A.SeedD):
                if seeds:
                    self.err(d.span, f"seed is given twice (first at {names.at(seeds[0].span)})")
                else:
                    seeds.append(d)
            elif isinstance(d, A.ConstD):
                first = self.const_decls.get(d.name)
                if first is not None:
                    self.err(
                        d.name_span,
                        f"duplicate constant '{d.name}' (first declared at {names.at(first.name_span)})",
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
        constants.resolve(self)

        seed = 0
        if seeds:
            v = constants.fold(self, seeds[0].expr, "seed")
            if v is not None:
                if not closed.is_int(v) or v < 0:
                    self.err(
                        seeds[0].expr.span, f"seed must be a whole number ≥ 0, got {number(v)}"
                    )
                elif v > MAX_INT:
                    self.err(seeds[0].expr.span, f"seed must be at most 2^53, got {number(v)}")
                else:
                    seed = int(v)

        # Pools and stages share one namespace; session classes have their own.
        stage_syms = [declarations.declare_stage(self, s) for s in stages]
        pool_syms = [declarations.declare_pool(self, p) for p in pools]
        declarations.register(self, stage_syms, "stage")
        declarations.register(self, pool_syms, "pool")
        seen_sessions: dict[str, A.SessionD] = {}
        for s in sessions:
            first_s = seen_sessions.get(s.name)
            if first_s is not None:
                self.err(
                    s.name_span,
                    f"duplicate session class '{s.name}' (first declared at {names.at(first_s.name_span)})",
                )
            else:
                seen_sessions[s.name] = s

        tables = {id(s): sources.read_source(self, s) for s in sessions if s.path is not None}
        for s in sessions:
            collect_attrs(self, s.items)
            table = tables.get(id(s))
            if table is not None:
                self.attr_names.update(table.columns)
                for c, k in zip(table.columns, table.kinds, strict=True):
                    self.column_kinds.setdefault(c, set()).update(k.split("|"))

        c_stages = [
            declarations.stage(self, d, sym) for d, sym in zip(stages, stage_syms, strict=True)
        ]
        c_pools = [declarations.pool(self, d, sym) for d, sym in zip(pools, pool_syms, strict=True)]
        c_pools = declarations.reload_tiers(c_pools)
        c_sessions = [session(self, s, tables.get(id(s))) for s in sessions]
        c_checks = [declarations.check_decl(self, c) for c in checks]
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

    def expr(self, e: A.Expr, cx: Ctx) -> ir.Expr | None:
        """An expression read in `cx` (the front end checks a breakpoint condition so)."""
        return expressions.expr(self, e, cx)
