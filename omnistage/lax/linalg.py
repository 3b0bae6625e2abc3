"""Linear-algebra primitives (JAX's `lax.linalg`): cholesky, eigh, eig, svd, qr, lu,
lu_pivots_to_permutation and triangular_solve.

Each primitive works on the trailing two dimensions and batches over the leading ones. The
shape rules check ranks, squareness and dtypes (floating or complex only, as in JAX) and say
how to fix a bad call; the NumPy implementations return exactly the dtypes the rules give
(eig of a real matrix is complex, singular values and eigh eigenvalues are real). Like JAX,
nothing here raises on bad *values*: a non-positive-definite matrix gives a NaN Cholesky
factor and a singular matrix gives infinities in a triangular solve.

Imports core only (through `_rules`); `omnistage.numpy.linalg` builds the NumPy API on these.
"""
import math

import numpy as np

from ..core.aval import ShapedArray
from ..core.primitive import Primitive
from . import _rules as R
from ._rules import operands

# NumPy/LAPACK work in these dtypes only; float16/bfloat16 are rejected with a clear message.
_SUPPORTED = ("float32", "float64", "complex64", "complex128")
_REAL_OF = {"float32": "float32", "float64": "float64", "complex64": "float32", "complex128": "float64"}
_COMPLEX_OF = {"float32": "complex64", "float64": "complex128", "complex64": "complex64", "complex128": "complex128"}


# --- shared shape/dtype checks -----------------------------------------------------------


def _check_dtype(name, x):
    if x.dtype.name not in _SUPPORTED:
        raise TypeError(
            f"{name} requires a floating or complex operand (float32, float64, complex64, "
            f"complex128), got {x.dtype.name}; convert it first, e.g. with "
            f"x.astype(jnp.float32)."
        )


def _check_matrix(name, x):
    _check_dtype(name, x)
    if x.ndim < 2:
        raise ValueError(f"{name} requires an operand of rank >= 2 (a matrix or a batch of matrices), got shape {x.shape}.")


def _check_square(name, x):
    _check_matrix(name, x)
    if x.shape[-1] != x.shape[-2]:
        raise ValueError(
            f"{name} requires square matrices in the last two dimensions, got shape {x.shape} "
            f"({x.shape[-2]} rows, {x.shape[-1]} columns)."
        )


def _real_dtype(dt):
    return np.dtype(_REAL_OF[np.dtype(dt).name])


def _complex_dtype(dt):
    return np.dtype(_COMPLEX_OF[np.dtype(dt).name])


def _as_batch(x):
    """View `x` (..., m, n) as (b, m, n) for per-matrix loops in the implementations."""
    return x.reshape((math.prod(x.shape[:-2]),) + x.shape[-2:])  # -1 is ambiguous for size 0


def _swap(x):
    return np.swapaxes(x, -1, -2)


# --- cholesky ----------------------------------------------------------------------------


def _cholesky_abstract(x):
    _check_square("cholesky", x)
    return ShapedArray(x.shape, x.dtype)


def _cholesky_one(m):
    try:
        return np.linalg.cholesky(m)
    except np.linalg.LinAlgError:
        # JAX: a matrix that is not positive definite gives NaNs in the lower triangle
        return np.tril(np.full(m.shape, np.nan, m.dtype))


@R.quiet
def _cholesky_impl(x):
    x = np.asarray(x)
    try:
        out = np.linalg.cholesky(x)
    except np.linalg.LinAlgError:
        # only some matrices of the batch failed: factor them one by one
        out = np.stack([_cholesky_one(m) for m in _as_batch(x)]).reshape(x.shape) if x.size else x
    return np.asarray(out, x.dtype)


cholesky_p = Primitive("cholesky", _cholesky_abstract, _cholesky_impl)


def _hermitian_part(x):
    """(x + x^H) / 2, staged with lax ops (JAX's `symmetrize_input`)."""
    from .elementwise import add, conj, div
    from .shapes import transpose

    perm = tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2)
    xh = transpose(conj(x) if x.dtype.kind == "c" else x, perm)
    two = np.asarray(2, x.dtype)
    return div(add(x, xh), two)


def cholesky(x, *, symmetrize_input=True):
    """Lower Cholesky factor L with x = L L^H (NaNs where x is not positive definite)."""
    (x,) = operands(x)
    _check_square("cholesky", x.aval)
    if symmetrize_input:
        x = _hermitian_part(x)
    return cholesky_p.bind(x)


# --- eigh --------------------------------------------------------------------------------


def _eigh_abstract(x, *, lower, sort_eigenvalues=True):
    _check_square("eigh", x)
    return [ShapedArray(x.shape, x.dtype), ShapedArray(x.shape[:-1], _real_dtype(x.dtype))]


@R.quiet
def _eigh_impl(x, *, lower, sort_eigenvalues=True):
    x = np.asarray(x)
    w, v = np.linalg.eigh(x, UPLO="L" if lower else "U")  # ascending, as JAX sorts them
    return [np.asarray(v, x.dtype), np.asarray(w, _real_dtype(x.dtype))]


eigh_p = Primitive("eigh", _eigh_abstract, _eigh_impl, multiple_results=True)


def eigh(x, *, lower=True, symmetrize_input=True, sort_eigenvalues=True, subset_by_index=None):
    """Eigen-decomposition of Hermitian matrices: returns (v, w), eigenvalues w ascending."""
    (x,) = operands(x)
    if subset_by_index is not None:
        raise NotImplementedError("eigh: subset_by_index is not supported; slice the result instead.")
    _check_square("eigh", x.aval)
    if symmetrize_input:
        x = _hermitian_part(x)
    v, w = eigh_p.bind(x, lower=bool(lower), sort_eigenvalues=bool(sort_eigenvalues))
    return v, w


# --- eig ---------------------------------------------------------------------------------


def _eig_abstract(x, *, compute_left_eigenvectors, compute_right_eigenvectors):
    _check_square("eig", x)
    cdt = _complex_dtype(x.dtype)
    outs = [ShapedArray(x.shape[:-1], cdt)]
    outs += [ShapedArray(x.shape, cdt)] * (int(compute_left_eigenvectors) + int(compute_right_eigenvectors))
    return outs


def _normalize_columns(v):
    """Unit 2-norm columns whose largest component is real, as LAPACK's geev returns them."""
    if v.size == 0:
        return v
    v = v / np.linalg.norm(v, axis=-2, keepdims=True)
    big = np.take_along_axis(v, np.argmax(np.abs(v), axis=-2)[..., None, :], axis=-2)
    phase = np.where(big == 0, 1, np.conj(big) / np.where(big == 0, 1, np.abs(big)))
    return v * phase


@R.quiet
def _eig_impl(x, *, compute_left_eigenvectors, compute_right_eigenvectors):
    x = np.asarray(x)
    cdt = _complex_dtype(x.dtype)
    # a matrix holding inf or NaN gets NaN results, as in JAX and the compiled kernel (NumPy raises)
    finite = np.isfinite(x).all(axis=(-2, -1))
    w, vr = np.linalg.eig(np.where(finite[..., None, None], x, 0))
    nan = complex(np.nan, np.nan)
    w, vr = np.where(finite[..., None], w, nan).astype(cdt), np.where(finite[..., None, None], vr, nan).astype(cdt)
    outs = [w]
    if compute_left_eigenvectors:
        # rows of inv(vr) are the left eigenvectors (conjugated), in the order of w
        flat = vr.reshape((-1,) + vr.shape[-2:])
        inv = np.full(flat.shape, nan, flat.dtype)
        for b in range(flat.shape[0]):
            if np.isfinite(flat[b]).all():
                try:
                    inv[b] = np.linalg.inv(flat[b])
                except np.linalg.LinAlgError:  # singular eigenvectors: NaN, as compiled
                    pass
        outs.append(_normalize_columns(np.conj(_swap(inv.reshape(vr.shape)))).astype(cdt))
    if compute_right_eigenvectors:
        outs.append(vr)
    return outs


eig_p = Primitive("eig", _eig_abstract, _eig_impl, multiple_results=True)


def eig(x, *, compute_left_eigenvectors=True, compute_right_eigenvectors=True):
    """Eigen-decomposition of general square matrices: [w, vl?, vr?] (complex)."""
    (x,) = operands(x)
    return eig_p.bind(
        x, compute_left_eigenvectors=bool(compute_left_eigenvectors),
        compute_right_eigenvectors=bool(compute_right_eigenvectors),
    )


# --- svd ---------------------------------------------------------------------------------


def _svd_abstract(x, *, full_matrices, compute_uv):
    _check_matrix("svd", x)
    batch, (m, n) = x.shape[:-2], x.shape[-2:]
    k = min(m, n)
    s = ShapedArray(batch + (k,), _real_dtype(x.dtype))
    if not compute_uv:
        return [s]
    ucols, vrows = (m, n) if full_matrices else (k, k)
    return [ShapedArray(batch + (m, ucols), x.dtype), s, ShapedArray(batch + (vrows, n), x.dtype)]


@R.quiet
def _svd_impl(x, *, full_matrices, compute_uv):
    x = np.asarray(x)
    rdt = _real_dtype(x.dtype)
    if not compute_uv:
        return [np.asarray(np.linalg.svd(x, compute_uv=False), rdt)]
    u, s, vh = np.linalg.svd(x, full_matrices=full_matrices)
    return [np.asarray(u, x.dtype), np.asarray(s, rdt), np.asarray(vh, x.dtype)]


svd_p = Primitive("svd", _svd_abstract, _svd_impl, multiple_results=True)


def svd(x, *, full_matrices=True, compute_uv=True, subset_by_index=None, algorithm=None):
    """Singular value decomposition: (u, s, vh), or s alone when compute_uv=False."""
    (x,) = operands(x)
    if subset_by_index is not None:
        raise NotImplementedError("svd: subset_by_index is not supported; slice the result instead.")
    outs = svd_p.bind(x, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv))
    return tuple(outs) if compute_uv else outs[0]


# --- qr ----------------------------------------------------------------------------------


def _qr_abstract(x, *, full_matrices):
    _check_matrix("qr", x)
    batch, (m, n) = x.shape[:-2], x.shape[-2:]
    k = m if full_matrices else min(m, n)
    return [ShapedArray(batch + (m, k), x.dtype), ShapedArray(batch + (k, n), x.dtype)]


@R.quiet
def _qr_impl(x, *, full_matrices):
    x = np.asarray(x)
    q, r = np.linalg.qr(x, mode="complete" if full_matrices else "reduced")
    return [np.asarray(q, x.dtype), np.asarray(r, x.dtype)]


qr_p = Primitive("qr", _qr_abstract, _qr_impl, multiple_results=True)


def qr(x, *, pivoting=False, full_matrices=True):
    """QR decomposition: (q, r) with x = q r (JAX's default is full_matrices=True)."""
    (x,) = operands(x)
    if pivoting:
        raise NotImplementedError("qr: pivoting=True is not supported.")
    q, r = qr_p.bind(x, full_matrices=bool(full_matrices))
    return q, r


# --- lu ----------------------------------------------------------------------------------


def _lu_abstract(x):
    _check_matrix("lu", x)
    batch, (m, n) = x.shape[:-2], x.shape[-2:]
    i32 = np.dtype("int32")
    return [ShapedArray(x.shape, x.dtype), ShapedArray(batch + (min(m, n),), i32), ShapedArray(batch + (m,), i32)]


def _pivot_magnitude(col):
    # LAPACK's i?amax picks the first largest |re| + |im| (not the modulus) for complex
    return np.abs(col.real) + np.abs(col.imag) if col.dtype.kind == "c" else np.abs(col)


def _swap_rows(a, rows, i, j):
    tmp = a[rows, i].copy()
    a[rows, i] = a[rows, j]
    a[rows, j] = tmp


@R.quiet
def _lu_impl(x):
    """Partial-pivoting LU (LAPACK getrf's unblocked algorithm), vectorized over the batch."""
    x = np.asarray(x)
    m, n = x.shape[-2:]
    k = min(m, n)
    a = _as_batch(x).copy()
    rows = np.arange(a.shape[0])
    perm = np.broadcast_to(np.arange(m, dtype=np.int32), (a.shape[0], m)).copy()
    pivots = np.zeros((a.shape[0], k), np.int32)
    for j in range(k):
        p = j + np.argmax(_pivot_magnitude(a[:, j:, j]), axis=1) if a.shape[0] else np.zeros(0, int)
        pivots[:, j] = p
        _swap_rows(a, rows, j, p)
        _swap_rows(perm, rows, j, p)
        piv = a[:, j, j]
        nonzero = piv != 0  # getrf leaves a zero column unscaled rather than dividing by 0
        a[:, j + 1:, j] = np.where(nonzero[:, None], a[:, j + 1:, j] / np.where(nonzero, piv, 1)[:, None], a[:, j + 1:, j])
        a[:, j + 1:, j + 1:] -= a[:, j + 1:, j, None] * a[:, j, None, j + 1:]
    batch = x.shape[:-2]
    return [a.reshape(x.shape), pivots.reshape(batch + (k,)), perm.reshape(batch + (m,))]


lu_p = Primitive("lu", _lu_abstract, _lu_impl, multiple_results=True)


def lu(x):
    """LU decomposition with partial pivoting: (lu, pivots, permutation), x[permutation] = L U.

    `lu` holds L (unit diagonal, below) and U (on and above the diagonal); `pivots[i]` is the
    row swapped with row i at step i (LAPACK's ipiv, 0-based)."""
    (x,) = operands(x)
    out, pivots, permutation = lu_p.bind(x)
    return out, pivots, permutation


# --- lu_pivots_to_permutation ------------------------------------------------------------


def _pivots_abstract(pivots, *, permutation_size):
    if pivots.dtype.kind not in "iu":
        raise TypeError(f"lu_pivots_to_permutation requires integer pivots, got {pivots.dtype.name}")
    if pivots.ndim < 1 or pivots.shape[-1] > permutation_size:
        raise ValueError(
            f"lu_pivots_to_permutation requires pivots of rank >= 1 with at most "
            f"permutation_size={permutation_size} entries, got shape {pivots.shape}."
        )
    return ShapedArray(pivots.shape[:-1] + (permutation_size,), np.dtype("int32"))


def _pivots_impl(pivots, *, permutation_size):
    pivots = np.asarray(pivots)
    flat = pivots.reshape((-1, pivots.shape[-1]))
    perm = np.broadcast_to(np.arange(permutation_size, dtype=np.int32), (flat.shape[0], permutation_size)).copy()
    rows = np.arange(flat.shape[0])
    for i in range(flat.shape[1]):
        # a pivot outside [0, permutation_size) swaps nothing, as compiled (JAX's result there
        # is not a permutation; NumPy would wrap -1 or raise)
        ok = (flat[:, i] >= 0) & (flat[:, i] < permutation_size)
        _swap_rows(perm, rows[ok], i, flat[ok, i])
    return perm.reshape(pivots.shape[:-1] + (permutation_size,))


lu_pivots_to_permutation_p = Primitive("lu_pivots_to_permutation", _pivots_abstract, _pivots_impl)


def lu_pivots_to_permutation(pivots, permutation_size):
    (pivots,) = operands(pivots)
    return lu_pivots_to_permutation_p.bind(pivots, permutation_size=int(permutation_size))


# --- triangular_solve --------------------------------------------------------------------


def _triangular_solve_abstract(a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    _check_square("triangular_solve", a)
    if b.dtype != a.dtype:
        raise TypeError(f"triangular_solve requires a and b to have the same dtype, got {a.dtype.name} and {b.dtype.name}.")
    if b.ndim != a.ndim or b.shape[:-2] != a.shape[:-2]:
        raise ValueError(
            f"triangular_solve requires a and b to have the same rank and equal batch dimensions, "
            f"got shapes {a.shape} and {b.shape}."
        )
    side, dim = ("left", -2) if left_side else ("right", -1)
    if b.shape[dim] != a.shape[-1]:
        raise ValueError(
            f"triangular_solve with left_side={left_side} requires b's {'rows' if left_side else 'columns'} "
            f"({b.shape[dim]}) to match the size of a ({a.shape[-1]}); got shapes {a.shape} and "
            f"{b.shape} (solving on the {side} side)."
        )
    return ShapedArray(b.shape, b.dtype)


def _forward_substitution(m, b, unit_diagonal):
    """Solve m x = b for lower-triangular m (b, n, n) and b (b, n, k), row by row."""
    x = np.zeros_like(b)
    for i in range(m.shape[-1]):
        # a (1, i) @ (i, k) product per batch element: matmul, ~3x cheaper than einsum's
        # dispatch on the small systems eager code solves (a 7x7 Cholesky factor: 31 -> 12 us)
        acc = b[:, i] - np.matmul(m[:, i:i + 1, :i], x[:, :i])[:, 0]
        x[:, i] = acc if unit_diagonal else acc / m[:, i, i, None]
    return x


@R.quiet
def _triangular_solve_impl(a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    a, b = np.asarray(a), np.asarray(b)
    out_shape = b.shape
    m, rhs, low = _as_batch(a), _as_batch(b), lower
    # Rewrite every variant as "lower-triangular m, solve m x = rhs on the left".
    if conjugate_a:
        m = np.conj(m)
    if transpose_a:
        m, low = _swap(m), not low
    if not left_side:  # x op(a) = b  <=>  op(a)^T x^T = b^T
        m, low, rhs = _swap(m), not low, _swap(rhs)
    if not low:  # reversing rows and columns turns upper-triangular into lower
        m, rhs = m[:, ::-1, ::-1], rhs[:, ::-1]
    # The substitution reads only m's lower triangle (row i's first i entries and its
    # diagonal), so a C-contiguous m is used as it is; np.tril's copy (3 us of a 7x7 solve's
    # 25) is kept for other layouts, since the layout the row products see picks NumPy's
    # matmul path, and so the bits.
    x = _forward_substitution(m if m.flags.c_contiguous else np.tril(m), rhs, unit_diagonal)
    if not low:
        x = x[:, ::-1]
    if not left_side:
        x = _swap(x)
    return np.ascontiguousarray(x).reshape(out_shape).astype(b.dtype, copy=False)


triangular_solve_p = Primitive("triangular_solve", _triangular_solve_abstract, _triangular_solve_impl)


def triangular_solve(a, b, *, left_side=False, lower=False, transpose_a=False, conjugate_a=False, unit_diagonal=False):
    """Solve op(a) x = b (left_side) or x op(a) = b for triangular `a` (JAX's defaults)."""
    a, b = operands(a, b)
    return triangular_solve_p.bind(
        a, b, left_side=bool(left_side), lower=bool(lower), transpose_a=bool(transpose_a),
        conjugate_a=bool(conjugate_a), unit_diagonal=bool(unit_diagonal),
    )


__all__ = [
    "cholesky", "eigh", "eig", "svd", "qr", "lu", "lu_pivots_to_permutation", "triangular_solve",
]
