"""The logistic distribution (`jax.scipy.stats.logistic`)."""
from ... import numpy as jnp
from ..promotion import promote_args_inexact
from ..special import expit, logit
from .derived import exp_of, reflected


def logpdf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact(x, loc, scale)
    half = (x - loc) / scale / 2
    return -2 * jnp.logaddexp(half, -half) - jnp.log(scale)


def cdf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact(x, loc, scale)
    return expit((x - loc) / scale)


def ppf(q, loc=0, scale=1):
    q, loc, scale = promote_args_inexact(q, loc, scale)
    return logit(q) * scale + loc


def isf(q, loc=0, scale=1):
    q, loc, scale = promote_args_inexact(q, loc, scale)
    return -logit(q) * scale + loc


pdf = exp_of(logpdf)
sf = reflected(cdf)
