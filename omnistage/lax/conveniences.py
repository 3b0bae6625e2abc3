"""JAX's smaller lax conveniences over the primitives here: `full`, `full_like`, `collapse`, `batch_matmul`, `split`, `dtype`, `optimization_barrier`,
`associative_scan` (the parallel prefix scan, as JAX's: odd/even recursion over slices),
`scatter_sub`, and every registered primitive as `<name>_p` (JAX's primitive objects, for code
that compares or inspects them). Imports core and the lax modules beside it only.
"""
import numpy as np

from ..core import dtypes
from ..core.primitive import registry
from ..core.tree_util import tree_flatten, tree_unflatten
from . import _rules as R
from . import contractions as C
from . import elementwise as E
from . import indexing as IX
from . import shapes as S


def dtype(x, *, canonicalize=False):
    """The dtype of x (an array, scalar or dtype-like); canonicalized for 64-bit mode on request."""
    dt = getattr(x, "dtype", None)
    dt = np.dtype(dt) if isinstance(dt, np.dtype) else np.result_type(x)
    return dtypes.canonicalize_dtype(dt) if canonicalize else dt


def full(shape, fill_value, dtype=None, *, sharding=None):  # noqa: A002
    """An array of shape filled with fill_value (of dtype, default: fill_value's)."""
    (v,) = R.operands(fill_value)
    if dtype is not None:
        v = E.convert_element_type(v, dtypes.canonicalize_dtype(dtype))
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    return S.broadcast_in_dim(v, shape, ())


def full_like(x, fill_value, dtype=None, shape=None, sharding=None):  # noqa: A002
    """An array like x (its shape and dtype unless given) filled with fill_value."""
    (x,) = R.operands(x)
    return full(x.shape if shape is None else shape, fill_value, x.dtype if dtype is None else dtype)


def collapse(operand, start_dimension, stop_dimension=None):
    """operand with dimensions [start, stop) merged into one."""
    (x,) = R.operands(operand)
    stop = x.ndim if stop_dimension is None else stop_dimension
    start, stop = start_dimension % max(x.ndim, 1), stop if stop >= 0 else stop + x.ndim
    size = int(np.prod(x.shape[start:stop]))
    return S.reshape(x, x.shape[:start] + (size,) + x.shape[stop:])


def batch_matmul(lhs, rhs, precision=None):
    """Batched matrix product over equal leading dimensions."""
    lhs, rhs = R.operands(lhs, rhs)
    if lhs.ndim < 2 or lhs.ndim != rhs.ndim or lhs.shape[:-2] != rhs.shape[:-2]:
        raise ValueError(f"batch_matmul requires arrays of equal rank >= 2 and equal batch shapes, got {lhs.shape} and {rhs.shape}.")
    batch = tuple(range(lhs.ndim - 2))
    return C.dot_general(lhs, rhs, (((lhs.ndim - 1,), (rhs.ndim - 2,)), (batch, batch)))


def split(operand, sizes, axis=0):
    """operand cut into pieces of the given sizes along axis."""
    (x,) = R.operands(operand)
    axis = axis % x.ndim
    if sum(sizes) != x.shape[axis]:
        raise ValueError(f"split: sizes {tuple(sizes)} must sum to the axis size {x.shape[axis]}.")
    out, start = [], 0
    for n in sizes:
        out.append(S.slice_in_dim(x, start, start + n, axis=axis))
        start += n
    return out


def optimization_barrier(operand):
    """Its argument (a pytree), unchanged: XLA's barrier to code motion, with nothing to stop
    here (the code generator does not move computations across statements)."""
    return operand


def scatter_sub(operand, indices, updates, axes=None):
    """scatter_add of the negated updates (same arguments as this lax's scatter_add)."""
    return IX.scatter_add(operand, indices, E.neg(R.operands(updates)[0]), axes)


def associative_scan(fn, elems, reverse=False, axis=0):
    """All prefix combinations of elems along axis under the associative fn (a parallel scan:
    pairs are combined, the odd/even halves recursed on, as JAX's)."""
    flat, tree = tree_flatten(elems)
    flat = R.operands(*flat)
    if not flat:
        return elems
    axis = axis % flat[0].ndim
    n = flat[0].shape[axis]
    if any(x.shape[axis] != n for x in flat):
        raise ValueError("associative_scan: every operand must have the same length along axis.")
    if reverse:
        flat = [S.rev(x, (axis,)) for x in flat]

    def combine(a, b):
        out, out_tree = tree_flatten(fn(tree_unflatten(tree, a), tree_unflatten(tree, b)))
        if out_tree != tree:
            raise ValueError(f"associative_scan: fn must return the elements' structure {tree}, got {out_tree}.")
        return out

    def take(xs, start, stop=None, step=1):
        return [S.slice_in_dim(x, start, x.shape[axis] if stop is None else stop, stride=step, axis=axis) for x in xs]

    def scan(xs):
        length = xs[0].shape[axis]
        if length < 2:
            return xs
        reduced = combine(take(xs, 0, -1 if length % 2 else None, 2) if length % 2 == 0 else take(xs, 0, length - 1, 2),
                          take(xs, 1, None, 2))
        odd = scan(reduced)
        if length % 2 == 0:
            even = combine(take(odd, 0, -1), take(xs, 2, None, 2))
        else:
            even = combine(odd, take(xs, 2, None, 2))
        even = [S.concatenate([S.slice_in_dim(x, 0, 1, axis=axis), e], axis) for x, e in zip(xs, even)]
        return [_interleave(e, o, axis) for e, o in zip(even, odd)]

    out = scan(flat)
    if reverse:
        out = [S.rev(x, (axis,)) for x in out]
    return tree_unflatten(tree, out)


def _interleave(a, b, axis):
    """a[0], b[0], a[1], b[1], ... along axis (a as long as b or one longer)."""
    pad_b = a.shape[axis] - b.shape[axis]
    zero = E.convert_element_type(0, a.dtype)
    config_a = [(0, 0, 0)] * a.ndim
    config_b = [(0, 0, 0)] * b.ndim
    config_a[axis] = (0, 1 - pad_b, 1)
    config_b[axis] = (1, pad_b, 1)
    return E.add(S.pad(a, zero, config_a), S.pad(b, zero, config_b)) if a.dtype.kind != "b" else E.bitwise_or(
        S.pad(a, zero, config_a), S.pad(b, zero, config_b))


_PRIMITIVE_OBJECTS = {f"{name}_p": p for name, p in registry.items()}
globals().update(_PRIMITIVE_OBJECTS)

__all__ = [
    "dtype", "full", "full_like", "collapse", "batch_matmul", "split", "optimization_barrier", "scatter_sub",
    "associative_scan", *sorted(_PRIMITIVE_OBJECTS),
]
