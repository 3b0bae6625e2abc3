"""The NumPy names added for JAX parity (index tricks, polynomials, histograms, windows,
calculus and statistics helpers, set operations, vectorize and friends, Array API helpers):
each against NumPy on the same input, in 64 bits; traced use where JAX supports it."""
import numpy as np
import pytest

import omnistage as jax
import omnistage.numpy as jnp

RS = np.random.RandomState(0)
P = np.array([2.0, -3, 0.5, 4])
Q = np.array([1.0, 2.0])
X = RS.randn(7)
XP = np.sort(RS.randn(6))
FP = RS.randn(6)
XS = np.linspace(-3, 3, 25)
BINS = np.array([-1.0, 0, 0.5, 2])
D = RS.randn(100)
Y2 = RS.randn(4, 6)
XX = np.cumsum(RS.rand(6))
M = RS.randn(3, 10)
A = np.arange(12.0).reshape(3, 4)
SA, SB = np.array([5, 1, 3, 3, 7, 9, 1]), np.array([3, 4, 1, 10])

CASES = {
    "polyval": (lambda m: m.polyval(P, X), None), "polyadd": (lambda m: m.polyadd(P, Q), None),
    "polysub": (lambda m: m.polysub(Q, P), None), "polymul": (lambda m: m.polymul(P, Q), None),
    "polyder": (lambda m: m.polyder(P, 2), None), "polyint": (lambda m: m.polyint(P, 2, [1.0, 2.0]), None),
    "polydiv": (lambda m: m.polydiv(P, Q), None), "poly": (lambda m: m.poly(np.array([1.0, 2.0, 3.0])), None),
    "roots": (lambda m: np.sort_complex(np.asarray(m.roots(np.array([0.0, 1, -6, 11, -6, 0])))), None),
    "polyfit": (lambda m: m.polyfit(X, 3 * X ** 2 - X + 1, 2), None), "vander": (lambda m: m.vander(X, 4), None),
    "vander_increasing": (lambda m: m.vander(X, 3, True), None),
    "interp": (lambda m: m.interp(XS, XP, FP), None), "interp_left_right": (lambda m: m.interp(XS, XP, FP, left=-9, right=9), None),
    "interp_period": (lambda m: m.interp(XS, XP, FP, period=2.0), None),
    "digitize": (lambda m: m.digitize(XS, BINS), None), "digitize_right": (lambda m: m.digitize(XS, BINS, right=True), None),
    "digitize_decreasing": (lambda m: m.digitize(XS, BINS[::-1]), None),
    "bincount": (lambda m: m.bincount(np.array([0, 1, 1, 3, 5]), np.arange(5.0), minlength=8), None),
    "histogram": (lambda m: m.histogram(D, 7), None), "histogram_density": (lambda m: m.histogram(D, 5, range=(-1, 1), density=True), None),
    "histogram_edges": (lambda m: m.histogram(D, BINS), None), "histogram2d": (lambda m: m.histogram2d(D[:50], D[50:], 4), None),
    "histogramdd": (lambda m: (lambda r: [r[0]] + list(r[1]))(m.histogramdd(D[:60].reshape(20, 3), (2, 3, 4))), None),
    "bartlett": (lambda m: m.bartlett(9), None), "blackman": (lambda m: m.blackman(9), None),
    "hamming": (lambda m: m.hamming(9), None), "hanning": (lambda m: m.hanning(9), None), "kaiser": (lambda m: m.kaiser(9, 3.0), None),
    "trapezoid": (lambda m: m.trapezoid(Y2, XX), None), "trapezoid_dx": (lambda m: m.trapezoid(Y2, dx=0.3, axis=0), None),
    "gradient": (lambda m: m.gradient(Y2), None), "gradient_coordinates": (lambda m: m.gradient(Y2, XX, axis=1), None),
    "unwrap": (lambda m: m.unwrap(np.cumsum(X * 3)), None), "unwrap_period": (lambda m: m.unwrap(np.cumsum(X * 3), discont=4.0, period=5.0), None),
    "cov": (lambda m: m.cov(M), None), "cov_xy_bias": (lambda m: m.cov(M[0], M[1], bias=True), None),
    "cov_weights": (lambda m: m.cov(M, fweights=np.array([1, 2, 1, 3, 1, 1, 2, 1, 1, 1]), aweights=np.linspace(0.1, 1, 10)), None),
    "corrcoef": (lambda m: m.corrcoef(M), None),
    "r_": (lambda m: m.r_[1:4, 0, np.array([7, 8])], None), "c_": (lambda m: m.c_[np.array([1, 2]), np.array([3, 4])], None),
    "r_directive": (lambda m: m.r_["0,2", [1, 2], [3, 4]], None), "mgrid": (lambda m: m.mgrid[0:2, 0:3], None),
    "ogrid": (lambda m: m.ogrid[0:2, 0:3], None), "tril_indices": (lambda m: m.tril_indices(4, -1), None),
    "triu_indices_from": (lambda m: m.triu_indices_from(A, 1), None), "diag_indices": (lambda m: m.diag_indices(3), None),
    "unravel_index": (lambda m: m.unravel_index(np.array([5, 7]), (3, 4)), None),
    "ravel_multi_index": (lambda m: m.ravel_multi_index((np.array([1, 2]), np.array([1, 3])), (3, 4)), None),
    "delete": (lambda m: m.delete(A, [0, 2], axis=1), None), "insert": (lambda m: m.insert(A, 1, 9.0, axis=1), None),
    "insert_many": (lambda m: m.insert(A, [1, 3], 9.0, axis=1), None), "insert_flat": (lambda m: m.insert(np.arange(5.0), 2, [7.0, 8.0]), None),
    "append": (lambda m: m.append(A, A, axis=0), None),
    "block": (lambda m: m.block([[np.ones((2, 2)), np.zeros((2, 1))], [np.zeros((1, 2)), np.ones((1, 1))]]), None),
    "isin": (lambda m: m.isin(SA, SB), None), "intersect1d": (lambda m: m.intersect1d(SA, SB), None),
    "setdiff1d": (lambda m: m.setdiff1d(SA, SB), None), "union1d": (lambda m: m.union1d(SA, SB), None),
    "setxor1d": (lambda m: m.setxor1d(SA, SB), None),
    "apply_along_axis": (lambda m: m.apply_along_axis(lambda r: r.sum() * r[0], 1, A), None),
    "apply_over_axes": (lambda m: m.apply_over_axes(m.sum, A, [0, 1]), None),
    "piecewise": (lambda m: m.piecewise(XS, [XS < 0, XS >= 1], [lambda v: -v, lambda v: v ** 2, 0.5]), None),
    "packbits": (lambda m: m.packbits(np.array([1, 0, 1, 1, 0, 0, 0, 1, 1])), None),
    "unpackbits": (lambda m: m.unpackbits(np.array([177, 128], np.uint8)), None),
    "resize": (lambda m: m.resize(np.arange(3), (2, 4)), None), "trim_zeros": (lambda m: m.trim_zeros(np.array([0, 0, 1, 2, 0])), None),
    "fromfunction": (lambda m: m.fromfunction(lambda i, j: i + 2 * j, (2, 3)), None),
}


def _leaves(x):
    if isinstance(x, (tuple, list)):
        return [leaf for v in x for leaf in _leaves(v)]
    return [np.asarray(x)]


@pytest.mark.parametrize("name", CASES)
def test_matches_numpy(name, x64):
    fun, _ = CASES[name]
    ours, theirs = _leaves(fun(jnp)), _leaves(fun(np))
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a.shape == b.shape, (a.shape, b.shape)
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_inplace_functions_return_new_arrays():
    np.testing.assert_array_equal(np.asarray(jnp.fill_diagonal(np.zeros((3, 3)), 5.0, inplace=False)), np.eye(3) * 5)
    got = jnp.put_along_axis(A, np.array([[0], [1], [2]]), -1.0, axis=1, inplace=False)
    want = A.copy()
    np.put_along_axis(want, np.array([[0], [1], [2]]), -1.0, axis=1)
    np.testing.assert_array_equal(np.asarray(got), want)
    want = np.arange(5.0)
    np.put(want, [0, 2], [9.0, 8.0])
    np.testing.assert_array_equal(np.asarray(jnp.put(np.arange(5.0), np.array([0, 2]), np.array([9.0, 8.0]), inplace=False)), want)
    want = np.arange(6.0)
    np.place(want, np.arange(6) % 2 == 0, [-1.0, -2.0])
    np.testing.assert_array_equal(np.asarray(jnp.place(np.arange(6.0), np.arange(6) % 2 == 0, np.array([-1.0, -2.0]), inplace=False)), want)
    with pytest.raises(ValueError, match="inplace=False"):
        jnp.put(np.arange(3.0), 0, 1.0)


def test_set_operations_with_size_trace():
    f = jax.jit(lambda a, b: (jnp.setdiff1d(a, b, size=4, fill_value=-1), jnp.intersect1d(a, b, size=3), jnp.union1d(a, b, size=8)))
    diff, inter, union = f(SA, SB)
    np.testing.assert_array_equal(np.asarray(diff), [5, 7, 9, -1])
    np.testing.assert_array_equal(np.asarray(inter), [1, 3, 1])
    np.testing.assert_array_equal(np.asarray(union), [1, 3, 4, 5, 7, 9, 10, 1])


def test_bincount_of_a_traced_array_needs_length():
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda k: jnp.bincount(k, length=6))(np.array([0, 1, 1, 5]))), [1, 2, 0, 0, 0, 1])
    with pytest.raises(ValueError, match="length="):
        jax.jit(lambda k: jnp.bincount(k))(np.array([0, 1]))


def test_vectorize_broadcasts_and_keeps_core_dimensions():
    f = jnp.vectorize(lambda x, y: x * 2 + y)
    np.testing.assert_array_equal(np.asarray(f(np.arange(3.0), np.ones((2, 1)))), np.arange(3.0) * 2 + np.ones((2, 1)))
    g = jnp.vectorize(lambda u, v: jnp.dot(u, v), signature="(n),(n)->()")
    np.testing.assert_array_equal(np.asarray(g(np.ones((4, 3)), np.arange(3.0))), [3.0] * 4)


def test_array_api_helpers():
    assert jnp.__array_api_version__ == "2024.12"
    info = jnp.__array_namespace_info__()
    assert info.default_dtypes()["real floating"] == np.float32 and "float32" in info.dtypes()
    assert set(info.dtypes(kind="integral")) >= {"int8", "int32", "uint8"}
    assert jnp.isdtype(jnp.float32, "real floating") and jnp.isdtype(np.int8, ("bool", "signed integer"))
    assert not jnp.isdtype(np.uint8, "signed integer") and jnp.isdtype(np.float32, np.float32)
    assert jnp.can_cast(jnp.int32, jnp.float64) and not jnp.can_cast(jnp.float64, jnp.int32)
    assert jnp.astype(np.arange(3), jnp.float32).dtype == np.float32
    parts = jnp.unstack(A, axis=1)
    assert len(parts) == 4 and np.array_equal(np.asarray(parts[1]), A[:, 1])
    np.testing.assert_array_equal(np.asarray(jnp.from_dlpack(np.arange(4.0))), np.arange(4.0))
    assert jnp.isscalar(3.0) and not jnp.isscalar(np.ones(2))


def test_dlpack_export_and_to_device():
    x = jnp.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(np.from_dlpack(x), np.arange(6.0).reshape(2, 3))  # a pre-1.0 consumer: a copy
    capsule = x.__dlpack__(max_version=(1, 0))
    assert capsule is not None
    assert x.to_device(x.device) is x and x.to_device(None) is x
    with pytest.raises(ValueError, match="device_put"):
        x.to_device("not a device")
