"""JAX's lax operations that omnistage composes from its primitives (JAX has a primitive for
some of them; their derivatives and batching follow from the parts): `stack`, `unstack`,
`tile`, `empty`, `broadcast_like`, `axis_size`, `reduce_precision`, `mulhi`, `clz`,
`index_take`, `approx_max_k` / `approx_min_k` (exact, as JAX's on CPU),
`conv_general_dilated_patches`, `conv_general_dilated_local`; and the dimension-number types
(`ConvDimensionNumbers`, `GatherDimensionNumbers`, `ScatterDimensionNumbers`,
`GatherScatterMode`, the `DotDimensionNumbers` / `PrecisionLike` /
`ConvGeneralDilatedDimensionNumbers` type aliases). Imports core and the lax modules beside it only.
"""
import enum
import math
import typing

import numpy as np

from ..core import dtypes
from ..core.primitive import registry
from . import _rules as R
from . import contractions as C
from . import convolution as CV
from . import elementwise as E
from . import indexing as IX
from . import parallel as P
from . import shapes as S
from . import sorting as SO


# --- dimension numbers and modes ------------------------------------------------------------


class ConvDimensionNumbers(typing.NamedTuple):
    """(lhs_spec, rhs_spec, out_spec): each the dimension indices in the order (batch or
    out-feature, feature or in-feature, spatial...), as `conv_dimension_numbers` normalizes them."""
    lhs_spec: tuple
    rhs_spec: tuple
    out_spec: tuple


class GatherDimensionNumbers(typing.NamedTuple):
    """XLA's gather dimension numbers (as JAX's)."""
    offset_dims: tuple
    collapsed_slice_dims: tuple
    start_index_map: tuple
    operand_batching_dims: tuple = ()
    start_indices_batching_dims: tuple = ()


class ScatterDimensionNumbers(typing.NamedTuple):
    """XLA's scatter dimension numbers (as JAX's)."""
    update_window_dims: tuple
    inserted_window_dims: tuple
    scatter_dims_to_operand_dims: tuple
    operand_batching_dims: tuple = ()
    scatter_indices_batching_dims: tuple = ()


class GatherScatterMode(enum.Enum):
    """What gathers and scatters do with out-of-bounds indices (JAX's enum)."""
    CLIP = 1
    FILL_OR_DROP = 2
    PROMISE_IN_BOUNDS = 3
    ONE_HOT = 4

    @staticmethod
    def from_any(s):
        if isinstance(s, GatherScatterMode):
            return s
        if s == "clip":
            return GatherScatterMode.CLIP
        if s is None or s == "fill" or s == "drop":
            return GatherScatterMode.FILL_OR_DROP
        if s == "promise_in_bounds":
            return GatherScatterMode.PROMISE_IN_BOUNDS
        if s == "one_hot":
            return GatherScatterMode.ONE_HOT
        raise ValueError(f'Unknown gather mode "{s}"')


DotDimensionNumbers = tuple  # ((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))
ConvGeneralDilatedDimensionNumbers = typing.Union[None, ConvDimensionNumbers, tuple]
PrecisionLike = typing.Union[None, str, tuple]


# JAX's names of the logical primitives (registered here as and_, or_, not_: also <name>_p in conveniences)
and_p, or_p, not_p = registry["and_"], registry["or_"], registry["not_"]


# --- stacking and tiling --------------------------------------------------------------------


def stack(operands, axis=0):
    """The operands (equal shapes) joined along a new axis `axis`."""
    xs = R.operands(*operands)
    if not xs:
        raise ValueError("stack requires at least one operand")
    axis = R.canonical_axes(axis, xs[0].ndim + 1, "axis")[0]
    return S.concatenate([S.expand_dims(x, (axis,)) for x in xs], axis)


def unstack(x, axis=0):
    """The slices of `x` along `axis`, as a tuple."""
    (x,) = R.operands(x)
    if x.ndim == 0:
        raise ValueError("unstack requires an operand of rank >= 1")
    axis = R.canonical_axes(axis, x.ndim, "axis")[0]
    return tuple(S.index_in_dim(x, i, axis, keepdims=False) for i in range(x.shape[axis]))


def tile(operand, reps):
    """`operand` repeated `reps[d]` times along each dimension d (len(reps) == operand.ndim)."""
    (x,) = R.operands(operand)
    reps = tuple(int(r) for r in reps)
    if len(reps) != x.ndim:
        raise ValueError(f"tile: reps {reps} must have one entry per dimension of the operand (shape {x.shape}).")
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: reps must be non-negative, got {reps}.")
    interleaved = tuple(v for r, d in zip(reps, x.shape) for v in (r, d))
    b = S.broadcast_in_dim(x, interleaved, tuple(range(1, 2 * x.ndim, 2)))
    return S.reshape(b, tuple(r * d for r, d in zip(reps, x.shape)))


def empty(shape, dtype, *, out_sharding=None):
    """An array of `shape` and `dtype` whose values are unspecified (zeros here)."""
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    zero = E.convert_element_type(0, dtypes.canonicalize_dtype(np.dtype(dtype)))
    return S.broadcast_in_dim(zero, shape, ())


def broadcast_like(arr, like_arr):
    """`arr` broadcast (NumPy rules) to the shape of `like_arr`."""
    x, like = R.operands(arr, like_arr)
    if x.shape == like.shape:
        return x
    return _broadcast_to(x, like.shape)


def _broadcast_to(x, shape):
    if x.ndim > len(shape) or any(d not in (1, t) for d, t in zip(x.shape[::-1], shape[::-1])):
        raise ValueError(f"broadcast_like: cannot broadcast shape {x.shape} to {tuple(shape)}.")
    lead = len(shape) - x.ndim
    keep = tuple(i for i, d in enumerate(x.shape) if d == shape[lead + i])
    squeezed = S.reshape(x, tuple(x.shape[i] for i in keep))
    return S.broadcast_in_dim(squeezed, tuple(shape), tuple(lead + i for i in keep))


def axis_size(axis_name):
    """The size of the mapped axis `axis_name` (a name or a tuple of names: their product),
    as a Python int; NameError outside a vmap/pmap that binds it."""
    names = axis_name if isinstance(axis_name, (tuple, list)) else (axis_name,)
    return math.prod(P.axis_size(n) for n in names)


# --- bits ---------------------------------------------------------------------------------


_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _as_unsigned(x):
    dt = np.dtype(x.dtype)
    if not dtypes.is_integer(dt):
        raise TypeError(f"expected an integer operand, got {dt.name}")
    return x if dt.kind == "u" else E.bitcast_convert_type(x, _UNSIGNED[dt.itemsize])


def _const(value, dt):
    return E.convert_element_type(np.array(value, dtype=dt), dt)


def mulhi(x, y, /):
    """The high half of the bits of x * y (equal integer dtypes; signed as two's complement)."""
    x, y = R.operands(x, y)
    if x.dtype != y.dtype:
        raise TypeError(f"mulhi requires arguments of the same dtype, got {x.dtype.name} and {y.dtype.name}.")
    ux, uy = _as_unsigned(x), _as_unsigned(y)
    ut = np.dtype(ux.dtype)
    half = ut.itemsize * 4
    mask, shift = _const((1 << half) - 1, ut), _const(half, ut)
    lo = lambda v: E.bitwise_and(v, mask)  # noqa: E731
    hi = lambda v: E.shift_right_logical(v, shift)  # noqa: E731
    xl, xh, yl, yh = lo(ux), hi(ux), lo(uy), hi(uy)
    ll, lh, hl, hh = E.mul(xl, yl), E.mul(xl, yh), E.mul(xh, yl), E.mul(xh, yh)
    mid = E.add(E.add(hi(ll), lo(lh)), lo(hl))  # < 3 * 2**half: no overflow
    out = E.add(E.add(hh, hi(lh)), E.add(hi(hl), hi(mid)))
    if np.dtype(x.dtype).kind == "i":  # signed: subtract y where x < 0 and x where y < 0 (mod 2**bits)
        zero = _const(0, ut)
        out = E.sub(out, E.select(E.lt(x, E.convert_element_type(0, x.dtype)), uy, zero))
        out = E.sub(out, E.select(E.lt(y, E.convert_element_type(0, y.dtype)), ux, zero))
        return E.bitcast_convert_type(out, x.dtype)
    return out


def clz(x):
    """The number of leading zero bits of each element (integer dtypes)."""
    (x,) = R.operands(x)
    u = _as_unsigned(x)
    ut = np.dtype(u.dtype)
    shift = 1
    while shift < ut.itemsize * 8:  # smear the highest set bit into every lower one
        u = E.bitwise_or(u, E.shift_right_logical(u, _const(shift, ut)))
        shift *= 2
    count = E.sub(_const(ut.itemsize * 8, ut), E.population_count(u))
    return count if np.dtype(x.dtype).kind == "u" else E.convert_element_type(count, x.dtype)


def _mantissa_bits(dt):
    try:
        import ml_dtypes  # its finfo knows bfloat16 too

        return int(ml_dtypes.finfo(dt).nmant)
    except ImportError:
        return int(np.finfo(dt).nmant)


def reduce_precision(operand, exponent_bits, mantissa_bits):
    """Each float rounded (to nearest, ties to even) to a float format with `exponent_bits` and
    `mantissa_bits`, as XLA's ReducePrecision: overflow to inf, underflow to (signed) zero, NaN
    kept. Its derivative passes tangents through unchanged (JAX's rounds the tangent too)."""
    (x,) = R.operands(operand)
    dt = np.dtype(x.dtype)
    if dt.kind != "f":
        raise TypeError(f"reduce_precision requires a floating-point operand, got {dt.name}.")
    exponent_bits, mantissa_bits = int(exponent_bits), int(mantissa_bits)
    if exponent_bits < 1 or mantissa_bits < 0:
        raise ValueError(f"reduce_precision: exponent_bits must be >= 1 and mantissa_bits >= 0, got "
                         f"{exponent_bits} and {mantissa_bits}.")
    src_mant, nbits = _mantissa_bits(dt), dt.itemsize * 8
    src_exp = nbits - 1 - src_mant
    ut = _UNSIGNED[dt.itemsize]
    c = lambda v: _const(v, ut)  # noqa: E731
    bits = E.bitcast_convert_type(x, ut)
    if mantissa_bits < src_mant:
        drop = src_mant - mantissa_bits
        last = 1 << drop
        last_bit = E.shift_right_logical(E.bitwise_and(bits, c(last)), c(drop))
        bias = E.add(last_bit, c((last >> 1) - 1))
        bits = E.bitwise_and(E.add(bits, bias), c(~(last - 1) & ((1 << nbits) - 1)))
    if exponent_bits < src_exp:
        sign_mask, exp_mask = 1 << (nbits - 1), ((1 << src_exp) - 1) << src_mant
        exp_bias = (1 << (src_exp - 1)) - 1
        reduced_bias = (1 << (exponent_bits - 1)) - 1
        exponent = E.bitwise_and(bits, c(exp_mask))
        overflows = E.gt(exponent, c((exp_bias + reduced_bias) << src_mant))
        underflows = E.le(exponent, c((exp_bias - reduced_bias) << src_mant))
        signed_zero = E.bitwise_and(bits, c(sign_mask))
        signed_inf = E.bitwise_or(signed_zero, c(exp_mask))
        bits = E.select(overflows, signed_inf, E.select(underflows, signed_zero, bits))
    rounded = E.bitcast_convert_type(bits, dt)
    if mantissa_bits < src_mant:
        rounded = E.select(E.ne(x, x), x, rounded)  # rounding the mantissa may not turn NaN into inf
    # straight-through derivative: `rounded - (sg(x) - x)` is `rounded` exactly (sg(x) - x is +0
    # for finite x; -0 stays -0) and has derivative 1
    from .stop_gradient import stop_gradient

    finite = E.is_finite(x)
    delta = E.select(finite, E.sub(stop_gradient(x), x), E.convert_element_type(0, dt))
    return E.sub(rounded, delta)


# --- indexing ---------------------------------------------------------------------------------


def index_take(src, idxs, axes):
    """`src` at the coordinates `idxs[j]` (one 1-D index array per axis in `axes`, wrapped
    modulo the axis size): result shape (len(idxs[0]),) + the other dimensions of src."""
    (x,) = R.operands(src)
    axes = tuple(int(a) for a in axes)
    cols = [R.operands(i)[0] for i in idxs]
    if len(cols) != len(axes):
        raise ValueError(f"index_take: {len(cols)} index arrays for {len(axes)} axes.")
    cols = [_wrapped(i, x.shape[a]) for i, a in zip(cols, axes)]
    cols = [E.convert_element_type(i, np.int32) for i in cols]
    indices = S.concatenate([S.expand_dims(i, (i.ndim,)) for i in cols], cols[0].ndim)
    return IX.gather(x, indices, axes)


def _wrapped(i, n):
    """i modulo n in [0, n) (lax.rem truncates toward zero)."""
    n = E.convert_element_type(n, i.dtype)
    return E.rem(E.add(E.rem(i, n), n), n)


# --- top k --------------------------------------------------------------------------------


def _along_last(x, dimension):
    """(to_last, back): functions moving axis `dimension` of x's rank to the end and back."""
    dim = R.canonical_axes(dimension, x.ndim, "reduction_dimension")[0]
    if dim == x.ndim - 1:
        return (lambda v: v), (lambda v: v)
    perm = tuple(i for i in range(x.ndim) if i != dim) + (dim,)
    back = tuple(int(i) for i in np.argsort(perm))
    return (lambda v: S.transpose(v, perm)), (lambda v: S.transpose(v, back))


def approx_max_k(operand, k, reduction_dimension=-1, recall_target=0.95, reduction_input_size_override=-1,
                 aggregate_to_topk=True):
    """The `k` largest values along `reduction_dimension` and their indices: exact here (as JAX
    computes it on CPU); `recall_target` and the other tuning arguments are accepted."""
    (x,) = R.operands(operand)
    to_last, back = _along_last(x, reduction_dimension)
    vals, idx = SO.top_k(to_last(x), k)
    return back(vals), back(idx)


def approx_min_k(operand, k, reduction_dimension=-1, recall_target=0.95, reduction_input_size_override=-1,
                 aggregate_to_topk=True):
    """The `k` smallest values along `reduction_dimension` and their indices (exact; ties: lower
    index first)."""
    (x,) = R.operands(operand)
    to_last, back = _along_last(x, reduction_dimension)
    xt = to_last(x)
    last = xt.ndim - 1
    n = xt.shape[last]
    k = int(k)
    if not 0 <= k <= n:
        raise ValueError(f"approx_min_k: k={k} must be between 0 and the reduced dimension's size {n}.")
    idx = S.broadcasted_iota(np.int32, xt.shape, last)
    vals, inds = SO.sort((xt, idx), last, True, 1)
    return back(S.slice_in_dim(vals, 0, k, 1, last)), back(S.slice_in_dim(inds, 0, k, 1, last))


# --- convolution patches ------------------------------------------------------------------------


def _moveaxis(x, src, dst):
    perm = [i for i in range(x.ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        perm.insert(d, s)
    return S.transpose(x, tuple(perm))


def conv_general_dilated_patches(lhs, filter_shape, window_strides, padding, lhs_dilation=None, rhs_dilation=None,
                                 dimension_numbers=None, precision=None, preferred_element_type=None):
    """The patches `conv_general_dilated` would multiply with a filter of spatial shape
    `filter_shape`, flattened into the output's feature dimension (size prod(filter_shape) *
    channels), as JAX's (a grouped convolution with one-hot filters)."""
    (x,) = R.operands(lhs)
    filter_shape = tuple(int(d) for d in filter_shape)
    dn = CV.conv_dimension_numbers(x.shape, (1, 1) + filter_shape, dimension_numbers)
    lhs_spec, rhs_spec, _ = dn
    spatial = math.prod(filter_shape)
    channels = x.shape[lhs_spec[1]]
    eye = E.convert_element_type(np.eye(spatial), x.dtype)
    rhs = S.broadcast_in_dim(eye, (channels, spatial, spatial), (1, 2))
    rhs = S.reshape(rhs, (channels * spatial, 1) + filter_shape)
    rhs = _moveaxis(rhs, (0, 1), (rhs_spec[0], rhs_spec[1]))
    return CV.conv_general_dilated(x, rhs, window_strides, padding, lhs_dilation, rhs_dilation, dn,
                                   feature_group_count=channels, preferred_element_type=preferred_element_type)


def conv_general_dilated_local(lhs, rhs, window_strides, padding, filter_shape, lhs_dilation=None, rhs_dilation=None,
                               dimension_numbers=None, precision=None):
    """An unshared convolution: a different filter at each output position (`rhs` spatial
    dimensions are the output's), as JAX's: patches contracted with `rhs`."""
    x, w = R.operands(lhs, rhs)
    patches = conv_general_dilated_patches(x, filter_shape, window_strides, padding, lhs_dilation, rhs_dilation,
                                           dimension_numbers)
    _, rhs_spec, out_spec = CV.conv_dimension_numbers(x.shape, (1, 1) + tuple(filter_shape), dimension_numbers)
    lhs_b, rhs_b = list(out_spec[2:]), list(rhs_spec[2:])
    rhs_b = [rhs_b[i] for i in sorted(range(len(rhs_b)), key=lambda k: lhs_b[k])]
    lhs_b = sorted(lhs_b)
    dn = (((out_spec[1],), (rhs_spec[1],)), (tuple(lhs_b), tuple(rhs_b)))
    out = C.dot_general(patches, w, dn)
    return _moveaxis(out, (out.ndim - 2, out.ndim - 1), (out_spec[0], out_spec[1]))


__all__ = [
    "ConvDimensionNumbers", "ConvGeneralDilatedDimensionNumbers", "DotDimensionNumbers", "GatherDimensionNumbers",
    "GatherScatterMode", "PrecisionLike", "ScatterDimensionNumbers", "stack", "unstack", "tile", "empty",
    "broadcast_like", "axis_size", "mulhi", "clz", "reduce_precision", "index_take", "approx_max_k", "approx_min_k",
    "conv_general_dilated_patches", "conv_general_dilated_local", "and_p", "or_p", "not_p",
]
