"""The multivariate normal distribution (`jax.scipy.stats.multivariate_normal`): the
log-density through the Cholesky factor of the covariance."""
import math

from ... import lax
from ... import numpy as jnp
from ..promotion import promote_args_inexact


def logpdf(x, mean, cov, allow_singular=None):
    if allow_singular is not None:
        raise NotImplementedError("allow_singular argument of multivariate_normal.logpdf")
    x, mean, cov = promote_args_inexact(x, mean, cov)
    if not mean.shape:
        return -(x - mean) ** 2 / cov / 2 - (math.log(2 * math.pi) + jnp.log(cov)) / 2
    n = mean.shape[-1]
    if not cov.shape:
        y = x - mean
        return -jnp.einsum("...i,...i->...", y, y) / cov / 2 - n / 2 * (math.log(2 * math.pi) + jnp.log(cov))
    if cov.ndim < 2 or cov.shape[-2:] != (n, n):
        raise ValueError(f"multivariate_normal.logpdf got incompatible shapes: mean {mean.shape}, cov {cov.shape}.")
    chol = jnp.linalg.cholesky(cov)
    y = x - mean
    batch = jnp.broadcast_shapes(y.shape[:-1], chol.shape[:-2])
    chol = jnp.broadcast_to(chol, batch + (n, n))
    y = jnp.broadcast_to(y, batch + (n,))
    z = lax.triangular_solve(chol, y[..., None], left_side=True, lower=True)[..., 0]
    log_det = jnp.sum(jnp.log(jnp.diagonal(chol, axis1=-2, axis2=-1)), axis=-1)
    return -jnp.einsum("...i,...i->...", z, z) / 2 - n / 2 * math.log(2 * math.pi) - log_det


def pdf(x, mean, cov):
    return jnp.exp(logpdf(x, mean, cov))
