"""The Poisson distribution (`jax.scipy.stats.poisson`): the mass function, and the CDF through
the regularized upper incomplete gamma function, P(K <= k) = Q(floor(k) + 1, mu)."""
import numpy as np

from ... import numpy as jnp
from ..promotion import promote_args_inexact
from ..special import gammaincc, gammaln, xlogy
from .derived import exp_of


def logpmf(k, mu, loc=0):
    k, mu, loc = promote_args_inexact(k, mu, loc)
    x = k - loc
    log_probs = xlogy(x, mu) - gammaln(x + 1) - mu
    return jnp.where((x < 0) | (jnp.round(k) != k), -np.inf, log_probs)


def cdf(k, mu, loc=0):
    k, mu, loc = promote_args_inexact(k, mu, loc)
    x = k - loc
    p = gammaincc(jnp.floor(1 + x), mu)
    return jnp.where(x < 0, jnp.zeros_like(p), p)


pmf = exp_of(logpmf)
