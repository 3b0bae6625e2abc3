"""Array creation in `omnistage.numpy`: array/asarray (concrete data), and staged
constructors (zeros, ones, full, arange, eye, ...) that become `broadcast_in_dim`/`iota`
statements under a trace (omnistaging: nothing is folded at trace time). `device=` (the Array
API's keyword) is accepted and leaves the array on the host: a jitted function places its
operands on its own device."""
import builtins
import operator

import numpy as np

from ..core import dtypes
from ..core.array import Array
from ..core.tracer import Tracer
from .. import lax
from ..lax import _rules


def _dtype_arg(dtype):
    """A user dtype argument: Python types and `float` mean the default dtypes."""
    if dtype is None:
        return None
    if dtype is float:
        return dtypes.default_float_dtype()
    if dtype is int:
        return dtypes.default_int_dtype()
    if dtype is complex:
        return dtypes.default_complex_dtype()
    if dtype is bool:
        return np.dtype("bool")
    return dtypes.canonicalize_dtype(dtype)


def _contains_tracer(obj):
    if isinstance(obj, Tracer):
        return True
    if isinstance(obj, (list, tuple)):
        return any(_contains_tracer(o) for o in obj)
    return False


def array(object, dtype=None, copy=True, order="K", ndmin=0):
    """A new array from `object` (nested sequences may contain traced values)."""
    dt = _dtype_arg(dtype)
    if isinstance(object, (Array, Tracer)):
        # JAX keeps weak-typedness when no dtype is given
        out = object if dt is None else lax.convert_element_type(object, dt)
    elif isinstance(object, (list, tuple)) and _contains_tracer(object):
        from .shapes import stack

        out = stack([array(o) for o in object])
        if dt is not None:
            out = lax.convert_element_type(out, dt)
    else:
        if isinstance(object, (list, tuple)):
            object = _concrete_nested(object)
        value = np.asarray(object)
        if value.dtype == object_dtype:
            raise TypeError(f"omnistage.numpy.array: cannot make an array from {type(object).__name__} of mixed types")
        if dt is None:
            if isinstance(object, (bool, int, float, complex)) or (isinstance(object, (list, tuple)) and _all_python_scalars(object)):
                dt = _python_default(value.dtype)
            elif isinstance(object, list) and value.size:
                dt = _leaves_dtype(object)
            else:
                dt = dtypes.canonicalize_dtype(value.dtype)
        weak = dtype is None and isinstance(object, (int, float, complex)) and not isinstance(object, bool)
        with np.errstate(all="ignore"):
            out = Array(value.astype(dt), weak)
    if ndmin and out.ndim < ndmin:
        out = lax.reshape(out, (1,) * (ndmin - out.ndim) + out.shape)
    return out


object_dtype = np.dtype(object)


def _concrete_nested(obj):
    if isinstance(obj, (list, tuple)):
        return [_concrete_nested(o) for o in obj]
    if isinstance(obj, Array):
        return obj._value
    return obj


def _leaves_dtype(nested):
    """JAX's dtype of a nested list: the promotion of its leaves (Python scalars weak)."""
    leaves = []

    def walk(o):
        if isinstance(o, (list, tuple)):
            for e in o:
                walk(e)
        else:
            leaves.append(o)

    walk(nested)
    return dtypes.result_type(*leaves)


def _all_python_scalars(obj):
    if isinstance(obj, (list, tuple)):
        return all(_all_python_scalars(o) for o in obj)
    return isinstance(obj, (bool, int, float, complex))


def _python_default(npdt):
    kind = npdt.kind
    if kind == "b":
        return np.dtype("bool")
    if kind in "iu":
        return dtypes.default_int_dtype()
    if kind == "f":
        return dtypes.default_float_dtype()
    if kind == "c":
        return dtypes.default_complex_dtype()
    return dtypes.canonicalize_dtype(npdt)


def asarray(a, dtype=None, order=None, copy=None, *, device=None):
    """`a` as an array; arrays of the right dtype pass through unchanged."""
    if isinstance(a, (Array, Tracer)) and (dtype is None or _dtype_arg(dtype) == a.dtype):
        return a
    return array(a, dtype=dtype, copy=False)


def _shape_arg(shape):
    if isinstance(shape, (int, np.integer)) or (isinstance(shape, (Array, Tracer)) and shape.ndim == 0):
        shape = (shape,)
    try:
        return tuple(operator.index(d) for d in shape)
    except TypeError as e:
        if any(isinstance(d, Tracer) for d in shape):
            tracer = next(d for d in shape if isinstance(d, Tracer))
            raise tracer.concretization_error("an array shape must be static") from e
        raise TypeError(f"Shapes must be 1D sequences of concrete values of integer type, got {shape}.") from e


def full(shape, fill_value, dtype=None, *, device=None):
    """An array of `shape` filled with `fill_value` (staged as broadcast_in_dim)."""
    shape = _shape_arg(shape)
    dt = _dtype_arg(dtype)
    if isinstance(fill_value, (Array, Tracer)) or np.ndim(fill_value) != 0:
        fill = asarray(fill_value, dtype=dt)
        from ._promote import broadcast_to_shape

        return broadcast_to_shape(fill, shape)
    if dt is None:
        dt = dtypes.result_type(fill_value)
        if isinstance(fill_value, (bool, int, float, complex)):
            dt = _python_default(np.asarray(fill_value).dtype)
    with np.errstate(all="ignore"):
        scalar = Array(np.asarray(fill_value).astype(dt))
    return lax.broadcast_in_dim(scalar, shape, ()) if shape else _stage_scalar(scalar)


def _stage_scalar(scalar):
    # A 0-d constant is staged as a broadcast with shape (), so omnistaging keeps it visible.
    return lax.shapes.broadcast_in_dim_p.bind(scalar, shape=(), broadcast_dimensions=())


def zeros(shape, dtype=None, *, device=None):
    return full(shape, 0, _dtype_arg(dtype) or dtypes.default_float_dtype())


def ones(shape, dtype=None, *, device=None):
    return full(shape, 1, _dtype_arg(dtype) or dtypes.default_float_dtype())


def empty(shape, dtype=None, *, device=None):
    return zeros(shape, dtype)


def _like(a, dtype, shape):
    dt = _dtype_arg(dtype) or (a.dtype if hasattr(a, "dtype") else dtypes.result_type(a))
    return dt, (np.shape(a) if shape is None else shape)


def full_like(a, fill_value, dtype=None, shape=None, *, device=None):
    dt, shp = _like(a, dtype, shape)
    return full(shp, fill_value, dt)


def zeros_like(a, dtype=None, shape=None, *, device=None):
    dt, shp = _like(a, dtype, shape)
    return full(shp, 0, dt)


def ones_like(a, dtype=None, shape=None, *, device=None):
    dt, shp = _like(a, dtype, shape)
    return full(shp, 1, dt)


def empty_like(a, dtype=None, shape=None, *, device=None):
    return zeros_like(a, dtype, shape)


def _static_number(x, name):
    if isinstance(x, Tracer):
        raise x.concretization_error(
            f"jnp.arange argument {name!r} must be static (the output length depends on it); "
            f"use jnp.linspace for traced endpoints, or make it a static argument of jit"
        )
    if isinstance(x, Array):
        return x.item()
    if isinstance(x, np.ndarray):
        if x.ndim:
            raise ValueError(f"jnp.arange argument {name!r} must be a scalar, got shape {x.shape}")
        return x.item()
    return x


def _arange_dtype(start, stop, step, dtype):
    if dtype is not None:
        return _dtype_arg(dtype)
    return dtypes.canonicalize_dtype(dtypes.result_type(*[v for v in (start, stop, step) if v is not None]))


def arange(start, stop=None, step=None, dtype=None, *, device=None):
    """Evenly spaced values in [start, stop) with NumPy's length and values, JAX's dtypes.

    Unit-step ranges from 0 are staged as `iota`; other ranges as iota * delta + start
    computed in the result dtype, which is how NumPy fills them (so values agree bitwise)."""
    start = _static_number(start, "start")
    stop = None if stop is None else _static_number(stop, "stop")
    step = None if step is None else _static_number(step, "step")
    dt = _arange_dtype(start, stop, step, dtype)
    if stop is None:
        start, stop = 0, start
    step = 1 if step is None else step
    if step == 0:
        raise ValueError("arange: step must be nonzero (got step=0)")
    if any(isinstance(v, complex) for v in (start, stop, step)) or dt.kind == "c":
        return Array(np.arange(start, stop, step).astype(dt))
    n = builtins.max(0, int(np.ceil((stop - start) / step)))
    first = np.asarray(start).astype(dt)
    delta = (np.asarray(start + step).astype(dt) - first).astype(dt) if dt != np.bool_ else None
    if dt == np.bool_:
        return Array(np.arange(start, stop, step, dtype=bool))
    out = lax.iota(dt, n)
    if delta != 1:
        out = lax.mul(out, Array(delta))
    if first != 0:
        out = lax.add(out, Array(first))
    return out


def _endpoints(start, stop, dtype):
    """(result dtype, start, stop in the inexact compute dtype broadcast together, their shape)."""
    from ._promote import broadcast_to_shape

    dt = _dtype_arg(dtype) or dtypes.canonicalize_dtype(dtypes.to_inexact(dtypes.result_type(start, stop)))
    compute = dtypes.canonicalize_dtype(dtypes.to_inexact(dt))
    a = lax.convert_element_type(_rules.to_operand(start), compute)
    b = lax.convert_element_type(_rules.to_operand(stop), compute)
    bounds = lax.broadcast_shapes(a.shape, b.shape)
    return dt, broadcast_to_shape(a, bounds), broadcast_to_shape(b, bounds), bounds


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None):
    """`num` evenly spaced samples from `start` to `stop` (array endpoints broadcast; the
    samples go along `axis`). Traced endpoints are allowed; `num` must be static.
    Computed as start * (1 - t) + stop * t (JAX's formula, exact at both endpoints)."""
    num = operator.index(_static_number(num, "num")) if not isinstance(num, int) else num
    if num < 0:
        raise ValueError(f"linspace: number of samples, {num}, must be non-negative.")
    dt, a, b, bounds = _endpoints(start, stop, dtype)
    compute = a.dtype
    from .shapes import canonicalize_axis

    ax = canonicalize_axis(axis, len(bounds) + 1)
    out_shape = bounds[:ax] + (num,) + bounds[ax:]
    along = tuple(i for i in range(len(out_shape)) if i != ax)
    div = num - 1 if endpoint else num
    if num == 0:
        out = lax.broadcast_in_dim(Array(np.zeros((), compute)), out_shape, ())
    elif num == 1:
        out = lax.broadcast_in_dim(a, out_shape, along)
    else:
        real = dtypes.real_dtype(compute)
        t = lax.div(lax.broadcasted_iota(real, out_shape, ax), Array(np.asarray(div, real)))
        t = lax.convert_element_type(t, compute)
        one = Array(np.ones((), compute))
        out = lax.add(lax.mul(lax.broadcast_in_dim(a, out_shape, along), lax.sub(one, t)),
                      lax.mul(lax.broadcast_in_dim(b, out_shape, along), t))
        if endpoint:
            last = lax.broadcast_in_dim(b, out_shape[:ax] + (1,) + out_shape[ax + 1:], along)
            out = lax.concatenate([lax.slice_in_dim(out, 0, num - 1, 1, ax), last], ax)
    if dtypes.is_integer(dt) and not dtypes.is_integer(out.dtype):
        out = lax.floor(out)  # NumPy 2 and JAX round integer samples toward -inf
    out = lax.convert_element_type(out, dt)
    if not retstep:
        return out
    if div > 0:
        step = lax.div(lax.sub(b, a), Array(np.asarray(div, compute)))
    else:
        step = lax.broadcast_in_dim(Array(np.asarray(np.nan, compute)), bounds, ()) if bounds else _stage_scalar(Array(np.asarray(np.nan, compute)))
    return out, step


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """base ** linspace(start, stop, ...)."""
    dt = _dtype_arg(dtype) or dtypes.canonicalize_dtype(dtypes.to_inexact(dtypes.result_type(start, stop)))
    compute = dtypes.canonicalize_dtype(dtypes.to_inexact(dt))
    lin = linspace(start, stop, num, endpoint=endpoint, dtype=compute, axis=axis)
    b = lax.convert_element_type(_rules.to_operand(base), compute)
    if b.ndim:
        from ._promote import broadcast_to_shape

        b = broadcast_to_shape(lax.expand_dims(b, (axis % lin.ndim,)), lin.shape)
    else:
        b = lax.broadcast_in_dim(b, lin.shape, ()) if lin.shape else b
    out = lax.pow(b, lin)
    if dtypes.is_integer(dt):
        out = lax.floor(out)
    return lax.convert_element_type(out, dt)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """Samples evenly spaced on a log scale (negative endpoints: mirrored, as NumPy)."""
    dt, a, b, bounds = _endpoints(start, stop, dtype)
    compute = a.dtype
    # both endpoints negative: compute for -start, -stop and flip the sign back
    real = dtypes.real_dtype(compute)
    zero = lax.broadcast_in_dim(Array(np.zeros((), real)), bounds, ()) if bounds else Array(np.zeros((), real))
    re_a, re_b = (lax.real(a), lax.real(b)) if dtypes.is_complex(compute) else (a, b)
    both_neg = lax.min(lax.lt(re_a, zero), lax.lt(re_b, zero))  # logical and of bools
    one = Array(np.ones((), compute))
    sign = lax.select(both_neg, lax.neg(lax.broadcast_in_dim(one, bounds, ()) if bounds else one),
                      lax.broadcast_in_dim(one, bounds, ()) if bounds else one)
    log_a, log_b = lax.log(lax.mul(sign, a)), lax.log(lax.mul(sign, b))
    ln10 = Array(np.asarray(np.log(10.0), compute))
    lin = logspace(lax.div(log_a, ln10), lax.div(log_b, ln10), num, endpoint, 10.0, compute, axis=0)
    lin_shape = lin.shape
    res = lax.mul(lax.broadcast_in_dim(sign, lin_shape, tuple(range(1, len(lin_shape)))), lin)
    from .shapes import moveaxis, canonicalize_axis

    ax = canonicalize_axis(axis, len(lin_shape))
    if ax:
        res = moveaxis(res, 0, ax)
    if dtypes.is_integer(dt):
        res = lax.floor(res)
    return lax.convert_element_type(res, dt)


def tri(N, M=None, k=0, dtype=None):
    """Ones at and below the k-th diagonal: out[i, j] = j <= i + k."""
    dt = _dtype_arg(dtype) or dtypes.default_float_dtype()
    N = operator.index(N)
    M = N if M is None else operator.index(M)
    rows = lax.broadcasted_iota(np.int32, (N, M), 0)
    cols = lax.broadcasted_iota(np.int32, (N, M), 1)
    mask = lax.le(lax.sub(cols, rows), Array(np.int32(operator.index(k))))
    return lax.convert_element_type(mask, dt)


def copy(a, order=None):
    """A copy of `a` (arrays are immutable, so under a trace this is `a` itself)."""
    return array(a, copy=True)


def frombuffer(buffer, dtype=float, count=-1, offset=0):
    """A 1-d array from the bytes of `buffer` (concrete data only)."""
    if isinstance(buffer, Tracer):
        raise buffer.concretization_error("frombuffer needs concrete bytes")
    np_dt = np.float64 if dtype is float else dtype
    return array(np.frombuffer(buffer, dtype=np_dt, count=count, offset=offset))


def eye(N, M=None, k=0, dtype=None, *, device=None):
    """Ones on the k-th diagonal (staged from iota and a comparison)."""
    dt = _dtype_arg(dtype) or dtypes.default_float_dtype()
    M = N if M is None else M
    N, M, k = operator.index(N), operator.index(M), operator.index(k)
    rows = lax.broadcasted_iota(np.int32, (N, M), 0)
    cols = lax.broadcasted_iota(np.int32, (N, M), 1)
    # a diagonal past the matrix is as empty as one just past it (and k may not fit in int32)
    k = min(max(k, -N), M)
    if k:
        rows = lax.add(rows, Array(np.asarray(k, np.int32)))
    return lax.convert_element_type(lax.eq(rows, cols), dt)


def identity(n, dtype=None):
    return eye(n, dtype=dtype)


__all__ = [
    "array", "asarray", "full", "zeros", "ones", "empty", "full_like", "zeros_like",
    "ones_like", "empty_like", "arange", "linspace", "logspace", "geomspace", "eye", "identity",
    "tri", "copy", "frombuffer",
]
