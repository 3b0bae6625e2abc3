"""The Cauchy distribution (`jax.scipy.stats.cauchy`)."""
import math

from ... import numpy as jnp
from ..promotion import promote_args_inexact
from .derived import exp_of, log_of, reflected


def logpdf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact(x, loc, scale)
    z = (x - loc) / scale
    return -(jnp.log(math.pi * scale) + jnp.log1p(z * z))


def cdf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact(x, loc, scale)
    return 0.5 + jnp.arctan((x - loc) / scale) / math.pi


def ppf(q, loc=0, scale=1):
    q, loc, scale = promote_args_inexact(q, loc, scale)
    return jnp.tan(math.pi * q - math.pi / 2) * scale + loc


def isf(q, loc=0, scale=1):
    q, loc, scale = promote_args_inexact(q, loc, scale)
    return jnp.tan(math.pi / 2 - math.pi * q) * scale + loc


pdf = exp_of(logpdf)
logcdf = log_of(cdf)
sf = reflected(cdf)
logsf = reflected(logcdf)
