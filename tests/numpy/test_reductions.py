"""jnp reductions and cumulative ops vs NumPy: values, and JAX's result dtypes, eagerly,
under jit, from the printed program and through the checked interpreter."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import omnistage
import omnistage.numpy as jnp
from tests.helpers import check_staged, TEST_BACKEND

SHAPES = [(), (0,), (5,), (3, 4), (2, 0, 3), (2, 3, 4)]
DTYPES = ["float32", "int32", "bool", "complex64", "int8", "uint8"]


def _data(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype == "complex64":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(0, 5, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _axes_for(ndim):
    axes = [None]
    if ndim:
        axes += [0, -1]
    if ndim >= 2:
        axes += [(0, ndim - 1), (-1, 0)]
    return axes


def _sum_dtype(dt):
    dt = np.dtype(dt)
    if dt.kind == "b" or (dt.kind == "i" and dt.itemsize < 4):
        return np.dtype("int32")
    if dt.kind == "u" and dt.itemsize < 4:
        return np.dtype("uint32")
    return dt


def _mean_dtype(dt):
    return np.dtype(dt) if np.dtype(dt).kind in "fc" else np.dtype("float32")


def _var_dtype(dt):
    return {"c": np.dtype("float32")}.get(np.dtype(dt).kind, _mean_dtype(dt))


# name: (NumPy oracle, JAX dtype rule, accepted dtype kinds, needs a non-empty reduced axis)
REDUCTIONS = {
    "sum": (np.sum, _sum_dtype, "biufc", False),
    "prod": (np.prod, _sum_dtype, "biufc", False),
    "max": (np.max, np.dtype, "biuf", True),
    "min": (np.min, np.dtype, "biuf", True),
    "all": (np.all, lambda dt: np.dtype(bool), "biufc", False),
    "any": (np.any, lambda dt: np.dtype(bool), "biufc", False),
    "mean": (np.mean, _mean_dtype, "biufc", True),
    "var": (np.var, _var_dtype, "biufc", True),
    "std": (np.std, _var_dtype, "biufc", True),
    "ptp": (np.ptp, np.dtype, "iuf", True),
}


def _reduced_empty(shape, axis):
    if axis is None:
        return 0 in shape
    axes = axis if isinstance(axis, tuple) else (axis,)
    return any(shape[a] == 0 for a in axes)


def _cases():
    for name, (_, _, kinds, needs) in REDUCTIONS.items():
        for dtype in DTYPES:
            if np.dtype(dtype).kind not in kinds:
                continue
            for shape in SHAPES:
                for axis in _axes_for(len(shape)):
                    if needs and _reduced_empty(shape, axis):
                        continue
                    yield name, dtype, shape, axis


@pytest.mark.parametrize("name,dtype,shape,axis", list(_cases()))
def test_reduction_matches_numpy_with_jax_dtype(name, dtype, shape, axis):
    np_fn, dtype_rule, _, _ = REDUCTIONS[name]
    x = _data(shape, dtype)
    for keepdims in (False, True):
        got = check_staged(lambda x: getattr(jnp, name)(x, axis=axis, keepdims=keepdims), x, rtol=2e-5, atol=2e-5)
        with np.errstate(all="ignore"):
            want = np.asarray(np_fn(x, axis=axis, keepdims=keepdims))
        assert got.dtype == dtype_rule(dtype), (got.dtype, dtype_rule(dtype))
        np.testing.assert_allclose(np.asarray(got), want.astype(got.dtype), rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("dtype", ["float32", "int32", "bool"])
@pytest.mark.parametrize("shape,axis", [((5,), None), ((5,), 0), ((3, 4), 1), ((3, 4), -2), ((2, 3, 4), None), ((), None)])
def test_argmax_argmin_give_first_index_as_int32(name, dtype, shape, axis):
    x = _data(shape, dtype)
    for keepdims in (False, True):
        got = check_staged(lambda x: getattr(jnp, name)(x, axis=axis, keepdims=keepdims), x)
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, getattr(np, name)(x, axis=axis, keepdims=keepdims))


def test_argmax_treats_nan_as_maximum():
    x = np.array([1.0, np.nan, 5.0, np.nan], np.float32)
    assert int(check_staged(lambda x: jnp.argmax(x), x)) == 1
    assert int(check_staged(lambda x: jnp.argmin(x), x)) == 1


def test_sum_dtype_argument_and_bool_dtype():
    x = np.array([[1, 2], [3, 250]], np.uint8)
    assert check_staged(lambda x: jnp.sum(x, dtype=jnp.uint8), x).dtype == np.uint8
    got = check_staged(lambda x: jnp.sum(x, axis=0, dtype=jnp.float32), x)
    assert got.dtype == np.float32 and got.tolist() == [4.0, 252.0]
    got = check_staged(lambda x: jnp.sum(x, axis=1, dtype=bool), np.array([[0, 0], [0, 3]]))
    assert got.dtype == np.bool_ and got.tolist() == [False, True]


def test_sum_and_prod_accept_initial_and_where():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    mask = x % 3 != 0
    got = check_staged(lambda x, m: jnp.sum(x, axis=1, where=m, initial=10.0), x, mask)
    np.testing.assert_allclose(got, np.sum(x, axis=1, where=mask, initial=10.0))
    got = check_staged(lambda x, m: jnp.prod(x + 1, axis=0, where=m), x, mask)
    np.testing.assert_allclose(got, np.prod(x + 1, axis=0, where=mask))


def test_max_with_where_requires_initial():
    x = np.arange(6.0, dtype=np.float32)
    with pytest.raises(ValueError, match="initial"):
        jnp.max(x, where=x > 2)
    got = check_staged(lambda x: jnp.max(x, where=x < 3, initial=-1.0), x)
    assert float(got) == 2.0
    assert float(check_staged(lambda x: jnp.min(x, initial=-5.0), x)) == -5.0


def test_max_of_empty_raises_without_initial():
    with pytest.raises(ValueError, match="zero-size array"):
        jnp.max(np.zeros((0, 3), np.float32), axis=0)
    got = check_staged(lambda x: jnp.max(x, axis=0, initial=0.0), np.zeros((0, 3), np.float32))
    assert got.shape == (3,)


def test_mean_var_std_with_where_ddof_and_correction():
    x = np.random.default_rng(1).standard_normal((4, 5)).astype(np.float32)
    m = x > -0.5
    for fn, kw in [(jnp.mean, {}), (jnp.var, {"ddof": 1}), (jnp.std, {"ddof": 1})]:
        got = check_staged(lambda x, m: fn(x, axis=1, where=m, **kw), x, m)
        want = getattr(np, fn.__name__)(x, axis=1, where=m, **kw)
        np.testing.assert_allclose(got, want, rtol=1e-5)
    got = check_staged(lambda x: jnp.var(x, axis=0, correction=1), x)
    np.testing.assert_allclose(got, np.var(x, axis=0, ddof=1), rtol=1e-5)


def test_mean_of_ints_is_float32_and_float64_under_x64(x64):
    assert jnp.mean(np.arange(4, dtype=np.int32)).dtype == np.float64
    assert jnp.sum(np.arange(4, dtype=np.int32)).dtype == np.int64
    assert jnp.sum(np.arange(4, dtype=np.uint8)).dtype == np.uint64


def test_float16_sum_accumulates_in_float32():
    x = np.full(4096, 0.1, np.float16)
    got = check_staged(lambda x: jnp.sum(x), x, rtol=1e-3)
    assert got.dtype == np.float16
    np.testing.assert_allclose(float(got), float(np.sum(x.astype(np.float32))), rtol=1e-3)


def test_count_nonzero_and_average():
    x = np.array([[0, 1, 2], [3, 0, 0]], np.int32)
    got = check_staged(lambda x: jnp.count_nonzero(x, axis=1), x)
    assert got.dtype == np.int32 and got.tolist() == [2, 1]
    w = np.array([1.0, 2.0, 3.0], np.float32)
    got = check_staged(lambda x, w: jnp.average(x, axis=1, weights=w), x, w)
    np.testing.assert_allclose(got, np.average(x, axis=1, weights=w), rtol=1e-6)
    avg, wsum = check_staged(lambda x: jnp.average(x, axis=0, returned=True), x)
    np.testing.assert_allclose(avg, np.average(x, axis=0))
    np.testing.assert_allclose(wsum, [2.0, 2.0, 2.0])


@pytest.mark.parametrize("shape,axis", [((7,), None), ((4,), 0), ((3, 4), 1), ((3, 4), (0, 1)), ((2, 3, 4), -1), ((0,), None)])
def test_median_matches_numpy(shape, axis):
    x = _data(shape, "float32", 3)
    with np.errstate(all="ignore"), pytest.warns(RuntimeWarning) if 0 in shape else _nullcontext():
        want = np.median(x, axis=axis)
    got = check_staged(lambda x: jnp.median(x, axis=axis), x)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert jnp.median(np.arange(4, dtype=np.int32)).dtype == np.float32
    assert np.isnan(float(jnp.median(np.array([1.0, np.nan, 2.0], np.float32))))


class _nullcontext:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@pytest.mark.parametrize("name", ["nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd", "nanargmax", "nanargmin"])
def test_nan_reductions_ignore_nans(name):
    x = np.array([[1.0, np.nan, 3.0], [np.nan, 5.0, -1.0]], np.float32)
    for axis in (None, 0, 1):
        got = check_staged(lambda x: getattr(jnp, name)(x, axis=axis), x)
        want = getattr(np, name)(x, axis=axis)
        np.testing.assert_allclose(got, want, rtol=1e-6)
        assert got.dtype == (np.int32 if "arg" in name else np.float32)


def test_nanmax_of_all_nan_slice_is_nan():
    x = np.array([[np.nan, np.nan], [1.0, np.nan]], np.float32)
    got = check_staged(lambda x: jnp.nanmax(x, axis=1), x)
    assert np.isnan(got[0]) and float(got[1]) == 1.0


def test_bad_axis_raises_axis_error():
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.sum(x, axis=2)
    with pytest.raises(IndexError, match="out of bounds"):
        jnp.mean(x, axis=-3)
    with pytest.raises(ValueError, match="repeated"):
        jnp.sum(x, axis=(0, -2))
    with pytest.raises(ValueError, match="empty"):
        jnp.argmax(np.zeros((0,), np.float32))


# --- cumulative ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", ["float32", "int32", "bool", "complex64", "int8"])
@pytest.mark.parametrize("shape,axis", [((), None), ((0,), 0), ((5,), None), ((3, 4), 1), ((3, 4), -2), ((2, 3, 4), None)])
def test_cumulative_matches_numpy_with_jax_dtype(name, dtype, shape, axis):
    x = _data(shape, dtype, 2)
    got = check_staged(lambda x: getattr(jnp, name)(x, axis=axis), x, rtol=1e-5)
    want = getattr(np, name)(x, axis=axis)
    assert got.dtype == _sum_dtype(dtype)
    np.testing.assert_allclose(np.asarray(got), want.astype(got.dtype), rtol=1e-5)


def test_cumsum_dtype_and_nancumsum():
    x = np.array([1, 0, 2], np.int32)
    got = check_staged(lambda x: jnp.cumsum(x, dtype=bool), x)
    assert got.dtype == np.bool_ and got.tolist() == [True, True, True]
    y = np.array([1.0, np.nan, 2.0], np.float32)
    np.testing.assert_allclose(check_staged(lambda y: jnp.nancumsum(y), y), np.nancumsum(y))
    np.testing.assert_allclose(check_staged(lambda y: jnp.nancumprod(y), y), np.nancumprod(y))


def test_cumulative_sum_include_initial():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    got = check_staged(lambda x: jnp.cumulative_sum(x, axis=1, include_initial=True), x)
    np.testing.assert_allclose(got, np.cumulative_sum(x, axis=1, include_initial=True))
    got = check_staged(lambda x: jnp.cumulative_prod(x[0] + 1), x)
    np.testing.assert_allclose(got, [1.0, 2.0, 6.0])
    with pytest.raises(ValueError, match="one-dimensional"):
        jnp.cumulative_sum(x)


@pytest.mark.parametrize("kw", [{}, {"n": 2}, {"axis": 0}, {"prepend": 0.0}, {"append": np.array([[9.0], [8.0]], np.float32)}, {"n": 0}])
def test_diff_matches_numpy(kw):
    x = np.array([[1.0, 4.0, 9.0, 16.0], [2.0, 3.0, 5.0, 7.0]], np.float32)
    got = check_staged(lambda x: jnp.diff(x, **kw), x)
    np.testing.assert_allclose(got, np.diff(x, **kw))
    assert got.dtype == np.float32


def test_diff_of_bool_is_not_equal_and_ediff1d():
    b = np.array([True, True, False, True])
    got = check_staged(lambda b: jnp.diff(b), b)
    assert got.dtype == np.bool_ and got.tolist() == np.diff(b).tolist()
    x = np.array([[1, 2], [4, 7]], np.int32)
    got = check_staged(lambda x: jnp.ediff1d(x, to_begin=-1, to_end=[5, 6]), x)
    np.testing.assert_array_equal(got, np.ediff1d(x, to_begin=-1, to_end=[5, 6]))


def test_lax_cumulative_primitives_with_reverse():
    x = np.array([[1.0, 3.0, 2.0], [0.5, -1.0, 4.0]], np.float32)
    lax = omnistage.lax
    for fn, np_acc in [(lax.cumsum, np.add), (lax.cumprod, np.multiply), (lax.cummax, np.maximum), (lax.cummin, np.minimum), (lax.cumlogsumexp, np.logaddexp)]:
        for reverse in (False, True):
            got = check_staged(lambda x: fn(x, axis=1, reverse=reverse), x)
            want = np.flip(np_acc.accumulate(np.flip(x, 1), axis=1), 1) if reverse else np_acc.accumulate(x, axis=1)
            np.testing.assert_allclose(got, want, rtol=1e-6)
    with pytest.raises(TypeError, match="cumlogsumexp does not accept dtype int32"):
        lax.cumlogsumexp(np.arange(3, dtype=np.int32))
    with pytest.raises(TypeError, match="cumsum does not accept dtype bool"):
        lax.cumsum(np.array([True, False]))
    with pytest.raises(ValueError, match="out of bounds"):
        lax.cummax(x, axis=2)


# --- random shapes and axes ---------------------------------------------------------------


@st.composite
def _array_and_axes(draw):
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=0, max_size=4)))
    ndim = len(shape)
    axes = draw(st.one_of(st.none(), st.lists(st.integers(-ndim, ndim - 1), unique_by=lambda a: a % ndim, max_size=ndim).map(tuple))) if ndim else None
    dtype = draw(st.sampled_from(["float32", "int32", "bool"]))
    seed = draw(st.integers(0, 1000))
    return _data(shape, dtype, seed), axes


@settings(max_examples=50, deadline=None)
@given(_array_and_axes(), st.sampled_from(["sum", "prod", "any", "all", "mean", "max"]), st.booleans())
def test_reductions_over_random_shapes_and_axes(case, name, keepdims):
    x, axes = case
    np_fn, dtype_rule, _, needs = REDUCTIONS[name]
    if name == "max" and _reduced_empty(x.shape, axes):
        with pytest.raises(ValueError, match="zero-size"):
            getattr(jnp, name)(x, axis=axes, keepdims=keepdims)
        return
    got = getattr(jnp, name)(x, axis=axes, keepdims=keepdims)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's mean of an empty slice
        want = np.asarray(np_fn(x, axis=axes, keepdims=keepdims))
    assert got.dtype == dtype_rule(x.dtype)
    np.testing.assert_allclose(np.asarray(got), want.astype(got.dtype), rtol=1e-4, atol=1e-5)
    staged = omnistage.jit(lambda x: getattr(jnp, name)(x, axis=axes, keepdims=keepdims), backend=TEST_BACKEND)(x)
    # compiled and eager sums add in other orders: a few float32 ulp of the terms' magnitudes
    # apart, which a sum that cancels (2.41 from 192 terms of |x| ~ 0.8) shows as 2e-6 relative
    scale = float(np.sum(np.abs(x), dtype=np.float64)) if name in ("sum", "mean") and x.dtype.kind == "f" else 0.0
    scale /= max(1, x.size) if name == "mean" else 1
    np.testing.assert_allclose(np.asarray(staged), np.asarray(got), rtol=1e-6, atol=4 * np.finfo(np.float32).eps * scale)
