"""Reductions and cumulative ops of `omnistage.numpy`: sum, prod, max, min, all, any, mean,
var, std, argmax, argmin, ptp, median, average, count_nonzero, the nan* variants, cumsum,
cumprod, cumulative_sum/prod, diff, ediff1d.

NumPy's signatures (axis as None/int/tuple/negative, keepdims, dtype, initial, where) with
JAX's dtype rules:
- sum/prod/cumsum/cumprod promote bool and narrow integers to the default int (uint: the
  default uint); `dtype=` overrides; float16/bfloat16 accumulate in float32.
- mean/var/std of bool or integers give the default float; var/std of complex are real.
- max/min/argmax/... keep the input dtype; argmax/argmin/count_nonzero give the default int.
Every step is a lax primitive; axes and counts are static Python values.
"""
import builtins
import math

import numpy as np

from ..core import dtypes
from ..core.array import Array
from .. import lax
from ..lax import _rules
from .eager_programs import wrap_module_functions
from ._promote import check_arraylike, broadcast_to_shape, promote_dtypes_inexact
from .shapes import bool_and, bool_not, bool_or, canonicalize_axes, canonicalize_axis, ravel, concatenate


# --- helpers -----------------------------------------------------------------------------


def _operand(name, a):
    check_arraylike(name, a)
    return _rules.to_operand(a)


def _dtype_arg(dtype):
    from .creation import _dtype_arg as creation_dtype_arg

    return creation_dtype_arg(dtype)


def _axes(x, axis):
    return tuple(sorted(canonicalize_axes(axis, x.ndim)))


def _const(value, dt):
    with np.errstate(all="ignore"):
        return Array(np.asarray(value).astype(dt))


def _full(value, dt, shape):
    """A staged constant array (a 0-d one too: omnistaging keeps it in the program)."""
    return lax.shapes.broadcast_in_dim_p.bind(_const(value, dt), shape=tuple(shape), broadcast_dimensions=())


def _keep(out, x_shape, axes, keepdims):
    if not keepdims:
        return out
    return lax.reshape(out, tuple(1 if i in axes else d for i, d in enumerate(x_shape)))


def _count(shape, axes):
    return math.prod(shape[i] for i in axes)


def _isnan(x):
    return lax.ne(x, x)


def _promote_integer_dtype(dt):
    """JAX's accumulation dtype: bool and narrow ints widen to the default (u)int."""
    dt = np.dtype(dt)
    if dt.kind == "b":
        return dtypes.default_int_dtype()
    if dt.kind == "i" and dt.itemsize < dtypes.default_int_dtype().itemsize:
        return dtypes.default_int_dtype()
    if dt.kind == "u" and dt.itemsize < dtypes.default_uint_dtype().itemsize:
        return dtypes.default_uint_dtype()
    return dt


def _upcast_f16(dt):
    """float16/bfloat16 accumulate in float32 (as JAX does), then convert back."""
    dt = np.dtype(dt)
    return np.dtype("float32") if dtypes.is_float(dt) and dt.itemsize < 4 else dt


def _where_mask(where, shape):
    w = _rules.to_operand(where)
    if w.dtype != np.bool_:
        w = lax.ne(w, _const(0, w.dtype))
    return broadcast_to_shape(w, shape)


def _mask_fill(x, where, fill):
    """`x` with entries outside the `where` mask replaced by the 0-d operand `fill`."""
    if where is None:
        return x
    return lax.select(_where_mask(where, x.shape), x, lax.broadcast_in_dim(fill, x.shape, ()) if x.shape else fill)


# --- the monoid reductions: sum, prod, max, min, all, any --------------------------------


class _Monoid:
    """How one reduction reduces (`reduce`), combines with `initial` (`combine`) and fills
    masked entries (`identity`, None when it has none)."""

    def __init__(self, name, reduce, combine, identity, bool_reduce=None, bool_combine=None):
        self.name, self.reduce, self.combine, self.identity = name, reduce, combine, identity
        self.bool_reduce, self.bool_combine = bool_reduce or reduce, bool_combine or combine


_SUM = _Monoid("sum", lax.reduce_sum, lax.add, lambda dt: 0, lax.reduce_or, bool_or)
_PROD = _Monoid("prod", lax.reduce_prod, lax.mul, lambda dt: 1, lax.reduce_and, bool_and)
_MAX = _Monoid("max", lax.reduce_max, lax.max, None)
_MIN = _Monoid("min", lax.reduce_min, lax.min, None)
_ALL = _Monoid("all", lax.reduce_and, bool_and, lambda dt: True)
_ANY = _Monoid("any", lax.reduce_or, bool_or, lambda dt: False)


def _reduce(monoid, x, axis, keepdims, initial, where, out_dtype=None):
    """Reduce `x` (already of its computation dtype) over `axis`, then convert to out_dtype."""
    axes = _axes(x, axis)
    is_bool = x.dtype == np.bool_
    reduce = monoid.bool_reduce if is_bool else monoid.reduce
    combine = monoid.bool_combine if is_bool else monoid.combine
    if monoid.identity is None and initial is None:
        if where is not None:
            raise ValueError(
                f"reduction operation {monoid.name} does not have an identity, so to use a where "
                f"mask one has to specify 'initial'"
            )
        if builtins.any(x.shape[i] == 0 for i in axes):
            raise ValueError(
                f"zero-size array to reduction operation {monoid.name} which has no identity "
                f"(shape {x.shape}, axis {axis}); pass initial= to reduce empty arrays"
            )
    if where is not None:
        fill = monoid.identity(x.dtype) if monoid.identity is not None else initial
        x = _mask_fill(x, where, _const(fill, x.dtype))
    res = reduce(x, axes)
    if initial is not None:
        if np.ndim(initial) != 0:
            raise ValueError(f"{monoid.name}: initial must be a scalar, got shape {np.shape(initial)}")
        res = combine(res, _convert_initial(initial, res.dtype))
    if out_dtype is not None and res.dtype != out_dtype:
        res = lax.convert_element_type(res, out_dtype)
    return _keep(res, x.shape, axes, keepdims)


def _convert_initial(initial, dt):
    if isinstance(initial, (Array,)) or hasattr(initial, "aval"):
        return lax.convert_element_type(initial, dt)
    return _const(initial, dt)


def _accumulating(name, monoid):
    def fn(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None, promote_integers=True):
        x = _operand(name, a)
        if dtype is not None:
            result = _dtype_arg(dtype)
        elif promote_integers:
            result = _promote_integer_dtype(x.dtype)
        else:
            result = x.dtype
        compute = _upcast_f16(result)
        if compute == np.bool_ and x.dtype != np.bool_:
            x = lax.ne(x, _const(0, x.dtype))
        x = lax.convert_element_type(x, compute)
        return _reduce(monoid, x, axis, keepdims, initial, where, result)

    fn.__name__ = name
    fn.__doc__ = f"`numpy.{name}` with JAX's dtype rules (narrow ints and bool accumulate in the default int)."
    return fn


sum = _accumulating("sum", _SUM)  # noqa: A001 - NumPy's name
prod = _accumulating("prod", _PROD)


def _extremum(name, monoid):
    def fn(a, axis=None, out=None, keepdims=False, initial=None, where=None):
        x = _operand(name, a)
        return _reduce(monoid, x, axis, keepdims, initial, where)

    fn.__name__ = name
    fn.__doc__ = f"`numpy.{name}` (keeps the input dtype; NaN propagates)."
    return fn


max = _extremum("max", _MAX)  # noqa: A001
min = _extremum("min", _MIN)  # noqa: A001
amax, amin = max, min


def _boolean(name, monoid):
    def fn(a, axis=None, out=None, keepdims=False, *, where=None):
        x = _operand(name, a)
        if x.dtype != np.bool_:
            x = lax.ne(x, _const(0, x.dtype))
        return _reduce(monoid, x, axis, keepdims, None, where)

    fn.__name__ = name
    fn.__doc__ = f"`numpy.{name}`: a boolean reduction of `a != 0`."
    return fn


all = _boolean("all", _ALL)  # noqa: A001
any = _boolean("any", _ANY)  # noqa: A001


def ptp(a, axis=None, out=None, keepdims=False):
    """max - min over `axis`."""
    x = _operand("ptp", a)
    return lax.sub(max(x, axis, keepdims=keepdims), min(x, axis, keepdims=keepdims))


def count_nonzero(a, axis=None, keepdims=False):
    x = _operand("count_nonzero", a)
    return sum(lax.ne(x, _const(0, x.dtype)), axis, dtype=dtypes.default_int_dtype(), keepdims=keepdims)


# --- moments -----------------------------------------------------------------------------


def _mean_dtypes(x_dtype, dtype):
    result = dtypes.to_inexact(x_dtype) if dtype is None else _dtype_arg(dtype)
    result = dtypes.canonicalize_dtype(result)
    compute = _upcast_f16(dtypes.canonicalize_dtype(dtypes.to_inexact(result)))
    return result, compute


def _normalizer(x_shape, axes, where, dt):
    """The number of reduced entries (counting the `where` mask), as a 0-d or keepdims-less array."""
    if where is None:
        return _const(_count(x_shape, axes), dt)
    mask = _where_mask(where, x_shape)
    return lax.reduce_sum(lax.convert_element_type(mask, dt), axes)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """Arithmetic mean (integers and bool give the default float)."""
    x = _operand("mean", a)
    result, compute = _mean_dtypes(x.dtype, dtype)
    axes = _axes(x, axis)
    total = sum(lax.convert_element_type(x, compute), axes, dtype=compute, where=where)
    res = lax.div(total, _normalizer(x.shape, axes, where, compute))
    return _keep(lax.convert_element_type(res, result), x.shape, axes, keepdims)


def _var_dtypes(x_dtype, dtype):
    if dtype is not None:
        result = _dtype_arg(dtype)
        if dtypes.is_complex(x_dtype) and not dtypes.is_complex(result):
            raise ValueError("jnp.var does not support a real dtype= for complex input (as JAX)")
        return result, _upcast_f16(result)
    if not dtypes.is_inexact(x_dtype):
        dt = dtypes.default_float_dtype()
        return dt, dt
    return dtypes.real_dtype(x_dtype), _upcast_f16(x_dtype)


def _abs2(x):
    if dtypes.is_complex(x.dtype):
        re, im = lax.real(x), lax.imag(x)
        return lax.add(lax.mul(re, re), lax.mul(im, im))
    return lax.mul(x, x)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, correction=None):
    """Variance: sum(|x - mean|^2) / (N - ddof); complex input gives a real result."""
    x = _operand("var", a)
    if correction is not None:
        if ddof != 0:
            raise ValueError("var: ddof and correction can't be provided simultaneously.")
        ddof = correction
    result, compute = _var_dtypes(x.dtype, dtype)
    axes = _axes(x, axis)
    xc = lax.convert_element_type(x, compute)
    centered = _abs2(lax.sub(xc, broadcast_to_shape(mean(xc, axes, dtype=compute, keepdims=True, where=where), xc.shape)))
    sq_total = sum(centered, axes, where=where)
    norm = _normalizer(x.shape, axes, where, sq_total.dtype)
    res = lax.div(sq_total, lax.sub(norm, _const(ddof, sq_total.dtype)))
    return _keep(lax.convert_element_type(res, result), x.shape, axes, keepdims)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, correction=None):
    """Square root of `var`."""
    return lax.sqrt(var(a, axis, dtype, out, ddof, keepdims, where=where, correction=correction))


def average(a, axis=None, weights=None, returned=False, keepdims=False):
    """Weighted mean; with `returned`, also the sum of weights (broadcast like the result)."""
    x = _operand("average", a)
    if weights is None:
        avg = mean(x, axis, keepdims=keepdims)
        wsum = _full(_count(x.shape, _axes(x, axis)), avg.dtype, avg.shape)
        return (avg, wsum) if returned else avg
    x, w = promote_dtypes_inexact(x, weights)
    x, w = _rules.to_operand(x), _rules.to_operand(w)
    axes = _axes(x, axis)
    if w.shape != x.shape:
        w = _weights_along(w, x, axis)
    wsum = sum(w, axes, keepdims=keepdims)
    avg = lax.div(sum(lax.mul(x, w), axes, keepdims=keepdims), wsum)
    if returned:
        return avg, (wsum if wsum.shape == avg.shape else broadcast_to_shape(wsum, avg.shape))
    return avg


def _weights_along(w, x, axis):
    if axis is None:
        raise ValueError(f"average: axis must be specified when shapes of a {x.shape} and weights {w.shape} differ.")
    if not isinstance(axis, (int, np.integer)):
        raise ValueError("average: a single integer axis is required when weights are 1-d")
    ax = canonicalize_axis(axis, x.ndim)
    if w.ndim != 1:
        raise ValueError(f"average: 1D weights expected when shapes of a {x.shape} and weights {w.shape} differ.")
    if w.shape[0] != x.shape[ax]:
        raise ValueError(f"average: length of weights {w.shape[0]} differs from that of axis {ax} of a {x.shape}.")
    return lax.broadcast_in_dim(w, x.shape, (ax,))


# --- order statistics ---------------------------------------------------------------------


def _to_last_axis(x, axis):
    """Move the reduced axes of `x` to the end and flatten them into one."""
    axes = _axes(x, axis)
    rest = [i for i in range(x.ndim) if i not in axes]
    moved = lax.transpose(x, tuple(rest) + axes)
    return lax.reshape(moved, tuple(x.shape[i] for i in rest) + (_count(x.shape, axes),)), axes


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """Median over `axis` (mean of the two middle values for an even count; NaN if any NaN)."""
    x = _operand("median", a)
    if dtypes.is_complex(x.dtype):
        raise TypeError("median does not support complex input (as jnp.quantile)")
    x = lax.convert_element_type(x, dtypes.to_inexact(x.dtype)) if not dtypes.is_inexact(x.dtype) else x
    flat, axes = _to_last_axis(x, axis)
    n = flat.shape[-1]
    last = flat.ndim - 1
    if n == 0:
        res = _full(np.nan, x.dtype, flat.shape[:-1])
    else:
        ordered = lax.sort(flat, last)
        lo = lax.slice_in_dim(ordered, (n - 1) // 2, (n - 1) // 2 + 1, 1, last)
        hi = lax.slice_in_dim(ordered, n // 2, n // 2 + 1, 1, last)
        mid = lax.mul(lax.add(lo, hi), _const(0.5, x.dtype)) if n % 2 == 0 else lo
        mid = lax.reshape(mid, flat.shape[:-1])
        has_nan = lax.reduce_or(_isnan(flat), (last,))
        res = lax.select(has_nan, _full(np.nan, x.dtype, mid.shape), mid)
    return _keep(res, x.shape, axes, keepdims)


def _arg(name, prim_fn):
    def fn(a, axis=None, out=None, keepdims=None):
        x = _operand(name, a)
        shape = x.shape
        if axis is None:
            x, ax = ravel(x), 0
            axes = tuple(range(len(shape)))
        else:
            ax = canonicalize_axis(axis, x.ndim)
            axes = (ax,)
        if x.shape[ax] == 0:
            raise ValueError(f"attempt to get {name} of an empty sequence (shape {shape})")
        res = prim_fn(x, ax, dtypes.default_int_dtype())
        return _keep(res, shape, axes, bool(keepdims))

    fn.__name__ = name
    fn.__doc__ = f"`numpy.{name}` (first occurrence; NaN counts as the extreme; default-int indices)."
    return fn


argmax = _arg("argmax", lax.argmax)
argmin = _arg("argmin", lax.argmin)


# --- NaN-ignoring variants -----------------------------------------------------------------


def _nan_replaced(x, value):
    if not dtypes.is_inexact(x.dtype):
        return x
    return lax.select(_isnan(x), _full(value, x.dtype, x.shape), x)


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    x = _operand("nansum", a)
    return sum(_nan_replaced(x, 0), axis, dtype, keepdims=keepdims, initial=initial, where=where)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    x = _operand("nanprod", a)
    return prod(_nan_replaced(x, 1), axis, dtype, keepdims=keepdims, initial=initial, where=where)


def _nan_extremum(name, reducer, fill):
    def fn(a, axis=None, out=None, keepdims=False, initial=None, where=None):
        x = _operand(name, a)
        if not dtypes.is_inexact(x.dtype):
            return reducer(x, axis, keepdims=keepdims, initial=initial, where=where)
        res = reducer(_nan_replaced(x, fill), axis, keepdims=keepdims, initial=initial, where=where)
        all_nan = all(_isnan(x), axis, keepdims=keepdims, where=where)
        return lax.select(all_nan, _full(np.nan, res.dtype, res.shape), res)

    fn.__name__ = name
    fn.__doc__ = f"`numpy.{name}`: NaNs ignored; all-NaN slices give NaN."
    return fn


nanmax = _nan_extremum("nanmax", max, -np.inf)
nanmin = _nan_extremum("nanmin", min, np.inf)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    x = _operand("nanmean", a)
    if not dtypes.is_inexact(x.dtype):
        return mean(x, axis, dtype, keepdims=keepdims, where=where)
    result, compute = _mean_dtypes(x.dtype, dtype)
    axes = _axes(x, axis)
    valid = bool_not(_isnan(x))
    count = sum(valid, axes, dtype=compute, where=where)
    total = sum(lax.convert_element_type(_nan_replaced(x, 0), compute), axes, dtype=compute, where=where)
    return _keep(lax.convert_element_type(lax.div(total, count), result), x.shape, axes, keepdims)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, correction=None):
    """Variance ignoring NaNs; slices with no more than `ddof` valid entries give NaN."""
    x = _operand("nanvar", a)
    if correction is not None:
        ddof = correction
    result, compute = _var_dtypes(x.dtype, dtype)
    axes = _axes(x, axis)
    xc = lax.convert_element_type(x, compute)
    nan = _isnan(xc)
    centered = _abs2(lax.sub(xc, broadcast_to_shape(nanmean(xc, axes, keepdims=True, where=where), xc.shape)))
    centered = _nan_replaced(lax.select(nan, _full(0, centered.dtype, centered.shape), centered), 0)
    sq_total = sum(centered, axes, where=where)
    norm = lax.sub(sum(bool_not(nan), axes, dtype=sq_total.dtype, where=where), _const(ddof, sq_total.dtype))
    bad = lax.le(norm, _const(0, norm.dtype))
    res = lax.div(sq_total, lax.select(bad, _full(1, norm.dtype, norm.shape), norm))
    res = lax.select(bad, _full(np.nan, res.dtype, res.shape), res)
    return _keep(lax.convert_element_type(res, result), x.shape, axes, keepdims)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, correction=None):
    return lax.sqrt(nanvar(a, axis, dtype, out, ddof, keepdims, where=where, correction=correction))


def _nan_arg(name, arg_fn, fill):
    def fn(a, axis=None, out=None, keepdims=None):
        x = _operand(name, a)
        if not dtypes.is_inexact(x.dtype):
            return arg_fn(x, axis, keepdims=keepdims)
        res = arg_fn(_nan_replaced(x, fill), axis, keepdims=keepdims)
        all_nan = all(_isnan(x), axis, keepdims=bool(keepdims))
        return lax.select(all_nan, _full(-1, res.dtype, res.shape), res)

    fn.__name__ = name
    fn.__doc__ = f"`numpy.{name}`: NaNs ignored; all-NaN slices give -1 (as JAX)."
    return fn


nanargmax = _nan_arg("nanargmax", argmax, -np.inf)
nanargmin = _nan_arg("nanargmin", argmin, np.inf)


# --- cumulative ---------------------------------------------------------------------------


def _cumulative(name, lax_fn, nan_fill=None):
    def fn(a, axis=None, dtype=None, out=None):
        x = _operand(name, a)
        if axis is None or x.ndim == 0:
            x = ravel(x)
        ax = canonicalize_axis(0 if axis is None else axis, x.ndim)
        if nan_fill is not None:
            x = _nan_replaced(x, nan_fill)
        result = _promote_integer_dtype(x.dtype if dtype is None else _dtype_arg(dtype))
        if dtype is not None and _dtype_arg(dtype) == np.bool_ and x.dtype != np.bool_:
            x = lax.ne(x, _const(0, x.dtype))
        compute = _upcast_f16(result)
        res = lax_fn(lax.convert_element_type(x, compute), ax)
        final = _dtype_arg(dtype) if dtype is not None else result
        return lax.convert_element_type(res, final)

    fn.__name__ = name
    fn.__doc__ = f"`numpy.{name}` along `axis` (flattened when None), JAX's integer promotion."
    return fn


cumsum = _cumulative("cumsum", lax.cumsum)
cumprod = _cumulative("cumprod", lax.cumprod)
nancumsum = _cumulative("nancumsum", lax.cumsum, nan_fill=0)
nancumprod = _cumulative("nancumprod", lax.cumprod, nan_fill=1)


def _array_api_cumulative(name, np_fn, identity):
    def fn(x, /, *, axis=None, dtype=None, include_initial=False):
        a = _operand(name, x)
        if a.ndim == 0:
            raise ValueError(f"{name} does not support 0-d (scalar) input")
        if axis is None:
            if a.ndim > 1:
                raise ValueError(f"The array passed to {name} must be one-dimensional if axis is not specified (got shape {a.shape}).")
            axis = 0
        ax = canonicalize_axis(axis, a.ndim)
        res = np_fn(a, ax, dtype)
        if include_initial:
            shape = res.shape[:ax] + (1,) + res.shape[ax + 1:]
            res = lax.concatenate([_full(identity, res.dtype, shape), res], ax)
        return res

    fn.__name__ = name
    fn.__doc__ = f"Array API `{name}` (NumPy 2): `include_initial` prepends the identity."
    return fn


cumulative_sum = _array_api_cumulative("cumulative_sum", cumsum, 0)
cumulative_prod = _array_api_cumulative("cumulative_prod", cumprod, 1)


def _difference(x, ax):
    n = x.shape[ax]
    hi, lo = lax.slice_in_dim(x, 1, n, 1, ax), lax.slice_in_dim(x, 0, builtins.max(n - 1, 0), 1, ax)
    return lax.ne(hi, lo) if x.dtype == np.bool_ else lax.sub(hi, lo)


def _edge_block(value, x, ax):
    """`prepend`/`append` of diff: scalars broadcast to a size-1 slice along `ax`."""
    v = _rules.to_operand(value)
    if v.ndim == 0:
        return broadcast_to_shape(v, x.shape[:ax] + (1,) + x.shape[ax + 1:])
    return v


def diff(a, n=1, axis=-1, prepend=None, append=None):
    """n-th discrete difference along `axis` (bool: `!=`, as NumPy)."""
    x = _operand("diff", a)
    if n < 0:
        raise ValueError(f"diff: order must be non-negative but got {n}")
    if x.ndim == 0:
        raise ValueError(f"diff requires input that is at least one dimensional; got {a!r}")
    if n == 0:
        return x
    ax = canonicalize_axis(axis, x.ndim)
    if prepend is not None or append is not None:
        parts = ([_edge_block(prepend, x, ax)] if prepend is not None else []) + [x] + (
            [_edge_block(append, x, ax)] if append is not None else [])
        x = concatenate(parts, ax)
    for _ in range(n):
        x = _difference(x, ax)
    return x


def ediff1d(ary, to_end=None, to_begin=None):
    """Differences of the flattened array, with optional values before and after."""
    x = ravel(_operand("ediff1d", ary))
    parts = [_difference(x, 0)]
    if to_begin is not None:
        parts.insert(0, ravel(lax.convert_element_type(_rules.to_operand(to_begin), x.dtype)))
    if to_end is not None:
        parts.append(ravel(lax.convert_element_type(_rules.to_operand(to_end), x.dtype)))
    return lax.concatenate(parts, 0) if len(parts) > 1 else parts[0]


# Called eagerly, each is one cached program over its array operand (axis, dtype, keepdims
# and the like are static; a `where=` array or a list argument takes the op-by-op path).
wrap_module_functions(globals(), (
    "sum", "prod", "max", "min", "all", "any", "ptp", "count_nonzero", "mean", "var", "std",
    "median", "argmax", "argmin", "nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar",
    "nanstd", "nanargmax", "nanargmin", "cumsum", "cumprod", "nancumsum", "nancumprod",
    "cumulative_sum", "cumulative_prod", "diff",
), operands=1)
amax, amin = max, min

__all__ = [
    "sum", "prod", "max", "min", "amax", "amin", "all", "any", "ptp", "count_nonzero", "mean",
    "var", "std", "average", "median", "argmax", "argmin", "nansum", "nanprod", "nanmax",
    "nanmin", "nanmean", "nanvar", "nanstd", "nanargmax", "nanargmin", "cumsum", "cumprod",
    "nancumsum", "nancumprod", "cumulative_sum", "cumulative_prod", "diff", "ediff1d",
]
