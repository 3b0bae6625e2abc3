"""Reductions of `omnistage.numpy`: sum, prod, mean, var, std, max, min, all, any,
argmax, argmin — NumPy's signatures (axis, keepdims, dtype), JAX's dtype rules."""
import math

import numpy as np

from ..core import dtypes
from ..core.array import Array
from .. import lax
from ..lax import _rules
from ._promote import check_arraylike


def _axes(x, axis):
    return _rules.canonical_axes(axis, x.ndim)


def _keep(out, x, axes, keepdims):
    if not keepdims:
        return out
    shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
    return lax.reshape(out, shape)


def _prep(name, a, dtype=None, promote_bool=True):
    check_arraylike(name, a)
    x = _rules.to_operand(a)
    if dtype is not None:
        from .creation import _dtype_arg

        x = lax.convert_element_type(x, _dtype_arg(dtype))
    elif promote_bool and x.dtype.kind == "b":
        x = lax.convert_element_type(x, dtypes.default_int_dtype())
    elif promote_bool and x.dtype.kind in "iu" and x.dtype.itemsize < dtypes.default_int_dtype().itemsize:
        target = dtypes.default_int_dtype() if x.dtype.kind == "i" else dtypes.default_uint_dtype()
        x = lax.convert_element_type(x, target)
    return x


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    x = _prep("sum", a, dtype)
    axes = _axes(x, axis)
    res = lax.reduce_sum(x, axes)
    if initial is not None:
        res = lax.add(res, Array(np.asarray(initial, res.dtype)))
    return _keep(res, x, axes, keepdims)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    x = _prep("prod", a, dtype)
    axes = _axes(x, axis)
    res = lax.reduce_prod(x, axes)
    if initial is not None:
        res = lax.mul(res, Array(np.asarray(initial, res.dtype)))
    return _keep(res, x, axes, keepdims)


def _minmax(name, reducer):
    def fn(a, axis=None, out=None, keepdims=False, initial=None, where=None):
        check_arraylike(name, a)
        x = _rules.to_operand(a)
        axes = _axes(x, axis)
        if any(x.shape[i] == 0 for i in axes) and initial is None:
            raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
        res = reducer(x, axes)
        if initial is not None:
            init = Array(np.asarray(initial, x.dtype))
            res = (lax.max if name == "max" else lax.min)(res, init)
        return _keep(res, x, axes, keepdims)

    fn.__name__ = name
    return fn


max = _minmax("max", lax.reduce_max)
min = _minmax("min", lax.reduce_min)
amax, amin = max, min


def _bool_reduce(name, reducer):
    def fn(a, axis=None, out=None, keepdims=False, where=None):
        check_arraylike(name, a)
        x = _rules.to_operand(a)
        if x.dtype.kind != "b":
            x = lax.ne(x, Array(np.zeros((), x.dtype)))
        axes = _axes(x, axis)
        return _keep(reducer(x, axes), x, axes, keepdims)

    fn.__name__ = name
    return fn


all = _bool_reduce("all", lax.reduce_and)
any = _bool_reduce("any", lax.reduce_or)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    check_arraylike("mean", a)
    x = _rules.to_operand(a)
    axes = _axes(x, axis)
    n = math.prod(x.shape[i] for i in axes)
    if dtype is None:
        from .creation import _dtype_arg

        dtype = dtypes.to_inexact(x.dtype)
    x = _prep("mean", x, dtype)
    total = lax.reduce_sum(x, axes)
    res = lax.div(total, Array(np.asarray(n, total.dtype)))
    return _keep(res, x, axes, keepdims)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, correction=None):
    check_arraylike("var", a)
    if correction is not None:
        ddof = correction
    x = _rules.to_operand(a)
    if not dtypes.is_inexact(x.dtype):
        x = lax.convert_element_type(x, dtypes.default_float_dtype())
    axes = _axes(x, axis)
    n = math.prod(x.shape[i] for i in axes)
    from .ufuncs import subtract

    centered = subtract(x, mean(x, axes, keepdims=True))
    sq = lax.real(lax.mul(centered, lax.conj(centered))) if dtypes.is_complex(x.dtype) else lax.mul(centered, centered)
    total = lax.reduce_sum(sq, axes)
    res = lax.div(total, Array(np.asarray(n - ddof, total.dtype)))
    if dtype is not None:
        from .creation import _dtype_arg

        res = lax.convert_element_type(res, _dtype_arg(dtype))
    return _keep(res, x, axes, keepdims)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, correction=None):
    return lax.sqrt(var(a, axis, dtype, out, ddof, keepdims, correction=correction))


def _arg(name, prim_fn):
    def fn(a, axis=None, out=None, keepdims=False):
        check_arraylike(name, a)
        x = _rules.to_operand(a)
        if axis is None:
            x = lax.reshape(x, (x.size,))
            axis = 0
        ax = _rules.canonical_axes(axis, x.ndim)[0]
        res = prim_fn(x, ax, dtypes.default_int_dtype())
        return _keep(res, x, (ax,), keepdims)

    fn.__name__ = name
    return fn


argmax = _arg("argmax", lax.argmax)
argmin = _arg("argmin", lax.argmin)

__all__ = ["sum", "prod", "max", "min", "amax", "amin", "all", "any", "mean", "var", "std", "argmax", "argmin"]
