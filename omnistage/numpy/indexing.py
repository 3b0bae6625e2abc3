"""Indexing for `omnistage.numpy`: `x[idx]`, the `x.at[idx]` helpers (updates live in
`_at`), and the index functions `take`, `take_along_axis`, `nonzero`, `argwhere`,
`flatnonzero`, `where(cond)`, `compress`, `extract`, `choose`.

Imports core, lax and this package's helpers; never staging or later layers.

How an index becomes lax statements:

1. `parse(shape, idx)` gives an `IndexPlan`: lists and NumPy arrays become index arrays,
   concrete boolean masks become integer arrays (`np.nonzero` at trace time; a traced mask
   raises `NonConcreteBooleanIndexError`), scalar booleans become a unit axis indexed by
   `arange(0 or 1)` (NumPy's rule), the Ellipsis expands, and every entry learns the operand
   dimension it consumes. A static Python int out of bounds is an index array (clamped on
   a read, dropped from an update: JAX's rule, not NumPy's IndexError).
   When any index array is present, integers count as 0-d index arrays (NumPy's rule), and
   the broadcast index dims go where the first index array stood, or to the front when the
   index arrays are separated by a slice, None or Ellipsis.
2. `x[idx]`: static ints and slices become `slice`/`rev`/`squeeze`; traced scalar ints
   (with no index arrays) become one `dynamic_slice`; index arrays become one `gather`
   over their axes (negative indices wrapped first, out-of-bounds clamped), then one
   `transpose` to NumPy's layout and one `reshape` for the None axes.
3. `x.at[idx].op(v)` (see `_at`): one `dynamic_update_slice` for static unit-step boxes,
   else one `scatter*` statement with slices turned into `iota`-style index ranges.
"""
import operator

import numpy as np

from ..core import dtypes
from ..core import errors
from ..core.array import Array
from ..core.tracer import Tracer
from .. import lax
from ..lax import _rules
from ._promote import promote_dtypes

# dtype of the index arrays handed to gather/scatter (JAX uses int32 for every shape < 2**31)
INDEX_DTYPE = np.dtype(np.int32)

NEW = ("new",)  # layout label of a None axis

_VALID_INDEX_MSG = (
    "only integers, slices (`:`), ellipsis (`...`), None (`numpy.newaxis`) and integer or "
    "boolean arrays are valid indices"
)


# --- the parsed index ------------------------------------------------------------------


class Entry:
    """One index entry after parsing. `kind` is one of:
    'new' (None), 'slice' (`value` = (start, step, length), static), 'int' (`value` = a
    non-negative in-bounds Python int), 'dyn' (`value` = a rank-0 integer Array/tracer), or
    'array' (`value` = an integer np.ndarray or Array/tracer, raw: not yet wrapped).
    `dim` is the operand dimension the entry consumes (None for 'new')."""

    __slots__ = ("kind", "dim", "value")

    def __init__(self, kind, dim, value):
        self.kind, self.dim, self.value = kind, dim, value

    def __repr__(self):
        return f"Entry({self.kind}, dim={self.dim}, {self.value!r})"

    @property
    def is_index(self):
        """Consumed by gather/scatter as an index (scalars count as 0-d arrays there)."""
        return self.kind in ("int", "dyn", "array")


class IndexPlan:
    """A parsed index for an operand of shape `shape` (with unit axes inserted at
    `bool_dims` for scalar booleans): `entries` cover every dim in order plus None axes."""

    __slots__ = ("shape", "bool_dims", "entries", "advanced", "adv_front", "batch_shape")

    def __init__(self, shape, bool_dims, entries, advanced, adv_front, batch_shape):
        self.shape, self.bool_dims, self.entries = tuple(shape), tuple(bool_dims), entries
        self.advanced, self.adv_front, self.batch_shape = advanced, adv_front, tuple(batch_shape)

    def result_labels(self):
        """Labels of the result's dims in NumPy's order: ('b', j) broadcast index dims,
        ('dim', d) sliced operand dims, NEW for None axes."""
        batch = [("b", j) for j in range(len(self.batch_shape))]
        labels, placed = (list(batch), True) if self.adv_front else ([], False)
        for e in self.entries:
            if e.kind == "new":
                labels.append(NEW)
            elif e.kind == "slice":
                labels.append(("dim", e.dim))
            elif e.kind == "array" and not placed:
                labels.extend(batch)
                placed = True
        return labels

    def label_size(self, label):
        if label == NEW:
            return 1
        if label[0] == "b":
            return self.batch_shape[label[1]]
        return self.slice_of(label[1]).value[2]

    def is_full_slice(self, e):
        """`e` is a `:` covering its whole dimension (start 0, step 1, every element)."""
        return e.kind == "slice" and e.value == (0, 1, self.shape[e.dim])

    def slice_of(self, dim):
        return next(e for e in self.entries if e.dim == dim)

    def result_shape(self):
        return tuple(self.label_size(lab) for lab in self.result_labels())


def _as_tuple(idx):
    if isinstance(idx, tuple):
        return idx
    if isinstance(idx, list):
        # NumPy >= 1.23: a non-tuple sequence is an index array
        return (_list_to_array(idx),)
    return (idx,)


def _list_to_array(seq):
    if any(isinstance(e, (Array, Tracer)) for e in _flat(seq)):
        from .creation import asarray

        return asarray(seq)
    try:
        arr = np.asarray(seq)
    except ValueError:
        raise IndexError(f"{_VALID_INDEX_MSG}; got the sequence {seq!r}") from None
    if arr.size == 0 and arr.dtype.kind == "f":
        arr = arr.astype(np.intp)  # `x[[]]` selects nothing, as NumPy
    return arr


def _flat(seq):
    for e in seq:
        if isinstance(e, (list, tuple)):
            yield from _flat(e)
        else:
            yield e


def _static_int(v, what):
    if isinstance(v, Tracer):
        raise IndexError(
            f"Array slice indices must have static start/stop/step to be used with NumPy indexing "
            f"syntax; got a traced {what}. To index a statically sized array at a dynamic position, "
            f"use lax.dynamic_slice / lax.dynamic_update_slice (or x[i] with a traced integer i)."
        )
    return None if v is None else operator.index(v)


def _static_slice(s):
    out = slice(_static_int(s.start, "start"), _static_int(s.stop, "stop"), _static_int(s.step, "step"))
    if out.step == 0:
        raise ValueError("slice step cannot be zero")
    return out


def _index_dtype_error(dtype, pos):
    return TypeError(
        f"Indexer must have integer or boolean type, got indexer with type {np.dtype(dtype).name} "
        f"at position {pos}."
    )


def _classify_array(i, pos):
    """An index that is an Array, tracer or ndarray: ('mask'|'bool'|'int'|'dyn'|'array', value)."""
    dt = np.dtype(i.dtype)
    if dt == np.bool_:
        if isinstance(i, Tracer):
            raise errors.NonConcreteBooleanIndexError(
                f"Array boolean indices must be concrete; got a traced mask {i.aval.str_short()} at "
                f"position {pos}. The result's shape would depend on the mask's values. Use "
                f"jnp.where(mask, x, fill) to keep the shape, or jnp.nonzero(mask, size=n) / "
                f"x[jnp.nonzero(mask, size=n)] with a static size."
            )
        value = np.asarray(i)
        return ("bool", bool(value)) if value.ndim == 0 else ("mask", value)
    if not dtypes.is_integer(dt):
        raise _index_dtype_error(dt, pos)
    if isinstance(i, np.ndarray):
        return ("int", int(i)) if i.ndim == 0 else ("array", i)
    return ("dyn", i) if i.ndim == 0 else ("array", i)


def _classify(i, pos):
    """One raw index element -> (kind, value)."""
    if i is None:
        return ("new", None)
    if i is Ellipsis:
        return ("ellipsis", None)
    if isinstance(i, slice):
        return ("slice", _static_slice(i))
    if isinstance(i, (bool, np.bool_)):
        return ("bool", bool(i))
    if isinstance(i, (int, np.integer)):
        return ("int", int(i))
    if isinstance(i, (list, tuple)):
        i = _list_to_array(i)
    if isinstance(i, (Array, Tracer, np.ndarray)):
        return _classify_array(i, pos)
    if isinstance(i, (float, complex, np.inexact)):
        raise IndexError(f"{_VALID_INDEX_MSG}; got {i!r} at position {pos}")
    if hasattr(i, "__array__"):
        return _classify_array(np.asarray(i), pos)
    raise IndexError(f"{_VALID_INDEX_MSG}; got {type(i).__name__} {i!r} at position {pos}")


_CONSUMES = {"slice": 1, "int": 1, "dyn": 1, "array": 1}
_ADVANCED = ("array", "mask", "bool")


def _consumed(raw):
    return sum(v.ndim if k == "mask" else _CONSUMES.get(k, 0) for k, v in raw)


def _adv_front(raw, advanced):
    """NumPy's rule: index arrays separated by anything go to the front of the result."""
    if not advanced:
        return False
    pos = [p for p, (k, _) in enumerate(raw) if k in _ADVANCED or k in ("int", "dyn")]
    return any(b - a != 1 for a, b in zip(pos, pos[1:]))


def _slice_entry(s, dim, n):
    start, stop, step = s.indices(n)
    length = len(range(start, stop, step))
    return Entry("slice", dim, (start if length else 0, step, length))


def _int_entry(k, dim, n, ints_static, as_array):
    # out of bounds, a static int is an index like a traced one: a read clamps it and an
    # update drops it, as JAX (whose own examples/control.py reads Q[T + 1] of T + 1 rows)
    if as_array or not ints_static or not -n <= k < n:
        return Entry("array", dim, np.asarray(k))
    return Entry("int", dim, k % n)


def _mask_entries(mask, dim, shape, pos):
    expect = tuple(shape[dim:dim + mask.ndim])
    # NumPy (and JAX) accept an empty mask axis against any size: it selects nothing
    if len(mask.shape) != len(expect) or any(m not in (e, 0) for m, e in zip(mask.shape, expect)):
        raise IndexError(
            f"boolean index did not match indexed array along axes {tuple(range(dim, dim + mask.ndim))}: "
            f"mask of shape {mask.shape} at position {pos}, indexed dims {expect}"
        )
    return [Entry("array", dim + j, arr) for j, arr in enumerate(np.nonzero(mask))]


def parse(shape, idx, ints_static=True, scalars_as_arrays=False):
    """The `IndexPlan` of `idx` for an operand of shape `shape`.

    `ints_static`: static ints in bounds are static positions (a slice); else, and those out
    of bounds always, they are index arrays that follow the gather/scatter mode.
    `scalars_as_arrays`: traced scalar ints become 0-d index arrays (for gather/scatter)
    instead of dynamic slices."""
    raw = [_classify(i, p) for p, i in enumerate(_as_tuple(idx))]
    if sum(k == "ellipsis" for k, _ in raw) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    ndim, consumed = len(shape), _consumed(raw)
    if consumed > ndim:
        raise IndexError(f"Too many indices: {ndim}-dimensional array, but {consumed} were indexed")
    advanced = any(k in _ADVANCED for k, _ in raw)
    shape = list(shape)
    entries, bool_dims, dim = [], [], 0
    for pos, (kind, v) in enumerate(raw):
        if kind == "new":
            entries.append(Entry("new", None, None))
            continue
        if kind == "ellipsis":
            new = [_slice_entry(slice(None), d, shape[d]) for d in range(dim, dim + ndim - consumed)]
        elif kind == "bool":
            shape.insert(dim, 1)
            bool_dims.append(dim)
            new = [Entry("array", dim, np.arange(int(v)))]
        elif kind == "mask":
            new = _mask_entries(v, dim, shape, pos)
        elif kind == "slice":
            new = [_slice_entry(v, dim, shape[dim])]
        elif kind in ("int", "dyn") and shape[dim] == 0:
            # nothing to clamp into, static or traced: JAX's error in every mode, never a
            # made-up element
            raise IndexError(f"index is out of bounds for axis {dim} with size 0")
        elif kind == "int":
            new = [_int_entry(v, dim, shape[dim], ints_static, advanced)]
        else:
            as_array = kind == "array" or advanced or scalars_as_arrays
            new = [Entry("array" if as_array else "dyn", dim, v)]
        entries.extend(new)
        dim += len(new)
    entries.extend(_slice_entry(slice(None), d, shape[d]) for d in range(dim, len(shape)))
    batch = _batch_shape([e.value for e in entries if e.kind == "array"])
    return IndexPlan(shape, bool_dims, entries, advanced, _adv_front(raw, advanced), batch)


def _batch_shape(arrays):
    shapes = [tuple(np.shape(a)) for a in arrays]
    try:
        return tuple(np.broadcast_shapes(*shapes)) if shapes else ()
    except ValueError:
        raise IndexError(
            "shape mismatch: indexing arrays could not be broadcast together with shapes "
            + " ".join(str(s) for s in shapes)
        ) from None


# --- index arrays for gather / scatter ---------------------------------------------------


def _int32_range(a):
    """Static indices as int32, keeping out-of-range values out of range."""
    info = np.iinfo(INDEX_DTYPE)
    return np.clip(np.asarray(a, dtype=np.int64), info.min, info.max).astype(INDEX_DTYPE)


def prepare_index(value, size, normalize=True, clip=False):
    """An index array as int32 with negative values wrapped (`i + size`), and optionally
    clamped into [0, size). Static (NumPy) indices are processed in Python."""
    if isinstance(value, (np.ndarray, np.generic, int)):
        a = np.asarray(value, dtype=np.int64)
        if normalize:
            a = np.where(a < 0, a + size, a)
        if clip:
            a = np.clip(a, 0, max(size - 1, 0))
        return _int32_range(a)
    i = _rules.to_operand(value)
    signed = i.dtype.kind == "i"
    if i.dtype != INDEX_DTYPE or i.weak_type:
        i = lax.convert_element_type(i, INDEX_DTYPE)
    if normalize and signed:
        i = lax.select(lax.lt(i, _i32(0)), lax.add(i, _i32(size)), i)
    if clip:
        i = lax.clamp(_i32(0), i, _i32(max(size - 1, 0)))
    return i


def _i32(v):
    return Array(np.asarray(v, dtype=INDEX_DTYPE))


def stack_indices(pieces, shape):
    """One int32 index array of shape `shape + (k,)` from k pieces `(array, dims)`: each
    piece is broadcast into `shape` with its axes at `dims` (size-1 axes stretch)."""
    full = tuple(shape) + (len(pieces),)
    if 0 in full:
        # nothing is addressed: a broadcast literal, never an empty constant array
        return lax.broadcast_in_dim(_i32(0), full, ())
    if all(isinstance(a, np.ndarray) for a, _ in pieces):
        cols = [np.broadcast_to(_placed(a, dims, len(shape)), shape) for a, dims in pieces]
        return Array(np.stack(cols, axis=-1).reshape(full).astype(INDEX_DTYPE))
    cols = [lax.broadcast_in_dim(a, tuple(shape) + (1,), tuple(dims)) for a, dims in pieces]
    return lax.concatenate(cols, len(shape)) if len(cols) > 1 else cols[0]


def _placed(a, dims, rank):
    view = [1] * rank
    for ax, d in zip(dims, a.shape):
        view[ax] = d
    return a.reshape(view)


def right_aligned(value, rank):
    """Dims of an index array broadcast NumPy-style (right-aligned) into a rank-`rank` shape."""
    nd = np.ndim(value)
    return tuple(range(rank - nd, rank))


def _in_bounds(indices, sizes):
    """Bool array of indices.shape[:-1]: every coordinate within [0, size)."""
    if not sizes:
        return Array(np.ones(indices.shape[:-1], np.bool_))
    # one unsigned compare tests both bounds: negative indices become huge
    unsigned = lax.convert_element_type(indices, np.uint32)
    hi = Array(np.asarray(sizes, np.uint32))
    ok = lax.lt(unsigned, lax.broadcast_in_dim(hi, indices.shape, (indices.ndim - 1,)))
    return lax.reduce_and(ok, (indices.ndim - 1,))


# --- x[idx] ------------------------------------------------------------------------------


def getitem(x, idx):
    """`x[idx]` with NumPy semantics (traced and out-of-bounds indices clamp, as JAX)."""
    return take_index(x, idx)


def take_index(x, idx, mode=None, fill_value=None, normalize=True):
    """`x[idx]` with an out-of-bounds `mode`: None (clamped, as JAX: static ints too),
    'clip' (clamped), 'fill' (out-of-bounds positions read `fill_value`). `normalize`
    wraps negative indices first (NumPy's meaning), as JAX does for every mode."""
    x = _rules.to_operand(x)
    if mode not in (None, "clip", "fill", "promise_in_bounds"):
        raise ValueError(f"Invalid mode {mode!r} for indexing; expected 'clip', 'fill' or None")
    explicit = mode is not None
    # dynamic_slice wraps negative starts and cannot fill: those cases gather instead
    plan = parse(x.shape, idx, ints_static=not explicit, scalars_as_arrays=mode == "fill" or not normalize)
    if plan.bool_dims:
        x = lax.reshape(x, plan.shape)
    out = _basic_part(x, plan)
    labels = [("dim", e.dim) for e in plan.entries if e.kind == "slice"]
    if any(e.kind == "array" for e in plan.entries):
        out, labels = _gather_part(out, plan, normalize, mode, fill_value)
    return _to_result_layout(out, labels, plan)


def _slice_bounds(start, step, length):
    """(lo, limit, stride, flip) of a static slice; negative steps slice forward then flip."""
    if length == 0:
        return 0, 0, 1, False
    if step > 0:
        return start, start + (length - 1) * step + 1, step, False
    lo = start + (length - 1) * step
    return lo, start + 1, -step, length > 1


def _basic_part(x, plan):
    """Static slices and ints (`slice`, `rev`), traced scalars (`dynamic_slice`), squeeze."""
    start, limit, strides, flips, drop, dyn = [], [], [], [], [], {}
    for e in plan.entries:
        if e.dim is None:
            continue
        n = plan.shape[e.dim]
        if e.kind == "slice":
            lo, hi, st, flip = _slice_bounds(*e.value)
            flips += [e.dim] if flip else []
        elif e.kind == "int":
            lo, hi, st = e.value, e.value + 1, 1
            drop.append(e.dim)
        else:
            lo, hi, st = 0, n, 1
            if e.kind == "dyn":
                dyn[e.dim] = e.value
                drop.append(e.dim)
        start.append(lo)
        limit.append(hi)
        strides.append(st)
    out = lax.slice(x, start, limit, strides)
    out = lax.rev(out, flips)
    if dyn:
        starts = [dyn.get(d, 0) for d in range(out.ndim)]
        sizes = [1 if d in dyn else s for d, s in enumerate(out.shape)]
        out = lax.dynamic_slice(out, starts, sizes)
    return lax.squeeze(out, drop) if drop else out


def _gather_part(out, plan, normalize, mode, fill_value):
    """One gather over the index-array dims of `out` (ints and traced scalars squeezed)."""
    kept = [e for e in plan.entries if e.kind in ("slice", "array")]
    axes = [p for p, e in enumerate(kept) if e.kind == "array"]
    batch, rank = plan.batch_shape, len(plan.batch_shape)
    pieces = []
    for p in axes:
        v = kept[p].value
        pieces.append((prepare_index(v, out.shape[p], normalize), right_aligned(v, rank)))
    indices = stack_indices(pieces, batch)
    gathered = lax.gather(out, indices, axes)
    if mode == "fill":
        gathered = _fill_out_of_bounds(gathered, indices, [out.shape[p] for p in axes], fill_value)
    labels = [("b", j) for j in range(rank)] + [("dim", e.dim) for e in kept if e.kind == "slice"]
    return gathered, labels


def default_fill_value(dtype):
    """JAX's fill for out-of-bounds reads: NaN, the most negative int, the largest uint, True."""
    dtype = np.dtype(dtype)
    if dtypes.is_inexact(dtype):
        return np.nan
    if dtype.kind == "i":
        return np.iinfo(dtype).min
    if dtype.kind == "u":
        return np.iinfo(dtype).max
    return True


def _fill_out_of_bounds(gathered, indices, sizes, fill_value):
    valid = _in_bounds(indices, sizes)
    valid = lax.broadcast_in_dim(valid, gathered.shape, tuple(range(valid.ndim)))
    fv = default_fill_value(gathered.dtype) if fill_value is None else fill_value
    if isinstance(fv, (Array, Tracer)):
        fill = lax.convert_element_type(fv, gathered.dtype)
    else:
        with np.errstate(all="ignore"):
            fill = Array(np.asarray(fv).astype(gathered.dtype))
    return lax.select(valid, gathered, fill)


def _to_result_layout(out, labels, plan):
    """Transpose `out` (dims labelled `labels`) into NumPy's layout, then add None axes."""
    target = plan.result_labels()
    perm = [labels.index(lab) for lab in target if lab != NEW]
    out = lax.transpose(out, perm)
    if NEW in target:
        out = lax.reshape(out, plan.result_shape())
    return out


# --- the .at helper ----------------------------------------------------------------------


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
    """`x.at[idx]`: functional updates `set/add/multiply/divide/min/max/power/get`.

    `mode`: None (static ints checked; other out-of-bounds reads clamp, writes are dropped),
    'clip', 'fill' / 'drop' (reads give `fill_value`, writes dropped), 'promise_in_bounds'.
    `indices_are_sorted` and `unique_indices` are accepted and ignored (hints in JAX)."""

    __slots__ = ("array", "index")

    def __init__(self, array, index):
        self.array, self.index = array, index

    def __repr__(self):
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

    def get(self, *, indices_are_sorted=False, unique_indices=False, mode=None, fill_value=None):
        if mode == "drop":
            mode = "fill"
        return take_index(self.array, self.index, mode=mode, fill_value=fill_value)

    def _update(self, kind, values, mode):
        from . import _at

        return _at.update(self.array, self.index, values, kind, mode=mode)

    def set(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._update("set", values, mode)

    def add(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._update("add", values, mode)

    def subtract(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        from .ufuncs import negative

        return self._update("add", negative(values), mode)

    def multiply(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._update("multiply", values, mode)

    mul = multiply

    def divide(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._update("divide", values, mode)

    def power(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._update("power", values, mode)

    def min(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._update("min", values, mode)

    def max(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._update("max", values, mode)


# --- take / take_along_axis --------------------------------------------------------------


def _integer_operand(name, x):
    x = _rules.to_operand(x)
    if not dtypes.is_integer(x.dtype):
        raise TypeError(f"{name} indices must be of integer type, got {x.dtype.name}")
    return x


def _wrap_mod(i, n):
    """`i mod n` with a non-negative result (NumPy's mode='wrap')."""
    i = prepare_index(i, n, normalize=False)
    if isinstance(i, np.ndarray):
        return np.mod(i, n).astype(INDEX_DTYPE)
    r = lax.rem(i, _i32(n))
    return lax.select(lax.lt(r, _i32(0)), lax.add(r, _i32(n)), r)


_TAKE_MODES = {
    # mode: (getitem mode, wrap negative indices first)
    None: ("fill", True), "fill": ("fill", True), "clip": ("clip", False), "wrap": ("clip", False),
}


def take(a, indices, axis=None, out=None, mode=None, unique_indices=False, indices_are_sorted=False, fill_value=None):
    """`a` indexed by `indices` along `axis` (flattened when None). Out of bounds, as JAX:
    mode None/'fill' reads `fill_value` (NaN, int min...), 'clip' clamps, 'wrap' wraps."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.take is not supported.")
    if mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.take is not supported; use 'fill', 'clip' or 'wrap'.")
    if mode not in _TAKE_MODES:
        raise ValueError(f"Invalid mode {mode!r} for jnp.take; expected 'fill', 'clip' or 'wrap'")
    a = _rules.to_operand(a)
    if axis is None:
        a, axis = lax.reshape(a, (a.size,)), 0
    axis = _rules.canonical_axes(axis, a.ndim)[0]
    idx = indices if isinstance(indices, (int, np.integer)) else _integer_operand("take", indices)
    n = a.shape[axis]
    if n == 0 and getattr(idx, "size", 1) != 0:
        raise IndexError("Cannot do a non-empty jnp.take() from an empty axis.")
    if mode == "wrap":
        idx = _wrap_mod(idx, n)
    gmode, normalize = _TAKE_MODES[mode]
    return take_index(a, (slice(None),) * axis + (idx,), mode=gmode, fill_value=fill_value, normalize=normalize)


def take_along_axis(arr, indices, axis=-1, mode=None, fill_value=None):
    """`arr` indexed along `axis` by `indices` of the same rank (other dims broadcast)."""
    arr = _rules.to_operand(arr)
    indices = _integer_operand("take_along_axis", indices)
    if axis is None:
        if indices.ndim != 1:
            raise ValueError(f"take_along_axis indices must be 1D if axis=None, got shape {indices.shape}")
        arr, axis = lax.reshape(arr, (arr.size,)), 0
    if arr.ndim != indices.ndim:
        raise ValueError(
            f"indices and arr must have the same number of dimensions; {indices.ndim} vs. {arr.ndim}"
        )
    axis = _rules.canonical_axes(axis, arr.ndim)[0]
    idx = []
    for d, n in enumerate(arr.shape):
        if d == axis:
            idx.append(indices)
        else:
            view = [1] * arr.ndim
            view[d] = n
            idx.append(np.arange(n).reshape(view))
    if mode not in (None, "fill", "clip", "promise_in_bounds"):
        raise ValueError(f"Invalid mode {mode!r} for take_along_axis; expected 'fill' or 'clip'")
    return take_index(arr, tuple(idx), mode=mode or "fill", fill_value=fill_value)


# --- nonzero family ----------------------------------------------------------------------


def _concrete_value(a, name):
    if isinstance(a, Tracer):
        # the tracer's own helper adds where the value became traced and the user's line
        raise a._concretization(
            errors.ConcretizationTypeError,
            f"Abstract tracer value encountered where concrete value is expected: {name} of a traced "
            f"array {a.aval.str_short()} has a data-dependent shape. Pass a static `size=` (e.g. "
            f"jnp.{name}(x, size=n, fill_value=0)) so the result shape is known when tracing.",
        )
    return np.asarray(a)


def _result_int_dtype():
    return dtypes.default_int_dtype()


def nonzero(a, *, size=None, fill_value=None):
    """Indices of the nonzero elements of `a`, one array per dimension.

    Without `size` the input must be concrete (its value decides the result's shape); with
    `size` the result has exactly `size` entries, padded with `fill_value` (default 0) or
    truncated, and works on traced values."""
    if size is None:
        value = _concrete_value(a, "nonzero")
        if value.ndim == 0:
            raise ValueError("Calling nonzero on 0d arrays is not allowed. Use jnp.atleast_1d(scalar).nonzero() instead.")
        dt = _result_int_dtype()
        return tuple(Array(i.astype(dt)) for i in np.nonzero(value))
    return _nonzero_sized(_rules.to_operand(a), operator.index(size), fill_value)


def _nonzero_sized(x, size, fill_value):
    """Staged nonzero: running count of the mask gives each true element its output slot;
    one scatter writes the coordinates there (slots >= size are dropped)."""
    if x.ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use jnp.atleast_1d(scalar).nonzero() instead.")
    dt = _result_int_dtype()
    mask = _truth(x)
    flat = lax.reshape(mask, (x.size,))
    slot = lax.sub(lax.cumsum(lax.convert_element_type(flat, INDEX_DTYPE)), _i32(1))
    slot = lax.select(flat, slot, lax.broadcast_in_dim(_i32(size), slot.shape, ()))
    coords = [lax.reshape(lax.broadcasted_iota(dt, x.shape, d), (x.size, 1)) for d in range(x.ndim)]
    coords = lax.concatenate(coords, 1)
    filled = _nonzero_fill(fill_value, size, x.ndim, dt)
    found = lax.scatter(filled, lax.reshape(slot, (x.size, 1)), coords, (0,))
    return tuple(lax.reshape(lax.slice(found, (0, d), (size, d + 1)), (size,)) for d in range(x.ndim))


def _truth(x):
    if x.dtype == np.bool_:
        return x
    return lax.ne(x, Array(np.zeros((), x.dtype)))


def _nonzero_fill(fill_value, size, ndim, dt):
    """The (size, ndim) array the found coordinates are written into."""
    fv = 0 if fill_value is None else fill_value
    if isinstance(fv, (Array, Tracer)):
        fv = lax.convert_element_type(fv, dt)
        if fv.ndim not in (0, 1) or (fv.ndim == 1 and fv.shape[0] != ndim):
            raise ValueError(f"fill_value must be a scalar or a tuple of length {ndim}; got shape {fv.shape}")
        return lax.broadcast_in_dim(fv, (size, ndim), () if fv.ndim == 0 else (1,))
    fv = np.asarray(fv)
    if fv.ndim not in (0, 1) or (fv.ndim == 1 and fv.shape[0] != ndim):
        raise ValueError(f"fill_value must be a scalar or a tuple of length {ndim}; got {fill_value!r}")
    # broadcast in the program: a small literal, not a (size, ndim) constant
    return lax.broadcast_in_dim(Array(fv.astype(dt)), (size, ndim), (1,) if fv.ndim else ())


def flatnonzero(a, *, size=None, fill_value=None):
    """Indices of the nonzero elements of `a` flattened."""
    x = a if isinstance(a, (Array, Tracer)) else _rules.to_operand(a)
    return nonzero(lax.reshape(x, (x.size,)), size=size, fill_value=fill_value)[0]


def argwhere(a, *, size=None, fill_value=None):
    """Coordinates of the nonzero elements of `a`: shape (count, a.ndim)."""
    x = _rules.to_operand(a)
    cols = nonzero(lax.reshape(x, (1,)) if x.ndim == 0 else x, size=size, fill_value=fill_value)
    count = cols[0].shape[0]
    cols = [lax.reshape(c, (count, 1)) for c in cols]
    if x.ndim == 0:
        return lax.slice(cols[0], (0, 0), (count, 0))
    return lax.concatenate(cols, 1)


def compress(condition, a, axis=None, *, size=None, fill_value=0, out=None):
    """Slices of `a` along `axis` where `condition` (1-d, concrete unless `size=` given)."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.compress is not supported.")
    a = _rules.to_operand(a)
    if axis is None:
        a, axis = lax.reshape(a, (a.size,)), 0
    axis = _rules.canonical_axes(axis, a.ndim)[0]
    n = a.shape[axis]
    if size is None:
        cond = _concrete_value(condition, "compress").astype(bool)
        if cond.ndim != 1:
            raise ValueError(f"condition must be a 1D array, got shape {cond.shape}")
        if cond[n:].any():
            raise IndexError(f"condition of length {cond.shape[0]} selects beyond axis {axis} of size {n}")
        return take_index(a, (slice(None),) * axis + (np.nonzero(cond[:n])[0],))
    cond = _rules.to_operand(condition)
    if cond.ndim != 1:
        raise ValueError(f"condition must be a 1D array, got shape {cond.shape}")
    cond = _fit_length(_truth(cond), n)
    (picked,) = nonzero(cond, size=size, fill_value=n)
    out = take_index(a, (slice(None),) * axis + (picked,), mode="fill", fill_value=fill_value)
    return out


def _fit_length(mask, n):
    """A 1-d mask cut or padded with False to length n (NumPy's compress ignores the rest)."""
    m = mask.shape[0]
    if m >= n:
        return lax.slice(mask, (0,), (n,))
    return lax.pad(mask, Array(np.asarray(False)), ((0, n - m, 0),))


def extract(condition, arr, *, size=None, fill_value=0):
    """Elements of `arr` where `condition` (both flattened)."""
    cond = condition if isinstance(condition, (Array, Tracer)) else _rules.to_operand(condition)
    arr = _rules.to_operand(arr)
    return compress(lax.reshape(cond, (cond.size,)), lax.reshape(arr, (arr.size,)), size=size, fill_value=fill_value)


def choose(a, choices, out=None, mode="raise"):
    """`choices[a[i]][i]` elementwise, with NumPy broadcasting and JAX promotion."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.choose is not supported.")
    a = _integer_operand("choose", a)
    choices = promote_dtypes(*choices)
    n = len(choices)
    if mode == "raise":
        if isinstance(a, Tracer):
            raise NotImplementedError(
                "jnp.choose with mode='raise' needs concrete indices; use mode='clip' or 'wrap' under jit."
            )
        if np.any((np.asarray(a) < 0) | (np.asarray(a) >= n)):
            raise ValueError("invalid entry in choice array")
    elif mode not in ("clip", "wrap"):
        raise ValueError(f"Invalid mode {mode!r} for jnp.choose; expected 'raise', 'clip' or 'wrap'")
    which = _wrap_mod(a, n) if mode == "wrap" else prepare_index(a, n, normalize=False, clip=True)
    shape = lax.broadcast_shapes(which.shape, *[c.shape for c in choices])
    from ._promote import broadcast_to_shape

    which = broadcast_to_shape(_rules.to_operand(which), shape)
    return lax.select_n(which, *[broadcast_to_shape(c, shape) for c in choices])


__all__ = ["take", "take_along_axis", "nonzero", "flatnonzero", "argwhere", "compress", "extract", "choose"]
