"""More samplers built from uniform, normal and gamma draws: `laplace`, `logistic`,
`cauchy`, `maxwell`, `t`, `rademacher` (jax/_src/random/core.py, step for step).

They use XLA's `log`/`log1p` (`_xla_math`), so laplace, logistic, maxwell, rademacher and
t (df/2 >= 1 in float32) give JAX's CPU bits. `cauchy` ends in `tan`, which XLA expands
with its own polynomial that is not replayed here (last-bit differences). Imports core,
lax and numpy.
"""
import numpy as np

from .. import lax
from .. import numpy as jnp
from ..core import dtypes
from ..lax import xla_math as _xla_math
from . import prng
from .distributions import _check_shape, _float_dtype, _np_shape, _uniform, bernoulli, normal
from .gamma import gamma


def _c(value, dtype):
    return np.asarray(value, dtype)[()]


def _sampler_args(name, key, shape, dtype):
    return (prng._check_key(name, key), prng._static_shape(shape, name), _float_dtype(dtype, name))


def laplace(key, shape=(), dtype=None):
    """Laplace(0, 1) values: sign(u) * log1p(-|u|), u uniform in (-1, 1)."""
    k, shape, dt = _sampler_args("laplace", key, shape, dtype)
    u = _uniform(k, shape, dt, _c(-1 + np.finfo(dt).epsneg, dt), _c(1, dt))
    return lax.mul(lax.sign(u), _xla_math.log1p(lax.neg(lax.abs(u))))


def logistic(key, shape=(), dtype=None):
    """Logistic(0, 1) values: log(u) - log1p(-u), u uniform in [tiny, 1)."""
    k, shape, dt = _sampler_args("logistic", key, shape, dtype)
    x = _uniform(k, shape, dt, _c(np.finfo(dt).tiny, dt), _c(1, dt))
    return lax.sub(_xla_math.log(x), _xla_math.log1p(lax.neg(x)))


def cauchy(key, shape=(), dtype=None):
    """Standard Cauchy values: tan(pi (u - 1/2)), u uniform in [eps, 1)."""
    k, shape, dt = _sampler_args("cauchy", key, shape, dtype)
    u = _uniform(k, shape, dt, _c(np.finfo(dt).eps, dt), _c(1, dt))
    return lax.tan(lax.mul(_c(np.pi, dt), lax.sub(u, _c(0.5, dt))))


def maxwell(key, shape=(), dtype=None):
    """Maxwell values: the Euclidean norm of three standard normals."""
    k, shape, dt = _sampler_args("maxwell", key, shape, dtype)
    x = normal(k, shape + (3,), dt)
    # left-to-right sum of squares, as XLA's reduction of this short row
    squares = [lax.mul(v, v) for v in (lax.index_in_dim(x, i, x.ndim - 1, False) for i in range(3))]
    return lax.sqrt(lax.add(lax.add(squares[0], squares[1]), squares[2]))


def t(key, df, shape=(), dtype=None):
    """Student's t values with `df` degrees of freedom: n * sqrt((df/2) / Gamma(df/2))."""
    k = prng._check_key("t", key)
    dt = _float_dtype(dtype, "t")
    if shape is None:
        shape = _np_shape(df)
    else:
        shape = prng._static_shape(shape, "t")
        _check_shape("t", shape, _np_shape(df))
    df = lax.convert_element_type(df, dt)
    keys = prng.split(k)
    n = normal(lax.index_in_dim(keys, 0, 0, False), shape, dt)
    half_df = lax.mul(df, _c(0.5, dt))  # XLA's rewrite of df / 2
    g = gamma(lax.index_in_dim(keys, 1, 0, False), half_df, shape, dt)
    return n * jnp.sqrt(half_df / g)


def rademacher(key, shape=(), dtype=None):
    """-1 or 1 with equal probability (2 * bernoulli(0.5) - 1), default dtype int."""
    k = prng._check_key("rademacher", key)
    dt = dtypes.canonicalize_dtype(int if dtype is None else dtype)
    b = lax.convert_element_type(bernoulli(k, 0.5, prng._static_shape(shape, "rademacher")), dt)
    return lax.convert_element_type(lax.sub(lax.mul(_c(2, dt), b), _c(1, dt)), dt)


__all__ = ["laplace", "logistic", "cauchy", "maxwell", "t", "rademacher"]
