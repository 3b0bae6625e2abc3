"""Staging: turn a Python function into a `Program` (ANF Python AST plus avals).

Owns: the staging trace and its tracers, the `Program` IR with its printer, checker and
`eqn` view, the NumPy interpreter, and the runtime namespace printed programs import.
May import: omnistage.core, omnistage.lax. Must not import autodiff, vectorize, codegen.
"""
from .program import Eqn, Program, eqn, make_stmt
from .trace import StagingTrace, StagingTracer, stage
from .interpret import interpret, interpret_checked
from .convert import convert, converted_source

__all__ = ["Program", "Eqn", "eqn", "make_stmt", "StagingTrace", "StagingTracer", "stage",
           "interpret", "interpret_checked", "convert", "converted_source"]
