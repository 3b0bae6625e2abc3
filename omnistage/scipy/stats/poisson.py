"""The Poisson distribution (`jax.scipy.stats.poisson`): the mass function (the CDF needs the
regularized incomplete gamma function, not provided yet)."""
import numpy as np

from ... import numpy as jnp
from ..promotion import promote_args_inexact
from ..special import gammaln, xlogy


def logpmf(k, mu, loc=0):
    k, mu, loc = promote_args_inexact(k, mu, loc)
    x = k - loc
    log_probs = xlogy(x, mu) - gammaln(x + 1) - mu
    return jnp.where((x < 0) | (jnp.round(k) != k), -np.inf, log_probs)


def pmf(k, mu, loc=0):
    return jnp.exp(logpmf(k, mu, loc))
