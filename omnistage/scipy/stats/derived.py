"""Functions every distribution module derives from another the same way: the density from the
log-density (`exp_of`), log-CDFs from CDFs (`log_of`), and the survival functions of
distributions symmetric about `loc` from their CDF (`reflected`: sf(x) = cdf(2 loc - x)).
Each keeps the signature of the function it derives from. Imports numpy and promotion only."""
import functools

from ... import numpy as jnp
from ..promotion import promote_args_inexact


def exp_of(log_f):
    """f = exp(log_f) with log_f's arguments (pdf from logpdf, pmf from logpmf)."""
    @functools.wraps(log_f)
    def f(*args, **kwargs):
        return jnp.exp(log_f(*args, **kwargs))

    f.__doc__ = f"exp({log_f.__name__}): the same arguments."
    return f


def log_of(f):
    """log(f) with f's arguments (logcdf from cdf, logsf from sf)."""
    @functools.wraps(f)
    def log_f(*args, **kwargs):
        return jnp.log(f(*args, **kwargs))

    log_f.__doc__ = f"log({f.__name__}): the same arguments."
    return log_f


def reflected(cdf_like):
    """For a distribution symmetric about loc: sf(x, loc, scale) = cdf(-x, -loc, scale) (and
    logsf from logcdf), exact in the upper tail where 1 - cdf would cancel."""
    def sf(x, loc=0, scale=1):
        x, loc, scale = promote_args_inexact(x, loc, scale)
        return cdf_like(-x, -loc, scale)

    sf.__doc__ = f"{cdf_like.__name__} reflected about loc: {cdf_like.__name__}(-x, -loc, scale)."
    return sf


__all__ = ["exp_of", "log_of", "reflected"]
