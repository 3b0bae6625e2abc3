"""Scalar helpers that generated Numba code calls (`_rt.<name>(...)`), for operations whose
NumPy/XLA semantics differ from a bare Python operator in Numba: truncating integer
division, saturating float->int casts, NaN-propagating max/min, shifts past the bit width.

Imports Numba: only the code generator imports this module, lazily.
"""
import numba
import numpy as np

_jit = numba.njit(inline="always", nogil=True, cache=True)


@_jit
def idiv(a, b):
    """Integer division rounding toward zero (lax.div); x / 0 gives -1 for x >= 0 and 1 for
    x < 0 in XLA's CPU backend; we follow NumPy-compatible JAX eager semantics instead: 0."""
    if b == 0:
        return a - a
    q = a // b
    if (a % b != 0) and ((a < 0) != (b < 0)):
        q += 1
    return q


@_jit
def irem(a, b):
    """Integer remainder with the sign of the dividend (lax.rem)."""
    if b == 0:
        return a - a
    return a - idiv(a, b) * b


@_jit
def fmax(a, b):
    """max propagating NaN (lax.max / np.maximum)."""
    return a if (a > b or a != a) else b


@_jit
def fmin(a, b):
    return a if (a < b or a != a) else b


@_jit
def round_half_away(x):
    return np.floor(x + 0.5) if x >= 0 else np.ceil(x - 0.5)


@_jit
def sign(x):
    if x != x:
        return x
    return (x > 0) - (x < 0) + x * 0


def _make_float_to_int(np_int):
    info = np.iinfo(np_int)
    lo, hi = float(info.min), float(info.max)
    cast = getattr(np, np.dtype(np_int).name)

    @_jit
    def f2i(x):
        if x != x:
            return cast(0)
        if x <= lo:
            return cast(info.min)
        if x >= hi:
            return cast(info.max)
        return cast(x)

    return f2i


f2i_int8 = _make_float_to_int(np.int8)
f2i_int16 = _make_float_to_int(np.int16)
f2i_int32 = _make_float_to_int(np.int32)
f2i_int64 = _make_float_to_int(np.int64)
f2i_uint8 = _make_float_to_int(np.uint8)
f2i_uint16 = _make_float_to_int(np.uint16)
f2i_uint32 = _make_float_to_int(np.uint32)
f2i_uint64 = _make_float_to_int(np.uint64)


@_jit
def shift_left(a, b, bits):
    return a << b if 0 <= b < bits else a - a


@_jit
def shift_right_arithmetic(a, b, bits):
    return a >> b if 0 <= b < bits else (a - a - 1 if a < 0 else a - a)
