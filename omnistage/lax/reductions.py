"""Reduction primitives over static axes: reduce_sum/prod/max/min/and/or/xor, argmax/argmin."""
import numpy as np

from ..core import dtypes
from ..core.aval import ShapedArray
from ..core.primitive import Primitive
from . import _rules as R
from ._rules import operands


def _reduce_abstract(name, kind):
    def rule(x, *, axes):
        R.check_kind(name, x.dtype, kind)
        if any(not 0 <= a < x.ndim for a in axes) or len(set(axes)) != len(axes):
            raise ValueError(f"{name}: axes {axes} out of range or repeated for shape {x.shape}")
        return ShapedArray(tuple(d for i, d in enumerate(x.shape) if i not in axes), x.dtype, x.weak_type)

    return rule


def _reduce_impl(fn):
    def impl(x, *, axes):
        x = np.asarray(x)
        return np.asarray(fn(x, axis=axes), dtype=x.dtype) if axes else x

    return R.quiet(impl)


_WIDER = {np.dtype("float16"): np.float64, np.dtype("float32"): np.float64, np.dtype("complex64"): np.complex128}


# The ufuncs' reduce methods directly: what np.sum, np.prod, np.max and np.min call on an
# ndarray, without their Python wrapper (~1 us of a small eager reduction).


def _np_sum(x, axis):
    # NumPy sums non-contiguous axes sequentially; accumulating narrow floats in double keeps
    # eager results at least as accurate as compiled code (which uses independent lanes)
    wide = _WIDER.get(x.dtype)
    if wide is not None:
        return np.add.reduce(x, axis=axis, dtype=wide).astype(x.dtype)
    return np.add.reduce(x, axis=axis, dtype=x.dtype)


def _np_prod(x, axis):
    return np.multiply.reduce(x, axis=axis, dtype=x.dtype)


def _np_max(x, axis):
    if 0 in x.shape:
        return np.full([d for i, d in enumerate(x.shape) if i not in axis], _identity(x.dtype, "max"), x.dtype)
    return _zero_as_xla(np.maximum.reduce(x, axis=axis), x, axis, positive=True)


def _np_min(x, axis):
    if 0 in x.shape:
        return np.full([d for i, d in enumerate(x.shape) if i not in axis], _identity(x.dtype, "min"), x.dtype)
    return _zero_as_xla(np.minimum.reduce(x, axis=axis), x, axis, positive=False)


def _zero_as_xla(out, x, axis, positive):
    """A zero max is +0.0 if any +0.0 was reduced (a zero min -0.0 if any -0.0 was), whatever
    the order, as XLA (NumPy keeps the first of equal zeros)."""
    if not dtypes.is_float(x.dtype) or not np.any(out == 0):
        return out
    wanted = np.any((x == 0) & (np.signbit(x) != positive), axis=axis)
    sign = 1.0 if positive else -1.0
    return np.where(out == 0, np.where(wanted, sign * 0.0, -sign * 0.0).astype(x.dtype), out)


def _identity(dt, which):
    dt = np.dtype(dt)
    if dt.kind in "fc" or dtypes.is_float(dt):
        return -np.inf if which == "max" else np.inf
    if dt.kind == "b":
        return which != "max"
    info = np.iinfo(dt)
    return info.min if which == "max" else info.max


_TABLE = {
    "reduce_sum": (_np_sum, R.NUMBER),
    "reduce_prod": (_np_prod, R.NUMBER),
    # complex max/min order lexicographically by (real, imag), as NumPy and XLA do
    "reduce_max": (_np_max, R.ANY),
    "reduce_min": (_np_min, R.ANY),
    "reduce_and": (lambda x, axis: np.logical_and.reduce(x, axis=axis) if x.dtype == np.bool_ else np.bitwise_and.reduce(x, axis=axis), R.INT_OR_BOOL),
    "reduce_or": (lambda x, axis: np.logical_or.reduce(x, axis=axis) if x.dtype == np.bool_ else np.bitwise_or.reduce(x, axis=axis), R.INT_OR_BOOL),
    "reduce_xor": (lambda x, axis: np.logical_xor.reduce(x, axis=axis) if x.dtype == np.bool_ else np.bitwise_xor.reduce(x, axis=axis), R.INT_OR_BOOL),
}

PRIMITIVES = {n: Primitive(n, _reduce_abstract(n, kind), _reduce_impl(fn)) for n, (fn, kind) in _TABLE.items()}
globals().update({f"{n}_p": p for n, p in PRIMITIVES.items()})


def _reducer(name):
    p = PRIMITIVES[name]

    def reduce(operand, axes):
        (x,) = operands(operand)
        axes = R.canonical_axes(axes, x.ndim)
        if not axes:
            return x
        return p.bind(x, axes=axes)

    reduce.__name__ = name
    return reduce


reduce_sum = _reducer("reduce_sum")
reduce_prod = _reducer("reduce_prod")
reduce_max = _reducer("reduce_max")
reduce_min = _reducer("reduce_min")
reduce_and = _reducer("reduce_and")
reduce_or = _reducer("reduce_or")
reduce_xor = _reducer("reduce_xor")


def _arg_abstract(name):
    def rule(x, *, axis, index_dtype):
        R.check_kind(name, x.dtype, R.ANY)
        if not 0 <= axis < x.ndim:
            raise ValueError(f"{name}: axis {axis} out of bounds for shape {x.shape}")
        if x.shape[axis] == 0:
            raise ValueError(f"{name}: attempt to get {name} of an empty sequence (axis {axis} of shape {x.shape})")
        return ShapedArray(tuple(d for i, d in enumerate(x.shape) if i != axis), np.dtype(index_dtype))

    return rule


def _arg_impl(fn):
    def impl(x, *, axis, index_dtype):
        return np.asarray(fn(np.asarray(x), axis=axis), dtype=np.dtype(index_dtype))

    return impl


def _nan_first(fn, nanfn):
    # NaN wins, as in JAX and NumPy
    def f(x, axis):
        if x.dtype.kind in "fc":
            has_nan = np.isnan(x)
            return np.where(has_nan.any(axis=axis), np.argmax(has_nan, axis=axis), fn(np.where(has_nan, 0, x), axis=axis))
        return fn(x, axis=axis)

    return f


argmax_p = Primitive("argmax", _arg_abstract("argmax"), _arg_impl(_nan_first(np.argmax, None)))
argmin_p = Primitive("argmin", _arg_abstract("argmin"), _arg_impl(_nan_first(np.argmin, None)))


def argmax(operand, axis, index_dtype):
    (x,) = operands(operand)
    return argmax_p.bind(x, axis=R.canonical_axes(axis, x.ndim)[0], index_dtype=dtypes.canonicalize_dtype(index_dtype).name)


def argmin(operand, axis, index_dtype):
    (x,) = operands(operand)
    return argmin_p.bind(x, axis=R.canonical_axes(axis, x.ndim)[0], index_dtype=dtypes.canonicalize_dtype(index_dtype).name)


__all__ = ["reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and", "reduce_or", "reduce_xor", "argmax", "argmin"]
