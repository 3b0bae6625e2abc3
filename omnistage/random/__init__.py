"""`omnistage.random`: JAX's stateless threefry2x32 PRNG, same numbers for the same key.

Keys are raw uint32[2] arrays (`PRNGKey(seed)`, `key(seed)`); `split` and `fold_in` derive
new keys, and the samplers turn a key plus static shape and dtype into values. Everything
is written with lax/numpy operations on uint32, so it runs eagerly, under `jit`, and under
the transformations. Defaults follow JAX 0.5+ (threefry2x32, `jax_threefry_partitionable`
on); see `prng` for the key scheme, and `_xla_math`, `_glibc_log` and `_rsqrt` for how the
floating-point samplers reproduce XLA's CPU arithmetic bit for bit.

Modules: `prng` (the hash, keys, bits), `distributions` (samplers), `gamma` (the gamma
family), `continuous` (laplace, logistic, cauchy, maxwell, t, rademacher), `_batched` (per-key draws for rejection loops), `_special` (erf, erf_inv),
`_xla_math` (XLA's float32 log/log1p), `_glibc_log` (the C library's float64 log XLA
calls), `_rsqrt` (XLA's float32 rsqrt), `_fma` (the fused multiply-add primitive). Imports core, lax and numpy only.
"""
from .prng import PRNGKey, bits, fold_in, key, key_data, key_impl, split, wrap_key_data
from .distributions import (
    bernoulli, categorical, choice, exponential, gumbel, normal, permutation, randint, shuffle,
    truncated_normal, uniform,
)
from .gamma import beta, dirichlet, gamma, loggamma
from .continuous import cauchy, laplace, logistic, maxwell, rademacher, t

__all__ = [
    "PRNGKey", "key", "key_data", "key_impl", "wrap_key_data", "split", "fold_in", "bits",
    "uniform", "normal", "truncated_normal", "exponential", "gumbel", "bernoulli", "randint",
    "categorical", "permutation", "shuffle", "choice", "gamma", "loggamma", "beta", "dirichlet",
    "laplace", "logistic", "cauchy", "maxwell", "t", "rademacher",
]
