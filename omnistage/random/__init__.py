"""`omnistage.random`: JAX's stateless threefry2x32 PRNG, same numbers for the same key.

Keys are raw uint32[2] arrays (`PRNGKey(seed)`, `key(seed)`); `split` and `fold_in` derive
new keys, and the samplers turn a key plus static shape and dtype into values. Everything
is written with lax/numpy operations on uint32, so it runs eagerly, under `jit`, and under
the transformations. Defaults follow JAX 0.5+ (threefry2x32, `jax_threefry_partitionable`
on); see `prng` for the key scheme and `_special` for where floating-point samplers can
differ from JAX in the last bit.

Modules: `prng` (the hash, keys, bits), `distributions` (samplers), `_special` (erf,
erf_inv), `_fma` (the fused multiply-add primitive). Imports core, lax and numpy only.
"""
from .prng import PRNGKey, bits, fold_in, key, key_data, key_impl, split, wrap_key_data
from .distributions import (
    bernoulli, categorical, choice, exponential, gumbel, normal, permutation, randint, shuffle,
    truncated_normal, uniform,
)

__all__ = [
    "PRNGKey", "key", "key_data", "key_impl", "wrap_key_data", "split", "fold_in", "bits",
    "uniform", "normal", "truncated_normal", "exponential", "gumbel", "bernoulli", "randint",
    "categorical", "permutation", "shuffle", "choice",
]
