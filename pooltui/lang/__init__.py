"""The spec language: grammar, AST with spans, checker, IR, located errors.

Public API (the rest of pooltui uses only these):

    compile_file(path) -> Program                 # raises SpecError
    compile_source(text, file, base_dir) -> Program
    compile_condition(text, program, file) -> Expr   # a breakpoint condition or a watch
    SpecError, SpecRuntimeError, Diagnostic, render

The simulator also compiles IR expressions with `pooltui.lang.exprs.compile_expr` and a
hold's `content` clause with `pooltui.lang.content.compile_content`.
"""

from pooltui.lang.errors import Diagnostic, SpecError, SpecRuntimeError, render
from pooltui.lang.frontend import compile_condition, compile_file, compile_source
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
