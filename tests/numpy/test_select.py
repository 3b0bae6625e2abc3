"""jnp.select vs np.select: first true condition wins, broadcasting, JAX's dtype promotion and
truthiness of non-bool conditions; eagerly, staged, compiled, differentiated and batched."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import omnistage
import omnistage.numpy as jnp
from tests.helpers import check_staged


def _cases():
    x = np.arange(-4, 5).astype(np.float32)
    return x, [x < -1, x > 1, x == 0], [x * 2, x**2, np.full_like(x, 7)]


def test_first_true_condition_wins_as_numpy():
    x, conds, choices = _cases()
    overlapping = [x < 2, x < 0]  # x < 0 implies x < 2: the second never wins
    got = check_staged(lambda *a: jnp.select(list(a[:2]), list(a[2:]), default=-1.0), *overlapping, x, -x)
    np.testing.assert_array_equal(got, np.select(overlapping, [x, -x], -1.0))
    got = check_staged(lambda *a: jnp.select(list(a[:3]), list(a[3:])), *conds, *choices)
    np.testing.assert_array_equal(got, np.select(conds, choices))


def test_broadcasts_conditions_choices_and_default():
    col = np.array([[True], [False], [True]])
    row = np.array([False, True, False, True])
    choices = [np.arange(4, dtype=np.int32), np.int32(9)]
    default = np.arange(12, dtype=np.int32).reshape(3, 4)
    got = check_staged(lambda a, b, c0, c1, d: jnp.select([a, b], [c0, c1], d), col, row, *choices, default)
    want = np.select([np.broadcast_to(col, (3, 4)), np.broadcast_to(row, (3, 4))], choices, default)
    assert got.shape == (3, 4)
    np.testing.assert_array_equal(got, want)


def test_scalar_conditions_and_choices():
    assert int(jnp.select([False, True], [1, 2], 3)) == 2
    assert int(jnp.select([False, False], [1, 2], 3)) == 3


def test_default_takes_part_in_promotion():
    x = np.arange(4, dtype=np.int32)
    assert jnp.select([x > 1], [x]).dtype == np.int32
    assert jnp.select([x > 1], [x], default=0.5).dtype == np.float32  # weak float: float32
    np.testing.assert_array_equal(jnp.select([x > 1], [x], default=0.5), [0.5, 0.5, 2, 3])
    assert jnp.select([x > 1], [x.astype(np.int8)], default=np.int16(0)).dtype == np.int16


def test_non_boolean_conditions_count_by_truth_as_in_jax():
    x = np.array([0.0, 1.5, -2.0, 0.0], np.float32)
    got = jnp.select([x, np.array([0, 0, 0, 3])], [np.ones(4, np.float32), 2 * np.ones(4, np.float32)], -1.0)
    np.testing.assert_array_equal(got, [-1, 1, 1, 2])


def test_condlist_may_be_an_array_iterated_along_its_first_axis():
    x = np.arange(5)
    conds = np.stack([x < 1, x > 3])
    np.testing.assert_array_equal(jnp.select(conds, [x, -x], 10), np.select(conds, [x, -x], 10))
    jitted = omnistage.jit(lambda c, x: jnp.select(c, [x, -x], 10))(conds, x)
    np.testing.assert_array_equal(jitted, np.select(conds, [x, -x], 10))


@pytest.mark.parametrize(
    "condlist, choicelist, error, message",
    [
        ([np.array([True])], [], ValueError, "length equal"),
        ([np.array([True]), np.array([False])], [np.ones(1)], ValueError, "2 vs 1"),
        ([], [], ValueError, "non-empty"),
        (True, [np.ones(1)], TypeError, "sequence of arrays"),
        ([np.ones(3, bool)], [np.ones(4)], ValueError, r"\(3,\).*\(4,\)|\(4,\).*\(3,\)"),
        ([np.ones(3, bool)], [[1.0, 2.0, 3.0]], TypeError, "ndarray or scalar"),
    ],
)
def test_bad_arguments_raise(condlist, choicelist, error, message):
    with pytest.raises(error, match=message):
        jnp.select(condlist, choicelist)


def test_grad_flows_to_the_chosen_branch_only():
    x = np.linspace(-3, 3, 7).astype(np.float32)

    def f(x):
        return jnp.sum(jnp.select([x < -1, x > 1], [x**2, 3 * x], jnp.sin(x)))

    g = omnistage.grad(f)(x)
    want = np.select([x < -1, x > 1], [2 * x, np.full_like(x, 3)], np.cos(x))
    np.testing.assert_allclose(g, want, rtol=1e-6)
    np.testing.assert_allclose(omnistage.jit(omnistage.grad(f))(x), want, rtol=1e-6)


def test_vmap_matches_a_python_loop():
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((5, 6)).astype(np.float32)

    def f(x):
        return jnp.select([x < -0.5, x > 0.5], [-x, x * 2], 0.0)

    batched = omnistage.vmap(f)(xs)
    np.testing.assert_array_equal(batched, np.stack([np.asarray(f(x)) for x in xs]))
    over_columns = omnistage.vmap(f, in_axes=1, out_axes=1)(xs)
    np.testing.assert_array_equal(over_columns, batched)


def test_compiled_cpu_backend_matches_numpy():
    x, conds, choices = _cases()

    def f(x):
        return jnp.select([x < -1, x > 1, x == 0], [x * 2, x**2, jnp.full_like(x, 7)], -3.0)

    got = omnistage.jit(f, backend="cpu")(x)
    np.testing.assert_array_equal(got, np.select(conds, choices, -3.0))


@settings(max_examples=25, deadline=None)
@given(
    st.integers(1, 4),
    st.lists(st.integers(0, 4), min_size=1, max_size=2),
    st.integers(0, 2**31 - 1),
)
def test_random_conditions_match_numpy(n_cases, shape, seed):
    rng = np.random.default_rng(seed)
    shape = tuple(shape)
    conds = [rng.random(shape) < 0.4 for _ in range(n_cases)]
    choices = [rng.standard_normal(shape).astype(np.float32) for _ in range(n_cases)]
    default = rng.standard_normal(shape[-1:]).astype(np.float32)
    got = jnp.select(conds, choices, default)
    np.testing.assert_array_equal(got, np.select(conds, choices, default))
