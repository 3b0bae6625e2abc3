"""lax conveniences: associative_scan against cumulative reductions (odd and even lengths,
reverse, pytrees, jit), full/full_like/collapse/split/batch_matmul/scatter_sub, and the
<name>_p primitive objects."""
import numpy as np
import pytest

import omnistage as jax
import omnistage.numpy as jnp
from omnistage import lax

X = np.arange(1.0, 12.0)


@pytest.mark.parametrize("n", [1, 2, 5, 8, 11])
def test_associative_scan_matches_cumulative_ops(n):
    np.testing.assert_allclose(np.asarray(lax.associative_scan(lax.add, X[:n])), np.cumsum(X[:n]))
    np.testing.assert_allclose(np.asarray(lax.associative_scan(lax.mul, X[:n], reverse=True)), np.cumprod(X[:n][::-1])[::-1])


def test_associative_scan_pytrees_axis_and_jit():
    m = X[:10].reshape(2, 5)
    f = jax.jit(lambda v: lax.associative_scan(lax.max, v, axis=1))
    np.testing.assert_array_equal(np.asarray(f(m[:, ::-1])), np.maximum.accumulate(m[:, ::-1], axis=1))
    total, biggest = lax.associative_scan(lambda a, b: (a[0] + b[0], jnp.maximum(a[1], b[1])), (X, np.sin(X)))
    np.testing.assert_allclose(np.asarray(total), np.cumsum(X))
    np.testing.assert_allclose(np.asarray(biggest), np.maximum.accumulate(np.sin(X)))
    g = jax.grad(lambda v: jnp.sum(lax.associative_scan(lax.add, v) ** 2))(X[:6])
    np.testing.assert_allclose(np.asarray(g), [2 * np.cumsum(X[:6])[i:].sum() for i in range(6)])


def test_small_conveniences():
    np.testing.assert_array_equal(np.asarray(lax.full((2, 3), 1.5)), np.full((2, 3), 1.5, np.float32))
    assert lax.full_like(np.ones(2, np.int32), 3).dtype == np.int32
    assert lax.collapse(np.ones((2, 3, 4)), 1).shape == (2, 12)
    assert [p.shape for p in lax.split(np.ones(7), (3, 4))] == [(3,), (4,)]
    assert lax.batch_matmul(np.ones((2, 3, 4)), np.ones((2, 4, 5))).shape == (2, 3, 5)
    got = lax.scatter_sub(np.zeros(4), np.array([[1], [1], [3]]), np.ones(3))
    np.testing.assert_array_equal(np.asarray(got), [0, -2, 0, -1])
    assert lax.dtype(np.float32(1)) == np.float32 and lax.optimization_barrier((1, 2)) == (1, 2)
    assert lax.add_p.name == "add" and lax.fft_p.name == "fft"
