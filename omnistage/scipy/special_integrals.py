"""`jax.scipy.special`'s integrals of elementary functions: `spence` (the dilogarithm, Cephes'
rational approximation as JAX's), `owens_t` (Owen's T function: Patefield and Tandy's
13-point quadrature with the exact forms at h = 0 and |a| = 1 and the reciprocal correction
for |a| > 1, as JAX's), and the exponential integrals `expn`, `exp1`, `expi` (the power series
and continued fraction of Numerical Recipes' expint/ei, summed elementwise in masked while
loops until every element has converged; derivatives by their closed forms). Unused branches are evaluated at safe inputs, so gradients stay
finite. Imports numpy, lax and this package's promotion rules.
"""
import math

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..autodiff.custom import custom_jvp
from .promotion import promote_args_real as _real

_SPENCE_A = (4.65128586073990045278E-5, 7.31589045238094711071E-3, 1.33847639578309018650E-1,
             8.79691311754530315341E-1, 2.71149851196553469920E0, 4.25697156008121755724E0,
             3.29771340985225106936E0, 1.00000000000000000126E0)
_SPENCE_B = (6.90990488912553276999E-4, 2.54043763932544379113E-2, 2.82974860602568089943E-1,
             1.41172597751831069617E0, 3.63800533345137075418E0, 5.03278880143316990390E0,
             3.54771340985225096217E0, 9.99999999999999998740E-1)


def spence(x):
    """Spence's function: the integral of log(t) / (1 - t) from 1 to x, for x >= 0 (NaN below)."""
    (x,) = _real("spence", x)
    dt = x.dtype
    special = (x < 0) | (x == 1) | (x == 0)
    z = jnp.where(special | jnp.isnan(x), jnp.full_like(x, 0.75), x)
    above_2 = z > 2
    z = jnp.where(above_2, 1 / z, z)
    above_1_5, below_0_5 = z > 1.5, z < 0.5
    w = jnp.where(above_1_5, 1 / z - 1, jnp.where(below_0_5, -z, z - 1))
    y = -w * jnp.polyval(jnp.asarray(_SPENCE_A, dt), w) / jnp.polyval(jnp.asarray(_SPENCE_B, dt), w)
    zb = jnp.where(below_0_5, z, jnp.full_like(z, 0.25))  # log(1 - z) only where z < 1/2 (finite gradients elsewhere)
    y = jnp.where(below_0_5, math.pi ** 2 / 6 - jnp.log(zb) * jnp.log(1 - zb) - y, y)
    y = jnp.where(above_2 | above_1_5, -0.5 * jnp.log(z) ** 2 - y, y)
    edge = jnp.where(x < 0, jnp.full_like(x, np.nan), jnp.where(x == 1, jnp.zeros_like(x), jnp.full_like(x, math.pi ** 2 / 6)))
    return jnp.where(special, edge, jnp.where(jnp.isnan(x), x, y))


# T(h, a) ~ a sum_i w_i exp(-h**2 (1 + a**2 t_i) / 2) / (1 + a**2 t_i) (Patefield and Tandy's T5)
_OWENS_T_POINTS = (0.0035082039676451715, 0.031279042338030754, 0.085266826283219451, 0.16245071730812277,
                   0.25851196049125435, 0.36807553840697534, 0.48501092905604697, 0.60277514152618577,
                   0.71477884217753227, 0.81475510988760099, 0.89711029755948966, 0.95723808085944262,
                   0.99178832974629704)
_OWENS_T_WEIGHTS = (0.018831438115323503, 0.018567086243977649, 0.018042093461223386, 0.017263829606398753,
                    0.016243219975989857, 0.014994592034116705, 0.013535474469662088, 0.011886351605820165,
                    0.010070377242777432, 0.0081130545742299587, 0.0060419009528470239, 0.0038862217010742058,
                    0.0016793031084546090)


def _owens_t_quadrature(h, a):
    total = jnp.zeros_like(a)
    for t, w in zip(_OWENS_T_POINTS, _OWENS_T_WEIGHTS):
        r = a * a * t
        total = total + w * jnp.exp(-0.5 * h * h * (1 + r)) / (1 + r)
    return a * total


@custom_jvp
def _owens_t(h, a):
    h = jnp.abs(h)
    abs_a = jnp.abs(a)
    h_normed = h / math.sqrt(2)
    small_a = abs_a <= 1
    mod_a = jnp.where(small_a, abs_a, 1 / jnp.where(small_a, jnp.ones_like(abs_a), abs_a))
    mod_h = jnp.where(small_a, h, abs_a * h)
    result = _owens_t_quadrature(mod_h, mod_a)
    result = jnp.where(mod_h == 0, jnp.arctan(mod_a) / (2 * math.pi), result)
    result = jnp.where(mod_a == 1, 0.125 * lax.erfc(-mod_h / math.sqrt(2)) * lax.erfc(mod_h / math.sqrt(2)), result)
    norm_h, norm_ah = lax.erfc(h_normed), lax.erfc(abs_a * h_normed)
    near = 0.25 - 0.25 * lax.erf(h_normed) * lax.erf(abs_a * h_normed) - result
    far = 0.25 * (norm_h + norm_ah - norm_h * norm_ah) - result
    result = jnp.where(abs_a > 1, jnp.where(abs_a * h <= 0.67, near, far), result)
    result = jnp.sign(a) * result
    return jnp.where(jnp.isnan(a) | jnp.isnan(h), jnp.full_like(result, np.nan), result)


_owens_t.defjvps(
    lambda dh, ans, h, a: dh * -jnp.exp(-0.5 * h * h) * lax.erf(a * h / math.sqrt(2)) / (2 * math.sqrt(2 * math.pi)),
    lambda da, ans, h, a: da * jnp.exp(-0.5 * (a * a + 1) * h * h) / (2 * math.pi * (a * a + 1)),
)


def owens_t(h, a):
    """Owen's T function, (1/2pi) * integral of exp(-h**2 (1 + x**2) / 2) / (1 + x**2) from 0 to a."""
    return _owens_t(*_real("owens_t", h, a))



_EULER = 0.57721566490153286061


def _until_converged(step, state):
    """Run `step(state) -> (state, going)` while any element is still going (state[0] is the
    per-element 'going' mask; elements that have stopped keep their values)."""
    def body(carry):
        new, going = step(carry)
        return (going,) + tuple(jnp.where(carry[0], v, old) for v, old in zip(new[1:], carry[1:]))

    return lax.while_loop(lambda carry: jnp.any(carry[0]), body, state)


def _expn_series(n, x, enabled):
    """E_n(x) for x <= 1: (-x)**(n-1)/(n-1)! (psi(n) - log x) - sum over m != n-1 of (-x)**m / ((m-n+1) m!)."""
    eps = np.finfo(x.dtype).eps
    nm1 = n - 1
    safe_nm1 = jnp.where(nm1 == 0, jnp.ones_like(nm1), nm1)
    ans = jnp.where(nm1 == 0, -jnp.log(x) - _EULER, 1 / safe_nm1)
    psi = lax.digamma(jnp.maximum(n, 1))

    def step(state):
        going, i, fact, ans = state
        i = i + 1
        fact = fact * -x / i
        at_pole = i == nm1
        delta = jnp.where(at_pole, fact * (psi - jnp.log(x)), -fact / jnp.where(at_pole, jnp.ones_like(i), i - nm1))
        ans = ans + delta
        return (going, i, fact, ans), going & (jnp.abs(delta) >= jnp.abs(ans) * eps)

    return _until_converged(step, (enabled, jnp.zeros_like(x), jnp.ones_like(x), ans))[3]


def _expn_fraction(n, x, enabled):
    """E_n(x) for x > 1: exp(-x) times the continued fraction 1/(x + n - 1*n/(x + n + 2 - ...)), by Lentz."""
    eps = np.finfo(x.dtype).eps
    tiny = np.finfo(x.dtype).tiny / eps
    b = x + n
    d = 1 / b

    def step(state):
        going, i, b, c, d, h = state
        i = i + 1
        an = -i * (n - 1 + i)
        b = b + 2
        d = 1 / (an * d + b)
        c = b + an / c
        delta = c * d
        return (going, i, b, c, d, h * delta), going & (jnp.abs(delta - 1) >= eps)

    h = _until_converged(step, (enabled, jnp.zeros_like(x), b, jnp.full_like(x, 1 / tiny), d, d))[5]
    return h * jnp.exp(-x)


def _expn_value(n, x):
    small = x <= 1
    positive = x > 0
    safe_x = jnp.where(positive, x, jnp.ones_like(x))
    series = _expn_series(n, jnp.where(small & positive, safe_x, jnp.full_like(x, 0.5)), small & positive & (n > 0))
    fraction = _expn_fraction(n, jnp.where(small, jnp.full_like(x, 2.0), x), ~small & (n > 0))
    out = jnp.where(small, series, fraction)
    out = jnp.where(n == 0, jnp.exp(-safe_x) / safe_x, out)
    at_zero = jnp.where(n > 1, 1 / jnp.where(n > 1, n - 1, jnp.ones_like(n)), jnp.full_like(x, np.inf))
    out = jnp.where(x == 0, at_zero, out)
    bad = (n < 0) | (x < 0) | (n != jnp.floor(n)) | jnp.isnan(x) | jnp.isnan(n)
    return jnp.where(bad, jnp.full_like(x, np.nan), jnp.where(x == np.inf, jnp.zeros_like(x), out))


_expn = custom_jvp(_expn_value, nondiff_argnums=(0,))


@_expn.defjvp
def _expn_jvp(n, primals, tangents):
    """d/dx E_n(x) = -E_{n-1}(x) (E_0(x) = exp(-x)/x; d/dx E_0 = -E_0 (1 + 1/x))."""
    (x,), (t,) = primals, tangents
    ans = _expn(n, x)
    below = _expn(jnp.maximum(n - 1, 0), x)
    return ans, t * jnp.where(n == 0, -ans * (1 + 1 / x), -below)


def expn(n, x):
    """The generalized exponential integral E_n(x) = integral of exp(-x t) / t**n from 1 to inf,
    for integer n >= 0 and x >= 0 (NaN otherwise)."""
    n, x = _real("expn", n, x)
    return _expn(n, x)


def exp1(x):
    """E_1(x) = integral of exp(-t) / t from x to inf, for x >= 0."""
    (x,) = _real("exp1", x)
    return _expn(jnp.ones_like(x), x)


_EI_ASYMPTOTIC_FROM = 40.0  # the asymptotic series reaches float64 rounding from here (40!/40**40 ~ 7e-17)


def _ei_positive(x):
    """Ei(x) for x > 0: gamma + log x + sum x**k / (k k!) below 40, the asymptotic series
    exp(x)/x * sum k!/x**k above."""
    eps = np.finfo(x.dtype).eps
    small = x <= _EI_ASYMPTOTIC_FROM
    xs = jnp.where(small, x, jnp.ones_like(x))
    xl = jnp.where(small, jnp.full_like(x, 2 * _EI_ASYMPTOTIC_FROM), x)

    def series_step(state):
        going, k, fact, total = state
        k = k + 1
        fact = fact * xs / k
        term = fact / k
        return (going, k, fact, total + term), going & (term >= eps * (total + term))

    zero = jnp.zeros_like(x)
    total = _until_converged(series_step, (small, zero, jnp.ones_like(x), zero))[3]

    def asymptotic_step(state):
        going, k, term, total = state
        k = k + 1
        term = term * k / xl
        return (going, k, term, total + term), going & (term >= eps)

    asymptotic = _until_converged(asymptotic_step, (~small, zero, jnp.ones_like(x), zero))[3]
    return jnp.where(small, total + jnp.log(xs) + _EULER, jnp.exp(xl) * (1 + asymptotic) / xl)


def _expi_value(x):
    positive = x > 0
    ei = _ei_positive(jnp.where(positive, x, jnp.ones_like(x)))
    e1 = _expn_value(jnp.ones_like(x), jnp.where(positive, jnp.ones_like(x), -x))
    out = jnp.where(positive, ei, -e1)
    out = jnp.where(x == np.inf, jnp.full_like(x, np.inf), out)
    return jnp.where(x == 0, jnp.full_like(x, -np.inf), out)


_expi = custom_jvp(_expi_value)
_expi.defjvps(lambda t, ans, x: t * jnp.exp(x) / x)


def expi(x):
    """The exponential integral Ei(x) = -principal value of the integral of exp(-t)/t from -x to inf."""
    (x,) = _real("expi", x)
    return _expi(x)

__all__ = ["spence", "owens_t", "expn", "exp1", "expi"]
