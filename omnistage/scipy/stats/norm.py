"""The normal distribution (`jax.scipy.stats.norm`)."""
import math

from ... import numpy as jnp
from ..promotion import promote_args_inexact
from ..special import log_ndtr, ndtr, ndtri
from .derived import exp_of, reflected


def logpdf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact(x, loc, scale)
    return -(jnp.log(2 * math.pi * scale * scale) + (x - loc) ** 2 / (scale * scale)) / 2


def cdf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact(x, loc, scale)
    return ndtr((x - loc) / scale)


def logcdf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact(x, loc, scale)
    return log_ndtr((x - loc) / scale)


def ppf(q, loc=0, scale=1):
    q, loc, scale = promote_args_inexact(q, loc, scale)
    return ndtri(q) * scale + loc


def isf(q, loc=0, scale=1):
    q, loc, scale = promote_args_inexact(q, loc, scale)
    return ppf(1 - q, loc, scale)


pdf = exp_of(logpdf)
sf = reflected(cdf)
logsf = reflected(logcdf)
