"""The gamma distribution (`jax.scipy.stats.gamma`): densities (the CDF needs the regularized
incomplete gamma function, not provided yet)."""
import numpy as np

from ... import numpy as jnp
from ..promotion import promote_args_inexact
from ..special import gammaln, xlogy


def logpdf(x, a, loc=0, scale=1):
    x, a, loc, scale = promote_args_inexact(x, a, loc, scale)
    ok = x >= loc
    y = jnp.where(ok, (x - loc) / scale, jnp.ones_like(x))
    log_probs = xlogy(a - 1, y) - y - (gammaln(a) + jnp.log(scale))
    return jnp.where(ok, log_probs, -np.inf)


def pdf(x, a, loc=0, scale=1):
    return jnp.exp(logpdf(x, a, loc, scale))
