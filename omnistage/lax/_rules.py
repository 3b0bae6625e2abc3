"""Shared shape and dtype rules for defining primitives, and operand conversion for lax.

`lax` is strict: operands of an n-ary op must have equal dtypes and equal shapes (rank-0
operands broadcast, like literals in JAX's jaxprs). Python scalars become weakly typed
arrays of the default dtype for their kind.
"""
import functools

import numpy as np

from ..core import dtypes
from ..core.array import Array
from ..core.aval import ShapedArray
from ..core.primitive import Primitive
from ..core.tracer import Tracer

# dtype classes accepted by a primitive
ANY = "any"
NUMBER = "number"  # ints, floats, complex (no bool)
INEXACT = "inexact"  # floats and complex
FLOAT = "float"
INTEGER = "integer"  # ints only
INT_OR_BOOL = "int_or_bool"
REAL = "real"  # bool, ints, floats (no complex)
REAL_NUMBER = "real_number"  # ints, floats

_KIND_TEST = {
    ANY: lambda dt: True,
    NUMBER: lambda dt: dt.kind in "iufc" or dtypes.is_float(dt),
    INEXACT: dtypes.is_inexact,
    FLOAT: dtypes.is_float,
    INTEGER: dtypes.is_integer,
    INT_OR_BOOL: lambda dt: dt.kind in "iub",
    REAL: lambda dt: dt.kind in "biuf" or dtypes.is_float(dt),
    REAL_NUMBER: lambda dt: dt.kind in "iuf" or dtypes.is_float(dt),
}

_KIND_WORDS = {
    ANY: "any dtype", NUMBER: "numbers (integer, floating, complexfloating)",
    INEXACT: "floating, complexfloating", FLOAT: "floating", INTEGER: "integer",
    INT_OR_BOOL: "integer, bool", REAL: "bool, integer, floating",
    REAL_NUMBER: "integer, floating",
}


def check_kind(name, dtype, kind):
    if not _KIND_TEST[kind](np.dtype(dtype)):
        raise TypeError(f"{name} does not accept dtype {np.dtype(dtype).name}. Accepted dtypes are: {_KIND_WORDS[kind]}.")


def shapes_str(avals):
    return ", ".join(str(a.shape) for a in avals)


def nary_shape(name, avals):
    """Equal shapes, rank-0 operands broadcasting."""
    shapes = {a.shape for a in avals if a.ndim}
    if len(shapes) > 1:
        raise TypeError(f"{name} got incompatible shapes for broadcasting: {shapes_str(avals)}.")
    return shapes.pop() if shapes else ()


def same_dtype(name, avals):
    dts = [a.dtype for a in avals]
    if any(d != dts[0] for d in dts[1:]):
        raise TypeError(
            f"lax.{name} requires arguments to have the same dtypes, got {', '.join(d.name for d in dts)}."
        )
    return dts[0]


def all_weak(avals):
    return all(a.weak_type for a in avals)


def quiet(fn):
    """Run a NumPy implementation without floating-point warnings (JAX never warns)."""

    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        with np.errstate(all="ignore"):
            return fn(*args, **kwargs)

    return wrapped


def exact(fn, dtype_of=None):
    """Wrap a NumPy function so its result has the first operand's dtype (0-d stays array)."""

    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        out = np.asarray(fn(*args, **kwargs))
        dt = args[0].dtype if dtype_of is None else dtype_of(*args)
        return out if out.dtype == dt else out.astype(dt)

    return wrapped


def elementwise(name, impl, kind=ANY, out_dtype=None, nargs=None):
    """Define an elementwise primitive.

    `out_dtype(in_dtype)` gives the result dtype (default: the operands' dtype).
    """

    # the result reads only the operands' shapes, dtypes and weak flags: remembered per
    # operand avals, so an eager op on arrays seen before skips the rule (a third of `m + g`)
    seen = {}

    def abstract_eval(*avals):
        out = seen.get(avals)
        if out is not None:
            return out
        if nargs is not None and len(avals) != nargs:
            raise TypeError(f"{name} takes {nargs} operands, got {len(avals)}")
        dt = same_dtype(name, avals)
        check_kind(name, dt, kind)
        shape = nary_shape(name, avals)
        res_dt = dt if out_dtype is None else np.dtype(out_dtype(dt))
        weak = all_weak(avals) and res_dt.kind != "b"
        if len(seen) >= 256:  # a program of many shapes: keep the table small
            seen.clear()
        out = seen[avals] = ShapedArray(shape, res_dt, weak)
        return out

    def typed_impl(*args, **params):
        out = np.asarray(impl(*args, **params))
        dt = args[0].dtype if out_dtype is None else np.dtype(out_dtype(np.asarray(args[0]).dtype))
        return out if out.dtype == dt else out.astype(dt)

    return Primitive(name, abstract_eval, quiet(typed_impl))


def to_operand(x):
    """An operand for `bind`: Arrays and tracers pass; Python scalars become weak arrays;
    NumPy values become arrays of their canonical dtype."""
    if isinstance(x, (Array, Tracer)):
        return x
    if isinstance(x, (bool, int, float, complex)):
        dt, weak = dtypes.python_scalar_dtype(x)
        return Array(np.asarray(x, dtype=dt), weak)
    if isinstance(x, (np.ndarray, np.generic)):
        v = np.asarray(x)
        dt = dtypes.canonicalize_dtype(v.dtype)
        return Array(v.astype(dt) if dt != v.dtype else v)
    if hasattr(x, "__array__") or isinstance(x, (list, tuple)):
        return to_operand(np.asarray(x))
    raise TypeError(f"Value {x!r} of type {type(x).__name__} is not a valid omnistage type")


def operands(*xs):
    return [to_operand(x) for x in xs]


def canonical_axes(axes, ndim, name="axis"):
    """Normalize an int / tuple of ints (negatives allowed) into a sorted tuple."""
    if axes is None:
        return tuple(range(ndim))
    if isinstance(axes, (int, np.integer)):
        axes = (axes,)
    out = []
    for a in axes:
        a = int(a)
        if not -ndim <= a < max(ndim, 1) or (ndim == 0 and a not in (0, -1)):
            raise ValueError(f"{name} {a} is out of bounds for array of dimension {ndim}")
        out.append(a % ndim if ndim else 0)
    if len(set(out)) != len(out):
        raise ValueError(f"repeated {name}: {tuple(axes)}")
    return tuple(sorted(out))
