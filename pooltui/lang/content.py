"""A hold's `content (KEY : UNITS, …)` compiled to a closure the simulator calls once, at the
hold's first attempt.

    fn = compile_content(hold.content)        # once per hold statement (e.g. in the tables)
    pieces = fn(env)                          # at the hold's first attempt; keep for its life

`pieces` is a tuple of (key, units): key an int, a float or a str; units a positive int. A
key that evaluates to a list (a source attribute) stands for one piece per element, in
order, each with the piece's units; an empty list gives no piece. The hold's content is the
pieces laid end to end from unit 0, then the session's private stream. A hold without the
clause has `()`: all private stream.

`env` is the environment the hold's header is evaluated in (the same `Env`: context
variables as attributes, session attributes in `env.attrs`, queries and draws as methods).
Errors of the spec raise `SpecRuntimeError` located at the piece's key or units: units that
are not a positive whole number, a key that is not a number or a string, a list inside a
list, a key that is not a number (NaN).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from itertools import repeat
from typing import Any

from pooltui.lang.errors import SpecRuntimeError
from pooltui.lang.exprs import compile_expr, normal
from pooltui.lang.ir import Attr, CondKey, ContentPiece, Hold, Span, Str
from pooltui.lang.ir import Key as KeyExpr

Key = int | float | str
_PLAIN = frozenset({int, str})  # key types `_check_key` returns unchanged (not bool: a subclass)
Piece = tuple[Key, int]
Content = tuple[Piece, ...]
ContentFn = Callable[[Any], Content]


def _value(v: Any) -> str:
    if isinstance(v, tuple | list):
        return "a list"
    if isinstance(v, str):
        return "a string"
    if v is None:
        return "nothing"
    return f"a {type(v).__name__}"


def _compile_key(key: KeyExpr) -> Callable[[Any], Any]:
    """The key's raw value: a number, a string, or a tuple of them (from a source)."""
    if isinstance(key, Str):
        value = key.value
        return lambda env: value
    if isinstance(key, Attr):
        name, span = key.name, key.span

        def attr(env: Any) -> Any:
            try:
                return env.attrs[name]
            except KeyError:
                raise SpecRuntimeError(
                    f"attribute '{name}' is read before it is set", span
                ) from None

        return attr
    if isinstance(key, CondKey):
        c = compile_expr(key.cond)
        a, b = _compile_key(key.then), _compile_key(key.otherwise)
        return lambda env: a(env) if c(env) else b(env)
    return compile_expr(key)


def _check_key(k: Any, span: Span, inner: bool) -> Key:
    if isinstance(k, bool):
        return int(k)
    if isinstance(k, str):
        return k
    if isinstance(k, int | float):
        if isinstance(k, float) and math.isnan(k):
            raise SpecRuntimeError("a content key is not a number (NaN)", span)
        return normal(k)
    if isinstance(k, tuple | list):
        raise SpecRuntimeError(
            "a content key's list holds a list: a list's elements are numbers or strings"
            if inner
            else "a content key is a list inside a list",
            span,
        )
    raise SpecRuntimeError(f"a content key must be a number or a string, not {_value(k)}", span)


def _compile_piece(piece: ContentPiece) -> Callable[[Any, list[Piece]], None]:
    key = _compile_key(piece.key)
    units = compile_expr(piece.units)
    key_span, units_span = piece.key.span, piece.units.span

    def add(env: Any, out: list[Piece]) -> None:
        k = key(env)
        u = units(env)
        if isinstance(u, bool) or not isinstance(u, int | float):
            raise SpecRuntimeError(
                f"a content piece's units are {_value(u)}, not a number", units_span
            )
        if not (u > 0 and not math.isinf(u) and float(u).is_integer()):
            raise SpecRuntimeError(
                f"a content piece's units must be a positive whole number, got {normal(u)}",
                units_span,
            )
        n = int(u)
        if isinstance(k, tuple | list):
            if set(map(type, k)) <= _PLAIN:  # whole numbers and strings: as they are
                out.extend(zip(k, repeat(n)))
                return
            for x in k:
                out.append((_check_key(x, key_span, True), n))
        else:
            out.append((_check_key(k, key_span, False), n))

    return add


def compile_content(pieces: tuple[ContentPiece, ...]) -> ContentFn:
    """The closure that evaluates a hold's `content` clause: `fn(env) -> Content`."""
    if not pieces:
        return lambda env: ()
    parts = [_compile_piece(p) for p in pieces]

    def content(env: Any) -> Content:
        out: list[Piece] = []
        for part in parts:
            part(env, out)
        return tuple(out)

    return content


def content_of(hold: Hold, env: Any) -> Content:
    """The pieces of `hold` in `env` (compiles each call: precompile with compile_content
    where it is called often)."""
    return compile_content(hold.content)(env)
