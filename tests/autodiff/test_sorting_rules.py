"""Rules of `sort` (several operands, several keys, integer operands) and what is built on it
(top_k, jnp.sort/argsort/median/quantile-like compositions): finite differences (float64,
both modes, order 2) over hypothesis-drawn shapes and dimensions, and jit(grad) against eager."""
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


@SETTINGS
@given(st.lists(st.integers(1, 5), min_size=1, max_size=3), st.data(), st.integers(0, 2**16))
def test_sort_matches_finite_differences(x64, shape, data, seed):
    dim = data.draw(st.integers(0, len(shape) - 1))
    rng = np.random.default_rng(seed)
    keys, values = rng.standard_normal(shape), rng.standard_normal(shape)
    check_grads(lambda k, v: lax.sort((k, v), dim, num_keys=1), (keys, values))


def test_sort_by_integer_and_float_keys(x64):
    rng = np.random.default_rng(1)
    ints = rng.integers(0, 3, (4, 6))  # many ties: the second key decides
    x, y = rng.standard_normal((4, 6)), rng.standard_normal((4, 6))
    # the integer output has a float0 tangent, which finite differences cannot take: drop it
    check_grads(lambda x, y: lax.sort((ints, x, y), 1, num_keys=2)[1:], (x, y))


def test_sort_cotangent_is_the_inverse_permutation(x64):
    x = np.array([3.0, 1.0, 2.0])
    g = jax.grad(lambda x: jnp.sum(lax.sort(x) * np.array([1.0, 10.0, 100.0])))(x)
    np.testing.assert_allclose(g, [100.0, 1.0, 10.0])


def test_values_sorted_by_a_constant_key(x64):
    keys = np.array([2.0, 0.0, 1.0])
    f = lambda v: lax.sort((keys, v), 0, num_keys=1)[1]
    np.testing.assert_allclose(jax.jacrev(f)(np.zeros(3)), np.eye(3)[[1, 2, 0]])
    check_grads(f, (np.array([0.5, -1.0, 2.0]),))


def test_complex_values_follow_their_keys(x64):
    rng = np.random.default_rng(2)
    keys = rng.standard_normal(5)
    values = rng.standard_normal(5) + 1j * rng.standard_normal(5)
    check_grads(lambda k, v: lax.sort((k, v), 0, num_keys=1), (keys, values))


JNP = {
    "sort": lambda x: jnp.sort(x, axis=0),
    "sort_last": lambda x: jnp.sort(x),
    "argsort_take": lambda x: jnp.take_along_axis(x, jnp.argsort(x, axis=1), axis=1),
    "top_k_values": lambda x: lax.top_k(x, 2)[0],
    "top_k_gather": lambda x: jnp.take_along_axis(x ** 2, lax.top_k(x, 3)[1], axis=1),
    "median": lambda x: jnp.median(x, axis=1),
    "max_of_sorted": lambda x: jnp.sort(x, axis=1)[:, -1] - jnp.max(x, axis=1) + jnp.sort(x, axis=1)[:, 0] ** 2,
}


@pytest.mark.parametrize("name", sorted(JNP))
def test_jnp_functions_built_on_sort(x64, name):
    check_grads(JNP[name], (np.random.default_rng(len(name)).standard_normal((3, 5)),))


def test_jit_of_grad_equals_eager_grad(x64):
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((3, 5)), rng.standard_normal((3, 5))

    def f(x, y):
        sx, sy = lax.sort((x, y), 1, num_keys=1)
        return jnp.sum(sx * sy * np.arange(5.0))

    g = jax.grad(f, argnums=(0, 1))
    for a, b in zip(jax.jit(g)(x, y), g(x, y)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_derivative_programs_run_from_their_printed_source():
    rng = np.random.default_rng(8)
    x, y = rng.standard_normal((3, 5)).astype(np.float32), rng.standard_normal((3, 5)).astype(np.float32)

    def f(x, y):
        sx, sy = lax.sort((x, y), 0, num_keys=1)
        return jnp.sum(sx * sy) + jnp.sum(lax.top_k(x, 2)[0] ** 2)

    check_staged(jax.grad(f, argnums=(0, 1)), x, y)
    check_staged(lambda x, y: jax.jvp(f, (x, y), (x, y))[1], x, y)


def test_sort_has_both_rules():
    assert rules.has_rules("sort")
