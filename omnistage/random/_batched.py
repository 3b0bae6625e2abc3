"""Per-key operations on a batch of keys (n, 2): what `jax.vmap` of `split`, `normal(key, ())`
and `uniform(key, ())` compute, written directly so that rejection samplers (gamma,
poisson) can run one `lax.while_loop` over all their elements, each with its own key.

A vmapped `split(key, num)` hashes counters 0..num-1 under each key, and a scalar draw
hashes the counter 0; so element i of every result equals the unbatched call on key i.
Imports core and lax only.
"""
import numpy as np

from .. import lax
from ..lax._rules import to_operand
from . import prng

_ZERO = np.uint32(0)


def key_words(keys):
    """The two uint32 words of each key of `keys` (n, 2), as two (n,) arrays."""
    return (lax.index_in_dim(keys, 0, 1, keepdims=False), lax.index_in_dim(keys, 1, 1, keepdims=False))


def split_each(keys, num):
    """`split(k, num)` for every key: (n, 2) -> (n, num, 2)."""
    n = keys.shape[0]
    k1, k2 = (lax.broadcast_in_dim(w, (n, num), (0,)) for w in key_words(keys))
    counters = lax.broadcast_in_dim(lax.iota(np.uint32, num), (n, num), (1,))
    w0, w1 = prng.threefry2x32(k1, k2, to_operand(_ZERO), counters)
    return prng._stack_words(w0, w1)


def take_key(split_keys, i):
    """Key `i` of each row of `split_each`'s result: (n, num, 2) -> (n, 2)."""
    return lax.index_in_dim(split_keys, i, 1, keepdims=False)


def scalar_bits(keys, bit_width):
    """`random_bits(k, bit_width, ())` for every key: (n, 2) -> (n,) unsigned."""
    k1, k2 = key_words(keys)
    zero = to_operand(_ZERO)
    w0, w1 = prng.threefry2x32(k1, k2, zero, zero)
    if bit_width == 64:
        hi = lax.convert_element_type(w0, np.uint64)
        lo = lax.convert_element_type(w1, np.uint64)
        return lax.bitwise_or(lax.shift_left(hi, np.uint64(32)), lo)
    bits = lax.bitwise_xor(w0, w1)
    return bits if bit_width == 32 else lax.convert_element_type(bits, np.dtype(f"uint{bit_width}"))
