"""`erf_inv`, `erf` and `erfc` as compositions of lax operations, following XLA's algorithms.

`normal` is `sqrt(2) * erf_inv(u)` and `truncated_normal` also needs `erf`. To draw the
same numbers as JAX's CPU backend, these replay XLA's own expansions: Giles' single- and
double-precision `erf_inv` polynomials (starting from XLA's `log1p`, see `_xla_math`)
and the float32 `erf` kernel of XLA's CPU intrinsics, with the Horner steps written as
`fma` where XLA's machine code fuses them; float32 and float64 `erf_inv` and float32 `erf`
are bit-identical to JAX. float64 `erf` is the Cephes rational function, while XLA calls
glibc's (fdlibm's) `erf`, so float64 `truncated_normal` may differ in the last bits.
JAX's GPU backend uses other expansions (CUDA's libdevice), so JAX's own CPU and GPU
numbers differ; omnistage follows the CPU. These are the values; `lax.special` adds JAX's
derivative rules. float32 `erf_inv` is bound as a primitive of its own, whose CPU kernel is
this expansion emitted once (`codegen/vmath/xla_expansions.py`); its CUDA lowering is
libdevice's `erfinvf`, as JAX's GPU backend. Imports core and lax only.
"""
import numpy as np

from .. import lax
from ..core import primitive as core_primitive
from . import xla_math as _xla_math
from ._rules import FLOAT, elementwise
from .fused_multiply_add import fma

# Giles, "Approximating the erfinv function" (single precision), highest degree first.
_ERF_INV_F32 = {
    "w_lt_5": (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
               -0.00125372503, -0.00417768164, 0.246640727, 1.50140941),
    "w_ge_5": (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
               -0.0076224613, 0.00943887047, 1.00167406, 2.83297682),
}

# Giles (double precision): three ranges of w = -log1p(-x*x), highest degree first.
_ERF_INV_F64_W_LT_6_25 = (
    -3.6444120640178196996e-21, -1.685059138182016589e-19, 1.2858480715256400167e-18,
    1.115787767802518096e-17, -1.333171662854620906e-16, 2.0972767875968561637e-17,
    6.6376381343583238325e-15, -4.0545662729752068639e-14, -8.1519341976054721522e-14,
    2.6335093153082322977e-12, -1.2975133253453532498e-11, -5.4154120542946279317e-11,
    1.051212273321532285e-09, -4.1126339803469836976e-09, -2.9070369957882005086e-08,
    4.2347877827932403518e-07, -1.3654692000834678645e-06, -1.3882523362786468719e-05,
    0.0001867342080340571352, -0.00074070253416626697512, -0.0060336708714301490533,
    0.24015818242558961693, 1.6536545626831027356,
)
_ERF_INV_F64_W_LT_16 = (
    2.2137376921775787049e-09, 9.0756561938885390979e-08, -2.7517406297064545428e-07,
    1.8239629214389227755e-08, 1.5027403968909827627e-06, -4.013867526981545969e-06,
    2.9234449089955446044e-06, 1.2475304481671778723e-05, -4.7318229009055733981e-05,
    6.8284851459573175448e-05, 2.4031110387097893999e-05, -0.0003550375203628474796,
    0.00095328937973738049703, -0.0016882755560235047313, 0.0024914420961078508066,
    -0.0037512085075692412107, 0.005370914553590063617, 1.0052589676941592334,
    3.0838856104922207635,
)
_ERF_INV_F64_W_GE_16 = (
    -2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
    -3.7894654401267369937e-09, 7.6157012080783393804e-09, -1.4960026627149240478e-08,
    2.9147953450901080826e-08, -6.7711997758452339498e-08, 2.2900482228026654717e-07,
    -9.9298272942317002539e-07, 4.5260625972231537039e-06, -1.9681778105531670567e-05,
    7.5995277030017761139e-05, -0.00021503011930044477347, -0.00013871931833623122026,
    1.0103004648645343977, 4.8499064014085844221,
)

# Cephes erf/erfc rational approximations (as XLA's double-precision Erf), highest first.
_ERF_T = (9.60497373987051638749e0, 9.00260197203842689217e1, 2.23200534594684319226e3,
          7.00332514112805075473e3, 5.55923013010394962768e4)
_ERF_U = (1.0, 3.35617141647503099647e1, 5.21357949780152679795e2, 4.59432382970980127987e3,
          2.26290000613890934246e4, 4.92673942608635921086e4)
_ERFC_P = (2.46196981473530512524e-10, 5.64189564831068821977e-1, 7.46321056442269912687e0,
           4.86371970985681366614e1, 1.96520832956077098242e2, 5.26445194995477358631e2,
           9.34528527171957607540e2, 1.02755188689515710272e3, 5.57535335369399327526e2)
_ERFC_Q = (1.0, 1.32281951154744992508e1, 8.67072140885989742329e1, 3.54937778887819891062e2,
           9.75708501743205489753e2, 1.82390916687909736289e3, 2.24633760818710981792e3,
           1.65666309194161350182e3, 5.57535340817727675546e2)
_ERFC_R = (5.64189583547755073984e-1, 1.27536670759978104416e0, 5.01905042251180477414e0,
           6.16021097993053585195e0, 7.40974269950448939160e0, 2.97886665372100240670e0)
_ERFC_S = (1.0, 2.26052863220117276590e0, 9.39603524938001434673e0, 1.20489539808096656605e1,
           1.70814450747565897222e1, 9.60896809063285878198e0, 3.36907645100081516050e0)
_MAXLOG = 7.09782712893383996843e2


def _const(value, dtype):
    return np.asarray(value, dtype)[()]


def _select_const(pred, on_true, on_false, dtype):
    """Per element: `on_true` where `pred`, else `on_false` (constants of `dtype`)."""
    return lax.select(pred, _full(pred, on_true, dtype), _full(pred, on_false, dtype))


def _full(like, value, dtype):
    return lax.broadcast_in_dim(_const(value, dtype), like.shape, ())


def _horner(x, coeffs, dtype):
    """coeffs[0] * x**(n-1) + ... + coeffs[-1], each step one fused multiply-add."""
    p = _full(x, coeffs[0], dtype)
    for c in coeffs[1:]:
        p = fma(p, x, _const(c, dtype))
    return p


def _neg_log1p_neg_square(x):
    """w = -log1p(-x*x), the variable of Giles' approximations."""
    return lax.neg(_xla_math.log1p(lax.mul(x, lax.neg(x))))


def _infinite_at_one(x, result, dtype):
    """erf_inv(+-1) = +-inf (the polynomial is indeterminate there)."""
    at_one = lax.eq(lax.abs(x), _const(1, dtype))
    return lax.select(at_one, lax.mul(x, _const(np.inf, dtype)), result)


def _erf_inv_f32(x, dtype):
    w = _neg_log1p_neg_square(x)
    lt = lax.lt(w, _const(5, dtype))
    w = lax.select(lt, lax.add(w, _const(-2.5, dtype)), lax.add(lax.sqrt(w), _const(-3, dtype)))
    lo, hi = _ERF_INV_F32["w_lt_5"], _ERF_INV_F32["w_ge_5"]
    p = _select_const(lt, lo[0], hi[0], dtype)
    for a, b in zip(lo[1:], hi[1:]):
        p = fma(p, w, _select_const(lt, a, b, dtype))
    return _infinite_at_one(x, lax.mul(p, x), dtype)


def _erf_inv_f64(x, dtype):
    w = _neg_log1p_neg_square(x)
    lt_6_25 = lax.lt(w, _const(6.25, dtype))
    lt_16 = lax.lt(w, _const(16, dtype))
    shift = lax.select(lt_16, _full(w, 3.25, dtype), _full(w, 5.0, dtype))
    w = lax.select(lt_6_25, lax.add(w, _const(-3.125, dtype)), lax.sub(lax.sqrt(w), shift))

    def coefficient(i):
        c = _full(x, _ERF_INV_F64_W_LT_6_25[i], dtype)
        if i < len(_ERF_INV_F64_W_LT_16):
            c = lax.select(lt_6_25, c, _full(x, _ERF_INV_F64_W_LT_16[i], dtype))
        if i < len(_ERF_INV_F64_W_GE_16):
            c = lax.select(lt_16, c, _full(x, _ERF_INV_F64_W_GE_16[i], dtype))
        return c

    p = coefficient(0)
    for i in range(1, 17):
        p = fma(p, w, coefficient(i))
    for i in range(17, 19):  # only the two lower ranges have these terms
        p = lax.select(lt_16, fma(p, w, coefficient(i)), p)
    for i in range(19, 23):
        p = lax.select(lt_6_25, fma(p, w, coefficient(i)), p)
    return _infinite_at_one(x, lax.mul(p, x), dtype)


def erf_inv_expansion(x):
    """Inverse error function of a float32 or float64 array as lax operations (XLA's
    algorithm): the reference of the `erf_inv` primitive, whose CPU kernel is this expansion
    emitted once (`codegen/vmath/xla_expansions.py`)."""
    dtype = np.dtype(x.dtype)
    return _erf_inv_f64(x, dtype) if dtype == np.float64 else _erf_inv_f32(x, dtype)


def _erf_inv_impl(x):
    with core_primitive.eager():
        return np.asarray(erf_inv_expansion(x))


# One primitive, not the ~95 statements of its expansion: a sampler's statements were most of
# a `normal`'s compile, and every normal in a program compiled its own copy (DP-SGD's noise
# for eight parameter arrays was half of a 1,550-line module).
# (bound on float32 operands only, by `erf_inv`: the CPU kernel is float32's)
erf_inv_p = elementwise("erf_inv", _erf_inv_impl, FLOAT, None, 1)


def erf_inv(x):
    """Inverse error function of a float array (XLA's algorithm; float16/bfloat16 via float32;
    float64 as its expansion, see codegen/vmath/xla_expansions.py)."""
    dtype = np.dtype(x.dtype)
    if dtype == np.float64:
        return erf_inv_expansion(x)
    if dtype == np.float32:
        return erf_inv_p.bind(x)
    return lax.convert_element_type(erf_inv_p.bind(lax.convert_element_type(x, np.float32)), dtype)


def _erf_small(x, dtype):
    """erf for |x| < 1: x T(x^2) / U(x^2)."""
    z = lax.mul(x, x)
    return lax.div(lax.mul(x, _horner(z, _ERF_T, dtype)), _horner(z, _ERF_U, dtype))


def _erfc_large(x, dtype):
    """erfc for |x| >= 1: exp(-x^2) P(|x|)/Q(|x|) below 8, R/S above."""
    z = lax.neg(lax.mul(x, x))
    ax = lax.abs(x)
    ez = lax.exp(z)
    below_8 = lax.div(lax.mul(ez, _horner(ax, _ERFC_P, dtype)), _horner(ax, _ERFC_Q, dtype))
    above_8 = lax.div(lax.mul(ez, _horner(ax, _ERFC_R, dtype)), _horner(ax, _ERFC_S, dtype))
    y = lax.select(lax.lt(ax, _const(8, dtype)), below_8, above_8)
    y = lax.select(lax.lt(z, _const(-_MAXLOG, dtype)), _full(x, 0, dtype), y)
    return lax.select(lax.lt(x, _const(0, dtype)), lax.sub(_const(2, dtype), y), y)


# XLA CPU's float32 erf (its `xla.erf.f32` intrinsic): x P(x^2) / Q(x^2), +-1 beyond
# |x| >= 3.8325066, every Horner step a fused multiply-add. Highest degree first.
_ERF_F32_P = tuple(np.uint32(b).view(np.float32) for b in (
    0x39702D51, 0x3B5F5DA2, 0x3D50B6EB, 0x3E3DA740, 0x3F906EBA))
_ERF_F32_Q = tuple(np.uint32(b).view(np.float32) for b in (
    0xB3FD3906, 0x37C588DF, 0x3A856D28, 0x3C6687D4, 0x3DE34C21, 0x3EFEB44A, 0x3F800000))
_ERF_F32_SATURATE = np.uint32(0x407547CB).view(np.float32)


def _erf_f32(x):
    f32 = np.dtype(np.float32)
    x2 = lax.mul(x, x)
    p = lax.mul(x, _horner(x2, _ERF_F32_P, f32))
    q = _horner(x2, _ERF_F32_Q, f32)
    one = lax.select(  # copysign(1, x)
        lax.lt(lax.bitcast_convert_type(x, np.int32), np.int32(0)), _full(x, -1, f32), _full(x, 1, f32))
    return lax.select(lax.ge(lax.abs(x), _ERF_F32_SATURATE), one, lax.div(p, q))


def erf(x):
    """Error function of a float array: float32 (and half types, through it) as XLA's CPU
    kernel; float64 by the Cephes rational approximation (XLA calls the C library's `erf`,
    fdlibm's in glibc, which this does not replay: it may differ in the last bits)."""
    dtype = np.dtype(x.dtype)
    if dtype == np.float32:
        return _erf_f32(x)
    if dtype != np.float64:
        return lax.convert_element_type(_erf_f32(lax.convert_element_type(x, np.float32)), dtype)
    small = lax.lt(lax.abs(x), _const(1, dtype))
    return lax.select(small, _erf_small(x, dtype), lax.sub(_const(1, dtype), _erfc_large(x, dtype)))


def erfc(x):
    """1 - erf(x), accurate where erf(x) is close to 1: 1 - erf below |x| = 1, Cephes' rational
    forms of exp(-x**2) P/Q above (float16/bfloat16 through float32)."""
    dtype = np.dtype(x.dtype)
    if dtype not in (np.float32, np.float64):
        return lax.convert_element_type(erfc(lax.convert_element_type(x, np.float32)), dtype)
    small = lax.lt(lax.abs(x), _const(1, dtype))
    safe = lax.select(small, _full(x, 1, dtype), x)  # the large-|x| form is not used (or valid) below 1
    return lax.select(small, lax.sub(_const(1, dtype), erf(x)), _erfc_large(safe, dtype))
