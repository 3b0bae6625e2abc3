"""`jax.scipy.special`'s gamma family beyond gammaln/digamma: the regularized incomplete gamma
and beta functions (`gammainc`, `gammaincc`, `betainc`), the Hurwitz `zeta`, `multigammaln`,
`gammasgn`, real `loggamma`, `factorial`, `comb`, `poch` and `bernoulli`, with JAX's
definitions and conventions (NaN or 0 outside the domain as JAX returns them).

Compositions of `omnistage.lax`'s special functions (which carry JAX's derivative rules) and
jnp. Imports numpy, lax and this package's promotion rules.
"""
import operator

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..autodiff.custom import custom_jvp
from .promotion import promote_args_real as _real


def gammainc(a, x):
    """P(a, x), the regularized lower incomplete gamma function."""
    return lax.igamma(*_real("gammainc", a, x))


def gammaincc(a, x):
    """Q(a, x) = 1 - P(a, x), the regularized upper incomplete gamma function."""
    return lax.igammac(*_real("gammaincc", a, x))


def betainc(a, b, x):
    """I_x(a, b), the regularized incomplete beta function."""
    return lax.betainc(*_real("betainc", a, b, x))


def zeta(x, q=None):
    """The Hurwitz zeta function sum_k (q + k)**-x (q is required, as in JAX)."""
    if q is None:
        raise NotImplementedError(
            "Riemann zeta function not implemented; pass q != None to compute the Hurwitz Zeta function.")
    return lax.zeta(*_real("zeta", x, q))


def gammasgn(x):
    """The sign of Gamma(x): NaN at the poles and -inf, -1 where Gamma is negative (and at -0)."""
    (x,) = _real("gammasgn", x)
    floor_x = jnp.floor(x)
    negative = x < 0
    nan = (negative & (x == floor_x)) | jnp.isnan(x)
    minus = (negative & (floor_x % 2 != 0)) | ((x == 0) & jnp.signbit(x))
    one = jnp.ones_like(x)
    return jnp.where(nan, jnp.full_like(x, np.nan), jnp.where(minus, -one, one))


def loggamma(x):
    """log Gamma(x) for real x > 0, NaN elsewhere (real inputs only)."""
    (x,) = _real("loggamma", x)
    return jnp.where(x > 0, lax.lgamma(x), jnp.full_like(x, np.nan))


def factorial(n, exact=False):
    """n! = Gamma(n + 1) as a float; 0 for n < 0 (exact=True is not supported, as JAX)."""
    if exact:
        raise NotImplementedError("factorial with exact=True")
    (n,) = _real("factorial", n)
    return jnp.where(n < 0, jnp.zeros_like(n), jnp.exp(lax.lgamma(n + 1)))


def comb(N, k, *, repetition=False):  # noqa: N803 - scipy's argument name
    """N choose k by log-gamma; 0 where k > N, N < 0 or k < 0 (without repetition)."""
    N, k = _real("comb", N, k)  # noqa: N806
    if repetition:
        return jnp.where((k == 0) & (N >= 0), jnp.ones_like(N), comb(N + k - 1, k))
    ok = (k <= N) & (N >= 0) & (k >= 0)
    safe_n, safe_k = jnp.where(ok, N, jnp.zeros_like(N)), jnp.where(ok, k, jnp.zeros_like(k))
    value = jnp.exp(lax.lgamma(safe_n + 1) - lax.lgamma(safe_k + 1) - lax.lgamma(safe_n + 1 - safe_k))
    return jnp.where(ok, value, jnp.zeros_like(value))


def _gamma(x):
    return gammasgn(x) * jnp.exp(lax.lgamma(x))


@custom_jvp
def _poch(z, m):
    return jnp.where(m == 0, jnp.ones_like(z), _gamma(z + m) / _gamma(z))


_poch.defjvps(
    lambda tz, ans, z, m: tz * (lax.digamma(z + m) - lax.digamma(z)) * ans,
    lambda tm, ans, z, m: tm * lax.digamma(z + m) * ans,
)


def poch(z, m):
    """The Pochhammer symbol (z)_m = Gamma(z + m) / Gamma(z)."""
    return _poch(*_real("poch", z, m))


def multigammaln(a, d):
    """log of the multivariate gamma function of dimension d (a static int)."""
    d = operator.index(d)
    (a,) = _real("multigammaln", a)
    constant = 0.25 * d * (d - 1) * np.log(np.pi)
    shifts = jnp.arange(d, dtype=a.dtype) / 2
    return jnp.sum(lax.lgamma(jnp.expand_dims(a, -1) - shifts), axis=-1) + jnp.asarray(constant, a.dtype)


def bernoulli(n):
    """The Bernoulli numbers B_0 .. B_n (B_1 = -1/2): B_m = (-1)**(m/2+1) 2 m! zeta(m) / (2 pi)**m."""
    n = operator.index(n)
    if n < 0:
        raise ValueError("n must be a non-negative integer.")
    b3 = jnp.array([1, -1 / 2, 1 / 6])
    if n < 3:
        return b3[:n + 1]
    bn = jnp.zeros(n + 1).at[:3].set(b3)
    m = jnp.arange(4, n + 1, 2, dtype=bn.dtype)
    q1 = (1.0 / np.pi ** 2) * jnp.cumprod(-(m - 1) * m / 4 / np.pi ** 2)
    return bn.at[4::2].set(q1 * lax.zeta(m, jnp.ones_like(m)))  # JAX sums zeta(m) to 49 terms: 3e-6 short at m = 4


__all__ = ["gammainc", "gammaincc", "betainc", "zeta", "gammasgn", "loggamma", "factorial", "comb", "poch",
           "multigammaln", "bernoulli"]
