"""Shape manipulation in `omnistage.numpy`: reshape, transpose, joining and splitting,
tiling and repeating, flips and rolls, padding, diagonals and triangles, grids.

Every function turns static index arithmetic (done here, in Python, on shapes and static
arguments) into lax shape primitives (reshape, transpose, broadcast_in_dim, slice, rev,
concatenate, pad, select). Nothing reads a traced value. Also owns the axis-argument
normalization (`canonicalize_axis`, `canonicalize_axes`) the other jnp modules share.
Imports core and lax only (reductions/creation lazily, for `trace`, `pad` statistics and
`linear_ramp`).
"""
import builtins
import math
import operator

import numpy as np

from ..core import dtypes
from ..core.array import Array
from ..core.tracer import Tracer
from .. import lax
from ..lax import _rules
from ._promote import broadcast_to_shape, promote_dtypes
from .eager_programs import wrap_module_functions

# --- axis arguments ----------------------------------------------------------------------


def canonicalize_axis(axis, ndim, name="axis"):
    """A non-negative axis for an array of rank `ndim` (negatives count from the end).

    Raises NumPy's AxisError (a ValueError and an IndexError) when out of bounds."""
    try:
        a = operator.index(axis)
    except TypeError:
        raise TypeError(f"{name} must be an integer, got {axis!r} of type {type(axis).__name__}.") from None
    if not -ndim <= a < ndim:
        raise np.exceptions.AxisError(f"{name} {a} is out of bounds for array of dimension {ndim}")
    return a % ndim


def canonicalize_axes(axis, ndim, name="axis"):
    """`None` (all axes), an int or a sequence of ints, as a tuple of non-negative axes in
    the order given; repeated axes raise ValueError."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (list, tuple)):
        axes = tuple(canonicalize_axis(a, ndim, name) for a in axis)
    else:
        axes = (canonicalize_axis(axis, ndim, name),)
    if len(set(axes)) != len(axes):
        raise ValueError(f"repeated {name} in {axis!r} for array of dimension {ndim}")
    return axes


def _op(a):
    return _rules.to_operand(a)


# Boolean logic as min / max / ne, which are the same functions on bool operands. Used
# instead of lax's `and`/`or`/`not` primitives because those names are Python keywords,
# so statements binding them do not print as runnable Python.
def bool_and(a, b):
    return lax.min(a, b)


def bool_or(a, b):
    return lax.max(a, b)


def bool_not(a):
    return lax.ne(a, Array(np.bool_(True)))


def _static_int(v, what):
    """A static Python int from `v`; a traced value raises a ConcretizationTypeError."""
    if isinstance(v, Tracer):
        raise v.concretization_error(f"{what} must be static (a Python int or concrete array)")
    return operator.index(v)


# --- reshape and transpose ---------------------------------------------------------------


def _resolve_shape(shape, size, old_shape):
    if isinstance(shape, (int, np.integer)) or (isinstance(shape, (Array, Tracer)) and shape.ndim == 0):
        shape = (shape,)
    shape = [_static_int(d, "reshape's new shape") for d in shape]
    if shape.count(-1) > 1:
        raise ValueError(f"can only specify one unknown dimension (-1), got new shape {tuple(shape)}")
    if any(d < -1 for d in shape):
        raise ValueError(f"reshape: negative dimensions are not allowed, got new shape {tuple(shape)}")
    if -1 in shape:
        known = math.prod(d for d in shape if d != -1)
        if known == 0 or size % known:
            raise TypeError(f"cannot reshape array of shape {old_shape} (size {size}) into shape {tuple(shape)}")
        shape[shape.index(-1)] = size // known
    if math.prod(shape) != size:
        raise TypeError(
            f"cannot reshape array of shape {old_shape} (size {size}) into shape {tuple(shape)} "
            f"(size {math.prod(shape)})"
        )
    return tuple(shape)


def reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    """`a` with a new static shape (one -1 allowed); order "F" reads and writes column-major."""
    if shape is None:
        shape = newshape
    if shape is None:
        raise TypeError("reshape() missing the required argument 'shape'")
    x = _op(a)
    new = _resolve_shape(shape, x.size, x.shape)
    if order == "F":
        return transpose(lax.reshape(transpose(x), new[::-1]))
    if order not in ("C", "A"):
        raise ValueError(f"reshape: unknown order {order!r}; use 'C', 'F' or 'A'")
    return lax.reshape(x, new)


def ravel(a, order="C"):
    x = _op(a)
    return reshape(x, (x.size,), order)


def transpose(a, axes=None):
    """`a` with its axes permuted (reversed when `axes` is None)."""
    x = _op(a)
    if axes is None:
        return lax.transpose(x, tuple(range(x.ndim))[::-1])
    if len(axes) != x.ndim:
        raise ValueError(f"transpose: axes {tuple(axes)} don't match array of shape {x.shape} (rank {x.ndim})")
    return lax.transpose(x, canonicalize_axes(tuple(axes), x.ndim))


def permute_dims(a, /, axes):
    return transpose(a, axes)


def matrix_transpose(x, /):
    x = _op(x)
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose requires an array of rank >= 2, got shape {x.shape}")
    return swapaxes(x, -1, -2)


def swapaxes(a, axis1, axis2):
    x = _op(a)
    perm = list(range(x.ndim))
    a1, a2 = canonicalize_axis(axis1, x.ndim, "axis1"), canonicalize_axis(axis2, x.ndim, "axis2")
    perm[a1], perm[a2] = perm[a2], perm[a1]
    return lax.transpose(x, perm)


def moveaxis(a, source, destination):
    """Move axes `source` to positions `destination`, the others keeping their order."""
    x = _op(a)
    src = canonicalize_axes(source if isinstance(source, (list, tuple)) else (source,), x.ndim, "source")
    dst = canonicalize_axes(destination if isinstance(destination, (list, tuple)) else (destination,), x.ndim, "destination")
    if len(src) != len(dst):
        raise ValueError(f"moveaxis: source {source!r} and destination {destination!r} must have the same number of elements")
    order = [i for i in range(x.ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return lax.transpose(x, order)


def rollaxis(a, axis, start=0):
    x = _op(a)
    axis = canonicalize_axis(axis, x.ndim)
    if not -x.ndim <= start <= x.ndim:
        raise np.exceptions.AxisError(f"rollaxis: start {start} is out of bounds for array of dimension {x.ndim}")
    start = start % (x.ndim + 1) if start < 0 else start
    if axis < start:
        start -= 1
    return moveaxis(x, axis, start) if axis != start else x


def expand_dims(a, axis):
    """`a` with size-1 axes inserted at `axis` (an int or tuple, positions in the result)."""
    x = _op(a)
    axes = axis if isinstance(axis, (list, tuple)) else (axis,)
    out_ndim = x.ndim + len(axes)
    dims = sorted(canonicalize_axes(tuple(axes), out_ndim))
    shape = list(x.shape)
    for d in dims:
        shape.insert(d, 1)
    return lax.reshape(x, tuple(shape))


def squeeze(a, axis=None):
    """`a` without the size-1 axes `axis` (all size-1 axes when None)."""
    x = _op(a)
    if axis is None:
        dims = tuple(i for i, d in enumerate(x.shape) if d == 1)
    else:
        dims = canonicalize_axes(axis, x.ndim)
        bad = [d for d in dims if x.shape[d] != 1]
        if bad:
            raise ValueError(
                f"cannot select an axis to squeeze out which has size not equal to one, got "
                f"shape={x.shape} and dimensions={tuple(sorted(dims))}"
            )
    return lax.reshape(x, tuple(d for i, d in enumerate(x.shape) if i not in dims)) if dims else x


# --- broadcasting ------------------------------------------------------------------------


def broadcast_shapes(*shapes):
    shapes = [(s,) if isinstance(s, (int, np.integer)) else tuple(s) for s in shapes]
    return lax.broadcast_shapes(*shapes)


def broadcast_to(array, shape):
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    shape = tuple(_static_int(d, "broadcast_to's shape") for d in shape)
    return broadcast_to_shape(_op(array), shape)


def broadcast_arrays(*args):
    xs = [_op(a) for a in args]
    shape = broadcast_shapes(*[x.shape for x in xs])
    return [broadcast_to_shape(x, shape) for x in xs]


# --- joining -----------------------------------------------------------------------------


def _sequence(arrays, name):
    if isinstance(arrays, (Array, Tracer, np.ndarray)):
        if np.ndim(arrays) == 0:
            raise TypeError(f"{name} requires a sequence of arrays, got a 0-d array")
        return list(arrays)
    arrays = list(arrays)
    if not arrays:
        raise ValueError(f"Need at least one array to {name}.")
    return arrays


def _joinable(arrays, name, dtype):
    xs = [_rules.to_operand(x) for x in promote_dtypes(*_sequence(arrays, name))]
    if dtype is not None:
        from .creation import _dtype_arg

        xs = [lax.convert_element_type(x, _dtype_arg(dtype)) for x in xs]
    return xs


def concatenate(arrays, axis=0, dtype=None):
    """Join arrays along an existing axis (flattened first when axis is None)."""
    xs = _joinable(arrays, "concatenate", dtype)
    if axis is None:
        xs = [ravel(x) for x in xs]
        axis = 0
    if any(x.ndim == 0 for x in xs):
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    if len({x.ndim for x in xs}) != 1:
        raise ValueError(
            f"All the input arrays must have same number of dimensions, got shapes "
            f"{', '.join(str(x.shape) for x in xs)}"
        )
    ax = canonicalize_axis(axis, xs[0].ndim)
    for x in xs[1:]:
        if any(d != e for i, (d, e) in enumerate(zip(x.shape, xs[0].shape)) if i != ax):
            raise ValueError(
                f"All the input array dimensions except for the concatenation axis ({ax}) must "
                f"match exactly, got shapes {', '.join(str(x.shape) for x in xs)}"
            )
    return lax.concatenate(xs, ax)


concat = concatenate


def stack(arrays, axis=0, out=None, dtype=None):
    """Join same-shape arrays along a new axis."""
    xs = _joinable(arrays, "stack", dtype)
    shapes = [x.shape for x in xs]
    if len(set(shapes)) != 1:
        raise ValueError(f"All input arrays must have the same shape, got {', '.join(map(str, shapes))}.")
    ax = canonicalize_axis(axis, xs[0].ndim + 1)
    return lax.concatenate([expand_dims(x, ax) for x in xs], ax)


def hstack(tup, dtype=None):
    xs = [atleast_1d(x) for x in _sequence(tup, "hstack")]
    return concatenate(xs, 0 if xs[0].ndim == 1 else 1, dtype=dtype)


def vstack(tup, dtype=None):
    return concatenate([atleast_2d(x) for x in _sequence(tup, "vstack")], 0, dtype=dtype)


def dstack(tup, dtype=None):
    return concatenate([atleast_3d(x) for x in _sequence(tup, "dstack")], 2, dtype=dtype)


def column_stack(tup):
    cols = []
    for a in _sequence(tup, "column_stack"):
        x = _op(a)
        cols.append(lax.reshape(x, (x.size, 1)) if x.ndim < 2 else x)
    return concatenate(cols, 1)


def atleast_1d(*arys):
    out = [lax.reshape(x, (1,)) if x.ndim == 0 else x for x in map(_op, arys)]
    return out[0] if len(out) == 1 else out


def atleast_2d(*arys):
    out = [lax.reshape(x, (1,) * (2 - x.ndim) + x.shape) if x.ndim < 2 else x for x in map(_op, arys)]
    return out[0] if len(out) == 1 else out


_TO_3D = {0: lambda s: (1, 1, 1), 1: lambda s: (1, s[0], 1), 2: lambda s: s + (1,)}


def atleast_3d(*arys):
    out = [lax.reshape(x, _TO_3D[x.ndim](x.shape)) if x.ndim < 3 else x for x in map(_op, arys)]
    return out[0] if len(out) == 1 else out


# --- splitting ---------------------------------------------------------------------------


def _split_points(n, indices_or_sections, name, equal):
    if isinstance(indices_or_sections, (int, np.integer)) or np.ndim(indices_or_sections) == 0:
        sections = _static_int(indices_or_sections, f"{name}'s number of sections")
        if sections <= 0:
            raise ValueError(f"{name}: number of sections must be larger than 0, got {sections}")
        if equal and n % sections:
            raise ValueError(f"array split does not result in an equal division: {n} into {sections} sections")
        size, extra = divmod(n, sections)
        sizes = [size + 1] * extra + [size] * (sections - extra)
        return list(np.cumsum([0] + sizes))
    if isinstance(indices_or_sections, Tracer):
        raise indices_or_sections.concretization_error(f"{name}'s split indices must be static")
    points = [_static_int(i, f"{name}'s split indices") for i in np.asarray(indices_or_sections).tolist()]
    bounds = []
    for lo, hi in zip([0] + points, points + [n]):
        start, stop, _ = builtins.slice(lo, hi).indices(n)
        bounds.append((start, builtins.max(start, stop)))
    return bounds


def _split(name, ary, indices_or_sections, axis, equal):
    x = _op(ary)
    ax = canonicalize_axis(axis, x.ndim)
    points = _split_points(x.shape[ax], indices_or_sections, name, equal)
    bounds = points if isinstance(points[0], tuple) else list(zip(points[:-1], points[1:]))
    return [lax.slice_in_dim(x, int(lo), int(hi), 1, ax) for lo, hi in bounds]


def split(ary, indices_or_sections, axis=0):
    """Split into equal sections (an int) or at static indices (a sequence)."""
    return _split("split", ary, indices_or_sections, axis, equal=True)


def array_split(ary, indices_or_sections, axis=0):
    """`split` that allows sections of unequal size (the first ones one longer)."""
    return _split("array_split", ary, indices_or_sections, axis, equal=False)


def _split_along(name, min_ndim, axis_of):
    def fn(ary, indices_or_sections):
        x = _op(ary)
        if x.ndim < min_ndim:
            raise ValueError(f"{name} only works on arrays of {min_ndim} or more dimensions, got shape {x.shape}")
        return _split(name, x, indices_or_sections, axis_of(x), equal=True)

    fn.__name__ = name
    return fn


hsplit = _split_along("hsplit", 1, lambda x: 1 if x.ndim > 1 else 0)
vsplit = _split_along("vsplit", 2, lambda x: 0)
dsplit = _split_along("dsplit", 3, lambda x: 2)


# --- tiling and repeating ----------------------------------------------------------------


def tile(A, reps):
    """`A` repeated `reps` times along each axis (a broadcast then a reshape)."""
    x = _op(A)
    reps = (reps,) if isinstance(reps, (int, np.integer)) else tuple(reps)
    reps = tuple(_static_int(r, "tile's reps") for r in reps)
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: negative repetitions are not allowed, got reps={reps}")
    ndim = builtins.max(len(reps), x.ndim)
    reps = (1,) * (ndim - len(reps)) + reps
    shape = (1,) * (ndim - x.ndim) + x.shape
    x = lax.reshape(x, shape)
    interleaved = tuple(d for pair in zip(reps, shape) for d in pair)
    x = lax.broadcast_in_dim(x, interleaved, tuple(range(1, 2 * ndim, 2)))
    return lax.reshape(x, tuple(r * s for r, s in zip(reps, shape)))


def _repeat_uniform(x, count, ax):
    """Each entry along `ax` repeated `count` times."""
    shape = x.shape[: ax + 1] + (count,) + x.shape[ax + 1:]
    dims = tuple(i for i in range(x.ndim + 1) if i != ax + 1)
    out_shape = x.shape[:ax] + (x.shape[ax] * count,) + x.shape[ax + 1:]
    return lax.reshape(lax.broadcast_in_dim(x, shape, dims), out_shape)


def _repeat_static(x, counts, ax):
    """Repeat with static per-entry counts: one broadcast per run of equal counts."""
    pieces, start = [], 0
    for count, run in _runs(counts):
        piece = lax.slice_in_dim(x, start, start + run, 1, ax)
        start += run
        if count:
            pieces.append(_repeat_uniform(piece, count, ax))
    if not pieces:
        return lax.slice_in_dim(x, 0, 0, 1, ax)
    return lax.concatenate(pieces, ax) if len(pieces) > 1 else pieces[0]


def _runs(values):
    out = []
    for v in values:
        if out and out[-1][0] == v:
            out[-1][1] += 1
        else:
            out.append([v, 1])
    return out


def _fit_length(x, total, ax):
    """Truncate, or pad by repeating the last entry, to `total` entries along `ax` (the
    `total_repeat_length` contract)."""
    n = x.shape[ax]
    if n >= total:
        return lax.slice_in_dim(x, 0, total, 1, ax)
    last = lax.slice_in_dim(x, n - 1, n, 1, ax)
    return lax.concatenate([x, _repeat_uniform(last, total - n, ax)], ax)


def _repeat_traced(x, repeats, ax, total):
    """Repeat with traced counts into a static length `total`: output j takes entry
    src(j) = #{k : cumsum(repeats)[k] <= j} (clipped), selected by a one-hot mask."""
    from .reductions import cumsum

    n = x.shape[ax]
    ends = cumsum(broadcast_to_shape(lax.convert_element_type(repeats, np.int32), (n,)))
    j = lax.broadcasted_iota(np.int32, (total, n), 0)
    src = lax.reduce_sum(lax.convert_element_type(lax.le(lax.broadcast_in_dim(ends, (total, n), (1,)), j), np.int32), (1,))
    src = lax.min(src, Array(np.int32(n - 1)))
    k = lax.broadcasted_iota(np.int32, (total, n), 1)
    onehot = lax.eq(lax.broadcast_in_dim(src, (total, n), (0,)), k)
    xm = moveaxis(x, ax, 0)
    rest = xm.shape[1:]
    big = (total, n) + rest
    mask = lax.broadcast_in_dim(onehot, big, (0, 1))
    vals = lax.broadcast_in_dim(xm, big, tuple(range(1, len(big))))
    picked = _masked_pick(vals, mask)
    return moveaxis(picked, 0, ax)


def _masked_pick(vals, mask):
    """Reduce axis 1 where exactly one entry is selected, exactly for every dtype."""
    dt = vals.dtype
    if dt.kind == "b":
        return lax.reduce_or(bool_and(mask, vals), (1,))
    if dt.kind == "c":
        zero = lax.broadcast_in_dim(Array(np.zeros((), dt)), vals.shape, ())
        return lax.reduce_sum(lax.select(mask, vals, zero), (1,))
    low = Array(np.asarray(-np.inf if dtypes.is_float(dt) else np.iinfo(dt).min, dt))
    return lax.reduce_max(lax.select(mask, vals, lax.broadcast_in_dim(low, vals.shape, ())), (1,))


def repeat(a, repeats, axis=None, *, total_repeat_length=None):
    """Repeat entries of `a` along `axis` (flattened when None). `repeats` is an int or a
    per-entry array; traced repeats need a static `total_repeat_length`."""
    x = _op(a)
    if axis is None:
        x, axis = ravel(x), 0
    ax = canonicalize_axis(axis, x.ndim)
    if isinstance(repeats, Tracer):
        if total_repeat_length is None:
            raise repeats.concretization_error(
                "jnp.repeat with traced repeats needs a static total_repeat_length= (the output "
                "length must be known at trace time)"
            )
        return _repeat_traced(x, repeats, ax, operator.index(total_repeat_length))
    counts = np.asarray(repeats)
    if counts.dtype.kind not in "iub":
        raise TypeError(f"repeat: repeats must be integers, got dtype {counts.dtype}")
    if (counts < 0).any():
        raise ValueError(f"repeat: repeats may not contain negative values, got {counts.tolist()}")
    if counts.ndim == 0 or counts.size == 1:
        out = _repeat_uniform(x, int(counts.reshape(())), ax)
    elif counts.ndim == 1 and counts.size == x.shape[ax]:
        out = _repeat_static(x, [int(c) for c in counts], ax)
    else:
        raise ValueError(f"repeat: repeats of shape {counts.shape} do not match axis {ax} of shape {x.shape}")
    if total_repeat_length is not None and out.shape[ax] != total_repeat_length:
        return _fit_length(out, operator.index(total_repeat_length), ax)
    return out


# --- flips, rolls, rotations -------------------------------------------------------------


def flip(m, axis=None):
    x = _op(m)
    return lax.rev(x, tuple(sorted(canonicalize_axes(axis, x.ndim))))


def fliplr(m):
    x = _op(m)
    if x.ndim < 2:
        raise ValueError(f"fliplr requires an array of rank >= 2, got shape {x.shape}")
    return lax.rev(x, (1,))


def flipud(m):
    x = _op(m)
    if x.ndim < 1:
        raise ValueError("flipud requires an array of rank >= 1, got a 0-d array")
    return lax.rev(x, (0,))


def _roll_static(x, shift, ax):
    n = x.shape[ax]
    s = shift % n if n else 0
    if not s:
        return x
    return lax.concatenate([lax.slice_in_dim(x, n - s, n, 1, ax), lax.slice_in_dim(x, 0, n - s, 1, ax)], ax)


def _roll_traced(x, shift, ax):
    """Roll by a traced shift: entry i moves to (i + shift) mod n, realized as a sort by
    that destination (exact for every dtype)."""
    n = x.shape[ax]
    if n == 0:
        return x
    s = lax.convert_element_type(shift, np.int32)
    nn = Array(np.int32(n))
    s = lax.rem(lax.add(lax.rem(s, nn), nn), nn)
    dest = lax.rem(lax.add(lax.broadcasted_iota(np.int32, x.shape, ax), s), nn)
    return lax.sort_key_val(dest, x, ax)[1]


def roll(a, shift, axis=None):
    """Elements shifted along `axis` (flattened when None), wrapping around."""
    x = _op(a)
    if axis is None:
        return reshape(roll(ravel(x), shift, 0), x.shape)
    shifts = shift if isinstance(shift, (list, tuple)) else (shift,)
    axes = axis if isinstance(axis, (list, tuple)) else (axis,)
    if len(shifts) == 1:
        shifts = shifts * len(axes)
    if len(axes) == 1:
        axes = axes * len(shifts)
    if len(shifts) != len(axes):
        raise ValueError(f"roll: shift {shift!r} and axis {axis!r} must have the same length")
    for s, ax in zip(shifts, axes):
        ax = canonicalize_axis(ax, x.ndim)
        if isinstance(s, Tracer) or (isinstance(s, Array) and s.ndim):
            x = _roll_traced(x, s, ax)
        else:
            x = _roll_static(x, operator.index(s), ax)
    return x


def rot90(m, k=1, axes=(0, 1)):
    """Rotate by 90 degrees `k` times in the plane `axes` (from the first toward the second)."""
    x = _op(m)
    if len(axes) != 2:
        raise ValueError(f"rot90: len(axes) must be 2, got {axes!r}")
    a0, a1 = canonicalize_axis(axes[0], x.ndim), canonicalize_axis(axes[1], x.ndim)
    if a0 == a1:
        raise ValueError(f"rot90: axes must be different, got {axes!r}")
    k = operator.index(k) % 4
    if k == 0:
        return x
    if k == 2:
        return flip(flip(x, a0), a1)
    perm = list(range(x.ndim))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return lax.transpose(flip(x, a1), perm)
    return flip(lax.transpose(x, perm), a1)


# --- pad ---------------------------------------------------------------------------------


def _pad_widths(pad_width, ndim):
    if isinstance(pad_width, Tracer):
        raise pad_width.concretization_error("jnp.pad's pad_width must be static")
    w = np.asarray(pad_width.tolist() if isinstance(pad_width, Array) else pad_width)
    if w.dtype.kind not in "iu":
        raise TypeError(f"pad: pad_width must be integers, got {pad_width!r}")
    try:
        w = np.broadcast_to(w, (ndim, 2))
    except ValueError:
        raise ValueError(f"pad: pad_width {pad_width!r} cannot be broadcast to ({ndim}, 2) for an array of rank {ndim}") from None
    if (w < 0).any():
        raise ValueError(f"pad: index can't contain negative values, got pad_width {pad_width!r}")
    return [(int(lo), int(hi)) for lo, hi in w]


def _per_axis_values(values, ndim, dt, name):
    """`values` (scalar, or broadcastable to (ndim, 2), static or traced) as a (ndim, 2)
    table of 0-d operands of dtype `dt`."""
    v = _rules.to_operand(values)
    if v.dtype != dt:
        v = lax.convert_element_type(v, dt)
    if v.ndim == 0:
        return [[v, v] for _ in range(ndim)]
    try:
        v = broadcast_to_shape(v, (ndim, 2))
    except ValueError:
        raise ValueError(f"pad: {name} of shape {v.shape} cannot be broadcast to ({ndim}, 2)") from None
    return [[lax.reshape(lax.slice(v, (i, j), (i + 1, j + 1)), ()) for j in range(2)] for i in range(ndim)]


def _fill_along(x, value, count, ax):
    """A block of `count` copies of 0-d `value` shaped like `x` except along `ax`."""
    shape = x.shape[:ax] + (count,) + x.shape[ax + 1:]
    return lax.broadcast_in_dim(value, shape, ())


def _join3(before, x, after, ax):
    parts = [p for p in (before, x, after) if p is not None and p.shape[ax] > 0]
    if len(parts) == 1:
        return parts[0]
    return lax.concatenate(parts, ax) if parts else x


def _edge(x, ax, before):
    n = x.shape[ax]
    return lax.slice_in_dim(x, 0, 1, 1, ax) if before else lax.slice_in_dim(x, n - 1, n, 1, ax)


def _stretch(block, count, ax):
    """A size-1 slice along `ax` repeated `count` times."""
    return _repeat_uniform(block, count, ax)


def _pad_constant(x, widths, constant_values=0):
    table = _per_axis_values(constant_values, x.ndim, x.dtype, "constant_values")
    if all(lo is table[0][0] and hi is table[0][0] for lo, hi in table) and x.ndim:
        return lax.pad(x, table[0][0], tuple((lo, hi, 0) for lo, hi in widths))
    for ax, ((lo, hi), (vlo, vhi)) in enumerate(zip(widths, table)):
        if lo or hi:
            x = _join3(_fill_along(x, vlo, lo, ax), x, _fill_along(x, vhi, hi, ax), ax)
    return x


def _pad_empty(x, widths):
    return _pad_constant(x, widths, 0)


def _pad_edge(x, widths):
    for ax, (lo, hi) in enumerate(widths):
        if lo or hi:
            x = _join3(_stretch(_edge(x, ax, True), lo, ax), x, _stretch(_edge(x, ax, False), hi, ax), ax)
    return x


def _pad_wrap(x, widths):
    for ax, (lo, hi) in enumerate(widths):
        n = x.shape[ax]
        if not (lo or hi):
            continue
        # out[j] = x[(j - lo) mod n]: enough whole periods on each side, then one slice
        before, after = -(-lo // n), -(-hi // n)
        tiled = lax.concatenate([x] * (before + 1 + after), ax) if before + after else x
        start = before * n - lo
        x = lax.slice_in_dim(tiled, start, start + lo + n + hi, 1, ax)
    return x


def _reflect_chunks(x, ax, pad, before, mode, reflect_type, size):
    """Add `pad` entries on one side by mirroring, chunk by chunk (a mirror image cannot
    be longer than the axis), as NumPy does for widths larger than the axis."""
    offset = 1 if mode == "reflect" and size > 1 else 0
    edge = _edge(x, ax, before)
    while pad > 0:
        chunk = builtins.min(pad, size - offset)
        pad -= chunk
        n = x.shape[ax]
        if before:
            piece = lax.slice_in_dim(x, offset, offset + chunk, 1, ax)
        else:
            piece = lax.slice_in_dim(x, n - chunk - offset, n - offset, 1, ax)
        piece = lax.rev(piece, (ax,))
        if reflect_type == "odd":
            piece = lax.sub(lax.mul(Array(np.asarray(2, x.dtype)), _repeat_uniform(edge, chunk, ax)), piece)
            edge = _edge(piece, ax, before)
        x = lax.concatenate([piece, x] if before else [x, piece], ax)
    return x


def _pad_mirror(mode):
    def pad_fn(x, widths, reflect_type="even"):
        if reflect_type not in ("even", "odd"):
            raise ValueError(f"pad: reflect_type must be 'even' or 'odd', got {reflect_type!r}")
        for ax, (lo, hi) in enumerate(widths):
            size = x.shape[ax]
            x = _reflect_chunks(x, ax, lo, True, mode, reflect_type, size)
            x = _reflect_chunks(x, ax, hi, False, mode, reflect_type, size)
        return x

    return pad_fn


def _pad_linear_ramp(x, widths, end_values=0):
    from .creation import linspace

    table = _per_axis_values(end_values, x.ndim, x.dtype, "end_values")
    for ax, ((lo, hi), (elo, ehi)) in enumerate(zip(widths, table)):
        ramps = []
        for count, end, before in ((lo, elo, True), (hi, ehi, False)):
            edge = lax.reshape(_edge(x, ax, before), x.shape[:ax] + x.shape[ax + 1:])
            ramp = linspace(end, edge, count, endpoint=False, dtype=x.dtype, axis=ax)
            ramps.append(ramp if before else lax.rev(ramp, (ax,)))
        x = _join3(ramps[0], x, ramps[1], ax)
    return x


def _stat_lengths(stat_length, ndim):
    if stat_length is None:
        return [(None, None)] * ndim
    return [(int(lo), int(hi)) for lo, hi in np.broadcast_to(np.asarray(stat_length), (ndim, 2))]


def _pad_stat(stat_name):
    def pad_fn(x, widths, stat_length=None):
        from . import reductions

        stat = getattr(reductions, stat_name)
        for ax, ((lo, hi), (slo, shi)) in enumerate(zip(widths, _stat_lengths(stat_length, x.ndim))):
            n = x.shape[ax]
            blocks = []
            for count, length, before in ((lo, slo, True), (hi, shi, False)):
                length = n if length is None else builtins.max(1, builtins.min(length, n))
                region = lax.slice_in_dim(x, 0, length, 1, ax) if before else lax.slice_in_dim(x, n - length, n, 1, ax)
                value = stat(region, axis=ax, keepdims=True)
                if dtypes.is_integer(x.dtype) and value.dtype != x.dtype:
                    value = lax.round(value, lax.RoundingMethod.TO_NEAREST_EVEN)  # NumPy rounds int means
                blocks.append(_stretch(lax.convert_element_type(value, x.dtype), count, ax) if count else None)
            x = _join3(blocks[0], x, blocks[1], ax)
        return x

    return pad_fn


# mode: (padding function, keyword arguments it accepts)
_PAD_MODES = {
    "constant": (_pad_constant, ("constant_values",)),
    "empty": (_pad_empty, ()),
    "edge": (_pad_edge, ()),
    "wrap": (_pad_wrap, ()),
    "reflect": (_pad_mirror("reflect"), ("reflect_type",)),
    "symmetric": (_pad_mirror("symmetric"), ("reflect_type",)),
    "linear_ramp": (_pad_linear_ramp, ("end_values",)),
    "maximum": (_pad_stat("max"), ("stat_length",)),
    "minimum": (_pad_stat("min"), ("stat_length",)),
    "mean": (_pad_stat("mean"), ("stat_length",)),
    "median": (_pad_stat("median"), ("stat_length",)),
}


def pad(array, pad_width, mode="constant", **kwargs):
    """NumPy's `pad` with static widths; modes constant, empty, edge, wrap, reflect,
    symmetric, linear_ramp, maximum, minimum, mean, median."""
    x = _op(array)
    if mode not in _PAD_MODES:
        raise ValueError(f"Unimplemented padding mode {mode!r} for jnp.pad; use one of {sorted(_PAD_MODES)}")
    fn, accepted = _PAD_MODES[mode]
    unexpected = set(kwargs) - set(accepted)
    if unexpected:
        raise ValueError(f"unsupported keyword arguments for mode {mode!r}: {sorted(unexpected)}")
    widths = _pad_widths(pad_width, x.ndim)
    if mode not in ("constant", "empty"):
        for ax, (lo, hi) in enumerate(widths):
            if x.shape[ax] == 0 and (lo or hi):
                raise ValueError(f"can't extend empty axis {ax} using modes other than 'constant' or 'empty' (shape {x.shape})")
    if not any(lo or hi for lo, hi in widths):
        return x
    return fn(x, widths, **kwargs)


# --- diagonals and triangles -------------------------------------------------------------


def diagonal(a, offset=0, axis1=0, axis2=1):
    """The `offset` diagonal of the planes (axis1, axis2), as a last axis: a strided slice
    of the flattened planes (entry (i, i + offset) sits at i * (m + 1) + offset)."""
    x = _op(a)
    if x.ndim < 2:
        raise ValueError(f"diagonal requires an array of rank >= 2, got shape {x.shape}")
    a1, a2 = canonicalize_axis(axis1, x.ndim, "axis1"), canonicalize_axis(axis2, x.ndim, "axis2")
    if a1 == a2:
        raise ValueError(f"diagonal: axis1 and axis2 cannot be the same ({axis1}, {axis2})")
    x = moveaxis(x, (a1, a2), (-2, -1))
    n, m = x.shape[-2:]
    k = operator.index(offset)
    count = builtins.max(0, builtins.min(n, m - k) if k >= 0 else builtins.min(n + k, m))
    batch = x.shape[:-2]
    flat = lax.reshape(x, batch + (n * m,))
    if count == 0:
        return lax.slice_in_dim(flat, 0, 0, 1, len(batch))
    start = k if k >= 0 else -k * m
    return lax.slice_in_dim(flat, start, start + (count - 1) * (m + 1) + 1, m + 1, len(batch))


def _offset_mask(shape, k, cmp):
    """Boolean (..., n, m) mask of `cmp(col - row, k)` broadcast over leading axes."""
    nd = len(shape)
    rows = lax.broadcasted_iota(np.int32, shape, nd - 2)
    cols = lax.broadcasted_iota(np.int32, shape, nd - 1)
    return cmp(lax.sub(cols, rows), Array(np.int32(k)))


def _zeros_like(x):
    return lax.broadcast_in_dim(Array(np.zeros((), x.dtype)), x.shape, ())


def diag(v, k=0):
    """The k-th diagonal of a 2-d array, or a 2-d array with 1-d `v` on its k-th diagonal."""
    x = _op(v)
    k = operator.index(k)
    if x.ndim == 2:
        return diagonal(x, k)
    if x.ndim != 1:
        raise ValueError(f"diag: input must be 1- or 2-d, got shape {x.shape}")
    n = x.shape[0] + builtins.abs(k)
    zero = Array(np.zeros((), x.dtype))
    padded = lax.pad(x, zero, ((k, 0, 0),) if k >= 0 else ((0, -k, 0),))
    rows_of_v = lax.broadcast_in_dim(padded, (n, n), (1,))
    return lax.select(_offset_mask((n, n), k, lax.eq), rows_of_v, _zeros_like(rows_of_v))


def diagflat(v, k=0):
    return diag(ravel(v), k)


def _triangle(name, keep):
    def fn(m, k=0):
        x = _op(m)
        if x.ndim < 2:
            raise ValueError(f"{name} requires an array of rank >= 2, got shape {x.shape}")
        return lax.select(_offset_mask(x.shape, operator.index(k), keep), x, _zeros_like(x))

    fn.__name__ = name
    fn.__doc__ = f"`{name}` of the last two axes (entries outside the triangle become 0)."
    return fn


tril = _triangle("tril", lax.le)
triu = _triangle("triu", lax.ge)


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """Sum of the `offset` diagonal (dtype rules of `sum`)."""
    from .reductions import sum as _sum

    return _sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


# --- grids -------------------------------------------------------------------------------


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate arrays from 1-d coordinate vectors ('xy': Cartesian, 'ij': matrix)."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    xs = [ravel(x) for x in xi]
    shape = [x.size for x in xs]
    if indexing == "xy" and len(xs) > 1:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, x in enumerate(xs):
        pos = {0: 1, 1: 0}.get(i, i) if indexing == "xy" and len(xs) > 1 else i
        if sparse:
            out.append(lax.reshape(x, tuple(x.size if d == pos else 1 for d in range(len(xs)))))
        else:
            out.append(lax.broadcast_in_dim(x, tuple(shape), (pos,)))
    return out


def indices(dimensions, dtype=None, sparse=False):
    """Index grids: out[i][j0, j1, ...] = ji."""
    from .creation import _dtype_arg

    dt = _dtype_arg(dtype) or dtypes.default_int_dtype()
    dims = tuple(operator.index(d) for d in dimensions)
    if sparse:
        return tuple(
            lax.broadcasted_iota(dt, tuple(d if j == i else 1 for j in range(len(dims))), i) for i, d in enumerate(dims)
        )
    if not dims:
        return lax.broadcasted_iota(dt, (0,), 0)
    return lax.concatenate([lax.broadcasted_iota(dt, (1,) + dims, i + 1) for i in range(len(dims))], 0)


def ix_(*args):
    """Open mesh from 1-d index sequences (concrete boolean masks become their indices)."""
    n = len(args)
    out = []
    for i, a in enumerate(args):
        if not isinstance(a, Tracer) and np.asarray(a).dtype == np.bool_:
            a = np.nonzero(np.asarray(a))[0].astype(dtypes.default_int_dtype())
        x = _op(a)
        if x.ndim != 1:
            raise ValueError(f"ix_: cross index must be 1-dimensional, got shape {x.shape}")
        out.append(lax.reshape(x, tuple(x.size if j == i else 1 for j in range(n))))
    return tuple(out)


# --- static queries ----------------------------------------------------------------------


def shape(a):
    return tuple(a.shape) if hasattr(a, "shape") else np.shape(a)


def ndim(a):
    return len(shape(a))


def size(a, axis=None):
    s = shape(a)
    return math.prod(s) if axis is None else s[canonicalize_axis(axis, len(s))]


# Called eagerly, each is one cached program over its array operand (numpy/eager_programs.py).
wrap_module_functions(globals(), (
    "diag", "diagonal", "trace",
), operands=1)

__all__ = [
    "reshape", "ravel", "transpose", "permute_dims", "matrix_transpose", "swapaxes", "moveaxis",
    "rollaxis", "expand_dims", "squeeze", "broadcast_shapes", "broadcast_to", "broadcast_arrays",
    "concatenate", "concat", "stack", "hstack", "vstack", "dstack", "column_stack", "atleast_1d",
    "atleast_2d", "atleast_3d", "split", "array_split", "hsplit", "vsplit", "dsplit", "tile",
    "repeat", "flip", "fliplr", "flipud", "roll", "rot90", "pad", "diagonal", "diag", "diagflat",
    "tril", "triu", "trace", "meshgrid", "indices", "ix_", "shape", "ndim", "size",
]
