"""`omnistage.scipy.special`, as `jax.scipy.special`: error functions (erf, erfc, erfinv, ndtr,
ndtri, log_ndtr), gamma functions (gammaln, digamma, polygamma(1, .), betaln, gamma, beta),
logistic (expit, logit), xlogy/xlog1py/entr, exponentially scaled Bessel i0e/i1e (and i0/i1),
logsumexp.

All are compositions of lax operations (so they jit, vmap and lower like user code), each
with its exact derivative as a custom JVP where differentiating the approximation would be
inexact or undefined at a point (JAX's rules). Algorithms: erf/erfinv are XLA's (shared with
`random`), erfc Cephes', gammaln/digamma XLA's Lanczos forms, ndtri/log_ndtr/i0e JAX's
(Cephes), i1e a Chebyshev fit of the same form as Cephes' (coefficients fitted once to
scipy.special.i1e, relative error < 1e-13). Imports numpy, lax, nn and random's XLA kernels.
"""
import math

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..autodiff.custom import custom_jvp
from ..nn import logsumexp, softmax, log_softmax  # noqa: F401 - jax.scipy.special re-exports logsumexp
from .promotion import promote_args_inexact as _inexact
from ..random import _special as xla  # XLA's erf/erf_inv kernels, bit-identical to JAX's CPU ones


# --- helpers ---------------------------------------------------------------------------


def _c(x, value):
    """A rank-0 constant of x's dtype."""
    return np.asarray(value, dtype=x.dtype)


def _clenshaw(y, coefficients):
    """Cephes' chbevl: a Chebyshev series in y/2, highest coefficient first."""
    b0 = jnp.zeros_like(y)
    b1 = b0
    b2 = b0
    for c in coefficients:
        b2, b1 = b1, b0
        b0 = y * b1 - b2 + _c(y, c)
    return (b0 - b2) * _c(y, 0.5)


def _polyval(coefficients, x):
    p = jnp.full_like(x, coefficients[0])
    for c in coefficients[1:]:
        p = p * x + _c(x, c)
    return p


# --- error functions ---------------------------------------------------------------------


@custom_jvp
def _erf(x):
    return xla.erf(x)


_erf.defjvps(lambda t, ans, x: t * _c(x, 2 / math.sqrt(math.pi)) * jnp.exp(-x * x))


def erf(x):
    """The error function, 2/sqrt(pi) * integral of exp(-t**2) from 0 to x."""
    (x,) = _inexact(x)
    return _erf(x)


@custom_jvp
def _erfc(x):
    small = jnp.abs(x) < _c(x, 1)
    safe = jnp.where(small, jnp.ones_like(x), x)  # the large-|x| form is not used (or valid) below 1
    return jnp.where(small, _c(x, 1) - xla.erf(x), xla._erfc_large(safe, np.dtype(x.dtype)))


_erfc.defjvps(lambda t, ans, x: t * _c(x, -2 / math.sqrt(math.pi)) * jnp.exp(-x * x))


def erfc(x):
    """1 - erf(x), accurate where erf(x) is close to 1 (Cephes' rational forms above |x| = 1)."""
    (x,) = _inexact(x)
    return _erfc(x)


@custom_jvp
def _erfinv(x):
    return xla.erf_inv(x)


_erfinv.defjvps(lambda t, ans, x: t * _c(x, math.sqrt(math.pi) / 2) * jnp.exp(ans * ans))


def erfinv(x):
    """Inverse of erf on (-1, 1); +-inf at +-1."""
    (x,) = _inexact(x)
    return _erfinv(x)


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

# XLA's Lanczos approximation (g = 7, 8 terms)
_LANCZOS_G = 7.0
_LANCZOS_BASE = 0.99999999999980993227684700473478
_LANCZOS = (676.520368121885098567009190444019, -1259.13921672240287047156078755283,
            771.3234287776530788486528258894, -176.61502916214059906584551354,
            12.507343278686904814458936853, -0.13857109526572011689554707,
            9.984369578019570859563e-6, 1.50563273514931155834e-7)


def _lanczos_parts(x):
    """XLA's lgamma/digamma shift: z = x - 1, or -x where x < 1/2 (then reflected)."""
    reflect = x < _c(x, 0.5)
    z = jnp.where(reflect, -x, x - _c(x, 1))
    return reflect, z


def _gammaln_value(x):
    reflect, z = _lanczos_parts(x)
    total = jnp.full_like(x, _LANCZOS_BASE)
    for i, c in enumerate(_LANCZOS):
        total = total + _c(x, c) / (z + _c(x, i + 1))
    t = z + _c(x, _LANCZOS_G + 0.5)
    log_t = jnp.log1p(z / _c(x, _LANCZOS_G + 0.5)) + _c(x, math.log(_LANCZOS_G + 0.5))
    log_y = _c(x, 0.5 * math.log(2 * math.pi)) + (z + _c(x, 0.5) - t / log_t) * log_t + jnp.log(total)
    abs_x = jnp.abs(x)
    frac = abs_x - jnp.floor(abs_x)
    reduced = jnp.where(frac > _c(x, 0.5), _c(x, 1) - frac, frac)
    denom = jnp.log(jnp.sin(_c(x, math.pi) * reduced))
    reflection = jnp.where(jnp.isfinite(denom), _c(x, math.log(math.pi)) - denom - log_y, -denom)
    return jnp.where(jnp.isinf(x), jnp.full_like(x, np.inf), jnp.where(reflect, reflection, log_y))


def _digamma_value(x):
    reflect, z = _lanczos_parts(x)
    num = jnp.zeros_like(x)
    denom = jnp.full_like(x, _LANCZOS_BASE)
    for i, c in enumerate(_LANCZOS):
        d = z + _c(x, i + 1)
        num = num - _c(x, c) / (d * d)
        denom = denom + _c(x, c) / d
    t = z + _c(x, _LANCZOS_G + 0.5)
    log_t = jnp.log1p(z / _c(x, _LANCZOS_G + 0.5)) + _c(x, math.log(_LANCZOS_G + 0.5))
    y = log_t + num / denom - _c(x, _LANCZOS_G) / t
    reduced = x + jnp.abs(jnp.floor(x + _c(x, 0.5)))
    pi = _c(x, math.pi)
    reflection = y - pi * jnp.cos(pi * reduced) / jnp.sin(pi * reduced)
    result = jnp.where(reflect, reflection, y)
    return jnp.where((x <= 0) & (x == jnp.floor(x)), jnp.full_like(x, np.nan), result)


def _trigamma(x):
    """polygamma(1, x): recurrence up to x + 8, then the asymptotic series; reflection below 1/2
    (psi1(1 - x) + psi1(x) = pi**2 / sin(pi x)**2). A composition, so it differentiates too."""
    reflect = x < _c(x, 0.5)
    y = jnp.where(reflect, _c(x, 1) - x, x)
    shift = jnp.zeros_like(y)
    for k in range(8):
        shift = shift + _c(x, 1) / ((y + _c(x, k)) * (y + _c(x, k)))
    w = y + _c(x, 8)
    iw = _c(x, 1) / w
    iw2 = iw * iw
    series = iw + iw2 * _c(x, 0.5) + iw * iw2 * (
        _c(x, 1 / 6) + iw2 * (_c(x, -1 / 30) + iw2 * (_c(x, 1 / 42) + iw2 * (_c(x, -1 / 30) + iw2 * _c(x, 5 / 66)))))
    value = shift + series
    pi = _c(x, math.pi)
    s = jnp.sin(pi * x)
    return jnp.where(reflect, pi * pi / (s * s) - value, value)


_digamma = custom_jvp(_digamma_value)
_digamma.defjvps(lambda t, ans, x: t * _trigamma(x))
_gammaln = custom_jvp(_gammaln_value)
_gammaln.defjvps(lambda t, ans, x: t * _digamma(x))


def gammaln(x):
    """log|Gamma(x)| (XLA's Lanczos approximation with reflection below 1/2)."""
    (x,) = _inexact(x)
    return _gammaln(x)


def digamma(x):
    """d/dx log Gamma(x); NaN at the poles 0, -1, -2, ..."""
    (x,) = _inexact(x)
    return _digamma(x)


def polygamma(n, x):
    """The n-th derivative of digamma, for n = 0 and 1 (others raise NotImplementedError)."""
    if int(n) == 0:
        return digamma(x)
    if int(n) == 1:
        (x,) = _inexact(x)
        return _trigamma(x)
    raise NotImplementedError("omnistage.scipy.special.polygamma supports n = 0 and 1.")


def gamma(x):
    """Gamma(x), with its sign (exp(gammaln) times the sign of Gamma)."""
    (x,) = _inexact(x)
    sign = jnp.where((x > 0) | (jnp.floor(x) % 2 == 0) | (x == jnp.floor(x)), jnp.ones_like(x), -jnp.ones_like(x))
    return sign * jnp.exp(gammaln(x))


def betaln(a, b):
    """log|B(a, b)| = gammaln(a) + gammaln(b) - gammaln(a + b)."""
    a, b = _inexact(a, b)
    return gammaln(a) + gammaln(b) - gammaln(a + b)


def beta(a, b):
    """B(a, b) for positive a, b."""
    return jnp.exp(betaln(a, b))


# --- logistic, x log y ---------------------------------------------------------------------


def expit(x):
    """The logistic sigmoid 1 / (1 + exp(-x))."""
    (x,) = _inexact(x)
    return lax.logistic(x)


@custom_jvp
def _logit(x):
    return jnp.log(x / (_c(x, 1) - x))


_logit.defjvps(lambda t, ans, x: t / (x * (_c(x, 1) - x)))


def logit(x):
    """log(x / (1 - x)), the inverse of expit."""
    (x,) = _inexact(x)
    return _logit(x)


@custom_jvp
def _xlogy(x, y):
    return jnp.where((x != 0) | jnp.isnan(y), x * jnp.log(y), jnp.zeros_like(x))


@_xlogy.defjvp
def _xlogy_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    return _xlogy(x, y), tx * jnp.log(y) + ty * x / y


def xlogy(x, y):
    """x * log(y), 0 where x == 0 (NaN in y still propagates, as SciPy)."""
    x, y = _inexact(x, y)
    x, y = jnp.broadcast_arrays(x, y)
    return _xlogy(x, y)


@custom_jvp
def _xlog1py(x, y):
    return jnp.where((x != 0) | jnp.isnan(y), x * jnp.log1p(y), jnp.zeros_like(x))


@_xlog1py.defjvp
def _xlog1py_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    return _xlog1py(x, y), tx * jnp.log1p(y) + ty * x / (_c(x, 1) + y)


def xlog1py(x, y):
    """x * log1p(y), 0 where x == 0."""
    x, y = _inexact(x, y)
    x, y = jnp.broadcast_arrays(x, y)
    return _xlog1py(x, y)


def entr(x):
    """-x log x for x > 0, 0 at 0, -inf below."""
    (x,) = _inexact(x)
    return jnp.where(x > 0, -xlogy(x, x), jnp.where(x == 0, jnp.zeros_like(x), jnp.full_like(x, -np.inf)))


# --- exponentially scaled modified Bessel functions ----------------------------------------

# Cephes' i0e Chebyshev coefficients (as JAX's _i0e_impl64), highest first
_I0E_A = (-4.41534164647933937950E-18, 3.33079451882223809783E-17, -2.43127984654795469359E-16,
          1.71539128555513303061E-15, -1.16853328779934516808E-14, 7.67618549860493561688E-14,
          -4.85644678311192946090E-13, 2.95505266312963983461E-12, -1.72682629144155570723E-11,
          9.67580903537323691224E-11, -5.18979560163526290666E-10, 2.65982372468238665035E-9,
          -1.30002500998624804212E-8, 6.04699502254191894932E-8, -2.67079385394061173391E-7,
          1.11738753912010371815E-6, -4.41673835845875056359E-6, 1.64484480707288970893E-5,
          -5.75419501008210370398E-5, 1.88502885095841655729E-4, -5.76375574538582365885E-4,
          1.63947561694133579842E-3, -4.32430999505057594430E-3, 1.05464603945949983183E-2,
          -2.37374148058994688156E-2, 4.93052842396707084878E-2, -9.49010970480476444210E-2,
          1.71620901522208775349E-1, -3.04682672343198398683E-1, 6.76795274409476084995E-1)
_I0E_B = (-7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17,
          3.46122286769746109310E-17, -2.82762398051658348494E-16, -3.42548561967721913462E-16,
          1.77256013305652638360E-15, 3.81168066935262242075E-15, -9.55484669882830764870E-15,
          -4.15056934728722208663E-14, 1.54008621752140982691E-14, 3.85277838274214270114E-13,
          7.18012445138366623367E-13, -1.79417853150680611778E-12, -1.32158118404477131188E-11,
          -3.14991652796324136454E-11, 1.18891471078464383424E-11, 4.94060238822496958910E-10,
          3.39623202570838634515E-9, 2.26666899049817806459E-8, 2.04891858946906374183E-7,
          2.89137052083475648297E-6, 6.88975834691682398426E-5, 3.36911647825569408990E-3,
          8.04490411014108831608E-1)
# i1e in the same form (i1e(x) = |x| A(x/2 - 2) up to 8, B(32/x - 2)/sqrt(x) above), fitted
# to scipy.special.i1e by Chebyshev interpolation (relative error < 5e-14)
_I1E_A = (
    7.047032678763368e-15, -5.006439645468356e-14, 3.2207788026615986e-13,
    -1.9838001904782377e-12, 1.1736110540523076e-11, -6.663491748994074e-11,
    3.6255913042039205e-10, -1.8872498779295338e-09, 9.38153752729839e-09,
    -4.4450591412284463e-08, 2.0032947546331058e-07, -8.56872026543836e-07,
    3.4702513081999176e-06, -1.3273163656099299e-05, 4.781565107556757e-05,
    -0.00016176081582594128, 0.0005122859561686, -0.0015135724506312536, 0.004156422944312886,
    -0.010564084894626187, 0.024726449030626502, -0.05294598120809498, 0.10264365868984708,
    -0.176416518357834, 0.25258718644363365,
)
_I1E_B = (
    -2.0378435780948596e-15, -3.803974679110405e-15, 1.072533874578671e-14, 4.270268349452971e-14,
    -2.0772857118644377e-14, -4.083612103437866e-13, -7.19799950637797e-13, 2.035637740243302e-12,
    1.4125905123980949e-11, 3.252601696751275e-11, -1.897486261682209e-11, -5.58974359489209e-10,
    -3.835380383171146e-09, -2.6314688463345777e-08, -2.5122362381034764e-07,
    -3.882564808882786e-06, -0.00011058893876265452, -0.009761097491361477, 0.7785762350182801,
)


def _bessel_parts(x, a, b):
    ax = jnp.abs(x)
    small = ax <= _c(x, 8)
    safe = jnp.where(small, jnp.full_like(x, 8), ax)
    return ax, small, _clenshaw(ax * _c(x, 0.5) - _c(x, 2), a), _clenshaw(_c(x, 32) / safe - _c(x, 2), b) / jnp.sqrt(safe)


def _i0e_value(x):
    _, small, below, above = _bessel_parts(x, _I0E_A, _I0E_B)
    return jnp.where(small, below, above)


def _i1e_value(x):
    ax, small, below, above = _bessel_parts(x, _I1E_A, _I1E_B)
    return jnp.sign(x) * jnp.where(small, below * ax, above)


_i0e = custom_jvp(_i0e_value)
_i1e = custom_jvp(_i1e_value)
_i0e.defjvps(lambda t, ans, x: t * (_i1e(x) - jnp.sign(x) * ans))


@_i1e.defjvp
def _i1e_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    y = _i1e(x)
    eps = _c(x, np.finfo(x.dtype).eps)
    not_tiny = jnp.abs(x) > eps
    safe = jnp.where(not_tiny, x, jnp.full_like(x, eps))
    dy = jnp.where(not_tiny, _i0e(safe) - y * (jnp.sign(safe) + _c(x, 1) / safe), jnp.full_like(x, 0.5))
    return y, t * dy


def i0e(x):
    """exp(-|x|) I0(x)."""
    (x,) = _inexact(x)
    return _i0e(x)


def i1e(x):
    """exp(-|x|) I1(x)."""
    (x,) = _inexact(x)
    return _i1e(x)


def i0(x):
    """The modified Bessel function I0 (jnp.i0)."""
    return jnp.i0(x)


def i1(x):
    """The modified Bessel function I1 = exp(|x|) i1e(x)."""
    (x,) = _inexact(x)
    return jnp.exp(jnp.abs(x)) * _i1e(x)


__all__ = [
    "erf", "erfc", "erfinv", "ndtr", "ndtri", "log_ndtr", "gammaln", "digamma", "polygamma", "gamma",
    "betaln", "beta", "expit", "logit", "xlogy", "xlog1py", "entr", "i0e", "i1e", "i0", "i1", "logsumexp",
    "softmax", "log_softmax",
]
