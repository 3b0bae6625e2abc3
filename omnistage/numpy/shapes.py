"""Shape manipulation in `omnistage.numpy` (reshape, transpose, stack, ...): static
index arithmetic staged as lax shape primitives."""
import math
import operator

import numpy as np

from .. import lax
from ..lax import _rules
from ._promote import check_arraylike, promote_dtypes, broadcast_to_shape


def _op(a):
    return _rules.to_operand(a)


def _resolve_shape(shape, size):
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        shape = [operator.index(d) for d in shape]
    except TypeError as e:
        bad = next((d for d in shape if hasattr(d, "concretization_error")), None)
        if bad is not None:
            raise bad.concretization_error("reshape requires a static shape") from e
        raise
    if shape.count(-1) > 1:
        raise ValueError("can only specify one unknown dimension")
    if -1 in shape:
        known = math.prod(d for d in shape if d != -1)
        if known == 0 or size % known:
            raise TypeError(f"cannot reshape array of size {size} into shape {tuple(shape)}")
        shape[shape.index(-1)] = size // known
    if math.prod(shape) != size:
        raise TypeError(f"cannot reshape array of size {size} into shape {tuple(shape)}")
    return tuple(shape)


def reshape(a, shape=None, order="C", *, newshape=None):
    if shape is None:
        shape = newshape
    x = _op(a)
    new = _resolve_shape(shape, x.size)
    if order == "F":
        return transpose(lax.reshape(transpose(x), new[::-1]))
    return lax.reshape(x, new)


def ravel(a, order="C"):
    x = _op(a)
    return reshape(x, (x.size,), order)


def transpose(a, axes=None):
    x = _op(a)
    perm = tuple(range(x.ndim))[::-1] if axes is None else tuple(operator.index(i) % max(x.ndim, 1) for i in axes)
    return lax.transpose(x, perm)


def permute_dims(a, axes=None):
    return transpose(a, axes)


def swapaxes(a, axis1, axis2):
    x = _op(a)
    perm = list(range(x.ndim))
    a1, a2 = _rules.canonical_axes(axis1, x.ndim)[0], _rules.canonical_axes(axis2, x.ndim)[0]
    perm[a1], perm[a2] = perm[a2], perm[a1]
    return lax.transpose(x, perm)


def moveaxis(a, source, destination):
    x = _op(a)
    src = [operator.index(s) % x.ndim for s in np.atleast_1d(source)]
    dst = [operator.index(d) % x.ndim for d in np.atleast_1d(destination)]
    if len(src) != len(dst):
        raise ValueError("moveaxis: source and destination must have the same number of elements")
    order = [i for i in range(x.ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return lax.transpose(x, order)


def expand_dims(a, axis):
    x = _op(a)
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    return lax.expand_dims(x, axes)


def squeeze(a, axis=None):
    x = _op(a)
    if axis is None:
        axis = tuple(i for i, d in enumerate(x.shape) if d == 1)
    return lax.squeeze(x, axis)


def broadcast_to(array, shape):
    return broadcast_to_shape(_op(array), tuple(shape) if not isinstance(shape, int) else (shape,))


def concatenate(arrays, axis=0, dtype=None):
    if isinstance(arrays, (np.ndarray,)) or hasattr(arrays, "aval"):
        arrays = list(arrays)
    if not arrays:
        raise ValueError("Need at least one array to concatenate.")
    xs = promote_dtypes(*arrays)
    if dtype is not None:
        xs = [lax.convert_element_type(x, dtype) for x in xs]
    if axis is None:
        xs = [ravel(x) for x in xs]
        axis = 0
    if any(x.ndim == 0 for x in xs):
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    ax = _rules.canonical_axes(axis, xs[0].ndim)[0]
    return lax.concatenate(xs, ax)


def stack(arrays, axis=0, dtype=None):
    arrays = list(arrays)
    if not arrays:
        raise ValueError("Need at least one array to stack.")
    xs = promote_dtypes(*arrays)
    shapes = {x.shape for x in xs}
    if len(shapes) != 1:
        raise ValueError(f"All input arrays must have the same shape, got {sorted(shapes)}.")
    ax = _rules.canonical_axes(axis, xs[0].ndim + 1)[0]
    xs = [lax.expand_dims(x, (ax,)) for x in xs]
    out = lax.concatenate(xs, ax)
    return out if dtype is None else lax.convert_element_type(out, dtype)


def atleast_1d(*arys):
    out = [reshape(_op(a), (1,)) if _op(a).ndim == 0 else _op(a) for a in arys]
    return out[0] if len(out) == 1 else out


def atleast_2d(*arys):
    out = []
    for a in arys:
        x = _op(a)
        out.append(lax.reshape(x, (1,) * (2 - x.ndim) + x.shape) if x.ndim < 2 else x)
    return out[0] if len(out) == 1 else out


def shape(a):
    return np.shape(a) if not hasattr(a, "shape") else tuple(a.shape)


def ndim(a):
    return len(shape(a))


def size(a, axis=None):
    s = shape(a)
    return math.prod(s) if axis is None else s[axis]


__all__ = [
    "reshape", "ravel", "transpose", "permute_dims", "swapaxes", "moveaxis", "expand_dims",
    "squeeze", "broadcast_to", "concatenate", "stack", "atleast_1d", "atleast_2d", "shape",
    "ndim", "size",
]
