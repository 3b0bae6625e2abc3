"""Windowed and general reductions with a user computation: JAX's `reduce_window` (any
computation, pytree operands, padding, strides, base and window dilation),
`reduce_window_shape_tuple`, and `reduce`.

Max and min windows of real arrays bind the primitives of `window_choosers.py` (JAX's
reduce_window_max/min, whose derivatives are select_and_gather_add/select_and_scatter_add):
one kernel each in generated code. The rest are compositions of existing primitives, so
derivatives, batching and both code generators come with them. A window reduction pads
(interior padding for base dilation), then folds, one window dimension at a time, the
strided slices taken at each offset of the window. A reduction XLA may reorder must be
associative, so folding dimension by dimension is allowed and costs sum(window) slices
instead of prod(window). Dimensions are folded last first, so for max/min (bool, or with
negative padding) the slice that wins a tie is the first in row-major window order, the
choice the primitives make: the derivative of a max pool goes to the first maximum of each
window, as JAX's, not split among ties as `lax.max`'s derivative is. `reduce` folds halves
of each axis (log2(n) steps).

Imports core and the lax modules beside it only.
"""
import numpy as np

from ..core import dtypes
from ..core.tracer import Tracer
from ..core.tree_util import tree_flatten, tree_unflatten
from . import elementwise as E
from . import reductions as RD
from . import shapes as S
from . import window_choosers as WC
from .convolution import padtype_to_pads

# computation -> the reduction primitive it is, for `reduce` with an identity initial value
_MONOID_REDUCE = {
    E.add: RD.reduce_sum, E.mul: RD.reduce_prod, E.max: RD.reduce_max, E.min: RD.reduce_min,
    E.bitwise_and: RD.reduce_and, E.bitwise_or: RD.reduce_or, E.bitwise_xor: RD.reduce_xor,
}


def _identity(computation, dtype):
    """The value `computation` leaves unchanged for `dtype`, or None if it has none we know."""
    dt = np.dtype(dtype)
    inexact = dt.kind in "fc" or dtypes.is_float(dt)
    if computation is E.add or computation is E.bitwise_or or computation is E.bitwise_xor:
        return 0
    if computation is E.mul:
        return 1
    if computation is E.bitwise_and:
        return True if dt.kind == "b" else -1
    if computation in (E.max, E.min):
        if dt.kind == "b":
            return computation is E.min
        if inexact:
            return -np.inf if computation is E.max else np.inf
        info = np.iinfo(dt)
        return info.min if computation is E.max else info.max
    return None


def _is_identity(value, computation, dtype):
    """Whether the initial value is known now (not traced) to be `computation`'s identity."""
    ident = _identity(computation, dtype)
    if ident is None or isinstance(value, Tracer):
        return False
    try:
        v = np.asarray(value)
    except Exception:  # noqa: BLE001 - anything not concrete is simply not known
        return False
    return v.shape == () and bool(v == ident)


def _first_extremum(compare):
    """Fold step of max/min: keeps the accumulator on ties (the first element wins) and
    propagates NaN from either side, as lax.max/lax.min do."""

    def step(acc, x):
        keep = compare(acc, x)
        if np.dtype(acc.dtype).kind in "f" or dtypes.is_float(acc.dtype):
            keep = E.bitwise_or(keep, E.ne(acc, acc))
        return E.select(keep, acc, x)

    return step


# a fold step for the monoids whose derivative at ties JAX defines by choosing one element
_CHOOSER_STEP = {E.max: _first_extremum(E.ge), E.min: _first_extremum(E.le)}


def reduce_window_shape_tuple(operand_shape, window_dimensions, window_strides, padding,
                              base_dilation=None, window_dilation=None):
    """The shape `reduce_window` gives (JAX's helper of the same name)."""
    if base_dilation is not None:
        operand_shape = [_dilate(d, b) for d, b in zip(operand_shape, base_dilation)]
    if window_dilation is not None:
        window_dimensions = [_dilate(w, r) for w, r in zip(window_dimensions, window_dilation)]
    padded = [d + lo + hi for d, (lo, hi) in zip(operand_shape, padding)]
    return tuple(_stride_dim(n, w, s) for n, w, s in zip(padded, window_dimensions, window_strides))


def _dilate(d, rate):
    return 0 if d == 0 else 1 + rate * (d - 1)


def _stride_dim(n, window, stride):
    return max(0, (n - window) // stride + 1) if n >= window else 0


def _window_slice(x, axis, offset, count, stride):
    start = [0] * x.ndim
    limit = list(x.shape)
    strides = [1] * x.ndim
    start[axis] = offset
    limit[axis] = offset + (count - 1) * stride + 1 if count else offset
    strides[axis] = stride
    return S.slice(x, start, limit, strides)


def _fold_window_axis(xs, axis, window, stride, dilation, step):
    """Reduce the operands `xs` (a list) over windows along one axis."""
    n = xs[0].shape[axis]
    count = _stride_dim(n, _dilate(window, dilation), stride)
    if window == 1 and stride == 1 and count == n:
        return xs
    acc = [_window_slice(x, axis, 0, count, stride) for x in xs]
    for k in range(1, window):
        acc = step(acc, [_window_slice(x, axis, k * dilation, count, stride) for x in xs])
    return acc


def _check_lengths(nd, **per_dim):
    for name, v in per_dim.items():
        if len(v) != nd:
            raise TypeError(
                f"reduce_window: {name} must have one entry per operand dimension ({nd}), got {tuple(v)}."
            )


def reduce_window(operand, init_value, computation, window_dimensions, window_strides=None,
                  padding="VALID", base_dilation=None, window_dilation=None):
    """Reduction over padded windows (JAX's `lax.reduce_window`, XLA's ReduceWindow).

    `operand` and `init_value` are pytrees of the same structure; `computation(acc, x)` takes
    and returns that structure. Each window's fold starts from the initial value; padding and
    base-dilation holes take no part in it (as JAX computes it).
    """
    from ._rules import operands  # noqa: PLC0415 - local: _rules imports lax modules

    flat_x, tree = tree_flatten(operand)
    flat_init, init_tree = tree_flatten(init_value)
    if tree != init_tree or len(flat_x) != len(flat_init):
        raise ValueError(
            f"reduce_window: operand and init_value must have the same tree structure, got {tree} and {init_tree}."
        )
    if not flat_x:
        raise ValueError("reduce_window must have at least one operand.")
    flat_x = operands(*flat_x)
    nd = flat_x[0].ndim
    window = tuple(int(w) for w in window_dimensions)
    strides = (1,) * nd if window_strides is None else tuple(int(s) for s in window_strides)
    base = (1,) * nd if base_dilation is None else tuple(int(b) for b in base_dilation)
    wdil = (1,) * nd if window_dilation is None else tuple(int(r) for r in window_dilation)
    if isinstance(padding, str):
        padding = padtype_to_pads(flat_x[0].shape, [_dilate(w, r) for w, r in zip(window, wdil)], strides, padding)
    pads = tuple((int(lo), int(hi)) for lo, hi in padding)
    _check_lengths(nd, window_dimensions=window, window_strides=strides, padding=pads,
                   base_dilation=base, window_dilation=wdil)
    if any(x.shape != flat_x[0].shape for x in flat_x):
        raise TypeError(f"reduce_window operands must have one shape, got {[x.shape for x in flat_x]}.")
    if any(v < 1 for v in window + strides + base + wdil):
        raise ValueError("reduce_window: window dimensions, strides and dilations must be positive.")

    monoid = len(flat_x) == 1 and _is_identity(flat_init[0], computation, flat_x[0].dtype)
    chooser = _CHOOSER_STEP.get(computation) if monoid else None
    if chooser is not None and _chooser_primitive_applies(flat_x[0], pads):
        select_prim = "ge" if computation is E.max else "le"
        out = WC.reduce_window_chooser(flat_x[0], select_prim, window, strides, pads, base, wdil)
        return tree_unflatten(tree, [out])
    inits = [E.convert_element_type(v, x.dtype) for v, x in zip(operands(*flat_init), flat_x)]

    def step(acc, xs):
        if chooser is not None:
            return [chooser(acc[0], xs[0])]
        out, out_tree = tree_flatten(computation(tree_unflatten(tree, acc), tree_unflatten(tree, xs)))
        if out_tree != tree:
            raise ValueError(
                f"reduce_window: computation must return the operand's tree structure {tree}, got {out_tree}."
            )
        return out

    config = tuple((lo, hi, b - 1) for (lo, hi), b in zip(pads, base))
    padded = any(c != (0, 0, 0) for c in config)
    masked = padded and not monoid
    if masked:
        # padding and dilation holes are no part of any window (as XLA on CPU/GPU computes
        # it): for a computation whose identity is unknown, a mask says which elements are
        flat_x = flat_x + [E.convert_element_type(S.broadcast_in_dim(True, flat_x[0].shape, ()), np.bool_)]
        inits = inits + [E.convert_element_type(False, np.bool_)]
        step = _skipping_masked(step)
    if padded:
        flat_x = [S.pad(x, v, config) for x, v in zip(flat_x, inits)]
    for axis in reversed(range(nd)):
        flat_x = _fold_window_axis(flat_x, axis, window[axis], strides[axis], wdil[axis], step)
    if not monoid:
        # XLA starts each window's fold from the initial value
        start = [S.broadcast_in_dim(v, flat_x[0].shape, ()) for v in inits]
        if masked:
            start[-1] = S.broadcast_in_dim(E.convert_element_type(True, np.bool_), flat_x[0].shape, ())
        flat_x = step(start, flat_x)[:len(flat_init)]
    return tree_unflatten(tree, flat_x)


def _chooser_primitive_applies(x, pads):
    """Max and min windows of a real array bind `reduce_window_max`/`_min` (one kernel, and
    one for the derivative); bool, complex, rank-0 and negative padding keep the composition."""
    dt = np.dtype(x.dtype)
    real = dt.kind in "iuf" or dtypes.is_float(dt)
    return real and x.ndim > 0 and all(lo >= 0 and hi >= 0 for lo, hi in pads)


def _skipping_masked(step):
    """A fold step over operands whose last entry says which elements are real: a pair
    with one unreal side gives the other side."""

    def masked_step(acc, xs):
        both = step(acc[:-1], xs[:-1])
        a_only, b_only = E.bitwise_not(xs[-1]), E.bitwise_not(acc[-1])
        out = [E.select(a_only, a, E.select(b_only, b, c)) for a, b, c in zip(acc[:-1], xs[:-1], both)]
        return out + [E.bitwise_or(acc[-1], xs[-1])]

    return masked_step


def _fold_halves(xs, axis, step):
    """Reduce the operands over all of `axis` by folding halves (associative `step`)."""
    while xs[0].shape[axis] > 1:
        n = xs[0].shape[axis]
        half = n // 2
        low = [S.slice_in_dim(x, 0, half, axis=axis) for x in xs]
        high = [S.slice_in_dim(x, half, 2 * half, axis=axis) for x in xs]
        folded = step(low, high)
        if n % 2:
            folded = [S.concatenate([f, S.slice_in_dim(x, n - 1, n, axis=axis)], axis) for f, x in zip(folded, xs)]
        xs = folded
    return [S.squeeze(x, (axis,)) for x in xs]


def reduce(operands, init_values, computation, dimensions):  # noqa: A001 - lax's name
    """Reduce the operands over `dimensions` with `computation` (JAX's `lax.reduce`).

    A computation that is a reduction primitive's (lax.add, lax.max, ...) with its identity
    as the initial value binds that primitive; any other is folded from its source.
    """
    from ._rules import canonical_axes, operands as to_operands  # noqa: PLC0415

    flat_x, tree = tree_flatten(operands)
    flat_init, init_tree = tree_flatten(init_values)
    if tree != init_tree or len(flat_x) != len(flat_init):
        raise ValueError(
            f"reduce: operands and init_values must have the same tree structure, got {tree} and {init_tree}."
        )
    flat_x = to_operands(*flat_x)
    axes = canonical_axes(tuple(dimensions), flat_x[0].ndim, "dimension")
    if len(flat_x) == 1 and computation in _MONOID_REDUCE and _is_identity(flat_init[0], computation, flat_x[0].dtype):
        return tree_unflatten(tree, [_MONOID_REDUCE[computation](flat_x[0], axes)])
    inits = [E.convert_element_type(v, x.dtype) for v, x in zip(to_operands(*flat_init), flat_x)]

    def step(acc, xs):
        out, out_tree = tree_flatten(computation(tree_unflatten(tree, acc), tree_unflatten(tree, xs)))
        if out_tree != tree:
            raise ValueError(f"reduce: computation must return the operands' tree structure {tree}, got {out_tree}.")
        return out

    if any(flat_x[0].shape[a] == 0 for a in axes):  # nothing to fold: the initial values
        shape = tuple(d for i, d in enumerate(flat_x[0].shape) if i not in axes)
        return tree_unflatten(tree, [S.broadcast_in_dim(v, shape, ()) for v in inits])
    for axis in reversed(axes):
        flat_x = _fold_halves(flat_x, axis, step)
    return tree_unflatten(tree, step([S.broadcast_in_dim(v, flat_x[0].shape, ()) for v in inits], flat_x))


__all__ = ["reduce_window", "reduce_window_shape_tuple", "reduce"]
