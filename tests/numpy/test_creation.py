"""jnp creation functions vs NumPy with JAX's dtypes, staged under jit (omnistaging)."""
import numpy as np
import pytest

import omnistage
import omnistage.numpy as jnp
from tests.helpers import check_staged


@pytest.mark.parametrize("args,dtype", [
    ((5,), None), ((5.0,), None), ((2, 9, 3), None), ((10, 0, -3), None), ((1, 2.5, 0.5), None),
    ((0, 1, 0.1), None), ((-1.5, 3.7, 0.3), None), ((3, 1), None), ((0, 5), "float32"), ((0.5, 5), "int32"),
])
def test_arange_matches_numpy_values_and_jax_dtype(args, dtype):
    got = check_staged(lambda: jnp.arange(*args, dtype=dtype))
    want_dtype = np.dtype(dtype) if dtype else (np.dtype("float32") if any(isinstance(a, float) for a in args) else np.dtype("int32"))
    assert got.dtype == want_dtype
    np.testing.assert_array_equal(got, np.arange(*args, dtype=want_dtype))


def test_arange_is_staged_and_needs_static_bounds():
    program = omnistage.make_jaxpr(lambda: jnp.arange(2, 9, 3))()
    assert "iota" in str(program)
    with pytest.raises(omnistage.errors.ConcretizationTypeError, match="arange"):
        omnistage.jit(lambda n: jnp.arange(n))(np.int32(3))
    with pytest.raises(ValueError, match="step must be nonzero"):
        jnp.arange(0, 3, 0)


@pytest.mark.parametrize("kw", [{}, {"num": 5}, {"num": 5, "endpoint": False}, {"num": 1}, {"num": 0}, {"num": 7, "dtype": "int32"}, {"num": 4, "dtype": "complex64"}])
def test_linspace_matches_numpy(kw):
    got = check_staged(lambda: jnp.linspace(-2, 11, **kw))
    want = np.linspace(-2, 11, **kw)
    assert got.dtype == (np.dtype(kw["dtype"]) if "dtype" in kw else np.float32)
    np.testing.assert_allclose(got, want.astype(got.dtype), rtol=1e-6, atol=1e-6)


def test_linspace_with_traced_array_endpoints_axis_and_retstep():
    start, stop = np.array([0.0, 1.0], np.float32), np.array([[5.0], [2.0]], np.float32)
    got = check_staged(lambda a, b: jnp.linspace(a, b, 4, axis=-1), start, stop)
    np.testing.assert_allclose(got, np.linspace(start, stop, 4, axis=-1), rtol=1e-6)
    samples, step = check_staged(lambda a: jnp.linspace(a, 1.0, 5, retstep=True), np.float32(0))
    np.testing.assert_allclose(step, 0.25)
    with pytest.raises(ValueError, match="non-negative"):
        jnp.linspace(0, 1, -1)


def test_logspace_and_geomspace_match_numpy():
    np.testing.assert_allclose(check_staged(lambda: jnp.logspace(0, 3, 4)), np.logspace(0, 3, 4), rtol=1e-5)
    np.testing.assert_allclose(check_staged(lambda: jnp.logspace(0, 3, 4, base=2.0, endpoint=False)), np.logspace(0, 3, 4, base=2.0, endpoint=False), rtol=1e-5)
    np.testing.assert_allclose(check_staged(lambda: jnp.geomspace(1, 1000, 4)), np.geomspace(1, 1000, 4), rtol=1e-5)
    np.testing.assert_allclose(check_staged(lambda: jnp.geomspace(-1, -1000, 4)), np.geomspace(-1, -1000, 4), rtol=1e-5)
    a = np.array([1.0, 2.0], np.float32)
    np.testing.assert_allclose(check_staged(lambda a: jnp.geomspace(a, 64.0, 3, axis=1), a), np.geomspace(a, 64.0, 3, axis=1), rtol=1e-5)


@pytest.mark.parametrize("N,M,k", [(3, None, 0), (3, 5, 1), (4, 2, -1), (0, 3, 0)])
def test_tri_eye_identity_match_numpy(N, M, k):
    got = check_staged(lambda: jnp.tri(N, M, k))
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, np.tri(N, M, k))
    np.testing.assert_array_equal(check_staged(lambda: jnp.eye(N, M, k, dtype=jnp.int32)), np.eye(N, M, k, dtype=np.int32))
    np.testing.assert_array_equal(check_staged(lambda: jnp.tri(N, M, k, dtype=bool)), np.tri(N, M, k, dtype=bool))
    assert jnp.identity(3, dtype=bool).dtype == np.bool_


@pytest.mark.parametrize("fn,args,dtype", [
    (jnp.zeros, ((2, 3),), np.float32), (jnp.ones, (4,), np.float32), (jnp.full, ((2,), 7), np.int32),
    (jnp.full, ((2,), 7.5), np.float32), (jnp.full, ((), True), np.bool_), (jnp.full, ((2,), np.int8(3)), np.int8),
    (jnp.zeros, ((0, 2), jnp.complex64), np.complex64), (jnp.empty, ((2,),), np.float32),
])
def test_fill_constructors_dtype_and_staging(fn, args, dtype):
    got = check_staged(lambda: fn(*args))
    assert got.dtype == dtype
    assert str(omnistage.make_jaxpr(lambda: fn(*args))()).count("= broadcast_in_dim(") == 1


def test_like_constructors_follow_input():
    x = np.arange(6, dtype=np.int64).reshape(2, 3)
    for fn, v in [(jnp.zeros_like, 0), (jnp.ones_like, 1)]:
        got = check_staged(lambda x: fn(x), x)
        assert got.dtype == np.int32 and got.shape == (2, 3) and (np.asarray(got) == v).all()
    got = check_staged(lambda x: jnp.full_like(x, 2.5, dtype=jnp.float32, shape=(4,)), x)
    np.testing.assert_array_equal(got, np.full(4, 2.5, np.float32))


def test_array_of_nested_lists_uses_jax_promotion():
    assert jnp.array([1, 2.0]).dtype == np.float32
    assert jnp.array([[1, 2], [3, 4]]).dtype == np.int32
    assert jnp.array([np.int8(1), 2]).dtype == np.int8
    assert jnp.array([[True, False]]).dtype == np.bool_
    assert jnp.array([1 + 2j]).dtype == np.complex64
    assert jnp.array(np.float64(2)).dtype == np.float32
    assert jnp.array([], dtype=jnp.int32).shape == (0,)
    got = check_staged(lambda a: jnp.array([[a, 1.0], [2.0, a]]), np.float32(3))
    np.testing.assert_array_equal(got, [[3, 1], [2, 3]])
    assert jnp.asarray(np.arange(3), dtype=jnp.float32).dtype == np.float32


def test_copy_and_frombuffer():
    x = jnp.arange(3)
    y = jnp.copy(x)
    np.testing.assert_array_equal(y, x)
    got = jnp.frombuffer(np.array([1.0, 2.0], np.float32).tobytes(), dtype=np.float32)
    np.testing.assert_array_equal(got, [1.0, 2.0])
    # the method too, on traced values as on jax.Array (jit, grad, vmap)
    got = check_staged(lambda a: a.T.copy() * 2.0, np.ones((2, 3), np.float32))
    np.testing.assert_array_equal(got, np.full((3, 2), 2.0, np.float32))
    np.testing.assert_array_equal(omnistage.grad(lambda b: (b.copy() ** 2).sum())(np.arange(3.0, dtype=np.float32)), [0, 2, 4])
    np.testing.assert_array_equal(omnistage.vmap(lambda b: b.copy() + 1)(np.ones((2, 3), np.float32)), np.full((2, 3), 2.0))


def test_eye_with_a_diagonal_far_outside_the_matrix():
    # array-api-tests drew k = 2**31: it does not fit the int32 iota, and the diagonal is empty
    for n, m, k in [(0, None, 2**31), (3, 4, 2**40), (3, 4, -2**40), (4, 3, -3), (4, 3, 3), (3, 4, -1)]:
        np.testing.assert_array_equal(np.asarray(jnp.eye(n, m, k)), np.eye(n, m, k))
