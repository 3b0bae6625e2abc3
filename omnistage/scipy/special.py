"""`omnistage.scipy.special`, as `jax.scipy.special`: error functions (erf, erfc, erfinv, ndtr,
ndtri, log_ndtr), gamma functions (gammaln, digamma, polygamma, betaln, gamma, beta), logistic
(expit, logit), xlogy/xlog1py/entr, exponentially scaled Bessel i0e/i1e (and i0/i1),
logsumexp; and from the modules beside it the incomplete gamma/beta family, zeta and the
combinatorial functions (`special_gamma`), the entropy/transform functions, erfcx and
dawsn (`special_transforms`), spence, owens_t and the exponential integrals
(`special_integrals`), hyp1f1 (`special_hypergeometric`), sici, fresnel and bessel_jn
(`special_oscillatory`), sph_harm_y (`special_harmonics`), wofz (`special_faddeeva`),
hyp2f1 (`special_hyp2f1`).

All are compositions of lax operations (so they jit, vmap and lower like user code), with
JAX's derivative rules where differentiating the approximation would be inexact or undefined
at a point. The special functions proper (erf, erf_inv, lgamma, digamma, polygamma, igamma,
betainc, bessel_i0e/i1e) are `omnistage.lax`'s, with XLA's algorithms; ndtri/log_ndtr are
JAX's (Cephes). Imports numpy, lax and nn.
"""
import math

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..autodiff.custom import custom_jvp
from ..nn import logsumexp, softmax, log_softmax  # noqa: F401 - jax.scipy.special re-exports logsumexp
from .promotion import promote_args_inexact as _inexact


# --- helpers ---------------------------------------------------------------------------


def _c(x, value):
    """A rank-0 constant of x's dtype."""
    return np.asarray(value, dtype=x.dtype)


def _polyval(coefficients, x):
    p = jnp.full_like(x, coefficients[0])
    for c in coefficients[1:]:
        p = p * x + _c(x, c)
    return p


# --- error functions ---------------------------------------------------------------------


def _over_lax(lax_fn, name, doc):
    """The scipy name of a lax special function: its argument promoted to an inexact dtype."""
    def fn(x):
        (x,) = _inexact(x)
        return lax_fn(x)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


erf = _over_lax(lax.erf, "erf", "The error function, 2/sqrt(pi) * integral of exp(-t**2) from 0 to x.")
erfc = _over_lax(lax.erfc, "erfc", "1 - erf(x), accurate where erf(x) is close to 1 (Cephes' rational forms above |x| = 1).")
erfinv = _over_lax(lax.erf_inv, "erfinv", "Inverse of erf on (-1, 1); +-inf at +-1.")
gammaln = _over_lax(lax.lgamma, "gammaln", "log|Gamma(x)| (XLA's Lanczos approximation with reflection below 1/2).")
digamma = _over_lax(lax.digamma, "digamma", "d/dx log Gamma(x); NaN at the poles 0, -1, -2, ...")
i0e = _over_lax(lax.bessel_i0e, "i0e", "exp(-|x|) I0(x).")
i1e = _over_lax(lax.bessel_i1e, "i1e", "exp(-|x|) I1(x).")


def ndtr(x):
    """The standard normal CDF (JAX's: erf near 0, erfc in the tails)."""
    (x,) = _inexact(x)
    half_sqrt_2 = _c(x, 0.5 * math.sqrt(2))
    w = x * half_sqrt_2
    z = jnp.abs(w)
    y = jnp.where(z < half_sqrt_2, _c(x, 1) + erf(w), jnp.where(w > 0, _c(x, 2) - erfc(z), erfc(z)))
    return _c(x, 0.5) * y


# Cephes' ndtri rational approximations (as JAX's _ndtri), highest degree first
_NDTRI_P0 = (-5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1,
             1.39312609387279679503E1, -1.23916583867381258016E0)
_NDTRI_Q0 = (1.0, 1.95448858338141759834E0, 4.67627912898881538453E0, 8.63602421390890590575E1,
             -2.25462687854119370527E2, 2.00260212380060660359E2, -8.20372256168333339912E1,
             1.59056225126211695515E1, -1.18331621121330003142E0)
_NDTRI_P1 = (4.05544892305962419923E0, 3.15251094599893866154E1, 5.71628192246421288162E1,
             4.40805073893200834700E1, 1.46849561928858024014E1, 2.18663306850790267539E0,
             -1.40256079171354495875E-1, -3.50424626827848203418E-2, -8.57456785154685413611E-4)
_NDTRI_Q1 = (1.0, 1.57799883256466749731E1, 4.53907635128879210584E1, 4.13172038254672030440E1,
             1.50425385692907503408E1, 2.50464946208309415979E0, -1.42182922854787788574E-1,
             -3.80806407691578277194E-2, -9.33259480895457427372E-4)
_NDTRI_P2 = (3.23774891776946035970E0, 6.91522889068984211695E0, 3.93881025292474443415E0,
             1.33303460815807542389E0, 2.01485389549179081538E-1, 1.23716634817820021358E-2,
             3.01581553508235416007E-4, 2.65806974686737550832E-6, 6.23974539184983293730E-9)
_NDTRI_Q2 = (1.0, 6.02427039364742014255E0, 3.67983563856160859403E0, 1.37702099489081330271E0,
             2.16236993594496635890E-1, 1.34204006088543189037E-2, 3.28014464682127739104E-4,
             2.89247864745380683936E-6, 6.79019408009981274425E-9)


def ndtri(p):
    """Inverse of ndtr (Cephes' piecewise rational approximation, as JAX's)."""
    (p,) = _inexact(p)
    maybe_complement = jnp.where(p > _c(p, -np.expm1(-2.0)), _c(p, 1) - p, p)
    safe = jnp.where(maybe_complement == 0, jnp.full_like(p, 0.5), maybe_complement)
    w = safe - _c(p, 0.5)
    ww = w * w
    x_big = (w + w * ww * (_polyval(_NDTRI_P0, ww) / _polyval(_NDTRI_Q0, ww))) * _c(p, -math.sqrt(2 * math.pi))
    z = jnp.sqrt(_c(p, -2.0) * jnp.log(safe))
    first = z - jnp.log(z) / z
    inv_z = _c(p, 1) / z
    x_small = first - _polyval(_NDTRI_P2, inv_z) / _polyval(_NDTRI_Q2, inv_z) / z
    x_other = first - _polyval(_NDTRI_P1, inv_z) / _polyval(_NDTRI_Q1, inv_z) / z
    x = jnp.where(safe > _c(p, math.exp(-2.0)), x_big, jnp.where(z >= _c(p, 8.0), x_small, x_other))
    x = jnp.where(p > _c(p, 1 - math.exp(-2.0)), x, -x)
    inf = jnp.full_like(p, np.inf)
    return jnp.where(p == 0, -inf, jnp.where(p == 1, inf, x))


_LOG_NDTR_SEGMENTS = {np.dtype("float64"): (-20.0, 8.0), np.dtype("float32"): (-10.0, 5.0)}


def _norm_logpdf(x):
    return _c(x, -0.5) * x * x - _c(x, math.log(math.sqrt(2 * math.pi)))


def _log_ndtr_lower(x, series_order):
    x2 = x * x
    log_scale = _c(x, -0.5) * x2 - jnp.log(-x) - _c(x, 0.5 * math.log(2 * math.pi))
    total = jnp.ones_like(x)
    x2n = x2
    for n in range(1, series_order + 1):
        term = _c(x, float(np.prod(np.arange(2 * n - 1, 1, -2)))) / x2n
        total = total - term if n % 2 else total + term
        x2n = x2n * x2
    return log_scale + jnp.log(total)


def _log_ndtr_value(x, series_order):
    lower, upper = (_c(x, v) for v in _LOG_NDTR_SEGMENTS[np.dtype(x.dtype)])
    above = x > upper
    ndtr_res = ndtr(jnp.where(above, -x, jnp.maximum(x, lower)))
    return jnp.where(above, -ndtr_res, jnp.where(x > lower, jnp.log(ndtr_res), _log_ndtr_lower(jnp.minimum(x, lower), series_order)))


_log_ndtr = custom_jvp(_log_ndtr_value, nondiff_argnums=(1,))


@_log_ndtr.defjvp
def _log_ndtr_jvp(series_order, primals, tangents):
    (x,), (t,) = primals, tangents
    ans = _log_ndtr(x, series_order)
    return ans, t * jnp.exp(_norm_logpdf(x) - ans)


def log_ndtr(x, series_order=3):
    """log(ndtr(x)), accurate far into both tails (an asymptotic series below -20 / -10)."""
    if not isinstance(series_order, int):
        raise TypeError("series_order must be a Python integer.")
    if not 0 <= series_order <= 30:
        raise ValueError(f"series_order must be in [0, 30], got {series_order}.")
    (x,) = _inexact(x)
    if np.dtype(x.dtype) not in _LOG_NDTR_SEGMENTS:
        x = x.astype(np.float32)
    return _log_ndtr(x, series_order)


# --- gamma functions ---------------------------------------------------------------------

def polygamma(n, x):
    """psi^(n)(x), the n-th derivative of digamma, for integer n >= 0 (Hurwitz zeta for n >= 1)."""
    n, x = _inexact(n, x)
    n, x = jnp.broadcast_arrays(n, x)
    return lax.polygamma(n, x)


def gamma(x):
    """Gamma(x) = gammasgn(x) * exp(gammaln(x)) (NaN at the poles, as JAX)."""
    (x,) = _inexact(x)
    return gammasgn(x) * jnp.exp(gammaln(x))


def betaln(a, b):
    """log|B(a, b)| = gammaln(a) + gammaln(b) - gammaln(a + b)."""
    a, b = _inexact(a, b)
    return gammaln(a) + gammaln(b) - gammaln(a + b)


def beta(a, b):
    """B(a, b) for positive a, b."""
    return jnp.exp(betaln(a, b))


# --- logistic, x log y ---------------------------------------------------------------------


expit = _over_lax(lax.logistic, "expit", "The logistic sigmoid 1 / (1 + exp(-x)).")


@custom_jvp
def _logit(x):
    return jnp.log(x / (_c(x, 1) - x))


_logit.defjvps(lambda t, ans, x: t / (x * (_c(x, 1) - x)))


def logit(x):
    """log(x / (1 - x)), the inverse of expit."""
    (x,) = _inexact(x)
    return _logit(x)


def _x_times(log_fn, log_fn_denominator, name, doc):
    """x * log_fn(y), 0 where x == 0 unless y is NaN (as SciPy), with the derivative
    log_fn(y) dx + x / log_fn_denominator(y) dy (the where's kink at x == 0 left out)."""
    @custom_jvp
    def value(x, y):
        return jnp.where((x != 0) | jnp.isnan(y), x * log_fn(y), jnp.zeros_like(x))

    @value.defjvp
    def _jvp(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        return value(x, y), tx * log_fn(y) + ty * x / log_fn_denominator(y)

    def fn(x, y):
        x, y = _inexact(x, y)
        return value(*jnp.broadcast_arrays(x, y))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


xlogy = _x_times(jnp.log, lambda y: y, "xlogy", "x * log(y), 0 where x == 0 (NaN in y still propagates, as SciPy).")
xlog1py = _x_times(jnp.log1p, lambda y: 1 + y, "xlog1py", "x * log1p(y), 0 where x == 0.")


def entr(x):
    """-x log x for x > 0, 0 at 0, -inf below."""
    (x,) = _inexact(x)
    return jnp.where(x > 0, -xlogy(x, x), jnp.where(x == 0, jnp.zeros_like(x), jnp.full_like(x, -np.inf)))


# --- exponentially scaled modified Bessel functions ----------------------------------------

def i0(x):
    """The modified Bessel function I0 (jnp.i0)."""
    return jnp.i0(x)


def i1(x):
    """The modified Bessel function I1 = exp(|x|) i1e(x)."""
    (x,) = _inexact(x)
    return jnp.exp(jnp.abs(x)) * lax.bessel_i1e(x)



from .special_gamma import *  # noqa: E402,F401,F403 - the incomplete gamma/beta family and combinatorics
from .special_gamma import __all__ as _gamma_names, gammasgn  # noqa: E402
from .special_transforms import *  # noqa: E402,F401,F403 - entropies, Box-Cox, erfcx, dawsn
from .special_transforms import __all__ as _transform_names  # noqa: E402
from .special_integrals import *  # noqa: E402,F401,F403 - spence, owens_t
from .special_integrals import __all__ as _integral_names  # noqa: E402
from .special_hypergeometric import hyp1f1  # noqa: E402,F401
from .special_oscillatory import *  # noqa: E402,F401,F403 - sici, fresnel, bessel_jn
from .special_oscillatory import __all__ as _oscillatory_names  # noqa: E402
from .special_harmonics import sph_harm_y  # noqa: E402,F401
from .special_faddeeva import wofz  # noqa: E402,F401
from .special_hyp2f1 import hyp2f1  # noqa: E402,F401

__all__ = [
    "erf", "erfc", "erfinv", "ndtr", "ndtri", "log_ndtr", "gammaln", "digamma", "polygamma", "gamma",
    "betaln", "beta", "expit", "logit", "xlogy", "xlog1py", "entr", "i0e", "i1e", "i0", "i1", "logsumexp",
    "softmax", "log_softmax",
] + _gamma_names + _transform_names + _integral_names + ["hyp1f1"] + _oscillatory_names + ["sph_harm_y", "hyp2f1", "wofz"]
