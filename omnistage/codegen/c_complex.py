"""Complex numbers in the native tier (c_tier.py): the C types `os_c64`/`os_c128` and the C
ports of the complex helpers in support.py (`complex_mul` ... `complex_sign`, `cmax`, `cmin`),
as one C source placed after c_runtime.SOURCE.

Why ports and not C's `_Complex`: the Numba path computes these with Numba's own
implementations (numba/cpython/numbers.py for * / abs, numba/np/math/cmathimpl.py and
numba/cpython/cmathimpl.py for the cmath-style functions, numba/np/npyfuncs.py for NumPy's
sinh/cosh/tanh/arccosh), and a program's results must not depend on which tier built it.
C99's complex multiply and divide follow Annex G (other special-value rules, other rounding)
and libm's csqrt/cexp/... are other algorithms. So each function here is Numba's Python source
transcribed statement by statement, in the same precision, calling the same libm functions
(Numba's `math.exp/log/sin/cos` are LLVM intrinsics that become calls to libm's exp/expf...,
its `math.hypot/atan2/tan/sinh/...` call libm by name): the results are the same bits (NaN
payloads and NaN signs aside; tests/codegen/test_c_complex.py checks).

Precision: Numba types `complex64` code by its scalar rules, and its implementations mix a
float32 value with float64 literals (`1. - z.real`) or float64 globals, so many complex64
functions compute partly or wholly in double and round at the end (sqrt after its special
cases, tan, arcsin/arccos/arcsinh's sqrt-based branch, arctanh). The `_c64` functions below
follow that typing value by value (it was read off Numba's LLVM IR); they are not the `_c128`
ones with `float`. Where Numba calls a cmath function on a complex128 value from complex64
code (`cmath.sqrt(complex(1. - z.real, -z.imag))`), the port calls the `_c128` function.

Not the same as Numba, deliberately: where Numba's code divides by zero it raises
ZeroDivisionError (its compiled helpers use Python's error model). That happens for complex
division by 0+0j (here: NumPy's value, re/0 and im/0, like `np.divide`), and, complex128
only, for sqrt of (+-0 +- 5e-324j) and the arcsin/arccos/arcsinh/arccosh arguments that reach
it (1 +- 5e-324j and the like; here: the IEEE value of the division, an infinity). No other
function here divides by a zero Numba does not also guard.
"""

# Constants are Numba's, as the Python floats (or numpy.float32 values) its code uses:
#   sqrt:  THRES = MAX / (1 + sqrt(2)); complex64: numpy.float32(FLT_MAX) / 2.414... is a
#          float32 (NumPy 2 keeps the float32), complex128: a double
#   acos, acosh, asinh: THRES = FLT_MAX / 4 (a float32, for complex128 too); LN_4 = log(4)
#   atanh: THRES_LARGE = sqrt(FLT_MAX / 4), THRES_SMALL = sqrt(FLT_MIN), PI_12 = pi / 2
SOURCE = r"""
typedef struct { float re, im; } os_c64;
typedef struct { double re, im; } os_c128;

#define OS_CSQRT_THRES_C64 0x1.a82796p+126f
#define OS_CSQRT_THRES_C128 0x1.a827999fcef32p+1022
#define OS_CTHRES 0x1.fffffep+125f
#define OS_CLN_4 0x1.62e42fefa39efp+0
#define OS_CTHRES_LARGE 0x1.fffffeffffffcp+62
#define OS_CTHRES_SMALL 0x1.0p-63
#define OS_CPI_12 0x1.921fb54442d18p+0

/* GCC before 13 ignores -ffp-contract=off in one place: its SLP vectorizer turns a pair of
   lanes x*y - z, u*v + w (a complex product's real and imaginary parts) into one vfmaddsub /
   vfmsubadd, a fused multiply-add that rounds once where Numba rounds twice (gcc 12.2 did it
   here in cmul, cdiv, sign and tanh). A product that passes through an empty asm is no longer
   a multiplication the vectorizer can fuse; OS_CKEEP marks every product that is added or
   subtracted in such a pair. (It also keeps the loops that call these scalar, which rounding
   requires anyway.) */
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define OS_CKEEP(v) __asm__("" : "+x"(v))
#elif defined(__GNUC__) && defined(__aarch64__)
#define OS_CKEEP(v) __asm__("" : "+w"(v))
#else
#define OS_CKEEP(v) ((void)0)
#endif

static inline os_c64 os_c64_make(float re, float im) { os_c64 z; z.re = re; z.im = im; return z; }
static inline os_c128 os_c128_make(double re, double im) { os_c128 z; z.re = re; z.im = im; return z; }

/* ---- componentwise: the same in both precisions ---- */
#define OS_CSIMPLE(T, S, F)                                                                       \
static inline T os_cadd_##S(T a, T b) { return T##_make(a.re + b.re, a.im + b.im); }             \
static inline T os_csub_##S(T a, T b) { return T##_make(a.re - b.re, a.im - b.im); }             \
static inline T os_cneg_##S(T a) { return T##_make(-a.re, -a.im); }                              \
static inline T os_cconj_##S(T a) { return T##_make(a.re, -a.im); }                              \
/* == is ordered (NaN unequal), != unordered: Numba's fcmp_ordered / fcmp_unordered */          \
static inline bool os_ceq_##S(T a, T b) { return a.re == b.re && a.im == b.im; }                 \
static inline bool os_cne_##S(T a, T b) { return a.re != b.re || a.im != b.im; }                 \
/* NumPy's CGE/CLE (support._complex_ge/_le): lexicographic; a NaN imaginary part counts only \
   when the real parts tie */                                                                    \
static inline bool os_cge_##S(T a, T b) {                                                        \
    return (a.re > b.re && a.im == a.im && b.im == b.im) || (a.re == b.re && a.im >= b.im);     \
}                                                                                                \
static inline bool os_cle_##S(T a, T b) {                                                        \
    return (a.re < b.re && a.im == a.im && b.im == b.im) || (a.re == b.re && a.im <= b.im);     \
}                                                                                                \
/* support.cmax / cmin: a NaN in a propagates, else the larger (smaller) in NumPy's order */     \
static inline T os_cmax_##S(T a, T b) {                                                          \
    if (a.re != a.re || a.im != a.im || os_cge_##S(a, b)) return a;                             \
    return b;                                                                                    \
}                                                                                                \
static inline T os_cmin_##S(T a, T b) {                                                          \
    if (a.re != a.re || a.im != a.im || os_cle_##S(a, b)) return a;                             \
    return b;                                                                                    \
}                                                                                                \
/* numbers.complex_mul_impl (CPython's _Py_c_prod before 3.14: no inf recovery) */              \
static inline T os_cmul_##S(T z, T w) {                                                          \
    F ac = z.re * w.re, bd = z.im * w.im, ad = z.re * w.im, bc = z.im * w.re;                   \
    OS_CKEEP(ac); OS_CKEEP(bd); OS_CKEEP(ad); OS_CKEEP(bc);                                      \
    return T##_make(ac - bd, ad + bc);                                                           \
}
OS_CSIMPLE(os_c64, c64, float)
OS_CSIMPLE(os_c128, c128, double)
#undef OS_CSIMPLE

/* numbers.complex_div_impl (CPython's _Py_c_quot, Smith's algorithm); the same statements in
   both precisions. Numba raises ZeroDivisionError for b == 0; this returns np.divide's value */
#define OS_CDIV(T, S, F, FABS)                                                                   \
static inline T os_cdiv_##S(T a, T b) {                                                          \
    F ar = a.re, ai = a.im, br = b.re, bi = b.im;                                                \
    F abr = FABS(br), abi = FABS(bi);                                                            \
    if (abr >= abi) {                                                                            \
        if (abr == 0) return T##_make(ar / abr, ai / abi);                                       \
        F ratio = bi / br;                                                                       \
        F bir = bi * ratio, air = ai * ratio, arr = ar * ratio;                                  \
        OS_CKEEP(bir); OS_CKEEP(air); OS_CKEEP(arr);                                             \
        F denom = br + bir;                                                                      \
        return T##_make((ar + air) / denom, (ai - arr) / denom);                                 \
    } else if (abi >= abr) {                                                                     \
        F ratio = br / bi;                                                                       \
        F brr = br * ratio, arr = ar * ratio, air = ai * ratio;                                  \
        OS_CKEEP(brr); OS_CKEEP(arr); OS_CKEEP(air);                                             \
        F denom = brr + bi;                                                                      \
        return T##_make((arr + ai) / denom, (air - ar) / denom);                                 \
    }                                                                                            \
    return T##_make(NAN, NAN); /* a NaN in b */                                                  \
}
OS_CDIV(os_c64, c64, float, fabsf)
OS_CDIV(os_c128, c128, double, fabs)
#undef OS_CDIV

/* numbers.complex_abs_impl: hypot in the parts' precision */
static inline float os_cabs_c64(os_c64 z) { return hypotf(z.re, z.im); }
static inline double os_cabs_c128(os_c128 z) { return hypot(z.re, z.im); }

/* np.sign (NumPy >= 2): z / |z|, a complex division by (|z|, 0); 0 for 0 */
static inline os_c64 os_csign_c64(os_c64 z) {
    float h = hypotf(z.re, z.im);
    if (h == 0) return os_c64_make(0.0f, 0.0f);
    return os_cdiv_c64(z, os_c64_make(h, 0.0f));
}
static inline os_c128 os_csign_c128(os_c128 z) {
    double h = hypot(z.re, z.im);
    if (h == 0) return os_c128_make(0.0, 0.0);
    return os_cdiv_c128(z, os_c128_make(h, 0.0));
}

/* cmathimpl.exp_impl (all in the parts' precision for both types); `if y:` is true for NaN */
#define OS_CEXP(T, S, F, EXP, COS, SIN)                                                          \
static inline T os_cexp_##S(T z) {                                                               \
    F x = z.re, y = z.im;                                                                        \
    if (isfinite(x)) {                                                                           \
        if (isfinite(y)) {                                                                       \
            F c = COS(y), s = SIN(y), r = EXP(x);                                                \
            return T##_make(r * c, r * s);                                                       \
        }                                                                                        \
        return T##_make(NAN, NAN);                                                               \
    }                                                                                            \
    if (isnan(x)) return y != 0 ? T##_make(x, x) : T##_make(x, y);                               \
    if (x > 0) { /* +inf; a zero cos or sin stays zero instead of inf * 0 = NaN */             \
        if (isfinite(y)) {                                                                       \
            F re = COS(y), im = SIN(y);                                                          \
            if (re != 0) re *= x;                                                                \
            if (im != 0) im *= x;                                                                \
            return T##_make(re, im);                                                             \
        }                                                                                        \
        return T##_make(x, NAN);                                                                 \
    }                                                                                            \
    if (isfinite(y)) { /* -inf */                                                                \
        F r = EXP(x), c = COS(y), s = SIN(y);                                                    \
        return T##_make(r * c, r * s);                                                           \
    }                                                                                            \
    return T##_make(0, 0);                                                                       \
}
OS_CEXP(os_c64, c64, float, expf, cosf, sinf)
OS_CEXP(os_c128, c128, double, exp, cos, sin)
#undef OS_CEXP

/* cmathimpl.log_impl: log|z| + i atan2(im, re), no special cases */
static inline os_c64 os_clog_c64(os_c64 z) { return os_c64_make(logf(hypotf(z.re, z.im)), atan2f(z.im, z.re)); }
static inline os_c128 os_clog_c128(os_c128 z) { return os_c128_make(log(hypot(z.re, z.im)), atan2(z.im, z.re)); }

/* cmathimpl.sqrt_impl (NumPy's npy_csqrt). complex128: all double. complex64: the special
   cases in float; then `a *= 0.25` (a float64 literal) makes a and b float64 in Numba's typing,
   so the rest is double (hypot, sqrt) rounded at the end. `b / (2 * t)` with t == 0 (only
   complex128 0 +- 5e-324j) raises in Numba; here it is the IEEE infinity */
static inline os_c128 os_csqrt_c128(os_c128 z) {
    double a = z.re, b = z.im;
    if (a == 0.0 && b == 0.0) return os_c128_make(fabs(b), b);
    if (isinf(b)) return os_c128_make(fabs(b), b);
    if (isnan(a)) return os_c128_make(a, a);
    if (isinf(a)) {
        if (a < 0.0) return os_c128_make(fabs(b - b), copysign(a, b));
        return os_c128_make(a, copysign(b - b, b));
    }
    bool scale = fabs(a) >= OS_CSQRT_THRES_C128 || fabs(b) >= OS_CSQRT_THRES_C128;
    if (scale) { a *= 0.25; b *= 0.25; }
    double re, im, t;
    if (a >= 0) {
        t = sqrt((a + hypot(a, b)) * 0.5);
        re = t;
        im = b / (2 * t);
    } else {
        t = sqrt((-a + hypot(a, b)) * 0.5);
        re = fabs(b) / (2 * t);
        im = copysign(t, b);
    }
    if (scale) return os_c128_make(re * 2, im);
    return os_c128_make(re, im);
}
static inline os_c64 os_csqrt_c64(os_c64 z) {
    float af = z.re, bf = z.im;
    if (af == 0.0f && bf == 0.0f) return os_c64_make(fabsf(bf), bf);
    if (isinf(bf)) return os_c64_make(fabsf(bf), bf);
    if (isnan(af)) return os_c64_make(af, af);
    if (isinf(af)) {
        if (af < 0.0f) return os_c64_make(fabsf(bf - bf), copysignf(af, bf));
        return os_c64_make(af, copysignf(bf - bf, bf));
    }
    bool scale = fabsf(af) >= OS_CSQRT_THRES_C64 || fabsf(bf) >= OS_CSQRT_THRES_C64;
    double a = af, b = bf;
    if (scale) { a *= 0.25; b *= 0.25; }
    double re, im, t;
    if (a >= 0) {
        t = sqrt((a + hypot(a, b)) * 0.5);
        re = t;
        im = b / (2 * t);
    } else {
        t = sqrt((-a + hypot(a, b)) * 0.5);
        re = fabs(b) / (2 * t);
        im = copysign(t, b);
    }
    if (scale) return os_c64_make((float)(re * 2), (float)im);
    return os_c64_make((float)re, (float)im);
}

/* cmath.sinh / cmath.cosh of x + yj (cmathimpl.impl_cmath_sinh/cosh), which np.sin and np.cos
   use: in the parts' precision for both types */
#define OS_CMSINHCOSH(T, S, F, FABS, COPYSIGN, SIN, COS, SINH, COSH)                             \
static inline T os__cmsinh_##S(F x, F y) {                                                       \
    if (isinf(x)) {                                                                              \
        F re, im;                                                                                \
        if (isnan(y)) { re = x; im = y; }                                                        \
        else {                                                                                   \
            re = COS(y); im = SIN(y);                                                            \
            if (re != 0) re *= x;                                                                \
            if (im != 0) im *= FABS(x);                                                          \
        }                                                                                        \
        return T##_make(re, im);                                                                 \
    }                                                                                            \
    return T##_make(COS(y) * SINH(x), SIN(y) * COSH(x));                                         \
}                                                                                                \
static inline T os__cmcosh_##S(F x, F y) {                                                       \
    if (isinf(x)) {                                                                              \
        F re, im;                                                                                \
        if (isnan(y) || y == 0) { re = FABS(x); im = y; }                                        \
        else { re = COPYSIGN(x, COS(y)); im = COPYSIGN(x, SIN(y)); }                             \
        if (x < 0) im = -im;                                                                     \
        return T##_make(re, im);                                                                 \
    }                                                                                            \
    return T##_make(COS(y) * COSH(x), SIN(y) * SINH(x));                                         \
}                                                                                                \
/* sin z = -i sinh(iz), cos z = cosh(iz) (cmathimpl.sin_impl / cos_impl) */                     \
static inline T os_csin_##S(T z) { T r = os__cmsinh_##S(-z.im, z.re); return T##_make(r.im, -r.re); } \
static inline T os_ccos_##S(T z) { return os__cmcosh_##S(-z.im, z.re); }                         \
/* np.sinh / np.cosh / np.tanh on complex: npyfuncs' formulas, no special cases */              \
static inline T os_csinh_##S(T z) { return T##_make(COS(z.im) * SINH(z.re), SIN(z.im) * COSH(z.re)); } \
static inline T os_ccosh_##S(T z) { return T##_make(COS(z.im) * COSH(z.re), SIN(z.im) * SINH(z.re)); } \
static inline T os_ctanh_##S(T z) {                                                              \
    F si = SIN(z.im), ci = COS(z.im), shr = SINH(z.re), chr = COSH(z.re);                        \
    F rs = ci * shr, is = si * chr, rc = ci * chr, ic = si * shr;                                \
    F rc2 = rc * rc, ic2 = ic * ic, rsrc = rs * rc, isic = is * ic, isrc = is * rc, rsic = rs * ic; \
    OS_CKEEP(rc2); OS_CKEEP(ic2); OS_CKEEP(rsrc); OS_CKEEP(isic); OS_CKEEP(isrc); OS_CKEEP(rsic); \
    F d = rc2 + ic2;                                                                             \
    F inv_d = (F)1 / d;                                                                          \
    F numr = rsrc + isic, numi = isrc - rsic;                                                    \
    return T##_make(numr * inv_d, numi * inv_d);                                                 \
}
OS_CMSINHCOSH(os_c64, c64, float, fabsf, copysignf, sinf, cosf, sinhf, coshf)
OS_CMSINHCOSH(os_c128, c128, double, fabs, copysign, sin, cos, sinh, cosh)
#undef OS_CMSINHCOSH

/* cmath.tanh of x + yj (CPython's c_tanh as cmathimpl.impl_cmath_tanh); its result is complex128
   for both types: complex64 mixes float tanh/tan/cosh with float64 literals */
static inline os_c128 os__cmtanh_c128(double x, double y) {
    if (isinf(x)) return os_c128_make(copysign(1., x), isinf(y) ? 0. : copysign(0., sin(2. * y)));
    double tx = tanh(x), ty = tan(y), cx = 1. / cosh(x);
    double txty = tx * ty, t2 = txty * txty, ty2 = ty * ty;
    OS_CKEEP(t2); OS_CKEEP(ty2);
    double denom = 1. + t2;
    return os_c128_make(tx * (1. + ty2) / denom, ((ty / denom) * cx) * cx);
}
static inline os_c128 os__cmtanh_c64(float x, float y) {
    if (isinf(x)) return os_c128_make(copysign(1., (double)x), isinf(y) ? 0. : copysign(0., sin(2. * (double)y)));
    float tx = tanhf(x), ty = tanf(y);
    double cx = 1. / (double)coshf(x);
    float txty = tx * ty, t2 = txty * txty, ty2 = ty * ty;
    OS_CKEEP(t2); OS_CKEEP(ty2);
    double denom = 1. + (double)t2;
    return os_c128_make((double)tx * (1. + (double)ty2) / denom, (((double)ty / denom) * cx) * cx);
}
/* tan z = -i tanh(iz) (cmathimpl.tan_impl) */
static inline os_c64 os_ctan_c64(os_c64 z) {
    os_c128 r = os__cmtanh_c64(-z.im, z.re);
    return os_c64_make((float)r.im, (float)-r.re);
}
static inline os_c128 os_ctan_c128(os_c128 z) {
    os_c128 r = os__cmtanh_c128(-z.im, z.re);
    return os_c128_make(r.im, -r.re);
}

/* cmathimpl.acos_impl (CPython's c_acos). complex64: the large branch's real part is atan2f of
   the float parts, its imaginary part double (z.real * 0.5); the other branch is complex128 */
static inline os_c128 os_carccos_c128(os_c128 z) {
    if (fabs(z.re) > OS_CTHRES || fabs(z.im) > OS_CTHRES) {
        return os_c128_make(atan2(fabs(z.im), z.re),
                            copysign(log(hypot(z.re * 0.5, z.im * 0.5)) + OS_CLN_4, -z.im));
    }
    os_c128 s1 = os_csqrt_c128(os_c128_make(1. - z.re, -z.im));
    os_c128 s2 = os_csqrt_c128(os_c128_make(1. + z.re, z.im));
    return os_c128_make(2. * atan2(s1.re, s2.re), asinh(s2.re * s1.im - s2.im * s1.re));
}
static inline os_c64 os_carccos_c64(os_c64 z) {
    if (fabsf(z.re) > OS_CTHRES || fabsf(z.im) > OS_CTHRES) {
        float re = atan2f(fabsf(z.im), z.re);
        double im = copysign(log(hypot((double)z.re * 0.5, (double)z.im * 0.5)) + OS_CLN_4, (double)-z.im);
        return os_c64_make(re, (float)im);
    }
    os_c128 s1 = os_csqrt_c128(os_c128_make(1. - (double)z.re, (double)-z.im));
    os_c128 s2 = os_csqrt_c128(os_c128_make(1. + (double)z.re, (double)z.im));
    return os_c64_make((float)(2. * atan2(s1.re, s2.re)), (float)asinh(s2.re * s1.im - s2.im * s1.re));
}

/* cmathimpl.asinh_impl (CPython's c_asinh), typed like acos above */
static inline os_c128 os_carcsinh_c128(os_c128 z) {
    if (fabs(z.re) > OS_CTHRES || fabs(z.im) > OS_CTHRES) {
        return os_c128_make(copysign(log(hypot(z.re * 0.5, z.im * 0.5)) + OS_CLN_4, z.re),
                            atan2(z.im, fabs(z.re)));
    }
    os_c128 s1 = os_csqrt_c128(os_c128_make(1. + z.im, -z.re));
    os_c128 s2 = os_csqrt_c128(os_c128_make(1. - z.im, z.re));
    return os_c128_make(asinh(s1.re * s2.im - s2.re * s1.im), atan2(z.im, s1.re * s2.re - s1.im * s2.im));
}
static inline os_c64 os_carcsinh_c64(os_c64 z) {
    if (fabsf(z.re) > OS_CTHRES || fabsf(z.im) > OS_CTHRES) {
        double re = copysign(log(hypot((double)z.re * 0.5, (double)z.im * 0.5)) + OS_CLN_4, (double)z.re);
        return os_c64_make((float)re, atan2f(z.im, fabsf(z.re)));
    }
    os_c128 s1 = os_csqrt_c128(os_c128_make(1. + (double)z.im, (double)-z.re));
    os_c128 s2 = os_csqrt_c128(os_c128_make(1. - (double)z.im, (double)z.re));
    return os_c64_make((float)asinh(s1.re * s2.im - s2.re * s1.im),
                       (float)atan2((double)z.im, s1.re * s2.re - s1.im * s2.im));
}
/* asin z = -i asinh(iz) (cmathimpl.asin_impl); the inner asinh returns the argument's type */
static inline os_c64 os_carcsin_c64(os_c64 z) {
    os_c64 r = os_carcsinh_c64(os_c64_make(-z.im, z.re));
    return os_c64_make(r.im, -r.re);
}
static inline os_c128 os_carcsin_c128(os_c128 z) {
    os_c128 r = os_carcsinh_c128(os_c128_make(-z.im, z.re));
    return os_c128_make(r.im, -r.re);
}

/* cmathimpl.atanh_impl (CPython's c_atanh). complex64: ay and sqay are float, everything that
   meets a float64 literal or `1 - z.real` (int64 with float32: float64) is double, and
   sqrt(ay) is sqrtf */
static inline os_c128 os_carctanh_c128(os_c128 z) {
    bool negate = z.re < 0.;
    if (negate) z = os_cneg_c128(z);
    double ay = fabs(z.im), re, im;
    if (isnan(z.re) || z.re > OS_CTHRES_LARGE || ay > OS_CTHRES_LARGE) {
        if (isinf(z.im)) re = copysign(0., z.re);
        else if (isinf(z.re)) re = 0.;
        else {
            double h = hypot(z.re * 0.5, z.im * 0.5);
            re = z.re / 4. / h / h;
        }
        im = -copysign(OS_CPI_12, -z.im);
    } else if (z.re == 1. && ay < OS_CTHRES_SMALL) {
        if (ay == 0.) { re = INFINITY; im = z.im; }
        else {
            re = -log(sqrt(ay) / sqrt(hypot(ay, 2.)));
            im = copysign(atan2(2., -ay) / 2, z.im);
        }
    } else {
        double sqay = ay * ay;
        double zr1 = 1 - z.re;
        re = log1p(4. * z.re / (zr1 * zr1 + sqay)) * 0.25;
        im = -atan2(-2. * z.im, zr1 * (1 + z.re) - sqay) * 0.5;
    }
    if (isnan(z.im)) im = NAN;
    return negate ? os_c128_make(-re, -im) : os_c128_make(re, im);
}
static inline os_c64 os_carctanh_c64(os_c64 z) {
    bool negate = z.re < 0.f;
    if (negate) z = os_cneg_c64(z);
    float ay = fabsf(z.im);
    double re, im, zre = z.re;
    if (isnan(z.re) || zre > OS_CTHRES_LARGE || (double)ay > OS_CTHRES_LARGE) {
        if (isinf(z.im)) re = copysign(0., zre);
        else if (isinf(z.re)) re = 0.;
        else {
            double h = hypot(zre * 0.5, (double)z.im * 0.5);
            re = zre / 4. / h / h;
        }
        im = -copysign(OS_CPI_12, (double)-z.im);
    } else if (zre == 1. && (double)ay < OS_CTHRES_SMALL) {
        if (ay == 0.f) { re = INFINITY; im = z.im; }
        else {
            re = -log((double)sqrtf(ay) / sqrt(hypot((double)ay, 2.)));
            im = copysign(atan2(2., (double)-ay) / 2, (double)z.im);
        }
    } else {
        float sqay = ay * ay;
        double zr1 = 1 - zre;
        re = log1p(4. * zre / (zr1 * zr1 + (double)sqay)) * 0.25;
        im = -atan2(-2. * (double)z.im, zr1 * (1 + zre) - (double)sqay) * 0.5;
    }
    if (isnan(z.im)) im = NAN;
    return negate ? os_c64_make((float)-re, (float)-im) : os_c64_make((float)re, (float)im);
}
/* atan z = -i atanh(iz) (cmathimpl.atan_impl, with its odd swap for inf + nan j) */
static inline os_c64 os_carctan_c64(os_c64 z) {
    os_c64 r = os_carctanh_c64(os_c64_make(-z.im, z.re));
    if (isinf(z.re) && isnan(z.im)) return os_c64_make(r.im, r.re);
    return os_c64_make(r.im, -r.re);
}
static inline os_c128 os_carctan_c128(os_c128 z) {
    os_c128 r = os_carctanh_c128(os_c128_make(-z.im, z.re));
    if (isinf(z.re) && isnan(z.im)) return os_c128_make(r.im, r.re);
    return os_c128_make(r.im, -r.re);
}

/* np.arccosh: npyfuncs.np_complex_acosh_impl, log(z + sqrt(z + 1) * sqrt(z - 1)) with Numba's
   complex add/sub/mul/sqrt/log in the argument's type (z + 1 adds 1 + 0j: a -0 imaginary part
   becomes +0, z - 1 keeps it) */
#define OS_CACOSH(T, S)                                                                          \
static inline T os_carccosh_##S(T z) {                                                           \
    T one = T##_make(1, 0);                                                                      \
    T p = os_cmul_##S(os_csqrt_##S(os_cadd_##S(z, one)), os_csqrt_##S(os_csub_##S(z, one)));      \
    return os_clog_##S(os_cadd_##S(z, p));                                                       \
}
OS_CACOSH(os_c64, c64)
OS_CACOSH(os_c128, c128)
#undef OS_CACOSH
"""

# support.py's helper -> the stem of its C name here (the translator appends _c64 / _c128)
NAMES = {
    "complex_mul": "os_cmul",
    "complex_div": "os_cdiv",
    "complex_abs": "os_cabs",
    "complex_exp": "os_cexp",
    "complex_log": "os_clog",
    "complex_sqrt": "os_csqrt",
    "complex_sin": "os_csin",
    "complex_cos": "os_ccos",
    "complex_tan": "os_ctan",
    "complex_sinh": "os_csinh",
    "complex_cosh": "os_ccosh",
    "complex_tanh": "os_ctanh",
    "complex_arcsin": "os_carcsin",
    "complex_arccos": "os_carccos",
    "complex_arctan": "os_carctan",
    "complex_arcsinh": "os_carcsinh",
    "complex_arccosh": "os_carccosh",
    "complex_arctanh": "os_carctanh",
    "complex_sign": "os_csign",
    "cmax": "os_cmax",
    "cmin": "os_cmin",
}
