"""jnp.quantile / percentile / nanquantile / nanpercentile / nanmedian vs NumPy: every method,
axis form, keepdims and q shape; NaN handling; JAX's dtypes; errors for bad arguments;
gradients against finite differences; vmap against a Python loop; the compiled CPU backend.

Quantiles are compared with NumPy given q as float32 (the dtype omnistage computes positions
in by default): NumPy then rounds `q * (n - 1)` exactly as we do, so the order statistics
picked by 'lower', 'higher' and 'nearest' are the same ones, and values agree exactly."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import omnistage
import omnistage.numpy as jnp
from tests.helpers import check_staged, TEST_BACKEND

METHODS = ["linear", "lower", "higher", "midpoint", "nearest"]
AXES_3D = [None, 0, -1, 1, (0, 2), (2, 0), (0, 1, 2)]
Q_SHAPES = [(), (1,), (4,), (2, 3), (0,)]


def _data(shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _q(shape, seed=1):
    q = np.random.default_rng(seed).random(shape).astype(np.float32)
    if q.size >= 2:
        q.flat[0], q.flat[-1] = 0.0, 1.0  # both ends of the range
    return q


def _numpy(fn, a, q=None, **kwargs):
    """NumPy's answer, silenced for all-NaN slices. NumPy's nan* functions misplace the dims
    of a multi-dimensional q for some axes (numpy/numpy#25731, still so for tuple axes), so
    those are asked one q at a time and the answers stacked the way `quantile` lays them out."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        if q is None:
            return fn(a, **kwargs)
        q = np.asarray(q)
        if q.ndim < 2:
            return fn(a, q, **kwargs)
        answers = [fn(a, qi, **kwargs) for qi in q.reshape(-1)]
        return np.stack(answers).reshape(q.shape + np.shape(answers[0]))


def _assert_matches(got, want, dtype=np.float32):
    got = np.asarray(got)
    assert got.dtype == dtype, got.dtype
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    np.testing.assert_allclose(got, want, rtol=2e-7, atol=1e-7, equal_nan=True)


# --- values vs NumPy ------------------------------------------------------------------------


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("axis", AXES_3D)
@pytest.mark.parametrize("keepdims", [False, True])
def test_quantile_matches_numpy_every_method_axis_keepdims(method, axis, keepdims):
    x, q = _data((3, 4, 5)), _q((4,))
    got = check_staged(lambda x, q: jnp.quantile(x, q, axis=axis, method=method, keepdims=keepdims), x, q)
    _assert_matches(got, np.quantile(x, q, axis=axis, method=method, keepdims=keepdims))


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("q_shape", Q_SHAPES)
def test_quantile_q_of_any_shape_leads_the_result_shape(method, q_shape):
    x, q = _data((6, 7)), _q(q_shape)
    got = check_staged(lambda x, q: jnp.quantile(x, q, axis=1, method=method), x, q)
    _assert_matches(got, np.quantile(x, q, axis=1, method=method))
    assert got.shape == q_shape + (6,)


@pytest.mark.parametrize("method", METHODS)
def test_python_scalar_q(method):
    x = _data((5, 8))
    for q in [0.0, 0.125, 0.5, 0.75, 1.0]:  # exact in binary: NumPy's float64 positions agree
        _assert_matches(jnp.quantile(x, q, axis=-1, method=method), np.quantile(x, q, axis=-1, method=method))


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("axis", [None, 0, (1, 2)])
def test_percentile_matches_numpy(method, axis):
    x = _data((2, 3, 5))
    q = np.array([0.0, 12.5, 50.0, 62.5, 100.0], np.float32)  # q / 100 exact: positions agree
    got = check_staged(lambda x, q: jnp.percentile(x, q, axis=axis, method=method, keepdims=True), x, q)
    _assert_matches(got, np.percentile(x, q, axis=axis, method=method, keepdims=True))
    _assert_matches(jnp.percentile(x, 37.5, axis=axis, method=method), np.percentile(x, 37.5, axis=axis, method=method))


def test_nearest_rounds_half_to_even_as_numpy():
    # Position 1.5 rounds to 2 and 2.5 to 2 (JAX's jnp.quantile rounds both down).
    x = np.arange(6, dtype=np.float32)
    for n, q in [(4, 0.5), (6, 0.5)]:
        assert float(jnp.quantile(x[:n], q, method="nearest")) == np.quantile(x[:n], q, method="nearest") == 2.0


def test_midpoint_and_linear_agree_with_numpy_on_repeated_values():
    x = np.array([3, 1, 3, 3, 2, 1, 3], np.float32)
    q = np.linspace(0, 1, 13).astype(np.float32)
    for method in METHODS:
        _assert_matches(jnp.quantile(x, q, method=method), np.quantile(x, q, method=method))


def test_one_element_slices_and_empty_batches():
    x = _data((4, 1))
    _assert_matches(jnp.quantile(x, _q((3,)), axis=1), np.quantile(x, _q((3,)), axis=1))
    empty = np.zeros((0, 5), np.float32)
    got = jnp.quantile(empty, _q((2,)), axis=1)
    assert got.shape == (2, 0)


def test_infinite_samples_are_returned_as_is():
    x = np.array([-np.inf, 0.0, 1.0, np.inf], np.float32)
    assert float(jnp.quantile(x, 0.0)) == -np.inf
    assert float(jnp.quantile(x, 1.0)) == np.inf
    assert float(jnp.quantile(x, 0.5)) == 0.5
    assert float(jnp.quantile(x, 0.25)) == -np.inf  # between -inf and 0


# --- NaN handling ---------------------------------------------------------------------------


def _with_nans(shape=(4, 6), seed=0):
    x = _data(shape, seed)
    x[0, 2] = np.nan
    x[1, :] = np.nan  # an all-NaN slice
    x[3, 0] = x[3, 5] = np.nan
    return x


@pytest.mark.parametrize("method", METHODS)
def test_quantile_propagates_nan_per_slice(method):
    x, q = _with_nans(), _q((3,))
    got = check_staged(lambda x, q: jnp.quantile(x, q, axis=1, method=method), x, q)
    _assert_matches(got, np.quantile(x, q, axis=1, method=method))
    assert np.isnan(np.asarray(jnp.quantile(x, 0.5))).all()


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("axis", [None, 1, 0, (0, 1)])
def test_nanquantile_ignores_nans(method, axis):
    x, q = _with_nans(), _q((3,))
    got = check_staged(lambda x, q: jnp.nanquantile(x, q, axis=axis, method=method), x, q)
    _assert_matches(got, _numpy(np.nanquantile, x, q, axis=axis, method=method))


def test_nanpercentile_and_nanmedian_match_numpy():
    x = _with_nans((5, 7), seed=3)
    q = np.array([0.0, 25.0, 50.0, 100.0], np.float32)
    for method in METHODS:
        got = jnp.nanpercentile(x, q, axis=1, method=method, keepdims=True)
        _assert_matches(got, _numpy(np.nanpercentile, x, q, axis=1, method=method, keepdims=True))
    for axis in [None, 0, 1]:
        _assert_matches(jnp.nanmedian(x, axis=axis), _numpy(np.nanmedian, x, axis=axis))
    assert np.isnan(float(jnp.nanmedian(np.full(3, np.nan, np.float32))))


def test_nanquantile_of_data_without_nans_is_quantile():
    x = _data((3, 4, 5))
    for q, axis in [(_q((5,)), 1), (_q((2, 3)), (0, 2)), (_q((2, 3)), None)]:
        for method in METHODS:
            want = jnp.quantile(x, q, axis=axis, method=method, keepdims=True)
            got = jnp.nanquantile(x, q, axis=axis, method=method, keepdims=True)
            assert got.shape == want.shape == q.shape + np.quantile(x, 0.5, axis=axis, keepdims=True).shape
            np.testing.assert_array_equal(got, want)


# --- dtypes ---------------------------------------------------------------------------------


def test_integer_input_gives_the_default_float():
    x = np.array([[5, 1, 4], [2, 8, 3]], np.int32)
    for method in METHODS:
        _assert_matches(jnp.quantile(x, 0.5, axis=1, method=method), np.quantile(x, 0.5, axis=1, method=method))
    assert jnp.percentile(np.array([True, False, True]), 50).dtype == np.float32


def test_float16_input_keeps_its_dtype():
    x = _data((9,), dtype=np.float16)
    got = jnp.quantile(x, np.float32(0.3))
    assert got.dtype == np.float16
    np.testing.assert_allclose(float(got), np.quantile(x.astype(np.float32), np.float32(0.3)), rtol=1e-3)


def test_float32_q_keeps_float64_data_precise(x64):
    x = np.array([1e8 + 1, 1e8 + 3])  # 2 apart: float32 spacing here is 8
    assert float(jnp.quantile(x, np.float32(0.5))) == 1e8 + 2
    assert float(jnp.percentile(x, np.float32(75.0))) == 1e8 + 2.5


def test_x64_dtypes(x64):
    x32, x64_ = _data((10,)), _data((10,), dtype=np.float64)
    assert jnp.quantile(x32, 0.3).dtype == np.float32  # a Python q follows the data
    assert jnp.quantile(x32, np.float64(0.3)).dtype == np.float32  # the data's float type
    assert jnp.quantile(x64_, 0.3).dtype == np.float64
    assert jnp.quantile(np.arange(5), 0.5).dtype == np.float64
    q = np.linspace(0, 1, 23)
    for method in METHODS:
        np.testing.assert_allclose(jnp.quantile(x64_, q, method=method), np.quantile(x64_, q, method=method),
                                   rtol=1e-15, atol=1e-15)


# --- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize("fn, q, match", [
    (jnp.quantile, 1.5, r"Quantiles must be in the range \[0, 1\]"),
    (jnp.quantile, -0.1, r"Quantiles must be in the range \[0, 1\]"),
    (jnp.quantile, np.array([0.2, np.nan]), r"Quantiles must be in the range"),
    (jnp.quantile, jnp.array([0.5, 2.0]), r"Quantiles must be in the range"),
    (jnp.nanquantile, np.float32(1.01), r"Quantiles must be in the range"),
    (jnp.percentile, 101.0, r"Percentiles must be in the range \[0, 100\]"),
    (jnp.percentile, np.array([-1.0, 50.0]), r"Percentiles must be in the range"),
    (jnp.nanpercentile, 100.5, r"Percentiles must be in the range"),
])
def test_concrete_q_out_of_range_raises_as_numpy(fn, q, match):
    with pytest.raises(ValueError, match=match):
        fn(np.arange(5.0), q)
    with pytest.raises(ValueError, match=match):  # q closed over: still known while tracing
        omnistage.jit(lambda x: fn(x, q))(np.arange(5.0))


def test_traced_q_out_of_range_is_clamped_as_jax():
    x = np.array([4.0, 1.0, np.nan, 3.0, 2.0], np.float32)
    q = np.array([-0.5, 1.5, -1e10, 1e10], np.float32)  # 1e10 * 3 would overflow an int32 index
    for method in METHODS:
        def both(x, q):
            return jnp.quantile(x[jnp.array([0, 1, 3, 4])], q, method=method), jnp.nanquantile(x, q, method=method)

        for got in omnistage.jit(both, backend=TEST_BACKEND)(x, q):
            np.testing.assert_array_equal(got, [1, 4, 1, 4])


def test_unknown_method_raises():
    with pytest.raises(ValueError, match="method='cubic' is not supported.*'linear'"):
        jnp.quantile(np.arange(3.0), 0.5, method="cubic")
    with pytest.raises(ValueError, match="method='median_unbiased' is not supported"):
        jnp.percentile(np.arange(3.0), 50, method="median_unbiased")


def test_other_bad_arguments_raise():
    x = np.arange(6.0).reshape(2, 3)
    with pytest.raises(ValueError, match="out argument"):
        jnp.quantile(x, 0.5, out=np.zeros(()))
    with pytest.raises(ValueError, match="complex"):
        jnp.quantile(x + 1j, 0.5)
    with pytest.raises(TypeError, match="q must be real"):
        jnp.quantile(x, np.array([0.5 + 0j]))
    with pytest.raises(TypeError, match="ndarray or scalar"):
        jnp.quantile(x, [0.25, 0.75])  # JAX requires an array for q, not a list
    with pytest.raises(IndexError, match="empty"):
        jnp.quantile(np.zeros((2, 0)), 0.5, axis=1)
    with pytest.raises(ValueError):
        jnp.quantile(x, 0.5, axis=2)
    with pytest.raises(ValueError):
        jnp.quantile(x, 0.5, axis=(0, 0))


def test_overwrite_input_is_accepted_and_changes_nothing():
    x = _data((7,))
    before = x.copy()
    assert float(jnp.quantile(x, 0.5, overwrite_input=True)) == float(jnp.quantile(x, 0.5))
    np.testing.assert_array_equal(x, before)


# --- transformations ------------------------------------------------------------------------


def _finite_difference_gradient(f, x, h=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        g[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


@pytest.mark.parametrize("method", METHODS)
def test_grad_wrt_data_against_finite_differences(x64, method):
    x = _data((3, 5), seed=7, dtype=np.float64)  # distinct values: the sort is locally constant
    q = np.array([0.1, 0.45, 0.8])
    weights = np.array([[1.0, -2.0, 0.5]]).T * np.arange(1, 4)

    def loss(x):
        return jnp.sum(jnp.quantile(x, q, axis=1, method=method) * weights)

    got = omnistage.grad(loss)(x)
    want = _finite_difference_gradient(lambda x: float(np.sum(np.quantile(x, q, axis=1, method=method) * weights)), x)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(omnistage.jit(omnistage.grad(loss))(x), got, rtol=1e-12)


def test_grad_wrt_q_against_finite_differences(x64):
    x = _data((11,), seed=2, dtype=np.float64)
    for fn, ref, q in [(jnp.quantile, np.quantile, 0.37), (jnp.percentile, np.percentile, 63.0),
                       (jnp.nanquantile, np.nanquantile, 0.52)]:
        got = float(omnistage.grad(lambda q: fn(x, q))(q))
        want = (ref(x, q + 1e-7) - ref(x, q - 1e-7)) / 2e-7
        assert got == pytest.approx(want, rel=1e-6)


def test_grad_of_nanquantile_skips_nans(x64):
    x = np.array([3.0, np.nan, 1.0, 2.0, np.nan, 5.0])
    g = np.asarray(omnistage.grad(lambda x: jnp.nanquantile(x, 0.6))(x))
    # Four values; position 0.6 * 3 = 1.8 between the 2nd (2.0) and 3rd (3.0) smallest.
    np.testing.assert_allclose(g, [0.8, 0, 0, 0.2, 0, 0], atol=1e-12)


def test_grad_through_nan_propagating_quantile_is_zero_for_nan_slices():
    x = np.array([[1.0, np.nan, 3.0], [1.0, 2.0, 4.0]], np.float32)
    g = np.asarray(omnistage.grad(lambda x: jnp.sum(jnp.quantile(x, 0.5, axis=1)))(x))
    np.testing.assert_array_equal(g, [[0, 0, 0], [0, 1, 0]])


def test_vmap_matches_a_python_loop():
    xs, q = _data((4, 3, 6), seed=5), _q((3,))

    def f(x, q):
        per_row = jnp.quantile(x, q, axis=-1, method="linear")
        return per_row + jnp.nanpercentile(x, q * 100, axis=0, method="nearest").sum()

    loop = np.stack([np.asarray(f(x, q)) for x in xs])
    np.testing.assert_allclose(omnistage.vmap(f, in_axes=(0, None))(xs, q), loop, rtol=1e-6)
    moved = np.moveaxis(xs, 0, 2)
    np.testing.assert_allclose(omnistage.vmap(f, in_axes=(2, None))(moved, q), loop, rtol=1e-6)
    qs = np.stack([_q((3,), seed=s) for s in range(4)])
    loop_q = np.stack([np.asarray(f(xs[0], qi)) for qi in qs])
    np.testing.assert_allclose(omnistage.vmap(f, in_axes=(None, 0))(xs[0], qs), loop_q, rtol=1e-6)


def test_vmap_of_grad_matches_a_python_loop():
    xs = _data((5, 8), seed=9)

    def f(x):
        return jnp.quantile(x, 0.3) * 2 + jnp.nanmedian(x)

    batched = omnistage.vmap(omnistage.grad(f))(xs)
    np.testing.assert_allclose(batched, np.stack([np.asarray(omnistage.grad(f)(x)) for x in xs]), rtol=1e-6)


def test_compiled_cpu_backend_matches_numpy():
    x, q = _with_nans((5, 9), seed=4), _q((3,))

    def f(x, q):
        return (jnp.quantile(x, q, axis=1), jnp.nanquantile(x, q, axis=(0, 1), method="midpoint"),
                jnp.percentile(x[2:], q * 100, axis=0, method="nearest", keepdims=True))

    got = omnistage.jit(f, backend="cpu")(x, q)
    _assert_matches(got[0], np.quantile(x, q, axis=1))
    _assert_matches(got[1], _numpy(np.nanquantile, x, q, axis=(0, 1), method="midpoint"))
    _assert_matches(got[2], np.percentile(x[2:], q * 100, axis=0, method="nearest", keepdims=True))
    grad = omnistage.jit(omnistage.grad(lambda x: jnp.sum(f(x, q)[0][:, 0])), backend="cpu")(x)
    np.testing.assert_allclose(grad, omnistage.grad(lambda x: jnp.sum(f(x, q)[0][:, 0]))(x), rtol=1e-6)


# --- random cases ---------------------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(
    shape=st.lists(st.integers(1, 5), min_size=1, max_size=3),
    q_shape=st.sampled_from([(), (3,), (2, 2)]),
    method=st.sampled_from(METHODS),
    keepdims=st.booleans(),
    nan_fraction=st.sampled_from([0.0, 0.3]),
    seed=st.integers(0, 2**31 - 1),
    data=st.data(),
)
def test_random_cases_match_numpy(shape, q_shape, method, keepdims, nan_fraction, seed, data):
    shape = tuple(shape)
    axis = data.draw(st.one_of(
        st.none(),
        st.integers(-len(shape), len(shape) - 1),
        st.lists(st.integers(0, len(shape) - 1), min_size=1, unique=True).map(tuple),
    ))
    rng = np.random.default_rng(seed)
    x = rng.integers(-4, 5, shape).astype(np.float32)  # small integers: plenty of ties
    x[rng.random(shape) < nan_fraction] = np.nan
    q = rng.random(q_shape).astype(np.float32)
    _assert_matches(jnp.quantile(x, q, axis=axis, method=method, keepdims=keepdims),
                    np.quantile(x, q, axis=axis, method=method, keepdims=keepdims))
    _assert_matches(jnp.nanquantile(x, q, axis=axis, method=method, keepdims=keepdims),
                    _numpy(np.nanquantile, x, q, axis=axis, method=method, keepdims=keepdims))
