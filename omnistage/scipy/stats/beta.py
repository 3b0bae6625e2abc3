"""The beta distribution (`jax.scipy.stats.beta`): densities, and the CDF and survival function
through the regularized incomplete beta function."""
import numpy as np

from ... import numpy as jnp
from ..promotion import promote_args_inexact
from ..special import betainc, betaln, xlog1py, xlogy
from .derived import exp_of, log_of


def logpdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = promote_args_inexact(x, a, b, loc, scale)
    y = (x - loc) / scale
    log_probs = -betaln(a, b) + xlogy(a - 1, y) + xlog1py(b - 1, -y) - jnp.log(scale)
    result = jnp.where((x > loc + scale) | (x < loc), -np.inf, log_probs)
    return jnp.where((a <= 0) | (b <= 0) | (scale <= 0), np.nan, result)


def cdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = promote_args_inexact(x, a, b, loc, scale)
    return betainc(a, b, jnp.clip((x - loc) / scale, 0, 1))


def sf(x, a, b, loc=0, scale=1):
    """1 - cdf as I_{1-y}(b, a), exact in the upper tail."""
    x, a, b, loc, scale = promote_args_inexact(x, a, b, loc, scale)
    return betainc(b, a, 1 - jnp.clip((x - loc) / scale, 0, 1))


pdf = exp_of(logpdf)
logcdf = log_of(cdf)
logsf = log_of(sf)
