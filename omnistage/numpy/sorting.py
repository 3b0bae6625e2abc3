"""Sorting and searching in `omnistage.numpy`: sort, argsort, lexsort, partition,
argpartition, sort_complex, searchsorted, unique (and the array API unique_* forms).

Everything is built on the one `lax.sort` primitive (multi-operand, lexicographic over
its first `num_keys` operands, stable, NaNs last), plus slices, reversals and cumulative
sums; no gathers. `unique` has a data-dependent output length: without `size=` it runs
eagerly on concrete input only, and under a trace asks for `size=` (as JAX does).
Imports core and lax only.
"""
import collections
import operator

import numpy as np

from ..core import dtypes
from ..core.array import Array
from ..core.tracer import Tracer
from .. import lax
from ..lax import _rules
from ._promote import check_arraylike, promote_dtypes
from .shapes import bool_and, bool_not, bool_or, canonicalize_axis, moveaxis, ravel


def _operand(name, a):
    check_arraylike(name, a)
    return _rules.to_operand(a)


def _index_dtype():
    return dtypes.default_int_dtype()


def _flat_or_axis(x, axis):
    """(array, axis): flattened with axis 0 when `axis` is None."""
    if axis is None:
        return ravel(x), 0
    return x, canonicalize_axis(axis, x.ndim)


# --- sort, argsort, lexsort -------------------------------------------------------------


def sort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    """Sorted copy of `a` along `axis` (flattened when None); NaNs sort last (first when
    `descending`)."""
    if order is not None:
        raise ValueError("jnp.sort: the 'order' argument (structured arrays) is not supported")
    x, ax = _flat_or_axis(_operand("sort", a), axis)
    out = lax.sort(x, ax, is_stable=stable)
    return lax.rev(out, (ax,)) if descending else out


def argsort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    """Indices that sort `a` along `axis`; ties keep their original order, also when
    `descending` (the input and its indices are reversed around an ascending sort)."""
    if order is not None:
        raise ValueError("jnp.argsort: the 'order' argument (structured arrays) is not supported")
    x, ax = _flat_or_axis(_operand("argsort", a), axis)
    idx = lax.broadcasted_iota(_index_dtype(), x.shape, ax)
    if descending:
        x, idx = lax.rev(x, (ax,)), lax.rev(idx, (ax,))
    _, perm = lax.sort((x, idx), ax, is_stable=True, num_keys=1)
    return lax.rev(perm, (ax,)) if descending else perm


def lexsort(keys, axis=-1):
    """Indices sorting by several keys; the last key is the primary one (as NumPy)."""
    if isinstance(keys, (Array, Tracer, np.ndarray)):
        keys = [keys[i] for i in range(keys.shape[0])] if np.ndim(keys) > 1 else [keys]
    keys = [_operand("lexsort", k) for k in keys]
    if not keys:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    if len({k.shape for k in keys}) != 1:
        raise ValueError(f"lexsort: all keys need to be the same shape, got {', '.join(str(k.shape) for k in keys)}")
    if keys[0].ndim == 0:
        raise TypeError("lexsort: keys must be at least 1-dimensional")
    ax = canonicalize_axis(axis, keys[0].ndim)
    idx = lax.broadcasted_iota(_index_dtype(), keys[0].shape, ax)
    outs = lax.sort(tuple(keys[::-1]) + (idx,), ax, is_stable=True, num_keys=len(keys))
    return outs[-1]


def sort_complex(a):
    """`a` sorted along the last axis, as a complex array."""
    x = sort(a)
    return lax.convert_element_type(x, dtypes.complex_dtype(dtypes.to_inexact(x.dtype)) if not dtypes.is_complex(x.dtype) else x.dtype)


def _kth(kth, n):
    k = operator.index(kth)
    if not -n <= k < n:
        raise ValueError(f"kth(={kth}) out of bounds for axis of size {n}")
    return k % n


def partition(a, kth, axis=-1):
    """Entries <= the kth-smallest before it, the rest after (JAX's layout: the smallest
    kth + 1 ascending, then the others descending)."""
    x = _operand("partition", a)
    ax = canonicalize_axis(axis, x.ndim)
    n = x.shape[ax]
    k = _kth(kth, n)
    s = lax.sort(x, ax)
    bottom = lax.slice_in_dim(s, 0, k + 1, 1, ax)
    top = lax.rev(lax.slice_in_dim(s, k + 1, n, 1, ax), (ax,))
    return lax.concatenate([bottom, top], ax)


def argpartition(a, kth, axis=-1):
    """Indices that partition `a` around its kth-smallest entry (a stable argsort is one)."""
    x = _operand("argpartition", a)
    ax = canonicalize_axis(axis, x.ndim)
    _kth(kth, x.shape[ax])
    return argsort(x, ax)


# --- searchsorted ------------------------------------------------------------------------


def _sorted_by(a, sorter):
    """a[sorter] without a gather: scatter positions are the inverse permutation."""
    perm = lax.convert_element_type(_operand("searchsorted", sorter), np.int32)
    if perm.shape != a.shape:
        raise ValueError(f"searchsorted: sorter of shape {perm.shape} must match a of shape {a.shape}")
    inverse = lax.sort_key_val(perm, lax.iota(np.int32, a.shape[0]), 0)[1]
    return lax.sort_key_val(inverse, a, 0)[1]


def _search_by_sort(a, v, side):
    """Insertion points by one merge-sort of a and v: a v-entry's answer is the number of
    a-entries sorted before it. Ties: v before equal a's for 'left', after for 'right'."""
    n, m = a.shape[0], v.shape[0]
    v_tag, a_tag = (0, 1) if side == "left" else (1, 0)
    tags = lax.concatenate([lax.broadcast_in_dim(Array(np.int32(a_tag)), (n,), ()),
                            lax.broadcast_in_dim(Array(np.int32(v_tag)), (m,), ())], 0)
    values = lax.concatenate([a, v], 0)
    origin = lax.iota(np.int32, n + m)
    _, tags_sorted, origin_sorted = lax.sort((values, tags, origin), 0, is_stable=True, num_keys=2)
    is_a = lax.convert_element_type(lax.eq(tags_sorted, Array(np.int32(a_tag))), _index_dtype())
    a_before = lax.sub(lax.cumsum(is_a, 0), is_a)
    back = lax.sort_key_val(origin_sorted, a_before, 0)[1]
    return lax.slice_in_dim(back, n, n + m, 1, 0)


def _total_order_lt(x, y):
    """x < y in sort order (NaN after everything); x and y broadcast already."""
    if not dtypes.is_inexact(x.dtype):
        return lax.lt(x, y)
    if dtypes.is_complex(x.dtype):
        xr, yr, xi, yi = lax.real(x), lax.real(y), lax.imag(x), lax.imag(y)
        return bool_or(_total_order_lt(xr, yr), bool_and(lax.eq(xr, yr), _total_order_lt(xi, yi)))
    x_nan, y_nan = lax.ne(x, x), lax.ne(y, y)
    return bool_or(lax.lt(x, y), bool_and(y_nan, bool_not(x_nan)))


def _search_compare_all(a, v, side):
    n, m = a.shape[0], v.shape[0]
    aa = lax.broadcast_in_dim(a, (m, n), (1,))
    vv = lax.broadcast_in_dim(v, (m, n), (0,))
    before = _total_order_lt(aa, vv) if side == "left" else bool_not(_total_order_lt(vv, aa))
    return lax.reduce_sum(lax.convert_element_type(before, _index_dtype()), (1,))


_SEARCH_METHODS = {
    "scan": _search_by_sort, "scan_unrolled": _search_by_sort, "sort": _search_by_sort,
    "compare_all": _search_compare_all,
}


def searchsorted(a, v, side="left", sorter=None, *, method="scan"):
    """Indices where `v`'s entries would be inserted into sorted 1-d `a` to keep it sorted."""
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    if method not in _SEARCH_METHODS:
        raise ValueError(f"searchsorted: method must be one of {sorted(_SEARCH_METHODS)}, got {method!r}")
    check_arraylike("searchsorted", a, v)
    a, v = (_rules.to_operand(t) for t in promote_dtypes(a, v))
    if a.ndim != 1:
        raise ValueError(f"searchsorted: a must be 1-dimensional, got shape {a.shape}")
    if sorter is not None:
        a = _sorted_by(a, sorter)
    flat = ravel(v)
    if a.shape[0] == 0 or flat.shape[0] == 0:
        return lax.broadcast_in_dim(Array(np.zeros((), _index_dtype())), v.shape, ()) if v.shape else lax.convert_element_type(Array(np.int32(0)), _index_dtype())
    out = _SEARCH_METHODS[method](a, flat, side)
    return lax.reshape(out, v.shape)


# --- unique ------------------------------------------------------------------------------


def _unique_eager(x, return_index, return_inverse, return_counts, axis, equal_nan):
    res = np.unique(np.asarray(x), return_index, return_inverse, return_counts, axis=axis, equal_nan=equal_nan)
    if not isinstance(res, tuple):
        return Array(res)
    values, *extra = res
    return (Array(values), *[Array(e.astype(_index_dtype())) for e in extra])


def _rows_differ(cols, equal_nan):
    """is_first[i]: row i of the sorted columns differs from row i - 1 (row 0: True)."""
    n = cols[0].shape[0]
    differs = None
    for c in cols:
        hi, lo = lax.slice_in_dim(c, 1, n, 1, 0), lax.slice_in_dim(c, 0, n - 1, 1, 0)
        d = lax.ne(hi, lo)
        if equal_nan and dtypes.is_inexact(c.dtype):
            d = bool_and(d, bool_not(bool_and(lax.ne(hi, hi), lax.ne(lo, lo))))
        differs = d if differs is None else bool_or(differs, d)
    return lax.concatenate([Array(np.ones((1,), bool)), differs], 0)


def _take_front(x, count, fill):
    """The first `count` entries along axis 0, padded with the 0-d `fill` if too short."""
    n = x.shape[0]
    if n >= count:
        return lax.slice_in_dim(x, 0, count, 1, 0)
    pad = lax.broadcast_in_dim(lax.convert_element_type(fill, x.dtype), (count - n,) + x.shape[1:], ())
    return lax.concatenate([x, pad], 0)


def _select_rows(valid, rows, fill):
    mask = lax.broadcast_in_dim(valid, rows.shape, (0,))
    return lax.select(mask, rows, lax.broadcast_in_dim(fill, rows.shape, tuple(range(rows.ndim - fill.ndim, rows.ndim))))


def _unique_sized(x, return_index, return_inverse, return_counts, axis, equal_nan, size, fill_value):
    """unique with a static output length `size` (traceable): sort rows, mark first
    occurrences, move them to the front with a second stable sort, pad to `size`."""
    shape = x.shape
    if axis is None:
        rows = lax.reshape(x, (x.size, 1))
        ax = 0
    else:
        ax = canonicalize_axis(axis, x.ndim)
        moved = moveaxis(x, ax, 0)
        rows = lax.reshape(moved, (moved.shape[0], int(np.prod(moved.shape[1:], dtype=int))))
    n, width = rows.shape
    idt = _index_dtype()
    cols = [lax.reshape(lax.slice_in_dim(rows, c, c + 1, 1, 1), (n,)) for c in range(width)]
    if n == 0:
        cols_sorted, perm, is_first = cols, lax.iota(idt, 0), Array(np.zeros((0,), bool))
    else:
        *cols_sorted, perm = lax.sort(tuple(cols) + (lax.iota(idt, n),), 0, is_stable=True, num_keys=width)
        is_first = _rows_differ(cols_sorted, equal_nan)
    first_i = lax.convert_element_type(is_first, idt)
    count = lax.reduce_sum(first_i, (0,))
    not_first = lax.sub(Array(np.ones((), idt)), first_i) if n else first_i
    front = lax.sort((not_first, *cols_sorted, perm, lax.iota(idt, n)), 0, is_stable=True, num_keys=1) if n else (not_first, *cols_sorted, perm, lax.iota(idt, 0))
    front_cols, front_perm, front_pos = front[1:1 + width], front[-2], front[-1]
    k = lax.iota(idt, size)
    valid = lax.lt(k, count)
    zero = Array(np.zeros((), x.dtype))
    min_row = [(_take_front(c, 1, zero)) for c in cols_sorted]
    if fill_value is None:
        fill_row = lax.reshape(lax.concatenate(min_row, 0), (width,)) if width else Array(np.zeros((0,), x.dtype))
    else:
        fill_row = lax.broadcast_in_dim(lax.convert_element_type(_rules.to_operand(fill_value), x.dtype), (width,), ())
    picked = lax.concatenate([lax.reshape(_take_front(c, size, zero), (size, 1)) for c in front_cols], 1) if width else lax.broadcast_in_dim(zero, (size, 0), ())
    values_rows = _select_rows(valid, picked, fill_row)
    if axis is None:
        values = lax.reshape(values_rows, (size,))
    else:
        values = moveaxis(lax.reshape(values_rows, (size,) + moved.shape[1:]), 0, ax)
    outs = [values]
    if return_index:
        first_index = _take_front(perm, 1, Array(np.zeros((), idt)))
        outs.append(lax.select(valid, _take_front(front_perm, size, Array(np.zeros((), idt))),
                               lax.broadcast_in_dim(lax.reshape(first_index, ()), (size,), ())))
    if return_inverse:
        rank = lax.sub(lax.cumsum(first_i, 0), Array(np.ones((), idt))) if n else first_i
        inverse = lax.sort_key_val(perm, rank, 0)[1] if n else rank
        outs.append(lax.reshape(inverse, shape) if axis is None else inverse)
    if return_counts:
        nn = Array(np.asarray(n, idt))
        starts = _take_front(front_pos, size + 1, nn)
        starts = lax.select(lax.lt(lax.iota(idt, size + 1), count), starts, lax.broadcast_in_dim(nn, (size + 1,), ()))
        counts = lax.sub(lax.slice_in_dim(starts, 1, size + 1, 1, 0), lax.slice_in_dim(starts, 0, size, 1, 0))
        outs.append(counts)
    return outs[0] if len(outs) == 1 else tuple(outs)


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
           equal_nan=True, size=None, fill_value=None, sorted=True):
    """Sorted unique values (rows, with `axis`). The output length depends on the data, so
    under a trace pass a static `size=`: the result is truncated or padded to it (padding
    with `fill_value`, default the smallest unique value)."""
    x = _operand("unique", ar)
    if size is None:
        if isinstance(x, Tracer):
            raise x.concretization_error(
                "jnp.unique's output size depends on the values of its input, so it cannot be "
                "traced. Pass a static size= argument (e.g. jnp.unique(x, size=n, fill_value=v)): "
                "the result is then truncated or padded to exactly `size` entries"
            )
        return _unique_eager(x, return_index, return_inverse, return_counts, axis, equal_nan)
    size = operator.index(size)
    if size < 0:
        raise ValueError(f"unique: size must be non-negative, got {size}")
    return _unique_sized(x, return_index, return_inverse, return_counts, axis, equal_nan, size, fill_value)


UniqueAllResult = collections.namedtuple("UniqueAllResult", ["values", "indices", "inverse_indices", "counts"])
UniqueCountsResult = collections.namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = collections.namedtuple("UniqueInverseResult", ["values", "inverse_indices"])


def unique_values(x, /, *, size=None, fill_value=None):
    return unique(x, size=size, fill_value=fill_value)


def unique_counts(x, /, *, size=None, fill_value=None):
    return UniqueCountsResult(*unique(x, return_counts=True, size=size, fill_value=fill_value))


def unique_inverse(x, /, *, size=None, fill_value=None):
    return UniqueInverseResult(*unique(x, return_inverse=True, size=size, fill_value=fill_value))


def unique_all(x, /, *, size=None, fill_value=None):
    return UniqueAllResult(*unique(x, True, True, True, size=size, fill_value=fill_value))


__all__ = [
    "sort", "argsort", "lexsort", "sort_complex", "partition", "argpartition", "searchsorted",
    "unique", "unique_values", "unique_counts", "unique_inverse", "unique_all",
]
