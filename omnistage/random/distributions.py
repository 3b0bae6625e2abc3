"""Samplers: uniform, normal, truncated_normal, exponential, gumbel, bernoulli, randint,
categorical, permutation, shuffle, choice. Each follows the algorithm of `jax.random`
(jax/_src/random/core.py, JAX 0.10) step for step, so the same key, shape and dtype give the
same values, bit for bit, as JAX's CPU backend: the floating-point samplers replay XLA's
CPU arithmetic (`_xla_math`, `_glibc_log`, `_special`, `_fma`). Known exceptions: float64
`truncated_normal` (glibc's `erf`), float16 `gumbel` (XLA calls `logf` on half values)
and half-precision `truncated_normal`.

Static arguments (shapes, dtypes, `axis`, `replace`, the size of `permutation(key, n)`) are
plain Python; everything else is staged lax/numpy operations. Imports core, lax and numpy.
"""
import math

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..core import dtypes
from ..core.tracer import Tracer
from ..lax._rules import canonical_axes, to_operand
from . import prng
from ..lax.fused_multiply_add import fma
from ..lax import xla_math as _xla_math
from ..lax.error_function import erf, erf_inv

# float dtype name -> (total bits, explicit mantissa bits)
_FLOAT_BITS = {"float16": (16, 10), "bfloat16": (16, 7), "float32": (32, 23), "float64": (64, 52)}
_UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


# --- argument checking -----------------------------------------------------------------


def _float_dtype(dtype, name, allow_complex=False):
    dt = dtypes.canonicalize_dtype(float if dtype is None else dtype)
    ok = dt.name in _FLOAT_BITS or (allow_complex and dt.kind == "c")
    if not ok:
        kinds = "a float or complex" if allow_complex else "a float"
        raise ValueError(f"dtype argument to `{name}` must be {kinds} dtype, got {dt.name}")
    return dt


def _shape(shape, name):
    return prng._static_shape(shape, name)


def _check_shape(name, shape, *param_shapes):
    if param_shapes:
        got = np.broadcast_shapes(shape, *param_shapes)
        if got != shape:
            raise ValueError(
                f"{name} parameter shapes must be broadcast-compatible with shape argument, and the "
                f"result of broadcasting the shapes must equal the shape argument, but got result "
                f"{got} for shape argument {shape}."
            )


def _param(value, dtype, shape, name):
    """A distribution parameter converted to `dtype` and broadcast to `shape` (rank-0 stays
    rank-0: lax operations broadcast it)."""
    v = lax.convert_element_type(value, dtype)
    if v.ndim == 0 or v.shape == shape:
        return v
    if v.ndim > len(shape) or any(d not in (1, s) for d, s in zip(v.shape[::-1], shape[::-1])):
        raise TypeError(f"{name}: a parameter of shape {v.shape} does not broadcast to the sample shape {shape}.")
    offset = len(shape) - v.ndim
    return lax.broadcast_in_dim(v, shape, tuple(range(offset, len(shape))))


def _np_shape(x):
    return tuple(x.shape) if hasattr(x, "shape") else np.shape(x)


# --- continuous ------------------------------------------------------------------------


def _uniform(key, shape, dtype, minval, maxval):
    """JAX's bit trick: random mantissa bits under the exponent of 1.0 give [1, 2); minus 1,
    scaled by one fused multiply-add, clamped below at minval."""
    nbits, nmant = _FLOAT_BITS[dtype.name]
    rng_bits = 8 if nmant < 8 else nbits
    return uniform_from_bits(prng.random_bits(key, rng_bits, shape), dtype, minval, maxval)


def uniform_from_bits(bits, dtype, minval, maxval):
    """`_uniform` given its random bits (unsigned, 8 bits for 8-bit mantissas, else as wide
    as `dtype`); the tests feed every float32 mantissa through this."""
    shape = bits.shape
    nbits, nmant = _FLOAT_BITS[dtype.name]
    rng_bits = bits.dtype.itemsize * 8
    uint = _UINT[nbits]
    if rng_bits != nbits:
        bits = lax.convert_element_type(bits, uint)
    one_bits = np.array(1.0, dtype).view(uint)[()]
    float_bits = lax.bitwise_or(lax.shift_right_logical(bits, uint(rng_bits - nmant)), one_bits)
    floats = lax.sub(lax.bitcast_convert_type(float_bits, dtype), np.asarray(1, dtype)[()])
    lo = _param(minval, dtype, shape, "uniform")
    hi = _param(maxval, dtype, shape, "uniform")
    return lax.max(lo, fma(floats, lax.sub(hi, lo), lo))


def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0):
    """Uniform floats in [minval, maxval) (default dtype float32, float64 in 64-bit mode)."""
    k = prng._check_key("uniform", key)
    return _uniform(k, _shape(shape, "uniform"), _float_dtype(dtype, "uniform"), minval, maxval)


def _normal_real(key, shape, dtype):
    nbits, nmant = _FLOAT_BITS[dtype.name]
    return normal_from_bits(prng.random_bits(key, 8 if nmant < 8 else nbits, shape), dtype)


def normal_from_bits(bits, dtype):
    """`_normal_real` given its random bits (as `uniform_from_bits`)."""
    lo = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype))[()]
    u = uniform_from_bits(bits, dtype, lo, np.asarray(1, dtype)[()])
    return lax.mul(np.asarray(np.sqrt(2), dtype)[()], erf_inv(u))


def normal(key, shape=(), dtype=None):
    """Standard normal values: sqrt(2) * erf_inv(u), u uniform in (-1, 1). Complex dtypes
    draw the real and imaginary parts from two split keys, each with variance 1/2."""
    k = prng._check_key("normal", key)
    shape = _shape(shape, "normal")
    dt = _float_dtype(dtype, "normal", allow_complex=True)
    if dt.kind != "c":
        return _normal_real(k, shape, dt)
    real_dt = dtypes.real_dtype(dt)
    k_re, k_im = prng.split(k)[0], prng.split(k)[1]
    re = lax.convert_element_type(_normal_real(k_re, shape, real_dt), dt)
    im = lax.convert_element_type(_normal_real(k_im, shape, real_dt), dt)
    return (re + 1j * im) / np.asarray(np.sqrt(2), dt)[()]


def truncated_normal(key, lower, upper, shape=None, dtype=None):
    """Standard normal values conditioned on (lower, upper), by inverting erf."""
    k = prng._check_key("truncated_normal", key)
    dt = _float_dtype(dtype, "truncated_normal")
    bound_shapes = (_np_shape(lower), _np_shape(upper))
    if shape is None:
        shape = np.broadcast_shapes(*bound_shapes)
    else:
        shape = _shape(shape, "truncated_normal")
        _check_shape("truncated_normal", shape, *bound_shapes)
    sqrt2 = np.asarray(np.sqrt(2), dt)[()]
    lower = _param(lower, dt, shape, "truncated_normal")
    upper = _param(upper, dt, shape, "truncated_normal")
    # XLA rewrites the division by the constant sqrt(2) into a product with its reciprocal
    inv_sqrt2 = np.asarray(1, dt)[()] / sqrt2
    a = erf(lax.mul(lower, inv_sqrt2))
    b = erf(lax.mul(upper, inv_sqrt2))
    out = lax.mul(sqrt2, erf_inv(_uniform(k, shape, dt, a, b)))
    # rounding may land on a bound; keep the result in the open interval
    above = lax.nextafter(lower, lax.broadcast_in_dim(np.asarray(np.inf, dt)[()], lower.shape, ()))
    below = lax.nextafter(upper, lax.broadcast_in_dim(np.asarray(-np.inf, dt)[()], upper.shape, ()))
    return lax.min(lax.max(out, above), below)


def exponential(key, shape=(), dtype=None):
    """Exponential(1) values: -log1p(-u)."""
    k = prng._check_key("exponential", key)
    dt = _float_dtype(dtype, "exponential")
    u = _uniform(k, _shape(shape, "exponential"), dt, 0.0, 1.0)
    return lax.neg(_xla_math.log1p(lax.neg(u)))


def _gumbel(key, shape, dtype, mode):
    nmant = _FLOAT_BITS[dtype.name][1]
    tiny = np.finfo(dtype).tiny if dtype.name != "bfloat16" else dtypes.bfloat16(1.1754944e-38)
    tiny = np.asarray(tiny, dtype)[()]
    if mode == "low":
        u = _uniform(key, shape, dtype, tiny, 1.0)
        return lax.neg(_xla_math.log(lax.neg(_xla_math.log(u))))
    both = _uniform(key, (2,) + shape, dtype, 0.0, 1.0)
    high, low = lax.index_in_dim(both, 0, 0, False), lax.index_in_dim(both, 1, 0, False)
    # extends the uniform below 0.5 with more bits: high + 2**-nmant * low + tiny
    x = lax.add(fma(np.asarray(2.0 ** -nmant, dtype)[()], low, high), tiny)
    x = lax.select(lax.ge(high, np.asarray(0.5, dtype)[()]), high, x)
    return lax.neg(_xla_math.log(lax.neg(_xla_math.log1p(lax.neg(x)))))


def _gumbel_mode(mode):
    mode = "low" if mode is None else mode
    if mode not in ("low", "high"):
        raise ValueError(f"Must provide valid mode for gumbel got: {mode} (omnistage supports 'low' and 'high')")
    return mode


def gumbel(key, shape=(), dtype=None, mode=None):
    """Gumbel values -log(-log(u)); mode="high" spends twice the bits for larger maxima."""
    k = prng._check_key("gumbel", key)
    return _gumbel(k, _shape(shape, "gumbel"), _float_dtype(dtype, "gumbel"), _gumbel_mode(mode))


# --- discrete --------------------------------------------------------------------------


def bernoulli(key, p=0.5, shape=None, mode="low"):
    """Booleans that are True with probability p (u < p)."""
    if mode not in ("high", "low"):
        raise ValueError(f"got mode={mode!r}, expected 'high' or 'low'")
    k = prng._check_key("bernoulli", key)
    p = to_operand(p)
    if not dtypes.is_float(p.dtype):
        raise TypeError(f"bernoulli probability `p` must have a floating dtype, got {p.dtype.name}.")
    dt = p.dtype
    if shape is None:
        shape = p.shape
    else:
        shape = _shape(shape, "bernoulli")
        _check_shape("bernoulli", shape, p.shape)
    p = _param(p, dt, shape, "bernoulli")
    if mode == "low":
        return lax.lt(_uniform(k, shape, dt, 0.0, 1.0), p)
    both = _uniform(k, (2,) + shape, dt, 0.0, 1.0)
    u1, u2 = lax.index_in_dim(both, 0, 0, False), lax.index_in_dim(both, 1, 0, False)
    u2 = lax.mul(u2, np.asarray(2.0 ** -_FLOAT_BITS[dt.name][1], dt)[()])
    return lax.lt(u2, lax.sub(p, u1))


def _int_bounds(value):
    v = jnp.asarray(value)
    return v if dtypes.is_integer(v.dtype) else v.astype(int)


def _convert_and_clip(val, dtype):
    """Integer `val` in integer `dtype`, clipped to its range rather than wrapped."""
    lo = max(np.iinfo(dtype).min, np.iinfo(val.dtype).min)
    hi = min(np.iinfo(dtype).max, np.iinfo(val.dtype).max)
    clipped = lax.min(lax.max(val, np.asarray(lo, val.dtype)[()]), np.asarray(hi, val.dtype)[()])
    return lax.convert_element_type(clipped, dtype)


def _randint(key, shape, minval, maxval, dtype):
    """Two words of random bits per value reduced modulo the span (JAX's algorithm)."""
    _check_shape("randint", shape, _np_shape(minval), _np_shape(maxval))
    minval, maxval = _int_bounds(minval), _int_bounds(maxval)
    dtype_max = _convert_and_clip(to_operand(np.asarray(np.iinfo(dtype).max, dtype)), maxval.dtype)
    maxval_out_of_range = lax.gt(maxval, dtype_max)
    minval = _param(_convert_and_clip(minval, dtype), dtype, shape, "randint")
    maxval = _param(_convert_and_clip(maxval, dtype), dtype, shape, "randint")
    maxval_out_of_range = _param(maxval_out_of_range, np.bool_, shape, "randint")
    nbits = np.iinfo(dtype).bits
    uint = _UINT[nbits]
    keys = prng.split(key)
    higher = prng.random_bits(lax.index_in_dim(keys, 0, 0, False), nbits, shape)
    lower = prng.random_bits(lax.index_in_dim(keys, 1, 0, False), nbits, shape)

    span = lax.convert_element_type(lax.sub(maxval, minval), uint)
    one = np.asarray(1, uint)[()]
    span = lax.select(lax.le(maxval, minval), lax.broadcast_in_dim(one, span.shape, ()), span)
    # maxval above the dtype's range: the span is one larger (wrapping to 0 when full)
    grow = lax.bitwise_and(maxval_out_of_range, lax.gt(maxval, minval))
    span = lax.select(grow, lax.add(span, one), span)
    multiplier = lax.rem(np.asarray(2 ** (nbits // 2), uint)[()], span)  # 2**nbits % span, in two steps
    multiplier = lax.rem(lax.mul(multiplier, multiplier), span)
    offset = lax.add(lax.mul(lax.rem(higher, span), multiplier), lax.rem(lower, span))
    offset = lax.rem(offset, span)
    return lax.add(minval, lax.convert_element_type(offset, dtype))


def randint(key, shape, minval, maxval, dtype=None):
    """Uniform integers in [minval, maxval) (default dtype int32, int64 in 64-bit mode)."""
    k = prng._check_key("randint", key)
    dt = dtypes.canonicalize_dtype(int if dtype is None else dtype)
    if not dtypes.is_integer(dt):
        raise TypeError(f"randint only accepts integer dtypes, got {dt.name}")
    shape = _shape(shape, "randint")
    info = np.iinfo(dt)
    if info.bits >= 32:
        return _randint(k, shape, minval, maxval, dt)
    # narrow types sample in int32 to avoid bias, then narrow
    lo = jnp.clip(jnp.asarray(minval).astype(np.int32), int(info.min), int(info.max))
    hi = jnp.clip(jnp.asarray(maxval).astype(np.int32), int(info.min), int(info.max) + 1)
    return lax.convert_element_type(_randint(k, shape, lo, hi, np.dtype(np.int32)), dt)


def categorical(key, logits, axis=-1, shape=None, replace=True, mode=None):
    """Indices drawn from softmax(logits) along `axis` (Gumbel-max; Gumbel-top-k without
    replacement)."""
    k = prng._check_key("categorical", key)
    logits = jnp.asarray(logits)
    nd = logits.ndim
    axis = canonical_axes(axis, nd)[0] - nd  # negative, as JAX
    batch_shape = tuple(np.delete(logits.shape, axis))
    if shape is None:
        shape = batch_shape
    else:
        shape = _shape(shape, "categorical")
        _check_shape("categorical", shape, batch_shape)
    prefix = shape[: len(shape) - len(batch_shape)]
    mode = _gumbel_mode(mode)
    if replace:
        logits_shape = list(shape[len(shape) - len(batch_shape):])
        logits_shape.insert(axis % nd, logits.shape[axis])
        g = _gumbel(k, prefix + tuple(logits_shape), logits.dtype, mode)
        return jnp.argmax(g + lax.expand_dims(logits, tuple(range(len(prefix)))), axis=axis)
    noisy = logits + _gumbel(k, logits.shape, logits.dtype, mode)
    n_samples = math.prod(prefix)
    if n_samples > logits.shape[axis]:
        raise ValueError(
            f"Number of samples without replacement ({n_samples}) cannot exceed number of "
            f"categories ({logits.shape[axis]})."
        )
    _, indices = lax.top_k(jnp.moveaxis(noisy, axis, -1), n_samples)
    dimensions = (indices.ndim - 1, *range(indices.ndim - 1))
    return lax.reshape(indices, shape, dimensions)


# --- permutations and choice -----------------------------------------------------------


def _shuffle(key, x, axis):
    """Sort by fresh random 32-bit keys, enough rounds that ties are negligible (JAX's
    static rule: ceil(3 ln(n) / ln(2**32 - 1)))."""
    rounds = int(np.ceil(3 * np.log(max(1, x.size)) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(rounds):
        keys = prng.split(key)
        key, subkey = lax.index_in_dim(keys, 0, 0, False), lax.index_in_dim(keys, 1, 0, False)
        sort_keys = prng.random_bits(subkey, 32, x.shape)
        _, x = lax.sort_key_val(sort_keys, x, axis)
    return x


def _take(x, indices, axis):
    """jnp.take(x, indices, axis) for in-range indices: x.shape[:axis] + indices.shape + rest."""
    picked = lax.gather(x, lax.expand_dims(indices, (indices.ndim,)), axes=(axis,))
    k = indices.ndim
    perm = tuple(range(k, k + axis)) + tuple(range(k)) + tuple(range(k + axis, picked.ndim))
    return lax.transpose(picked, perm) if perm != tuple(range(picked.ndim)) else picked


def _static_int(x, what):
    if isinstance(x, Tracer):
        raise TypeError(f"{what} must be a concrete integer (it sets the output size), got a traced value.")
    return int(x)


def permutation(key, x, axis=0, independent=False):
    """A random permutation of `range(x)` (int x) or of `x` along `axis`; `independent`
    shuffles each slice along `axis` separately."""
    k = prng._check_key("permutation", key)
    if isinstance(x, (int, np.integer)) or (hasattr(x, "ndim") and x.ndim == 0):
        dt = x.dtype if hasattr(x, "dtype") else np.dtype(int)
        if not dtypes.is_integer(dt):
            raise TypeError("x must be an integer or at least 1-dimensional")
        n = _static_int(x, "argument x of omnistage.random.permutation()")
        return _shuffle(k, jnp.arange(n), 0)
    x = jnp.asarray(x)
    axis = canonical_axes(axis, x.ndim)[0]
    if independent or x.ndim == 1:
        return _shuffle(k, x, axis)
    order = _shuffle(k, jnp.arange(x.shape[axis]), 0)
    return _take(x, order, axis)


def shuffle(key, x, axis=0):
    """Deprecated in JAX (use permutation(key, x, axis, independent=True))."""
    import warnings

    warnings.warn(
        "jax.random.shuffle is deprecated; use jax.random.permutation with independent=True.",
        FutureWarning, stacklevel=2,
    )
    k = prng._check_key("shuffle", key)
    x = jnp.asarray(x)
    return _shuffle(k, x, canonical_axes(axis, x.ndim)[0])


def _searchsorted_left(sorted_1d, values):
    """Index of the first element >= value (searchsorted, side='left') by counting smaller ones."""
    less = jnp.less(sorted_1d, lax.expand_dims(values, (values.ndim,)))
    return jnp.sum(less, axis=-1)


def choice(key, a, shape=(), replace=True, p=None, axis=0, mode=None):
    """Samples from `a` (or `range(a)`) along `axis`, with or without replacement, uniformly or
    with probabilities `p`."""
    k = prng._check_key("choice", key)
    if not isinstance(shape, (tuple, list)):
        raise TypeError(f"shape argument of jax.random.choice must be a sequence, got {shape}")
    shape = _shape(shape, "choice")
    arr = jnp.asarray(a)
    if arr.ndim == 0:
        n_inputs = _static_int(a, "The error occurred in omnistage.random.choice(): a")
    else:
        axis = canonical_axes(axis, arr.ndim)[0]
        n_inputs = arr.shape[axis]
    n_draws = math.prod(shape)
    if n_draws == 0:
        return jnp.zeros(shape, dtype=arr.dtype)
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(
            f"Cannot take a larger sample (size {n_draws}) than population (size {n_inputs}) when 'replace=False'"
        )
    if p is None:
        if replace:
            ind = randint(k, shape, 0, n_inputs)
            result = ind if arr.ndim == 0 else _take(arr, ind, axis)
        else:
            perm = permutation(k, n_inputs if arr.ndim == 0 else arr, axis)
            result = lax.slice_in_dim(perm, 0, n_draws, 1, 0 if arr.ndim == 0 else axis)
    else:
        p_arr = jnp.asarray(p)
        p_arr = p_arr if dtypes.is_inexact(p_arr.dtype) else p_arr.astype(float)
        if p_arr.shape != (n_inputs,):
            raise ValueError(
                "p must be None or a 1D vector with the same size as a.shape[axis]. "
                f"p has shape {p_arr.shape} and a.shape[axis] is {n_inputs}."
            )
        if replace:
            p_cuml = lax.cumsum(p_arr, 0)
            total = lax.index_in_dim(p_cuml, n_inputs - 1, 0, False)
            u = _uniform(k, shape, p_cuml.dtype, 0.0, 1.0)
            r = lax.mul(total, lax.sub(np.asarray(1, p_cuml.dtype)[()], u))
            ind = _searchsorted_left(p_cuml, r).astype(int)
        else:
            g = _gumbel(k, (n_inputs,), p_arr.dtype, _gumbel_mode(mode)) + jnp.log(p_arr)
            ind = lax.top_k(g, n_draws)[1].astype(int)
        result = ind if arr.ndim == 0 else _take(arr, ind, axis)
    out_shape = shape if arr.ndim == 0 else arr.shape[:axis] + shape + arr.shape[axis + 1:]
    return result.reshape(out_shape)


__all__ = [
    "uniform", "normal", "truncated_normal", "exponential", "gumbel", "bernoulli", "randint",
    "categorical", "permutation", "shuffle", "choice",
]
