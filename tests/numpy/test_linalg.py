"""jnp.linalg against numpy.linalg: values and JAX's dtypes for float32, complex64 and (x64)
float64, batched shapes, the JAX conventions for bad values (no exceptions for singular or
non-positive-definite input) and clear errors for bad shapes. Functions go through
`check_staged` (eager == jit == printed program == checked interpreter)."""
import numpy as np
import pytest

import omnistage
import omnistage.numpy as jnp
from tests.helpers import check_staged

L = jnp.linalg
DTYPES = ["float32", "complex64"]


def rand(rng, shape, dtype="float32"):
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def well_conditioned(rng, shape, dtype="float32"):
    return (rand(rng, shape, dtype) + 3 * np.eye(shape[-1])).astype(dtype)


def hermitian_pd(rng, shape, dtype):
    a = rand(rng, shape, dtype)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def tol(dtype):
    return dict(rtol=1e-4, atol=1e-4) if np.dtype(dtype) in (np.float32, np.complex64) else dict(rtol=1e-10, atol=1e-10)


def staged(fn, *args, **kw):
    """check_staged through a lambda (a program named like a primitive, e.g. `svd`, would
    shadow it when run; reported to staging)."""
    return check_staged(lambda *xs: fn(*xs, **kw), *args, **tol(np.asarray(args[0]).dtype))


def close(got, want, dtype, **kw):
    got = np.asarray(got)
    assert got.dtype == np.dtype(dtype), (got.dtype, dtype)
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    np.testing.assert_allclose(got, want, **(kw or tol(dtype)))


def test_seed_example_eigvals_modulus_is_sqrt2():
    out = jnp.max(jnp.abs(L.eigvals(jnp.array([[1.0, -1.0], [1.0, 1.0]]))))
    np.testing.assert_allclose(np.asarray(out), np.sqrt(2), rtol=1e-6)
    assert out.dtype == np.float32


# --- solves, inverse, determinants -------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_solve_batched_matrix_and_vector_right_hand_sides(rng, dtype):
    a = well_conditioned(rng, (3, 4, 4), dtype)
    b = rand(rng, (3, 4, 2), dtype)
    close(staged(L.solve, a, b), np.linalg.solve(a, b), dtype)
    close(staged(L.solve, a[0], b[0, :, 0]), np.linalg.solve(a[0], b[0, :, 0]), dtype)
    close(staged(L.solve, a, b[0]), np.linalg.solve(a, b[0]), dtype)  # batch broadcast


def test_solve_needs_row_pivoting(rng):
    a = np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 3.0], [4.0, -3.0, 8.0]], "float32")
    b = np.array([1.0, 2.0, 3.0], "float32")
    close(staged(L.solve, a, b), np.linalg.solve(a, b), "float32")


def test_solve_promotes_integers_to_float32():
    out = L.solve(np.array([[2, 0], [0, 4]]), np.array([2, 2]))
    close(out, [1.0, 0.5], "float32")


def test_solve_and_inv_float64_under_x64(x64, rng):
    a = well_conditioned(rng, (2, 3, 3), "float64")
    b = rand(rng, (2, 3, 1), "float64")
    close(staged(L.solve, a, b), np.linalg.solve(a, b), "float64")
    close(staged(L.inv, a), np.linalg.inv(a), "float64")
    close(staged(L.det, a), np.linalg.det(a), "float64")


def test_solve_shape_errors_name_both_shapes():
    with pytest.raises(ValueError, match=r"\(3, 3\).*\(4,\)"):
        L.solve(jnp.eye(3), jnp.ones(4))
    with pytest.raises(ValueError, match=r"square.*\(2, 3\)"):
        L.solve(jnp.ones((2, 3)), jnp.ones(2))


@pytest.mark.parametrize("dtype", DTYPES)
def test_inv_det_slogdet_batched(rng, dtype):
    a = rand(rng, (3, 4, 4), dtype)
    close(staged(L.inv, a), np.linalg.inv(a), dtype, rtol=1e-3, atol=1e-3)
    close(staged(L.det, a), np.linalg.det(a), dtype)
    sign, logdet = staged(L.slogdet, a)
    want_sign, want_logdet = np.linalg.slogdet(a)
    close(sign, want_sign, dtype)
    close(logdet, want_logdet, "float32")


def test_det_and_slogdet_of_singular_and_empty_matrices():
    singular = jnp.array([[1.0, 2.0], [2.0, 4.0]])
    assert float(L.det(singular)) == 0
    sign, logdet = L.slogdet(singular)
    assert float(sign) == 0 and float(logdet) == -np.inf
    assert float(L.det(jnp.zeros((0, 0)))) == 1
    swap = jnp.array([[0.0, 1.0], [1.0, 0.0]])
    assert float(L.det(swap)) == -1


def test_inv_of_singular_matrix_gives_non_finite_values_not_an_error():
    out = np.asarray(L.inv(jnp.array([[1.0, 2.0], [2.0, 4.0]])))
    assert not np.isfinite(out).all()


def test_non_square_input_errors_say_rows_and_columns():
    for fn in (L.inv, L.det, L.slogdet, L.cholesky, L.eigh, L.eig, L.eigvals, L.eigvalsh):
        with pytest.raises(ValueError, match=r"square matrices.*\(2, 3\).*2 rows, 3 columns"):
            fn(jnp.ones((2, 3)))
    with pytest.raises(ValueError, match="rank >= 2"):
        L.svd(jnp.ones(3))


# --- decompositions ----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_cholesky_lower_and_upper(rng, dtype):
    a = hermitian_pd(rng, (2, 4, 4), dtype)
    close(staged(L.cholesky, a), np.linalg.cholesky(a), dtype)
    close(staged(L.cholesky, a, upper=True), np.linalg.cholesky(a, upper=True), dtype)


def test_cholesky_of_non_positive_definite_matrix_is_nan():
    out = np.asarray(L.cholesky(jnp.array([[1.0, 2.0], [2.0, 1.0]])))
    assert np.isnan(out[np.tril_indices(2)]).all()


@pytest.mark.parametrize("dtype", DTYPES)
def test_eigh_and_eigvalsh(rng, dtype):
    a = hermitian_pd(rng, (2, 4, 4), dtype)
    w, v = staged(L.eigh, a)
    want_w, want_v = np.linalg.eigh(a)
    close(w, want_w, "float32")
    close(np.abs(v), np.abs(want_v), "float32", rtol=1e-3, atol=1e-3)
    close(staged(L.eigvalsh, a, UPLO="U"), np.linalg.eigvalsh(a, "U"), "float32")
    result = L.eigh(a)
    assert result.eigenvalues is not None and result.eigenvectors is not None


def test_eigh_uplo_selects_triangle(rng):
    a = hermitian_pd(rng, (3, 3), "float32")
    lower_only = np.tril(a) + np.triu(rand(rng, (3, 3)), 1)
    w = L.eigh(lower_only, UPLO="L", symmetrize_input=False).eigenvalues
    close(w, np.linalg.eigvalsh(a), "float32")
    with pytest.raises(ValueError, match="UPLO"):
        L.eigh(a, UPLO="X")


@pytest.mark.parametrize("dtype", DTYPES)
def test_eig_is_complex_and_matches_numpy(rng, dtype):
    a = rand(rng, (2, 4, 4), dtype)
    w, v = staged(L.eig, a)
    want_w, want_v = np.linalg.eig(a)
    close(w, want_w, "complex64")
    close(v, want_v, "complex64", rtol=1e-3, atol=1e-3)
    close(staged(L.eigvals, a), want_w, "complex64")


def test_eig_float64_input_gives_complex128_under_x64(x64, rng):
    a = rand(rng, (3, 3), "float64")
    close(L.eigvals(a), np.linalg.eigvals(a), "complex128")


@pytest.mark.parametrize("scale", [1e-150, 1e150, 1e-300])
def test_eig_of_tiny_and_huge_matrices_under_x64(x64, rng, scale):
    # the LAPACK SciPy bundles here forgets to undo ?geev's scaling of such matrices
    a = rand(rng, (2, 4, 4), "float64") * scale
    w, v = omnistage.jit(L.eig)(a)
    w, v = np.asarray(w), np.asarray(v)
    want = np.linalg.eigvals(a)
    for k in range(2):
        np.testing.assert_allclose(np.sort_complex(w[k]), np.sort_complex(want[k]), rtol=1e-12, atol=0)
        assert np.max(np.abs(a[k] @ v[k] - v[k] * w[k])) <= 1e-13 * np.max(np.abs(w[k]))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(2, 5, 3), (3, 6)])
def test_svd_full_reduced_and_values_only(rng, dtype, shape):
    a = rand(rng, shape, dtype)
    for full in (True, False):
        u, s, vh = staged(L.svd, a, full_matrices=full)
        want_u, want_s, want_vh = np.linalg.svd(a, full_matrices=full)
        assert np.shape(u) == want_u.shape and np.shape(vh) == want_vh.shape
        close(s, want_s, "float32")
        k = min(shape[-2:])
        recon = (np.asarray(u)[..., :k] * np.asarray(s)[..., None, :]) @ np.asarray(vh)[..., :k, :]
        np.testing.assert_allclose(recon, a, rtol=1e-4, atol=1e-4)
    close(staged(L.svd, a, compute_uv=False), np.linalg.svd(a, compute_uv=False), "float32")
    close(L.svdvals(a), np.linalg.svd(a, compute_uv=False), "float32")


def test_svd_hermitian_flag_gives_the_same_singular_values(rng):
    a = hermitian_pd(rng, (4, 4), "float32") - 6 * np.eye(4, dtype="float32")
    close(L.svd(a, hermitian=True, compute_uv=False), np.linalg.svd(a, hermitian=True, compute_uv=False), "float32")


@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr_modes(rng, mode):
    a = rand(rng, (2, 5, 3), "complex64")
    got = staged(L.qr, a, mode=mode)
    want = np.linalg.qr(a, mode=mode)
    if mode == "r":
        close(got, want, "complex64")
    else:
        close(got.Q, want.Q, "complex64")
        close(got.R, want.R, "complex64")


def test_qr_rejects_unknown_mode():
    with pytest.raises(ValueError, match="raw"):
        L.qr(jnp.eye(3), mode="raw")


# --- derived functions -------------------------------------------------------------------


@pytest.mark.parametrize("n", [0, 1, 2, 5, -1, -3])
def test_matrix_power(rng, n):
    a = well_conditioned(rng, (2, 3, 3))
    close(staged(L.matrix_power, a, n=n), np.linalg.matrix_power(a, n), "float32", rtol=1e-3, atol=1e-3)


def test_matrix_power_keeps_integer_dtype_and_rejects_float_exponent():
    a = np.array([[1, 1], [1, 0]], "int32")
    close(L.matrix_power(a, 10), np.linalg.matrix_power(a, 10), "int32")
    with pytest.raises(TypeError, match="integer"):
        L.matrix_power(a, 1.5)


@pytest.mark.parametrize("dtype", DTYPES)
def test_pinv_and_matrix_rank(rng, dtype):
    a = rand(rng, (2, 5, 3), dtype)
    close(staged(L.pinv, a), np.linalg.pinv(a), dtype, rtol=1e-3, atol=1e-3)
    low_rank = (rand(rng, (5, 2), dtype) @ rand(rng, (2, 4), dtype)).astype(dtype)
    close(staged(L.matrix_rank, low_rank), np.linalg.matrix_rank(low_rank), "int32")
    close(L.matrix_rank(a), np.linalg.matrix_rank(a), "int32")
    close(L.matrix_rank(low_rank, tol=1e-3), np.linalg.matrix_rank(low_rank, tol=1e-3), "int32")


def test_lstsq_matches_numpy(rng):
    a, b = rand(rng, (6, 3)), rand(rng, (6, 2))
    x, resid, rank, s = L.lstsq(a, b)
    want = np.linalg.lstsq(a, b)
    close(x, want[0], "float32")
    close(resid, want[1], "float32", rtol=1e-3, atol=1e-3)
    assert int(rank) == want[2]
    close(s, want[3], "float32")
    x1 = staged(lambda p, q: L.lstsq(p, q)[0], a, b[:, 0])
    close(x1, np.linalg.lstsq(a, b[:, 0])[0], "float32")


def test_multi_dot_with_vector_ends(rng):
    arrays = [rand(rng, (3,)), rand(rng, (3, 6)), rand(rng, (6, 2)), rand(rng, (2, 4)), rand(rng, (4,))]
    close(staged(lambda *xs: L.multi_dot(xs), *arrays), np.linalg.multi_dot(arrays), "float32")
    with pytest.raises(ValueError, match="at least two"):
        L.multi_dot([jnp.eye(2)])


def test_tensorsolve_and_tensorinv(rng):
    a = rand(rng, (2, 3, 6)) + np.eye(6, dtype="float32").reshape(2, 3, 6) * 3
    b = rand(rng, (2, 3))
    close(staged(L.tensorsolve, a, b), np.linalg.tensorsolve(a, b), "float32")
    t = rand(rng, (4, 6, 8, 3))
    close(staged(L.tensorinv, t, ind=2), np.linalg.tensorinv(t, ind=2), "float32", rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("p", [None, 2, -2, 1, -1, np.inf, "fro", "nuc"])
def test_cond(rng, p):
    a = well_conditioned(rng, (2, 3, 3))
    close(staged(L.cond, a, p=p), np.linalg.cond(a, p), "float32", rtol=1e-3, atol=1e-3)


def test_cond_of_singular_matrix_is_infinite():
    assert float(L.cond(jnp.array([[1.0, 2.0], [2.0, 4.0]]), 1)) == np.inf


# --- norms -------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ord", [None, "fro", "nuc", np.inf, -np.inf, 1, -1, 2, -2])
def test_matrix_norms(rng, dtype, ord):
    a = rand(rng, (3, 4, 5), dtype)
    close(staged(L.norm, a, ord=ord, axis=(1, 2)), np.linalg.norm(a, ord, axis=(1, 2)), "float32")
    close(L.norm(a, ord, axis=(2, 0), keepdims=True), np.linalg.norm(a, ord, axis=(2, 0), keepdims=True), "float32")
    close(L.norm(a[0], ord), np.linalg.norm(a[0], ord), "float32")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ord", [None, np.inf, -np.inf, 0, 1, -1, 2, -2, 3, 0.5])
def test_vector_norms(rng, dtype, ord):
    a = rand(rng, (3, 4), dtype)
    close(staged(L.norm, a, ord=ord, axis=1), np.linalg.norm(a, ord, axis=1), "float32")
    close(L.norm(a[0], ord, keepdims=True), np.linalg.norm(a[0], ord, keepdims=True), "float32")


def test_norm_defaults_and_array_api_variants(rng):
    a = rand(rng, (2, 3, 4))
    close(staged(L.norm, a), np.linalg.norm(a), "float32")
    close(L.vector_norm(a, ord=1), np.linalg.vector_norm(a, ord=1), "float32")
    close(L.vector_norm(a, axis=(0, 2), keepdims=True), np.linalg.vector_norm(a, axis=(0, 2), keepdims=True), "float32")
    close(L.matrix_norm(a, ord="nuc"), np.linalg.matrix_norm(a, ord="nuc"), "float32")
    close(L.norm(np.arange(4)), np.linalg.norm(np.arange(4)), "float32")


def test_norm_errors():
    with pytest.raises(ValueError, match="Invalid order"):
        L.norm(jnp.ones((2, 2)), "bad")
    with pytest.raises(ValueError, match="Invalid order"):
        L.norm(jnp.ones(3), "fro")
    with pytest.raises(ValueError, match="number of axes"):
        L.norm(jnp.ones((2, 2, 2)), 2, axis=(0, 1, 2))


def test_array_api_aliases(rng):
    a, b = rand(rng, (4, 3)), rand(rng, (4, 3))
    close(L.cross(a, b), np.linalg.cross(a, b), "float32")
    close(L.outer(a[0], b[0]), np.linalg.outer(a[0], b[0]), "float32")
    close(L.matrix_transpose(a), a.T, "float32")
    close(L.vecdot(a, b), np.linalg.vecdot(a, b), "float32")
    close(L.matmul(a, b.T), a @ b.T, "float32")
    close(L.tensordot(a, b, 2), np.tensordot(a, b, 2), "float32")
    assert set(L.__all__) >= {"norm", "inv", "solve", "det", "slogdet", "eigh", "eig", "eigvals", "svd", "cholesky", "qr"}
