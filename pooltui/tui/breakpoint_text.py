"""How a breakpoint is written (`parse_breakpoint`): the three kinds and their options as
the breakpoints screen and `pooltui render --break` take them (breakpoints.py says what
each is), the names a spec declares (`Names`), against which a bare word is resolved,
and the refusal, saying what would make it fire, of a breakpoint that never can. No
Textual here."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from pooltui.lang.errors import Diagnostic, render
from pooltui.lang.ir import Span
from pooltui.lang.words import closest, number
from pooltui.sim.events import MOMENTS
from pooltui.tui.breakpoints import FIGURES, OPERATORS, Breakpoint, BreakpointError

# `FIGURE OP VALUE`: a figure comparison whatever VALUE is (a word that is not a number
# is refused as such, not taken for a name); `KEY=NAME` narrows instead.
_COMPARISON = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(>=|<=|==|!=|>|<|=)(.*)")
# NUMBER as the language writes it (language.md §2): `_` between digits, `inf`; no NaN.
_NUMBER = re.compile(
    r"-?(?:inf|[0-9]+(?:_[0-9]+)*(?:\.(?:[0-9]+(?:_[0-9]+)*)?)?(?:[eE][+-]?[0-9]+)?)"
)


@dataclass(frozen=True)
class Names:
    """What a spec declares, so a bare word in a breakpoint can be resolved and a typo
    reported with suggestions."""

    pools: tuple[str, ...] = ()  # names and member labels
    stages: tuple[str, ...] = ()
    classes: tuple[str, ...] = ()
    sessions: tuple[tuple[str, int], ...] = ()  # (class, how many sessions it has)
    pool_members: tuple[tuple[str, int], ...] = ()  # (pool, members: 1 unless a family)
    stage_members: tuple[tuple[str, int], ...] = ()
    # The pools that can make each moment only some pools make (`spill`: those that spill;
    # `spilled`: the tiers spilled into; …) and `sharing`: those whose admissions can share
    # blocks with another hold. None: not known (no program), nothing refused for them.
    makes: tuple[tuple[str, tuple[str, ...]], ...] | None = None
    sharing: tuple[str, ...] | None = None
    checks: int | None = None  # the spec's `check`s (`check-failed` needs one); None: not known
    # The classes whose one session is named as the class, with no index (a plain `session
    # s`: `s`, never `s[0]`); the others' are `class[i]`, one alone too. None: not known.
    unindexed: tuple[str, ...] | None = None

    def known(self) -> bool:
        return bool(self.pools or self.stages or self.classes)

    def has(self, word: str) -> bool:  # a pool, stage or class may be called `at`
        return word in (*self.pools, *self.stages, *self.classes)

    @staticmethod
    def of(program: Any, pools: Iterable[str] = (), stages: Iterable[str] = ()) -> Names:
        """The names `program` declares (an IR program, or None), with the member labels
        a snapshot shows (`pools`, `stages`)."""
        pool_decls = getattr(program, "pools", ())
        stage_decls = getattr(program, "stages", ())
        classes = getattr(program, "sessions", ())
        return Names(
            (*(p.name for p in pool_decls), *pools),
            (*(s.name for s in stage_decls), *stages),
            tuple(c.name for c in classes),
            tuple((c.name, int(c.count)) for c in classes),
            tuple((p.name, int(getattr(p, "count", 1))) for p in pool_decls),
            tuple((s.name, int(getattr(s, "count", 1))) for s in stage_decls),
            _makes(pool_decls) if program is not None else None,
            _sharing(classes) if program is not None else None,
            len(getattr(program, "checks", ())) if program is not None else None,
            tuple(c.name for c in classes if not (c.family or c.source))
            if program is not None
            else None,
        )


def _makes(pools: Iterable[Any]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Per moment only some pools make, the pools that can make it (the event's pool)."""
    spills = tuple(p.name for p in pools if getattr(p, "spill", None) is not None)
    tiers = tuple(dict.fromkeys(p.spill.tier for p in pools if getattr(p, "spill", None)))
    reloads = tuple(p.name for p in pools if getattr(p, "reload", None) is not None)
    return (
        ("spill", spills),
        ("spilled", tiers),
        ("spill-drop", tiers),
        ("reload", reloads),
        ("reloaded", reloads),
    )


def _sharing(classes: Iterable[Any]) -> tuple[str, ...]:
    """The pools whose admissions can hit blocks another hold holds: a hold with `content`
    (sessions share by it), or one nested in a hold of the same pool (a session's private
    stream is the same in both). Nothing else makes two holds hold one block."""
    found: dict[str, None] = {}
    stack: list[tuple[Any, tuple[str, ...]]] = [
        (st, ()) for c in classes for st in getattr(c, "body", ())
    ]
    while stack:
        st, outer = stack.pop()
        ref = getattr(st, "pool", None)
        name = getattr(ref, "name", None)
        inner = outer
        if isinstance(name, str) and hasattr(st, "content"):  # a hold
            if st.content or name in outer:
                found[name] = None
            inner = (*outer, name)
        for part in ("body", "then", "otherwise"):
            stack.extend((x, inner) for x in getattr(st, part, ()))
    return tuple(found)


_MAKERS = {  # what a moment's pools do, for its refusal: (in words, whom it names)
    "spill": ("spills", "does not spill", "the pools that do"),
    "spilled": ("spills", "nothing spills into", "the pools that are spilled into"),
    "spill-drop": ("spills", "nothing spills into", "the pools that are spilled into"),
    "reload": ("reloads", "does not reload", "the pools that do"),
    "reloaded": ("reloads", "does not reload", "the pools that do"),
}


def _moment_can_fire(bp: Breakpoint, names: Names) -> None:
    """A moment no pool of the spec makes, or a `shared` above 0 where no block is ever
    shared, can never fire: refuse it, saying what would make it."""
    moment = bp.moment or ""
    if moment == "check-failed" and names.checks == 0:
        raise BreakpointError(
            "check-failed can never fire: this spec has no check (a user invariant, "
            '`check "LABEL" (EXPR);`, tested after every settle)'
        )
    base = bp.pool.split("[", 1)[0] if bp.pool is not None else None
    makers = dict(names.makes or ()).get(moment)
    if makers is not None:
        does, does_not, whom = _MAKERS[moment]
        if not makers:
            how = (
                "a pool spills with `spill TIER via LINK (WORK) when (PRED);`"
                if does == "spills"
                else "a pool that spills reloads with `reload via LINK (WORK);`"
            )
            raise BreakpointError(f"{moment} can never fire: no pool of this spec {does} ({how})")
        if base is not None and base not in makers:
            said = f"{does_not} {base}" if does_not.startswith("nothing") else f"{base} {does_not}"
            raise BreakpointError(
                f"{moment} pool={bp.pool} can never fire: {said} ({whom}: {', '.join(makers)})"
            )
    if names.sharing is None:
        return
    pools = names.sharing if base is None else tuple(p for p in names.sharing if p == base)
    for key, op, value in bp.figures:
        if key == "shared" and not pools and not OPERATORS[op](0, value):
            where = "" if base is None or not names.sharing else f" in {base}"
            raise BreakpointError(
                f"shared{op}{number(value)} can never fire: no hold of this spec shares blocks"
                f"{where}, so shared is always 0 (blocks are shared by `content (…)`, or by a "
                "session's holds of one pool nested in each other)"
            )


def never_made(moment: str | None, names: Names) -> str | None:
    """Why the spec never makes a `moment` event, as `_moment_can_fire` refuses its
    breakpoint (`spill` where no pool spills), for `]`/`[`: said at once rather than after
    a search of the whole run. None when it may make one (or the names are not known)."""
    if moment is None or not names.known():
        return None
    try:
        _moment_can_fire(Breakpoint(0, "moment", moment=moment), names)
    except BreakpointError as exc:
        return f"{moment} never happens here: {exc.text.partition('can never fire: ')[2]}"
    return None


def never_named(session: str, names: Names) -> str | None:
    """Why `session` (`chat[99]`, of a class the spec has) is no session of the spec, as
    `admit session=chat[99]` is refused, for the event log's filter; None when it may be
    one. A class alone (`chat`) is a filter's, so it is never refused here."""
    if not names.sessions or "[" not in session:
        return None
    try:
        _can_fire("session", session, names)
    except BreakpointError as exc:
        return f"there is no session {session}: {exc.text.partition('can never fire: ')[2]}"
    return None


def parsed_again(
    breakpoints: Iterable[Breakpoint], parse: Callable[[str], Breakpoint]
) -> tuple[list[Breakpoint], list[str]]:
    """Each breakpoint parsed again (a reloaded spec), keeping its number, state and
    options: (those kept, a line for each that no longer parses)."""
    kept: list[Breakpoint] = []
    dropped: list[str] = []
    for bp in breakpoints:
        text = bp.describe()
        try:
            new = parse(text)
        except Exception as exc:
            first = str(getattr(exc, "text", exc)).splitlines()[0]
            dropped.append(f"breakpoint #{bp.id} ({text}) dropped: {first}")
            continue
        new.id, new.enabled, new.one_shot, new.ignore = bp.id, bp.enabled, bp.one_shot, bp.ignore
        kept.append(new)
    return kept, dropped


_KEYS = {"pool": "pool", "stage": "stage", "class": "session_class", "session": "session"}


def _suggest(word: str, choices: Iterable[str]) -> str:
    close = closest(word, choices, n=3, cutoff=0.5)
    return f"; did you mean {' or '.join(close)}?" if close else ""


def _parse_options(text: str, bp: Breakpoint) -> None:
    for raw in re.split(r"[,\s]+(?=once|ignore|off|disabled)", text.strip()):
        opt = raw.strip().strip(",").strip()
        if not opt:
            continue
        if opt == "once":
            bp.one_shot = True
        elif opt in ("off", "disabled"):
            bp.enabled = False
        else:
            m = re.fullmatch(r"ignore\s*=?\s*(\S+)", opt)
            if not m:
                raise BreakpointError(
                    f"unknown option {opt!r}: options are once, ignore N, off (after a ';')"
                )
            if not re.fullmatch(r"[0-9]+(?:_[0-9]+)*", m.group(1)):  # as a spec writes it
                raise BreakpointError(
                    f"ignore takes a whole number of hits to let by (ignore 2), not {m.group(1)!r}"
                )
            bp.ignore = int(m.group(1))


def parse_breakpoint(
    text: str,
    names: Names | None = None,
    compile_condition: Callable[[str], Any] | None = None,
) -> Breakpoint:
    """Parse a breakpoint as typed in the breakpoints screen. `compile_condition(text)`
    compiles a condition (raising an exception whose `render()` gives located errors)."""
    body, _, options = text.partition(";")
    body = body.strip()
    if not body:
        raise BreakpointError(
            "empty breakpoint: write a moment (admit pool=kv), a condition (if EXPR) or a time (at T)"
        )
    head, _, rest = body.partition(" ")
    rest = rest.strip()
    bp: Breakpoint
    if head in ("if", "when"):
        if not rest:
            raise BreakpointError("a condition breakpoint needs an expression: if EXPR")
        expr: Any = None
        if compile_condition is not None:
            try:
                expr = compile_condition(rest)
            except Exception as exc:
                render = getattr(exc, "render", None)
                raise BreakpointError(render() if callable(render) else str(exc)) from None
        bp = Breakpoint(0, "condition", condition=rest, expr=expr)
    elif head in ("at", "time", "t"):
        try:
            seconds = float(rest.rstrip("s").strip())
        except ValueError:
            raise BreakpointError(
                f"a time breakpoint needs a number of seconds: at T, not {rest!r}"
            ) from None
        if seconds < 0 or math.isnan(seconds):
            raise BreakpointError("a time breakpoint needs a time >= 0")
        bp = Breakpoint(0, "time", time=seconds)
    else:
        if head not in MOMENTS:
            raise BreakpointError(
                f"unknown moment {head!r}{_suggest(head, MOMENTS)}\n"
                f"moments: {', '.join(MOMENTS)}; or write `if EXPR` or `at T`"
            )
        bp = Breakpoint(0, "moment", moment=head)
        # `shared > 0` is one word, `shared>0`, as is `pool = kv`.
        rest = re.sub(r"\s*(>=|<=|==|!=|>|<|=)\s*", r"\1", rest)
        for word in rest.split():
            comparison = _COMPARISON.fullmatch(word)
            named = re.fullmatch(r"(\w+)(>=|<=|==|!=|>|<)(.*)", word)
            if named is not None and named.group(1) in _KEYS:
                raise BreakpointError(f"{named.group(1)}= takes a name: {named.group(1)}=NAME")
            if comparison is not None and comparison.group(1) not in _KEYS:
                key, op, value = comparison.groups()
                if op != "=" or key in _ALL_FIGURES or _NUMBER.fullmatch(value):
                    bp.figures += (_parse_figure(head, key, op, value),)
                    continue
            key, eq, value = word.partition("=")
            if eq:
                if key not in _KEYS:
                    raise BreakpointError(
                        f"unknown narrowing {key!r}{_suggest(key, _KEYS)}: use pool=, stage=, class=, session="
                    )
                if not value:
                    raise BreakpointError(f"{key}= needs a name")
                if names is not None and names.known():
                    _can_fire(key, value, names)
                setattr(bp, _KEYS[key], value)
            else:
                if word in _OTHER_KINDS and (names is None or not names.has(word)):
                    raise BreakpointError(_another_kind(text, head, word))
                _narrow_bare(bp, word, names)
        if names is not None and names.known():
            _moment_can_fire(bp, names)
    if options:
        _parse_options(options, bp)
    return bp


_CONDITION = "condition: a condition breakpoint is `if EXPR` on its own (it stops where EXPR"
_OTHER_KINDS = {  # words after a moment that start another kind of breakpoint
    "if": f"{_CONDITION} becomes true)",
    "when": f"{_CONDITION} becomes true)",
    "at": "time: a time breakpoint is `at T` on its own (the first event at or after T seconds)",
}


def _another_kind(text: str, moment: str, word: str) -> str:
    """A moment followed by `if EXPR` or `at T`, breakpoints of their own (three kinds,
    one each): located at `word`, a caret under it and what follows, a note of what may
    follow the moment."""
    body = text.partition(";")[0].rstrip()
    found = re.compile(rf"(?<!\S){word}(?!\S)").search(body, body.index(moment) + len(moment))
    figures = ("units", *FIGURES.get(moment, ()))
    note = (
        f"after `{moment}` come pool=, stage=, class=, session= (or a bare name) and"
        f" comparisons of its figures, {', '.join(figures)} (`{moment} {figures[-1]}>0`)"
    )
    span = Span("<breakpoint>", 1, found.start() + 1 if found else 1, 1, len(body) + 1)
    return render(
        Diagnostic(span, f"a moment breakpoint takes no {_OTHER_KINDS[word]}", "error", (note,)),
        text,
    )


_ALL_FIGURES = frozenset(("units", *(f for figures in FIGURES.values() for f in figures)))


def _parse_figure(moment: str, key: str, op: str, value: str) -> tuple[str, str, float]:
    """`shared>0` on `admit`: a figure the moment has, or a refusal naming those it has."""
    figures = ("units", *FIGURES.get(moment, ()))
    if key not in figures:
        raise BreakpointError(
            f"{key}{op}{value} can never fire: {moment} events have no figure {key!r}"
            f"{_suggest(key, figures)} (its figures: {', '.join(figures)})"
        )
    if not _NUMBER.fullmatch(value):
        raise BreakpointError(
            f"{key}{op}{value}: a figure is compared with a number, not {value!r}"
            f" (`{moment} {key}>0`)"
        )
    return key, op, float(value)


def _member(word: str) -> tuple[str, int | None] | None:
    """`kv` -> ("kv", None); `kv[2]` -> ("kv", 2); anything else None."""
    m = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)(?:\[(\d+)\])?", word)
    if m is None:
        return None
    return m.group(1), int(m.group(2)) if m.group(2) is not None else None


def _can_fire(key: str, value: str, names: Names) -> None:
    """A narrowing to something this spec does not have can never fire: refuse it, say
    why, suggest the nearest name."""
    if key == "class":
        if value not in names.classes:
            raise BreakpointError(
                f"class={value} can never fire: this spec's session classes are "
                f"{_listed(names.classes)}{_suggest(value, names.classes)}"
            )
        return
    kinds = {
        "pool": ("pool", names.pools, dict(names.pool_members)),
        "stage": ("stage", names.stages, dict(names.stage_members)),
        "session": ("session class", names.classes, dict(names.sessions)),
    }
    what, choices, counts = kinds[key]
    parts = _member(value)
    bases = sorted({c.split("[", 1)[0] for c in choices})
    if parts is None or parts[0] not in bases:
        hint = _suggest(value, [*choices, *bases])
        if not hint:  # perhaps another kind of name: pool=gpu when gpu is a stage
            for other, names_of in (("pool", names.pools), ("stage", names.stages)):
                if other != key:
                    near = closest(value, names_of, n=1, cutoff=0.5)
                    if near:
                        hint = f"; did you mean {other}={near[0]}?"
                        break
        raise BreakpointError(
            f"{key}={value} can never fire: this spec has no {what} "
            f"{parts[0] if parts else value!r} (it has {_listed(bases)}){hint}"
        )
    base, index = parts
    count = counts.get(base)
    unindexed = names.unindexed
    if key == "session" and index is not None and unindexed is not None and base in unindexed:
        raise BreakpointError(  # the filter says it too (`never_named`)
            f"{key}={value} can never fire: {base} is a single session, named {base} "
            f"without an index; did you mean {base}?"
        )
    indexed = unindexed is not None and base not in unindexed  # a family of one too
    if key == "session" and index is None and ((count or 0) > 1 or indexed):
        raise BreakpointError(
            f"session={value} names a class, not one session: write class={value}, "
            f"or session={value}[0] (0 to {max(0, (count or 1) - 1)})"
        )
    if index is not None and count is not None and index >= count:
        one = "session" if key == "session" else "member"
        raise BreakpointError(
            f"{key}={value} can never fire: {base} has {count} {one}{'s' if count != 1 else ''}"
            f" ({base}[0] to {base}[{count - 1}])"
            + (f"; did you mean {base}[{count - 1}]?" if count else "")
        )


def _listed(names: Iterable[str]) -> str:
    shown = list(names)
    return ", ".join(shown) if shown else "none"


def _narrow_bare(bp: Breakpoint, word: str, names: Names | None) -> None:
    """A bare word after the moment: a pool, a stage, a class, or a session `class[i]`."""
    if names is not None:
        base = word.split("[", 1)[0]
        if word in names.pools or base in names.pools:
            bp.pool = word
            return
        if word in names.stages or base in names.stages:
            bp.stage = word
            return
        if word in names.classes:
            bp.session_class = word
            return
        if base in names.classes and "[" in word:
            _can_fire("session", word, names)
            bp.session = word
            return
        every = (*names.pools, *names.stages, *names.classes)
        raise BreakpointError(
            f"{word!r} is not a pool, stage or session class of this spec{_suggest(word, every)}"
        )
    if "[" in word:
        bp.session = word
    else:
        raise BreakpointError(f"say what {word!r} is: pool={word}, stage={word} or class={word}")
