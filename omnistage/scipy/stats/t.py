"""Student's t distribution (`jax.scipy.stats.t`)."""
import math

from ... import numpy as jnp
from ..promotion import promote_args_inexact
from .derived import exp_of
from ..special import gammaln


def logpdf(x, df, loc=0, scale=1):
    x, df, loc, scale = promote_args_inexact(x, df, loc, scale)
    z = (x - loc) / scale
    half_df = df / 2
    normalize = gammaln(half_df) + jnp.log(scale * scale * math.pi * df) / 2 - gammaln(half_df + 0.5)
    return -(normalize + (half_df + 0.5) * jnp.log1p(z * z / df))


pdf = exp_of(logpdf)
