"""XLA's CPU expansions of `log` and `log1p`, written with lax operations, bit for bit.

Why random needs them: `normal` is `sqrt(2) * erf_inv(u)` and erf_inv starts with
`log1p(-u * u)`; `exponential` is `-log1p(-u)` and `gumbel` is `-log(-log(u))`. JAX's CPU
backend does not call a libm for these in float32: XLA expands `log1p` into a Cephes
rational function near zero and `log(1 + x)` elsewhere, and lowers float32 `log` to its own
vectorizable Cephes-style polynomial (the `xla.log1p.f32` / `log_f32` intrinsics of
xla/codegen/intrinsic). LLVM then contracts every `a * b + c` whose product has no other
use into one fused multiply-add. The functions below replay those exact operations, with
`fma` where XLA's machine code has one (read from the optimized IR and the x86-64 code of
jaxlib 0.10.2), so eager NumPy, the Numba backend and JAX agree on every float32 bit.

float64 `log` is different: XLA calls the C library's `log`, replayed by `_glibc_log`.

Imports core and lax only.
"""
import numpy as np

from .. import lax
from . import glibc_log as _glibc_log
from .fused_multiply_add import fma


def _f32(bits):
    """The float32 constant with the given IEEE bit pattern (as XLA's IR spells them)."""
    return np.uint32(bits).view(np.float32)


def _c(value, dtype):
    return np.asarray(value, dtype)[()]


def _full(like, value, dtype):
    return lax.broadcast_in_dim(_c(value, dtype), like.shape, ())


# Cephes logf's polynomial, in the three interleaved Horner chains XLA evaluates
# (each chain: two coefficients by fma in r, then a third).
_LOG_F32_CHAINS = (
    (_f32(0x3D9021BB), _f32(0xBDEBD1B8), _f32(0x3DEF251A)),
    (_f32(0xBDFE5D4F), _f32(0x3E11E9BF), _f32(0xBE2AAE50)),
    (_f32(0x3E4CCEAC), _f32(0xBE7FFFFC), _f32(0x3EAAAAAA)),
)
_LN2_LO_F32 = _f32(0xB95E8083)  # -2.12194440e-4
_LN2_HI_F32 = _f32(0x3F318000)  # 0.693359375
_SQRT_HALF_F32 = _f32(0x3F3504F3)


def _log_f32_core(y):
    """log(y) for positive normal y, before the special cases: y = m * 2**e with m in
    [sqrt(1/2), sqrt(2)), log(y) = log1p(m - 1) + e * ln 2 (ln 2 in two parts)."""
    f32, u32 = np.dtype(np.float32), np.dtype(np.uint32)
    tiny = _c(np.finfo(np.float32).tiny, f32)
    y = lax.select(lax.gt(y, tiny), y, _full(y, tiny, f32))  # subnormals as XLA: clamped
    bits = lax.bitcast_convert_type(y, u32)
    exponent = lax.sub(lax.convert_element_type(lax.shift_right_logical(bits, np.uint32(23)), np.int32),
                       np.int32(127))
    m_bits = lax.bitwise_or(lax.bitwise_and(bits, np.uint32(0x807FFFFF)), np.uint32(0x3F000000))
    m = lax.bitcast_convert_type(m_bits, f32)  # in [0.5, 1)
    e = lax.add(lax.convert_element_type(exponent, f32), _c(1, f32))
    low = lax.lt(m, _SQRT_HALF_F32)
    # below sqrt(1/2): m -> 2m, e -> e - 1 (as XLA: r = (m - 1) + m, e - 1)
    r = lax.add(lax.add(m, _c(-1, f32)), lax.select(low, m, _full(m, 0, f32)))
    e = lax.sub(e, lax.select(low, _full(m, 1, f32), _full(m, 0, f32)))
    r2 = lax.mul(r, r)
    r3 = lax.mul(r2, r)
    p1, p2, p3 = (fma(fma(r, a, b), r, c) for a, b, c in _LOG_F32_CHAINS)
    q = fma(fma(p1, r3, p2), r3, p3)
    tail = fma(q, r3, lax.mul(e, _LN2_LO_F32))
    head = fma(r2, _c(-0.5, f32), r)
    return fma(e, _LN2_HI_F32, lax.add(head, tail))


def log_f32(y):
    """XLA CPU's float32 log: NaN below zero (all bits set, as XLA), -inf at 0, inf at inf."""
    f32 = np.dtype(np.float32)
    out = _log_f32_core(y)
    out = lax.select(lax.gt(y, _c(0, f32)), out, _full(y, _f32(0xFFFFFFFF), f32))  # also NaN inputs
    out = lax.select(lax.eq(y, _c(0, f32)), _full(y, -np.inf, f32), out)
    return lax.select(lax.eq(y, _c(np.inf, f32)), _full(y, np.inf, f32), out)


def log_f64(y):
    """float64 log: XLA calls the C library's (glibc's, replayed exactly)."""
    return _glibc_log.log(y)


def log(y):
    """XLA CPU's log for float32/float64 (float16/bfloat16 through float32, as XLA)."""
    dt = np.dtype(y.dtype)
    if dt == np.float64:
        return log_f64(y)
    if dt == np.float32:
        return log_f32(y)
    return lax.convert_element_type(log_f32(lax.convert_element_type(y, np.float32)), dt)


def flush_denormals(x):
    """x with subnormal values replaced by zeros of the same sign: XLA's CPU code runs with
    the x86 flush-to-zero mode on, so a result that would be subnormal is a signed zero."""
    tiny = _c(np.finfo(x.dtype).tiny, x.dtype)
    subnormal = lax.lt(lax.abs(x), tiny)
    return lax.select(subnormal, lax.mul(x, _c(0, x.dtype)), x)


_LOG2E_F32 = _f32(0x3FB8AA3B)
# Cephes expf's polynomial for exp(r) - 1 - r = r**2 P(r), highest degree first.
_EXP_F32_POLY = (_f32(0x39506967), _f32(0x3AB743CE), _f32(0x3C088908), _f32(0x3D2AA9C1),
                 _f32(0x3E2AAAAA), np.float32(0.5))


def _clamp_keep_nan(x, lo, hi):
    """min(max(x, lo), hi) by comparisons, so NaN passes through (as XLA's selects)."""
    x = lax.select(lax.lt(x, lo), _full(x, lo, x.dtype), x)
    return lax.select(lax.gt(x, hi), _full(x, hi, x.dtype), x)


def exp_f32(x):
    """XLA CPU's float32 exp (Cephes expf): x = n ln2 + r, exp(r) by a degree-7 polynomial,
    times 2**n built from the exponent bits. Inputs are clamped to [-87.8, 88.8] first, so
    there is no overflow to inf and no subnormal result (2**-127 is built as 0)."""
    f32 = np.dtype(np.float32)
    x = _clamp_keep_nan(x, np.float32(-87.8), np.float32(88.8))
    n = lax.floor(fma(x, _LOG2E_F32, np.float32(0.5)))
    n = _clamp_keep_nan(n, np.float32(-127), np.float32(127))
    r = fma(lax.neg(n), _LN2_HI_F32, x)
    r = fma(lax.neg(n), _LN2_LO_F32, r)
    p = _full(r, _EXP_F32_POLY[0], f32)
    for c in _EXP_F32_POLY[1:]:
        p = fma(p, r, c)
    y = lax.add(fma(p, lax.mul(r, r), r), np.float32(1))
    exponent = lax.add(lax.convert_element_type(n, np.int32), np.int32(127))
    scale = lax.bitcast_convert_type(lax.shift_left(exponent, np.int32(23)), f32)
    return flush_denormals(lax.mul(y, scale))


def exp(x):
    """XLA CPU's exp: float32 as `exp_f32` (half types through it); float64 is the C
    library's `exp`, here `lax.exp` (may differ from glibc's in the last bit)."""
    dt = np.dtype(x.dtype)
    if dt == np.float64:
        return lax.exp(x)
    if dt == np.float32:
        return exp_f32(x)
    return lax.convert_element_type(exp_f32(lax.convert_element_type(x, np.float32)), dt)


# Cephes log1p's rational function R(x), log1p(x) = x - x**2/2 + x**3 R(x) for |x| small,
# highest degree first (XLA's kNumeratorCoeffs / kDenominatorCoeffs).
_LOG1P_NUM = (4.5270000862445199635215e-5, 4.9854102823193375972212e-1, 6.5787325942061044846969e0,
              2.9911919328553073277375e1, 6.0949667980987787057556e1, 5.7112963590585538103336e1,
              2.0039553499201281259648e1)
_LOG1P_DEN = (1.0, 1.5062909083469192043167e1, 8.3047565967967209469434e1, 2.2176239823732856465394e2,
              3.0909872225312059774938e2, 2.1642788614495947685003e2, 6.0118660497603843919306e1)
_LOG1P_SMALL = 0.41421356237309504880  # sqrt(2) - 1


def _log1p_small(x, dt):
    # XLA's Horner evaluation starts from 0 * x + c0 (the product shared by both chains,
    # so it is not fused); each later step is one fma.
    zero_x = lax.mul(x, _c(0, dt))
    num = lax.add(zero_x, _c(_LOG1P_NUM[0], dt))
    den = lax.add(zero_x, _c(_LOG1P_DEN[0], dt))
    for a, b in zip(_LOG1P_NUM[1:], _LOG1P_DEN[1:]):
        num = fma(num, x, _c(a, dt))
        den = fma(den, x, _c(b, dt))
    x2 = lax.mul(x, x)
    cubic = lax.mul(lax.mul(x, x2), lax.div(num, den))
    return lax.add(x, fma(x2, _c(-0.5, dt), cubic))


def log1p(x):
    """XLA's log1p: the Cephes rational function where |x| < sqrt(2) - 1, log(1 + x) elsewhere
    (float16/bfloat16 through float32)."""
    dt = np.dtype(x.dtype)
    if dt not in (np.float32, np.float64):
        return lax.convert_element_type(log1p(lax.convert_element_type(x, np.float32)), dt)
    large = log(lax.add(x, _c(1, dt)))
    small = lax.lt(lax.abs(x), _c(_LOG1P_SMALL, dt))
    return lax.select(small, _log1p_small(x, dt), large)


__all__ = ["flush_denormals", "exp", "exp_f32", "log", "log1p", "log_f32", "log_f64"]
