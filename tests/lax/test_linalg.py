"""lax.linalg primitives: batched results against NumPy, exact output dtypes (checked by
the interpreter against the shape rules), JAX's value conventions (NaN Cholesky for
non-positive-definite input, complex eig of real input) and shape/dtype error messages."""
import numpy as np
import pytest

import omnistage
import omnistage.numpy as jnp
from omnistage import lax
from tests.helpers import check_staged

# check_staged gets lambdas, not the functions themselves: a program named like a primitive
# (`cholesky`, `eigh`, ...) currently shadows that primitive when run (reported to staging).

DTYPES = ["float32", "complex64"]
REAL = {"float32": "float32", "float64": "float64", "complex64": "float32", "complex128": "float64"}
COMPLEX = {"float32": "complex64", "float64": "complex128", "complex64": "complex64", "complex128": "complex128"}


def rand(rng, shape, dtype="float32"):
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def hermitian_pd(rng, shape, dtype):
    a = rand(rng, shape, dtype)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def tol(dtype):
    return dict(rtol=1e-4, atol=1e-4) if np.dtype(dtype) in (np.float32, np.complex64) else dict(rtol=1e-10, atol=1e-10)


def close(got, want, dtype, **kw):
    got = np.asarray(got)
    assert got.dtype == np.dtype(dtype), (got.dtype, dtype)
    np.testing.assert_allclose(got, want, **(kw or tol(dtype)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_cholesky_batched_matches_numpy(rng, dtype):
    a = hermitian_pd(rng, (3, 4, 4), dtype)
    close(check_staged(lambda x: lax.linalg.cholesky(x), a, **tol(dtype)), np.linalg.cholesky(a), dtype)


def test_cholesky_float64_under_x64(x64, rng):
    a = hermitian_pd(rng, (2, 3, 3), "float64")
    close(check_staged(lambda x: lax.linalg.cholesky(x), a, rtol=1e-12, atol=1e-12), np.linalg.cholesky(a), "float64")


def test_cholesky_of_non_positive_definite_matrix_is_nan_not_an_error(rng):
    good = hermitian_pd(rng, (3, 3), "float32")
    bad = np.array([[1.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 1.0]], "float32")
    out = np.asarray(lax.linalg.cholesky(np.stack([good, bad])))
    np.testing.assert_allclose(out[0], np.linalg.cholesky(good), rtol=1e-5)
    assert np.isnan(out[1][np.tril_indices(3)]).all() and (out[1][np.triu_indices(3, 1)] == 0).all()


@pytest.mark.parametrize("dtype", DTYPES)
def test_eigh_returns_vectors_then_ascending_real_values(rng, dtype):
    a = hermitian_pd(rng, (2, 4, 4), dtype)
    v, w = check_staged(lambda x: lax.linalg.eigh(x), a, **tol(dtype))
    close(w, np.linalg.eigvalsh(a), REAL[dtype])
    assert np.asarray(v).dtype == np.dtype(dtype)
    close(np.asarray(v) @ (np.asarray(w)[..., None] * np.conj(np.swapaxes(v, -1, -2))), a, dtype, rtol=1e-3, atol=1e-3)


def test_eigh_reads_only_the_requested_triangle(rng):
    a = hermitian_pd(rng, (4, 4), "float32")
    junk_upper = np.tril(a) + np.triu(rand(rng, (4, 4)), 1)
    _, w = lax.linalg.eigh(junk_upper, lower=True, symmetrize_input=False)
    close(w, np.linalg.eigvalsh(a), "float32")


@pytest.mark.parametrize("dtype", ["float32", "complex64"])
def test_eig_is_complex_and_gives_left_and_right_eigenvectors(rng, dtype):
    a = rand(rng, (2, 4, 4), dtype)
    w, vl, vr = check_staged(lambda x: lax.linalg.eig(x), a, **tol(dtype))
    cdt = COMPLEX[dtype]
    for out in (w, vl, vr):
        assert np.asarray(out).dtype == np.dtype(cdt)
    w, vl, vr = (np.asarray(o).astype(np.complex128) for o in (w, vl, vr))
    np.testing.assert_allclose(a @ vr, vr * w[..., None, :], rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(np.conj(np.swapaxes(vl, -1, -2)) @ a, w[..., :, None] * np.conj(np.swapaxes(vl, -1, -2)), rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(np.linalg.norm(vl, axis=-2), 1, rtol=1e-5)


def test_eig_of_a_matrix_with_nan_or_inf_is_nan_eagerly_and_compiled_as_in_jax():
    a = np.array([[[1.0, np.nan], [0.0, 1.0]], [[2.0, 0.0], [0.0, 3.0]], [[np.inf, 0.0], [0.0, 1.0]]], np.float32)
    f = lambda x: lax.linalg.eig(x)  # noqa: E731 - JAX: nan+nanj everywhere for a non-finite matrix
    for outs in (f(a), omnistage.jit(f)(a)):
        w, vl, vr = (np.asarray(o) for o in outs)
        for o in (w, vl, vr):
            assert np.isnan(o[[0, 2]].real).all() and np.isnan(o[[0, 2]].imag).all()
        np.testing.assert_allclose(np.sort(w[1].real), [2.0, 3.0], rtol=1e-6)
        assert np.isfinite(vl[1]).all() and np.isfinite(vr[1]).all()


def test_eig_seed_example_eigenvalues_have_modulus_sqrt2():
    (w,) = lax.linalg.eig(jnp.array([[1.0, -1.0], [1.0, 1.0]]), compute_left_eigenvectors=False, compute_right_eigenvectors=False)
    np.testing.assert_allclose(np.abs(np.asarray(w)), np.sqrt(2), rtol=1e-6)


@pytest.mark.parametrize("shape", [(2, 5, 3), (3, 4), (2, 3, 6)])
@pytest.mark.parametrize("full", [True, False])
def test_svd_shapes_dtypes_and_reconstruction(rng, shape, full):
    a = rand(rng, shape, "complex64")
    u, s, vh = check_staged(lambda x: lax.linalg.svd(x, full_matrices=full), a, **tol("complex64"))
    m, n = shape[-2:]
    k = min(m, n)
    assert np.shape(u) == shape[:-2] + ((m, m) if full else (m, k))
    assert np.shape(vh) == shape[:-2] + ((n, n) if full else (k, n))
    assert np.asarray(s).dtype == np.float32
    recon = np.asarray(u)[..., :, :k] * np.asarray(s)[..., None, :] @ np.asarray(vh)[..., :k, :]
    np.testing.assert_allclose(recon, a, rtol=1e-4, atol=1e-4)
    close(lax.linalg.svd(a, compute_uv=False), np.linalg.svd(a, compute_uv=False), "float32")


@pytest.mark.parametrize("full", [True, False])
def test_qr_matches_numpy(rng, full):
    a = rand(rng, (2, 5, 3), "float32")
    q, r = check_staged(lambda x: lax.linalg.qr(x, full_matrices=full), a, **tol("float32"))
    q2, r2 = np.linalg.qr(a, mode="complete" if full else "reduced")
    close(q, q2, "float32")
    close(r, r2, "float32")


@pytest.mark.parametrize("shape", [(3, 4, 4), (5, 3), (3, 5)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_lu_reconstructs_permuted_input(rng, shape, dtype):
    a = rand(rng, shape, dtype)
    lu, pivots, perm = check_staged(lambda x: lax.linalg.lu(x), a, **tol(dtype))
    lu, pivots, perm = np.asarray(lu), np.asarray(pivots), np.asarray(perm)
    assert pivots.dtype == np.int32 and perm.dtype == np.int32
    m, n = shape[-2:]
    k = min(m, n)
    lower = np.tril(lu, -1)[..., :, :k] + np.eye(m, k)
    upper = np.triu(lu)[..., :k, :]
    np.testing.assert_allclose(lower @ upper, np.take_along_axis(a, perm[..., :, None], axis=-2), rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(np.asarray(lax.linalg.lu_pivots_to_permutation(pivots, m)), perm)


def test_lu_pivots_match_lapack_getrf(rng):
    scipy_linalg = pytest.importorskip("scipy.linalg")
    a = rand(rng, (5, 5), "float64").astype(np.float32)
    _, pivots, _ = lax.linalg.lu(a)
    np.testing.assert_array_equal(np.asarray(pivots), scipy_linalg.lu_factor(a)[1])


def test_lu_of_singular_matrix_has_zero_pivot_instead_of_raising():
    lu, _, _ = lax.linalg.lu(jnp.array([[1.0, 2.0], [2.0, 4.0]]))
    assert np.asarray(lu)[1, 1] == 0


@pytest.mark.parametrize("left_side", [True, False])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("transpose_a,conjugate_a", [(False, False), (True, False), (True, True)])
def test_triangular_solve_all_variants(rng, left_side, lower, transpose_a, conjugate_a):
    dtype = "complex64"
    a = rand(rng, (2, 4, 4), dtype) + 4 * np.eye(4, dtype=dtype)  # well conditioned
    b = rand(rng, (2, 4, 3) if left_side else (2, 3, 4), dtype)

    def f(x, y):
        return lax.linalg.triangular_solve(x, y, left_side=left_side, lower=lower, transpose_a=transpose_a, conjugate_a=conjugate_a)

    out = check_staged(f, a, b, **tol(dtype))
    op = np.tril(a) if lower else np.triu(a)
    if conjugate_a:
        op = np.conj(op)
    if transpose_a:
        op = np.swapaxes(op, -1, -2)
    want = np.linalg.solve(op, b) if left_side else np.swapaxes(np.linalg.solve(np.swapaxes(op, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)
    close(out, want, dtype)


def test_triangular_solve_unit_diagonal_ignores_the_diagonal(rng):
    a = np.tril(rand(rng, (3, 3)))
    b = rand(rng, (3, 2))
    out = lax.linalg.triangular_solve(a, b, left_side=True, lower=True, unit_diagonal=True)
    unit = np.tril(a, -1) + np.eye(3, dtype="float32")
    close(out, np.linalg.solve(unit, b), "float32")


@pytest.mark.parametrize("fn", [lax.linalg.cholesky, lax.linalg.eigh, lax.linalg.eig])
def test_square_decompositions_reject_non_square_input(fn):
    with pytest.raises(ValueError, match=r"square matrices.*\(2, 3\)"):
        fn(jnp.ones((2, 3)))


@pytest.mark.parametrize("fn", [lax.linalg.cholesky, lax.linalg.svd, lax.linalg.qr, lax.linalg.lu])
def test_decompositions_reject_vectors_and_integer_input(fn):
    with pytest.raises(ValueError, match=r"rank >= 2.*\(3,\)"):
        fn(jnp.ones(3))
    with pytest.raises(TypeError, match="int32"):
        fn(jnp.ones((3, 3), jnp.int32))


def test_triangular_solve_shape_errors_name_both_shapes():
    with pytest.raises(ValueError, match=r"\(3, 3\) and \(2, 2\)"):
        lax.linalg.triangular_solve(jnp.eye(3), jnp.ones((2, 2)), left_side=True)
    with pytest.raises(ValueError, match="batch"):
        lax.linalg.triangular_solve(jnp.ones((2, 3, 3)), jnp.ones((3, 3, 2)), left_side=True)
    with pytest.raises(TypeError, match="same dtype"):
        lax.linalg.triangular_solve(jnp.eye(3), jnp.ones((3, 2), jnp.complex64), left_side=True)


def test_decompositions_stage_as_multi_output_statements(rng):
    program = omnistage.make_jaxpr(lambda x: lax.linalg.svd(x))(rand(rng, (3, 3)))
    assert "svd(" in str(program) and "full_matrices=True" in str(program)


def test_lu_pivots_out_of_range_swap_nothing_eagerly_and_compiled():
    pivots = np.array([[2, 2, 5, 9], [0, -1, 3, 3]], np.int32)
    f = lambda p: lax.linalg.lu_pivots_to_permutation(p, 6)  # noqa: E731
    want = np.array([[2, 0, 5, 3, 4, 1], [0, 1, 3, 2, 4, 5]], np.int32)
    np.testing.assert_array_equal(np.asarray(f(pivots)), want)
    np.testing.assert_array_equal(np.asarray(omnistage.jit(f)(pivots)), want)
