"""The vmath kernels: branch-free scalar float32/float64 implementations of exp, log, tanh, sin...
written once and instantiated per dtype by `build(dtype)`.

Each kernel is range reduction + a minimax polynomial (coefficients from `_fit.py`) + a few
selects for the special values (inf, nan, zero, subnormal, overflow), so that a loop calling it
has no branches and no libm calls and LLVM's loop vectorizer turns it into packed SIMD code.

Typing discipline (why the code looks the way it does): every constant is a NumPy scalar of the
kernel's dtype, captured from the enclosing `build` scope, because a bare Python literal is
float64/int64 in Numba and would silently promote a float32 kernel to float64 lanes. Conditions
are combined with `&`/`|` on booleans, not `and`/`or`, which would create branches. `a if c else
b` with cheap operands becomes an LLVM `select`.

Fast-math: only 'contract' (fusing a*b+c); never 'nnan'/'ninf' (which let LLVM delete the NaN
selects below) nor 'reassoc' (which would undo the Cody-Waite splits). Kernels that need an
exact product error use `fma` explicitly.
"""
import math

import numba
import numpy as np

from .. import numba_flags, numba_locator
from ._intrinsics import exponent_field, floor, fmuladd, frexp_sqrt2, ldexp, pow2, rint

# forceinline marks the LLVM function alwaysinline: the caller's loop sees the kernel's body (and
# vectorizes it) even when it is past LLVM's inlining budget, while the kernel keeps its own
# fast-math flags and error model. error_model='numpy': a float division by zero gives inf/nan
# instead of raising (a raise is a branch that stops vectorization).
# cache=True: each kernel is compiled once per machine (pow_float32 is ~0.2 s of Numba work,
# paid by every process that compiled a program using it). The locator goes in first, so the
# cache files land in omnistage's checked private directory and nowhere else.
numba_locator.install()
_njit = numba.njit(**numba_flags.CONTRACTED, nogil=True, forceinline=True, cache=True)
# The kernels' building blocks (polynomials, range reductions) are inlined into the kernel in
# Numba's IR instead: each separately compiled Numba function costs a whole pipeline (typing,
# lowering, an LLVM module optimized and linked on its own), which made exp_float32 three
# compilations (exp, exp_core, horner) and about a fifth of a cold `jit(selu)` compile.
_inline = numba.njit(**numba_flags.CONTRACTED, nogil=True, inline="always")

from ..vmath_tables import COEFFS, payne_hanek_table as _payne_hanek_table  # noqa: E402 - Numba-free tables


def _jit(name):
    """njit a kernel under a unique exported name (the code generator imports it by name)."""

    def wrap(fn):
        fn.__name__ = fn.__qualname__ = name
        return _njit(fn)

    return wrap


@_inline
def horner(t, coeffs):
    """Polynomial with coefficients highest order first; the constant-trip loop over a tuple is
    fully unrolled by LLVM before vectorization."""
    acc = coeffs[0]
    for i in range(1, len(coeffs)):
        acc = fmuladd(acc, t, coeffs[i])
    return acc


def _poly(ft, name):
    """COEFFS[name] as a tuple of `ft`, highest order first (Horner order)."""
    return tuple(ft(float(c)) for c in reversed(COEFFS[name]))


class _Consts:
    """Per-dtype constants. Cody-Waite splits: LN2_HI has trailing zero bits so that n * LN2_HI
    is exact for every reachable n; LOG10_2_HI likewise for the exponent e."""

    def __init__(self, ft):
        single = ft is np.float32
        c = lambda v: ft(v)  # noqa: E731 - one-letter cast keeps the table readable
        self.ZERO, self.HALF, self.ONE, self.TWO = c(0), c(0.5), c(1), c(2)
        self.INF, self.NEG_INF, self.NAN = c(np.inf), c(-np.inf), c(np.nan)
        self.LOG2E = c(1.4426950408889634)
        self.LN2_HI = c(0.693359375) if single else c(6.93147180369123816490e-01)
        self.LN2_LO = c(-2.12194440e-4) if single else c(1.90821492927058770002e-10)
        # exp(EXP_LO) rounds to 0 and exp(EXP_HI) to inf; clamping keeps n in ldexp's range
        self.EXP_LO, self.EXP_HI = (c(-104), c(89)) if single else (c(-746), c(710))
        self.EXP2_LO, self.EXP2_HI = (c(-151), c(129)) if single else (c(-1076), c(1025))
        # expm1(x) rounds to -1 below EM1_LO; |x| < TINY: expm1(x), log1p(x), tanh(x) round to x
        self.EM1_LO = c(-30) if single else c(-45)
        self.TINY = c(2.0**-25) if single else c(2.0**-54)
        self.MIN_NORMAL = c(np.finfo(ft).tiny)
        self.SUB_SHIFT = 25 if single else 54  # scales subnormals into the normal range
        self.SUB_SCALE, self.SUB_E = c(2.0**self.SUB_SHIFT), c(-self.SUB_SHIFT)
        log2e, log10e, log10_2 = 1.4426950408889634, 0.4342944819032518, 0.30102999566398120
        self.LOG2E_HI = c(log2e)
        self.LOG2E_LO = c(log2e - float(self.LOG2E_HI)) if single else c(2.0355273740931033e-17)
        self.LOG10E = c(log10e)
        self.LOG10E_HI = c(log10e)
        self.LOG10E_LO = c(log10e - float(self.LOG10E_HI)) if single else c(1.098319650216765e-17)
        hi_bits = 15 if single else 40
        self.LOG10_2_HI = c(round(log10_2 * 2**hi_bits) / 2**hi_bits)
        self.LOG10_2_LO = c(log10_2 - float(self.LOG10_2_HI))
        # tanh(x) rounds to +-1 above TANH_CLAMP; below TANH_SPLIT (float32) an odd polynomial
        self.TANH_CLAMP = c(10) if single else c(20)
        self.TANH_SPLIT = c(0.625) if single else self.TINY
        suffix = "f32" if single else "f64"
        self.EM1 = _poly(ft, "em1_" + suffix)
        self.EXP2 = _poly(ft, "exp2_" + suffix)
        self.LOG = _poly(ft, "log_f32") if single else _poly(ft, "atanh_f64")
        self.TANH = _poly(ft, "tanh_f32") if single else None


def _exp_core(C, em1_coeffs):
    """(e^r - 1, n) with xc = n*ln2 + r, |r| <= ln2/2, for a clamped (finite or nan) xc."""
    LOG2E, LN2_HI, LN2_LO = C.LOG2E, C.LN2_HI, C.LN2_LO

    @_inline
    def exp_core(xc):
        n = rint(xc * LOG2E)
        r = fmuladd(-n, LN2_HI, xc)  # exact: n * LN2_HI has trailing zero bits to spare
        r = fmuladd(-n, LN2_LO, r)
        return fmuladd(horner(r, em1_coeffs), r * r, r), n

    return exp_core


def _expm1_core(C, exp_core):
    """expm1 for a clamped xc in [EM1_LO, EXP_HI]: 2^n (e^r - 1) + (2^n - 1), written as
    2 * (t * em1 + (t - 1/2)) with t = 2^(n-1) so that 2^n itself never overflows."""
    ONE, TWO, HALF = C.ONE, C.TWO, C.HALF

    @_inline
    def expm1_core(xc):
        em1, n = exp_core(xc)
        t = pow2(n - ONE)
        return TWO * fmuladd(t, em1, t - HALF)

    return expm1_core


def _log_parts(C):
    """(e, f) with x = 2^e * (1 + f), 1 + f in [sqrt(1/2), sqrt(2)), for positive finite x
    (subnormals are scaled into the normal range first)."""
    MIN_NORMAL, SUB_SCALE, SUB_E, ONE = C.MIN_NORMAL, C.SUB_SCALE, C.SUB_E, C.ONE

    @_inline
    def log_parts(x):
        sub = x < MIN_NORMAL
        m, e = frexp_sqrt2(x * SUB_SCALE if sub else x)
        return (e + SUB_E if sub else e), m - ONE

    return log_parts


def _log1p_tail(C, single):
    """log1p(f) - f for |f| <= sqrt(2) - 1: a polynomial in f (float32) or fdlibm's
    s = f / (2 + f) form with an atanh polynomial in s^2 (float64, where a plain polynomial in
    f would need ~40 terms)."""
    HALF, TWO, P = C.HALF, C.TWO, C.LOG

    if single:
        @_inline
        def tail(f):
            z = f * f
            return fmuladd(f * z, horner(f, P), -HALF * z)
    else:
        @_inline
        def tail(f):
            s = f / (TWO + f)
            z = s * s
            hfsq = HALF * f * f
            return s * fmuladd(z, horner(z, P), hfsq) - hfsq

    return tail


def build(dtype):
    """The kernels for one float dtype, as {lax primitive name: njit function}."""
    ft = np.dtype(dtype).type
    single = ft is np.float32
    sfx = np.dtype(dtype).name
    C = _Consts(ft)
    ZERO, ONE, TWO, INF, NEG_INF, NAN = C.ZERO, C.ONE, C.TWO, C.INF, C.NEG_INF, C.NAN
    exp_core = _exp_core(C, C.EM1)
    expm1_core = _expm1_core(C, exp_core)
    log_parts, log_tail = _log_parts(C), _log1p_tail(C, single)
    EXP_LO, EXP_HI, EXP2_LO, EXP2_HI, EM1_LO, TINY = C.EXP_LO, C.EXP_HI, C.EXP2_LO, C.EXP2_HI, C.EM1_LO, C.TINY
    LN2_HI, LN2_LO, EXP2 = C.LN2_HI, C.LN2_LO, C.EXP2
    LOG2E, LOG2E_HI, LOG2E_LO = C.LOG2E, C.LOG2E_HI, C.LOG2E_LO
    LOG10E, LOG10E_HI, LOG10E_LO, LOG10_2_HI, LOG10_2_LO = C.LOG10E, C.LOG10E_HI, C.LOG10E_LO, C.LOG10_2_HI, C.LOG10_2_LO
    TANH_CLAMP, TANH_SPLIT, TANH = C.TANH_CLAMP, C.TANH_SPLIT, C.TANH
    NEG_ONE, NEG_EXP_LO = -ONE, -EXP_LO

    @_jit(f"exp_{sfx}")
    def exp(x):
        xc = x if x > EXP_LO else EXP_LO  # nan lands here too and is restored below
        xc = xc if xc < EXP_HI else EXP_HI
        em1, n = exp_core(xc)
        y = ldexp(em1 + ONE, n)
        return y if x == x else x

    @_jit(f"exp2_{sfx}")
    def exp2(x):
        xc = x if x > EXP2_LO else EXP2_LO
        xc = xc if xc < EXP2_HI else EXP2_HI
        n = rint(xc)
        r = xc - n  # exact
        y = ldexp(fmuladd(r, horner(r, EXP2), ONE), n)
        return y if x == x else x

    @_jit(f"expm1_{sfx}")
    def expm1(x):
        xc = x if x > EM1_LO else EM1_LO
        xc = xc if xc < EXP_HI else EXP_HI
        y = expm1_core(xc)
        # tiny |x| (and -0, subnormals, nan) give x itself
        return y if abs(x) >= TINY else x

    def _log_specials(x, y):
        y = y if x < INF else x  # +inf -> inf, nan -> nan
        y = NEG_INF if x == ZERO else y
        return NAN if x < ZERO else y

    log_specials = _njit(_log_specials)

    @_jit(f"log_{sfx}")
    def log(x):
        e, f = log_parts(x)
        y = fmuladd(e, LN2_HI, f + fmuladd(e, LN2_LO, log_tail(f)))
        return log_specials(x, y)

    @_jit(f"log2_{sfx}")
    def log2(x):
        e, f = log_parts(x)
        # log2(1 + f) = (f + tail) * log2(e), with log2(e) split so the leading product keeps
        # its precision; exact powers of two give e exactly
        y = e + fmuladd(f, LOG2E_HI, fmuladd(f, LOG2E_LO, log_tail(f) * LOG2E))
        return log_specials(x, y)

    @_jit(f"log10_{sfx}")
    def log10(x):
        e, f = log_parts(x)
        lo = fmuladd(f, LOG10E_LO, fmuladd(log_tail(f), LOG10E, e * LOG10_2_LO))
        y = fmuladd(e, LOG10_2_HI, fmuladd(f, LOG10E_HI, lo))
        return log_specials(x, y)

    @_jit(f"log1p_{sfx}")
    def log1p(x):
        u = ONE + x
        e, f = log_parts(u)
        # u rounds 1 + x; (x - (u - 1)) / u restores what the rounding lost (fdlibm's trick)
        c = (x - (u - ONE)) / u
        y = fmuladd(e, LN2_HI, f + (log_tail(f) + fmuladd(e, LN2_LO, c)))
        y = y if x < INF else x
        y = NEG_INF if x == NEG_ONE else y
        y = NAN if x < NEG_ONE else y
        return y if abs(x) >= TINY else x

    if single:
        @_inline
        def tanh_small(x):
            z = x * x
            return fmuladd(x * z, horner(z, TANH), x)
    else:
        @_inline
        def tanh_small(x):
            return x

    @_jit(f"tanh_{sfx}")
    def tanh(x):
        a = abs(x)
        ac = a if a < TANH_CLAMP else TANH_CLAMP
        t = expm1_core(TWO * ac)
        big = math.copysign(t / (t + TWO), x)
        # nan fails the comparison and takes the polynomial path, which propagates it
        y = big if a >= TANH_SPLIT else tanh_small(x)
        return y if a >= TINY else x  # keeps -0

    @_jit(f"logistic_{sfx}")
    def logistic(x):
        # 1 / (1 + e^-x) for x >= 0 and e^x / (1 + e^x) for x < 0, with e = exp(-|x|) <= 1:
        # never overflows, and keeps full relative precision in the left tail
        a = abs(x)
        ac = a if a < NEG_EXP_LO else NEG_EXP_LO
        em1, n = exp_core(-ac)
        e = ldexp(em1 + ONE, n)
        s = ONE + e
        s_err = (ONE - s) + e  # exact rounding error of 1 + e (Fast2Sum, e <= 1)
        q = (ONE if x >= ZERO else e) / s
        y = fmuladd(-q, s_err / s, q)  # num / (s + s_err) to first order
        return y if x == x else x

    kernels = {"exp": exp, "exp2": exp2, "expm1": expm1, "log": log, "log2": log2, "log10": log10,
               "log1p": log1p, "tanh": tanh, "logistic": logistic}
    if single:
        kernels.update(_build_f32_extras())
    return kernels


def _build_f32_extras():
    """float32 kernels computed in float64 arithmetic: sin/cos (exact Payne-Hanek reduction needs
    more than 24 bits), erf and pow (which need x*x and y*log(x) beyond float32 precision).
    Half the vector width of the pure float32 kernels, still vectorized and far from libm."""
    f64 = np.float64
    C = _Consts(f64)
    ZERO, HALF, ONE, INF, NEG_INF, NAN = C.ZERO, C.HALF, C.ONE, C.INF, C.NEG_INF, C.NAN
    QUARTER, FOUR, TWO, THREE = f64(0.25), f64(4), f64(2), f64(3)
    G0, G1, G2, G3 = _payne_hanek_table()
    PIO2 = f64(math.pi / 2)
    SIN_TINY = np.float32(2.0**-12)
    SIN, COS = _poly(f64, "sin_f32"), _poly(f64, "cos_f32")
    ERF_SMALL, ERFC = _poly(f64, "erf_small_f32"), _poly(f64, "erfc_f32")
    ERF_SPLIT, ERFC_HI = f64(0.875), f64(3.95)
    # float32-accurate exp in float64 arithmetic (the float32 polynomial, float64 reduction)
    exp_core = _exp_core(C, _poly(f64, "em1_f32"))
    log_parts, log_tail = _log_parts(C), _log1p_tail(C, single=False)
    LN2_HI, LN2_LO = C.LN2_HI, C.LN2_LO
    POW_LO, POW_HI = f64(-104), f64(89)  # exp(w) underflows / overflows float32 beyond these

    @_inline
    def reduce_quadrant(x):
        """(a, q mod 4): x = a + q * pi/2 with |a| <= pi/4, exact for every float32 x."""
        e = exponent_field(x)
        xd = f64(x)
        p0 = xd * G0[e]
        q0 = rint(p0)
        s1 = (p0 - q0) + xd * G1[e]  # exact (chunks are bit-aligned)
        q1 = rint(s1)
        r = ((s1 - q1) + xd * G2[e]) + xd * G3[e]
        q = q0 + q1
        return r * PIO2, q - FOUR * floor(q * QUARTER)

    @_inline
    def sin_cos_poly(a):
        z = a * a
        return fmuladd(a * z, horner(z, SIN), a), fmuladd(z * z, horner(z, COS), fmuladd(-HALF, z, ONE))

    @_jit("sin_float32")
    def sin(x):
        a, q = reduce_quadrant(x)
        s, c = sin_cos_poly(a)
        odd = (q == ONE) | (q == THREE)
        v = c if odd else s
        v = -v if q >= TWO else v  # nan x: nan a and q, every path stays nan
        return np.float32(v) if abs(x) >= SIN_TINY else x  # sin(x) rounds to x; keeps -0

    @_jit("cos_float32")
    def cos(x):
        a, q = reduce_quadrant(x)
        s, c = sin_cos_poly(a)
        odd = (q == ONE) | (q == THREE)
        v = s if odd else c
        return np.float32(-v if (q == ONE) | (q == TWO) else v)

    @_jit("erf_float32")
    def erf(x):
        xd = f64(x)
        a = abs(xd)
        small = xd * horner(xd * xd, ERF_SMALL)
        ac = a if a < ERFC_HI else ERFC_HI  # erf rounds to +-1 beyond
        em1, n = exp_core(-(ac * ac))  # ac * ac is exact in float64
        big = math.copysign(ONE - ldexp(em1 + ONE, n) * horner(ac, ERFC), xd)
        return np.float32(big if a >= ERF_SPLIT else small)  # nan takes `small`

    @_jit("pow_float32")
    def pow(x, y):  # noqa: A001 - lax's name
        xd, yd = f64(x), f64(y)
        ax = abs(xd)
        e, f = log_parts(ax)
        log_ax = fmuladd(e, LN2_HI, f + fmuladd(e, LN2_LO, log_tail(f)))
        log_ax = NEG_INF if ax == ZERO else log_ax
        log_ax = log_ax if ax < INF else ax  # inf -> inf, nan -> nan
        w = yd * log_ax  # |error| < 2^-45: float64 log of a float32 times a float32
        wc = w if w > POW_LO else POW_LO
        wc = wc if wc < POW_HI else POW_HI
        em1, n = exp_core(wc)
        mag = ldexp(em1 + ONE, n)
        mag = mag if w == w else w
        # C99 / NumPy special cases, as selects
        y_frac = rint(yd) != yd
        half = yd * HALF
        y_odd = (rint(yd) == yd) & (rint(half) != half)  # false for +-inf and huge (even) y
        mag = -mag if (math.copysign(ONE, xd) < ZERO) & y_odd else mag
        mag = NAN if (xd < ZERO) & (xd > NEG_INF) & (abs(yd) < INF) & y_frac else mag
        mag = ONE if (yd == ZERO) | (xd == ONE) | ((xd == -ONE) & (abs(yd) == INF)) else mag
        return np.float32(mag)

    return {"sin": sin, "cos": cos, "erf": erf, "pow": pow}
