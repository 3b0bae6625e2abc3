"""The uniform distribution on [loc, loc + scale] (`jax.scipy.stats.uniform`)."""
import numpy as np

from ... import numpy as jnp
from ..promotion import promote_args_inexact
from .derived import exp_of


def logpdf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact(x, loc, scale)
    return jnp.where((x > loc + scale) | (x < loc), -np.inf, -jnp.log(scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact(x, loc, scale)
    inside = (x - loc) / scale
    return jnp.where(x < loc, jnp.zeros_like(x), jnp.where(x > loc + scale, jnp.ones_like(x), inside))


def ppf(q, loc=0, scale=1):
    q, loc, scale = promote_args_inexact(q, loc, scale)
    return jnp.where(jnp.isnan(q) | (q < 0) | (q > 1), np.nan, loc + scale * q)


pdf = exp_of(logpdf)
