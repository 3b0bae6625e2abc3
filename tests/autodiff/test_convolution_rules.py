"""Rules of `conv_general_dilated`: finite differences (float64, both modes, order 2) over
hypothesis-drawn strides, padding, dilations, groups and layouts, gradients equal to JAX's
where it is installed, and jit(grad) against eager."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import omnistage as jax
import omnistage.numpy as jnp
from omnistage import lax
from omnistage.autodiff import rules

from ..helpers import check_staged
from .check import check_grads

# x64 only switches a global flag on for the whole test: safe to share across examples
SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@st.composite
def conv_problems(draw):
    """(lhs shape, rhs shape, keyword arguments) of a valid NC(spatial)/OI(spatial) conv."""
    nsp = draw(st.integers(1, 2))
    groups = draw(st.integers(1, 2))
    by_batch = draw(st.booleans()) and groups > 1
    batch = draw(st.integers(1, 2)) * (groups if by_batch else 1)
    in_per_group = draw(st.integers(1, 2))
    out_features = draw(st.integers(1, 2)) * groups
    kernel = [draw(st.integers(1, 3)) for _ in range(nsp)]
    rhs_dilation = [draw(st.integers(1, 2)) for _ in range(nsp)]
    lhs_dilation = [draw(st.integers(1, 2)) for _ in range(nsp)]
    strides = [draw(st.integers(1, 2)) for _ in range(nsp)]
    padding = [(draw(st.integers(-1, 2)), draw(st.integers(-1, 2))) for _ in range(nsp)]
    spatial = []
    for k, rd, ld, (lo, hi) in zip(kernel, rhs_dilation, lhs_dilation, padding):
        window = 1 + rd * (k - 1)
        n = draw(st.integers(1, 5))
        while 1 + ld * (n - 1) + lo + hi < window:  # at least one output position
            n += 1
        spatial.append(n)
    in_features = in_per_group * (1 if by_batch else groups)
    lhs = (batch, in_features) + tuple(spatial)
    rhs = (out_features, in_per_group) + tuple(kernel)
    kwargs = dict(
        window_strides=tuple(strides), padding=tuple(padding), lhs_dilation=tuple(lhs_dilation),
        rhs_dilation=tuple(rhs_dilation),
        feature_group_count=1 if by_batch else groups, batch_group_count=groups if by_batch else 1,
    )
    return lhs, rhs, kwargs, draw(st.integers(0, 2**16))


@SETTINGS
@given(conv_problems())
def test_conv_matches_finite_differences(x64, problem):
    lhs_shape, rhs_shape, kwargs, seed = problem
    rng = np.random.default_rng(seed)
    lhs, rhs = rng.standard_normal(lhs_shape), rng.standard_normal(rhs_shape)
    check_grads(lambda l, r: lax.conv_general_dilated(l, r, **kwargs), (lhs, rhs))


LAYOUTS = {
    "NHWC_HWIO": (("NHWC", "HWIO", "NHWC"), (2, 6, 5, 4), (3, 2, 2, 6)),
    "NCHW_OIHW_to_NHWC": (("NCHW", "OIHW", "NHWC"), (2, 4, 6, 5), (6, 2, 3, 2)),
    "CHWN_IOHW": (("CHWN", "IOHW", "NCHW"), (4, 6, 5, 2), (2, 6, 3, 2)),
}


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_conv_dimension_numbers(x64, name):
    dnums, lhs_shape, rhs_shape = LAYOUTS[name]
    rng = np.random.default_rng(len(name))
    lhs, rhs = rng.standard_normal(lhs_shape), rng.standard_normal(rhs_shape)

    def conv(l, r):
        return lax.conv_general_dilated(
            l, r, (2, 1), ((1, 0), (1, 1)), rhs_dilation=(1, 2), dimension_numbers=dnums, feature_group_count=2
        )

    check_grads(conv, (lhs, rhs))


def test_conv_gradients_equal_jax(x64):
    jax_ref = pytest.importorskip("jax")
    jax_ref.config.update("jax_enable_x64", True)
    rng = np.random.default_rng(5)
    lhs, rhs = rng.standard_normal((2, 4, 7, 6)), rng.standard_normal((6, 2, 3, 2))
    kwargs = dict(
        window_strides=(2, 1), padding=((1, 2), (0, 1)), lhs_dilation=(1, 2), rhs_dilation=(2, 1), feature_group_count=2
    )

    def loss(conv):
        return lambda l, r: (conv(l, r, **kwargs) ** 2).sum()

    ours = jax.grad(loss(lax.conv_general_dilated), argnums=(0, 1))(lhs, rhs)
    ref = jax_ref.grad(loss(jax_ref.lax.conv_general_dilated), argnums=(0, 1))(lhs, rhs)
    for a, b in zip(ours, ref):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-10, atol=1e-10)


def test_conv_float32_gradients_keep_their_dtype():
    lhs, rhs = np.ones((1, 2, 5), np.float32), np.ones((3, 2, 2), np.float32)
    # SAME pads one zero on the right: out[i] = x[i] k0 + x[i + 1] k1
    gl, gr = jax.grad(lambda l, r: jnp.sum(lax.conv(l, r, (1,), "SAME")), argnums=(0, 1))(lhs, rhs)
    assert gl.dtype == gr.dtype == np.float32
    np.testing.assert_allclose(gr, [[[5.0, 4.0]] * 2] * 3)


def test_jit_of_grad_equals_eager_grad(x64):
    rng = np.random.default_rng(3)
    lhs, rhs = rng.standard_normal((2, 2, 6)), rng.standard_normal((3, 2, 3))

    def f(l, r):
        return jnp.sum(jnp.tanh(lax.conv_general_dilated(l, r, (2,), ((1, 1),), rhs_dilation=(2,))))

    g = jax.grad(f, argnums=(0, 1))
    for a, b in zip(jax.jit(g)(lhs, rhs), g(lhs, rhs)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_derivative_programs_run_from_their_printed_source():
    rng = np.random.default_rng(8)
    lhs, rhs = rng.standard_normal((4, 2, 6)).astype(np.float32), rng.standard_normal((4, 2, 3)).astype(np.float32)

    def f(l, r):
        grouped = lax.conv_general_dilated(l, r, (2,), ((1, 1),), rhs_dilation=(2,), batch_group_count=2)
        return jnp.sum(grouped ** 2)

    check_staged(jax.grad(f, argnums=(0, 1)), lhs, rhs, rtol=1e-4, atol=1e-4)
    check_staged(lambda l, r: jax.jvp(f, (l, r), (l, r))[1], lhs, rhs, rtol=1e-4, atol=1e-4)


def test_conv_has_both_rules():
    assert rules.has_rules("conv_general_dilated")


def test_complex_conv(x64):
    rng = np.random.default_rng(9)
    lhs = rng.standard_normal((2, 2, 5)) + 1j * rng.standard_normal((2, 2, 5))
    rhs = rng.standard_normal((3, 2, 2)) + 1j * rng.standard_normal((3, 2, 2))
    check_grads(lambda l, r: lax.conv_general_dilated(l, r, (2,), ((1, 0),)), (lhs, rhs))


def test_one_differentiated_operand_at_a_time(x64):
    rng = np.random.default_rng(11)
    lhs, rhs = rng.standard_normal((2, 4, 5)), rng.standard_normal((4, 2, 2))
    f = lambda l, r: lax.conv_general_dilated(l, r, (1,), ((1, 1),), feature_group_count=2)  # noqa: E731
    for i in (0, 1):
        np.testing.assert_allclose(jax.jacfwd(f, argnums=i)(lhs, rhs), jax.jacrev(f, argnums=i)(lhs, rhs), atol=1e-12)
