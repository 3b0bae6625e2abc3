"""The chi-squared distribution (`jax.scipy.stats.chi2`): Gamma(df/2) scaled by 2, its CDF and
survival function through the regularized incomplete gamma functions."""
import numpy as np

from ... import numpy as jnp
from ..promotion import promote_args_inexact
from ..special import gammainc, gammaincc, gammaln
from .derived import exp_of, log_of


def logpdf(x, df, loc=0, scale=1):
    x, df, loc, scale = promote_args_inexact(x, df, loc, scale)
    y = (x - loc) / scale
    half_df = df / 2
    kernel = (half_df - 1) * jnp.log(y) - y / 2
    normalize = -(gammaln(half_df) + np.log(2) * half_df)
    return jnp.where(x < loc, -np.inf, normalize - jnp.log(scale) + kernel)


def cdf(x, df, loc=0, scale=1):
    x, df, loc, scale = promote_args_inexact(x, df, loc, scale)
    return gammainc(df / 2, jnp.clip((x - loc) / (2 * scale), 0, np.inf))


def sf(x, df, loc=0, scale=1):
    x, df, loc, scale = promote_args_inexact(x, df, loc, scale)
    return gammaincc(df / 2, jnp.clip((x - loc) / (2 * scale), 0, np.inf))


pdf = exp_of(logpdf)
logcdf = log_of(cdf)
logsf = log_of(sf)
