"""Derivative rules of the linear-algebra primitives (`omnistage.lax.linalg`): cholesky,
eigh, eig, svd, qr, lu, lu_pivots_to_permutation and triangular_solve.

The JVPs are JAX's formulas (`jax/_src/lax/linalg.py`). JAX derives the reverse mode by
transposing them; here each VJP is that transpose written out by hand, step by step in the
reverse order of the JVP, so reverse mode costs a few matrix products and solves and never
stages the forward formulas. Conventions, as everywhere in autodiff:
- Complex numbers follow JAX: a VJP is the plain transpose of the JVP for the real pairing
  Re(sum(a * b)), never conjugated. So the transpose of `x @ y` in x is `ct @ y^T` (not y^H),
  `conj`'s transpose is `conj`, and `real`'s is the embedding `complex(ct, 0)`.
- cholesky and eigh differentiate as if the operand were Hermitian (the `lax` wrappers
  symmetrize it, which makes the composite derivative exact); eig, eigh and svd assume
  distinct eigen/singular values, and eig's eigenvectors follow LAPACK's normalisation (unit
  norm, largest component real), as in JAX.
- Integer outputs (LU pivots and permutations) carry no tangent.
Every rule is written with lax primitives that have rules themselves (the linalg ones
included), so derivatives of any order work. Imports lax and the rule tables only.
"""
import functools

import numpy as np

from ..core import dtypes
from ..core.array import aval_of
from ..lax import contractions as C
from ..lax import elementwise as E
from ..lax import linalg as L
from ..lax import reductions as RD
from ..lax import shapes as S
from . import zeros as Z
from .rules import JVP, VJP

# --- matrix helpers over the trailing two dimensions -----------------------------------


def _shape(x):
    return tuple(aval_of(x).shape)


def _dtype(x):
    return aval_of(x).dtype


def _is_complex(x):
    return dtypes.is_complex(_dtype(x))


def _c(x, value):
    """`value` as a typed scalar of `x`'s dtype (programs never promote literals)."""
    return np.asarray(value, dtype=_dtype(x))[()]


def _T(x):
    nd = len(_shape(x))
    return S.transpose(x, tuple(range(nd - 2)) + (nd - 1, nd - 2))


def _conj(x):
    return E.conj(x) if _is_complex(x) else x


def _H(x):
    return _T(_conj(x))


def _mm(a, b):
    """Batched matrix product a @ b (equal leading batch dimensions)."""
    nd = len(_shape(a))
    batch = tuple(range(nd - 2))
    return C.dot_general(a, b, (((nd - 1,), (nd - 2,)), (batch, batch)))


def _const_matrix(m, like, shape=None):
    """The NumPy matrix `m` in `like`'s dtype, broadcast over the batch of `shape`."""
    shape = _shape(like) if shape is None else shape
    nd = len(shape)
    return S.broadcast_in_dim(np.asarray(m, dtype=_dtype(like)), shape, (nd - 2, nd - 1))


def _eye(like, shape=None):
    shape = _shape(like) if shape is None else shape
    return _const_matrix(np.eye(shape[-2], shape[-1]), like, shape)


def _tril(x, k=0):
    rows, cols = _shape(x)[-2:]
    return E.mul(x, _const_matrix(np.tri(rows, cols, k), x))


def _triu(x, k=0):
    rows, cols = _shape(x)[-2:]
    return E.mul(x, _const_matrix(1 - np.tri(rows, cols, k - 1), x))


def _diagonal(x):
    """(..., n, n) -> (..., n)."""
    return RD.reduce_sum(E.mul(x, _eye(x)), (len(_shape(x)) - 1,))


def _diag_matrix(d):
    """(..., n) -> (..., n, n) with `d` on the diagonal."""
    shape = _shape(d) + _shape(d)[-1:]
    return E.mul(_rows(d), _eye(d, shape))


def _rows(s):
    """(..., k) -> (..., k, k) with entry [i, j] = s[j] (s as a row, repeated)."""
    nd = len(_shape(s))
    return S.broadcast_in_dim(s, _shape(s) + _shape(s)[-1:], tuple(range(nd - 1)) + (nd,))


def _cols(s):
    """(..., k) -> (..., k, k) with entry [i, j] = s[i]."""
    nd = len(_shape(s))
    return S.broadcast_in_dim(s, _shape(s) + _shape(s)[-1:], tuple(range(nd)))


def _as_dtype(x, like):
    return E.convert_element_type(x, _dtype(like))


def _real_part_of_ct(ct, x):
    """A cotangent computed in complex arithmetic for a real operand: its real part."""
    if _is_complex(ct) and not _is_complex(x):
        return E.real(ct)
    return ct


def _inverse_gap(w):
    """F[i, j] = 1 / (w[j] - w[i]) off the diagonal and 0 on it (distinct values assumed)."""
    eye = _eye(w, _shape(w) + _shape(w)[-1:])
    gap = E.add(eye, E.sub(_rows(w), _cols(w)))
    return E.sub(E.div(_c(w, 1), gap), eye)


def _slice_last2(x, rows, cols):
    """x[..., rows[0]:rows[1], cols[0]:cols[1]]."""
    shape = _shape(x)
    start = (0,) * (len(shape) - 2) + (rows[0], cols[0])
    limit = shape[:-2] + (rows[1], cols[1])
    return S.slice(x, start, limit)


def _pad_last2(x, rows, cols):
    """Zero-pad the last two dimensions: rows=(before, after), cols=(before, after)."""
    cfg = ((0, 0, 0),) * (len(_shape(x)) - 2) + ((rows[0], rows[1], 0), (cols[0], cols[1], 0))
    return S.pad(x, _c(x, 0), cfg)


def _concat_last2(parts, axis):
    """Concatenate along -2 (axis=0) or -1 (axis=1) of the matrices."""
    nd = len(_shape(parts[0]))
    return S.concatenate(parts, nd - 2 + axis)


# --- general solves (for eig and full-matrices qr) -----------------------------------------


def _permutation_matrix(permutation, like):
    """P with (P @ b) = b[..., permutation, :], as a one-hot matrix in `like`'s dtype."""
    shape = _shape(permutation)
    n = shape[-1]
    rows = S.broadcast_in_dim(permutation, shape + (n,), tuple(range(len(shape))))
    cols = S.broadcasted_iota(_dtype(permutation), shape + (n,), len(shape))
    return _as_dtype(E.eq(rows, cols), like)


def _solve(a, b):
    """a^{-1} b for square a (..., n, n) and b (..., n, k) by LU with partial pivoting."""
    lu, _, permutation = L.lu(a)
    pb = _mm(_permutation_matrix(permutation, b), b)
    y = L.triangular_solve(lu, pb, left_side=True, lower=True, unit_diagonal=True)
    return L.triangular_solve(lu, y, left_side=True, lower=False)


def _inverse(a):
    return _solve(a, _eye(a))


# --- triangular_solve ----------------------------------------------------------------------


def _tri_mask(g, lower, unit_diagonal):
    """The part of `g` that the solve reads: its triangle (without the diagonal if unit)."""
    k = 1 if unit_diagonal else 0
    return _tril(g, -k) if lower else _triu(g, k)


def _op(g, transpose_a, conjugate_a):
    """op(g) as triangular_solve applies it; op is its own transpose for our pairing."""
    g = _T(g) if transpose_a else g
    return _conj(g) if conjugate_a else g


def _triangular_solve_jvp(primals, tangents, out, **params):
    a, b = primals
    ta, tb = tangents
    terms = []
    if tb is not None:
        terms.append(L.triangular_solve(a, tb, **params))
    if ta is not None:
        # d(op(a)^-1 b) = -op(a)^-1 op(da) x  (left), -x op(da) op(a)^-1 (right)
        g = E.neg(_op(_tri_mask(ta, params["lower"], params["unit_diagonal"]), params["transpose_a"], params["conjugate_a"]))
        rhs = _mm(g, out) if params["left_side"] else _mm(out, g)
        terms.append(L.triangular_solve(a, rhs, **params))
    return Z.add_all(terms)


def _triangular_solve_ct_b(ct, a, params):
    """The transpose of b -> solve(a, b): a solve with op(a) transposed (not conjugated)."""
    return L.triangular_solve(a, ct, **dict(params, transpose_a=not params["transpose_a"]))


def _triangular_solve_ct_a(ct_b, x, params):
    g = _mm(ct_b, _T(x)) if params["left_side"] else _mm(_T(x), ct_b)
    g = _op(E.neg(g), params["transpose_a"], params["conjugate_a"])
    return _tri_mask(g, params["lower"], params["unit_diagonal"])


def _triangular_solve_vjp(ct, ins, out, **params):
    a, _ = ins
    # a's cotangent is built from b's: staged once when both are needed
    ct_b = functools.cache(lambda: _triangular_solve_ct_b(ct, a, params))
    return [lambda: _triangular_solve_ct_a(ct_b(), out, params), ct_b]


JVP["triangular_solve"], VJP["triangular_solve"] = _triangular_solve_jvp, _triangular_solve_vjp


# --- cholesky ------------------------------------------------------------------------------
# dL = L phi(L^-1 dA L^-H), phi: lower triangle with the diagonal halved (Murray, 2016).


def _phi(x):
    n = _shape(x)[-1]
    return E.mul(x, _const_matrix(np.tri(n) - 0.5 * np.eye(n), x))


def _cholesky_jvp(primals, tangents, out):
    (t,) = tangents
    tmp = L.triangular_solve(out, t, left_side=False, lower=True, transpose_a=True, conjugate_a=True)
    inner = L.triangular_solve(out, tmp, left_side=True, lower=True)
    return _mm(out, _phi(inner))


def _cholesky_vjp(ct, ins, out):
    def ct_x():
        g = _phi(_mm(_T(out), ct))
        g = L.triangular_solve(out, g, left_side=True, lower=True, transpose_a=True)
        return L.triangular_solve(out, g, left_side=False, lower=True, conjugate_a=True)

    return [ct_x]


JVP["cholesky"], VJP["cholesky"] = _cholesky_jvp, _cholesky_vjp


# --- eigh ----------------------------------------------------------------------------------
# With P = V^H dA V: dV = V (F * P), dw = Re diag(P), F[i, j] = 1 / (w[j] - w[i]).


def _eigh_jvp(primals, tangents, out, *, lower, sort_eigenvalues=True):
    (t,) = tangents
    v, w = out
    p = _mm(_mm(_H(v), t), v)
    dv = _mm(v, E.mul(_as_dtype(_inverse_gap(w), v), p))
    dw = _diagonal(E.real(p) if _is_complex(p) else p)
    return [dv, dw]


def _eigh_vjp(cts, ins, out, *, lower, sort_eigenvalues=True):
    ct_v, ct_w = cts
    v, w = out

    def ct_x():
        terms = []
        if ct_v is not None:
            terms.append(E.mul(_as_dtype(_inverse_gap(w), v), _mm(_T(v), ct_v)))
        if ct_w is not None:
            terms.append(_diag_matrix(_as_dtype(ct_w, v)))
        return _mm(_mm(_conj(v), Z.add_all(terms)), _T(v))

    return [ct_x]


JVP["eigh"], VJP["eigh"] = _eigh_jvp, _eigh_vjp


# --- eig -----------------------------------------------------------------------------------
# Nondegenerate perturbation theory (JAX's `_eig_vec_jvp`): with P = V^-1 dA V, dw = diag(P)
# and dV = U + V diag(c), U = V (F * P); c fixes LAPACK's normalisation of each column v_j
# (unit norm, largest component k_j real):
#   c_j = -Re(v_j^H u_j) - i Im(u[k_j, j]) / Re(v[k_j, j]).
# Left eigenvectors are the right eigenvectors of A^H (eigenvalues conj(w)).


def _largest_mask(v):
    """1 at each column's largest-magnitude entry (the one LAPACK makes real), else 0."""
    shape = _shape(v)
    k = RD.argmax(E.abs(v), len(shape) - 2, np.int32)
    k = S.broadcast_in_dim(k, shape, tuple(range(len(shape) - 2)) + (len(shape) - 1,))
    rows = S.broadcasted_iota(np.int32, shape, len(shape) - 2)
    return _as_dtype(E.eq(rows, k), v)


def _col_sum(x):
    return RD.reduce_sum(x, (len(_shape(x)) - 2,))


def _spread_rows(c, like):
    """(..., n) -> (..., n, n) with entry [i, j] = c[j]."""
    return S.broadcast_in_dim(c, _shape(like), tuple(range(len(_shape(c)) - 1)) + (len(_shape(like)) - 1,))


class _EigFrame:
    """The fixed quantities of one eigenvector derivative: eigenvalues w, vectors v (columns),
    v^-1, the gap matrix F, the normalisation mask and the real largest components."""

    def __init__(self, w, v):
        self.w, self.v, self.v_inv = w, v, _inverse(v)

    # staged on first use: the eigenvalue-only derivative needs none of them
    @functools.cached_property
    def gap(self):
        return _inverse_gap(self.w)

    @functools.cached_property
    def mask(self):
        return _largest_mask(self.v)

    @functools.cached_property
    def big(self):
        return E.real(_col_sum(E.mul(self.mask, self.v)))

    def jvp(self, da):
        """(dw, dv) for the tangent da (complex)."""
        v = self.v
        p = _mm(_mm(self.v_inv, da), v)
        u = _mm(v, E.mul(self.gap, p))
        re = E.neg(E.real(_col_sum(E.mul(E.conj(v), u))))
        im = E.neg(E.div(E.imag(_col_sum(E.mul(self.mask, u))), self.big))
        dv = E.add(u, E.mul(v, _spread_rows(E.complex(re, im), v)))
        return _diagonal(p), dv

    def vjp(self, ct_w, ct_v):
        """The cotangent of da from those of dw and dv (either may be None)."""
        v = self.v
        ct_p = None
        if ct_v is not None:
            ct_c = _col_sum(E.mul(v, ct_v))  # transpose of v * c[None, :]
            ct_re, ct_im = E.real(ct_c), E.neg(E.imag(ct_c))  # transpose of complex(re, im)
            zero = _c(ct_re, 0)
            from_re = E.mul(E.conj(v), _spread_rows(E.complex(E.neg(ct_re), zero), v))
            from_im = E.mul(self.mask, _spread_rows(E.complex(zero, E.div(ct_im, self.big)), v))
            ct_u = E.add(ct_v, E.add(from_re, from_im))
            ct_p = E.mul(self.gap, _mm(_T(v), ct_u))
        if ct_w is not None:
            ct_p = Z.add(ct_p, _diag_matrix(ct_w))
        return _mm(_mm(_T(self.v_inv), ct_p), _T(v))


def _eig_parts(x, outs, compute_left_eigenvectors, compute_right_eigenvectors):
    """(w, vl or None, vr): vr is computed again when the primitive did not return it."""
    w = outs[0]
    vl = outs[1] if compute_left_eigenvectors else None
    if compute_right_eigenvectors:
        return w, vl, outs[-1]
    _, vr = L.eig(x, compute_left_eigenvectors=False, compute_right_eigenvectors=True)
    return w, vl, vr


def _eig_jvp(primals, tangents, out, *, compute_left_eigenvectors, compute_right_eigenvectors):
    (x,), (t,) = primals, tangents
    w, vl, vr = _eig_parts(x, out, compute_left_eigenvectors, compute_right_eigenvectors)
    da = _as_dtype(t, w)
    right = _EigFrame(w, vr)
    if not (compute_left_eigenvectors or compute_right_eigenvectors):
        # eigenvalues only: dw = diag(V^-1 dA V), no need for the normalisation terms
        return [_diagonal(_mm(_mm(right.v_inv, da), vr))]
    dw, dvr = right.jvp(da)
    touts = [dw]
    if compute_left_eigenvectors:
        touts.append(_EigFrame(E.conj(w), vl).jvp(_H(da))[1])
    if compute_right_eigenvectors:
        touts.append(dvr)
    return touts


def _eig_vjp(cts, ins, out, *, compute_left_eigenvectors, compute_right_eigenvectors):
    (x,) = ins
    ct_w = cts[0]
    ct_vl = cts[1] if compute_left_eigenvectors else None
    ct_vr = cts[-1] if compute_right_eigenvectors else None

    def ct_x():
        w, vl, vr = _eig_parts(x, out, compute_left_eigenvectors, compute_right_eigenvectors)
        ct = None
        if ct_w is not None or ct_vr is not None:
            ct = _EigFrame(w, vr).vjp(ct_w, ct_vr)
        if ct_vl is not None:
            ct = Z.add(ct, _H(_EigFrame(E.conj(w), vl).vjp(None, ct_vl)))
        return None if ct is None else _real_part_of_ct(ct, x)

    return [ct_x]


JVP["eig"], VJP["eig"] = _eig_jvp, _eig_vjp


# --- svd -----------------------------------------------------------------------------------
# JAX's `_svd_jvp_rule`: with dS = U^H dA V, ds = Re diag(dS),
#   dU = U (F * (dS s + (dS s)^H) + (dS - dS^H)/2 * diag(1/s)) [+ (I - U U^H) dA V / s  if m > n]
#   dV = V (F * (s dS + (s dS)^H))                          [+ (I - V V^H) dA^H U / s if n > m]
# with F[i, j] = 1 / (s[j]^2 - s[i]^2). Full U/V of a non-square matrix have no derivative
# (as in JAX); `compute_uv=False` computes the thin vectors to differentiate s.


class _SvdFrame:
    """The thin SVD a = U diag(s) V^H, and the fixed matrices of its derivative."""

    def __init__(self, u, s, vh):
        self.u, self.vh, self.v = u, vh, _H(vh)
        self.s = s
        self.s_rows = _as_dtype(_rows(s), u)  # [i, j] = s[j]
        self.s_cols = _as_dtype(_cols(s), u)  # [i, j] = s[i]
        gap = E.mul(E.add(_rows(s), _cols(s)), E.sub(_rows(s), _cols(s)))
        eye = _eye(s, _shape(gap))
        self.gap = _as_dtype(E.sub(E.div(_c(s, 1), E.add(gap, eye)), eye), u)
        zero = _as_dtype(E.eq(s, _c(s, 0)), s)
        s_inv = E.sub(E.div(_c(s, 1), E.add(s, zero)), zero)  # 1/s, and 0 where s == 0
        self.half_s_inv = _as_dtype(E.mul(_diag_matrix(s_inv), _c(s, 0.5)), u)

    def ds(self, d_s):
        return _diagonal(E.real(d_s) if _is_complex(d_s) else d_s)

    def jvp(self, da):
        u, v = self.u, self.v
        d_s = _mm(_mm(_H(u), da), v)
        dss, sds = E.mul(self.s_rows, d_s), E.mul(self.s_cols, d_s)
        du = _mm(u, E.add(E.mul(self.gap, E.add(dss, _H(dss))), E.mul(self.half_s_inv, E.sub(d_s, _H(d_s)))))
        dv = _mm(v, E.mul(self.gap, E.add(sds, _H(sds))))
        m, n = _shape(da)[-2:]
        if m > n:
            dav = _mm(da, v)
            du = E.add(du, E.div(E.sub(dav, _mm(u, _mm(_H(u), dav))), self.s_rows_of(dav)))
        if n > m:
            dahu = _mm(_H(da), u)
            dv = E.add(dv, E.div(E.sub(dahu, _mm(v, _mm(self.vh, dahu))), self.s_rows_of(dahu)))
        return self.ds(d_s), du, _H(dv)

    def s_rows_of(self, like):
        """s[j] at every [i, j] of a (..., rows, k) matrix."""
        nd = len(_shape(like))
        return S.broadcast_in_dim(_as_dtype(self.s, like), _shape(like), tuple(range(nd - 2)) + (nd - 1,))

    def vjp(self, ct_u, ct_s, ct_vh, a_shape):
        u, v = self.u, self.v
        m, n = a_shape[-2:]
        ct_ds = None  # cotangent of dS = U^H dA V
        ct_da = None
        if ct_s is not None:
            ct_ds = _diag_matrix(_as_dtype(ct_s, u))
        if ct_u is not None:
            ct_x = _mm(_T(u), ct_u)
            ct_y = E.mul(self.gap, ct_x)
            ct_dss = E.add(ct_y, _H(ct_y))
            ct_z = E.mul(self.half_s_inv, ct_x)
            ct_ds = Z.add(ct_ds, E.add(E.mul(self.s_rows, ct_dss), E.sub(ct_z, _H(ct_z))))
            if m > n:
                ct_e = E.div(ct_u, self.s_rows_of(ct_u))
                proj = E.sub(ct_e, _mm(_conj(u), _mm(_T(u), ct_e)))
                ct_da = _mm(proj, _T(v))
        if ct_vh is not None:
            ct_dv = _H(ct_vh)
            ct_y = E.mul(self.gap, _mm(_T(v), ct_dv))
            ct_ds = Z.add(ct_ds, E.mul(self.s_cols, E.add(ct_y, _H(ct_y))))
            if n > m:
                ct_e = E.div(ct_dv, self.s_rows_of(ct_dv))
                proj = E.sub(ct_e, _mm(_T(self.vh), _mm(_T(v), ct_e)))
                ct_da = Z.add(ct_da, _H(_mm(proj, _T(u))))
        if ct_ds is not None:
            ct_da = Z.add(ct_da, _mm(_mm(_conj(u), ct_ds), _T(v)))
        return ct_da


def _svd_frame(x, outs, full_matrices, compute_uv):
    m, n = _shape(x)[-2:]
    if compute_uv and full_matrices and m != n:
        raise NotImplementedError(
            f"The derivative of svd with full_matrices=True is only defined for square "
            f"matrices (as in JAX), got shape {_shape(x)}; use full_matrices=False."
        )
    if compute_uv:
        return _SvdFrame(*outs)
    return _SvdFrame(*L.svd(x, full_matrices=False, compute_uv=True))


def _svd_jvp(primals, tangents, out, *, full_matrices, compute_uv):
    (x,), (t,) = primals, tangents
    frame = _svd_frame(x, out, full_matrices, compute_uv)
    ds, du, dvh = frame.jvp(t)
    return [du, ds, dvh] if compute_uv else [ds]


def _svd_vjp(cts, ins, out, *, full_matrices, compute_uv):
    (x,) = ins
    ct_u, ct_s, ct_vh = cts if compute_uv else (None, cts[0], None)

    def ct_x():
        frame = _svd_frame(x, out, full_matrices, compute_uv)
        ct = frame.vjp(ct_u, ct_s, ct_vh, _shape(x))
        return None if ct is None else _real_part_of_ct(ct, x)

    return [ct_x]


JVP["svd"], VJP["svd"] = _svd_jvp, _svd_vjp


# --- qr ------------------------------------------------------------------------------------
# JAX's rule. Thin (m >= n): with Y = Q^H dA R^-1 and the skew part
#   dO = tril(Y, -1) - tril(Y, -1)^H + I * i Im(Y),
# dQ = Q (dO - Y) + dA R^-1 and dR = (Y - dO) R. Wide (m < n): the square block
# A1 = Q R1 as above, and dR2 = dQ^H A2 + Q^H dA2. Complete Q of a tall matrix: the extra
# columns follow arXiv:2409.13374 (eqs. 32-33).


def _imag_diagonal(y):
    """I * (y - Re y): i Im(y) on the diagonal (zero for real y; self-transpose)."""
    return E.mul(_eye(y), E.sub(y, _as_dtype(E.real(y), y)))


def _skew(y):
    lower = _tril(y, -1)
    out = E.sub(lower, _H(lower))
    return E.add(out, _imag_diagonal(y)) if _is_complex(y) else out


def _skew_transpose(c):
    out = _tril(E.sub(c, _H(c)), -1)
    return E.add(out, _imag_diagonal(c)) if _is_complex(c) else out


def _thin_qr_jvp(q, r, dx):
    dx_rinv = L.triangular_solve(r, dx)  # dx R^-1
    y = _mm(_H(q), dx_rinv)
    do = _skew(y)
    dq = E.add(_mm(q, E.sub(do, y)), dx_rinv)
    dr = _mm(E.sub(y, do), r)
    return dq, dr


def _thin_qr_vjp(q, r, ct_q, ct_r):
    """Transpose of `_thin_qr_jvp`: the cotangent of dx (ct_q, ct_r may be None)."""
    ct_dx_rinv = ct_q
    g = None  # cotangent of (Y - dO)
    if ct_r is not None:
        g = _mm(ct_r, _T(r))
    if ct_q is not None:
        g = Z.add(g, E.neg(_mm(_T(q), ct_q)))
    if g is None:
        return None
    ct_do = E.neg(g)
    ct_y = E.add(g, _skew_transpose(ct_do))
    ct_dx_rinv = Z.add(ct_dx_rinv, _mm(_conj(q), ct_y))
    return L.triangular_solve(r, ct_dx_rinv, transpose_a=True)


def _qr_jvp(primals, tangents, out, *, full_matrices):
    (x,), (dx,) = primals, tangents
    q, r = out
    m, n = _shape(x)[-2:]
    if m < n:
        x2, dx1, dx2 = _slice_last2(x, (0, m), (m, n)), _slice_last2(dx, (0, m), (0, m)), _slice_last2(dx, (0, m), (m, n))
        dq, dr1 = _thin_qr_jvp(q, _slice_last2(r, (0, m), (0, m)), dx1)
        dr2 = E.add(_mm(_H(dq), x2), _mm(_H(q), dx2))
        return [dq, _concat_last2([dr1, dr2], 1)]
    if not full_matrices or m == n:
        return list(_thin_qr_jvp(q, r, dx))
    q_mn, r_nn = _slice_last2(q, (0, m), (0, n)), _slice_last2(r, (0, n), (0, n))
    dq_mn, dr_nn = _thin_qr_jvp(q_mn, r_nn, dx)
    z_h, b = _complete_q_terms(q, n)
    dq_nn, dq_pn = _slice_last2(dq_mn, (0, n), (0, n)), _slice_last2(dq_mn, (n, m), (0, n))
    d = E.sub(dq_pn, _mm(_H(z_h), dq_nn))
    dq_mp = E.sub(_mm(dq_mn, z_h), _mm(b, _H(d)))
    return [_concat_last2([dq_mn, dq_mp], 1), _pad_last2(dr_nn, (0, m - n), (0, 0))]


def _complete_q_terms(q, n):
    """(Z^H, Q_mn + Q_mp Z) with Z = Q_pn (Q_nn - I)^-1 (arXiv:2409.13374, eq. 33)."""
    m = _shape(q)[-1]
    q_nn, q_pn = _slice_last2(q, (0, n), (0, n)), _slice_last2(q, (n, m), (0, n))
    z_h = _solve(_H(E.sub(q_nn, _eye(q_nn))), _H(q_pn))
    b = E.add(_slice_last2(q, (0, m), (0, n)), _mm(_slice_last2(q, (0, m), (n, m)), _H(z_h)))
    return z_h, b


def _qr_vjp(cts, ins, out, *, full_matrices):
    (x,) = ins
    q, r = out
    ct_q, ct_r = cts
    m, n = _shape(x)[-2:]

    def wide():
        x2 = _slice_last2(x, (0, m), (m, n))
        ct_r1 = ct_r2 = None
        if ct_r is not None:
            ct_r1, ct_r2 = _slice_last2(ct_r, (0, m), (0, m)), _slice_last2(ct_r, (0, m), (m, n))
        ct_dq = ct_q
        if ct_r2 is not None:
            ct_dq = Z.add(ct_dq, _H(_mm(ct_r2, _T(x2))))
        ct_dx1 = Z.instantiate(_thin_qr_vjp(q, _slice_last2(r, (0, m), (0, m)), ct_dq, ct_r1), aval_of(q))
        ct_dx2 = Z.instantiate(None if ct_r2 is None else _mm(_conj(q), ct_r2), aval_of(x2))
        return _concat_last2([ct_dx1, ct_dx2], 1)

    def complete():
        q_mn, r_nn = _slice_last2(q, (0, m), (0, n)), _slice_last2(r, (0, n), (0, n))
        ct_r_nn = None if ct_r is None else _slice_last2(ct_r, (0, n), (0, n))
        ct_q_mn = None
        if ct_q is not None:
            z_h, b = _complete_q_terms(q, n)
            ct_q_mn, ct_q_mp = _slice_last2(ct_q, (0, m), (0, n)), _slice_last2(ct_q, (0, m), (n, m))
            ct_d = _H(E.neg(_mm(_T(b), ct_q_mp)))  # through -B (dq_pn - Z dq_nn)^H
            ct_nn = E.neg(_mm(_conj(z_h), ct_d))
            ct_q_mn = E.add(E.add(ct_q_mn, _mm(ct_q_mp, _T(z_h))), _concat_last2([ct_nn, ct_d], 0))
        return _thin_qr_vjp(q_mn, r_nn, ct_q_mn, ct_r_nn)

    if m < n:
        return [wide]
    if full_matrices and m != n:
        return [complete]
    return [lambda: _thin_qr_vjp(q, r, ct_q, ct_r)]


JVP["qr"], VJP["qr"] = _qr_jvp, _qr_vjp


# --- lu ------------------------------------------------------------------------------------
# De Hoog, Anderssen and Lukas: with X = L^-1 P dA U^-1,
#   d(lu) = L tril(X, -1) + triu(X) U
# where L (m, m) is unit lower triangular and U (n, n) upper triangular, both completed
# with the identity where the factorisation of a non-square matrix leaves them short.


def _lu_factors(lu):
    m, n = _shape(lu)[-2:]
    k = min(m, n)
    lower = _tril(_slice_last2(lu, (0, m), (0, k)) if n > k else lu, -1)
    lower = E.add(_pad_last2(lower, (0, 0), (0, m - k)) if m > k else lower, _eye(lu, _shape(lu)[:-2] + (m, m)))
    upper = _triu(_slice_last2(lu, (0, k), (0, n)) if m > k else lu)
    if n > k:
        upper = E.add(_pad_last2(upper, (0, n - k), (0, 0)), _const_matrix(np.diag([0.0] * k + [1.0] * (n - k)), lu, _shape(lu)[:-2] + (n, n)))
    return lower, upper


def _lu_jvp(primals, tangents, out):
    (t,) = tangents
    lu, _, permutation = out
    lower, upper = _lu_factors(lu)
    pt = _mm(_permutation_matrix(permutation, t), t)
    la = L.triangular_solve(lower, pt, left_side=True, lower=True, unit_diagonal=True)
    x = L.triangular_solve(upper, la, left_side=False, lower=False)
    return [E.add(_mm(lower, _tril(x, -1)), _mm(_triu(x), upper)), None, None]


def _lu_vjp(cts, ins, out):
    ct = cts[0]
    lu, _, permutation = out

    def ct_a():
        lower, upper = _lu_factors(lu)
        ct_x = E.add(_tril(_mm(_T(lower), ct), -1), _triu(_mm(ct, _T(upper))))
        ct_la = L.triangular_solve(upper, ct_x, left_side=False, lower=False, transpose_a=True)
        ct_pt = L.triangular_solve(lower, ct_la, left_side=True, lower=True, unit_diagonal=True, transpose_a=True)
        return _mm(_T(_permutation_matrix(permutation, ct_pt)), ct_pt)

    return [None if ct is None else ct_a]


JVP["lu"], VJP["lu"] = _lu_jvp, _lu_vjp

# integer output: registered so every linalg primitive has rules (its tangent is always zero)
JVP["lu_pivots_to_permutation"] = lambda primals, tangents, out, **params: None
VJP["lu_pivots_to_permutation"] = lambda ct, ins, out, **params: [None]
