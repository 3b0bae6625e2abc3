"""omnistage.scipy.linalg against scipy.linalg (64 bits): factor/solve pairs, triangular
solves in every transpose mode, lu, expm (scales, batch, 32 bits, gradient), block_diag."""
import numpy as np
import pytest
import scipy.linalg as sl

import omnistage as jax
import omnistage.numpy as jnp
from omnistage.scipy import linalg as L

RS = np.random.RandomState(0)
A = RS.randn(4, 4)
SPD = A @ A.T + 4 * np.eye(4)
B = RS.randn(4, 2)
BV = RS.randn(4)


def _close(got, want, **kw):
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), w, **{"rtol": 1e-10, "atol": 1e-12, **kw})


def test_cholesky_factor_and_solve(x64):
    _close(L.cholesky(SPD), sl.cholesky(SPD))
    _close(L.cholesky(SPD, lower=True), sl.cholesky(SPD, lower=True))
    _close(L.cho_solve(L.cho_factor(SPD), B), sl.cho_solve(sl.cho_factor(SPD), B))
    _close(L.cho_solve(L.cho_factor(SPD, lower=True), BV), sl.cho_solve(sl.cho_factor(SPD, lower=True), BV))
    _close(L.solve(SPD, B, assume_a="pos"), sl.solve(SPD, B, assume_a="pos"))


@pytest.mark.parametrize("trans", [0, 1, 2, "T", "C"])
@pytest.mark.parametrize("lower", [True, False])
def test_solve_triangular(trans, lower, x64):
    tri = (np.tril(A) if lower else np.triu(A)) + 3 * np.eye(4)
    _close(L.solve_triangular(tri, B, trans=trans, lower=lower), sl.solve_triangular(tri, B, trans=trans, lower=lower))
    _close(L.solve_triangular(tri, BV, trans=trans, lower=lower, unit_diagonal=True),
           sl.solve_triangular(tri, BV, trans=trans, lower=lower, unit_diagonal=True))


def test_lu_factor_solve_and_lu(x64):
    lu_, piv = L.lu_factor(A)
    ref = sl.lu_factor(A)
    _close((lu_, piv), ref)
    for trans in (0, 1, 2):
        _close(L.lu_solve((lu_, piv), B, trans=trans), sl.lu_solve(ref, B, trans=trans))
    _close(L.lu_solve((lu_, piv), BV), sl.lu_solve(ref, BV))
    _close(L.lu(A), sl.lu(A))
    _close(L.lu(A, permute_l=True), sl.lu(A, permute_l=True))
    r = RS.randn(3, 5)
    _close(L.lu(r), sl.lu(r))
    _close(L.lu(r.T), sl.lu(r.T))


@pytest.mark.parametrize("scale", [0.01, 1.0, 10.0, 60.0])
def test_expm_matches_scipy(scale, x64):
    want = sl.expm(A * scale)
    np.testing.assert_allclose(np.asarray(L.expm(A * scale)), want, rtol=1e-10, atol=1e-12 * np.abs(want).max())


def test_expm_batches_32_bits_triangular_and_gradient(x64):
    _close(L.expm(np.stack([A, A / 3])), np.stack([sl.expm(A), sl.expm(A / 3)]))
    _close(L.expm(np.triu(A), upper_triangular=True), sl.expm(np.triu(A)))
    want = sl.expm(3 * A)
    got32 = np.asarray(L.expm((3 * A).astype(np.float32)))
    assert got32.dtype == np.float32
    np.testing.assert_allclose(got32, want, rtol=1e-4, atol=1e-5 * np.abs(want).max())
    g = np.asarray(jax.grad(lambda a: jnp.sum(L.expm(a)))(A))
    eps, e = 1e-6, np.zeros((4, 4))
    e[0, 1] = eps
    np.testing.assert_allclose(g[0, 1], (sl.expm(A + e).sum() - sl.expm(A - e).sum()) / (2 * eps), rtol=1e-6)


def test_block_diag_eigh_svd_qr(x64):
    parts = (np.ones((2, 2)), 3.0, np.arange(3.0))
    _close(L.block_diag(*parts), sl.block_diag(*parts))
    _close(L.eigh(SPD, eigvals_only=True), sl.eigh(SPD, eigvals_only=True))
    _close(L.svd(A, compute_uv=False), sl.svd(A, compute_uv=False))
    q, r = L.qr(A)
    _close(q @ r, A)
    _close(jnp.abs(L.qr(A, mode="r")[0]), np.abs(sl.qr(A, mode="r")[0]))
    _close(L.det(A), sl.det(A))
    _close(L.inv(A), sl.inv(A))
