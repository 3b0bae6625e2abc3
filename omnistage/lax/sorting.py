"""Sorting primitive: `sort` of one or more same-shape operands along a static dimension,
ordered lexicographically by the first `num_keys` operands; plus `sort_key_val` and `top_k`
built on it.

Order (as JAX and NumPy): -0.0 equals 0.0, NaNs (of either sign) sort after +inf, complex
numbers order by (real, imag). The NumPy implementation is always stable, which satisfies
both `is_stable` values. Imports core only.
"""
import numpy as np

from ..core import dtypes
from ..core.aval import ShapedArray
from ..core.primitive import Primitive
from . import _rules as R
from ._rules import operands


def _sort_abstract(*xs, dimension, is_stable, num_keys):
    if not xs:
        raise TypeError("sort requires at least one operand")
    if len({x.shape for x in xs}) != 1:
        raise TypeError(f"sort operands must all have the same shape, got shapes {R.shapes_str(xs)}.")
    if not 1 <= num_keys <= len(xs):
        raise ValueError(f"sort num_keys={num_keys} must be between 1 and the number of operands ({len(xs)}).")
    if not 0 <= dimension < xs[0].ndim:
        raise ValueError(f"sort dimension {dimension} is out of bounds for operands of shape {xs[0].shape}.")
    for x in xs[:num_keys]:
        if dtypes.is_integer(x.dtype) or dtypes.is_inexact(x.dtype) or dtypes.is_bool(x.dtype):
            continue
        raise TypeError(f"sort cannot order keys of dtype {x.dtype.name}")
    return [ShapedArray(x.shape, x.dtype, x.weak_type) for x in xs]


def _lexsort_keys(key):
    """NumPy lexsort keys (most significant first) giving the sort order of one operand."""
    if key.dtype.kind == "c":
        return [key.real, key.imag]
    if dtypes.is_float(key.dtype) and key.dtype.itemsize < 4:
        return [key.astype(np.float32)]  # float16/bfloat16: same order, sortable everywhere
    return [key]


def _sort_impl(*xs, dimension, is_stable, num_keys):
    xs = [np.moveaxis(np.asarray(x), dimension, -1) for x in xs]
    keys = [k for x in xs[:num_keys] for k in _lexsort_keys(x)]
    if xs[0].size == 0:
        order = np.zeros(xs[0].shape, np.intp)
    else:
        order = np.lexsort(keys[::-1], axis=-1)  # lexsort's last key is the primary one
    return [np.moveaxis(np.take_along_axis(x, order, axis=-1), -1, dimension) for x in xs]


sort_p = Primitive("sort", _sort_abstract, _sort_impl, multiple_results=True)


def sort(operand, dimension=-1, is_stable=True, num_keys=1):
    """Sort `operand` (an array, or a sequence of same-shape arrays sorted together by the
    first `num_keys` of them) along `dimension`."""
    single = not isinstance(operand, (tuple, list))
    xs = operands(operand) if single else operands(*operand)
    if xs[0].ndim == 0:
        raise ValueError(f"lax.sort requires operands of rank >= 1, got shape {xs[0].shape}.")
    dim = R.canonical_axes(dimension, xs[0].ndim, "dimension")[0]
    outs = sort_p.bind(*xs, dimension=dim, is_stable=bool(is_stable), num_keys=int(num_keys))
    return outs[0] if single else tuple(outs)


def sort_key_val(keys, values, dimension=-1, is_stable=True):
    """Sort `keys` along `dimension`, permuting `values` the same way."""
    return sort((keys, values), dimension, is_stable, num_keys=1)


def top_k(operand, k):
    """The `k` largest entries along the last axis and their int32 indices (ties: lower
    index first; NaN counts as largest)."""
    from . import shapes

    (x,) = operands(operand)
    if x.ndim == 0:
        raise ValueError("top_k requires an operand of rank >= 1")
    k = int(k)
    n = x.shape[-1]
    if not 0 <= k <= n:
        raise ValueError(f"top_k: k={k} must be between 0 and the last dimension {n} (shape {x.shape}).")
    last = x.ndim - 1
    # A stable descending sort: reverse, sort ascending, reverse back; ties then keep
    # their original order.
    idx = shapes.broadcasted_iota(np.int32, x.shape, last)
    vals, inds = sort((shapes.rev(x, (last,)), shapes.rev(idx, (last,))), last, True, 1)
    vals, inds = shapes.rev(vals, (last,)), shapes.rev(inds, (last,))
    return shapes.slice_in_dim(vals, 0, k, 1, last), shapes.slice_in_dim(inds, 0, k, 1, last)


__all__ = ["sort", "sort_key_val", "top_k"]
