"""The gamma distribution (`jax.scipy.stats.gamma`): densities, and the CDF and survival
function through the regularized incomplete gamma functions."""
import numpy as np

from ... import numpy as jnp
from ..promotion import promote_args_inexact
from ..special import gammainc, gammaincc, gammaln, xlogy
from .derived import exp_of, log_of


def logpdf(x, a, loc=0, scale=1):
    x, a, loc, scale = promote_args_inexact(x, a, loc, scale)
    ok = x >= loc
    y = jnp.where(ok, (x - loc) / scale, jnp.ones_like(x))
    log_probs = xlogy(a - 1, y) - y - (gammaln(a) + jnp.log(scale))
    return jnp.where(ok, log_probs, -np.inf)


def cdf(x, a, loc=0, scale=1):
    x, a, loc, scale = promote_args_inexact(x, a, loc, scale)
    return gammainc(a, jnp.clip((x - loc) / scale, 0, np.inf))


def sf(x, a, loc=0, scale=1):
    x, a, loc, scale = promote_args_inexact(x, a, loc, scale)
    y = (x - loc) / scale
    return jnp.where(y < 0, jnp.ones_like(y), gammaincc(a, jnp.maximum(y, 0)))


pdf = exp_of(logpdf)
logcdf = log_of(cdf)
logsf = log_of(sf)
