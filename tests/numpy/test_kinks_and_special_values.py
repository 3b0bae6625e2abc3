"""Derivatives at kinks and ties inside otherwise smooth functions, and special values, as
JAX 0.10.2 gives them (its numbers, printed for these inputs, are the expectations):
max/min/clip split 1/2 at ties, logaddexp-style formulas give 1/2, relu6/hard_tanh follow
JAX's custom choices; floor_divide by +-0 and complex expm1 at the Array API's special
points; comparing a scalar type with a malformed dtype spec is False."""
import math

import numpy as np
import pytest

import omnistage as jax
import omnistage.numpy as jnp
from omnistage import lax, nn

inf, nan = np.inf, np.nan

# name: (function, arguments, JAX's gradient with respect to every argument)
KINKS = {
    "abs0": (jnp.abs, (0.0,), [1.0]),
    "maximum": (jnp.maximum, (1.0, 1.0), [0.5, 0.5]),
    "minimum": (jnp.minimum, (1.0, 1.0), [0.5, 0.5]),
    "fmax": (jnp.fmax, (1.0, 1.0), [0.0, 1.0]),
    "clip_lo": (lambda x: jnp.clip(x, 0.0, 1.0), (0.0,), [0.5]),
    "clip_hi": (lambda x: jnp.clip(x, 0.0, 1.0), (1.0,), [0.5]),
    "softplus0": (nn.softplus, (0.0,), [0.5]),
    "log_sigmoid0": (nn.log_sigmoid, (0.0,), [0.5]),
    "relu6_0": (nn.relu6, (0.0,), [0.0]),
    "relu6_6": (nn.relu6, (6.0,), [0.0]),
    "relu6_3": (nn.relu6, (3.0,), [1.0]),
    "hard_tanh1": (nn.hard_tanh, (1.0,), [1.0]),
    "hard_tanh-1": (nn.hard_tanh, (-1.0,), [1.0]),
    "hard_tanh2": (nn.hard_tanh, (2.0,), [0.0]),
    "celu0": (nn.celu, (0.0,), [1.0]),
    "selu0": (nn.selu, (0.0,), [1.7580993175506592]),
    "gelu0": (lambda x: nn.gelu(x, approximate=False), (0.0,), [0.5]),
    "hypot_tie": (jnp.hypot, (1.0, 1.0), [0.7071067690849304, 0.7071067690849304]),
    "hypot_neg": (jnp.hypot, (-1.0, 1.0), [-0.7071067690849304, 0.7071067690849304]),
    "logsumexp_tie": (lambda x, y: nn.logsumexp(jnp.stack([x, y])), (1.0, 1.0), [0.5, 0.5]),
    "logaddexp_tie": (jnp.logaddexp, (2.0, 2.0), [0.5, 0.5]),
    "logaddexp2_tie": (jnp.logaddexp2, (2.0, 2.0), [0.5, 0.5]),
    "norm_inf_tie": (lambda x, y: jnp.linalg.norm(jnp.stack([x, y]), ord=inf), (1.0, -1.0), [0.5, -0.5]),
    "amax_tie": (lambda x, y: jnp.max(jnp.stack([x, y])), (1.0, 1.0), [0.5, 0.5]),
    "ptp_tie": (lambda x, y, z: jnp.ptp(jnp.stack([x, y, z])), (1.0, 1.0, 0.0), [0.5, 0.5, -1.0]),
    "median_tie": (lambda x, y, z: jnp.median(jnp.stack([x, y, z])), (1.0, 1.0, 0.0), [1.0, 0.0, 0.0]),
    "sort_tie": (lambda x, y: jnp.sort(jnp.stack([x, y]))[0], (1.0, 1.0), [1.0, 0.0]),
    "cummax_tie": (lambda x, y: lax.cummax(jnp.stack([x, y]))[1], (1.0, 1.0), [0.5, 0.5]),
    "log_softmax_tie": (lambda x, y: nn.log_softmax(jnp.stack([x, y]))[0], (1.0, 1.0), [0.5, -0.5]),
    "remainder": (jnp.remainder, (3.0, 2.0), [1.0, -1.0]),
    "divmod": (lambda x, y: jnp.divmod(x, y)[1], (4.0, 2.0), [1.0, -2.0]),
}


@pytest.mark.parametrize("name", KINKS)
def test_derivative_at_a_kink_is_jax_s(name):
    fun, args, want = KINKS[name]
    got = jax.grad(fun, argnums=tuple(range(len(args))))(*[np.float32(a) for a in args])
    np.testing.assert_allclose([float(g) for g in got], want, rtol=1e-6)


def test_relu6_and_hard_tanh_values_are_unchanged():
    x = np.array([-2.0, -1.0, 0.0, 0.5, 1.0, 6.0, 7.0], np.float32)
    np.testing.assert_array_equal(np.asarray(nn.relu6(x)), np.minimum(np.maximum(x, 0), 6))
    np.testing.assert_array_equal(np.asarray(nn.hard_tanh(x)), np.clip(x, -1, 1))
    np.testing.assert_array_equal(np.asarray(jax.vmap(jax.grad(nn.relu6))(x)), [0, 0, 0, 1, 1, 0, 0])


@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_floor_divide_special_values_are_jax_s(backend):
    a = np.array([1.0, -1.0, 0.0, -0.0, 1.0, inf, 5.0, -5.0, 0.0, 0.0, 7.0, -7.0], np.float32)
    b = np.array([0.0, 0.0, 0.0, 0.0, -0.0, 2.0, inf, inf, -1.0, 1.0, -inf, -inf], np.float32)
    fun = jnp.floor_divide if backend == "eager" else jax.jit(jnp.floor_divide, backend="cpu")
    got = np.asarray(fun(a, b))
    want = np.array([inf, -inf, nan, nan, -inf, nan, 0.0, -1.0, -0.0, 0.0, -1.0, -0.0], np.float32)
    np.testing.assert_array_equal(got, want)
    real = ~np.isnan(want)
    np.testing.assert_array_equal(np.signbit(got[real]), np.signbit(want[real]))  # +0 // negative is -0
    q, r = jnp.divmod(a[6:], b[6:])
    np.testing.assert_array_equal(np.asarray(q), want[6:])


def _expm1_cases():
    # (z, the Array API standard's expm1(z)); None where the standard leaves a sign open
    return [
        (complex(0.0, 0.0), complex(0.0, 0.0)), (complex(-0.0, 0.0), complex(0.0, 0.0)),
        (complex(1, inf), complex(nan, nan)), (complex(1, nan), complex(nan, nan)),
        (complex(inf, 0.0), complex(inf, 0.0)), (complex(-inf, 0.0), complex(-1, 0.0)),
        (complex(-inf, 2.0), complex(-1, 0.0)), (complex(inf, 2.0), complex(-inf, inf)),
        (complex(-inf, inf), complex(-1, 0.0)), (complex(-inf, nan), complex(-1, 0.0)),
        (complex(inf, inf), complex(inf, nan)), (complex(inf, nan), complex(inf, nan)),
        (complex(nan, 0.0), complex(nan, 0.0)), (complex(nan, 1.0), complex(nan, nan)),
        (complex(nan, nan), complex(nan, nan)),
    ]


def test_complex_expm1_special_values_follow_the_array_api():
    zs, want = zip(*_expm1_cases())
    for fun in (jnp.expm1, jax.jit(jnp.expm1, backend="cpu")):
        got = np.asarray(fun(np.array(zs, np.complex64)))
        for z, g, w in zip(zs, got, want):
            for part_g, part_w in ((g.real, w.real), (g.imag, w.imag)):
                assert (math.isnan(part_g) and math.isnan(part_w)) or part_g == part_w, (z, g, w)
        # (+-0, +0) -> +0: the sign of the real part too
        assert not np.signbit(got[1].real)


def test_complex_expm1_is_accurate_and_differentiable():
    z = np.array([1e-8 + 1e-8j, 2 + 3j, 1e-5j, -0.5 + 0.25j, -30 + 1j], np.complex128)
    with np.errstate(all="ignore"):
        want = np.expm1(z)
    got = np.asarray(jnp.expm1(z.astype(np.complex64)))
    np.testing.assert_allclose(got, want, rtol=2e-6)
    # holomorphic: d/dz expm1 = exp
    for z0 in (0.3 - 0.7j, 1e-6 + 2e-6j):
        _, t = jax.jvp(jnp.expm1, (np.complex64(z0),), (np.complex64(1),))
        np.testing.assert_allclose(complex(t), np.exp(z0), rtol=1e-5)


def test_scalar_type_compares_false_with_malformed_dtype_specs():
    for other in ({"a": "f4"}, ("f4", -1), {"names": ["a", "a"], "formats": ["f4", "f4"]}, None, dict):
        assert not (jnp.float32 == other)
        assert jnp.float32 != other
    assert jnp.float32 == np.float32 and jnp.float32 == np.dtype("float32")


def test_complex_tanh_saturates_with_the_imaginary_sign():
    z = np.array([complex(inf, 5.7e16), complex(inf, -2.0), complex(-inf, 3.0), complex(inf, 0.0)], np.complex64)
    got = np.asarray(jnp.tanh(z))
    np.testing.assert_array_equal(got, [1, 1, -1, 1])
    np.testing.assert_array_equal(np.signbit(got.imag), [False, True, False, False])
    np.testing.assert_allclose(np.asarray(jnp.tanh(np.complex64(0.5 + 0.3j))), np.tanh(0.5 + 0.3j), rtol=1e-6)


def test_creation_functions_accept_the_array_api_device_keyword():
    import inspect

    for name in ("arange", "asarray", "empty", "empty_like", "eye", "full", "full_like", "linspace", "ones",
                 "ones_like", "zeros", "zeros_like"):
        assert "device" in inspect.signature(getattr(jnp, name)).parameters, name
    device = jnp.__array_namespace_info__().default_device()
    assert jnp.zeros((2,), device=device).shape == (2,) and jnp.arange(3, device=None).shape == (3,)


def test_an_empty_boolean_mask_selects_nothing_from_any_axis():
    for shape in ((1,), (3,), (1, 2)):
        assert jnp.zeros(shape)[np.zeros(0, bool)].shape == np.zeros(shape)[np.zeros(0, bool)].shape
    with pytest.raises(IndexError, match="did not match"):
        jnp.zeros(2)[np.zeros(1, bool)]
