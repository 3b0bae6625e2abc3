"""NumPy's index helpers as JAX has them: `r_`, `c_`, `s_`, `index_exp`, `mgrid`, `ogrid`,
`tril_indices`/`triu_indices` (and `_from`), `diag_indices` (and `_from`), `mask_indices`,
`unravel_index`, `ravel_multi_index`, `fill_diagonal`, `put_along_axis`, `put`, `place`,
`insert`, `delete`, `append`, `block`.

Index positions computed from static shapes are NumPy arrays made at trace time (they are
constants, as in JAX); anything that depends on values is lax operations. Functions NumPy
runs in place take `inplace=False` and return the new array, as JAX's. Imports core, lax and
this package's public functions only.
"""
import numpy as np

from .. import lax


def _jnp():
    from .. import numpy as jnp  # noqa: PLC0415 - this package imports this module

    return jnp


class _AxisConcatenator:
    """r_ / c_: concatenation along an axis of arrays, scalars and slices (ranges)."""

    def __init__(self, axis, ndmin, trans1d, name):
        self.axis, self.ndmin, self.trans1d, self.name = axis, ndmin, trans1d, name

    def __getitem__(self, key):
        jnp = _jnp()
        key = key if isinstance(key, tuple) else (key,)
        axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d
        if key and isinstance(key[0], str):
            spec = key[0].split(",")
            key = key[1:]
            if spec[0] in ("r", "c"):
                raise NotImplementedError(f"{self.name}: the 'r' and 'c' matrix directives are not supported.")
            axis = int(spec[0])
            if len(spec) > 1:
                ndmin = int(spec[1])
            if len(spec) > 2:
                trans1d = int(spec[2])
        parts = []
        for item in key:
            if isinstance(item, slice):
                step = item.step if item.step is not None else 1
                start = item.start if item.start is not None else 0
                if isinstance(step, complex):
                    arr = jnp.linspace(start, item.stop, int(abs(step)))
                else:
                    arr = jnp.arange(start, item.stop, step)
            else:
                arr = jnp.asarray(item)
            if arr.ndim < ndmin:
                arr = jnp.array(arr, ndmin=ndmin) if trans1d == -1 or arr.ndim != 1 else _place_1d(arr, ndmin, trans1d)
            parts.append(arr)
        return jnp.concatenate(parts, axis=axis)

    def __len__(self):
        return 0


def _place_1d(arr, ndmin, trans1d):
    shape = [1] * ndmin
    shape[trans1d] = arr.shape[0]
    return _jnp().reshape(arr, shape)


r_ = _AxisConcatenator(0, 1, -1, "r_")
c_ = _AxisConcatenator(-1, 2, 0, "c_")
s_ = np.s_
index_exp = np.index_exp


class _Grid:
    def __init__(self, sparse):
        self.sparse = sparse

    def __getitem__(self, key):
        jnp = _jnp()
        return jax_grid(np.ogrid[key] if self.sparse else np.mgrid[key], jnp)


def jax_grid(value, jnp):
    if isinstance(value, (list, tuple)):
        return [jnp.asarray(v) for v in value]
    return jnp.asarray(value)


mgrid = _Grid(sparse=False)
ogrid = _Grid(sparse=True)


def tril_indices(n, k=0, m=None):
    jnp = _jnp()
    return tuple(jnp.asarray(i, dtype=jnp.int32) for i in np.tril_indices(n, k, m))


def triu_indices(n, k=0, m=None):
    jnp = _jnp()
    return tuple(jnp.asarray(i, dtype=jnp.int32) for i in np.triu_indices(n, k, m))


def tril_indices_from(arr, k=0):
    if np.ndim(arr) != 2:
        raise ValueError("tril_indices_from: input array must be 2-D")
    return tril_indices(np.shape(arr)[-2], k, np.shape(arr)[-1])


def triu_indices_from(arr, k=0):
    if np.ndim(arr) != 2:
        raise ValueError("triu_indices_from: input array must be 2-D")
    return triu_indices(np.shape(arr)[-2], k, np.shape(arr)[-1])


def diag_indices(n, ndim=2):
    jnp = _jnp()
    return (jnp.arange(n, dtype=jnp.int32),) * ndim


def diag_indices_from(arr):
    shape = np.shape(arr)
    if len(shape) < 2 or len(set(shape)) != 1:
        raise ValueError("diag_indices_from: input must be at least 2-D with all dimensions equal")
    return diag_indices(shape[0], len(shape))


def mask_indices(n, mask_func, k=0, *, size=None):
    """Indices where mask_func(ones((n, n)), k) is nonzero (static: computed with NumPy)."""
    jnp = _jnp()
    return tuple(jnp.asarray(i, dtype=jnp.int32) for i in np.nonzero(np.asarray(mask_func(np.ones((n, n)), k)))[0:2])


def unravel_index(indices, shape):
    """The coordinate arrays of flat `indices` in an array of `shape` (out-of-range indices
    clip, negative ones count from the end, as JAX's)."""
    jnp = _jnp()
    idx = jnp.asarray(indices)
    size = int(np.prod(shape))
    idx = jnp.where(idx < 0, idx + size, idx)
    idx = jnp.clip(idx, 0, max(size - 1, 0))
    out = []
    for d in reversed(shape):
        out.append(idx % d)
        idx = idx // d
    return tuple(reversed(out))


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """Flat indices of coordinate arrays; mode 'clip' or 'wrap' ('raise' cannot check traced
    values and clips, as JAX does for traced input)."""
    jnp = _jnp()
    if order not in ("C", "F"):
        raise ValueError("ravel_multi_index: order must be 'C' or 'F'")
    if len(multi_index) != len(dims):
        raise ValueError(f"ravel_multi_index: {len(multi_index)} index arrays for {len(dims)} dimensions")
    coords = [jnp.asarray(i) for i in multi_index]
    coords = [jnp.mod(c, d) if mode == "wrap" else jnp.clip(c, 0, d - 1) for c, d in zip(coords, dims)]
    order_dims = list(range(len(dims)))[::-1] if order == "C" else list(range(len(dims)))
    flat, stride = 0, 1
    for i in order_dims:
        flat = flat + coords[i] * stride
        stride *= dims[i]
    return jnp.asarray(flat)


def fill_diagonal(a, val, wrap=False, *, inplace=True):
    """`a` with its main diagonal set to `val` (inplace must be False: arrays are immutable)."""
    jnp = _jnp()
    if inplace:
        raise NotImplementedError("omnistage.numpy.fill_diagonal: arrays are immutable; pass inplace=False.")
    a = jnp.asarray(a)
    if a.ndim < 2:
        raise ValueError("array must be at least 2-d")
    if a.ndim > 2 and len(set(a.shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    n = min(a.shape) if a.ndim > 2 or not wrap else a.shape[0]
    if a.ndim == 2 and wrap:
        rows = np.arange(a.shape[0])
        keep = rows % (a.shape[1] + 1) < a.shape[1]
        rows = rows[keep]
        cols = rows % (a.shape[1] + 1)
        idx = (rows, cols)
        n = len(rows)
    else:
        idx = (np.arange(n),) * a.ndim
    values = jnp.resize(jnp.ravel(jnp.asarray(val, dtype=a.dtype)), (n,)) if n else jnp.zeros((0,), a.dtype)
    return a.at[idx].set(values)


def put_along_axis(arr, indices, values, axis, inplace=True, *, mode=None):
    """arr with values put at `indices` along `axis` (inplace must be False)."""
    jnp = _jnp()
    if inplace:
        raise ValueError("omnistage.numpy.put_along_axis cannot modify arrays in place: pass inplace=False.")
    arr, indices = jnp.asarray(arr), jnp.asarray(indices)
    if axis is None:
        arr = jnp.ravel(arr)
        axis = 0
    axis = axis % arr.ndim
    shape = jnp.broadcast_shapes(indices.shape, tuple(1 if i == axis else d for i, d in enumerate(arr.shape)))
    indices = jnp.broadcast_to(indices, shape)
    idx = tuple(indices if i == axis else np.arange(d).reshape([-1 if j == i else 1 for j in range(arr.ndim)])
                for i, d in enumerate(shape))
    return arr.at[idx].set(jnp.broadcast_to(jnp.asarray(values, dtype=arr.dtype), shape), mode=mode)


def put(a, ind, v, mode=None, *, inplace=True):
    """a with a.flat[ind] = v (inplace must be False)."""
    jnp = _jnp()
    if inplace:
        raise ValueError("omnistage.numpy.put cannot modify arrays in place: pass inplace=False.")
    a = jnp.asarray(a)
    ind = jnp.ravel(jnp.asarray(ind))
    v = jnp.ravel(jnp.asarray(v, dtype=a.dtype))
    if ind.size == 0 or a.size == 0:
        return a
    if v.size == 0:
        raise ValueError("put: cannot replace values with an empty array")
    v = jnp.resize(v, ind.shape)
    if mode == "wrap":
        ind = jnp.mod(ind, a.size)
    elif mode == "clip":
        ind = jnp.clip(ind, 0, a.size - 1)
    return jnp.ravel(a).at[ind].set(v, mode="drop" if mode is None else None).reshape(a.shape)


def place(arr, mask, vals, *, inplace=True):
    """arr with the elements where mask is true replaced, in order, by vals (cycled)."""
    jnp = _jnp()
    if inplace:
        raise ValueError("omnistage.numpy.place cannot modify arrays in place: pass inplace=False.")
    arr = jnp.asarray(arr)
    mask = jnp.ravel(jnp.asarray(mask, dtype=bool))
    vals = jnp.ravel(jnp.asarray(vals, dtype=arr.dtype))
    if vals.size == 0:
        return arr
    position = (jnp.cumsum(mask) - 1) % vals.shape[0]
    return jnp.where(mask, jnp.take(vals, position), jnp.ravel(arr)).reshape(arr.shape)


def delete(arr, obj, axis=None, *, assume_unique_indices=False):
    """arr without the entries `obj` (an int, slice or static index array) along `axis`."""
    jnp = _jnp()
    arr = jnp.asarray(arr)
    if axis is None:
        arr, axis = jnp.ravel(arr), 0
    axis = axis % arr.ndim
    n = arr.shape[axis]
    keep = np.ones(n, bool)
    if isinstance(obj, slice):
        keep[obj] = False
    else:
        try:
            idx = np.asarray(obj)
        except Exception as e:  # noqa: BLE001
            raise TypeError("omnistage.numpy.delete: obj must be static (an int, slice or NumPy indices).") from e
        if idx.dtype == bool:
            keep[idx] = False
        else:
            keep[np.where(idx < 0, idx + n, idx).astype(int)] = False
    return jnp.take(arr, np.nonzero(keep)[0], axis=axis)


def insert(arr, obj, values, axis=None):
    """arr with values inserted before the static index (or indices) obj along axis."""
    jnp = _jnp()
    arr = jnp.asarray(arr)
    if axis is None:
        arr, axis = jnp.ravel(arr), 0
    axis = axis % arr.ndim
    n = arr.shape[axis]
    indices = np.arange(n)[obj] if isinstance(obj, slice) else np.asarray(obj)
    scalar = indices.ndim == 0
    indices = np.atleast_1d(indices).astype(int)
    indices = np.where(indices < 0, indices + n, indices)
    values = jnp.asarray(values, dtype=arr.dtype)
    if scalar:
        values = jnp.moveaxis(jnp.expand_dims(values, 0) if values.ndim < arr.ndim else values, 0, axis) if values.ndim else values
        count = values.shape[axis] if values.ndim == arr.ndim else 1
        indices = np.repeat(indices, count)
    count = len(indices)
    shape = list(arr.shape)
    shape[axis] = count
    values = jnp.broadcast_to(values, shape) if values.ndim <= arr.ndim else values
    # positions of the new entries in the result, then of the old ones
    order = np.argsort(indices, kind="stable")
    new_pos = np.empty(count, int)
    new_pos[order] = indices[order] + np.arange(count)
    old_pos = np.arange(n) + np.searchsorted(np.sort(indices), np.arange(n), side="right")
    out_shape = list(arr.shape)
    out_shape[axis] = n + count
    out = jnp.zeros(out_shape, arr.dtype)
    select = lambda pos: tuple(pos if i == axis else slice(None) for i in range(arr.ndim))  # noqa: E731
    out = out.at[select(old_pos)].set(arr)
    return out.at[select(new_pos)].set(values)


def append(arr, values, axis=None):
    jnp = _jnp()
    if axis is None:
        return jnp.concatenate([jnp.ravel(arr), jnp.ravel(values)])
    return jnp.concatenate([arr, values], axis=axis)


def block(arrays):
    """Assemble an array from nested lists of blocks (NumPy's `block`)."""
    jnp = _jnp()

    def depth(x):
        return 1 + depth(x[0]) if isinstance(x, list) and x else (1 if isinstance(x, list) else 0)

    total = depth(arrays)

    def rank(x):
        return max(rank(v) for v in x) if isinstance(x, list) else jnp.ndim(x)

    ndim = max(rank(arrays), total)

    def build(x, level):
        if not isinstance(x, list):
            return jnp.array(x, ndmin=ndim) if jnp.ndim(x) < ndim else jnp.asarray(x)
        return jnp.concatenate([build(v, level + 1) for v in x], axis=-(total - level))

    if isinstance(arrays, tuple):
        raise TypeError("block: arrays must be nested lists, not tuples")
    return build(arrays, 0)


__all__ = [
    "r_", "c_", "s_", "index_exp", "mgrid", "ogrid", "tril_indices", "triu_indices", "tril_indices_from",
    "triu_indices_from", "diag_indices", "diag_indices_from", "mask_indices", "unravel_index", "ravel_multi_index",
    "fill_diagonal", "put_along_axis", "put", "place", "delete", "insert", "append", "block",
]
