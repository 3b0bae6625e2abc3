"""`omnistage.nn.initializers`: JAX's parameter initializers. Each returns `init(key, shape,
dtype=float32)`; they draw with `omnistage.random`, so the values equal JAX's for the same
key wherever the sampler is bit-identical."""
import numpy as np

from .. import numpy as jnp
from .. import random


def zeros(key, shape, dtype=jnp.float32):
    return jnp.zeros(shape, dtype)


def ones(key, shape, dtype=jnp.float32):
    return jnp.ones(shape, dtype)


def constant(value, dtype=jnp.float32):
    def init(key, shape, dtype=dtype):
        return jnp.full(shape, value, dtype)

    return init


def uniform(scale=1e-2, dtype=jnp.float32):
    def init(key, shape, dtype=dtype):
        return random.uniform(key, shape, dtype) * scale

    return init


def normal(stddev=1e-2, dtype=jnp.float32):
    def init(key, shape, dtype=dtype):
        return random.normal(key, shape, dtype) * stddev

    return init


def _fans(shape, in_axis=-2, out_axis=-1, batch_axis=()):
    if len(shape) < 2:
        size = int(np.prod(shape)) if shape else 1
        return size, size
    receptive = int(np.prod([d for i, d in enumerate(shape) if i not in (in_axis % len(shape), out_axis % len(shape))]))
    return shape[in_axis] * receptive, shape[out_axis] * receptive


def variance_scaling(scale, mode, distribution, in_axis=-2, out_axis=-1, batch_axis=(), dtype=jnp.float32):
    """Samples with variance `scale / fan` (fan_in, fan_out or their average), as JAX."""
    if mode not in ("fan_in", "fan_out", "fan_avg"):
        raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
    if distribution not in ("truncated_normal", "normal", "uniform"):
        raise ValueError(f"invalid distribution for variance scaling initializer: {distribution}")

    def init(key, shape, dtype=dtype):
        shape = tuple(shape)
        fan_in, fan_out = _fans(shape, in_axis, out_axis, batch_axis)
        denom = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2}[mode]
        variance = np.asarray(scale / denom, dtype=dtype)
        if distribution == "truncated_normal":
            # the std of a unit normal truncated to (-2, 2)
            stddev = np.sqrt(variance) / np.asarray(0.87962566103423978, dtype)
            return random.truncated_normal(key, -2, 2, shape, dtype) * stddev.astype(dtype)
        if distribution == "normal":
            return random.normal(key, shape, dtype) * np.sqrt(variance).astype(dtype)
        return random.uniform(key, shape, dtype, -1, 1) * np.sqrt(3 * variance).astype(dtype)

    return init


def glorot_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=jnp.float32):
    return variance_scaling(1.0, "fan_avg", "uniform", in_axis, out_axis, batch_axis, dtype)


def glorot_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=jnp.float32):
    return variance_scaling(1.0, "fan_avg", "truncated_normal", in_axis, out_axis, batch_axis, dtype)


def lecun_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=jnp.float32):
    return variance_scaling(1.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)


def lecun_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=jnp.float32):
    return variance_scaling(1.0, "fan_in", "truncated_normal", in_axis, out_axis, batch_axis, dtype)


def he_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=jnp.float32):
    return variance_scaling(2.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)


def he_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=jnp.float32):
    return variance_scaling(2.0, "fan_in", "truncated_normal", in_axis, out_axis, batch_axis, dtype)


xavier_uniform, xavier_normal = glorot_uniform, glorot_normal
kaiming_uniform, kaiming_normal = he_uniform, he_normal
