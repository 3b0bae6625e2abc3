"""The Dirichlet distribution (`jax.scipy.stats.dirichlet`): x's leading axis is the simplex's
(k entries, or k - 1 with the last implied)."""
import numpy as np

from ... import numpy as jnp
from ..promotion import promote_args_inexact
from ..special import gammaln, xlogy


def logpdf(x, alpha):
    x, alpha = promote_args_inexact(x, alpha)
    if alpha.ndim != 1:
        raise ValueError(f"`alpha` must be one-dimensional; got alpha.shape={alpha.shape}")
    if x.shape[0] not in (alpha.shape[0], alpha.shape[0] - 1):
        raise ValueError(
            f"`x` must have either the same number of entries as `alpha` or one entry fewer; got "
            f"x.shape={x.shape}, alpha.shape={alpha.shape}"
        )
    if x.shape[0] != alpha.shape[0]:
        x = jnp.concatenate([x, 1 - x.sum(0, keepdims=True)], axis=0)
    normalize = jnp.sum(gammaln(alpha)) - gammaln(jnp.sum(alpha))
    if x.ndim > 1:
        alpha = jnp.reshape(alpha, alpha.shape + (1,) * (x.ndim - 1))
    log_probs = jnp.sum(xlogy(alpha - 1, x), axis=0) - normalize
    simplex = jnp.all(x > 0, axis=0) & (jnp.abs(jnp.sum(x, axis=0) - 1) < 1e-6)
    return jnp.where(simplex, log_probs, -np.inf)


def pdf(x, alpha):
    return jnp.exp(logpdf(x, alpha))
