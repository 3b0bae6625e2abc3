"""jnp.ufunc / jnp.frompyfunc: call, reduce, accumulate, reduceat, outer and at against
NumPy's ufunc methods, under jit, grad and vmap, and JAX's errors."""
import numpy as np
import pytest

import omnistage as jax
import omnistage.numpy as jnp

add = jnp.frompyfunc(lambda a, b: a + b, 2, 1, identity=0)
maximum = jnp.frompyfunc(lambda a, b: jnp.maximum(a, b), 2, 1)
X = np.arange(12.0, dtype=np.float32).reshape(3, 4) * np.array([1, -1, 2, 0.5], np.float32)


def test_call_broadcasts_and_is_a_ufunc():
    assert isinstance(add, jnp.ufunc) and add.nin == 2 and add.nout == 1 and add.identity == 0
    np.testing.assert_array_equal(add(X, np.float32(1.0)), X + 1)
    np.testing.assert_array_equal(add(X, X[0]), X + X[0])
    assert repr(add) == "<jnp.ufunc '<lambda>'>" and add == jnp.frompyfunc(add._func, 2, 1, identity=0)
    with pytest.raises(TypeError, match="takes 2 arguments"):
        add(X)


@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_reduce_and_accumulate_match_numpy(axis):
    np.testing.assert_allclose(add.reduce(X, axis=axis), np.add.reduce(X, axis=axis), rtol=1e-6)
    np.testing.assert_allclose(maximum.reduce(X, axis=axis, keepdims=True),
                               np.maximum.reduce(X, axis=axis, keepdims=True))
    if axis is not None:
        np.testing.assert_allclose(add.accumulate(X, axis=axis), np.add.accumulate(X, axis=axis), rtol=1e-6)
        np.testing.assert_allclose(maximum.accumulate(X, axis=axis), np.maximum.accumulate(X, axis=axis))


def test_reduce_with_where_initial_and_errors():
    mask = X > 2
    np.testing.assert_allclose(add.reduce(X, where=mask), np.add.reduce(X, axis=0, where=mask), rtol=1e-6)
    np.testing.assert_allclose(maximum.reduce(X, axis=1, initial=100.0), np.maximum.reduce(X, axis=1, initial=100.0))
    with pytest.raises(ValueError, match="does not have an identity"):
        maximum.reduce(X, where=mask)
    with pytest.raises(ValueError, match="no identity"):
        maximum.reduce(np.zeros((0, 2), np.float32))
    neg = jnp.frompyfunc(lambda a: -a, 1, 1)
    with pytest.raises(ValueError, match="binary"):
        neg.reduce(X)


def test_reduceat_outer_and_at_match_numpy():
    v = np.arange(8.0, dtype=np.float32)
    for idx in ([0, 2, 5], [0, 5, 2], [3]):
        np.testing.assert_allclose(add.reduceat(v, np.array(idx)), np.add.reduceat(v, idx))
    a3, a2 = np.arange(3.0), np.arange(2.0)
    np.testing.assert_array_equal(add.outer(a3, a2), np.add.outer(a3, a2))
    assert add.outer(jnp.ones((1, 3)), jnp.ones((2, 4))).shape == (1, 3, 2, 4)
    want = np.zeros(5, np.float32)
    np.add.at(want, [0, 2, 2], 1.0)
    np.testing.assert_array_equal(add.at(jnp.zeros(5), jnp.array([0, 2, 2]), 1.0, inplace=False), want)
    want2 = X.copy()
    np.add.at(want2, (np.array([0, 2, 0]), slice(None)), np.float32(10.0))
    np.testing.assert_array_equal(add.at(X, (jnp.array([0, 2, 0]), slice(None)), 10.0, inplace=False), want2)
    with pytest.raises(NotImplementedError, match="inplace=False"):
        add.at(X, 0, 1.0)


def test_methods_under_jit_grad_and_vmap():
    ijit = lambda f: jax.jit(f, backend="interpreter")  # noqa: E731
    np.testing.assert_allclose(ijit(lambda a: add.accumulate(a, axis=1))(X), np.add.accumulate(X, axis=1), rtol=1e-6)
    np.testing.assert_allclose(ijit(lambda a: maximum.reduce(a, axis=1))(X), X.max(axis=1))
    np.testing.assert_allclose(jax.grad(lambda a: add.reduce(a * a, axis=None))(X), 2 * X, rtol=1e-6)
    np.testing.assert_allclose(jax.grad(lambda a: jnp.sum(add.accumulate(a)))(np.arange(4.0, dtype=np.float32)),
                               [4.0, 3.0, 2.0, 1.0])
    got = jax.vmap(lambda r: add.reduce(r))(X)
    np.testing.assert_allclose(got, [np.add.reduce(r) for r in X], rtol=1e-6)


def test_jax_builtin_ufuncs_are_ufunc_objects_with_fast_methods():
    for name in ("add", "multiply", "maximum", "minimum", "logical_and", "logical_or", "logical_xor", "subtract",
                 "bitwise_and", "bitwise_or", "bitwise_xor", "logaddexp", "logaddexp2", "negative"):
        assert isinstance(getattr(jnp, name), jnp.ufunc), name
    np.testing.assert_array_equal(jnp.add(X, X), X + X)
    np.testing.assert_allclose(jnp.add.reduce(X), X.sum(axis=0), rtol=1e-6)
    np.testing.assert_allclose(jnp.multiply.accumulate(X, axis=1), np.multiply.accumulate(X, axis=1), rtol=1e-6)
    np.testing.assert_array_equal(jnp.maximum.reduce(X, axis=1), X.max(axis=1))
    np.testing.assert_array_equal(jnp.logical_or.reduce(X > 5, axis=1), (X > 5).any(axis=1))
    np.testing.assert_array_equal(jnp.logical_and.reduce(X > -50, axis=None, initial=False), False)
    i3, i4 = np.arange(3), np.arange(4)
    np.testing.assert_array_equal(jnp.multiply.outer(i3, i4), np.multiply.outer(i3, i4))
    want = np.ones(6, np.float32)
    np.add.at(want, [1, 1, 4], 2.0)
    np.testing.assert_array_equal(jnp.add.at(jnp.ones(6), jnp.array([1, 1, 4]), 2.0, inplace=False), want)
    np.testing.assert_allclose(jnp.logaddexp.reduce(X, axis=1), np.logaddexp.reduce(X, axis=1), rtol=1e-5)
    np.testing.assert_array_equal(jnp.bitwise_or.accumulate(np.array([1, 2, 4, 1])), [1, 3, 7, 7])
    np.testing.assert_array_equal(jnp.subtract.outer(i3, i4), np.subtract.outer(i3, i4))
    import inspect

    assert list(inspect.signature(jnp.add).parameters) == ["x1", "x2"]
    np.testing.assert_allclose(jax.jit(lambda a: jnp.add.reduce(jnp.add(a, 1.0)), backend="interpreter")(X),
                               (X + 1).sum(axis=0), rtol=1e-6)
