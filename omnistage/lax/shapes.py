"""Shape primitives: broadcast_in_dim, reshape, transpose, squeeze, iota, concatenate,
slice, rev, pad — static parameters only; codegen lowers them to index arithmetic."""
import builtins
import math

import numpy as np

from ..core import dtypes
from ..core.aval import ShapedArray
from ..core.primitive import Primitive
from . import _rules as R
from ._rules import operands


def _ints(t):
    return tuple(int(d) for d in t)


# --- broadcast_in_dim --------------------------------------------------------------------


def _broadcast_in_dim_abstract(x, *, shape, broadcast_dimensions):
    if len(broadcast_dimensions) != x.ndim:
        raise TypeError(
            f"broadcast_in_dim broadcast_dimensions must have length equal to operand ndim; got "
            f"broadcast_dimensions {broadcast_dimensions} for operand ndim {x.ndim}."
        )
    if any(not 0 <= d < len(shape) for d in broadcast_dimensions) or list(broadcast_dimensions) != sorted(set(broadcast_dimensions)):
        raise TypeError(f"broadcast_in_dim broadcast_dimensions must be strictly increasing and in range; got {broadcast_dimensions}")
    for i, d in enumerate(broadcast_dimensions):
        if x.shape[i] not in (1, shape[d]):
            raise TypeError(
                f"broadcast_in_dim operand dimension sizes must either be 1, or be equal to their "
                f"corresponding dimensions in the target broadcast shape; got operand of shape "
                f"{x.shape}, target broadcast shape {tuple(shape)}, broadcast_dimensions {broadcast_dimensions}"
            )
    return ShapedArray(shape, x.dtype, x.weak_type)


def _broadcast_in_dim_impl(x, *, shape, broadcast_dimensions):
    x = np.asarray(x)
    expanded = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        expanded[d] = x.shape[i]
    return np.broadcast_to(x.reshape(expanded), shape)


broadcast_in_dim_p = Primitive("broadcast_in_dim", _broadcast_in_dim_abstract, _broadcast_in_dim_impl)


def broadcast_in_dim(operand, shape, broadcast_dimensions):
    (x,) = operands(operand)
    shape, dims = _ints(shape), _ints(broadcast_dimensions)
    if x.shape == shape and dims == tuple(range(len(shape))):
        return x
    return broadcast_in_dim_p.bind(x, shape=shape, broadcast_dimensions=dims)


def broadcast(operand, sizes):
    """Prepend dimensions `sizes`."""
    (x,) = operands(operand)
    sizes = _ints(sizes)
    return broadcast_in_dim(x, sizes + x.shape, tuple(range(len(sizes), len(sizes) + x.ndim)))


def broadcast_to_rank(x, rank):
    (x,) = operands(x)
    if x.ndim == rank:
        return x
    return broadcast(x, (1,) * (rank - x.ndim))


def broadcast_shapes(*shapes):
    """NumPy broadcasting of static shapes (raises ValueError naming both shapes)."""
    try:
        return tuple(np.broadcast_shapes(*[tuple(s) for s in shapes]))
    except ValueError:
        raise ValueError(f"Incompatible shapes for broadcasting: {', '.join(str(tuple(s)) for s in shapes)}") from None


# --- reshape -----------------------------------------------------------------------------


def _reshape_abstract(x, *, new_sizes, dimensions=None):
    if math.prod(new_sizes) != x.size or any(d < 0 for d in new_sizes):
        raise TypeError(
            f"reshape total size must be unchanged, got new_sizes {tuple(new_sizes)} (size "
            f"{math.prod(new_sizes)}) for shape {x.shape} (size {x.size})."
        )
    return ShapedArray(new_sizes, x.dtype, x.weak_type)


def _reshape_impl(x, *, new_sizes, dimensions=None):
    x = np.asarray(x)
    if dimensions is not None:
        x = np.transpose(x, dimensions)
    return x.reshape(new_sizes)


reshape_p = Primitive("reshape", _reshape_abstract, _reshape_impl)


def reshape(operand, new_sizes, dimensions=None):
    (x,) = operands(operand)
    new_sizes = _ints(new_sizes)
    if dimensions is not None:
        x = transpose(x, dimensions)
    if x.shape == new_sizes:
        return x
    return reshape_p.bind(x, new_sizes=new_sizes)


# --- transpose ---------------------------------------------------------------------------


def _transpose_abstract(x, *, permutation):
    if sorted(permutation) != list(range(x.ndim)):
        raise TypeError(f"transpose permutation isn't a permutation of operand dimensions, got permutation {permutation} for operand shape {x.shape}.")
    return ShapedArray(tuple(x.shape[p] for p in permutation), x.dtype, x.weak_type)


transpose_p = Primitive("transpose", _transpose_abstract, lambda x, *, permutation: np.transpose(x, permutation))


def transpose(operand, permutation):
    (x,) = operands(operand)
    perm = _ints(permutation)
    if perm == tuple(range(x.ndim)):
        return x
    return transpose_p.bind(x, permutation=perm)


# --- squeeze / expand_dims ---------------------------------------------------------------


def _squeeze_abstract(x, *, dimensions):
    for d in dimensions:
        if not 0 <= d < x.ndim or x.shape[d] != 1:
            raise ValueError(f"cannot select an axis to squeeze out which has size not equal to one, got shape={x.shape} and dimensions={dimensions}")
    return ShapedArray(tuple(s for i, s in enumerate(x.shape) if i not in dimensions), x.dtype, x.weak_type)


squeeze_p = Primitive("squeeze", _squeeze_abstract, lambda x, *, dimensions: np.squeeze(np.asarray(x), axis=dimensions))


def squeeze(array, dimensions):
    (x,) = operands(array)
    dims = R.canonical_axes(dimensions, x.ndim, "dimension")
    if not dims:
        return x
    return squeeze_p.bind(x, dimensions=dims)


def expand_dims(array, dimensions):
    (x,) = operands(array)
    ndim_out = x.ndim + len(tuple(dimensions))
    dims = R.canonical_axes(dimensions, ndim_out, "dimension")
    shape = list(x.shape)
    for d in dims:
        shape.insert(d, 1)
    return reshape(x, tuple(shape))


# --- iota --------------------------------------------------------------------------------


def _iota_abstract(*, dtype, shape, dimension):
    if not 0 <= dimension < len(shape):
        raise ValueError(f"iota dimension {dimension} out of range for shape {shape}")
    return ShapedArray(shape, np.dtype(dtype))


def _iota_impl(*, dtype, shape, dimension):
    r = np.arange(shape[dimension], dtype=np.dtype(dtype))
    view = [1] * len(shape)
    view[dimension] = shape[dimension]
    return np.broadcast_to(r.reshape(view), shape)


iota_p = Primitive("iota", _iota_abstract, _iota_impl)


def iota(dtype, size):
    return broadcasted_iota(dtype, (int(size),), 0)


def broadcasted_iota(dtype, shape, dimension):
    dt = dtypes.canonicalize_dtype(dtype)
    return iota_p.bind(dtype=dt.name, shape=_ints(shape), dimension=int(dimension))


# --- concatenate -------------------------------------------------------------------------


def _concatenate_abstract(*xs, dimension):
    if not xs:
        raise TypeError("concatenate requires at least one operand")
    dt = R.same_dtype("concatenate", xs)
    nd = xs[0].ndim
    if not 0 <= dimension < nd:
        raise ValueError(f"concatenate dimension out of bounds: dimension {dimension} for shapes {R.shapes_str(xs)}")
    for x in xs:
        if x.ndim != nd or any(a != b for i, (a, b) in enumerate(zip(x.shape, xs[0].shape)) if i != dimension):
            raise TypeError(
                f"Cannot concatenate arrays with shapes that differ in dimensions other than the one "
                f"being concatenated: concatenating along dimension {dimension} for shapes {R.shapes_str(xs)}."
            )
    shape = list(xs[0].shape)
    shape[dimension] = sum(x.shape[dimension] for x in xs)
    return ShapedArray(shape, dt, R.all_weak(xs))


concatenate_p = Primitive(
    "concatenate", _concatenate_abstract, lambda *xs, dimension: np.concatenate([np.asarray(x) for x in xs], axis=dimension)
)


def concatenate(operands_, dimension):
    xs = operands(*operands_)
    if len(xs) == 1:
        return xs[0]
    return concatenate_p.bind(*xs, dimension=int(dimension))


# --- slice -------------------------------------------------------------------------------


def _slice_abstract(x, *, start_indices, limit_indices, strides=None):
    strides = strides or (1,) * x.ndim
    if not (len(start_indices) == len(limit_indices) == len(strides) == x.ndim):
        raise TypeError(f"slice start_indices, limit_indices and strides must have length {x.ndim} for shape {x.shape}")
    shape = []
    for s, l, st, d in zip(start_indices, limit_indices, strides, x.shape):
        if not 0 <= s <= l <= d or st < 1:
            raise TypeError(f"slice indices out of range: start {start_indices}, limit {limit_indices}, strides {strides} for shape {x.shape}")
        shape.append(max(0, -(-(l - s) // st)))
    return ShapedArray(shape, x.dtype, x.weak_type)


def _slice_impl(x, *, start_indices, limit_indices, strides=None):
    strides = strides or (1,) * len(start_indices)
    return np.asarray(x)[tuple(builtins.slice(s, l, st) for s, l, st in zip(start_indices, limit_indices, strides))]


slice_p = Primitive("slice", _slice_abstract, _slice_impl)


def slice(operand, start_indices, limit_indices, strides=None):  # noqa: A001 - lax's name
    (x,) = operands(operand)
    start, limit = _ints(start_indices), _ints(limit_indices)
    strides = None if strides is None or all(s == 1 for s in strides) else _ints(strides)
    if start == (0,) * x.ndim and limit == x.shape and strides is None:
        return x
    return slice_p.bind(x, start_indices=start, limit_indices=limit, strides=strides)


def slice_in_dim(operand, start_index, limit_index, stride=1, axis=0):
    (x,) = operands(operand)
    axis = R.canonical_axes(axis, x.ndim)[0]
    start = [0] * x.ndim
    limit = list(x.shape)
    strides = [1] * x.ndim
    n = x.shape[axis]
    start_index = 0 if start_index is None else (start_index + n if start_index < 0 else start_index)
    limit_index = n if limit_index is None else (limit_index + n if limit_index < 0 else limit_index)
    start[axis], limit[axis], strides[axis] = start_index, limit_index, stride
    return slice(x, start, limit, strides)


def index_in_dim(operand, index, axis=0, keepdims=True):
    (x,) = operands(operand)
    axis = R.canonical_axes(axis, x.ndim)[0]
    index = index + x.shape[axis] if index < 0 else index
    out = slice_in_dim(x, index, index + 1, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


# --- rev ---------------------------------------------------------------------------------


def _rev_abstract(x, *, dimensions):
    if any(not 0 <= d < x.ndim for d in dimensions):
        raise ValueError(f"rev dimensions {dimensions} out of range for shape {x.shape}")
    return x


rev_p = Primitive("rev", _rev_abstract, lambda x, *, dimensions: np.flip(np.asarray(x), dimensions) if dimensions else np.asarray(x))


def rev(operand, dimensions):
    (x,) = operands(operand)
    dims = _ints(dimensions)
    return rev_p.bind(x, dimensions=dims) if dims else x


# --- pad ---------------------------------------------------------------------------------


def _pad_abstract(x, padding_value, *, padding_config):
    if padding_value.ndim != 0:
        raise TypeError(f"pad padding_value must be a scalar, got shape {padding_value.shape}")
    R.same_dtype("pad", (x, padding_value))
    if len(padding_config) != x.ndim:
        raise ValueError(f"pad padding_config has length {len(padding_config)} for operand of rank {x.ndim}")
    shape = []
    for d, (lo, hi, interior) in zip(x.shape, padding_config):
        if interior < 0:
            raise ValueError("pad interior padding must be non-negative")
        size = lo + hi + d + max(d - 1, 0) * interior
        if size < 0:
            raise ValueError(f"pad gives a negative dimension for {padding_config}")
        shape.append(size)
    return ShapedArray(shape, x.dtype, x.weak_type)


def _pad_impl(x, padding_value, *, padding_config):
    x = np.asarray(x)
    shape = _pad_abstract(ShapedArray(x.shape, x.dtype), ShapedArray((), x.dtype), padding_config=padding_config).shape
    out = np.full(shape, padding_value, dtype=x.dtype)
    # interior-dilate, then place with (possibly negative) edge padding
    dil_shape = [d + max(d - 1, 0) * it for d, (_, _, it) in zip(x.shape, padding_config)]
    dil = np.full(dil_shape, padding_value, dtype=x.dtype)
    dil[tuple(np.s_[:: it + 1] for (_, _, it) in padding_config)] = x
    src, dst = [], []
    for n, (lo, hi, _) in zip(dil_shape, padding_config):
        s0 = max(-lo, 0)
        s1 = n - max(-hi, 0)
        d0 = max(lo, 0)
        src.append(np.s_[s0:max(s1, s0)])
        dst.append(np.s_[d0:d0 + max(s1 - s0, 0)])
    out[tuple(dst)] = dil[tuple(src)]
    return out


pad_p = Primitive("pad", _pad_abstract, _pad_impl)


def pad(operand, padding_value, padding_config):
    x, v = operands(operand, padding_value)
    cfg = tuple(_ints(c) for c in padding_config)
    return pad_p.bind(x, v, padding_config=cfg)


__all__ = [
    "broadcast_in_dim", "broadcast", "broadcast_to_rank", "broadcast_shapes", "reshape",
    "transpose", "squeeze", "expand_dims", "iota", "broadcasted_iota", "concatenate", "slice",
    "slice_in_dim", "index_in_dim", "rev", "pad",
]
