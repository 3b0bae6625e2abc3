"""Array creation in `omnistage.numpy`: array/asarray (concrete data), and staged
constructors (zeros, ones, full, arange, eye, ...) that become `broadcast_in_dim`/`iota`
statements under a trace (omnistaging: nothing is folded at trace time)."""
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
        out = object if dt is None else lax.convert_element_type(object, dt)
        if dt is None and out.weak_type:
            out = lax.elementwise._convert_weak(out, out.dtype, False)
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
            else:
                dt = dtypes.canonicalize_dtype(value.dtype)
        with np.errstate(all="ignore"):
            out = Array(value.astype(dt))
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


def asarray(a, dtype=None, order=None, copy=None):
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


def full(shape, fill_value, dtype=None):
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


def zeros(shape, dtype=None):
    return full(shape, 0, _dtype_arg(dtype) or dtypes.default_float_dtype())


def ones(shape, dtype=None):
    return full(shape, 1, _dtype_arg(dtype) or dtypes.default_float_dtype())


def empty(shape, dtype=None):
    return zeros(shape, dtype)


def _like(a, dtype, shape):
    dt = _dtype_arg(dtype) or (a.dtype if hasattr(a, "dtype") else dtypes.result_type(a))
    return dt, (np.shape(a) if shape is None else shape)


def full_like(a, fill_value, dtype=None, shape=None):
    dt, shp = _like(a, dtype, shape)
    return full(shp, fill_value, dt)


def zeros_like(a, dtype=None, shape=None):
    dt, shp = _like(a, dtype, shape)
    return full(shp, 0, dt)


def ones_like(a, dtype=None, shape=None):
    dt, shp = _like(a, dtype, shape)
    return full(shp, 1, dt)


def empty_like(a, dtype=None, shape=None):
    return zeros_like(a, dtype, shape)


def _static_number(x, name):
    if isinstance(x, Tracer):
        raise x.concretization_error(f"jnp.arange argument {name!r} must be static")
    if isinstance(x, Array):
        return x.item()
    return x


def arange(start, stop=None, step=None, dtype=None):
    """Evenly spaced values; integer ranges are staged as `iota`."""
    start = _static_number(start, "start")
    stop = None if stop is None else _static_number(stop, "stop")
    step = None if step is None else _static_number(step, "step")
    if stop is None and step is None:
        start, stop = 0, start
    step = 1 if step is None else step
    if step == 0:
        raise ValueError("arange: step must be nonzero")
    dt = _dtype_arg(dtype)
    if dt is None:
        dt = _python_default(np.result_type(*[np.asarray(v) for v in (start, stop, step)]))
    n = builtins.max(0, int(np.ceil((stop - start) / step)))
    if dt.kind in "iu" and all(float(v).is_integer() for v in (start, step)):
        out = lax.iota(dt, n)
        if step != 1:
            out = lax.mul(out, Array(np.asarray(step, dt)))
        if start != 0:
            out = lax.add(out, Array(np.asarray(start, dt)))
        return out
    return Array(np.arange(start, stop, step).astype(dt))


def eye(N, M=None, k=0, dtype=None):
    """Ones on the k-th diagonal (staged from iota and a comparison)."""
    dt = _dtype_arg(dtype) or dtypes.default_float_dtype()
    M = N if M is None else M
    N, M, k = operator.index(N), operator.index(M), operator.index(k)
    rows = lax.broadcasted_iota(np.int32, (N, M), 0)
    cols = lax.broadcasted_iota(np.int32, (N, M), 1)
    if k:
        rows = lax.add(rows, Array(np.asarray(k, np.int32)))
    return lax.convert_element_type(lax.eq(rows, cols), dt)


def identity(n, dtype=None):
    return eye(n, dtype=dtype)


__all__ = [
    "array", "asarray", "full", "zeros", "ones", "empty", "full_like", "zeros_like",
    "ones_like", "empty_like", "arange", "eye", "identity",
]
