"""The spec language: grammar, AST with spans, checker, IR, located errors.

Public API (the rest of pooltui uses only these):

    compile_file(path) -> Program                 # raises SpecError
    compile_source(text, file, base_dir) -> Program
    compile_condition(text, program, file) -> Expr   # a breakpoint condition or a watch
    SpecError, SpecRuntimeError, Diagnostic, render
"""

from pooltui.lang.errors import Diagnostic, SpecError, SpecRuntimeError, render
from pooltui.lang.ir import Program

__all__ = [
    "Diagnostic",
    "Program",
    "SpecError",
    "SpecRuntimeError",
    "compile_condition",
    "compile_file",
    "compile_source",
    "render",
]


def __getattr__(name: str) -> object:
    # The front end proper loads lazily, so importing the IR stays cheap.
    if name in ("compile_file", "compile_source", "compile_condition"):
        from pooltui.lang import frontend

        return getattr(frontend, name)
    raise AttributeError(name)
