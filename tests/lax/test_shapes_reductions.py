"""lax reductions, cumulative and sort primitives: shape/dtype rules, NumPy implementations
(checked against the abstract eval by the interpreter), staging, and strict-typing errors."""
import numpy as np
import pytest

import omnistage
from omnistage import lax
from tests.helpers import check_staged


@pytest.mark.parametrize("name,np_fn", [("reduce_sum", np.sum), ("reduce_prod", np.prod), ("reduce_max", np.max), ("reduce_min", np.min)])
@pytest.mark.parametrize("dtype", ["float32", "int32", "complex64"])
def test_reductions_keep_dtype(name, np_fn, dtype):
    x = (np.arange(24).reshape(2, 3, 4) % 5 - 2).astype(dtype)
    for axes in [(0,), (1, 2), (0, 1, 2)]:
        got = check_staged(lambda x: getattr(lax, name)(x, axes), x)
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_allclose(got, np_fn(x, axis=axes))


def test_reduce_max_of_empty_is_identity_and_bool_reductions():
    got = check_staged(lambda x: lax.reduce_max(x, (0,)), np.zeros((0, 2), np.float32))
    np.testing.assert_array_equal(got, [-np.inf, -np.inf])
    got = check_staged(lambda x: lax.reduce_min(x, (0,)), np.zeros((0, 2), np.int32))
    np.testing.assert_array_equal(got, [np.iinfo(np.int32).max] * 2)
    b = np.array([[True, False], [True, True]])
    np.testing.assert_array_equal(check_staged(lambda b: lax.reduce_and(b, (1,)), b), [False, True])
    np.testing.assert_array_equal(check_staged(lambda b: lax.reduce_max(b, (0,)), b), [True, True])


def test_argmax_index_dtype_and_complex():
    x = np.array([[1 + 2j, 1 + 3j], [0 + 9j, np.nan]], np.complex64)
    got = check_staged(lambda x: lax.argmax(x, 1, np.int32), x)
    np.testing.assert_array_equal(got, [1, 1])
    with pytest.raises(ValueError, match="empty"):
        lax.argmin(np.zeros((2, 0)), 1, np.int32)


def test_reduction_rejects_bad_axes():
    with pytest.raises(ValueError, match="out of bounds"):
        lax.reduce_sum(np.zeros((2, 3), np.float32), (2,))


@pytest.mark.parametrize("num_keys", [1, 2])
def test_multi_operand_sort_is_lexicographic_and_stable(num_keys):
    k0 = np.array([2, 1, 2, 1, 0], np.int32)
    k1 = np.array([0.5, np.nan, -1.0, 0.0, 3.0], np.float32)
    v = np.arange(5, dtype=np.int32)
    got = check_staged(lambda a, b, c: lax.sort((a, b, c), 0, True, num_keys), k0, k1, v)
    order = np.lexsort((k1, k0)) if num_keys == 2 else np.argsort(k0, kind="stable")
    for g, w in zip(got, (k0[order], k1[order], v[order])):
        np.testing.assert_array_equal(g, w)


def test_sort_along_dimension_and_sort_key_val():
    x = np.array([[3.0, -0.0, np.nan], [0.0, np.inf, -np.inf]], np.float32)
    np.testing.assert_array_equal(check_staged(lambda x: lax.sort(x, 0), x), np.sort(x, 0))
    k, v = check_staged(lambda x: lax.sort_key_val(x, -x, 1), x)
    np.testing.assert_array_equal(k, np.sort(x, 1))
    np.testing.assert_array_equal(v, -np.sort(x, 1))


def test_sort_rejects_mismatched_shapes_and_bad_num_keys():
    with pytest.raises(TypeError, match=r"same shape.*\(2,\), \(3,\)"):
        lax.sort((np.zeros(2), np.zeros(3)))
    with pytest.raises(ValueError, match="num_keys"):
        lax.sort((np.zeros(2),), num_keys=2)
    with pytest.raises(ValueError, match="rank >= 1"):
        lax.sort(np.float32(1))


def test_top_k_prefers_lower_index_on_ties():
    x = np.array([[1, 3, 3, 2], [5, 5, 5, 0]], np.int32)
    vals, idx = check_staged(lambda x: lax.top_k(x, 3), x)
    np.testing.assert_array_equal(vals, [[3, 3, 2], [5, 5, 5]])
    np.testing.assert_array_equal(idx, [[1, 2, 3], [0, 1, 2]])
    assert idx.dtype == np.int32


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "cummax", "cummin"])
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_cumulative_keeps_dtype_and_stages(name, dtype):
    x = np.array([[2, 1, 3], [1, 4, 0]], dtype)
    np_acc = {"cumsum": np.add, "cumprod": np.multiply, "cummax": np.maximum, "cummin": np.minimum}[name]
    for axis in (0, 1, -1):
        got = check_staged(lambda x: getattr(lax, name)(x, axis=axis), x)
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(got, np_acc.accumulate(x, axis=axis))
    program = str(omnistage.make_jaxpr(lambda x: getattr(lax, name)(x, axis=0, reverse=True))(x))
    assert f"{name}(x, axis=0, reverse=True)" in program


def test_cumulative_of_size_zero_and_rank_zero():
    got = check_staged(lambda x: lax.cumsum(x, 1), np.zeros((2, 0), np.float32))
    assert got.shape == (2, 0)
    with pytest.raises(ValueError, match="rank >= 1"):
        lax.cumsum(np.float32(1))
