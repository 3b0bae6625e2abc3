"""jnp sorting and searching vs NumPy: sort/argsort (stable, descending, NaNs last),
lexsort, partition, searchsorted, and unique (eager, and traceable with size=)."""
import numpy as np
import pytest

import omnistage
import omnistage.numpy as jnp
from tests.helpers import check_staged


def _data(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype == "complex64":
        return (rng.integers(0, 3, shape) + 1j * rng.integers(0, 3, shape)).astype(np.complex64)
    return rng.integers(-3, 4, shape).astype(dtype)  # small range: many ties


@pytest.mark.parametrize("dtype", ["float32", "int32", "bool", "complex64"])
@pytest.mark.parametrize("shape,axis", [((0,), -1), ((7,), -1), ((3, 5), 0), ((3, 5), -1), ((2, 3, 4), 1), ((2, 3), None), ((), None)])
def test_sort_and_stable_argsort_match_numpy(dtype, shape, axis):
    x = _data(shape, dtype)
    got = check_staged(lambda x: jnp.sort(x, axis=axis), x)
    want = np.sort(x, axis=axis)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    idx = check_staged(lambda x: jnp.argsort(x, axis=axis), x)
    assert idx.dtype == np.int32
    np.testing.assert_array_equal(idx, np.argsort(x, axis=axis, kind="stable"))


def test_sort_puts_nans_last_and_zeros_together():
    x = np.array([3.0, np.nan, -np.inf, -0.0, 1.0, -np.nan, 0.0, np.inf], np.float32)
    np.testing.assert_array_equal(check_staged(lambda x: jnp.sort(x), x), np.sort(x))
    np.testing.assert_array_equal(check_staged(lambda x: jnp.argsort(x), x), np.argsort(x, kind="stable"))


def test_descending_sort_keeps_ties_in_original_order():
    x = np.array([1, 3, 1, 2, 3], np.int32)
    np.testing.assert_array_equal(check_staged(lambda x: jnp.sort(x, descending=True), x), [3, 3, 2, 1, 1])
    np.testing.assert_array_equal(check_staged(lambda x: jnp.argsort(x, descending=True), x), [1, 4, 3, 0, 2])


def test_lexsort_matches_numpy():
    a, b = _data((8,), "int32", 1), _data((8,), "float32", 2)
    got = check_staged(lambda a, b: jnp.lexsort((a, b)), a, b)
    np.testing.assert_array_equal(got, np.lexsort((a, b)))
    m = _data((3, 6), "int32", 3)
    np.testing.assert_array_equal(check_staged(lambda m: jnp.lexsort(m, axis=-1), m), np.lexsort(m))
    with pytest.raises(TypeError, match="len > 0"):
        jnp.lexsort([])


@pytest.mark.parametrize("kth", [0, 2, -1])
def test_partition_and_argpartition_partition(kth):
    x = np.array([[5, 1, 4, 2, 3, 3], [0, 9, 8, 7, 9, 1]], np.int32)
    got = np.asarray(check_staged(lambda x: jnp.partition(x, kth), x))
    k = kth % 6
    np.testing.assert_array_equal(got[:, k], np.sort(x)[:, k])
    assert (got[:, :k] <= got[:, k:k + 1]).all() and (got[:, k + 1:] >= got[:, k:k + 1]).all()
    idx = np.asarray(check_staged(lambda x: jnp.argpartition(x, kth), x))
    np.testing.assert_array_equal(np.take_along_axis(x, idx, 1)[:, k], np.sort(x)[:, k])
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.partition(x, 6)


@pytest.mark.parametrize("method", ["scan", "sort", "compare_all"])
@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("dtype", ["float32", "int32", "complex64"])
def test_searchsorted_matches_numpy(method, side, dtype):
    a = np.sort(_data((9,), dtype, 4))
    v = _data((2, 5), dtype, 5)
    got = check_staged(lambda a, v: jnp.searchsorted(a, v, side=side, method=method), a, v)
    assert got.dtype == np.int32 and got.shape == v.shape
    np.testing.assert_array_equal(got, np.searchsorted(a, v, side=side))


def test_searchsorted_with_nans_sorter_and_scalars():
    a = np.array([0.0, 1.0, 1.0, 2.0, np.nan], np.float32)
    v = np.array([np.nan, 1.0, -1.0, 3.0], np.float32)
    for side in ("left", "right"):
        for method in ("scan", "compare_all"):
            np.testing.assert_array_equal(jnp.searchsorted(a, v, side, method=method), np.searchsorted(a, v, side))
    perm = np.array([3, 0, 1, 4, 2], np.int32)  # argsort of b
    b = np.array([2.0, 5.0, 7.0, 1.0, 6.0], np.float32)
    got = check_staged(lambda b, p, v: jnp.searchsorted(b, v, sorter=p), b, perm, np.float32(5.5))
    assert got.shape == () and int(got) == np.searchsorted(b, 5.5, sorter=perm)
    with pytest.raises(ValueError, match="1-dimensional"):
        jnp.searchsorted(np.zeros((2, 2)), 1.0)


def test_unique_eager_matches_numpy():
    x = np.array([[3, 1, 2], [3, 1, 5]], np.int32)
    got = jnp.unique(x, return_index=True, return_inverse=True, return_counts=True)
    for g, w in zip(got, np.unique(x, return_index=True, return_inverse=True, return_counts=True)):
        np.testing.assert_array_equal(g, w)
        assert g.dtype == np.int32
    np.testing.assert_array_equal(jnp.unique(x, axis=1), np.unique(x, axis=1))


def test_unique_under_jit_without_size_explains_size():
    x = np.array([1, 2, 2], np.int32)
    with pytest.raises(omnistage.errors.ConcretizationTypeError, match="size="):
        omnistage.jit(lambda x: jnp.unique(x))(x)


@pytest.mark.parametrize("size", [1, 4, 6, 9])
def test_unique_with_size_pads_and_truncates_like_jax(size):
    x = np.array([3.0, 1.0, np.nan, 2.0, 3.0, 1.0, np.nan, -0.0, 0.0], np.float32)
    vals, index, inverse, counts = check_staged(
        lambda x: jnp.unique(x, return_index=True, return_inverse=True, return_counts=True, size=size), x)
    w_vals, w_index, w_inverse, w_counts = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    n = len(w_vals)
    k = min(size, n)
    np.testing.assert_array_equal(vals[:k], w_vals[:k])
    np.testing.assert_array_equal(index[:k], w_index[:k])
    np.testing.assert_array_equal(counts[:k], w_counts[:k])
    np.testing.assert_array_equal(inverse, w_inverse)
    np.testing.assert_array_equal(vals[k:], np.full(size - k, w_vals[0]))  # default fill: the minimum
    np.testing.assert_array_equal(counts[k:], 0)
    filled = check_staged(lambda x: jnp.unique(x, size=size, fill_value=-7.0), x)
    np.testing.assert_array_equal(filled[k:], -7.0)


def test_unique_rows_with_size():
    x = np.array([[1, 2], [0, 5], [1, 2], [0, 4]], np.int32)
    vals, counts = check_staged(lambda x: jnp.unique(x, axis=0, size=4, return_counts=True), x)
    w_vals, w_counts = np.unique(x, axis=0, return_counts=True)
    np.testing.assert_array_equal(vals[:3], w_vals)
    np.testing.assert_array_equal(counts, [*w_counts, 0])


def test_array_api_unique_forms():
    x = np.array([2, 1, 2], np.int32)
    r = jnp.unique_all(x)
    np.testing.assert_array_equal(r.values, [1, 2])
    np.testing.assert_array_equal(r.counts, [1, 2])
    np.testing.assert_array_equal(jnp.unique_counts(x, size=3).counts, [1, 2, 0])
    np.testing.assert_array_equal(jnp.unique_values(x), [1, 2])
