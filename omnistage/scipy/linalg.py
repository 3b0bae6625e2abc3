"""`omnistage.scipy.linalg`, as `jax.scipy.linalg`: Cholesky and LU factor/solve pairs,
`solve_triangular`, `lu`, `expm` (scaling and squaring with a Pade approximant), `block_diag`,
and SciPy's spellings of `eigh`, `svd`, `qr`, `det`, `inv`, `solve`. Built on lax.linalg's
primitives and omnistage.numpy, so they differentiate and batch."""
import numpy as np

from .. import lax
from .. import numpy as jnp
from .promotion import promote_args_inexact
from ..numpy.eager_programs import wrap_module_functions


def _T(x):
    return jnp.swapaxes(x, -1, -2)


def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """The Cholesky factor: lower L with a = L L^H, or (default) upper U = L^H."""
    (a,) = promote_args_inexact(a)
    low = lax.cholesky(a)
    return low if lower else jnp.conj(_T(low))


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """(c, lower) for cho_solve; c's other triangle is zero (SciPy leaves it arbitrary)."""
    return cholesky(a, lower=lower), lower


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False, debug=None,
                     check_finite=True):
    """Solve op(a) x = b for triangular a; trans 0/'N', 1/'T', 2/'C'; b a vector or matrix."""
    a, b = promote_args_inexact(a, b)
    trans = {"N": 0, "T": 1, "C": 2}.get(trans, trans)
    if trans not in (0, 1, 2):
        raise ValueError(f"Invalid 'trans' value {trans!r}: use 0, 1, 2 or 'N', 'T', 'C'.")
    vector = b.ndim == a.ndim - 1
    rhs = b[..., None] if vector else b
    out = lax.triangular_solve(a, rhs, left_side=True, lower=lower, transpose_a=trans > 0,
                               conjugate_a=trans == 2, unit_diagonal=unit_diagonal)
    return out[..., 0] if vector else out


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """Solve a x = b from cho_factor's (c, lower)."""
    c, lower = c_and_lower
    c, b = promote_args_inexact(c, b)
    low = c if lower else jnp.conj(_T(c))
    y = solve_triangular(low, b, lower=True)
    return solve_triangular(low, y, trans=2, lower=True)


def lu_factor(a, overwrite_a=False, check_finite=True):
    """(lu, piv): L (unit, below) and U packed, and LAPACK's row swaps (0-based)."""
    (a,) = promote_args_inexact(a)
    lu_, pivots, _ = lax.lu(a)
    return lu_, pivots


def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    """Solve op(a) x = b from lu_factor's (lu, piv); trans 0, 1 (a^T) or 2 (a^H)."""
    lu_, pivots = lu_and_piv
    lu_, b = promote_args_inexact(lu_, b)
    n = lu_.shape[-1]
    perm = lax.lu_pivots_to_permutation(pivots, n)
    vector = b.ndim == lu_.ndim - 1
    rhs = b[..., None] if vector else b
    if trans == 0:
        x = jnp.take_along_axis(rhs, jnp.broadcast_to(perm[..., None], perm.shape + rhs.shape[-1:]), axis=-2)
        x = lax.triangular_solve(lu_, x, left_side=True, lower=True, unit_diagonal=True)
        x = lax.triangular_solve(lu_, x, left_side=True, lower=False)
    else:
        conj = trans == 2
        x = lax.triangular_solve(lu_, rhs, left_side=True, lower=False, transpose_a=True, conjugate_a=conj)
        x = lax.triangular_solve(lu_, x, left_side=True, lower=True, transpose_a=True, conjugate_a=conj,
                                 unit_diagonal=True)
        inverse = jnp.argsort(perm, axis=-1)
        x = jnp.take_along_axis(x, jnp.broadcast_to(inverse[..., None], inverse.shape + x.shape[-1:]), axis=-2)
    return x[..., 0] if vector else x


def lu(a, permute_l=False, overwrite_a=False, check_finite=True):
    """(p, l, u) with a = p @ l @ u, or (p @ l, u) with permute_l."""
    (a,) = promote_args_inexact(a)
    lu_, _, perm = lax.lu(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    l_ = jnp.tril(lu_[..., :, :k], -1) + jnp.eye(m, k, dtype=a.dtype)
    u_ = jnp.triu(lu_[..., :k, :])
    # a[perm] = l u, so a = p l u with p[perm[i], i] = 1
    p = jnp.swapaxes(jnp.eye(m, dtype=a.dtype)[perm], -1, -2)
    if permute_l:
        return jnp.matmul(p, l_), u_
    return p, l_, u_


def block_diag(*arrs):
    """The block-diagonal matrix of the given 0-, 1- or 2-D arrays."""
    if not arrs:
        return jnp.zeros((1, 0))
    arrs = [jnp.atleast_2d(a) for a in arrs]
    if any(a.ndim != 2 for a in arrs):
        raise ValueError("block_diag: every argument must have at most 2 dimensions.")
    dt = jnp.result_type(*arrs)
    rows = sum(a.shape[0] for a in arrs)
    cols = sum(a.shape[1] for a in arrs)
    out = jnp.zeros((rows, cols), dt)
    r = c = 0
    for a in arrs:
        out = out.at[r:r + a.shape[0], c:c + a.shape[1]].set(a.astype(dt))
        r, c = r + a.shape[0], c + a.shape[1]
    return out


def eigh(a, b=None, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False, turbo=True,
         eigvals=None, type=1, check_finite=True):  # noqa: A002 - SciPy's name
    """Eigenvalues (ascending) and eigenvectors of a Hermitian matrix (standard problem only)."""
    if b is not None:
        raise NotImplementedError("omnistage.scipy.linalg.eigh does not support the generalized problem (b).")
    w, v = jnp.linalg.eigh(a, UPLO="L" if lower else "U")
    return w if eigvals_only else (w, v)


def svd(a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True, lapack_driver="gesdd"):
    """Singular value decomposition (jnp.linalg.svd)."""
    return jnp.linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


def qr(a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
    """QR decomposition: mode 'full', 'economic' (reduced) or 'r'."""
    if pivoting:
        raise NotImplementedError("omnistage.scipy.linalg.qr does not support pivoting.")
    if mode not in ("full", "economic", "r"):
        raise ValueError(f"Unsupported QR decomposition mode {mode!r}: use 'full', 'economic' or 'r'.")
    if mode == "r":
        return (jnp.linalg.qr(a, mode="complete")[1],)
    return jnp.linalg.qr(a, mode="complete" if mode == "full" else "reduced")


def det(a, overwrite_a=False, check_finite=True):
    return jnp.linalg.det(a)


def inv(a, overwrite_a=False, check_finite=True):
    return jnp.linalg.inv(a)


def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True, assume_a="gen"):
    """Solve a x = b ('gen' LU; 'pos' Cholesky; 'sym'/'her' as general)."""
    if assume_a == "pos":
        return cho_solve(cho_factor(a, lower=lower), b)
    return jnp.linalg.solve(a, b)


# Pade coefficients and the largest 1-norm each order handles (Higham 2005, as JAX's expm)
_PADE13 = (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800., 129060195264000.,
           10559470521600., 670442572800., 33522128640., 1323241920., 40840800., 960960., 16380., 182., 1.)
_PADE7 = (17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.)
_MAX_NORM = {8: 3.925724783138660, 16: 5.371920351148152}


def _pade13(A, ident):
    b = _PADE13
    A2 = A @ A
    A4 = A2 @ A2
    A6 = A4 @ A2
    U = A @ (A6 @ (b[13] * A6 + b[11] * A4 + b[9] * A2) + b[7] * A6 + b[5] * A4 + b[3] * A2 + b[1] * ident)
    V = A6 @ (b[12] * A6 + b[10] * A4 + b[8] * A2) + b[6] * A6 + b[4] * A4 + b[2] * A2 + b[0] * ident
    return U, V


def _pade7(A, ident):
    b = _PADE7
    A2 = A @ A
    A4 = A2 @ A2
    A6 = A4 @ A2
    U = A @ (b[7] * A6 + b[5] * A4 + b[3] * A2 + b[1] * ident)
    V = b[6] * A6 + b[4] * A4 + b[2] * A2 + b[0] * ident
    return U, V


def expm(A, *, upper_triangular=False, max_squarings=16):
    """The matrix exponential: scale A by 2**-s so its 1-norm is small, take the Pade
    approximant (degree 13 in 64 bits, 7 in 32), square s times; NaN if s > max_squarings."""
    (A,) = promote_args_inexact(A)
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise ValueError(f"Expected A to be a (batched) square matrix, got A.shape={A.shape}.")
    wide = np.dtype(A.dtype).itemsize == 16 or np.dtype(A.dtype) == np.float64
    norm = jnp.max(jnp.sum(jnp.abs(A), axis=-2), axis=-1)
    s = jnp.maximum(0, jnp.floor(jnp.log2(norm / _MAX_NORM[16 if wide else 8])) + 1)
    s = jnp.where(jnp.isfinite(s), s, 0)
    scaled = A / (2 ** s).astype(A.dtype)[..., None, None]
    ident = jnp.eye(A.shape[-1], dtype=A.dtype)
    U, V = (_pade13 if wide else _pade7)(scaled, ident)
    R = solve_triangular(V - U, U + V) if upper_triangular else jnp.linalg.solve(V - U, U + V)
    steps = s[..., None, None]

    def square(i, R):
        return jnp.where(i < steps, R @ R, R)

    R = lax.fori_loop(0, max_squarings, square, R)
    return jnp.where(steps > max_squarings, jnp.full_like(R, np.nan), R)


# Called eagerly, each is one cached program over its array operands (numpy/eager_programs.py).
wrap_module_functions(globals(), (
    "cholesky", "det", "inv", "eigh", "svd", "qr", "lu_factor", "lu",
), operands=1)
wrap_module_functions(globals(), (
    "solve", "solve_triangular",
), operands=2)

__all__ = [
    "block_diag", "cho_factor", "cho_solve", "cholesky", "det", "eigh", "expm", "inv", "lu", "lu_factor",
    "lu_solve", "qr", "solve", "solve_triangular", "svd",
]
