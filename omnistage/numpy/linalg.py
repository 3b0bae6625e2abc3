"""`omnistage.numpy.linalg` (jnp.linalg): NumPy's linear-algebra API with JAX's semantics.

Decompositions bind the primitives of `omnistage.lax.linalg`; everything else composes them
with jnp/lax ops: solve and inv use LU with two triangular solves, det and slogdet read the LU
diagonal and pivot parity, norms are reductions (SVD for the 2/-2/nuclear matrix norms).
Inputs are promoted to an inexact dtype first, as in JAX; like JAX, nothing raises on bad
values (a singular matrix gives infinities or NaNs, a non-positive-definite one a NaN
Cholesky factor), while bad shapes raise with both shapes in the message.
Imports core, lax and sibling jnp modules; never staging.
"""
import math
import operator
from typing import NamedTuple

import numpy as np

from ..core import dtypes
from .. import lax
from ..lax import linalg as lax_linalg
from . import creation, reductions, shapes, ufuncs
from ._promote import broadcast_to_shape, check_arraylike, promote_dtypes, promote_dtypes_inexact
from .contractions import cross as _cross, diagonal_of_axes, matmul, outer as _outer, tensordot, vecdot
from .eager_programs import wrap_module_functions


class EighResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


class EigResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


class QRResult(NamedTuple):
    Q: object
    R: object


class SlogdetResult(NamedTuple):
    sign: object
    logabsdet: object


class SVDResult(NamedTuple):
    U: object
    S: object
    Vh: object


# --- argument handling -------------------------------------------------------------------


def _inexact(name, *args):
    check_arraylike(f"jnp.linalg.{name}", *args)
    return promote_dtypes_inexact(*args)


def _check_matrix(name, a, square=True):
    if a.ndim < 2:
        raise ValueError(
            f"jnp.linalg.{name} requires an array of rank >= 2 (a matrix or a batch of matrices), "
            f"got shape {a.shape}."
        )
    if square and a.shape[-1] != a.shape[-2]:
        raise ValueError(
            f"jnp.linalg.{name} requires square matrices in the last two dimensions, got shape "
            f"{a.shape} ({a.shape[-2]} rows, {a.shape[-1]} columns)."
        )


def _matrix(name, a, square=True):
    (a,) = _inexact(name, a)
    _check_matrix(name, a, square)
    return a


def _is_complex(x):
    return dtypes.issubdtype(x.dtype, np.complexfloating)


def _T(x):
    return lax.transpose(x, tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2))


def _H(x):
    return _T(lax.conj(x) if _is_complex(x) else x)


def _diagonal(x):
    """Main diagonals of a batch of matrices: (..., n, n) -> (..., n)."""
    return diagonal_of_axes(x, x.ndim - 2, x.ndim - 1)


def _const(value, like):
    return np.asarray(value, dtype=like.dtype)


def _eye_like(a):
    return broadcast_to_shape(creation.eye(a.shape[-1], dtype=a.dtype), a.shape)


def _broadcast_batch(a, b, b_core):
    """Broadcast the batch dimensions of a (..., n, n) and b (..., <b_core dims>)."""
    batch = lax.broadcast_shapes(a.shape[:-2], b.shape[:b.ndim - b_core])
    return broadcast_to_shape(a, batch + a.shape[-2:]), broadcast_to_shape(b, batch + b.shape[b.ndim - b_core:])


# --- decompositions ----------------------------------------------------------------------


def cholesky(a, *, upper=False, symmetrize_input=True):
    """Cholesky factor: lower L with a = L L^H (upper=True: L^H). NaNs if a is not
    positive definite (JAX does not raise)."""
    a = _matrix("cholesky", a)
    factor = lax_linalg.cholesky(a, symmetrize_input=symmetrize_input)
    return _H(factor) if upper else factor


def _uplo_lower(uplo):
    if uplo not in (None, "L", "U"):
        raise ValueError(f"UPLO must be 'L' or 'U', got {uplo!r}.")
    return uplo != "U"


def eigh(a, UPLO=None, symmetrize_input=True):  # noqa: N803 - NumPy's argument name
    """Eigenvalues (ascending, real) and eigenvectors of Hermitian matrices."""
    a = _matrix("eigh", a)
    v, w = lax_linalg.eigh(a, lower=_uplo_lower(UPLO), symmetrize_input=symmetrize_input)
    return EighResult(w, v)


def eigvalsh(a, UPLO="L", *, symmetrize_input=True):  # noqa: N803
    """Eigenvalues (ascending, real) of Hermitian matrices."""
    return eigh(a, UPLO, symmetrize_input).eigenvalues


def eig(a):
    """Eigenvalues and right eigenvectors of general square matrices (always complex)."""
    a = _matrix("eig", a)
    w, v = lax_linalg.eig(a, compute_left_eigenvectors=False)
    return EigResult(w, v)


def eigvals(a):
    """Eigenvalues of general square matrices (always complex)."""
    a = _matrix("eigvals", a)
    (w,) = lax_linalg.eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)
    return w


def svd(a, full_matrices=True, compute_uv=True, hermitian=False, subset_by_index=None):
    """Singular value decomposition: SVDResult(U, S, Vh), or S when compute_uv=False.

    `hermitian=True` is accepted as the promise NumPy makes it; the general SVD already
    gives the right singular values (descending) and a valid factorization."""
    a = _matrix("svd", a, square=False)
    out = lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv, subset_by_index=subset_by_index)
    return SVDResult(*out) if compute_uv else out


def svdvals(x, /):
    """Singular values, descending."""
    return svd(x, compute_uv=False)


_QR_MODES = {"reduced": False, "complete": True, "r": False}


def qr(a, mode="reduced"):
    """QR decomposition: QRResult(Q, R) for mode 'reduced'/'complete', R alone for 'r'."""
    a = _matrix("qr", a, square=False)
    if mode not in _QR_MODES:
        raise ValueError(f"Unsupported QR decomposition mode {mode!r}: use 'reduced', 'complete' or 'r'.")
    q, r = lax_linalg.qr(a, full_matrices=_QR_MODES[mode])
    return r if mode == "r" else QRResult(q, r)


# --- solves, inverses, determinants ------------------------------------------------------


def _permute_rows(permutation, b):
    """b[..., permutation, :] as a one-hot matrix product (no gather needed)."""
    n = permutation.shape[-1]
    rows = lax.broadcast_in_dim(permutation, permutation.shape + (n,), tuple(range(permutation.ndim)))
    cols = lax.broadcasted_iota(permutation.dtype, rows.shape, rows.ndim - 1)
    onehot = lax.convert_element_type(lax.eq(rows, cols), b.dtype)
    return lax.dot_general(onehot, b, (((onehot.ndim - 1,), (b.ndim - 2,)), (tuple(range(b.ndim - 2)),) * 2))


def _lu_solve(lu, permutation, b):
    """Solve A x = b from A's LU factors: L U x = P b."""
    y = lax_linalg.triangular_solve(lu, _permute_rows(permutation, b), left_side=True, lower=True, unit_diagonal=True)
    return lax_linalg.triangular_solve(lu, y, left_side=True, lower=False)


def solve(a, b):
    """Solve a x = b for x. b is a vector (..., n) only when it is 1-D (NumPy 2 and JAX);
    otherwise b is (..., n, k); batch dimensions broadcast."""
    a, b = _inexact("solve", a, b)
    _check_matrix("solve", a)
    vector = b.ndim == 1
    if vector:
        b = lax.reshape(b, b.shape + (1,))
    if b.ndim < 2 or b.shape[-2] != a.shape[-1]:
        want = "(n,) or (..., n, k)"
        raise ValueError(
            f"jnp.linalg.solve: b must have shape {want} with n = {a.shape[-1]} to match a, got "
            f"shapes a {a.shape} and b {b.shape if not vector else b.shape[:-1]}."
        )
    a, b = _broadcast_batch(a, b, 2)
    lu, _, permutation = lax_linalg.lu(a)
    x = _lu_solve(lu, permutation, b)
    return lax.reshape(x, x.shape[:-1]) if vector else x


def inv(a):
    """Inverse of square matrices (infinities/NaNs for singular ones, as in JAX)."""
    a = _matrix("inv", a)
    return solve(a, _eye_like(a))


def _lu_parity_and_diagonal(a):
    """(odd, diag): whether the LU row swaps are odd in number, and U's diagonal."""
    lu, pivots, _ = lax_linalg.lu(a)
    steps = lax.broadcasted_iota(pivots.dtype, pivots.shape, pivots.ndim - 1)
    swaps = reductions.sum(ufuncs.not_equal(pivots, steps), axis=-1)
    odd = ufuncs.equal(lax.rem(swaps, _const(2, swaps)), _const(1, swaps))
    return odd, _diagonal(lu)


def det(a):
    """Determinant: product of U's diagonal from LU, times the permutation's sign."""
    a = _matrix("det", a)
    odd, diag = _lu_parity_and_diagonal(a)
    product = reductions.prod(diag, axis=-1)
    return ufuncs.where(odd, lax.neg(product), product)


def slogdet(a, *, method=None):
    """SlogdetResult(sign, logabsdet): det = sign * exp(logabsdet); sign is complex for
    complex input, and (0, -inf) for a singular matrix."""
    a = _matrix("slogdet", a)
    if method not in (None, "lu"):
        raise ValueError(f"jnp.linalg.slogdet: unsupported method {method!r}; use 'lu'.")
    odd, diag = _lu_parity_and_diagonal(a)
    magnitude = ufuncs.abs(diag)
    singular = reductions.any(ufuncs.equal(diag, _const(0, diag)), axis=-1)
    unit = ufuncs.divide(diag, lax.convert_element_type(magnitude, diag.dtype) if _is_complex(diag) else magnitude)
    sign = reductions.prod(unit, axis=-1)
    sign = ufuncs.where(odd, lax.neg(sign), sign)
    sign = ufuncs.where(singular, _const(0, sign), sign)
    logdet = reductions.sum(ufuncs.log(magnitude), axis=-1)
    logdet = ufuncs.where(singular, _const(-np.inf, logdet), logdet)
    return SlogdetResult(sign, logdet)


def matrix_power(a, n):
    """a raised to the integer power n by repeated squaring (n < 0 inverts first)."""
    check_arraylike("jnp.linalg.matrix_power", a)
    (a,) = promote_dtypes(a)
    _check_matrix("matrix_power", a)
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"jnp.linalg.matrix_power: exponent must be an integer, got {n!r}.") from None
    if n == 0:
        return _eye_like(a)
    if n < 0:
        a, n = inv(a), -n
    result = None
    while n:
        if n & 1:
            result = a if result is None else matmul(result, a)
        n >>= 1
        if n:
            a = matmul(a, a)
    return result


def pinv(a, rtol=None, hermitian=False, *, rcond=None):
    """Moore-Penrose pseudo-inverse via SVD; singular values <= rtol * largest are dropped
    (default rtol = 10 * max(m, n) * eps, JAX's)."""
    a = _matrix("pinv", a, square=False)
    m, n = a.shape[-2:]
    if m == 0 or n == 0:
        return creation.zeros(a.shape[:-2] + (n, m), a.dtype)
    rtol = rcond if rtol is None else rtol
    u, s, vh = svd(ufuncs.conj(a) if _is_complex(a) else a, full_matrices=False, hermitian=hermitian)
    if rtol is None:
        rtol = 10.0 * max(m, n) * float(np.finfo(s.dtype).eps)
    (rtol,) = promote_dtypes_inexact(rtol)
    rtol = lax.convert_element_type(rtol, s.dtype)
    if rtol.ndim:  # one tolerance per matrix of the batch
        rtol = lax.expand_dims(rtol, (rtol.ndim,))
    cutoff = ufuncs.multiply(rtol, lax.slice_in_dim(s, 0, 1, 1, s.ndim - 1))
    s = ufuncs.where(ufuncs.greater(s, cutoff), s, _const(np.inf, s))
    s = lax.convert_element_type(s, u.dtype)
    scaled = ufuncs.divide(_T(u), lax.expand_dims(s, (s.ndim,)))
    return matmul(_T(vh), scaled)


def matrix_rank(M, rtol=None, *, tol=None):  # noqa: N803 - NumPy's argument name
    """Number of singular values above the threshold (rtol * largest, default
    max(m, n) * eps; or the absolute `tol`)."""
    (M,) = _inexact("matrix_rank", M)
    if M.ndim < 2:
        nonzero = reductions.any(ufuncs.not_equal(M, _const(0, M)))
        return lax.convert_element_type(nonzero, dtypes.default_int_dtype())
    s = svd(M, full_matrices=False, compute_uv=False)
    if tol is not None:
        (threshold,) = promote_dtypes_inexact(tol)
        threshold = lax.convert_element_type(threshold, s.dtype)
        if threshold.ndim:
            threshold = lax.expand_dims(threshold, (threshold.ndim,))
    else:
        if rtol is None:
            rtol = max(M.shape[-2:]) * float(np.finfo(s.dtype).eps)
        largest = reductions.max(s, axis=-1, keepdims=True, initial=0)
        threshold = ufuncs.multiply(largest, lax.convert_element_type(rtol, s.dtype))
    return reductions.sum(ufuncs.greater(s, threshold), axis=-1)


def lstsq(a, b, rcond=None, *, numpy_resid=False):
    """Least-squares solution of a x = b via SVD: (x, residuals, rank, s). Residuals are
    always returned (||b - a x||^2 per column) unless numpy_resid asks for NumPy's empty ones."""
    a, b = _inexact("lstsq", a, b)
    if a.ndim != 2:
        raise TypeError(f"jnp.linalg.lstsq: a must be two-dimensional, got shape {a.shape}.")
    vector = b.ndim == 1
    if vector:
        b = lax.reshape(b, b.shape + (1,))
    if b.ndim != 2 or b.shape[0] != a.shape[0]:
        raise ValueError(f"jnp.linalg.lstsq: leading dimensions must match and b must be 1-D or 2-D, got shapes {a.shape} and {b.shape}.")
    m, n = a.shape
    if a.size == 0:
        s = creation.zeros((0,), a.dtype)
        rank = creation.zeros((), dtypes.default_int_dtype())
        x = creation.zeros((n,) + b.shape[1:], a.dtype)
    else:
        u, s, vh = svd(a, full_matrices=False)
        eps = float(np.finfo(s.dtype).eps)
        rcond = eps * max(m, n) if rcond is None else (eps if rcond < 0 else rcond)
        keep = ufuncs.greater_equal(s, ufuncs.multiply(_const(rcond, s), lax.index_in_dim(s, 0, 0, keepdims=False)))
        rank = reductions.sum(keep)
        safe = lax.convert_element_type(ufuncs.where(keep, s, _const(1, s)), a.dtype)
        s_inv = ufuncs.where(keep, ufuncs.divide(_const(1, safe), safe), _const(0, safe))
        uhb = matmul(_H(u), b)
        x = matmul(_H(vh), ufuncs.multiply(lax.expand_dims(s_inv, (1,)), uhb))
    if numpy_resid and m <= n:
        # NumPy's empty residuals; the rank-deficient case is value-dependent, so it is not
        # decided here (residuals are returned)
        resid = creation.zeros((0,), s.dtype)
    else:
        err = ufuncs.subtract(b, matmul(a, x))
        resid = reductions.sum(ufuncs.real(ufuncs.multiply(err, ufuncs.conj(err))) if _is_complex(err) else ufuncs.multiply(err, err), axis=0)
    if vector:
        x = lax.reshape(x, (n,))
    return x, resid, rank, s


def multi_dot(arrays, *, precision=None):
    """Chained matrix product in the cheapest association order (static shapes). The first
    array may be 1-D (a row vector) and the last 1-D (a column vector)."""
    arrays = list(arrays)
    if len(arrays) < 2:
        raise ValueError(f"jnp.linalg.multi_dot requires at least two arrays, got {len(arrays)}.")
    check_arraylike("jnp.linalg.multi_dot", *arrays)
    arrays = promote_dtypes(*arrays)
    first_vec, last_vec = arrays[0].ndim == 1, arrays[-1].ndim == 1
    if first_vec:
        arrays[0] = lax.reshape(arrays[0], (1,) + arrays[0].shape)
    if last_vec:
        arrays[-1] = lax.reshape(arrays[-1], arrays[-1].shape + (1,))
    for i, x in enumerate(arrays):
        if x.ndim != 2:
            raise ValueError(f"jnp.linalg.multi_dot: array {i} must be 2-D (only the first and last may be 1-D), got shape {x.shape}.")
    order = _chain_order([x.shape[0] for x in arrays] + [arrays[-1].shape[1]])
    out = _multiply_chain(arrays, order, 0, len(arrays) - 1)
    if first_vec:
        out = lax.squeeze(out, (0,))
    if last_vec:
        out = lax.squeeze(out, (out.ndim - 1,))
    return out


def _chain_order(dims):
    """Classic matrix-chain dynamic programme: split[i][j] is where to split arrays i..j."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def _multiply_chain(arrays, split, i, j):
    if i == j:
        return arrays[i]
    k = split[i][j]
    return matmul(_multiply_chain(arrays, split, i, k), _multiply_chain(arrays, split, k + 1, j))


def tensorsolve(a, b, axes=None):
    """Solve tensordot(a, x, x.ndim) = b for x."""
    a, b = _inexact("tensorsolve", a, b)
    if axes is not None:
        moved = [ax % a.ndim for ax in axes]
        a = lax.transpose(a, [i for i in range(a.ndim) if i not in moved] + moved)
    x_shape = a.shape[b.ndim:]
    size = math.prod(x_shape)
    if a.size != size * size or math.prod(a.shape[:b.ndim]) != size or a.shape[:b.ndim] != b.shape:
        raise ValueError(
            f"jnp.linalg.tensorsolve: a's leading dimensions must equal b's shape and their "
            f"product the product of the remaining ones; got shapes {a.shape} and {b.shape}."
        )
    x = solve(lax.reshape(a, (size, size)), lax.reshape(b, (size,)))
    return lax.reshape(x, x_shape)


def tensorinv(a, ind=2):
    """Inverse with respect to tensordot(., ., ind): shape a.shape[ind:] + a.shape[:ind]."""
    (a,) = _inexact("tensorinv", a)
    ind = operator.index(ind)
    if ind <= 0:
        raise ValueError(f"jnp.linalg.tensorinv: ind must be a positive integer, got {ind}.")
    rows = math.prod(a.shape[:ind])
    if rows * rows != a.size:
        raise ValueError(f"jnp.linalg.tensorinv: prod(a.shape[:ind]) must equal prod(a.shape[ind:]), got shape {a.shape} with ind={ind}.")
    return lax.reshape(inv(lax.reshape(a, (rows, rows))), a.shape[ind:] + a.shape[:ind])


def cond(x, p=None):
    """Condition number in the given norm (2-norm ratio of singular values by default);
    infinite for singular matrices."""
    x = _matrix("cond", x, square=p not in (None, 2, -2))
    if p in (None, 2, -2):
        s = svd(x, compute_uv=False)
        first = lax.index_in_dim(s, 0, s.ndim - 1, keepdims=False)
        last = lax.index_in_dim(s, -1, s.ndim - 1, keepdims=False)
        return ufuncs.divide(last, first) if p == -2 else ufuncs.divide(first, last)
    r = ufuncs.multiply(norm(x, ord=p, axis=(-2, -1)), norm(inv(x), ord=p, axis=(-2, -1)))
    # a singular x gives NaN from inf * 0; report it as infinitely ill-conditioned
    x_has_nan = reductions.any(ufuncs.not_equal(x, x), axis=(-2, -1))
    r_nan = ufuncs.not_equal(r, r)
    return ufuncs.where(ufuncs.logical_and(r_nan, ufuncs.logical_not(x_has_nan)), _const(np.inf, r), r)


# --- norms -------------------------------------------------------------------------------


def _abs_squared_sum(x, axis, keepdims):
    sq = ufuncs.real(ufuncs.multiply(x, ufuncs.conj(x))) if _is_complex(x) else ufuncs.multiply(x, x)
    return reductions.sum(sq, axis=axis, keepdims=keepdims)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):  # noqa: A002 - NumPy's name
    """Vector p-norm over `axis` (all axes flattened when None)."""
    (x,) = _inexact("vector_norm", x)
    if axis is None:
        out = _vector_norm(lax.reshape(x, (x.size,)), ord, 0, False)
        return lax.reshape(out, (1,) * x.ndim) if keepdims else out
    return _vector_norm(x, ord, axis, keepdims)


def _vector_norm(x, ord, axis, keepdims):  # noqa: A002
    if ord is None or ord == 2:
        return ufuncs.sqrt(_abs_squared_sum(x, axis, keepdims))
    if isinstance(ord, str):
        raise ValueError(f"Invalid order {ord!r} for vector norm: use a number, inf or -inf.")
    magnitude = ufuncs.abs(x)
    if ord == np.inf:
        return reductions.max(magnitude, axis=axis, keepdims=keepdims, initial=0)
    if ord == -np.inf:
        return reductions.min(magnitude, axis=axis, keepdims=keepdims)
    if ord == 0:
        nonzero = lax.convert_element_type(ufuncs.not_equal(x, _const(0, x)), magnitude.dtype)
        return reductions.sum(nonzero, axis=axis, keepdims=keepdims)
    if ord == 1:
        return reductions.sum(magnitude, axis=axis, keepdims=keepdims)
    p = _const(ord, magnitude)
    total = reductions.sum(ufuncs.power(magnitude, p), axis=axis, keepdims=keepdims)
    return ufuncs.power(total, _const(1.0 / ord, magnitude))


def _matrix_norm(x, ord, row_axis, col_axis, keepdims):  # noqa: A002
    axes = (row_axis, col_axis)
    if ord is None or ord in ("f", "fro"):
        return ufuncs.sqrt(_abs_squared_sum(x, axes, keepdims))
    if ord in (1, -1, np.inf, -np.inf):
        # 1-norms: largest column sum (sum over rows); inf-norms: largest row sum
        summed, reduced = (row_axis, col_axis) if ord in (1, -1) else (col_axis, row_axis)
        if not keepdims and reduced > summed:
            reduced -= 1
        sums = reductions.sum(ufuncs.abs(x), axis=summed, keepdims=keepdims)
        if ord > 0:
            return reductions.max(sums, axis=reduced, keepdims=keepdims, initial=0)
        return reductions.min(sums, axis=reduced, keepdims=keepdims)
    if ord in ("nuc", 2, -2):
        s = svd(shapes.moveaxis(x, axes, (-2, -1)), compute_uv=False)
        reducer = {"nuc": reductions.sum, 2: reductions.max, -2: reductions.min}[ord]
        y = reducer(s, axis=-1)
        return shapes.expand_dims(y, axes) if keepdims else y
    raise ValueError(f"Invalid order {ord!r} for matrix norm: use None, 'fro', 'nuc', 1, -1, 2, -2, inf or -inf.")


def norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002
    """Vector norm (one axis) or matrix norm (two axes) with NumPy's `ord` values."""
    (x,) = _inexact("norm", x)
    if axis is None:
        if ord is None:  # Frobenius/2-norm of everything, any rank (NumPy's behaviour)
            return ufuncs.sqrt(_abs_squared_sum(x, None, keepdims))
        if x.ndim not in (1, 2):
            raise ValueError(f"Improper number of dimensions to norm: shape {x.shape} with ord={ord!r}; pass axis.")
        axis = tuple(range(x.ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    axes = tuple(_canonical_axis(a, x.ndim) for a in axes)
    if len(axes) == 1:
        return _vector_norm(x, 2 if ord is None else ord, axes[0], keepdims)
    if len(axes) == 2:
        if axes[0] == axes[1]:
            raise ValueError(f"Duplicate axes given to norm: {axis}.")
        return _matrix_norm(x, ord, axes[0], axes[1], keepdims)
    raise ValueError(
        f"Improper number of axes for norm: axis={axis}. Pass one axis to compute a vector "
        f"norm, or two axes to compute a matrix norm."
    )


def _canonical_axis(axis, ndim):
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def matrix_norm(x, /, *, keepdims=False, ord="fro"):  # noqa: A002
    """Matrix norm over the last two axes."""
    (x,) = _inexact("matrix_norm", x)
    _check_matrix("matrix_norm", x, square=False)
    return _matrix_norm(x, ord, x.ndim - 2, x.ndim - 1, keepdims)


# --- array-API aliases -------------------------------------------------------------------


def matrix_transpose(x, /):
    """Swap the last two axes."""
    check_arraylike("jnp.linalg.matrix_transpose", x)
    (x,) = promote_dtypes(x)
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose requires at least 2 dimensions, got shape {x.shape}.")
    return _T(x)


def outer(x1, x2, /):
    """Outer product of two 1-D arrays."""
    if np.ndim(x1) != 1 or np.ndim(x2) != 1:
        raise ValueError(f"jnp.linalg.outer requires 1-D inputs, got shapes {np.shape(x1)} and {np.shape(x2)}.")
    return _outer(x1, x2)


def cross(x1, x2, /, *, axis=-1):
    """Cross product of 3-vectors along `axis`."""
    if np.shape(x1)[axis] != 3 or np.shape(x2)[axis] != 3:
        raise ValueError(f"jnp.linalg.cross requires 3-vectors along axis {axis}, got shapes {np.shape(x1)} and {np.shape(x2)}.")
    return _cross(x1, x2, axis=axis)


def diagonal(x, /, *, offset=0):
    """The diagonals of the trailing matrices (the Array API's linalg.diagonal)."""
    return shapes.diagonal(x, offset=offset, axis1=-2, axis2=-1)


def trace(x, /, *, offset=0, dtype=None):
    """The traces of the trailing matrices (the Array API's linalg.trace)."""
    return shapes.trace(x, offset=offset, axis1=-2, axis2=-1, dtype=dtype)


# Called eagerly, each is one cached program over its array operands (numpy/eager_programs.py).
wrap_module_functions(globals(), (
    "cholesky", "eigh", "eigvalsh", "eig", "eigvals", "svd", "svdvals", "qr", "inv", "det",
    "slogdet", "matrix_power", "pinv", "cond", "norm", "vector_norm", "matrix_norm", "diagonal",
    "trace",
), operands=1)
wrap_module_functions(globals(), (
    "solve", "lstsq",
), operands=2)

__all__ = [
    "diagonal", "trace", "EighResult", "EigResult", "QRResult", "SlogdetResult", "SVDResult",
    "cholesky", "eigh", "eigvalsh", "eig", "eigvals", "svd", "svdvals", "qr",
    "solve", "inv", "det", "slogdet", "matrix_power", "pinv", "matrix_rank", "lstsq",
    "multi_dot", "tensorsolve", "tensorinv", "cond", "norm", "vector_norm", "matrix_norm",
    "matrix_transpose", "outer", "cross", "matmul", "tensordot", "vecdot",
]
