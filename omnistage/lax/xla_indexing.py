"""XLA's gather and scatter, with JAX's signatures and `GatherDimensionNumbers` /
`ScatterDimensionNumbers`, over omnistage's element-picking `gather` / `scatter*` primitives
(lax/indexing.py), plus `scatter_apply`.

Every window element gets its full operand coordinate (the clamped or checked window start,
from the index vector through `start_index_map` / `scatter_dims_to_operand_dims`, plus its
offset in the window), and the primitive picks (or updates) those elements; collapsed
(inserted) window dimensions are dropped (added) and the result's dimensions put where
`offset_dims` (`update_window_dims`) say. So derivatives and batching are the primitives'.

Out-of-bounds windows, by `mode` (JAX's rules): gather clamps the start (CLIP, also the default
and PROMISE_IN_BOUNDS) or fills the window with `fill_value` (FILL_OR_DROP: NaN for inexact
dtypes, else the minimum for signed and maximum for unsigned integers, True for bool); scatter
drops the whole window (FILL_OR_DROP, the default, and PROMISE_IN_BOUNDS) or clamps (CLIP).
The index vector is the last dimension of the indices, as JAX always makes it. Batching
dimensions (`operand_batching_dims`) are not supported. Imports core and the lax modules beside it only.
"""
import numpy as np

from . import _rules as R
from . import control_flow as CF
from . import elementwise as E
from . import indexing as IX
from . import reductions as RD
from . import shapes as S
from .composites import GatherScatterMode


def _ints(t):
    return tuple(int(v) for v in t)


def _no_batching(dn, name):
    if getattr(dn, "operand_batching_dims", ()) or getattr(dn, "start_indices_batching_dims", ()) or \
            getattr(dn, "scatter_indices_batching_dims", ()):
        raise NotImplementedError(f"{name}: batching dimensions (operand_batching_dims) are not supported by omnistage")


def _starts(indices, index_map, operand_shape, window, clip):
    """(starts of shape batch + (ndim,) as int32, in-bounds mask of shape batch): the window
    start of every operand dimension (0 where no index addresses it)."""
    idx = E.convert_element_type(indices, np.int32)
    batch = idx.shape[:-1]
    if idx.shape[-1] != len(index_map):
        raise TypeError(f"the index vector has {idx.shape[-1]} entries but the dimension numbers map "
                        f"{len(index_map)} operand dimensions")
    cols, ok = [], None
    for d in range(len(operand_shape)):
        if d in index_map:
            k = index_map.index(d)
            col = S.reshape(S.slice_in_dim(idx, k, k + 1, axis=idx.ndim - 1), batch)
            hi = E.convert_element_type(operand_shape[d] - window[d], np.int32)
            lo = E.convert_element_type(0, np.int32)
            inside = E.bitwise_and(E.ge(col, lo), E.le(col, hi))
            ok = inside if ok is None else E.bitwise_and(ok, inside)
            if clip:
                col = E.clamp(lo, col, hi)
        else:
            col = S.broadcast_in_dim(E.convert_element_type(0, np.int32), batch, ())
        cols.append(S.expand_dims(col, (len(batch),)))
    starts = S.concatenate(cols, len(batch))
    if ok is None:
        ok = S.broadcast_in_dim(E.convert_element_type(True, np.bool_), batch, ())
    return starts, ok


def _coordinates(starts, window):
    """Full coordinates, shape batch + window + (ndim,): every window element's position."""
    batch, nd = starts.shape[:-1], len(window)
    shape = batch + tuple(window) + (nd,)
    base = S.broadcast_in_dim(starts, shape, tuple(range(len(batch))) + (len(shape) - 1,))
    offsets = [S.expand_dims(S.broadcasted_iota(np.int32, tuple(window), d), (nd,)) for d in range(nd)]
    offset = S.concatenate(offsets, nd) if nd else S.broadcast_in_dim(E.convert_element_type(0, np.int32), (0,), ())
    return E.add(base, S.broadcast_in_dim(offset, shape, tuple(range(len(batch), len(shape)))))


def _fill_value(dtype, fill_value):
    if fill_value is not None:
        return fill_value
    dt = np.dtype(dtype)
    if dt.kind in "fc":
        return np.nan
    if dt.kind == "b":
        return True
    return np.iinfo(dt).min if dt.kind == "i" else np.iinfo(dt).max


def gather(operand, start_indices, dimension_numbers, slice_sizes, *, unique_indices=False,
           indices_are_sorted=False, mode=None, fill_value=None):
    """XLA's gather (see the module docstring)."""
    x, idx = R.operands(operand, start_indices)
    dn = dimension_numbers
    _no_batching(dn, "gather")
    if x.ndim == 0:
        raise TypeError("gather: the operand must have rank >= 1")
    window = _ints(slice_sizes)
    if len(window) != x.ndim:
        raise TypeError(f"gather: slice_sizes {window} must have one entry per operand dimension (shape {x.shape})")
    collapsed, offset_dims, index_map = _ints(dn.collapsed_slice_dims), _ints(dn.offset_dims), _ints(dn.start_index_map)
    if any(window[d] != 1 for d in collapsed):
        raise TypeError(f"gather: collapsed_slice_dims {collapsed} must have slice size 1, slice_sizes {window}")
    mode = GatherScatterMode.CLIP if mode is None else GatherScatterMode.from_any(mode)
    starts, ok = _starts(idx, index_map, x.shape, window, clip=True)
    batch = starts.shape[:-1]
    picked = IX.gather(x, _coordinates(starts, window), tuple(range(x.ndim)))  # batch + window
    kept = tuple(d for d in range(x.ndim) if d not in collapsed)
    picked = S.reshape(picked, batch + tuple(window[d] for d in kept))
    if mode == GatherScatterMode.FILL_OR_DROP:
        fill = E.convert_element_type(_fill_value(x.dtype, fill_value), x.dtype)
        mask = S.broadcast_in_dim(ok, picked.shape, tuple(range(len(batch))))
        picked = E.select(mask, picked, S.broadcast_in_dim(fill, picked.shape, ()))
    # output positions: offset_dims hold the kept window dims in order, the rest the batch dims
    out_rank = len(batch) + len(kept)
    if len(offset_dims) != len(kept):
        raise TypeError(f"gather: offset_dims {offset_dims} must name {len(kept)} output dimensions")
    batch_pos = [p for p in range(out_rank) if p not in offset_dims]
    perm = [0] * out_rank
    for i, p in enumerate(batch_pos):
        perm[p] = i
    for j, p in enumerate(offset_dims):
        perm[p] = len(batch) + j
    return S.transpose(picked, tuple(perm))


_COMBINE = {"scatter": IX.scatter, "scatter_add": IX.scatter_add, "scatter_mul": IX.scatter_mul,
            "scatter_min": IX.scatter_min, "scatter_max": IX.scatter_max}


def _scatter_coordinates(x, idx, upd_shape, dn, mode):
    """(coordinates of shape update-batch + window + (ndim,), update permutation to batch +
    window order): dropped windows get coordinates out of bounds (the primitive drops those)."""
    _no_batching(dn, "scatter")
    window_dims, inserted = _ints(dn.update_window_dims), _ints(dn.inserted_window_dims)
    index_map = _ints(dn.scatter_dims_to_operand_dims)
    kept = [d for d in range(x.ndim) if d not in inserted]
    if len(window_dims) != len(kept):
        raise TypeError(f"scatter: update_window_dims {window_dims} must name {len(kept)} update dimensions")
    window = [1] * x.ndim
    for d, u in zip(kept, window_dims):
        window[d] = upd_shape[u]
    mode = GatherScatterMode.FILL_OR_DROP if mode is None else GatherScatterMode.from_any(mode)
    starts, ok = _starts(idx, index_map, x.shape, window, clip=mode == GatherScatterMode.CLIP)
    coords = _coordinates(starts, window)
    batch = starts.shape[:-1]
    if mode != GatherScatterMode.CLIP:  # drop the whole window: move its coordinates out of bounds
        far = E.convert_element_type(max(x.shape) if x.ndim else 1, np.int32)
        mask = S.broadcast_in_dim(ok, coords.shape, tuple(range(len(batch))))
        coords = E.select(mask, coords, S.broadcast_in_dim(far, coords.shape, ()))
    coords = S.reshape(coords, batch + tuple(window[d] for d in kept) + (x.ndim,))
    scatter_dims = [u for u in range(len(upd_shape)) if u not in window_dims]
    return coords, tuple(scatter_dims) + window_dims


def _scatter(name):
    def scatter(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
                unique_indices=False, mode=None, update_jaxpr=None, update_consts=()):
        x, idx, u = R.operands(operand, scatter_indices, updates)
        coords, perm = _scatter_coordinates(x, idx, u.shape, dimension_numbers, mode)
        u = S.transpose(u, perm) if perm != tuple(range(u.ndim)) else u
        return _COMBINE[name](x, coords, u, tuple(range(x.ndim)))

    scatter.__name__ = name
    scatter.__doc__ = f"XLA's {name} with ScatterDimensionNumbers (see the module docstring)."
    return scatter


scatter, scatter_add, scatter_mul, scatter_min, scatter_max = (_scatter(n) for n in _COMBINE)


def scatter_apply(operand, scatter_indices, func, dimension_numbers, *, update_shape=(), indices_are_sorted=False,
                  unique_indices=False, mode=None):
    """`func` applied to the operand's elements at the scattered positions, once per time each
    is addressed (as XLA's sequential scatter applies it); `func` acts elementwise."""
    x, idx = R.operands(operand, scatter_indices)
    ones = S.broadcast_in_dim(E.convert_element_type(1, np.int32), _ints(update_shape), ())
    counts = scatter_add(S.broadcast_in_dim(E.convert_element_type(0, np.int32), x.shape, ()), idx, ones,
                         dimension_numbers, mode=mode)
    most = RD.reduce_max(counts, tuple(range(counts.ndim))) if counts.ndim else counts

    def body(r, value):
        return E.select(E.gt(counts, S.broadcast_in_dim(r, counts.shape, ())), func(value), value)

    return CF.fori_loop(E.convert_element_type(0, np.int32), most, body, x)


def is_xla_dimension_numbers(dn):
    """Whether `dn` is a Gather/ScatterDimensionNumbers (JAX's signature) rather than axes."""
    return hasattr(dn, "_fields") and ("offset_dims" in dn._fields or "update_window_dims" in dn._fields)


__all__ = ["scatter_apply"]
