"""Rules of gather, the scatter family, dynamic_slice and dynamic_update_slice: finite
differences (float64, both modes, order 2) over hypothesis-drawn operands and index sets
(duplicates and out-of-bounds rows included), the set/min/max/mul conventions at
duplicates, ties and zeros, the jnp indexing built on them, and jit(grad) against eager."""
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
SCATTERS = {
    "scatter": lax.scatter, "scatter_add": lax.scatter_add, "scatter_mul": lax.scatter_mul,
    "scatter_min": lax.scatter_min, "scatter_max": lax.scatter_max,
}


@st.composite
def index_problems(draw):
    """(operand shape, axes, indices): indices of shape batch + (k,), some out of bounds."""
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    axes = tuple(draw(st.permutations(range(len(shape))))[: draw(st.integers(1, len(shape)))])
    batch = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    cols = [rng.integers(-1, shape[a] + 1, batch) for a in axes]
    return shape, axes, np.stack(cols, -1).astype(np.int32), seed


def _rest(shape, axes):
    return tuple(d for i, d in enumerate(shape) if i not in axes)


@SETTINGS
@given(index_problems())
def test_gather_matches_finite_differences(x64, problem):
    shape, axes, indices, seed = problem
    x = np.random.default_rng(seed).standard_normal(shape)
    check_grads(lambda x: lax.gather(x, indices, axes), (x,))


@SETTINGS
@given(index_problems(), st.sampled_from(sorted(SCATTERS)))
def test_scatters_match_finite_differences(x64, problem, name):
    shape, axes, indices, seed = problem
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    updates = rng.standard_normal(indices.shape[:-1] + _rest(shape, axes))
    check_grads(lambda x, u: SCATTERS[name](x, indices, u, axes), (x, updates))


def test_gather_transpose_adds_repeats_and_clamps(x64):
    x = np.arange(4.0)
    indices = np.array([[1], [1], [9], [-3]], np.int32)  # out of bounds clamp to 3 and 0
    g = jax.grad(lambda x: jnp.sum(lax.gather(x, indices, (0,)) * np.array([1.0, 2.0, 3.0, 4.0])))(x)
    np.testing.assert_allclose(g, [4.0, 3.0, 0.0, 3.0])


def test_scatter_set_gives_the_last_duplicate_the_cotangent(x64):
    x, u = np.zeros(4), np.array([1.0, 2.0, 3.0, 4.0])
    indices = np.array([[2], [0], [2], [7]], np.int32)  # row 2 wins position 2; row 3 is dropped
    w = np.array([1.0, 10.0, 100.0, 1000.0])
    gx, gu = jax.grad(lambda x, u: jnp.sum(lax.scatter(x, indices, u) * w), argnums=(0, 1))(x, u)
    np.testing.assert_allclose(gx, [0.0, 10.0, 0.0, 1000.0])
    np.testing.assert_allclose(gu, [0.0, 1.0, 100.0, 0.0])


def test_scatter_add_drops_out_of_bounds_rows(x64):
    indices = np.array([[0], [4], [-1], [0]], np.int32)
    gu = jax.grad(lambda u: jnp.sum(lax.scatter_add(np.zeros(3), indices, u) * np.array([2.0, 3.0, 5.0])))(np.ones(4))
    np.testing.assert_allclose(gu, [2.0, 0.0, 0.0, 2.0])


def test_scatter_mul_is_exact_with_zeros_and_duplicates(x64):
    x = np.array([3.0, 5.0])
    indices = np.array([[0], [0], [0], [1]], np.int32)
    f = lambda x, u: jnp.sum(lax.scatter_mul(x, indices, u))
    one_zero = np.array([2.0, 0.0, 4.0, 7.0])
    gx, gu = jax.grad(f, argnums=(0, 1))(x, one_zero)
    np.testing.assert_allclose(gx, [0.0, 7.0])
    np.testing.assert_allclose(gu, [0.0, 24.0, 0.0, 5.0])
    gx, gu = jax.grad(f, argnums=(0, 1))(x, np.array([0.0, 0.0, 4.0, 7.0]))
    np.testing.assert_allclose(gu, [0.0, 0.0, 0.0, 5.0])
    check_grads(f, (x, one_zero))
    check_grads(f, (np.array([0.0, 5.0]), np.array([2.0, -1.5, 4.0, 7.0])))


@settings(SETTINGS, max_examples=15)
@given(index_problems())
def test_scatter_mul_with_zero_updates_matches_finite_differences(x64, problem):
    shape, axes, indices, seed = problem
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    updates = rng.standard_normal(indices.shape[:-1] + _rest(shape, axes))
    updates = np.where(rng.random(updates.shape) < 0.3, 0.0, updates)
    check_grads(lambda x, u: lax.scatter_mul(x, indices, u, axes), (x, updates))


def test_scatter_max_and_min_split_ties_evenly_like_jax(x64):
    indices = np.array([[0], [0], [1]], np.int32)
    x = np.array([1.0, 5.0])
    u = np.array([1.0, 1.0, 2.0])
    gx, gu = jax.grad(lambda x, u: jnp.sum(lax.scatter_max(x, indices, u)), argnums=(0, 1))(x, u)
    np.testing.assert_allclose(gx, [1 / 3, 1.0])
    np.testing.assert_allclose(gu, [1 / 3, 1 / 3, 0.0])
    gx, gu = jax.grad(lambda x, u: jnp.sum(lax.scatter_min(x, indices, u)), argnums=(0, 1))(x, u)
    np.testing.assert_allclose(gx, [1 / 3, 0.0])
    np.testing.assert_allclose(gu, [1 / 3, 1 / 3, 1.0])


@pytest.mark.parametrize("start", [(1, 2), (3, 4), (-1, 0)])
def test_dynamic_slice_and_update_slice(x64, start):
    rng = np.random.default_rng(1)
    x, u = rng.standard_normal((4, 5)), rng.standard_normal((2, 3))
    check_grads(lambda x: lax.dynamic_slice(x, start, (2, 3)), (x,))
    check_grads(lambda x, u: lax.dynamic_update_slice(x, u, start), (x, u))


def test_dynamic_slice_with_traced_start(x64):
    x = np.random.default_rng(2).standard_normal((5, 4))
    def f(x):
        window = lax.dynamic_slice(x, (jnp.argmax(x[:, 0]), 1), (2, 3))
        return lax.dynamic_update_slice(x, window ** 2, (jnp.argmin(x[:, 1]), 0))

    check_grads(f, (x,))
    g = jax.grad(lambda x: jnp.sum(lax.dynamic_slice(x, (jnp.argmax(x[:, 0]), 1), (2, 3))))(x)
    assert g.sum() == 6.0


IDX = np.array([2, 0, 3, -1, 0])

JNP = {
    "int": lambda x, v: x[1] * v,
    "negative_int": lambda x, v: x[-1, -2] * v,
    "slices": lambda x, v: x[1:3, ::-2],
    "array": lambda x, v: x[IDX],
    "two_arrays": lambda x, v: x[IDX, np.array([0, 4, 2, 1, 1])],
    "bool_mask": lambda x, v: x[:, np.array([True, False, True, True, False])],
    "ellipsis_newaxis": lambda x, v: x[..., None, 1:4],
    "traced_index": lambda x, v: x[jnp.argmax(v)],
    "take": lambda x, v: jnp.take(x, IDX, axis=1),
    "take_flat": lambda x, v: jnp.take(x, np.array([3, 7, 19, 7])),
    "take_fill": lambda x, v: jnp.take(x, np.array([3, 9]), axis=1, mode="fill", fill_value=0.0),
    "take_along_axis": lambda x, v: jnp.take_along_axis(x, jnp.argsort(x, axis=0), axis=0),
    "where": lambda x, v: jnp.where(x > 0, x, v),
    "where_scalar": lambda x, v: jnp.where(x > 0.3, x ** 2, 0.0),
    "clip": lambda x, v: jnp.clip(x, -0.5, 0.5),
    "clip_traced_bounds": lambda x, v: jnp.clip(x, v - 1.0, v + 1.0),
    "at_set": lambda x, v: jnp.asarray(x).at[1].set(v),
    "at_set_slice": lambda x, v: jnp.asarray(x).at[1:3, 2:].set(v[:3]),
    "at_add": lambda x, v: jnp.asarray(x).at[np.array([1, 1, 3])].add(v),
    "at_add_negative": lambda x, v: jnp.asarray(x).at[-1, np.array([0, -1, 0])].add(v[:3]),
    "at_mul": lambda x, v: jnp.asarray(x).at[np.array([1, 1, 3])].mul(v),
    "at_min": lambda x, v: jnp.asarray(x).at[np.array([1, 1, 3])].min(v),
    "at_max": lambda x, v: jnp.asarray(x).at[:, 2].max(v[:4]),
    "at_get": lambda x, v: jnp.asarray(x).at[IDX].get(),
    "at_traced": lambda x, v: jnp.asarray(x).at[jnp.argmin(v) % 4].set(v),
}


@pytest.mark.parametrize("name", sorted(JNP))
def test_jnp_indexing(x64, name):
    rng = np.random.default_rng(len(name))
    x, v = rng.standard_normal((4, 5)), rng.standard_normal(5)
    check_grads(JNP[name], (x, v))


def test_jit_of_grad_equals_eager_grad(x64):
    rng = np.random.default_rng(3)
    x, v = rng.standard_normal((4, 5)), rng.standard_normal((3, 5))
    indices = np.array([[1], [1], [3]], np.int32)

    def f(x, v):
        return jnp.sum(lax.scatter_mul(x, indices, v) ** 2) + jnp.sum(lax.gather(x, indices, (0,)) * v)

    g = jax.grad(f, argnums=(0, 1))
    for a, b in zip(jax.jit(g)(x, v), g(x, v)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_derivative_programs_run_from_their_printed_source():
    rng = np.random.default_rng(8)
    x, v = rng.standard_normal((4, 5)).astype(np.float32), rng.standard_normal(5).astype(np.float32)

    def f(x, v):
        y = jnp.asarray(x).at[np.array([1, 1, 3])].mul(v).at[np.array([0, 0])].max(v).at[2].min(v)
        y = y.at[np.array([2, 2])].set(v * x[0]) + jnp.take(x, np.array([3, 0, 0, 2]), axis=0).sum(0)
        return jnp.sum(y ** 2) + jnp.sum(lax.dynamic_slice(y, (jnp.argmax(v) % 3, 1), (2, 3)) ** 3)

    check_staged(jax.grad(f, argnums=(0, 1)), x, v)
    check_staged(lambda x, v: jax.jvp(f, (x, v), (x, v))[1], x, v)


@pytest.mark.parametrize("name", sorted(SCATTERS) + ["gather", "dynamic_slice", "dynamic_update_slice"])
def test_every_indexing_primitive_has_both_rules(name):
    assert rules.has_rules(name)


def test_complex_gather_and_scatters(x64):
    rng = np.random.default_rng(9)
    x = rng.standard_normal((4, 3)) + 1j * rng.standard_normal((4, 3))
    u = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    indices = np.array([[1], [3], [3]], np.int32)
    for scatter in (lax.scatter, lax.scatter_add, lax.scatter_mul):
        check_grads(lambda x, u: scatter(x, indices, u) + lax.gather(x, indices[::-1], (0,))[:1], (x, u))


@pytest.mark.parametrize("name", sorted(SCATTERS) + ["dynamic_update_slice"])
def test_one_differentiated_operand_at_a_time(x64, name):
    # the other operand's tangent is a symbolic zero: forward and reverse Jacobians agree
    rng = np.random.default_rng(10)
    x, u = rng.standard_normal((4, 3)), rng.standard_normal((3, 3))
    indices = np.array([[1], [3], [3]], np.int32)
    fn = SCATTERS.get(name)
    f = (lambda x, u: fn(x, indices, u)) if fn else (lambda x, u: lax.dynamic_update_slice(x, u[:2, :2], (1, 1)))
    for i in (0, 1):
        np.testing.assert_allclose(jax.jacfwd(f, argnums=i)(x, u), jax.jacrev(f, argnums=i)(x, u), atol=1e-12)
