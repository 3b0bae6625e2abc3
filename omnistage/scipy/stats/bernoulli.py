"""The Bernoulli distribution (`jax.scipy.stats.bernoulli`)."""
import numpy as np

from ... import numpy as jnp
from ..promotion import promote_args_inexact
from ..special import xlog1py, xlogy


def logpmf(k, p, loc=0):
    k, p, loc = promote_args_inexact(k, p, loc)
    x = k - loc
    log_probs = xlogy(x, p) + xlog1py(1 - x, -p)
    return jnp.where((x < 0) | (x > 1), -np.inf, log_probs)


def pmf(k, p, loc=0):
    return jnp.exp(logpmf(k, p, loc))


def cdf(k, p):
    k, p = promote_args_inexact(k, p)
    invalid = jnp.isnan(k) | jnp.isnan(p) | (p < 0) | (p > 1)
    value = jnp.where(k < 0, jnp.zeros_like(k), jnp.where(k < 1, 1 - p, jnp.ones_like(k)))
    return jnp.where(invalid, np.nan, value)


def ppf(q, p):
    q, p = promote_args_inexact(q, p)
    invalid = jnp.isnan(q) | jnp.isnan(p) | (p < 0) | (p > 1) | (q < 0) | (q > 1)
    return jnp.where(invalid, np.nan, jnp.where(q <= 1 - p, jnp.zeros_like(q), jnp.ones_like(q)))
