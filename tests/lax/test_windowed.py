"""lax.reduce_window and lax.reduce: values against a direct NumPy loop over windows (eager,
staged, printed, Numba-compiled), derivatives (JAX's first-maximum rule for max windows,
finite differences for sums), vmap against a loop, pytree operands."""
import itertools

import numpy as np
import pytest

import omnistage as jax
import omnistage.numpy as jnp
from omnistage import lax
from tests.helpers import check_staged


def reference_reduce_window(x, init, op, window, strides, pads, base=None, wdil=None):
    """XLA's ReduceWindow written as loops: dilate, pad with init, fold each window from init."""
    nd = x.ndim
    base = base or (1,) * nd
    wdil = wdil or (1,) * nd
    dil_shape = [0 if d == 0 else 1 + b * (d - 1) for d, b in zip(x.shape, base)]
    dil = np.full(dil_shape, init, x.dtype)
    dil[tuple(slice(None, None, b) for b in base)] = x
    padded = np.full([d + lo + hi for d, (lo, hi) in zip(dil_shape, pads)], init, x.dtype)
    padded[tuple(slice(lo, lo + d) for d, (lo, _) in zip(dil_shape, pads))] = dil
    span = [1 + r * (w - 1) for w, r in zip(window, wdil)]
    out_shape = [max(0, (n - s) // st + 1) if n >= s else 0 for n, s, st in zip(padded.shape, span, strides)]
    out = np.empty(out_shape, x.dtype)
    for idx in itertools.product(*map(range, out_shape)):
        acc = np.asarray(init, x.dtype)
        for off in itertools.product(*map(range, window)):
            acc = op(acc, padded[tuple(i * st + o * r for i, st, o, r in zip(idx, strides, off, wdil))])
        out[idx] = acc
    return out


CASES = [
    # window, strides, padding, base dilation, window dilation
    ((2, 2), (2, 2), "VALID", None, None),
    ((3, 2), (1, 1), "SAME", None, None),
    ((2, 3), (2, 1), ((1, 0), (2, 1)), None, None),
    ((2, 2), (1, 2), ((0, 1), (1, 1)), (2, 1), (1, 2)),
    ((1, 3), (1, 1), "SAME_LOWER", None, None),
    ((6, 1), (1, 1), "VALID", None, None),  # longer than the axis: empty result
]

MONOIDS = [(lax.max, -np.inf, np.maximum), (lax.min, np.inf, np.minimum), (lax.add, 0.0, np.add)]


def _explicit(x, window, strides, padding, wdil):
    if not isinstance(padding, str):
        return padding
    span = [1 + r * (w - 1) for w, r in zip(window, wdil or (1,) * len(window))]
    return lax.padtype_to_pads(x.shape, span, strides, padding)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("monoid", MONOIDS, ids=["max", "min", "add"])
def test_reduce_window_monoids_match_loops(case, monoid):
    window, strides, padding, base, wdil = case
    comp, init, op = monoid
    x = np.random.RandomState(0).randn(5, 4).astype(np.float32)
    got = check_staged(lambda x: lax.reduce_window(x, init, comp, window, strides, padding, base, wdil), x)
    want = reference_reduce_window(x, init, op, window, strides, _explicit(x, window, strides, padding, wdil), base, wdil)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
    assert got.shape == lax.reduce_window_shape_tuple(x.shape, window, strides, _explicit(x, window, strides, padding, wdil), base, wdil)


def test_reduce_window_generic_computation_starts_from_init_value():
    x = np.arange(1, 11, dtype=np.float32)
    got = lax.reduce_window(x, np.float32(1), lax.mul, (2,))  # JAX's docstring example
    np.testing.assert_array_equal(np.asarray(got), x[:-1] * x[1:])
    # padding and dilation holes take no part in a window (values printed by JAX 0.10.2)
    got = check_staged(lambda x: lax.reduce_window(x, 10.0, lax.add, (3,), (2,), "SAME"), x)
    np.testing.assert_array_equal(np.asarray(got), [16, 22, 28, 34, 29])
    got = check_staged(lambda x: lax.reduce_window(x, 10.0, lax.add, (3,), (1,), ((2, 0),), (2,)), x[:4])
    np.testing.assert_array_equal(np.asarray(got), [11, 11, 13, 12, 15, 13, 17])
    got = lax.reduce_window(x[:4], 10.0, lax.max, (3,), (1,), ((2, 0),))
    np.testing.assert_array_equal(np.asarray(got), [10, 10, 10, 10])
    # a computation that is not a lax monoid (still folded pairwise from the init value)
    got = lax.reduce_window(x, 0.0, lambda a, b: jnp.maximum(a, b) + 0.0, (3,), (1,), "VALID")
    np.testing.assert_allclose(np.asarray(got), [max(x[i:i + 3]) for i in range(8)])


def test_reduce_window_nan_propagates_like_lax_max():
    x = np.array([1.0, np.nan, 3.0, 0.0, 2.0], np.float32)
    got = lax.reduce_window(x, -np.inf, lax.max, (2,), (1,), "VALID")
    np.testing.assert_array_equal(np.asarray(got), [np.nan, np.nan, 3.0, 2.0])


def test_reduce_window_integers():
    x = np.array([[3, -7, 2], [9, 0, -1]], np.int32)
    got = lax.reduce_window(x, np.iinfo(np.int32).min, lax.max, (2, 2), (1, 1), "SAME")
    want = reference_reduce_window(x, np.iinfo(np.int32).min, np.maximum, (2, 2), (1, 1), ((0, 1), (0, 1)))
    np.testing.assert_array_equal(np.asarray(got), want)
    assert got.dtype == np.int32


def test_max_window_derivative_goes_to_the_first_maximum_as_jax():
    x = jnp.array([[1.0, 3.0, 3.0, 0.0], [3.0, 2.0, 1.0, 1.0], [0, 0, 0, 0], [0, 0, 0, 0]])
    pool = lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (2, 2), (2, 2), "VALID").sum()
    np.testing.assert_array_equal(np.asarray(jax.grad(pool)(x)), [[0, 1, 1, 0], [0, 0, 0, 0], [1, 0, 1, 0], [0, 0, 0, 0]])
    same = lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (2, 2), (1, 1), "SAME").sum()
    # values printed by JAX 0.10.2 for the same input
    want = [[0, 2, 1, 0], [1, 1, 1, 2], [1, 1, 1, 1], [1, 1, 1, 1]]
    np.testing.assert_array_equal(np.asarray(jax.grad(same)(x)), want)
    np.testing.assert_array_equal(np.asarray(jax.jit(jax.grad(same))(x)), want)


def test_min_window_derivative_goes_to_the_first_minimum():
    x = jnp.array([2.0, 1.0, 1.0, 5.0])
    g = jax.grad(lambda x: lax.reduce_window(x, jnp.inf, lax.min, (3,), (1,), "VALID").sum())(x)
    np.testing.assert_array_equal(np.asarray(g), [0, 2, 0, 0])


def _numeric_grad(f, x, eps=1e-3):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (float(f(x + d)) - float(f(x - d))) / (2 * eps)
    return g


@pytest.mark.parametrize("case", CASES[:4])
def test_sum_window_derivative_matches_finite_differences(case, x64):
    window, strides, padding, base, wdil = case
    x = np.random.RandomState(1).randn(5, 4)
    w = np.random.RandomState(2).randn(*lax.reduce_window(x, 0.0, lax.add, window, strides, padding, base, wdil).shape)
    f = lambda x: jnp.sum(jnp.sin(lax.reduce_window(x, 0.0, lax.add, window, strides, padding, base, wdil)) * w)
    np.testing.assert_allclose(np.asarray(jax.grad(f)(x)), _numeric_grad(f, x, 1e-6), rtol=1e-6, atol=1e-8)


def test_vmap_matches_a_loop_and_jit_compiles_it():
    xs = np.random.RandomState(3).randn(3, 6, 5).astype(np.float32)
    f = lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (3, 2), (2, 1), "SAME")
    want = np.stack([np.asarray(f(x)) for x in xs])
    np.testing.assert_allclose(np.asarray(jax.vmap(f)(xs)), want)
    np.testing.assert_allclose(np.asarray(jax.jit(jax.vmap(f), backend="cpu")(xs)), want)
    g = jax.jit(jax.grad(lambda x: f(x).sum()), backend="cpu")(xs[0])
    np.testing.assert_allclose(np.asarray(g), np.asarray(jax.grad(lambda x: f(x).sum())(xs[0])))


def test_pytree_operands_reduce_together():
    # windowed argmax: (value, index) pairs, the first index wins ties
    x = np.array([1.0, 4.0, 4.0, 2.0, 7.0], np.float32)
    idx = np.arange(5, dtype=np.int32)

    def pick(a, b):
        take_b = lax.gt(b[0], a[0])
        return lax.select(take_b, b[0], a[0]), lax.select(take_b, b[1], a[1])

    vals, where = lax.reduce_window((x, idx), (-np.inf, np.int32(-1)), pick, (3,), (1,), "VALID")
    np.testing.assert_array_equal(np.asarray(vals), [4, 4, 7])
    np.testing.assert_array_equal(np.asarray(where), [1, 1, 4])
    with pytest.raises(ValueError, match="same tree structure"):
        lax.reduce_window((x, idx), -np.inf, pick, (3,), (1,), "VALID")


def test_reduce_window_rejects_wrong_lengths():
    with pytest.raises(TypeError, match="one entry per operand dimension"):
        lax.reduce_window(np.ones((3, 3), np.float32), 0.0, lax.add, (2,), (1,), "VALID")


def test_reduce_monoid_binds_the_reduction_and_generic_folds():
    x = np.random.RandomState(4).randn(7, 5).astype(np.float32)
    program = str(jax.make_jaxpr(lambda x: lax.reduce(x, 0.0, lax.add, (0,)))(x))
    assert "reduce_sum(" in program
    np.testing.assert_allclose(np.asarray(lax.reduce(x, -np.inf, lax.max, (1,))), x.max(1))
    got = check_staged(lambda x: lax.reduce(x, 1.0, lax.add, (0, 1)), x)
    np.testing.assert_allclose(np.asarray(got), x.sum() + 1, rtol=1e-5)
    got = lax.reduce(x, 2.0, lambda a, b: a * b, (0,))
    np.testing.assert_allclose(np.asarray(got), 2 * x.prod(0), rtol=1e-5)
    # pytree: max with the index of the first maximum
    vals, where = lax.reduce(
        (x, np.broadcast_to(np.arange(7, dtype=np.int32)[:, None], x.shape)), (-np.inf, np.int32(0)),
        lambda a, b: (lax.select(lax.ge(a[0], b[0]), a[0], b[0]), lax.select(lax.ge(a[0], b[0]), a[1], b[1])), (0,),
    )
    np.testing.assert_array_equal(np.asarray(where), x.argmax(0))
    empty = lax.reduce(np.ones((0, 3), np.float32), 5.0, lambda a, b: a + b, (0,))
    np.testing.assert_array_equal(np.asarray(empty), [5, 5, 5])
