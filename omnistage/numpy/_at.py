"""Functional index updates: `x.at[idx].set/add/multiply/divide/min/max/power(values)`.

Imports core, lax and this package's helpers (the index parser lives in `indexing`).

Semantics (JAX's): `x` and `values` are promoted together, `values` is broadcast to the
shape `x[idx]` would have, the update is applied, and the result is cast back to `x`'s
dtype and weak type. Repeated indices accumulate for add/multiply/min/max (like
`np.add.at`); for set, one of the duplicates wins. Out-of-bounds traced or array indices
are dropped (mode None/'drop'/'fill'/'promise_in_bounds') or clamped (mode='clip'); static
Python ints out of bounds raise IndexError unless a mode is given.
`divide` and `power` multiply the indexed positions of a ones array by `values` first (so
repeated indices compose), then divide / raise `x` by it elementwise, as JAX does (so an
integer `x` divided gives a float result, like `x / y`).

Two lowerings:
- a static box (static ints and unit-step slices, no index arrays): one
  `dynamic_update_slice` of `combine(slice(x), values)` at literal starts: no index array;
- anything else: one `scatter*` whose indices broadcast the index arrays (the batch dims)
  against an `arange` per non-trivial slice; full slices stay whole (window dims).
"""
import numpy as np

from ..core.array import Array
from .. import lax
from ..lax import _rules
from ..lax.elementwise import _convert_weak
from . import indexing as I
from ._promote import broadcast_to_shape, promote_dtypes

_DROP_MODES = (None, "drop", "fill", "promise_in_bounds")


def _or_for_bool(op, bool_op):
    return lambda a, b: (bool_op if a.dtype == np.bool_ else op)(a, b)


# kind: (scatter primitive wrapper, elementwise combine for the static-box path)
_KINDS = {
    "set": (lax.scatter, None),
    "add": (lax.scatter_add, _or_for_bool(lax.add, lax.bitwise_or)),
    "multiply": (lax.scatter_mul, _or_for_bool(lax.mul, lax.bitwise_and)),
    "min": (lax.scatter_min, lax.min),
    "max": (lax.scatter_max, lax.max),
}


def update(x, idx, values, kind, mode=None):
    """`x` with `values` combined in at `idx` (`kind` in set/add/multiply/divide/min/max/power)."""
    if mode not in _DROP_MODES + ("clip",):
        raise ValueError(f"Invalid mode {mode!r} for an .at[] update; expected 'drop', 'clip', 'fill' or 'promise_in_bounds'")
    x = _rules.to_operand(x)
    if kind in ("divide", "power"):
        return _via_factor(x, idx, values, kind, mode)
    if kind not in _KINDS:
        raise ValueError(f"unknown .at[] update {kind!r}")
    xp, v = promote_dtypes(x, values)
    plan = I.parse(x.shape, idx, ints_static=mode is None)
    v = _broadcast_values(v, plan.result_shape())
    if plan.bool_dims:
        xp = lax.reshape(xp, plan.shape)
    if _is_static_box(plan):
        out = _update_box(xp, v, plan, _KINDS[kind][1])
    else:
        out = _update_scatter(xp, v, plan, _KINDS[kind][0], clip=mode == "clip")
    if plan.bool_dims:
        out = lax.reshape(out, x.shape)
    return _convert_weak(out, x.dtype, x.weak_type)


def _via_factor(x, idx, values, kind, mode):
    from .ufuncs import divide, power

    ones = Array(np.ones((), x.dtype), x.weak_type)
    ones = lax.broadcast_in_dim(ones, x.shape, ())
    factor = update(ones, idx, values, "multiply", mode)
    return divide(x, factor) if kind == "divide" else power(x, factor)


def _broadcast_values(v, shape):
    """`v` broadcast to the indexed shape (extra leading unit axes are dropped, as NumPy)."""
    shape = tuple(shape)
    if v.ndim > len(shape) and all(d == 1 for d in v.shape[: v.ndim - len(shape)]):
        v = lax.reshape(v, v.shape[v.ndim - len(shape):])
    try:
        return broadcast_to_shape(v, shape)
    except ValueError:
        raise ValueError(
            f"shape mismatch: value array of shape {v.shape} could not be broadcast to indexing "
            f"result of shape {shape}"
        ) from None


# --- static box: dynamic_update_slice at literal starts ----------------------------------


def _is_static_box(plan):
    return all(
        e.kind in ("new", "int") or (e.kind == "slice" and (abs(e.value[1]) == 1 or e.value[2] <= 1))
        for e in plan.entries
    )


def _update_box(x, v, plan, combine):
    starts, sizes, flips = [], [], []
    for e in plan.entries:
        if e.kind == "int":
            starts.append(e.value)
            sizes.append(1)
        elif e.kind == "slice":
            start, step, length = e.value
            lo = start + (length - 1) * step if step < 0 and length else start
            starts.append(lo)
            sizes.append(length)
            if step < 0 and length > 1:
                flips.append(e.dim)
    if any(z == 0 for z in sizes):
        return x
    region = lax.rev(lax.reshape(v, sizes), flips)
    if combine is not None:
        region = combine(lax.slice(x, starts, [s + z for s, z in zip(starts, sizes)]), region)
    return lax.dynamic_update_slice(x, region, starts)


# --- general case: one scatter -----------------------------------------------------------


def _update_scatter(x, v, plan, scatter, clip):
    index_entries = [e for e in plan.entries if e.is_index]
    ranged = [e for e in plan.entries if e.kind == "slice" and not plan.is_full_slice(e)]
    window = [e for e in plan.entries if plan.is_full_slice(e)]
    batch = plan.batch_shape
    nb = len(batch)
    pieces = [
        (I.prepare_index(e.value, plan.shape[e.dim], clip=clip), I.right_aligned(e.value, nb))
        for e in index_entries
    ]
    pieces += [(_slice_range(e.value), (nb + j,)) for j, e in enumerate(ranged)]
    grid = batch + tuple(e.value[2] for e in ranged)
    indices = I.stack_indices(pieces, grid)
    axes = [e.dim for e in index_entries + ranged]
    v = _to_scatter_layout(v, plan, ranged, window)
    return scatter(x, indices, v, axes)


def _slice_range(slice_value):
    start, step, length = slice_value
    return (start + step * np.arange(length)).astype(I.INDEX_DTYPE)


def _to_scatter_layout(v, plan, ranged, window):
    """Values from NumPy's result layout to scatter's: batch dims, ranged slices, windows."""
    labels = [lab for lab in plan.result_labels() if lab != I.NEW]
    shape = [plan.label_size(lab) for lab in labels]
    if v.ndim != len(labels):
        v = lax.reshape(v, shape)  # drop the None axes
    target = [("b", j) for j in range(len(plan.batch_shape))]
    target += [("dim", e.dim) for e in ranged + window]
    return lax.transpose(v, [labels.index(lab) for lab in target])


__all__ = []
