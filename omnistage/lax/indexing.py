"""lax indexing primitives: `dynamic_slice`, `dynamic_update_slice`, `gather` and the
`scatter` family (`scatter`, `scatter_add`, `scatter_mul`, `scatter_min`, `scatter_max`).

Imports core and the other lax modules only.

Design (chosen to keep the derivative and batching rules of later passes small):

- `dynamic_slice(operand, *start_indices, slice_sizes)`: one rank-0 integer operand per
  dimension; each start is clamped to `[0, operand.shape[d] - slice_sizes[d]]` so that the
  slice is always in bounds (XLA's rule). `dynamic_update_slice(operand, update, *starts)`
  clamps the same way, with the update's shape as the slice size. Negative starts are
  wrapped (`i + dim`) by the lax-level wrappers, as JAX does, not by the primitives.

- `gather(operand, indices, *, axes)`: `indices` is an integer array of shape `batch + (k,)`;
  `indices[..., j]` addresses operand axis `axes[j]` (k distinct axes, any order). The result
  has shape `batch + (the operand dims not in axes, in order)`:

      result[b..., r...] = operand[ at axes: indices[b..., :], elsewhere: r... ]

  Out-of-bounds indices are clamped into range (JAX's default for retrieval). Negative
  indices are NOT wrapped here (they clamp to 0); `omnistage.numpy` wraps them first.
  There are no windows or offsets: slices are expressed by the caller as static `slice`
  statements or as `iota` index arrays, so gather is a pure "pick rows" operation whose
  transpose is `scatter_add` with the same `indices` and `axes`.

- `scatter*(operand, indices, updates, *, axes)`: the inverse addressing. `updates` has shape
  `indices.shape[:-1] + (the operand dims not in axes)`, exactly a gather result. Every
  index row combines its update into `operand` (set / add / mul / min / max); repeated
  indices accumulate for the combining forms (like `np.add.at`); for `scatter` (set) the
  last duplicate wins. Index rows with any coordinate out of bounds (negative included)
  are dropped (JAX's default for updates). The result has the operand's aval.

The lax wrappers `gather`/`scatter*` take this simplified signature (`axes` defaults to the
first k axes); called with JAX's signature (Gather/ScatterDimensionNumbers) they are XLA's
gather and scatter, built on these primitives in lax/xla_indexing.py.
"""
import numpy as np

from ..core import dtypes
from ..core.aval import ShapedArray
from ..core.primitive import Primitive
from ..core.tracer import Tracer
from ..core.array import Array
from . import _rules as R
from ._rules import operands
from . import elementwise as E
from . import shapes as S


def _ints(t):
    return tuple(int(d) for d in t)


def _check_scalar_index(name, i, aval):
    if aval.ndim != 0 or not dtypes.is_integer(aval.dtype):
        raise TypeError(
            f"{name}: start index {i} must be a rank-0 integer, got {aval.str_short()}. "
            f"Pass one scalar integer per operand dimension."
        )


def _clamped_starts(starts, operand_shape, sizes):
    """Start indices moved so that `start + size <= dim` and `start >= 0` (XLA's rule)."""
    return [int(np.clip(int(s), 0, d - z)) for s, d, z in zip(starts, operand_shape, sizes)]


# --- dynamic_slice -----------------------------------------------------------------------


def _dynamic_slice_abstract(operand, *starts, slice_sizes):
    if len(starts) != operand.ndim or len(slice_sizes) != operand.ndim:
        raise TypeError(
            f"dynamic_slice: operand of shape {operand.shape} needs {operand.ndim} start indices and "
            f"slice_sizes of length {operand.ndim}; got {len(starts)} start indices and "
            f"slice_sizes={tuple(slice_sizes)}."
        )
    for i, s in enumerate(starts):
        _check_scalar_index("dynamic_slice", i, s)
    for d, z in zip(operand.shape, slice_sizes):
        if not 0 <= z <= d:
            raise TypeError(
                f"dynamic_slice: slice_sizes {tuple(slice_sizes)} must be non-negative and fit in "
                f"the operand shape {operand.shape}."
            )
    return ShapedArray(slice_sizes, operand.dtype, operand.weak_type)


def _dynamic_slice_impl(operand, *starts, slice_sizes):
    operand = np.asarray(operand)
    lo = _clamped_starts(starts, operand.shape, slice_sizes)
    return operand[tuple(slice(s, s + z) for s, z in zip(lo, slice_sizes))].copy()


dynamic_slice_p = Primitive("dynamic_slice", _dynamic_slice_abstract, _dynamic_slice_impl)


# --- dynamic_update_slice ----------------------------------------------------------------


def _dynamic_update_slice_abstract(operand, update, *starts):
    if update.ndim != operand.ndim or any(u > d for u, d in zip(update.shape, operand.shape)):
        raise TypeError(
            f"dynamic_update_slice: update shape {update.shape} must have the operand's rank and fit "
            f"inside the operand shape {operand.shape}."
        )
    R.same_dtype("dynamic_update_slice", (operand, update))
    if len(starts) != operand.ndim:
        raise TypeError(
            f"dynamic_update_slice: operand of shape {operand.shape} needs {operand.ndim} start "
            f"indices, got {len(starts)}."
        )
    for i, s in enumerate(starts):
        _check_scalar_index("dynamic_update_slice", i, s)
    return operand


def _dynamic_update_slice_impl(operand, update, *starts):
    out = np.array(operand, copy=True)
    update = np.asarray(update)
    lo = _clamped_starts(starts, out.shape, update.shape)
    out[tuple(slice(s, s + z) for s, z in zip(lo, update.shape))] = update
    return out


dynamic_update_slice_p = Primitive("dynamic_update_slice", _dynamic_update_slice_abstract, _dynamic_update_slice_impl)


# --- gather ------------------------------------------------------------------------------


def _check_axes(name, operand, indices, axes):
    if indices.ndim < 1 or not dtypes.is_integer(indices.dtype):
        raise TypeError(
            f"{name}: indices must be an integer array of shape batch + (k,), got "
            f"{indices.str_short()}."
        )
    k = indices.shape[-1]
    if len(axes) != k:
        raise TypeError(
            f"{name}: indices of shape {indices.shape} address {k} operand axes, but axes={tuple(axes)} "
            f"names {len(axes)}."
        )
    if len(set(axes)) != len(axes) or any(not 0 <= a < operand.ndim for a in axes):
        raise ValueError(
            f"{name}: axes={tuple(axes)} must be distinct axes of the operand of shape {operand.shape}."
        )


def _rest_axes(ndim, axes):
    return [d for d in range(ndim) if d not in axes]


def _gather_shape(operand, indices, axes):
    return indices.shape[:-1] + tuple(operand.shape[d] for d in _rest_axes(operand.ndim, axes))


def _gather_abstract(operand, indices, *, axes):
    _check_axes("gather", operand, indices, axes)
    return ShapedArray(_gather_shape(operand, indices, axes), operand.dtype, operand.weak_type)


def _moved(operand, axes):
    """View of `operand` with `axes` first (in order), then the other axes."""
    return np.transpose(operand, list(axes) + _rest_axes(operand.ndim, axes))


def _gather_impl(operand, indices, *, axes):
    operand, indices = np.asarray(operand), np.asarray(indices)
    moved = _moved(operand, axes)
    batch, rest = indices.shape[:-1], moved.shape[len(axes):]
    if any(operand.shape[a] == 0 for a in axes):
        # nothing to clamp into: XLA returns zeros for an empty addressed axis
        return np.zeros(batch + rest, operand.dtype)
    if not axes:
        return np.broadcast_to(moved, batch + rest).copy()
    coords = tuple(np.clip(indices[..., j], 0, operand.shape[a] - 1) for j, a in enumerate(axes))
    return np.asarray(moved[coords], dtype=operand.dtype)


gather_p = Primitive("gather", _gather_abstract, _gather_impl)


# --- scatter family ----------------------------------------------------------------------


def _set_at(target, coords, updates):
    target[coords] = updates


# name: (how an update row combines into the operand, accepted dtype kinds)
_SCATTERS = {
    "scatter": (_set_at, R.ANY),
    "scatter_add": (np.add.at, R.ANY),
    "scatter_mul": (np.multiply.at, R.ANY),
    "scatter_min": (np.minimum.at, R.REAL),
    "scatter_max": (np.maximum.at, R.REAL),
}


def _scatter_abstract(name, kind):
    def rule(operand, indices, updates, *, axes):
        _check_axes(name, operand, indices, axes)
        R.check_kind(name, operand.dtype, kind)
        expected = _gather_shape(operand, indices, axes)
        if updates.shape != expected:
            raise TypeError(
                f"{name}: updates of shape {updates.shape} do not match indices.shape[:-1] + the "
                f"operand dims not in axes = {expected} (operand {operand.shape}, indices "
                f"{indices.shape}, axes={tuple(axes)})."
            )
        R.same_dtype(name, (operand, updates))
        return operand

    return rule


def _scatter_impl(combine):
    def impl(operand, indices, updates, *, axes):
        out = np.array(operand, copy=True)
        indices, updates = np.asarray(indices), np.asarray(updates)
        moved = _moved(out, axes)  # a view: writes land in `out`
        k = len(axes)
        n_rows = int(np.prod(indices.shape[:-1]))
        rows = indices.reshape(n_rows, k)
        upd = updates.reshape((n_rows,) + moved.shape[k:])
        in_bounds = np.all((rows >= 0) & (rows < np.asarray(moved.shape[:k], dtype=np.int64)), axis=1)
        rows, upd = rows[in_bounds], upd[in_bounds]
        if k == 0:
            # every row updates the whole operand: address it through a unit leading axis
            moved, coords = moved[None], (np.zeros(len(upd), np.intp),)
        else:
            coords = tuple(rows[:, j].astype(np.intp) for j in range(k))
        combine(moved, coords, upd)
        return out

    return R.quiet(impl)


SCATTER_PRIMITIVES = {
    name: Primitive(name, _scatter_abstract(name, kind), _scatter_impl(combine))
    for name, (combine, kind) in _SCATTERS.items()
}
scatter_p, scatter_add_p, scatter_mul_p, scatter_min_p, scatter_max_p = SCATTER_PRIMITIVES.values()


# --- lax-level wrappers ------------------------------------------------------------------


def _index_operand(i):
    (i,) = operands(i)
    return i


def _wrap_negative(i, dim):
    """`i + dim` where `i < 0` (JAX's lax.dynamic_slice rule); static ints fold in Python."""
    if isinstance(i, (int, np.integer)) and not isinstance(i, bool):
        i = int(i)
        return _index_operand(np.int32(i + dim if i < 0 else i))
    i = _index_operand(i)
    if i.dtype.kind == "u":
        return i
    zero = Array(np.zeros((), i.dtype))
    return E.select(E.lt(i, zero), E.add(i, Array(np.asarray(dim, i.dtype))), i)


def _start_list(start_indices, shape, name):
    """A sequence of per-dimension start indices (a 1-d index array is split)."""
    if isinstance(start_indices, (Array, Tracer, np.ndarray)):
        start_indices = _index_operand(start_indices)
        if start_indices.ndim != 1:
            raise TypeError(f"{name}: start_indices must be a sequence of scalars or a 1-d array, got shape {start_indices.shape}")
        return [S.reshape(S.slice_in_dim(start_indices, j, j + 1), ()) for j in range(start_indices.shape[0])]
    starts = list(start_indices)
    if len(starts) != len(shape):
        raise TypeError(
            f"{name}: got {len(starts)} start indices for an operand of shape {shape}; pass one "
            f"scalar start index per dimension."
        )
    return starts


def dynamic_slice(operand, start_indices, slice_sizes):
    """`operand[start:start + size]` per dimension, starts traced; clamped into bounds."""
    (x,) = operands(operand)
    starts = _start_list(start_indices, x.shape, "dynamic_slice")
    starts = [_wrap_negative(s, d) for s, d in zip(starts, x.shape)]
    return dynamic_slice_p.bind(x, *starts, slice_sizes=_ints(slice_sizes))


def dynamic_update_slice(operand, update, start_indices):
    """`operand` with `update` written at `start_indices` (clamped so it fits)."""
    x, u = operands(operand, update)
    starts = _start_list(start_indices, x.shape, "dynamic_update_slice")
    starts = [_wrap_negative(s, d) for s, d in zip(starts, x.shape)]
    return dynamic_update_slice_p.bind(x, u, *starts)


def _axis(axis, ndim):
    return R.canonical_axes(axis, ndim)[0]


def _zero_starts(ndim):
    return [0] * ndim


def dynamic_slice_in_dim(operand, start_index, slice_size, axis=0):
    (x,) = operands(operand)
    axis = _axis(axis, x.ndim)
    starts, sizes = _zero_starts(x.ndim), list(x.shape)
    starts[axis], sizes[axis] = start_index, int(slice_size)
    return dynamic_slice(x, starts, sizes)


def dynamic_index_in_dim(operand, index, axis=0, keepdims=True):
    (x,) = operands(operand)
    axis = _axis(axis, x.ndim)
    out = dynamic_slice_in_dim(x, index, 1, axis)
    return out if keepdims else S.squeeze(out, (axis,))


def dynamic_update_slice_in_dim(operand, update, start_index, axis):
    (x,) = operands(operand)
    axis = _axis(axis, x.ndim)
    starts = _zero_starts(x.ndim)
    starts[axis] = start_index
    return dynamic_update_slice(x, update, starts)


def dynamic_update_index_in_dim(operand, update, index, axis):
    x, u = operands(operand, update)
    axis = _axis(axis, x.ndim)
    if u.ndim == x.ndim - 1:
        u = S.expand_dims(u, (axis,))
    return dynamic_update_slice_in_dim(x, u, index, axis)


def _default_axes(indices, axes):
    return tuple(range(indices.shape[-1] if indices.ndim else 0)) if axes is None else _ints(axes)


def gather(operand, indices, axes=None, slice_sizes=None, *, dimension_numbers=None, **xla_options):
    """Rows of `operand` picked by `indices` (shape batch + (k,)) along `axes` (default: the
    first k axes); result shape batch + the other operand dims. Out-of-bounds indices clamp.
    (Simplified signature; see this module's docstring.) Called with JAX's signature (a
    GatherDimensionNumbers and slice_sizes, mode=, fill_value=) it is XLA's gather
    (lax/xla_indexing.py)."""
    if dimension_numbers is not None or _is_xla(axes):
        from . import xla_indexing  # noqa: PLC0415 - it builds on this module

        return xla_indexing.gather(operand, indices, axes if dimension_numbers is None else dimension_numbers,
                                   slice_sizes, **xla_options)
    x, i = operands(operand, indices)
    return gather_p.bind(x, i, axes=_default_axes(i, axes))


def _is_xla(axes):
    """Whether `axes` is JAX's Gather/ScatterDimensionNumbers (a named tuple), not axes."""
    return hasattr(axes, "_fields")


def _scatter_wrapper(prim):
    def wrapper(operand, indices, updates, axes=None, *, dimension_numbers=None, **xla_options):
        if dimension_numbers is not None or _is_xla(axes):
            from . import xla_indexing  # noqa: PLC0415 - it builds on this module

            return getattr(xla_indexing, prim.name)(operand, indices, updates,
                                                    axes if dimension_numbers is None else dimension_numbers, **xla_options)
        x, i, u = operands(operand, indices, updates)
        return prim.bind(x, i, u, axes=_default_axes(i, axes))

    wrapper.__name__ = prim.name
    wrapper.__doc__ = (
        f"`{prim.name}`: combine `updates` (shape indices.shape[:-1] + the operand dims not in "
        f"`axes`) into `operand` at `indices`; out-of-bounds rows are dropped. With JAX's signature "
        f"(a ScatterDimensionNumbers, mode=) it is XLA's {prim.name} (lax/xla_indexing.py)."
    )
    return wrapper


scatter, scatter_add, scatter_mul, scatter_min, scatter_max = (
    _scatter_wrapper(p) for p in SCATTER_PRIMITIVES.values()
)


__all__ = [
    "dynamic_slice", "dynamic_update_slice", "dynamic_slice_in_dim", "dynamic_index_in_dim",
    "dynamic_update_slice_in_dim", "dynamic_update_index_in_dim", "gather", "scatter",
    "scatter_add", "scatter_mul", "scatter_min", "scatter_max",
]
