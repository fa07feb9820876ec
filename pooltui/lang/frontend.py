"""The front end's public API: spec text (or a file) to a checked `Program`.

Only `SpecError` ever leaves these functions: unreadable files, text that is not UTF-8,
oversized input, syntax errors and semantic errors all become located diagnostics.
"""

from __future__ import annotations

import errno
import os

from pooltui.lang import ast as A
from pooltui.lang.checker import Checker, Ctx, Sym
from pooltui.lang.errors import Diagnostic, SpecError, escaped
from pooltui.lang.ir import CStage, Expr, Hold, If, Program, Repeat, SetAttr, Span, Stmt
from pooltui.lang.parser import parse

# Specs are written by hand; a cap keeps a stray multi-megabyte file from stalling the
# parser (which reads about half a megabyte per second).
MAX_SPEC_BYTES = 1 << 20


def _first(file: str, message: str, source: str = "") -> SpecError:
    return SpecError([Diagnostic(Span(file, 1, 1, 1, 2), message)], source=source)


def read_spec(path: str) -> bytes:
    """The spec's bytes; OSError when it cannot be read (the CLI words that itself). At most
    one byte past the limit is read, so `/dev/zero` is "too large", not a full memory."""
    if "\0" in path:  # `open` would raise ValueError: no file is named so
        raise OSError(errno.EINVAL, "a file name cannot hold a NUL character")
    with open(path, "rb") as f:
        return f.read(MAX_SPEC_BYTES + 1)


def cannot_read(path: str, exc: OSError) -> str:
    """A spec that cannot be read, in the words of every command and of the app:
    `cannot read 'PATH': reason`, the name escaped (`escaped`: a name cannot drive the
    terminal). A command line puts `pooltui: ` before it; the app does not."""
    return f"cannot read '{escaped(path)}': {exc.strerror or exc}"


def compile_file(path: str) -> Program:
    try:
        data = read_spec(path)
    except OSError as exc:
        raise _first(path, cannot_read(path, exc)) from None
    return compile_bytes(data, path, os.path.dirname(os.path.abspath(path)))


def compile_bytes(data: bytes, file: str, base_dir: str | None = None) -> Program:
    if len(data) > MAX_SPEC_BYTES:
        raise _first(
            file,
            f"spec too large: more than {MAX_SPEC_BYTES:,} bytes (the limit); is this a spec?",
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        good = data[: exc.start].decode("utf-8", errors="replace")
        line = good.count("\n") + 1
        col = len(good) - (good.rfind("\n") + 1) + 1
        shown = data.decode("utf-8", errors="replace")
        diag = Diagnostic(
            Span(file, line, col, line, col + 1),
            f"the spec is not UTF-8 text: byte 0x{data[exc.start]:02x} cannot start a character here",
        )
        raise SpecError([diag], source=shown) from None
    return compile_source(text, file, base_dir)


def header_comment(text: str) -> str:
    """The comment block the spec opens with, `# ` stripped (blank lines before it skipped)."""
    out: list[str] = []
    for raw in text.split("\n"):
        line = raw.strip()
        if not out and not line:
            continue
        if not line.startswith("#"):
            break
        body = line[1:]
        out.append(body[1:] if body.startswith(" ") else body)
    return "\n".join(out).strip("\n")


def compile_source(text: str, file: str = "<spec>", base_dir: str | None = None) -> Program:
    if text.startswith("\ufeff"):
        text = text[1:]
    if len(text) > MAX_SPEC_BYTES:
        raise _first(
            file, f"spec too large: {len(text):,} characters (the limit is {MAX_SPEC_BYTES:,})"
        )
    if base_dir is None:
        base_dir = (
            os.path.dirname(os.path.abspath(file)) if not file.startswith("<") else os.getcwd()
        )
    decls, diags = parse(text, file)
    if diags or decls is None:
        raise SpecError(diags, source=text)
    checker = Checker(file, base_dir)
    program = checker.program(decls, text, header_comment(text))
    if checker.diags or program is None:
        # Source order (the checker works kind by kind); a CSV's own errors after the spec's.
        diags = sorted(checker.diags, key=lambda d: (d.span.file != file, d.span.line, d.span.col))
        raise SpecError(diags, source=text, sources=checker.sources)
    return program


def compile_condition(
    text: str, program: Program, file: str = "<condition>", what: str = "a breakpoint condition"
) -> Expr:
    """A breakpoint condition or a watch (`what`: "a watch"): `now`, pool/stage queries,
    argmin/argmax and the program's constants; no draws, attributes or other context
    variables. Its errors name it (`what`)."""
    if len(text) > 10_000:
        raise _first(file, f"{what.split(' ', 1)[-1]} too long", source=text[:200])
    tree, diags = parse(text, file, start="condition", what=what)
    if diags or tree is None:
        raise SpecError(diags, source=text)
    checker = Checker(file, os.getcwd())
    for name, value in program.consts:
        checker.const_decls[name] = A.ConstD(
            name,
            Span(file, 0, 0, 0, 0),
            A.Number(value, Span(file, 0, 0, 0, 0)),
            Span(file, 0, 0, 0, 0),
        )
        checker.const_values[name] = value
    for st in program.stages:
        checker.syms[st.name] = _stage_sym(st)
    for p in program.pools:
        checker.syms[p.name] = Sym("pool", p.name, p.count, p.family, p.span, admit_via=p.admit_via)
    checker.attr_names.update(_attribute_names(program))  # for "is a session attribute"
    cx = Ctx(
        what,
        frozenset({"now"}),
        draw=f"{what} is evaluated while debugging and must not change the run",
    )
    expr = checker.expr(tree, cx)
    if checker.diags or expr is None:
        raise SpecError(checker.diags, source=text)
    return expr


def _stage_sym(st: CStage) -> Sym:
    return Sym("stage", st.name, st.count, st.family, st.span, stage_kind=st.kind)


def _attribute_names(program: Program) -> set[str]:
    names: set[str] = set()
    stack: list[Stmt] = []
    for session in program.sessions:
        if session.source is not None:
            names.update(session.source.columns)
        stack.extend(session.body)
    while stack:
        st = stack.pop()
        if isinstance(st, SetAttr):
            names.add(st.name)
        elif isinstance(st, Hold | Repeat):
            stack.extend(st.body)
        elif isinstance(st, If):
            stack.extend(st.then)
            stack.extend(st.otherwise)
    return names
