"""`omnistage.nn`: JAX's neural-network functions (activations, softmax, one_hot) and
`omnistage.nn.initializers`, written over `omnistage.numpy`/`lax` like user code, so every
transformation applies to them."""
import numpy as np

from .. import lax
from .. import numpy as jnp
from ..autodiff.custom import custom_jvp
from ..numpy.eager_programs import wrap_module_functions
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
    from ..lax.error_function import erf  # XLA's erf as lax ops (what random.truncated_normal uses)

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


def identity(x):
    return x


tanh = jnp.tanh


def glu(x, axis=-1):
    """Gated linear unit: the first half of x along axis times sigmoid of the second."""
    x = jnp.asarray(x)
    if x.shape[axis] % 2:
        raise ValueError("glu: axis size must be divisible by 2")
    x1, x2 = jnp.split(x, 2, axis)
    return x1 * sigmoid(x2)


def hard_sigmoid(x):
    return relu6(x + 3.0) / 6.0


def hard_silu(x):
    x = jnp.asarray(x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


@custom_jvp
def log1mexp(x):
    """log(1 - exp(-x)) for x >= 0, stable at both ends (Maechler's switch at log 2)."""
    x = jnp.asarray(x)
    return jnp.where(x < np.log(2.0), jnp.log(-jnp.expm1(-x)), jnp.log1p(-jnp.exp(-x)))


log1mexp.defjvps(lambda t, ans, x: t / jnp.expm1(x))


def logmeanexp(x, axis=None, where=None, keepdims=False):
    """log(mean(exp(x))) computed stably."""
    x = jnp.asarray(x)
    lse = logsumexp(x, axis=axis, where=where, keepdims=keepdims)
    count = jnp.sum(jnp.ones_like(x) if where is None else jnp.asarray(where, dtype=x.dtype), axis=axis, keepdims=keepdims)
    return lse - jnp.log(count.astype(lse.dtype))


def mish(x):
    x = jnp.asarray(x)
    return x * jnp.tanh(softplus(x))


def sparse_plus(x):
    x = jnp.asarray(x)
    return jnp.where(x <= -1.0, 0.0, jnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


def sparse_sigmoid(x):
    return 0.5 * jnp.clip(jnp.asarray(x) + 1.0, 0.0, 2.0)


def squareplus(x, b=4):
    x = jnp.asarray(x)
    return (x + jnp.sqrt(jnp.square(x) + b)) / 2


def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None, is_causal=False,
                          query_seq_lengths=None, key_value_seq_lengths=None, local_window_size=None,
                          implementation=None):
    """softmax(q k^T * scale + bias, masked) v over (batch, seq, heads, dim) arrays (JAX's
    'xla' implementation; grouped heads: key/value heads divide the query heads)."""
    if query_seq_lengths is not None or key_value_seq_lengths is not None or local_window_size is not None:
        raise NotImplementedError("dot_product_attention: sequence lengths and local windows are not supported.")
    q, k, v = (jnp.asarray(a) for a in (query, key, value))
    squeeze = q.ndim == 3
    if squeeze:
        q, k, v = q[None], k[None], v[None]
    _, t, n, h = q.shape
    kv_heads = k.shape[-2]
    scale = 1.0 / np.sqrt(h) if scale is None else scale
    q = q.reshape(q.shape[:2] + (kv_heads, n // kv_heads, h))
    logits = jnp.einsum("btkgh,bskh->bkgts", q, k) * jnp.asarray(scale, dtype=q.dtype)
    logits = logits.reshape((logits.shape[0], n) + logits.shape[3:])
    if bias is not None:
        logits = logits + jnp.asarray(bias).reshape((-1,) + jnp.asarray(bias).shape[-3:]) if jnp.ndim(bias) == 4 else logits + bias
    allowed = jnp.ones(logits.shape, bool)
    if mask is not None:
        allowed = allowed & jnp.asarray(mask, dtype=bool)
    if is_causal:
        s = k.shape[1]
        allowed = allowed & jnp.tril(jnp.ones((t, s), bool))
    big_negative = np.asarray(np.finfo(logits.dtype).min * 0.7, logits.dtype)
    weights = softmax(jnp.where(allowed, logits, big_negative), axis=-1)
    weights = weights.reshape(weights.shape[:1] + (kv_heads, n // kv_heads) + weights.shape[2:])
    out = jnp.einsum("bkgts,bskh->btkgh", weights, v).reshape(v.shape[:1] + (t, n, v.shape[-1]))
    return out[0] if squeeze else out


# Called eagerly, each is one cached program over its array operand (numpy/eager_programs.py):
# stax's layers and an eager accuracy over a test set call them outside jit, as JAX's jitted ones.
wrap_module_functions(globals(), (
    "sigmoid", "soft_sign", "silu", "log_sigmoid", "elu", "leaky_relu", "selu", "celu", "gelu",
    "hard_tanh", "logsumexp", "log_softmax", "softmax", "standardize", "one_hot", "glu",
    "hard_sigmoid", "hard_silu", "log1mexp", "logmeanexp", "mish", "sparse_plus", "sparse_sigmoid",
    "squareplus",
), operands=1)
swish, hard_swish = silu, hard_silu

__all__ = [
    "identity", "tanh", "glu", "hard_sigmoid", "hard_silu", "hard_swish", "log1mexp", "logmeanexp", "mish",
    "sparse_plus", "sparse_sigmoid", "squareplus", "dot_product_attention",
    "celu", "elu", "gelu", "hard_tanh", "initializers", "leaky_relu", "log_sigmoid", "log_softmax",
    "logsumexp", "one_hot", "relu", "relu6", "selu", "sigmoid", "silu", "soft_sign", "softmax",
    "softplus", "standardize", "swish",
]
