"""Typed constants in staged programs: `np.float32(2.0)`, never a bare Python literal.

Owns the round trip between a NumPy scalar and its AST (`literal_ast`, `literal_value`).
"""
import ast
import math

import numpy as np

from ..core.aval import ShapedArray

_INLINE_DTYPES = {
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128",
}


def can_inline(value):
    v = np.asarray(value)
    return v.ndim == 0 and v.dtype.name in _INLINE_DTYPES


def _number_ast(x):
    if isinstance(x, float) and not math.isfinite(x):
        return ast.Constant(repr(x))  # np.float32('nan'), np.float32('-inf')
    if isinstance(x, complex) and not (math.isfinite(x.real) and math.isfinite(x.imag)):
        return ast.Constant(repr(x).strip("()"))
    if isinstance(x, (int, float)) and x < 0:
        return ast.UnaryOp(ast.USub(), ast.Constant(-x))
    return ast.Constant(x)


def literal_ast(value):
    """`np.<dtype>(<python value>)` for a 0-d NumPy value of an inlinable dtype."""
    v = np.asarray(value)
    name = "bool_" if v.dtype.name == "bool" else v.dtype.name
    if v.dtype.kind == "f":
        py = float(str(v[()]))  # shortest repr that round-trips in this dtype
    else:
        py = v.item()
    func = ast.Attribute(ast.Name("np", ast.Load()), name, ast.Load())
    return ast.Call(func, [_number_ast(py)], [])


def is_literal(node):
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "np"
    )


def literal_value(node):
    """The NumPy scalar a literal AST denotes."""
    dtype = np.dtype("bool" if node.func.attr == "bool_" else node.func.attr)
    arg = node.args[0]
    cls = arg.__class__
    # the forms literal_ast writes, read directly: ast.literal_eval's dispatch was most of the
    # time of the thousands of reads a compile makes (passes, emitter, C translator)
    if cls is ast.Constant:
        py = arg.value
    elif cls is ast.UnaryOp and arg.op.__class__ is ast.USub and arg.operand.__class__ is ast.Constant:
        py = -arg.operand.value
    else:
        py = ast.literal_eval(arg)
    return np.asarray(py, dtype=dtype)[()] if not isinstance(py, str) else dtype.type(py)


def literal_aval(node):
    return ShapedArray((), np.dtype("bool" if node.func.attr == "bool_" else node.func.attr))


def param_ast(value):
    """AST of a primitive parameter (a Python literal: int, float, str, bool, None, tuples)."""
    if isinstance(value, tuple):
        return ast.Tuple([param_ast(v) for v in value], ast.Load())
    if isinstance(value, float) and not math.isfinite(value):
        return ast.Call(ast.Name("float", ast.Load()), [ast.Constant(repr(value))], [])
    return _number_ast(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else ast.Constant(value)


def param_value(node):
    cls = node.__class__
    if cls is ast.Constant:  # (most parameters: ast.literal_eval's own dispatch cost more than the rest of eqn)
        return node.value
    if cls is ast.UnaryOp and node.operand.__class__ is ast.Constant and node.op.__class__ is ast.USub:
        return -node.operand.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "float":
        return float(node.args[0].value)
    if isinstance(node, ast.Tuple):
        return tuple(param_value(e) for e in node.elts)
    return ast.literal_eval(node)
