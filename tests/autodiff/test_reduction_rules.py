"""Rules of reduce_max/min/prod, argmax/argmin and the cumulative primitives: finite
differences (float64, both modes, order 2) over hypothesis-drawn shapes and axes, JAX's
conventions at ties and zeros, and jit(grad) against eager grad."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import omnistage as jax
import omnistage.numpy as jnp
from omnistage import lax
from omnistage.autodiff import rules

from ..helpers import check_staged
from .check import check_grads

REDUCERS = {"reduce_max": lax.reduce_max, "reduce_min": lax.reduce_min, "reduce_prod": lax.reduce_prod}
CUMULATIVE = {
    "cumsum": lax.cumsum, "cumprod": lax.cumprod, "cummax": lax.cummax, "cummin": lax.cummin,
    "cumlogsumexp": lax.cumlogsumexp,
}

# x64 only switches a global flag on for the whole test: safe to share across examples
SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@st.composite
def shape_and_axes(draw):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    axes = draw(st.lists(st.integers(0, len(shape) - 1), unique=True, max_size=len(shape)))
    return shape, tuple(sorted(axes))


@SETTINGS
@given(shape_and_axes(), st.sampled_from(sorted(REDUCERS)), st.integers(0, 2**16))
def test_reductions_match_finite_differences(x64, shape_axes, name, seed):
    shape, axes = shape_axes
    x = np.random.default_rng(seed).uniform(0.5, 1.5, shape) * np.random.default_rng(seed + 1).choice([-1, 1], shape)
    check_grads(lambda x: REDUCERS[name](x, axes), (x,))


@SETTINGS
@given(
    st.lists(st.integers(1, 5), min_size=1, max_size=3), st.data(), st.sampled_from(sorted(CUMULATIVE)),
    st.booleans(), st.integers(0, 2**16),
)
def test_cumulative_match_finite_differences(x64, shape, data, name, reverse, seed):
    axis = data.draw(st.integers(0, len(shape) - 1))
    x = np.random.default_rng(seed).uniform(0.5, 1.5, shape) * np.random.default_rng(seed + 1).choice([-1, 1], shape)
    check_grads(lambda x: CUMULATIVE[name](x, axis, reverse), (x,))


@pytest.mark.parametrize("name", ["reduce_prod", "cumsum", "cumprod"])
def test_complex_operands(x64, name):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))
    fn = {"reduce_prod": lambda x: lax.reduce_prod(x, (1,)), "cumsum": lambda x: lax.cumsum(x, 1),
          "cumprod": lambda x: lax.cumprod(x, 0, True)}[name]
    check_grads(fn, (x,))


def test_max_and_min_split_ties_evenly_like_jax(x64):
    x = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    np.testing.assert_allclose(jax.grad(lambda x: jnp.sum(jnp.max(x, axis=1)))(x), [[0, 0.5, 0.5], [1 / 3] * 3])
    np.testing.assert_allclose(jax.grad(lambda x: jnp.min(x))(x), [[1.0, 0, 0], [0, 0, 0]])
    t = jax.jvp(lambda x: jnp.max(x, axis=1), (x,), (np.ones_like(x) * [[0, 2, 4], [1, 2, 3]],))[1]
    np.testing.assert_allclose(t, [3.0, 2.0])


def test_prod_with_zeros_is_the_product_of_the_others(x64):
    one_zero = np.array([2.0, 0.0, 3.0, 4.0])
    np.testing.assert_allclose(jax.grad(jnp.prod)(one_zero), [0.0, 24.0, 0.0, 0.0])
    np.testing.assert_allclose(jax.grad(jnp.prod)(np.array([2.0, 0.0, 3.0, 0.0])), np.zeros(4))
    hess = jax.hessian(jnp.prod)(one_zero)
    np.testing.assert_allclose(hess[1], [12.0, 0.0, 8.0, 6.0])
    check_grads(lambda x: lax.reduce_prod(x, (0, 1)), (np.array([[2.0, 0.0], [-1.5, 0.5]]),))


def test_cumprod_with_zeros(x64):
    x = np.array([2.0, 0.0, 3.0])
    # cumprod = [x0, x0 x1, x0 x1 x2]; gradient of its sum at x1 = 0: x0 + x0 x2
    np.testing.assert_allclose(jax.grad(lambda x: jnp.sum(jnp.cumprod(x)))(x), [1.0, 8.0, 0.0])
    check_grads(lambda x: lax.cumprod(x, 0), (x,))


def test_cumlogsumexp_does_not_overflow(x64):
    x = np.array([-1000.0, 0.0, 1000.0, 999.0])
    g = jax.grad(lambda x: lax.cumlogsumexp(x, 0)[1])(x)
    np.testing.assert_allclose(g, [0.0, 1.0, 0.0, 0.0])
    g = jax.grad(lambda x: lax.cumlogsumexp(x, 0)[3])(x)
    w = np.exp(1.0) / (1 + np.exp(1.0))
    np.testing.assert_allclose(g, [0.0, 0.0, w, 1 - w])


def test_cumulative_scans_with_infinite_entries(x64):
    # a masked (-inf) entry contributes nothing and gets no derivative, as in JAX
    x = np.array([-np.inf, 0.0, 1.0])
    w = np.exp(1.0) / (1 + np.exp(1.0))
    jac = jax.jacrev(lambda x: lax.cumlogsumexp(x, 0))(x)
    np.testing.assert_allclose(jac, [[1.0, 0, 0], [0, 1.0, 0], [0, 1 - w, w]])
    jac = jax.jacfwd(lambda x: lax.cummax(x, 0))(np.array([-np.inf, -np.inf, 1.0]))
    np.testing.assert_allclose(jac, [[1.0, 0, 0], [0.5, 0.5, 0], [0, 0, 1.0]])


def test_cummax_follows_the_running_maximum(x64):
    x = np.array([1.0, 3.0, 2.0, 5.0, 4.0])
    jac = jax.jacrev(lambda x: lax.cummax(x, 0))(x)
    expected = np.zeros((5, 5))
    expected[[0, 1, 2, 3, 4], [0, 1, 1, 3, 3]] = 1
    np.testing.assert_allclose(jac, expected)
    jac = jax.jacfwd(lambda x: lax.cummin(x, 0, reverse=True))(x)
    expected = np.zeros((5, 5))
    expected[[0, 1, 2, 3, 4], [0, 2, 2, 4, 4]] = 1
    np.testing.assert_allclose(jac, expected)


def test_argmax_and_argmin_have_no_derivative_but_differentiate_through(x64):
    x = np.array([[0.3, 2.0, -1.0], [4.0, 0.5, 0.1]])
    pick = lambda x: jnp.sum(x[jnp.arange(2), jnp.argmax(x, axis=1)]) * jnp.sum(x[jnp.argmin(x, axis=0), jnp.arange(3)])
    check_grads(pick, (x,))
    _, t = jax.jvp(lambda x: jnp.argmax(x, axis=1), (x,), (np.ones_like(x),))
    assert t.dtype == jax.dtypes.float0 and t.shape == (2,)


def _logsumexp(x, axis):
    top = lax.stop_gradient(jnp.max(x, axis=axis, keepdims=True))
    return jnp.log(jnp.sum(jnp.exp(x - top), axis=axis)) + jnp.squeeze(top, axis)


def _softmax(x, axis):
    e = jnp.exp(x - jnp.max(x, axis=axis, keepdims=True))
    return e / jnp.sum(e, axis=axis, keepdims=True)


JNP = {
    "max": lambda x: jnp.max(x, axis=1),
    "min_keepdims": lambda x: jnp.min(x, axis=0, keepdims=True),
    "amax_all": lambda x: jnp.amax(x),
    "prod": lambda x: jnp.prod(x, axis=0),
    "cumsum": lambda x: jnp.cumsum(x, axis=1),
    "cumsum_flat": lambda x: jnp.cumsum(x),
    "cumprod": lambda x: jnp.cumprod(x, axis=0),
    "norm": lambda x: jnp.linalg.norm(x),
    "norm_rows": lambda x: jnp.linalg.norm(x, axis=1),
    "norm_inf": lambda x: jnp.linalg.norm(x, ord=np.inf, axis=1),
    "norm_1": lambda x: jnp.linalg.norm(x, ord=1, axis=0),
    "mean": lambda x: jnp.mean(x, axis=0),
    "var": lambda x: jnp.var(x, axis=1),
    "std": lambda x: jnp.std(x),
    "logsumexp": lambda x: _logsumexp(x, 1),
    "softmax": lambda x: _softmax(x, 1),
    "log_softmax_loss": lambda x: -jnp.sum(jnp.log(_softmax(x, 0))[np.array([0, 2, 1, 0]), np.arange(4)]),
    "einsum": lambda x: jnp.einsum("ij,kj->ik", x, x ** 2),
    "einsum_trace": lambda x: jnp.einsum("ij,ji->", x, x.T * 2.0),
    "max_minus_min": lambda x: jnp.max(x, axis=0) - jnp.min(x, axis=0) + jnp.ptp(x, axis=1).sum(),
}


@pytest.mark.parametrize("name", sorted(JNP))
def test_jnp_functions_built_on_reductions(x64, name):
    x = np.random.default_rng(len(name)).uniform(0.5, 1.5, (3, 4)) * np.array([1, -1, 1, -1])
    check_grads(JNP[name], (x,))


def test_float32_gradients_keep_their_dtype():
    x = np.array([1.0, -2.0, 3.0], np.float32)
    for fn in (jnp.max, jnp.prod, lambda x: jnp.sum(jnp.cumprod(x)), lambda x: jnp.sum(lax.cumlogsumexp(x))):
        g = jax.grad(fn)(x)
        assert g.dtype == np.float32


def test_jit_of_grad_equals_eager_grad(x64):
    x = np.random.default_rng(7).standard_normal((3, 5))

    def f(x):  # small: Numba compile time grows with the program
        cums = lax.cummax(x, 0, True) + lax.cumlogsumexp(x, 1)
        return jnp.sum(jnp.max(x, axis=1) * jnp.prod(x, axis=1)) + jnp.sum(cums ** 2)

    np.testing.assert_allclose(jax.jit(jax.grad(f))(x), jax.grad(f)(x), rtol=1e-12, atol=1e-12)


def test_derivative_programs_run_from_their_printed_source():
    x = np.random.default_rng(8).standard_normal((3, 4)).astype(np.float32)

    def f(x):
        cums = lax.cumprod(x, 1) + lax.cummax(x, 0, True) + lax.cumlogsumexp(x, 1) + lax.cummin(x, 1)
        return jnp.sum(jnp.max(x, axis=1) * jnp.prod(x, axis=1)) + jnp.min(x) + jnp.sum(cums)

    check_staged(jax.grad(f), x)
    check_staged(lambda x: jax.jvp(f, (x,), (x,))[1], x)


@pytest.mark.parametrize("name", sorted(REDUCERS) + sorted(CUMULATIVE))
def test_every_reduction_and_scan_primitive_has_both_rules(name):
    assert rules.has_rules(name)
