"""Keys and raw bits: the threefry2x32 counter-based PRNG, exactly as JAX's default.

Owns: key construction from seeds (`PRNGKey`, `key`), `split`, `fold_in`, `bits`, and
key validation. Imports core and lax only; nothing here touches NumPy on traced values.

Matches JAX's defaults as of JAX 0.4.x-0.10 (checked against jax/jaxlib 0.10.2):
`jax_default_prng_impl = "threefry2x32"` and `jax_threefry_partitionable = True` (the
default since JAX 0.5.0). With the partitionable scheme, element `i` (row-major) of a draw
of shape `s` hashes the 64-bit counter `i` split into (high, low) 32-bit words, and
`bits` of 32 bits is the xor of the hash's two output words; `split(key, n)` hashes
counters `0..n-1` and keeps both words as the new keys.

Keys are "raw" keys: uint32 arrays of shape (2,), as `jax.random.PRNGKey` returns.
`key(seed)` returns the same raw array (JAX returns a scalar typed key array, a
`key<fry>` dtype that omnistage does not model); every function here accepts raw keys
exactly as JAX does, so keys are ordinary data (arithmetic, stacking, `jit` arguments), and
any uint32 array of shape (2,) is a valid key.
"""
import math
from collections.abc import Sequence

import numpy as np

from .. import lax
from ..core import dtypes
from ..core.config import config
from ..core.tracer import Tracer
from ..lax._rules import to_operand
from ._threefry import threefry2x32

_UINT_DTYPES = {8: np.dtype("uint8"), 16: np.dtype("uint16"), 32: np.dtype("uint32"), 64: np.dtype("uint64")}


def _u32(v):
    return np.uint32(v)


# --- the hash --------------------------------------------------------------------------
# `threefry2x32` is a primitive of its own (`_threefry`): one statement per hash.


def _key_words(key):
    return (lax.index_in_dim(key, 0, 0, keepdims=False), lax.index_in_dim(key, 1, 0, keepdims=False))


def _counters(shape):
    """(high, low) words of the row-major element index over `shape` (JAX's
    `iota_2x32_shape`); the high word is a rank-0 zero, as no draw has 2**32 elements."""
    size = math.prod(shape)
    if size >= 2**32:
        raise NotImplementedError(
            f"omnistage.random draws at most 2**32 - 1 values per call; shape {shape} has {size}."
        )
    zero = to_operand(_u32(0))
    if not shape:
        return zero, zero
    return zero, lax.reshape(lax.iota(np.uint32, size), shape)


def _hash_shape(key, shape):
    k1, k2 = _key_words(key)
    hi, lo = _counters(shape)
    return threefry2x32(k1, k2, hi, lo)


def _stack_words(w0, w1):
    nd = w0.ndim
    return lax.concatenate([lax.expand_dims(w0, (nd,)), lax.expand_dims(w1, (nd,))], nd)


# --- key checking ----------------------------------------------------------------------


def _check_key(name, key, allow_batched=False):
    """A raw key as an array: uint32 with trailing dimension 2 (JAX's checks and errors)."""
    try:
        k = to_operand(key)
    except TypeError:
        raise TypeError(f"unexpected PRNG key type {type(key).__name__}: keys are uint32[2] arrays") from None
    if k.dtype != np.uint32:
        raise TypeError(
            f"omnistage.random.{name}: invalid PRNG key data: expected a uint32 array of shape (2,) "
            f"(from PRNGKey/key/split), got dtype={k.dtype.name} shape={k.shape}."
        )
    if k.ndim == 0 or k.shape[-1] != 2:
        raise TypeError(
            f"omnistage.random.{name}: invalid PRNG key data: expected key_data.shape to end with "
            f"(2,); got shape={k.shape}."
        )
    if not allow_batched and k.ndim != 1:
        raise ValueError(
            f"{name} accepts a single key, but was given a key array of shape {k.shape[:-1]} != (). "
            f"Use jax.vmap for batching."
        )
    return k


# --- seeds -----------------------------------------------------------------------------


def _seed_array(seed, ctor):
    """The seed as an integer array, converting Python ints as JAX does (through int64,
    so in 32-bit mode a big seed keeps its low 32 bits)."""
    if isinstance(seed, bool):
        seed = int(seed)
    if isinstance(seed, int):
        v = np.int64(seed)  # OverflowError beyond int64, as JAX
        return to_operand(v if config.x64_enabled else np.asarray(v).astype(np.int32))
    s = to_operand(seed)
    if s.ndim:
        raise TypeError(
            f"{ctor} accepts a scalar seed, but was given an array of shape {s.shape} != (). "
            f"Use jax.vmap for batching"
        )
    if not dtypes.is_integer(s.dtype):
        raise TypeError(f"PRNG key seed must be an integer; got {s.dtype.name} value (a scalar of shape ()).")
    return s


def _seed_key(seed, ctor):
    s = _seed_array(seed, ctor)
    low = lax.convert_element_type(s, np.uint32)  # wraps modulo 2**32, as XLA's convert
    if s.dtype.itemsize > 4:
        high = lax.convert_element_type(lax.shift_right_logical(s, np.asarray(32, s.dtype)[()]), np.uint32)
    else:
        # a logical shift by the full width is 0 in XLA (JAX's `seed >> 32`)
        high = to_operand(_u32(0))
    return lax.concatenate([lax.reshape(high, (1,)), lax.reshape(low, (1,))], 0)


def PRNGKey(seed):  # noqa: N802 - JAX's name
    """A raw threefry2x32 key (uint32[2]) from an integer seed: [seed >> 32, seed & 0xFFFFFFFF]."""
    return _seed_key(seed, "PRNGKey")


def key(seed, *, impl=None):
    """A key from an integer seed. omnistage's keys are raw uint32[2] arrays (JAX returns a
    typed scalar key array holding the same two words); only threefry2x32 exists."""
    _check_impl(impl)
    return _seed_key(seed, "key")


def _check_impl(impl):
    if impl not in (None, "threefry2x32"):
        raise ValueError(f'unrecognized PRNG implementation "{impl}". Did you mean one of: "threefry2x32"?')


def key_data(keys):
    """The uint32 words of a key (raw keys are their own data)."""
    return _check_key("key_data", keys, allow_batched=True)


def wrap_key_data(key_bits_array, *, impl=None):
    """A key from its uint32 words (validated; raw keys are their own data)."""
    _check_impl(impl)
    return _check_key("wrap_key_data", key_bits_array, allow_batched=True)


def key_impl(keys):
    _check_key("key_impl", keys, allow_batched=True)
    return "threefry2x32"


def _static_shape(shape, name):
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    out = []
    for d in shape:
        if isinstance(d, Tracer):
            raise TypeError(f"{name}: shapes must be static Python ints, got a traced value in {shape}.")
        d = int(d)
        if d < 0:
            raise ValueError(f"{name}: shape {shape} has a negative dimension.")
        out.append(d)
    return tuple(out)


# --- key operations --------------------------------------------------------------------


def split(key, num=2):
    """`num` new keys (or an array of keys of shape `num` when it is a tuple), shape (*num, 2)."""
    k = _check_key("split", key)
    shape = _static_shape(num if isinstance(num, Sequence) else (num,), "split")
    w0, w1 = _hash_shape(k, shape)
    return _stack_words(w0, w1)


def _fold_in_data(data):
    if isinstance(data, bool):
        data = int(data)
    if isinstance(data, int):
        if not 0 <= data < 2**32:
            raise OverflowError(f"Python integer {data} out of bounds for uint32")
        return to_operand(_u32(data))
    d = to_operand(data)
    if d.ndim:
        raise TypeError(
            f"fold_in accepts a scalar, but was given an array of shape {d.shape} != (). "
            f"Use jax.vmap for batching."
        )
    return lax.convert_element_type(d, np.uint32)


def fold_in(key, data):
    """A new key from `key` and 32-bit integer `data`: threefry of the counter (0, data)."""
    k = _check_key("fold_in", key)
    k1, k2 = _key_words(k)
    w0, w1 = threefry2x32(k1, k2, to_operand(_u32(0)), _fold_in_data(data))
    return _stack_words(w0, w1)


def random_bits(key, bit_width, shape):
    """Unsigned random bits of `bit_width` (8, 16, 32, 64) and `shape` (JAX's partitionable
    threefry scheme: 64 bits concatenate the two hash words, narrower widths truncate their xor)."""
    w0, w1 = _hash_shape(key, shape)
    dtype = _UINT_DTYPES[bit_width]
    if bit_width == 64:
        hi = lax.convert_element_type(w0, dtype)
        lo = lax.convert_element_type(w1, dtype)
        return lax.bitwise_or(lax.shift_left(hi, np.uint64(32)), lo)
    bits = lax.bitwise_xor(w0, w1)
    return bits if bit_width == 32 else lax.convert_element_type(bits, dtype)


def bits(key, shape=(), dtype=None):
    """Uniform random unsigned integers (default dtype uint32, uint64 in 64-bit mode)."""
    k = _check_key("bits", key)
    dt = dtypes.default_uint_dtype() if dtype is None else dtypes.canonicalize_dtype(dtype)
    if dt.kind != "u":
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {dt.name}")
    return random_bits(k, dt.itemsize * 8, _static_shape(shape, "bits"))


__all__ = ["PRNGKey", "key", "key_data", "wrap_key_data", "key_impl", "split", "fold_in", "bits"]
