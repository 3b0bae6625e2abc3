"""Indexing for `omnistage.numpy`: `x[idx]` and `x.at[idx]`.

Basic indices (ints, slices, None, Ellipsis) are static index arithmetic: slice, rev,
squeeze, reshape statements.
"""
import operator

import numpy as np

from ..core.array import Array
from ..core.tracer import Tracer
from ..core import errors
from .. import lax
from ..lax import _rules


def _is_basic(i):
    return i is None or i is Ellipsis or isinstance(i, slice) or (
        isinstance(i, (int, np.integer)) and not isinstance(i, bool)
    )


def _expand_ellipsis(idx, ndim):
    n_real = sum(1 for i in idx if i is not None and i is not Ellipsis)
    if sum(1 for i in idx if i is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if n_real > ndim:
        raise IndexError(f"Too many indices: {ndim}-dimensional array, but {n_real} were indexed")
    out = []
    for i in idx:
        if i is Ellipsis:
            out.extend([slice(None)] * (ndim - n_real))
        else:
            out.append(i)
    if Ellipsis not in idx:
        out.extend([slice(None)] * (ndim - n_real))
    return out


def getitem(x, idx):
    """`x[idx]` with NumPy semantics."""
    x = _rules.to_operand(x)
    if not isinstance(idx, tuple):
        idx = (idx,)
    if all(_is_basic(i) for i in idx):
        return _basic_getitem(x, idx)
    for i in idx:
        if isinstance(i, Tracer) and i.dtype == np.bool_:
            raise errors.NonConcreteBooleanIndexError(
                f"Array boolean indices must be concrete; got {i.aval.str_short()}. The result's "
                f"shape would depend on the mask's values. Use jnp.where(mask, x, fill) instead."
            )
    raise NotImplementedError(f"advanced indexing is not implemented yet: {idx!r}")


def _basic_getitem(x, idx):
    idx = _expand_ellipsis(idx, x.ndim)
    start, limit, strides, flips, squeeze_dims, out_shape_with_new = [], [], [], [], [], []
    dim = 0
    final_shape = []
    for i in idx:
        if i is None:
            final_shape.append(("new", None))
            continue
        n = x.shape[dim]
        if isinstance(i, slice):
            s, e, st = i.indices(n)
            if st > 0:
                length = max(0, -(-(e - s) // st))
                start.append(s)
                limit.append(s + (length - 1) * st + 1 if length else s)
                strides.append(st)
            else:
                length = max(0, -(-(s - e) // -st))
                # negative step: slice the reversed range, then flip
                lo = s + (length - 1) * st if length else 0
                start.append(lo if length else 0)
                limit.append(s + 1 if length else 0)
                strides.append(-st)
                flips.append(dim)
            final_shape.append(("keep", dim))
        else:
            k = operator.index(i)
            if not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for axis {dim} with size {n}")
            k %= n
            start.append(k)
            limit.append(k + 1)
            strides.append(1)
            squeeze_dims.append(dim)
        dim += 1
    out = lax.slice(x, start, limit, strides)
    if flips:
        out = lax.rev(out, flips)
    if squeeze_dims:
        out = lax.squeeze(out, squeeze_dims)
    if any(kind == "new" for kind, _ in final_shape):
        shape, it = [], iter(out.shape)
        for kind, _ in final_shape:
            shape.append(1 if kind == "new" else next(it))
        out = lax.reshape(out, tuple(shape))
    return out


class _IndexUpdateHelper:
    """`x.at`: returns a `_IndexUpdateRef` for `x.at[idx]`."""

    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, idx):
        return _IndexUpdateRef(self.array, idx)

    def __repr__(self):
        return f"_IndexUpdateHelper({self.array!r})"


class _IndexUpdateRef:
    """`x.at[idx]`: functional updates `set/add/multiply/divide/min/max/get`."""

    __slots__ = ("array", "index")

    def __init__(self, array, index):
        self.array, self.index = array, index

    def get(self, **kwargs):
        return getitem(self.array, self.index)

    def _update(self, kind, values):
        from . import _at

        return _at.update(self.array, self.index, values, kind)

    def set(self, values, **kwargs):
        return self._update("set", values)

    def add(self, values, **kwargs):
        return self._update("add", values)

    def multiply(self, values, **kwargs):
        return self._update("multiply", values)

    mul = multiply

    def divide(self, values, **kwargs):
        return self._update("divide", values)

    def min(self, values, **kwargs):
        return self._update("min", values)

    def max(self, values, **kwargs):
        return self._update("max", values)

    def power(self, values, **kwargs):
        return self._update("power", values)


__all__ = []
