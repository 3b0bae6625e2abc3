"""Gamma-family samplers: `gamma`, `loggamma`, `beta`, `dirichlet`.

`gamma` is JAX's algorithm step for step (jax/_src/random/core.py, `_gamma_one`): Marsaglia
and Tsang's rejection method, alpha < 1 boosted to alpha + 1 and corrected by
`U**(1/alpha)`. Each element gets its own key (`split(key, size)`), and all elements run
in one `lax.while_loop` that keeps iterating while any element is still rejected, updating
only those (what JAX's CPU lowering, a vmap of the scalar sampler, computes); so
element i is the scalar algorithm on key i.

Bit-level agreement with JAX (float32): the arithmetic is replayed with XLA's CPU
rounding: `1/3 / sqrt(d)` is `1/3 * rsqrt(d)` with the hardware estimate (`_rsqrt`),
`1 + x * c` and the acceptance test's `1 - 0.0331 X**2` and `X/2 + d (1 - V + log V)` are
fused multiply-adds, `log` is XLA's (`_xla_math`). What stays approximate: `U**(1/alpha)`
for alpha < 1 (XLA calls the C library's `powf`/`pow`; omnistage's `pow` may differ in
the last bit), and in float64 the rsqrt, which XLA computes from the AVX-512
`vrsqrt14pd` estimate (a 2**16-entry hardware table) and two Newton steps.

Imports core, lax and numpy.
"""
import math

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..lax import xla_math as _xla_math
from . import _batched, prng
from ..lax.fused_multiply_add import fma
from ._rsqrt import rsqrt_f32
from .distributions import _FLOAT_BITS, _check_shape, _float_dtype, _np_shape, normal_from_bits, uniform_from_bits


def _c(value, dtype):
    return np.asarray(value, dtype)[()]


def _rsqrt(x):
    if np.dtype(x.dtype) == np.float32:
        return rsqrt_f32(x)
    return lax.rsqrt(x)


def _draw(keys, dtype, from_bits):
    """One value per key (n,): `from_bits` of the scalar draw's random bits."""
    return from_bits(_batched.scalar_bits(keys, _FLOAT_BITS[dtype.name][0]), dtype)


def _normal_each(keys, dtype):
    return _draw(keys, dtype, normal_from_bits)


def _uniform_each(keys, dtype):
    return _draw(keys, dtype, lambda bits, dt: uniform_from_bits(bits, dt, _c(0, dt), _c(1, dt)))


def _positive_v(keys, c, dtype):
    """JAX's inner loop: draw x ~ N(0, 1) until v = 1 + x c > 0 (per element)."""
    n = keys.shape[0]
    zero = lax.broadcast_in_dim(_c(0, dtype), (n,), ())

    def body(carry):
        k, x, v = carry
        pending = lax.le(v, _c(0, dtype))
        pairs = _batched.split_each(k, 2)
        new_x = _normal_each(_batched.take_key(pairs, 1), dtype)
        new_v = fma(new_x, c, _c(1, dtype))
        keep = lax.broadcast_in_dim(pending, (n, 2), (0,))
        return (lax.select(keep, _batched.take_key(pairs, 0), k),
                lax.select(pending, new_x, x), lax.select(pending, new_v, v))

    def cond(carry):
        return lax.reduce_or(lax.le(carry[2], _c(0, dtype)), (0,))

    _, x, v = lax.while_loop(cond, body, (keys, zero, lax.broadcast_in_dim(_c(-1, dtype), (n,), ())))
    return x, v


def _rejected(d, X, V, U, dtype):
    """Marsaglia-Tsang's test, True where the candidate (X = x**2, V = v**3, U) is rejected
    (evaluated with XLA's fused multiply-adds)."""
    squeeze = lax.ge(U, fma(lax.mul(X, X), _c(-0.0331, dtype), _c(1, dtype)))
    log_v = _xla_math.log(V)
    bound = fma(X, _c(0.5, dtype), lax.mul(d, lax.add(lax.sub(_c(1, dtype), V), log_v)))
    return lax.bitwise_and(squeeze, lax.ge(_xla_math.log(U), bound))


def _marsaglia_tsang(keys, d, c, dtype):
    """V of the accepted candidate, per element (JAX's outer loop from (X, V, U) = (0, 1, 2),
    which is always rejected)."""
    n = keys.shape[0]

    def full(v):
        return lax.broadcast_in_dim(_c(v, dtype), (n,), ())

    def body(carry):
        k, X, V, U, pending = carry
        triple = _batched.split_each(k, 3)
        x, v = _positive_v(_batched.take_key(triple, 1), c, dtype)
        new = (_batched.take_key(triple, 0), lax.mul(x, x), lax.mul(lax.mul(v, v), v),
               _uniform_each(_batched.take_key(triple, 2), dtype))
        keep2 = lax.broadcast_in_dim(pending, (n, 2), (0,))
        k = lax.select(keep2, new[0], k)
        X, V, U = (lax.select(pending, a, b) for a, b in zip(new[1:], (X, V, U)))
        return k, X, V, U, _rejected(d, X, V, U, dtype)

    def cond(carry):
        return lax.reduce_or(carry[4], (0,))

    init = (keys, full(0), full(1), full(2), lax.broadcast_in_dim(np.bool_(True), (n,), ()))
    return lax.while_loop(cond, body, init)[2]


def _gamma_flat(key, alpha, dtype, log_space):
    """Gamma(alpha) samples for a flat (n,) alpha, one key per element."""
    n = alpha.shape[0]
    one = _c(1, dtype)
    keys = lax.reshape(prng.split(key, n), (n, 2))
    boost = lax.ge(alpha, one)
    boosted = lax.select(boost, alpha, lax.add(alpha, one))
    d = lax.sub(boosted, _c(1 / 3, dtype))
    c = lax.mul(_rsqrt(d), _c(1 / 3, dtype))  # XLA's rewrite of 1/3 / sqrt(d)
    pairs = _batched.split_each(keys, 2)
    V = _marsaglia_tsang(_batched.take_key(pairs, 0), d, c, dtype)
    subkeys = _batched.take_key(pairs, 1)
    if log_space:
        # log(U) ~ -Exponential(): -log1p(-u), so that both spaces use the same draw
        u = _uniform_each(subkeys, dtype)
        log_samples = _xla_math.log1p(lax.neg(u))
        no_boost = lax.bitwise_or(boost, lax.eq(log_samples, _c(0, dtype)))
        log_boost = lax.select(no_boost, lax.broadcast_in_dim(_c(0, dtype), (n,), ()),
                               lax.mul(log_samples, lax.div(one, alpha)))
        return lax.add(lax.add(_xla_math.log(d), _xla_math.log(V)), log_boost)
    samples = lax.sub(one, _uniform_each(subkeys, dtype))
    power = _xla_math.flush_denormals(lax.pow(samples, lax.div(one, alpha)))
    out = lax.mul(lax.mul(d, V), lax.select(boost, lax.broadcast_in_dim(one, (n,), ()), power))
    return _xla_math.flush_denormals(out)


def _gamma(name, key, a, shape, dtype, log_space):
    k = prng._check_key(name, key)
    dt = _float_dtype(dtype, name)
    if shape is None:
        shape = _np_shape(a)
    else:
        shape = prng._static_shape(shape, name)
        _check_shape(name, shape, _np_shape(a))
    a = jnp.broadcast_to(lax.convert_element_type(a, dt), shape)
    n = math.prod(shape)
    if n == 0:
        return jnp.zeros(shape, dt)
    # half-precision types sample in float32 (as XLA's CPU backend computes them)
    work = np.dtype(np.float32) if dt.itemsize < 4 else dt
    flat = lax.convert_element_type(lax.reshape(a, (n,)), work)
    out = _gamma_flat(k, flat, work, log_space)
    return lax.reshape(lax.convert_element_type(out, dt), shape)


def gamma(key, a, shape=None, dtype=None):
    """Gamma(a) samples (unit scale), shape `shape` (default: a's shape)."""
    return _gamma("gamma", key, a, shape, dtype, log_space=False)


def loggamma(key, a, shape=None, dtype=None):
    """log of Gamma(a) samples, computed in log space (accurate for small a)."""
    return _gamma("loggamma", key, a, shape, dtype, log_space=True)


def beta(key, a, b, shape=None, dtype=None):
    """Beta(a, b) samples: X / (X + Y) from log-space gamma draws (JAX's algorithm)."""
    k = prng._check_key("beta", key)
    dt = _float_dtype(dtype, "beta")
    if shape is None:
        shape = np.broadcast_shapes(_np_shape(a), _np_shape(b))
    else:
        shape = prng._static_shape(shape, "beta")
        _check_shape("beta", shape, _np_shape(a), _np_shape(b))
    a = jnp.broadcast_to(lax.convert_element_type(a, dt), shape)
    b = jnp.broadcast_to(lax.convert_element_type(b, dt), shape)
    keys = prng.split(k)
    log_gamma_a = loggamma(lax.index_in_dim(keys, 0, 0, False), a, shape, dt)
    log_gamma_b = loggamma(lax.index_in_dim(keys, 1, 0, False), b, shape, dt)
    # normalize in log space (the larger of the two is subtracted), then exponentiate
    log_max = lax.max(log_gamma_a, log_gamma_b)
    gamma_a = _xla_math.exp(lax.sub(log_gamma_a, log_max))
    gamma_b = _xla_math.exp(lax.sub(log_gamma_b, log_max))
    return lax.div(gamma_a, lax.add(gamma_a, gamma_b))


def dirichlet(key, alpha, shape=None, dtype=None):
    """Dirichlet(alpha) samples: normalized log-space gamma draws along the last axis."""
    k = prng._check_key("dirichlet", key)
    dt = _float_dtype(dtype, "dirichlet")
    alpha = jnp.asarray(alpha)
    if alpha.ndim < 1:
        raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == {alpha.ndim}")
    if shape is None:
        shape = alpha.shape[:-1]
    else:
        shape = prng._static_shape(shape, "dirichlet")
        _check_shape("dirichlet", shape, alpha.shape[:-1])
    full = shape + alpha.shape[-1:]
    log_gamma = loggamma(k, jnp.broadcast_to(alpha.astype(dt), full), full, dt)
    return _softmax_last(log_gamma)


def _softmax_last(x):
    """jax.nn.softmax along the last axis as XLA evaluates it: XLA's exp, and the division
    by the row sums rewritten as a multiplication by their reciprocals."""
    e = _xla_math.exp(x - jnp.max(x, axis=-1, keepdims=True))
    return e * (1 / _row_sums(e))


def _row_sums(e):
    """Sums over the last axis, keepdims. Short rows add left to right, as XLA's CPU reduce
    does (omnistage's own sum accumulates float32 in double)."""
    k = e.shape[-1]
    if k > 16:
        return jnp.sum(e, axis=-1, keepdims=True)
    total = lax.slice_in_dim(e, 0, 1, 1, e.ndim - 1)
    for i in range(1, k):
        total = lax.add(total, lax.slice_in_dim(e, i, i + 1, 1, e.ndim - 1))
    return total


__all__ = ["gamma", "loggamma", "beta", "dirichlet"]
