"""The `fma` primitive: fused multiply-add `a * b + c` with a single rounding.

Why random needs it: XLA's CPU and GPU code generators contract `x * y + z` inside a fused
elementwise computation into one hardware FMA. `jax.random.uniform(key, shape, minval=lo,
maxval=hi)` computes `floats * (hi - lo) + lo` that way, and so does the Horner evaluation
in `erf_inv` behind `normal`; rounding the product and the sum separately differs from JAX
in about one value in five. No lax operation rounds once, so this is one new primitive,
defined here next to its only users (it belongs in `omnistage.lax` when another library
needs it).

The NumPy implementation is exact (correctly rounded) for float32 and float64 by the
round-to-odd emulation of Boldo and Melquiond ("Emulation of FMA and correctly rounded
sums: proved algorithms using rounding to odd", IEEE TC 2008): an error-free product
(Veltkamp/Dekker splitting), an error-free sum, the two error terms added with rounding to
odd, and one final round-to-nearest addition. The premise is that `a * b` neither
overflows nor underflows into subnormals; where it does (and for inf/nan operands) the
result is the twice-rounded `a * b + c`, the difference lying below the smallest normal.
float16/bfloat16 compute in float64, where the product and the sum are exact.

float32 takes a shorter road (`_fma_float32`, ~4x faster: eager `random.normal` spends most
of its time in the fma of erf_inv's Horner steps): in float64 the product is exact and the sum
rounds once, so the float32 result can differ from the correctly rounded one only where that
float64 sum lies exactly halfway between two float32 values (or in float32's subnormal range),
where the second rounding may go the wrong way. Those few elements are redone by rounding the
float64 sum to odd, which Boldo and Melquiond prove correct for 53 >= 2 * 24 + 2 bits.

A code generator lowers `fma` to `llvm.fma` (Numba: `math.fma` is not available before
Python 3.13; an `@intrinsic` calling `llvm.fma.f32/f64` works everywhere) or CUDA `fmaf`.
Imports core and lax only.
"""
import numpy as np

from ..core.aval import ShapedArray
from ..core.primitive import Primitive
from . import _rules as R
from ._rules import operands

# Veltkamp splitting constants 2**ceil(p/2) + 1 (p = significand bits).
_SPLITTER = {np.dtype(np.float32): np.float32(4097.0), np.dtype(np.float64): np.float64(134217729.0)}


def _split(x, splitter):
    c = splitter * x
    hi = c - (c - x)
    return hi, x - hi


def _two_prod(a, b, splitter):
    """p + e == a * b exactly (no overflow/underflow)."""
    p = a * b
    ah, al = _split(a, splitter)
    bh, bl = _split(b, splitter)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


def _two_sum(a, b):
    """s + e == a + b exactly (Knuth)."""
    s = a + b
    bb = s - a
    e = (a - (s - bb)) + (b - bb)
    return s, e


def _add_round_to_odd(a, b):
    """a + b rounded to odd: the neighbour with an odd last bit when a + b is inexact."""
    s, e = _two_sum(a, b)
    int_t = np.dtype(f"int{s.dtype.itemsize * 8}")
    even = (s.view(int_t) & 1) == 0
    toward = np.where(e > 0, np.inf, -np.inf).astype(s.dtype)
    return np.where((e != 0) & even, np.nextafter(s, toward), s)


def _fma_exact(a, b, c):
    splitter = _SPLITTER[a.dtype]
    uh, ul = _two_prod(a, b, splitter)
    th, tl = _two_sum(c, uh)
    v = _add_round_to_odd(tl, ul)
    return th + v


_F32_DROPPED = (1 << 29) - 1  # the float64 significand bits a float32 does not keep
_F32_HALFWAY = 1 << 28  # their pattern at a point halfway between two float32 values
_F32_EXPONENT = 0x7F800000


def _fma_float32(a, b, c):
    wide = [np.asarray(v, np.float64) for v in (a, b, c)]  # unbroadcast: a constant stays a scalar
    shape = np.broadcast_shapes(*(w.shape for w in wide))
    total = np.empty(shape, np.float64)
    with np.errstate(all="ignore"):
        np.multiply(wide[0], wide[1], out=total)  # exact
        total += wide[2]  # the one rounding
        out = total.astype(np.float32)
    flat_total, flat_out = total.reshape(-1), out.reshape(-1)  # views; 0-d becomes 1-d
    suspect = (flat_total.view(np.int64) & _F32_DROPPED) == _F32_HALFWAY
    suspect |= (flat_out.view(np.int32) & _F32_EXPONENT) == 0  # subnormal or zero
    if suspect.any():
        suspect &= flat_total != 0  # an exact zero is exact
        at = np.flatnonzero(suspect)
        x, y, z = (np.broadcast_to(w, shape).reshape(-1)[at] for w in wide)
        with np.errstate(all="ignore"):
            s, e = _two_sum(x * y, z)
            odd = _add_round_to_odd(s, e)
            flat_out[at] = np.where(np.isfinite(s), odd, s).astype(np.float32)
    return out


def _fma_impl(a, b, c):
    if np.result_type(a, b, c) == np.float32:  # lax typing: all three are float32
        return _fma_float32(a, b, c)
    a, b, c = (np.asarray(v) for v in np.broadcast_arrays(a, b, c))
    dt = a.dtype
    if dt not in _SPLITTER:  # float16 / bfloat16: exact in float64
        wide = [v.astype(np.float64) for v in (a, b, c)]
        return np.asarray(wide[0] * wide[1] + wide[2]).astype(dt)
    with np.errstate(all="ignore"):
        naive = a * b + c
        tiny = np.finfo(dt).tiny * 2.0 ** (np.finfo(dt).nmant + 2)
        prod = np.abs(a * b)
        safe = np.isfinite(naive) & np.isfinite(prod) & ((prod == 0) | (prod > tiny))
        if not safe.any():
            return np.asarray(naive, dt)
        exact = _fma_exact(a, b, c)
        # an exact zero is a * b == -c, so the product is representable and the naive
        # result is exact too, with IEEE's sign of zero (the emulation loses it)
        return np.asarray(np.where(safe & (exact != 0), exact, naive), dt)


def _fma_abstract(a, b, c):
    dt = R.same_dtype("fma", (a, b, c))
    R.check_kind("fma", dt, R.FLOAT)
    shape = R.nary_shape("fma", (a, b, c))
    return ShapedArray(shape, dt, R.all_weak((a, b, c)))


fma_p = Primitive("fma", _fma_abstract, _fma_impl)


def fma(a, b, c):
    """`a * b + c` rounded once (strict lax typing: equal float dtypes, rank-0 operands broadcast)."""
    return fma_p.bind(*operands(a, b, c))


__all__ = ["fma", "fma_p"]
