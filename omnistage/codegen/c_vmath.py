"""c_vmath: the C port of `vmath`, for the C compilation tier.

Owns `SOURCE`, one C99 source string that defines every vmath kernel (`exp_float32`,
`pow_float32`, `erf_inv_float32`, ...) as a `static inline` function with the Numba kernel's name
and C types, and `NAMES` / `lookup`, the C counterpart of `vmath.VMATH` / `vmath.lookup`. The
translated C of a program includes SOURCE and calls the kernels by the same names the Numba
modules import.

Why a port and not a call into Numba: the C tier runs in processes that never import Numba, and
gcc only vectorizes a loop whose callee it can inline. So the algorithms are copied
statement for statement (same range reductions, same Cody-Waite splits, same minimax
coefficients, same special-value selects, written as ternaries), and every constant is emitted
from the same definitions vmath uses, as hex-float literals, so the C kernel rounds at the same
places with the same numbers. tests/codegen/test_c_vmath.py checks the constants against vmath's
tables and the results against the Numba kernels.

Vectorization (gcc 12 at c_tier.FLAGS): a loop calling any kernel vectorizes, with AVX2 or
AVX-512 (tests/codegen/test_c_vmath.py checks it), which takes care of four things gcc would
otherwise stop at:
- inlining: every function here is `VM_INLINE` (always_inline); -O2 leaves erf_inv and the float64
  kernels out of line, and a loop calling a function stays scalar;
- boolean masks: gcc 12 cannot vectorize a loop where a `&` / `|` of comparisons meets a constant
  that jump threading found for one arm of an earlier select ("relevant stmt not supported:
  patt = patt ? _x : 1"), so selects take one comparison each, and erf_inv's fma condition is an
  integer mask computed from the bits (`vm_xla_fma_f32`);
- int64 <-> double: AVX2 has no vector conversion between them and no arithmetic int64 shift, so
  the float64 exponent arithmetic goes through the bits unless the target has AVX-512DQ
  (`VM_INT64_VIA_BITS`, exact either way);
- sin/cos index their table with an int64, which gcc turns into a gather (or, where the tuning
  disfavours gathers, as for znver, an emulated one); with an int32 index it gives up.
All of it relies on the tier's -fno-trapping-math: without it gcc will not if-convert a
conversion or a comparison that may raise a flag in a select's arm (the log family's subnormal
select, sin/cos and erf_inv, and with AVX2 every kernel stay scalar then).

Fused multiply-add: vmath's `fmuladd` is `llvm.fmuladd`, which LLVM fuses exactly when the
target has fast FMA, and Numba's 'contract' flag also fuses two plain `a * b - c` of vmath (the
float64 log tail, float32 erf's `1 - p * q`). The C tier compiles with -ffp-contract=off, so
those spots are written as `VM_FMULADD_F32` / `VM_FMULADD_F64`, which default to `fmaf` / `fma`
when <math.h> says FMA is fast (FP_FAST_FMAF / FP_FAST_FMA: -march=native on an FMA machine) and
to `a * b + c` otherwise: the C kernel then rounds like the Numba kernel on the same machine,
bit for bit (the test checks it). Forcing the other flavour (defining the macros before SOURCE)
costs up to 2 ulp against Numba in expm1, tanh and logistic. vmath's explicit `fma` (support's
XLA fma in erf_inv) is `fmaf` in every flavour.

Must not import Numba or llvmlite (checked by the test): the coefficients and the Payne-Hanek
table come from `vmath_tables`, which vmath reads too; the other constants are computed here in
plain Python from the same formulas (`vmath._kernels` imports Numba), and the test checks them.
"""
import math
import struct
from string import Template

import numpy as np

from .vmath_tables import COEFFS, payne_hanek_table


def _f32(v):
    """v rounded to float32 (what np.float32(v) gives), as a Python float."""
    return struct.unpack("f", struct.pack("f", v))[0]


def _lit(v, single):
    """An exact C literal for v (a float32 value when `single`)."""
    if math.isnan(v):
        return "NAN" if single else "((double)NAN)"
    if math.isinf(v):
        inf = "HUGE_VALF" if single else "HUGE_VAL"
        return inf if v > 0 else "(-" + inf + ")"
    if single:
        assert _f32(v) == v, v
    # hex floats are exact by construction (a decimal literal relies on the compiler's rounding);
    # trailing zero digits dropped for the reader: 0x1.8p+0
    mant, exp = v.hex().split("p")
    text = mant.rstrip("0").rstrip(".") + "p" + exp + ("f" if single else "")
    return "(" + text + ")" if text.startswith("-") else text  # `x - -1` must not read as `x--1`


# minimax coefficients and the float32 Payne-Hanek table: vmath_tables, which vmath reads too


def poly(name, single):
    """COEFFS[name] as floats of the kernel's precision, highest order first (vmath's `_poly`)."""
    cast = _f32 if single else float
    return tuple(cast(float(c)) for c in reversed(COEFFS[name]))


def consts(single):
    """vmath's `_Consts` for one precision, as {name: float} (float32 values when `single`)."""
    c = _f32 if single else float
    log2e, log10e, log10_2 = 1.4426950408889634, 0.4342944819032518, 0.30102999566398120
    hi_bits = 15 if single else 40
    sub_shift = 25 if single else 54
    k = dict(
        ZERO=0.0, HALF=0.5, ONE=1.0, TWO=2.0, INF=math.inf, NEG_INF=-math.inf, NAN=math.nan,
        LOG2E=c(log2e),
        LN2_HI=c(0.693359375) if single else 6.93147180369123816490e-01,
        LN2_LO=c(-2.12194440e-4) if single else 1.90821492927058770002e-10,
        EXP_LO=-104.0 if single else -746.0, EXP_HI=89.0 if single else 710.0,
        EXP2_LO=-151.0 if single else -1076.0, EXP2_HI=129.0 if single else 1025.0,
        EM1_LO=-30.0 if single else -45.0,
        TINY=2.0**-25 if single else 2.0**-54,
        MIN_NORMAL=2.0**-126 if single else 2.0**-1022,
        SUB_SCALE=2.0**sub_shift, SUB_E=-float(sub_shift),
        LOG2E_HI=c(log2e),
        LOG2E_LO=c(log2e - c(log2e)) if single else 2.0355273740931033e-17,
        LOG10E=c(log10e), LOG10E_HI=c(log10e),
        LOG10E_LO=c(log10e - c(log10e)) if single else 1.098319650216765e-17,
        LOG10_2_HI=c(round(log10_2 * 2**hi_bits) / 2**hi_bits),
        TANH_CLAMP=10.0 if single else 20.0,
    )
    k["LOG10_2_LO"] = c(log10_2 - k["LOG10_2_HI"])
    k["TANH_SPLIT"] = 0.625 if single else k["TINY"]
    return k




# erf_inv_float32's constants c0..c58, as _xla_erf_inv.py spells them (np.float32 of each)
ERF_INV_CONSTS = (
    "1.0", "0.41421357", "inf", "0.0", "1.1754944e-38", "23", "127", "2155872255", "1056964608",
    "0.70710677", "-1.0", "-0.5", "0.070376836", "-0.1151461", "0.116769984", "-0.12420141",
    "0.14249323", "-0.16668057", "0.20000714", "-0.24999994", "0.3333333", "-0.00021219444",
    "0.6933594", "nan", "-inf", "4.527e-05", "0.49854103", "6.5787325", "29.911919", "60.94967",
    "57.112965", "20.039553", "15.062909", "83.04757", "221.7624", "309.09872", "216.42789",
    "60.11866", "5.0", "2.8102264e-08", "-0.00020021426", "-3.0", "-2.5", "3.4327394e-07",
    "0.00010095056", "-3.5233877e-06", "0.0013493432", "-4.3915065e-06", "-0.0036734284",
    "0.00021858087", "0.0057395077", "-0.001253725", "-0.0076224613", "-0.0041776816",
    "0.0094388705", "0.24664073", "1.001674", "1.5014094", "2.8329768",
)
_ERF_INV_INTS = {5: "23u", 6: "127", 7: "0x807fffffu", 8: "0x3f000000u"}  # uint32/int32 ones


def erf_inv_consts():
    """{index: float32 value} of erf_inv's float constants (np.float32(text) of each)."""
    return {i: float(np.float32(t)) for i, t in enumerate(ERF_INV_CONSTS) if i not in _ERF_INV_INTS}


# ---- C text ------------------------------------------------------------------------------------

_PRELUDE = r"""/* omnistage c_vmath: C port of omnistage.codegen.vmath (generated by c_vmath.py). */
#ifndef OS_PRELUDE  /* (a translated module has c_prelude's declarations instead) */
#include <math.h>
#include <stdint.h>
#include <string.h>
#endif

/* every kernel and helper is inlined where it is called: gcc -O2 leaves the bigger ones out of
   line, and a loop calling a function it did not inline stays scalar */
#define VM_INLINE static inline __attribute__((always_inline))

/* vmath's fmuladd (llvm.fmuladd): fused where the target has fast FMA, as LLVM does for Numba;
   define these before this source to force one flavour (see c_vmath.py) */
#ifndef VM_FMULADD_F32
#ifdef FP_FAST_FMAF
#define VM_FMULADD_F32(a, b, c) fmaf(a, b, c)
#else
#define VM_FMULADD_F32(a, b, c) ((a) * (b) + (c))
#endif
#endif
#ifndef VM_FMULADD_F64
#ifdef FP_FAST_FMA
#define VM_FMULADD_F64(a, b, c) fma(a, b, c)
#else
#define VM_FMULADD_F64(a, b, c) ((a) * (b) + (c))
#endif
#endif
"""

# Integer <-> float steps of the exponent arithmetic. float32: int32 conversions and shifts,
# which AVX2 vectorizes. float64: AVX2 has no vector conversion between int64 and double and no
# arithmetic shift of int64 (AVX-512DQ / AVX-512F have them), so without AVX-512DQ
# (VM_INT64_VIA_BITS) the integer value of an integral n (|n| < 2^51) is read from the bits of
# n + 1.5 2^52, whose unit in the last place is 1 (and back the same way), and the shifts are done
# on values made nonnegative. Both forms are exact, so they give the same results (the test builds
# both); the conversions are ~10% faster where they vectorize.
_INT_CONV_F32 = r"""VM_INLINE int32_t vm_int_f32(float n) { return (int32_t)n; }  /* n integral */
VM_INLINE float vm_from_int_f32(int32_t k) { return (float)k; }
VM_INLINE int32_t vm_half_f32(int32_t k) { return k >> 1; }  /* floor(k / 2): arithmetic shift (gcc) */
/* floor((bits - bits(sqrt(1/2))) / 2^23) */
VM_INLINE int32_t vm_exponent_f32(int32_t bits) { return (int32_t)((uint32_t)bits - 0x3F3504F3u) >> 23; }"""
_INT_CONV_F64 = r"""#ifndef VM_INT64_VIA_BITS
#ifdef __AVX512DQ__
#define VM_INT64_VIA_BITS 0
#else
#define VM_INT64_VIA_BITS 1
#endif
#endif
#if !VM_INT64_VIA_BITS
VM_INLINE int64_t vm_int_f64(double n) { return (int64_t)n; }  /* n integral */
VM_INLINE double vm_from_int_f64(int64_t k) { return (double)k; }
VM_INLINE int64_t vm_half_f64(int64_t k) { return k >> 1; }
VM_INLINE int64_t vm_exponent_f64(int64_t bits) {
    return (int64_t)((uint64_t)bits - UINT64_C(0x3FE6A09E667F3BCD)) >> 52;
}
#else
VM_INLINE int64_t vm_int_f64(double n) { return vm_bits_f64(n + 0x1.8p+52) - vm_bits_f64(0x1.8p+52); }
VM_INLINE double vm_from_int_f64(int64_t k) { return vm_float_f64(vm_bits_f64(0x1.8p+52) + k) - 0x1.8p+52; }
VM_INLINE int64_t vm_half_f64(int64_t k) { return (int64_t)((uint64_t)(k + 4096) >> 1) - 2048; }  /* |k| < 4096 */
VM_INLINE int64_t vm_exponent_f64(int64_t bits) {  /* bits of a positive normal: offset by 1024 */
    return (int64_t)(((uint64_t)bits - UINT64_C(0x3FE6A09E667F3BCD) + (UINT64_C(1024) << 52)) >> 52) - 1024;
}
#endif"""

# Helpers and the nine kernels both precisions share, instantiated per precision. ldexp is
# vmath's two-multiply form (2**n split into two normal powers, the first product exact):
# gcc would not vectorize a libm ldexpf call, and the result equals one correctly rounded
# x * 2**n, which is what Numba's vscalef gives on AVX-512.
_COMMON = Template(r"""
/* ---- $T ---- */
VM_INLINE $I vm_bits_$S($T x) { $I i; memcpy(&i, &x, sizeof i); return i; }
VM_INLINE $T vm_float_$S($I i) { $T x; memcpy(&x, &i, sizeof x); return x; }
$INT_CONV
/* 2**k for an integer k in the normal exponent range */
VM_INLINE $T vm_pow2i_$S($I k) { return vm_float_$S(($I)(($U)(k + $BIAS) << $MANT)); }
VM_INLINE $T vm_pow2_$S($T n) { return vm_pow2i_$S(vm_int_$S(n)); }
VM_INLINE $T vm_ldexp_$S($T p, $T n) {
    $I k = vm_int_$S(n), k1 = vm_half_$S(k), k2 = k - k1;
    return (p * vm_pow2i_$S(k1)) * vm_pow2i_$S(k2);
}
/* x = m 2^e with m in [sqrt(1/2), sqrt(2)), for a positive normal finite x */
VM_INLINE void vm_frexp_sqrt2_$S($T x, $T *m, $T *e) {
    $I bits = vm_bits_$S(x);
    $I k = vm_exponent_$S(bits);
    *m = vm_float_$S(($I)(($U)bits - (($U)k << $MANT)));
    *e = vm_from_int_$S(k);
}
$POLYS
/* (e^r - 1, n) with xc = n ln2 + r, |r| <= ln2/2, for a clamped (finite) xc */
$EXP_CORE
VM_INLINE $T vm_expm1_core_$S($T xc) {
    $T n, em1 = vm_exp_core_$S(xc, &n);
    $T t = vm_pow2_$S(n - $ONE);  /* 2^(n-1): 2^n itself may overflow */
    return $TWO * $FMULADD(t, em1, t - $HALF);
}
VM_INLINE void vm_log_parts_$S($T x, $T *e, $T *f) {
    int sub = x < $MIN_NORMAL;
    $T m, e0;
    vm_frexp_sqrt2_$S(sub ? x * $SUB_SCALE : x, &m, &e0);
    *e = sub ? e0 + $SUB_E : e0;
    *f = m - $ONE;
}
$LOG_TAIL
VM_INLINE $T vm_log_specials_$S($T x, $T y) {
    y = x < $INF ? y : x;
    y = x == $ZERO ? $NEG_INF : y;
    return x < $ZERO ? $NAN : y;
}

VM_INLINE $T exp_$N($T x) {
    $T xc = x > $EXP_LO ? x : $EXP_LO;  /* nan lands here too and is restored below */
    xc = xc < $EXP_HI ? xc : $EXP_HI;
    $T n, em1 = vm_exp_core_$S(xc, &n);
    $T y = vm_ldexp_$S(em1 + $ONE, n);
    return x == x ? y : x;
}
VM_INLINE $T exp2_$N($T x) {
    $T xc = x > $EXP2_LO ? x : $EXP2_LO;
    xc = xc < $EXP2_HI ? xc : $EXP2_HI;
    $T n = rint$MF(xc);
    $T r = xc - n;
    $T y = vm_ldexp_$S($FMULADD(r, vm_poly_exp2_${S}_$S(r), $ONE), n);
    return x == x ? y : x;
}
VM_INLINE $T expm1_$N($T x) {
    $T xc = x > $EM1_LO ? x : $EM1_LO;
    xc = xc < $EXP_HI ? xc : $EXP_HI;
    $T y = vm_expm1_core_$S(xc);
    return fabs$MF(x) >= $TINY ? y : x;  /* tiny |x|, -0, subnormals, nan give x */
}
VM_INLINE $T log_$N($T x) {
    $T e, f;
    vm_log_parts_$S(x, &e, &f);
    $T y = $FMULADD(e, $LN2_HI, f + $FMULADD(e, $LN2_LO, vm_log_tail_$S(f)));
    return vm_log_specials_$S(x, y);
}
VM_INLINE $T log2_$N($T x) {
    $T e, f;
    vm_log_parts_$S(x, &e, &f);
    $T y = e + $FMULADD(f, $LOG2E_HI, $FMULADD(f, $LOG2E_LO, vm_log_tail_$S(f) * $LOG2E));
    return vm_log_specials_$S(x, y);
}
VM_INLINE $T log10_$N($T x) {
    $T e, f;
    vm_log_parts_$S(x, &e, &f);
    $T lo = $FMULADD(f, $LOG10E_LO, $FMULADD(vm_log_tail_$S(f), $LOG10E, e * $LOG10_2_LO));
    $T y = $FMULADD(e, $LOG10_2_HI, $FMULADD(f, $LOG10E_HI, lo));
    return vm_log_specials_$S(x, y);
}
VM_INLINE $T log1p_$N($T x) {
    $T u = $ONE + x, e, f;
    vm_log_parts_$S(u, &e, &f);
    $T c = (x - (u - $ONE)) / u;  /* what rounding 1 + x lost */
    $T y = $FMULADD(e, $LN2_HI, f + (vm_log_tail_$S(f) + $FMULADD(e, $LN2_LO, c)));
    y = x < $INF ? y : x;
    y = x == -$ONE ? $NEG_INF : y;
    y = x < -$ONE ? $NAN : y;
    return fabs$MF(x) >= $TINY ? y : x;
}
VM_INLINE $T tanh_$N($T x) {
    $T a = fabs$MF(x);
    $T ac = a < $TANH_CLAMP ? a : $TANH_CLAMP;
    $T t = vm_expm1_core_$S($TWO * ac);
    $T big = copysign$MF(t / (t + $TWO), x);
    $T y = a >= $TANH_SPLIT ? big : $TANH_SMALL;  /* nan takes the small path */
    return a >= $TINY ? y : x;  /* keeps -0 */
}
VM_INLINE $T logistic_$N($T x) {
    $T a = fabs$MF(x);
    $T ac = a < $NEG_EXP_LO ? a : $NEG_EXP_LO;
    $T n, em1 = vm_exp_core_$S(-ac, &n);
    $T e = vm_ldexp_$S(em1 + $ONE, n);
    $T s = $ONE + e;
    $T s_err = ($ONE - s) + e;  /* exact error of 1 + e (Fast2Sum) */
    $T q = (x >= $ZERO ? $ONE : e) / s;
    $T y = $FMULADD(-q, s_err / s, q);
    return x == x ? y : x;
}
""")

_EXP_CORE = Template(r"""VM_INLINE $T vm_exp_core${TAG}_$S($T xc, $T *n_out) {
    $T n = rint$MF(xc * $LOG2E);
    $T r = $FMULADD(-n, $LN2_HI, xc);
    r = $FMULADD(-n, $LN2_LO, r);
    *n_out = n;
    return $FMULADD(vm_poly_$EM1(r), r * r, r);
}""")

_LOG_TAIL_F32 = r"""/* log1p(f) - f, |f| <= sqrt(2) - 1 */
VM_INLINE float vm_log_tail_f32(float f) {
    float z = f * f;
    return VM_FMULADD_F32(f * z, vm_poly_log_f32_f32(f), -0.5f * z);
}"""
_LOG_TAIL_F64 = r"""/* log1p(f) - f, |f| <= sqrt(2) - 1: fdlibm's s = f / (2 + f) form */
VM_INLINE double vm_log_tail_f64(double f) {
    double s = f / (2.0 + f);
    double z = s * s;
    double hfsq = 0.5 * f * f;
    /* vmath writes s * (...) - hfsq; Numba's 'contract' fuses it where fmuladd fuses */
    return VM_FMULADD_F64(s, VM_FMULADD_F64(z, vm_poly_atanh_f64_f64(z), hfsq), -hfsq);
}"""

# float32 kernels computed in float64 (vmath's `_build_f32_extras`)
_EXTRAS = Template(r"""
/* ---- float32 kernels computed in float64 ---- */
static const double vm_ph_g[4][256] = {
$TABLE
};
/* x = a + q pi/2, |a| <= pi/4, q mod 4 in *q: exact for every float32 x */
VM_INLINE double vm_reduce_quadrant(float x, double *q_out) {
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    int64_t e = (int64_t)((bits >> 23) & 0xffu);  /* 64-bit: a gather of doubles wants 64-bit indices */
    double xd = (double)x;
    double p0 = xd * vm_ph_g[0][e];
    double q0 = rint(p0);
    /* every product and partial sum here is exact, so Numba contracting them changes nothing */
    double s1 = (p0 - q0) + xd * vm_ph_g[1][e];
    double q1 = rint(s1);
    double r = ((s1 - q1) + xd * vm_ph_g[2][e]) + xd * vm_ph_g[3][e];
    double q = q0 + q1;
    *q_out = q - 4.0 * floor(q * 0.25);
    return r * $PIO2;
}
VM_INLINE void vm_sin_cos_poly(double a, double *s, double *c) {
    double z = a * a;
    *s = VM_FMULADD_F64(a * z, vm_poly_sin_f32_f64(z), a);
    *c = VM_FMULADD_F64(z * z, vm_poly_cos_f32_f64(z), VM_FMULADD_F64(-0.5, z, 1.0));
}
VM_INLINE float sin_float32(float x) {
    double q, s, c, a = vm_reduce_quadrant(x, &q);
    vm_sin_cos_poly(a, &s, &c);
    /* q is 0, 1, 2 or 3 (or nan): one comparison per select, no boolean | (see vm_xla_fma_f32) */
    double v = q - 2.0 * floor(q * 0.5) == 1.0 ? c : s;  /* odd q */
    v = q >= 2.0 ? -v : v;  /* nan x: every path stays nan */
    return fabsf(x) >= $SIN_TINY ? (float)v : x;  /* sin(x) rounds to x; keeps -0 */
}
VM_INLINE float cos_float32(float x) {
    double q, s, c, a = vm_reduce_quadrant(x, &q);
    vm_sin_cos_poly(a, &s, &c);
    double v = q - 2.0 * floor(q * 0.5) == 1.0 ? s : c;  /* odd q */
    return (float)(fabs(q - 1.5) == 0.5 ? -v : v);  /* q is 1 or 2 */
}
VM_INLINE float erf_float32(float x) {
    double xd = (double)x;
    double a = fabs(xd);
    double small = xd * vm_poly_erf_small_f32_f64(xd * xd);
    double ac = a < 3.95 ? a : 3.95;  /* erf rounds to +-1 beyond */
    double n, em1 = vm_exp_core32_f64(-(ac * ac), &n);
    /* 1 - p * q, contracted like Numba's (see vm_log_tail_f64) */
    double big = copysign(VM_FMULADD_F64(-vm_ldexp_f64(em1 + 1.0, n), vm_poly_erfc_f32_f64(ac), 1.0), xd);
    return (float)(a >= 0.875 ? big : small);  /* nan takes `small` */
}
VM_INLINE float pow_float32(float x, float y) {
    double xd = (double)x, yd = (double)y;
    double ax = fabs(xd), e, f;
    vm_log_parts_f64(ax, &e, &f);
    double log_ax = VM_FMULADD_F64(e, $LN2_HI, f + VM_FMULADD_F64(e, $LN2_LO, vm_log_tail_f64(f)));
    log_ax = ax == 0.0 ? -HUGE_VAL : log_ax;
    log_ax = ax < HUGE_VAL ? log_ax : ax;  /* inf -> inf, nan -> nan */
    double w = yd * log_ax;
    double wc = w > -104.0 ? w : -104.0;  /* exp(w) under/overflows float32 beyond */
    wc = wc < 89.0 ? wc : 89.0;
    double n, em1 = vm_exp_core32_f64(wc, &n);
    double mag = vm_ldexp_f64(em1 + 1.0, n);
    mag = w == w ? mag : w;
    /* C99 / NumPy special cases, as selects */
    int y_frac = rint(yd) != yd;
    double half = yd * 0.5;
    int y_odd = (rint(yd) == yd) & (rint(half) != half);
    mag = ((copysign(1.0, xd) < 0.0) & y_odd) ? -mag : mag;
    mag = ((xd < 0.0) & (xd > -HUGE_VAL) & (fabs(yd) < HUGE_VAL) & y_frac) ? ((double)NAN) : mag;
    mag = ((yd == 0.0) | (xd == 1.0) | ((xd == -1.0) & (fabs(yd) == HUGE_VAL))) ? 1.0 : mag;
    return (float)mag;
}
""")

# XLA's erf_inv expansion, statement for statement as _xla_erf_inv.py has it. `vm_xla_fma_f32`
# is support.fma_float32: one rounding unless the product overflows or is near the subnormals.
_ERF_INV = Template(r"""
/* ---- XLA's erf_inv expansion (vmath/_xla_erf_inv.py) ---- */
/* The condition is computed on the bits, as an all-ones / all-zeros int32 mask (a finite naive
   sum implies a finite product; |prod| == 0 or > 2^-101 is `bits - 1 > bits(2^-101) - 1`): gcc 12
   does not vectorize boolean conditions that its jump threading merges with constants (erf_inv's
   selects make it do so), and a mask that is an int32 like any other it vectorizes. */
VM_INLINE float vm_xla_fma_f32(float a, float b, float c) {
    float prod = a * b;
    float naive = prod + c;
    float fused = fmaf(a, b, c);
    int32_t pb = vm_bits_f32(prod) & INT32_MAX, nb = vm_bits_f32(naive), fb = vm_bits_f32(fused);
    int32_t finite = ((nb & INT32_MAX) - 0x7f800000) >> 31;  /* arithmetic shifts (gcc) */
    int32_t normal = ((0x0d000000 - pb) >> 31) | ((pb - 1) >> 31);  /* 0x0d000000: 2^-101 */
    int32_t m = finite & normal;
    return vm_float_f32((fb & m) | (nb & ~m));
}
VM_INLINE float erf_inv_float32(float a0) {
    float abs_2 = fabsf(a0);
    int eq_3 = abs_2 == $c0;
    float neg_1 = -a0;
    float mul_1 = a0 * neg_1;
    float abs_1 = fabsf(mul_1);
    int lt_2 = abs_1 < $c1;
    float add_1 = mul_1 + $c0;
    int eq_2 = add_1 == $c2;
    int eq_1 = add_1 == $c3;
    int gt_2 = add_1 > $c3;
    int gt_1 = add_1 > $c4;
    float select_n_1 = gt_1 ? add_1 : $c4;
    uint32_t bitcast_convert_type_1;
    memcpy(&bitcast_convert_type_1, &select_n_1, sizeof bitcast_convert_type_1);
    uint32_t shift_right_logical_1 = bitcast_convert_type_1 >> $c5;
    int32_t sub_1 = (int32_t)shift_right_logical_1 - $c6;
    float add_2 = (float)sub_1 + $c0;
    uint32_t or__1 = (bitcast_convert_type_1 & $c7) | $c8;
    float bitcast_convert_type_2;
    memcpy(&bitcast_convert_type_2, &or__1, sizeof bitcast_convert_type_2);
    int lt_1 = bitcast_convert_type_2 < $c9;
    float select_n_3 = lt_1 ? $c0 : $c3;
    float sub_2 = add_2 - select_n_3;
    float add_3 = bitcast_convert_type_2 + $c10;
    float select_n_2 = lt_1 ? bitcast_convert_type_2 : $c3;
    float add_4 = add_3 + select_n_2;
    float mul_2 = add_4 * add_4;
    float fma_10 = vm_xla_fma_f32(mul_2, $c11, add_4);
    float fma_1 = vm_xla_fma_f32(add_4, $c12, $c13);
    float fma_2 = vm_xla_fma_f32(fma_1, add_4, $c14);
    float mul_3 = mul_2 * add_4;
    float fma_3 = vm_xla_fma_f32(add_4, $c15, $c16);
    float fma_4 = vm_xla_fma_f32(fma_3, add_4, $c17);
    float fma_7 = vm_xla_fma_f32(fma_2, mul_3, fma_4);
    float fma_5 = vm_xla_fma_f32(add_4, $c18, $c19);
    float fma_6 = vm_xla_fma_f32(fma_5, add_4, $c20);
    float fma_8 = vm_xla_fma_f32(fma_7, mul_3, fma_6);
    float mul_4 = sub_2 * $c21;
    float fma_9 = vm_xla_fma_f32(fma_8, mul_3, mul_4);
    float add_5 = fma_10 + fma_9;
    float fma_11 = vm_xla_fma_f32(sub_2, $c22, add_5);
    float select_n_4 = gt_2 ? fma_11 : $c23;
    float select_n_5 = eq_1 ? $c24 : select_n_4;
    float select_n_6 = eq_2 ? $c2 : select_n_5;
    float mul_6 = mul_1 * mul_1;
    float mul_7 = mul_1 * mul_6;
    float mul_5 = mul_1 * $c3;
    float add_6 = mul_5 + $c25;
    float fma_12 = vm_xla_fma_f32(add_6, mul_1, $c26);
    float fma_14 = vm_xla_fma_f32(fma_12, mul_1, $c27);
    float fma_16 = vm_xla_fma_f32(fma_14, mul_1, $c28);
    float fma_18 = vm_xla_fma_f32(fma_16, mul_1, $c29);
    float fma_20 = vm_xla_fma_f32(fma_18, mul_1, $c30);
    float fma_22 = vm_xla_fma_f32(fma_20, mul_1, $c31);
    float add_7 = mul_5 + $c0;
    float fma_13 = vm_xla_fma_f32(add_7, mul_1, $c32);
    float fma_15 = vm_xla_fma_f32(fma_13, mul_1, $c33);
    float fma_17 = vm_xla_fma_f32(fma_15, mul_1, $c34);
    float fma_19 = vm_xla_fma_f32(fma_17, mul_1, $c35);
    float fma_21 = vm_xla_fma_f32(fma_19, mul_1, $c36);
    float fma_23 = vm_xla_fma_f32(fma_21, mul_1, $c37);
    float div_1 = fma_22 / fma_23;
    float mul_8 = mul_7 * div_1;
    float fma_24 = vm_xla_fma_f32(mul_6, $c11, mul_8);
    float add_8 = mul_1 + fma_24;
    float select_n_7 = lt_2 ? add_8 : select_n_6;
    float neg_2 = -select_n_7;
    int lt_3 = neg_2 < $c38;
    float select_n_9 = lt_3 ? $c39 : $c40;
    float sqrt_1 = sqrtf(neg_2);
    float add_10 = sqrt_1 + $c41;
    float add_9 = neg_2 + $c42;
    float select_n_8 = lt_3 ? add_9 : add_10;
    float select_n_10 = lt_3 ? $c43 : $c44;
    float fma_25 = vm_xla_fma_f32(select_n_9, select_n_8, select_n_10);
    float select_n_11 = lt_3 ? $c45 : $c46;
    float fma_26 = vm_xla_fma_f32(fma_25, select_n_8, select_n_11);
    float select_n_12 = lt_3 ? $c47 : $c48;
    float fma_27 = vm_xla_fma_f32(fma_26, select_n_8, select_n_12);
    float select_n_13 = lt_3 ? $c49 : $c50;
    float fma_28 = vm_xla_fma_f32(fma_27, select_n_8, select_n_13);
    float select_n_14 = lt_3 ? $c51 : $c52;
    float fma_29 = vm_xla_fma_f32(fma_28, select_n_8, select_n_14);
    float select_n_15 = lt_3 ? $c53 : $c54;
    float fma_30 = vm_xla_fma_f32(fma_29, select_n_8, select_n_15);
    float select_n_16 = lt_3 ? $c55 : $c56;
    float fma_31 = vm_xla_fma_f32(fma_30, select_n_8, select_n_16);
    float select_n_17 = lt_3 ? $c57 : $c58;
    float fma_32 = vm_xla_fma_f32(fma_31, select_n_8, select_n_17);
    float mul_9 = fma_32 * a0;
    float mul_10 = a0 * $c2;
    return eq_3 ? mul_10 : mul_9;
}
""")


def _poly_c(name, single, tag):
    """A Horner evaluator `vm_poly_<name>_<tag>(t)` (vmath's `horner`, unrolled)."""
    t, fmuladd = ("float", "VM_FMULADD_F32") if single else ("double", "VM_FMULADD_F64")
    cs = [_lit(v, single) for v in poly(name, single)]
    lines = [f"VM_INLINE {t} vm_poly_{name}_{tag}({t} t) {{", f"    {t} a = {cs[0]};"]
    lines += [f"    a = {fmuladd}(a, t, {c});" for c in cs[1:]]
    return "\n".join(lines + ["    return a;", "}"])


def _common(single):
    k = consts(single)
    s = "f32" if single else "f64"
    sub = {name: _lit(v, single) for name, v in k.items()}
    sub["NEG_EXP_LO"] = _lit(-k["EXP_LO"], single)
    fmuladd = "VM_FMULADD_F32" if single else "VM_FMULADD_F64"
    sub.update(
        T="float" if single else "double", I="int32_t" if single else "int64_t",
        U="uint32_t" if single else "uint64_t", MANT="23" if single else "52",
        BIAS="127" if single else "1023", S=s, N="float32" if single else "float64",
        MF="f" if single else "", FMULADD=fmuladd,
        INT_CONV=_INT_CONV_F32 if single else _INT_CONV_F64,
    )
    polys = [("em1_" + s, single), ("exp2_" + s, single), ("log_f32" if single else "atanh_f64", single)]
    if single:
        polys.append(("tanh_f32", True))
        sub["TANH_SMALL"] = "VM_FMULADD_F32(x * (x * x), vm_poly_tanh_f32_f32(x * x), x)"
    else:
        sub["TANH_SMALL"] = "x"
    sub["POLYS"] = "\n".join(_poly_c(name, sg, s) for name, sg in polys)
    sub["EXP_CORE"] = _EXP_CORE.substitute(sub, TAG="", EM1=f"em1_{s}_{s}")
    sub["LOG_TAIL"] = _LOG_TAIL_F32 if single else _LOG_TAIL_F64
    return _COMMON.substitute(sub)


def _extras():
    k = consts(False)
    sub = {name: _lit(v, False) for name, v in k.items()}
    sub.update(T="double", S="f64", MF="", FMULADD="VM_FMULADD_F64")
    polys = "\n".join(_poly_c(name, False, "f64") for name in
                      ("em1_f32", "sin_f32", "cos_f32", "erf_small_f32", "erfc_f32"))
    # float32-accurate exp in float64 arithmetic: the float32 polynomial, float64 reduction
    core = _EXP_CORE.substitute(sub, TAG="32", EM1="em1_f32_f64")
    rows = ["    {" + ", ".join(_lit(v, False) for v in row) + "}" for row in payne_hanek_table()]
    text = _EXTRAS.substitute(TABLE=",\n".join(rows), PIO2=_lit(math.pi / 2, False),
                              SIN_TINY=_lit(2.0**-12, True), LN2_HI=sub["LN2_HI"], LN2_LO=sub["LN2_LO"])
    return polys + "\n" + core + "\n" + text


def _erf_inv():
    sub = {f"c{i}": _lit(v, True) for i, v in erf_inv_consts().items()}
    sub.update({f"c{i}": text for i, text in _ERF_INV_INTS.items()})
    return _ERF_INV.substitute(sub)


SOURCE = _PRELUDE + _common(True) + _common(False) + _extras() + _erf_inv()

# (lax primitive, dtype name) -> C function name: vmath.VMATH's and vmath.EXPANSIONS' keys
_UNARY = ("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "tanh", "logistic")
NAMES = {
    **{(name, dtype): f"{name}_{dtype}" for dtype in ("float32", "float64") for name in _UNARY},
    **{(name, "float32"): f"{name}_float32" for name in ("sin", "cos", "erf", "pow", "erf_inv")},
}


def lookup(name, dtype):
    """The C kernel's function name for lax primitive `name` on `dtype`, or None (vmath.lookup's
    contract: dtype is a NumPy dtype or anything np.dtype accepts)."""
    try:
        key = np.dtype(dtype).name
    except TypeError:
        return None
    return NAMES.get((name, key))
