"""`omnistage.nn`: JAX's neural-network functions (activations, softmax, one_hot) and
`omnistage.nn.initializers`, written over `omnistage.numpy`/`lax` like user code, so every
transformation applies to them."""
import numpy as np

from .. import lax
from .. import numpy as jnp
from ..autodiff.custom import custom_jvp
from . import initializers  # noqa: F401


def relu(x):
    """max(x, 0), with derivative 0 at 0 (JAX's choice)."""
    return _relu(x)


@custom_jvp
def _relu(x):
    return jnp.maximum(x, 0)


@_relu.defjvp
def _relu_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _relu(x), jnp.where(x > 0, t, jnp.zeros_like(t))


def relu6(x):
    """min(max(x, 0), 6), with derivative 0 at both kinks (JAX's choice, not max/min's 1/2)."""
    return _relu6(x)


@custom_jvp
def _relu6(x):
    return jnp.minimum(jnp.maximum(x, 0), 6.0)


@_relu6.defjvp
def _relu6_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _relu6(x), jnp.where((x > 0) & (x < 6), t, jnp.zeros_like(t))


def sigmoid(x):
    return lax.logistic(jnp.asarray(x) if not hasattr(x, "dtype") else x)


def softplus(x):
    return jnp.logaddexp(x, 0)


def soft_sign(x):
    return x / (jnp.abs(x) + 1)


def silu(x):
    return x * sigmoid(x)


swish = silu


def log_sigmoid(x):
    return -softplus(-x)


def elu(x, alpha=1.0):
    safe = jnp.where(x > 0, 0.0, x)
    return jnp.where(x > 0, x, alpha * jnp.expm1(safe))


def leaky_relu(x, negative_slope=1e-2):
    return jnp.where(x >= 0, x, negative_slope * x)


def selu(x):
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    return scale * elu(x, alpha)


def celu(x, alpha=1.0):
    return jnp.maximum(x, 0.0) + alpha * jnp.expm1(jnp.minimum(x, 0.0) / alpha)


def gelu(x, approximate=True):
    if approximate:
        c = np.sqrt(2 / np.pi).astype(np.float32) if jnp.result_type(x) == np.float32 else np.sqrt(2 / np.pi)
        return 0.5 * x * (1 + jnp.tanh(c * (x + 0.044715 * x**3)))
    from ..random._special import erf  # XLA's erf as lax ops (what random.truncated_normal uses)

    x = jnp.asarray(x)
    return 0.5 * x * (1 + erf(x * np.asarray(1 / np.sqrt(2), x.dtype)))


def hard_tanh(x):
    """x clipped to [-1, 1]; derivative 1 at +-1 (JAX's `where` form, not clip's 1/2)."""
    x = jnp.asarray(x)
    return jnp.where(x > 1, 1, jnp.where(x < -1, -1, x))


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """log(sum(b * exp(a))) computed stably (the max is subtracted first, as JAX)."""
    a = jnp.asarray(a)
    if b is not None:
        a = a + jnp.log(jnp.asarray(b, dtype=a.dtype))
    amax = lax.stop_gradient(jnp.max(a, axis=axis, keepdims=True))
    amax = jnp.where(jnp.isfinite(amax), amax, jnp.zeros_like(amax))
    out = jnp.log(jnp.sum(jnp.exp(a - amax), axis=axis, keepdims=True)) + amax
    if not keepdims:
        out = jnp.squeeze(out, axis=axis) if axis is not None else out.reshape(())
    if return_sign:
        return out, jnp.ones_like(out)
    return out


def log_softmax(x, axis=-1, where=None):
    shifted = x - lax.stop_gradient(jnp.max(x, axis=axis, keepdims=True))
    return shifted - jnp.log(jnp.sum(jnp.exp(shifted), axis=axis, keepdims=True))


def softmax(x, axis=-1, where=None):
    unnormalized = jnp.exp(x - lax.stop_gradient(jnp.max(x, axis=axis, keepdims=True)))
    return unnormalized / jnp.sum(unnormalized, axis=axis, keepdims=True)


def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5):
    mean = jnp.mean(x, axis=axis, keepdims=True) if mean is None else mean
    variance = jnp.var(x, axis=axis, keepdims=True) if variance is None else variance
    return (x - mean) * lax.rsqrt(variance + epsilon)


def one_hot(x, num_classes, dtype=None, axis=-1):
    """`x[..., None] == arange(num_classes)` as `dtype` (float by default), as JAX."""
    x = jnp.asarray(x)
    dtype = jnp.float32 if dtype is None else dtype
    classes = jnp.arange(num_classes)
    out = jnp.expand_dims(x, axis) == jnp.expand_dims(classes, tuple(i for i in range(x.ndim + 1) if i != (axis % (x.ndim + 1))))
    return out.astype(dtype)


__all__ = [
    "celu", "elu", "gelu", "hard_tanh", "initializers", "leaky_relu", "log_sigmoid", "log_softmax",
    "logsumexp", "one_hot", "relu", "relu6", "selu", "sigmoid", "silu", "soft_sign", "softmax",
    "softplus", "standardize", "swish",
]
