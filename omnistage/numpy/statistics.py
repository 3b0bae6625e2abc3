"""Order statistics of `omnistage.numpy`: quantile, percentile, nanquantile, nanpercentile,
nanmedian (NumPy's signatures, JAX's dtype rules).

A quantile is a sort along the reduced axes (flattened into one, as `median` does in
`reductions`), a fractional position `q * (n - 1)` computed as staged arithmetic (so `q` may
be traced, and differentiated through), one or two gathers of the order statistics around
that position, and NumPy's interpolation between them. Integer input gives the default
float; the positions are computed in the promotion of the input's and `q`'s float types
(a Python `q` follows the input) and the result has the input's float type.

The methods 'linear', 'lower', 'higher', 'midpoint' and 'nearest' follow NumPy exactly,
including 'nearest', which rounds a position halfway between two samples to the even one as
NumPy does (JAX rounds it down). 'inverted_cdf' and `weights=` (recent JAX has them) are not
implemented. Concrete `q` outside [0, 1] (percentile: [0, 100]) raises as in NumPy; a traced
one cannot be checked and is clamped to the range, as in JAX. Beyond JAX, as in NumPy: `q` may
have any rank, and `overwrite_input=True` is accepted (and ignored).

Imports core and lax only (and sibling `omnistage.numpy` modules).
"""
import numpy as np

from ..core import dtypes
from ..core.array import Array
from ..core.tracer import Tracer
from .. import lax
from ..lax import _rules
from ._promote import check_arraylike, promote_dtypes_inexact
from .reductions import _to_last_axis

_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")
_INDEX_DTYPE = np.dtype("int32")


def _const(value, dt):
    return Array(np.asarray(value, dtype=dt))


def _check_method(name, method):
    if method not in _METHODS:
        raise ValueError(
            f"{name}: method={method!r} is not supported; use one of "
            + ", ".join(repr(m) for m in _METHODS)
            + " (NumPy's other Hyndman-Fan methods are not implemented)."
        )


def _check_unsupported(name, out):
    if out is not None:
        raise ValueError(
            f"omnistage.numpy.{name} does not support the out argument (arrays are immutable); "
            "use the returned array instead."
        )


def _check_call(name, a, q, out, upper):
    """The checks every quantile function makes of its arguments (`overwrite_input` is only a
    hint: arrays are immutable, so there is nothing to overwrite)."""
    check_arraylike(name, a, q)
    _check_unsupported(name, out)
    _check_q_range(name, q, upper)


def _check_q_range(name, q, upper):
    """NumPy's range check, for a q whose value is known while tracing."""
    if isinstance(q, Tracer):
        return
    values = np.asarray(q)
    if values.dtype.kind == "c":
        raise TypeError(f"{name}: q must be real, got dtype {values.dtype.name}")
    with np.errstate(invalid="ignore"):
        inside = np.all(values >= 0) and np.all(values <= upper)
    if not inside:
        kind = "Quantiles" if upper == 1 else "Percentiles"
        raise ValueError(f"{name}: {kind} must be in the range [0, {upper}], got q={values!r}")


def _inexact_operand(name, a):
    x = _rules.to_operand(a)
    if dtypes.is_complex(x.dtype):
        raise ValueError(f"{name} does not support complex input, as the operation is poorly defined.")
    if not dtypes.is_inexact(x.dtype):
        x = lax.convert_element_type(x, dtypes.canonicalize_dtype(dtypes.to_inexact(x.dtype)))
    return x


def _lerp(a, b, t):
    """NumPy's `_lerp`: exact at both ends (each half interpolates from its nearer sample),
    and `a` itself where t == 0, so an infinite sample is returned as is instead of as
    inf - inf = NaN."""
    d = lax.sub(b, a)
    half = _const(0.5, t.dtype)
    one = _const(1, t.dtype)
    near = lax.select(lax.lt(t, half), lax.add(a, lax.mul(d, t)), lax.sub(b, lax.mul(d, lax.sub(one, t))))
    return lax.select(lax.eq(t, _const(0, t.dtype)), a, near)


def _order_statistics(ordered, index, q_size):
    """`ordered[..., index]` in the layout (q,) + batch. `index` holds integral floats in
    range, shape (q,) (one position for every slice) or (q,) + batch (one per slice)."""
    i = lax.convert_element_type(index, _INDEX_DTYPE)
    last = ordered.ndim - 1
    if i.ndim == 1:
        return lax.gather(ordered, lax.reshape(i, (q_size, 1)), axes=(last,))
    # Per-slice positions: address every batch dim with its own coordinate.
    coordinates = [lax.broadcasted_iota(_INDEX_DTYPE, i.shape, d + 1) for d in range(last)] + [i]
    stacked = lax.concatenate([lax.reshape(c, c.shape + (1,)) for c in coordinates], i.ndim)
    return lax.gather(ordered, stacked, axes=tuple(range(last + 1)))


def _positions(flat, q, ignore_nan):
    """The fractional positions q * (count - 1) in each sorted slice of `flat`, clamped into
    it: shape (q,) when every slice counts all its n samples, (q,) + batch when NaNs are
    skipped and the counts differ."""
    last = flat.ndim - 1
    zero = _const(0, q.dtype)
    if not ignore_nan:
        top = _const(flat.shape[last] - 1, q.dtype)
        return lax.clamp(zero, lax.mul(q, top), top)
    full = q.shape + flat.shape[:-1]
    counts = lax.reduce_sum(lax.convert_element_type(lax.eq(flat, flat), q.dtype), (last,))
    top = lax.broadcast_in_dim(lax.sub(counts, _const(1, q.dtype)), full, tuple(range(1, len(full))))
    pos = lax.mul(lax.broadcast_in_dim(q, full, (0,)), top)
    # An all-NaN slice has top == -1: position 0 then reads a NaN, the answer.
    return lax.max(lax.min(pos, top), zero)


def _pick(ordered, pos, method, dtype):
    """The quantile at positions `pos` of the sorted slices by `method` (NumPy's definitions),
    in `ordered`'s dtype, laid out (q,) + batch; interpolation happens in `dtype`."""
    q_size = pos.shape[0]
    if method == "nearest":
        return _order_statistics(ordered, lax.round(pos, lax.RoundingMethod.TO_NEAREST_EVEN), q_size)
    if method == "lower":
        return _order_statistics(ordered, lax.floor(pos), q_size)
    if method == "higher":
        return _order_statistics(ordered, lax.ceil(pos), q_size)
    lo, hi = lax.floor(pos), lax.ceil(pos)
    if method == "linear":
        t = lax.sub(pos, lo)
    else:  # midpoint
        t = lax.select(lax.lt(lo, hi), _const(0.5, dtype), _const(0, dtype))
    full = (q_size,) + ordered.shape[:-1]
    if t.shape != full:
        t = lax.broadcast_in_dim(t, full, (0,))
    below = lax.convert_element_type(_order_statistics(ordered, lo, q_size), dtype)
    above = lax.convert_element_type(_order_statistics(ordered, hi, q_size), dtype)
    return lax.convert_element_type(_lerp(below, above, t), ordered.dtype)


def _quantile(name, a, q, axis, method, keepdims, ignore_nan):
    _check_method(name, method)
    x = _inexact_operand(name, a)
    (q,) = promote_dtypes_inexact(q)
    if dtypes.is_complex(q.dtype):
        raise TypeError(f"{name}: q must be real, got dtype {q.dtype.name}")
    # Positions in the common float type; a weakly typed (Python) q follows the data.
    q = lax.convert_element_type(q, dtypes.result_type(x, q))
    flat, axes = _to_last_axis(x, axis)
    if flat.shape[-1] == 0:
        raise IndexError(
            f"{name} of an empty array slice is undefined: the reduced axes of shape {x.shape} hold no elements."
        )
    qf = lax.reshape(q, (q.size,))
    ordered = lax.sort(flat, flat.ndim - 1)  # NaNs (of either sign) sort last
    result = _pick(ordered, _positions(flat, qf, ignore_nan), method, q.dtype)
    if not ignore_nan:
        full = result.shape
        has_nan = lax.reduce_or(lax.ne(flat, flat), (flat.ndim - 1,))
        has_nan = lax.broadcast_in_dim(has_nan, full, tuple(range(1, len(full))))
        result = lax.select(has_nan, lax.broadcast_in_dim(_const(np.nan, x.dtype), full, ()), result)
    kept = tuple(1 if i in axes else d for i, d in enumerate(x.shape)) if keepdims else flat.shape[:-1]
    return lax.reshape(result, q.shape + kept)


def _percent(q):
    (q,) = promote_dtypes_inexact(q)
    return lax.div(q, Array(np.asarray(100, q.dtype), q.weak_type))


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False):
    """The `q`-th quantiles (q in [0, 1], any shape) of `a` over `axis` (None, int or
    tuple); result shape q.shape + the remaining dims. NaN where a slice holds a NaN."""
    _check_call("quantile", a, q, out, 1)
    return _quantile("quantile", a, q, axis, method, keepdims, ignore_nan=False)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False):
    """`quantile` with q given in percent (q in [0, 100])."""
    _check_call("percentile", a, q, out, 100)
    return _quantile("percentile", a, _percent(q), axis, method, keepdims, ignore_nan=False)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False):
    """`quantile` ignoring NaNs (NaN only for a slice that is all NaN)."""
    _check_call("nanquantile", a, q, out, 1)
    return _quantile("nanquantile", a, q, axis, method, keepdims, ignore_nan=True)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False):
    """`percentile` ignoring NaNs (NaN only for a slice that is all NaN)."""
    _check_call("nanpercentile", a, q, out, 100)
    return _quantile("nanpercentile", a, _percent(q), axis, method, keepdims, ignore_nan=True)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """`median` ignoring NaNs (NaN only for a slice that is all NaN)."""
    check_arraylike("nanmedian", a)
    _check_unsupported("nanmedian", out)
    return _quantile("nanmedian", a, 0.5, axis, "midpoint", keepdims, ignore_nan=True)


__all__ = ["quantile", "percentile", "nanquantile", "nanpercentile", "nanmedian"]
