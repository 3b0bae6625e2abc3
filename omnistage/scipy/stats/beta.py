"""The beta distribution (`jax.scipy.stats.beta`): densities (the CDF needs the regularized
incomplete beta function, not provided yet)."""
import numpy as np

from ... import numpy as jnp
from ..promotion import promote_args_inexact
from ..special import betaln, xlog1py, xlogy


def logpdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = promote_args_inexact(x, a, b, loc, scale)
    y = (x - loc) / scale
    log_probs = -betaln(a, b) + xlogy(a - 1, y) + xlog1py(b - 1, -y) - jnp.log(scale)
    result = jnp.where((x > loc + scale) | (x < loc), -np.inf, log_probs)
    return jnp.where((a <= 0) | (b <= 0) | (scale <= 0), np.nan, result)


def pdf(x, a, b, loc=0, scale=1):
    return jnp.exp(logpdf(x, a, b, loc, scale))
