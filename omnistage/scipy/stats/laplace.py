"""The Laplace distribution (`jax.scipy.stats.laplace`)."""
from ... import numpy as jnp
from ..promotion import promote_args_inexact
from .derived import exp_of


def logpdf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact(x, loc, scale)
    return -(jnp.abs(x - loc) / scale + jnp.log(2 * scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact(x, loc, scale)
    z = (x - loc) / scale
    return jnp.where(z <= 0, 0.5 * jnp.exp(z), 1 - 0.5 * jnp.exp(-z))


pdf = exp_of(logpdf)
