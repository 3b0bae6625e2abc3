"""NumPy-style argument handling for `omnistage.numpy`: JAX type promotion (weak Python
scalars, the lattice) and NumPy broadcasting, made explicit as lax conversions and
`broadcast_in_dim` statements so that every primitive sees equal dtypes and shapes."""
import math

import numpy as np

from ..core import dtypes
from ..core.array import Array
from ..core.tracer import Tracer
from .. import lax
from ..lax import _rules
from ..lax.elementwise import _convert_weak

_SCALARS = (bool, int, float, complex)


def is_arraylike(x):
    return isinstance(x, (Array, Tracer, np.ndarray, np.generic, *_SCALARS)) or hasattr(x, "__array__")


def check_arraylike(name, *args):
    for i, a in enumerate(args):
        if not is_arraylike(a) or isinstance(a, (list, tuple)):
            raise TypeError(f"{name} requires ndarray or scalar arguments, got {type(a)} at position {i}.")


def _convert(x, dt, weak):
    """`x` as an operand of dtype `dt` (Python scalars become typed constants directly)."""
    if isinstance(x, _SCALARS) and not isinstance(x, np.generic):
        with np.errstate(all="ignore"):
            return Array(_scalar_to(x, dt), weak)
    x = _rules.to_operand(x)
    return _convert_weak(x, dt, weak)


def _scalar_to(x, dt):
    dt = np.dtype(dt)
    if dt.kind in "iu" and isinstance(x, int):
        info = np.iinfo(dt)
        if not info.min <= x <= info.max:
            raise OverflowError(f"Python int {x} too large to convert to {dt.name}")
    if dt.kind in "iub" and isinstance(x, complex):
        x = x.real
    return np.asarray(x).astype(dt) if not isinstance(x, int) or dt.kind != "f" else np.asarray(float(x), dt)


def promote_dtypes(*args):
    """Convert args to their common JAX-promoted dtype."""
    if len(args) == 0:
        return []
    dt, weak = dtypes.result_type(*args, return_weak_type_flag=True)
    return [_convert(a, dt, weak) for a in args]


def promote_dtypes_inexact(*args):
    dt, weak = dtypes.result_type(*args, return_weak_type_flag=True)
    inexact = dtypes.to_inexact(dt)
    if inexact != dt:
        inexact = dtypes.canonicalize_dtype(inexact)
    return [_convert(a, inexact, weak) for a in args]


def promote_dtypes_numeric(*args):
    dt, weak = dtypes.result_type(*args, return_weak_type_flag=True)
    if dt.kind == "b":
        dt = dtypes.default_int_dtype()
    return [_convert(a, dt, weak) for a in args]


def promote_shapes(name, *args):
    """Broadcast operands to one shape; rank-0 operands are left for the primitive to broadcast."""
    shapes = [a.shape for a in args]
    nonscalar = [s for s in shapes if len(s)]
    if len(set(nonscalar)) <= 1:
        return list(args)
    if len({len(s) for s in nonscalar}) > 1:
        _check_rank_promotion(name, shapes)
    try:
        result = tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError(
            f"{name}: incompatible shapes for broadcasting: {', '.join(str(tuple(s)) for s in shapes)}"
        ) from None
    return [a if (a.ndim == 0 or a.shape == result) else broadcast_to_shape(a, result) for a in args]


def _check_rank_promotion(name, shapes):
    """JAX's `jax_numpy_rank_promotion` option: 'allow' (default), 'warn' or 'raise' when
    operands of different ranks are broadcast together."""
    from ..core.config import config

    mode = config.read("jax_numpy_rank_promotion")
    if mode == "allow":
        return
    listed = " ".join(str(tuple(s)) for s in shapes)
    if mode == "raise":
        from ..core.errors import add_location
        from ..core.source_info import describe_here

        raise add_location(ValueError(
            f"Operands could not be broadcast together for {name} on shapes {listed} and with the config option "
            f"jax_numpy_rank_promotion='raise' (add the missing axes explicitly, e.g. with x[None, :])."), describe_here())
    import warnings

    warnings.warn(f"Following NumPy automatic rank promotion for {name} on shapes {listed}. Set the "
                  f"jax_numpy_rank_promotion config option to 'allow' to disable this warning.", stacklevel=3)


def broadcast_to_shape(x, shape):
    shape = tuple(shape)
    x = _rules.to_operand(x)
    if x.shape == shape:
        return x
    if x.ndim > len(shape):
        raise ValueError(f"Incompatible shapes for broadcasting: {x.shape} and requested shape {shape}")
    lead = len(shape) - x.ndim
    for i, d in enumerate(x.shape):
        if d != 1 and d != shape[lead + i]:
            raise ValueError(f"Incompatible shapes for broadcasting: {x.shape} and requested shape {shape}")
    # size-1 dims that stretch are dropped from the operand, then broadcast
    keep = [i for i, d in enumerate(x.shape) if d == shape[lead + i]]
    if len(keep) != x.ndim:
        x = lax.reshape(x, tuple(x.shape[i] for i in keep))
    return lax.broadcast_in_dim(x, shape, tuple(lead + i for i in keep))


_float_consts = {}  # (Python float, dtype, weak) -> its Array: `0.9 * m` in a loop converts 0.9 once


def _float_const(value, dt, weak=False):
    # +0.0 and -0.0 are equal keys: the sign is part of the key; NaN is never found again
    key = (value, math.copysign(1.0, value), dt, weak)
    const = _float_consts.get(key)
    if const is None:
        with np.errstate(all="ignore"):
            const = Array(np.asarray(value).astype(dt), weak)
        if value == value:
            if len(_float_consts) >= 512:
                _float_consts.clear()
            _float_consts[key] = const
    return const


def already_promoted(args, inexact=False):
    """`args` themselves when promotion would return them unchanged, else None: the common
    eager call (`m + g`, `0.9 * m` on one float array) skips the lattice and the broadcast
    check, which cost more than NumPy's own work on a small array. That is: Arrays of one
    canonical dtype and weak flag whose shapes are equal or rank 0 (tracers alike), or one
    strong float Array with Python floats (each becomes a strong constant of its dtype, as
    `promote_dtypes` makes it), or Python floats alone (weak constants of the default float
    dtype). `inexact`: for promote_args_inexact, whose operands must already be floating or
    complex."""
    first = None
    for a in args:
        if type(a) is Array or isinstance(a, Tracer):  # tracers too: vmap and grad stage each call
            if first is None:
                first = a
            elif a.dtype != first.dtype or a.weak_type != first.weak_type or (a.shape != first.shape and a.ndim and first.ndim):
                return None
        elif type(a) is not float:
            return None
    if first is None and args:
        # Python floats alone (`jnp.log(2. * 3.1415)`): weak constants of the default float
        # dtype, as promote_dtypes makes them
        dt = dtypes.default_float_dtype()
        return [_float_const(a, dt, weak=True) for a in args]
    if first is None or (first.ndim == 0 and any(type(a) is not float and a.ndim for a in args)):
        return None
    dt = first.dtype
    if (inexact and dt.kind not in "fc") or dtypes.canonicalize_dtype(dt) != dt:
        return None
    if len(args) == 1 or all(type(a) is not float for a in args):
        return list(args)
    if first.weak_type or dt.kind != "f":
        return None
    return [a if type(a) is not float else _float_const(a, dt) for a in args]


def promote_args(name, *args):
    fast = already_promoted(args)
    if fast is not None:
        return fast
    check_arraylike(name, *args)
    return promote_shapes(name, *promote_dtypes(*args))


def promote_args_inexact(name, *args):
    fast = already_promoted(args, inexact=True)
    if fast is not None:
        return fast
    check_arraylike(name, *args)
    return promote_shapes(name, *promote_dtypes_inexact(*args))


def promote_args_numeric(name, *args):
    check_arraylike(name, *args)
    return promote_shapes(name, *promote_dtypes_numeric(*args))
