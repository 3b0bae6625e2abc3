"""`jax.scipy.special`'s entropy and transform functions and two error-function relatives:
`rel_entr`, `kl_div`, `boxcox`, `boxcox1p`, `erfcx` (exp(x**2) erfc(x), with JAX's asymptotic
series where exp(x**2) overflows) and `dawsn` (Cody, Paciorek and Thacher's rational
approximations, as JAX). JAX's definitions; each unused branch evaluated at a safe input so
gradients stay finite. Imports numpy, lax and this package's promotion rules.
"""
import math

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..autodiff.custom import custom_jvp
from .promotion import promote_args_real as _real


def rel_entr(p, q):
    """p log(p / q) for p, q > 0; 0 for p == 0 and q >= 0; inf otherwise."""
    p, q = _real("rel_entr", p, q)
    both_positive = (p > 0) & (q > 0)
    one = jnp.ones_like(p)
    safe_p, safe_q = jnp.where(both_positive, p, one), jnp.where(both_positive, q, one)
    value = safe_p * jnp.log(safe_p) - safe_p * jnp.log(safe_q)
    other = jnp.where((p == 0) & (q >= 0), jnp.zeros_like(p), jnp.full_like(p, np.inf))
    return jnp.where(both_positive, value, other)


def kl_div(p, q):
    """rel_entr(p, q) - p + q."""
    p, q = _real("kl_div", p, q)
    return rel_entr(p, q) - p + q


def _boxcox_of_log(log_x, lmbda):
    zero = lmbda == 0
    safe = jnp.where(zero, jnp.ones_like(lmbda), lmbda)
    return jnp.where(zero, log_x, jnp.expm1(safe * log_x) / safe)


def boxcox(x, lmbda):
    """The Box-Cox transform (x**lmbda - 1) / lmbda, log(x) at lmbda == 0."""
    x, lmbda = _real("boxcox", x, lmbda)
    return _boxcox_of_log(jnp.log(x), lmbda)


def boxcox1p(x, lmbda):
    """boxcox(1 + x, lmbda), accurate for small x."""
    x, lmbda = _real("boxcox1p", x, lmbda)
    return _boxcox_of_log(jnp.log1p(x), lmbda)


# erfcx(x) ~ P(1/x**2) / (sqrt(pi) x), c_k = (-1)**k (2k-1)!! / 2**k, highest degree first
_ERFCX_ASYMPTOTIC = (7918.06640625, -1055.7421875, 162.421875, -29.53125, 6.5625, -1.875, 0.75, -0.5, 1.0)
_ERFCX_TERMS = {np.dtype(np.float64): 9, np.dtype(np.float32): 5}


def _erfcx_value(x):
    nterms = _ERFCX_TERMS[np.dtype(x.dtype)]
    large = x > np.asarray(math.sqrt(math.log(np.finfo(x.dtype).max)), x.dtype)  # exp(x**2) overflows
    safe = jnp.where(large, jnp.ones_like(x), x)
    direct = jnp.exp(safe * safe) * lax.erfc(safe)
    big = jnp.where(large, x, jnp.ones_like(x))
    t = 1 / (big * big)
    asymptotic = jnp.polyval(jnp.asarray(_ERFCX_ASYMPTOTIC[-nterms:], x.dtype), t) / (big * math.sqrt(math.pi))
    return jnp.where(large, asymptotic, direct)


_erfcx = custom_jvp(_erfcx_value)
_erfcx.defjvps(lambda t, ans, x: t * (2 * x * ans - 2 / math.sqrt(math.pi)))


def _in_float32_or_wider(fn, x):
    if np.dtype(x.dtype) in (np.float32, np.float64):
        return fn(x)
    return fn(x.astype(np.float32)).astype(x.dtype)


def erfcx(x):
    """The scaled complementary error function exp(x**2) erfc(x)."""
    (x,) = _real("erfcx", x)
    return _in_float32_or_wider(_erfcx, x)


# Rational approximation coefficients for dawsn (Cody, Paciorek, Thacher 1970).
# Region 1: [0, 3.25)  —  y = ax * P(ax^2) / Q(ax^2)
_DAWSN_AN = (
    1.13681498971755972054e-11,
    8.49262267667473811108e-10,
    1.94434204175553054283e-8,
    9.53151741254484363489e-7,
    3.07828309874913200438e-6,
    3.52513368520288738649e-4,
    -8.50149846724410912031e-4,
    4.22618223005546594270e-2,
    -9.17480371773452345351e-2,
    9.99999999999999994612e-1,
)
_DAWSN_AD = (
    2.40372073066762605484e-11,
    1.48864681368493396752e-9,
    5.21265281010541664570e-8,
    1.27258478273186970203e-6,
    2.32490249820789513991e-5,
    3.25524741826057911661e-4,
    3.48805814657162590916e-3,
    2.79448531198828973716e-2,
    1.58874241960120565368e-1,
    5.74918629489320327824e-1,
    1.00000000000000000539e0,
)
# Region 2: [3.25, 6.25)  —  y = 0.5/ax * (1 + (1/ax^2)*P(1/ax^2)/Q(1/ax^2))
_DAWSN_BN = (
    5.08955156417900903354e-1,
    -2.44754418142697847934e-1,
    9.41512335303534411857e-2,
    -2.18711255142039025206e-2,
    3.66207612329569181322e-3,
    -4.23209114460388756528e-4,
    3.59641304793896631888e-5,
    -2.14640351719968974225e-6,
    9.10010780076391431042e-8,
    -2.40274520828250956942e-9,
    3.59233385440928410398e-11,
)
_DAWSN_BD = (
    1.00000000000000000000e0,
    -6.31839869873368190192e-1,
    2.36706788228248691528e-1,
    -5.31806367003223277662e-2,
    8.48041718586295374409e-3,
    -9.47996768486665330168e-4,
    7.81025592944552338085e-5,
    -4.55875153252442634831e-6,
    1.89100358111421846170e-7,
    -4.91324691331920606875e-9,
    7.18466403235734541950e-11,
)
# Region 3: [6.25, inf)  —  y = 0.5/ax * (1 + (1/ax^2)*P(1/ax^2)/Q(1/ax^2))
_DAWSN_CN = (
    -5.90592860534773254987e-1,
    6.29235242724368800674e-1,
    -1.72858975380388136411e-1,
    1.64837047825189632310e-2,
    -4.86827613020462700845e-4,
)
_DAWSN_CD = (
    1.00000000000000000000e0,
    -2.69820057197544900361e0,
    1.73270799045947845857e0,
    -3.93708582281939493482e-1,
    3.44278924041233391079e-2,
    -9.73655226040941223894e-4,
)


def _dawsn_value(x):
    ax = jnp.abs(x)
    r1 = ax < 3.25
    r2 = (ax >= 3.25) & (ax < 6.25)
    r3 = ax >= 6.25
    one = jnp.ones_like(x)

    def poly(coefficients, v):
        return jnp.polyval(jnp.asarray(coefficients, x.dtype), v)

    a1 = jnp.where(r1, ax, one)
    a1_2 = a1 * a1
    v1 = a1 * poly(_DAWSN_AN, a1_2) / poly(_DAWSN_AD, a1_2)
    a2 = jnp.where(r2, ax, one)
    t2 = 1 / (a2 * a2)
    v2 = (0.5 / a2) * (1 + t2 * poly(_DAWSN_BN, t2) / poly(_DAWSN_BD, t2))
    a3 = jnp.where(r3, ax, one)
    t3 = 1 / (a3 * a3)
    v3 = (0.5 / a3) * (1 + t3 * poly(_DAWSN_CN, t3) / poly(_DAWSN_CD, t3))
    return jnp.sign(x) * jnp.where(r1, v1, jnp.where(r2, v2, v3))


_dawsn = custom_jvp(_dawsn_value)
_dawsn.defjvps(lambda t, ans, x: t * (1 - 2 * x * ans))


def dawsn(x):
    """Dawson's integral exp(-x**2) * integral of exp(t**2) from 0 to x."""
    (x,) = _real("dawsn", x)
    return _in_float32_or_wider(_dawsn, x)


__all__ = ["rel_entr", "kl_div", "boxcox", "boxcox1p", "erfcx", "dawsn"]
