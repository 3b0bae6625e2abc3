"""Per-matrix general (non-symmetric) eigendecomposition for the CUDA eig kernel (`eig_emit`),
called from the generated kernel as `_ed.<name>(...)`, one GPU thread per matrix.

Complex arithmetic is spelled out on (real, imaginary) pairs of float64 with `math` (Numba
CUDA's complex support is partial): a complex n x n matrix is two float64 views, `ar` and
`ai`, of scratch buffers the host driver allocated. Real and complex inputs take the same
complex path, as LAPACK's zgeev would, in float64; the kernel rounds the results out. The
phases, in the order the kernel calls them:

* `scale_to_unit`: the matrix times 2**-e, its largest component in [0.5, 1) (exact), so that
  no product below overflows or underflows needlessly; eigenvalues are scaled back.
* `balance`: zgebal's diagonal scaling by powers of two (not its permutations), undone on
  the eigenvectors by `unbalance`.
* `hessenberg`: Householder reduction H = Q^H A Q (Q accumulated when vectors are wanted).
* `schur`: single-shift complex QR iteration on H (zlahqr's scheme: Wilkinson shifts,
  exceptional shifts every 10 iterations, the Ahues-Tisseur deflation test, at most
  30 * max(10, n) iterations per eigenvalue) to the Schur form T = Q^H A Q; False if it did
  not converge (the kernel then writes NaN, as the CPU path does where LAPACK fails). Without
  vectors only the active block is updated, as zlahqr does without WANTT.
* `eigenvalues`: the diagonal of T, scaled back.
* `left_vectors`, `right_vectors`: eigenvectors of T by back substitution (ztrevc: a
  near-zero pivot T[i,i] - T[k,k] is raised to max(ulp |T[k,k]|, smlnum), and the partial
  solution is rescaled by powers of two before it could overflow), transformed back by Q.
  Left ones first: the right ones overwrite Q.
* `unbalance`, then `normalize`: unit 2-norm columns whose largest-magnitude component (the
  first of equal ones) is real and positive, as zgeev returns them. Left eigenvectors u
  satisfy u^H A = w u^H (JAX's and LAPACK's definition).

Eigenvalues come in the order of T's diagonal (a triangular matrix keeps its own), which need
not be LAPACK's (whose real path, for one, puts each conjugate pair's positive imaginary part
first): JAX documents no order. Matrices without a basis of eigenvectors have no unique answer; here
their right vectors are nearly parallel, as LAPACK's are, and their left vectors are those of
T (the CPU path inverts the right-vector matrix instead).

Like `decomp_device`: plain Python under Numba's CUDA simulator, else Numba functions inlined
into the kernel (inline='always'). The phases call nothing bigger than small helpers (Numba's
inlining cost grows with the square of the callee's size), and no division can divide by zero
(plain Python raises where CUDA gives inf).
"""
import math

import numba
from numba import config as _numba_config

from .decomp_device import fill_nan, fill_nan_vector  # noqa: F401 - the kernel's NaN fill (_ed.*)

SIMULATED = bool(_numba_config.ENABLE_CUDASIM)

_ULP = 2.0 ** -52  # dlamch('P')
_SAFMIN = 2.0 ** -1022  # dlamch('S')
_BIG = 2.0 ** 500  # a back-substitution entry is kept below _BIG times its pivot...
_SHRINK = 2.0 ** -300  # ...by rescaling the partial solution by this
_MAX_SHRINKS = 8  # enough: entries stay below ~2**501, pivots above ~2**-970
_SFMIN1 = _SAFMIN / _ULP  # zgebal's bounds on the accumulated balancing factors
_SFMAX1 = 1.0 / _SFMIN1
_SFMIN2 = 2.0 * _SFMIN1
_SFMAX2 = 1.0 / _SFMIN2
_MAX_BALANCE_SWEEPS = 100  # zgebal loops until no row changes; this only bounds bad cases


def _device(fn):
    return fn if SIMULATED else numba.njit(inline="always")(fn)


# --- complex scalars as (real, imag) pairs ---------------------------------------------------


@_device
def _cabs1(re, im):
    """|re| + |im|: LAPACK's cheap modulus for tests and scaling."""
    return math.fabs(re) + math.fabs(im)


@_device
def _cdiv(ar, ai, br, bi):
    """a / b by Smith's method (no squares of b); b must not be zero."""
    if math.fabs(br) >= math.fabs(bi):
        r = bi / br
        d = br + bi * r
        return (ar + ai * r) / d, (ai - ar * r) / d
    r = br / bi
    d = bi + br * r
    return (ar * r + ai) / d, (ai * r - ar) / d


@_device
def _csqrt(re, im):
    """The principal square root."""
    if re == 0.0 and im == 0.0:
        return 0.0, 0.0
    t = math.sqrt(0.5 * (math.hypot(re, im) + math.fabs(re)))
    if re >= 0.0:
        return t, im / (2.0 * t)
    return math.fabs(im) / (2.0 * t), math.copysign(t, im)


@_device
def _rotation(fr, fi, gr, gi):
    """(c, s_re, s_im, r_re, r_im): the plane rotation G = [c, s; -conj(s), c], c real >= 0,
    with G [f; g] = [r; 0] (zlartg)."""
    g = math.hypot(gr, gi)
    if g == 0.0:
        return 1.0, 0.0, 0.0, fr, fi
    f = math.hypot(fr, fi)
    if f == 0.0:
        return 0.0, gr / g, -gi / g, g, 0.0
    norm = math.hypot(f, g)
    pr, pi = fr / f, fi / f  # f / |f|
    return f / norm, (pr * gr + pi * gi) / norm, (pi * gr - pr * gi) / norm, pr * norm, pi * norm


# --- one-loop helpers ------------------------------------------------------------------------


@_device
def _rotate_rows(ar, ai, k, c, sr, si, j0, j1):
    """Rows k and k+1 of a[:, j0:j1] := G times them (G from `_rotation`)."""
    for j in range(j0, j1):
        xr, xi, yr, yi = ar[k, j], ai[k, j], ar[k + 1, j], ai[k + 1, j]
        ar[k, j] = c * xr + (sr * yr - si * yi)
        ai[k, j] = c * xi + (sr * yi + si * yr)
        ar[k + 1, j] = c * yr - (sr * xr + si * xi)  # - conj(s) x + c y
        ai[k + 1, j] = c * yi - (sr * xi - si * xr)


@_device
def _rotate_columns(ar, ai, k, c, sr, si, i0, i1):
    """Columns k and k+1 of a[i0:i1, :] := them times G^H."""
    for i in range(i0, i1):
        xr, xi, yr, yi = ar[i, k], ai[i, k], ar[i, k + 1], ai[i, k + 1]
        ar[i, k] = c * xr + (yr * sr + yi * si)  # x c + y conj(s)
        ai[i, k] = c * xi + (yi * sr - yr * si)
        ar[i, k + 1] = c * yr - (xr * sr - xi * si)  # - x s + y c
        ai[i, k + 1] = c * yi - (xr * si + xi * sr)


@_device
def _ssq_step(scale, ssq, x):
    """One term of a scaled sum of squares: (scale, ssq) with scale**2 * ssq the sum."""
    if x == 0.0:
        return scale, ssq
    if scale < x:
        return x, 1.0 + ssq * (scale / x) * (scale / x)
    return scale, ssq + (x / scale) * (x / scale)


@_device
def _column_norm(ar, ai, col, start, stop):
    """2-norm of a[start:stop, col] without overflow or underflow (dznrm2's scaled sum)."""
    scale, ssq = 0.0, 1.0
    for i in range(start, stop):
        scale, ssq = _ssq_step(scale, ssq, math.fabs(ar[i, col]))
        scale, ssq = _ssq_step(scale, ssq, math.fabs(ai[i, col]))
    return scale * math.sqrt(ssq)


@_device
def _reflect_rows(ar, ai, ur, ui, start, j0):
    """a[start:, j0:] := (I - 2 u u^H) a[start:, j0:], u = u[start:] of unit norm."""
    n = ar.shape[0]
    for j in range(j0, ar.shape[1]):
        dr, di = 0.0, 0.0
        for i in range(start, n):  # d = u^H a[:, j]
            dr += ur[i] * ar[i, j] + ui[i] * ai[i, j]
            di += ur[i] * ai[i, j] - ui[i] * ar[i, j]
        dr, di = 2.0 * dr, 2.0 * di
        for i in range(start, n):
            ar[i, j] -= ur[i] * dr - ui[i] * di
            ai[i, j] -= ur[i] * di + ui[i] * dr


@_device
def _reflect_columns(ar, ai, ur, ui, start):
    """a[:, start:] := a[:, start:] (I - 2 u u^H), u = u[start:] of unit norm."""
    n = ar.shape[1]
    for i in range(ar.shape[0]):
        dr, di = 0.0, 0.0
        for j in range(start, n):  # d = a[i, :] u
            dr += ar[i, j] * ur[j] - ai[i, j] * ui[j]
            di += ar[i, j] * ui[j] + ai[i, j] * ur[j]
        dr, di = 2.0 * dr, 2.0 * di
        for j in range(start, n):
            ar[i, j] -= dr * ur[j] + di * ui[j]  # d conj(u_j)
            ai[i, j] -= di * ur[j] - dr * ui[j]


@_device
def _negligible(hr, hi, k, ihi, smlnum):
    """Whether the subdiagonal H[k, k-1] may be set to zero (zlahqr's test, Ahues and
    Tisseur's refinement of |H[k,k-1]| <= ulp (|H[k-1,k-1]| + |H[k,k]|))."""
    sub = _cabs1(hr[k, k - 1], hi[k, k - 1])
    if sub <= smlnum:
        return True
    tst = _cabs1(hr[k - 1, k - 1], hi[k - 1, k - 1]) + _cabs1(hr[k, k], hi[k, k])
    if tst == 0.0:
        if k >= 2:
            tst += _cabs1(hr[k - 1, k - 2], hi[k - 1, k - 2])
        if k + 1 <= ihi:
            tst += _cabs1(hr[k + 1, k], hi[k + 1, k])
    if sub > _ULP * tst:
        return False
    up = _cabs1(hr[k - 1, k], hi[k - 1, k])
    ab, ba = (sub, up) if sub > up else (up, sub)
    diag = _cabs1(hr[k, k], hi[k, k])
    gap = _cabs1(hr[k - 1, k - 1] - hr[k, k], hi[k - 1, k - 1] - hi[k, k])
    aa, bb = (diag, gap) if diag > gap else (gap, diag)
    s = aa + ab
    bound = _ULP * (bb * (aa / s))
    return ba * (ab / s) <= (bound if bound > smlnum else smlnum)


@_device
def _shift(hr, hi, i, its):
    """The shift of QR iteration `its` on the active block ending at row i: the eigenvalue of
    its trailing 2 x 2 block closer to H[i, i] (Wilkinson's), or every 10th iteration an
    exceptional one that breaks cycles."""
    dr, di = hr[i, i], hi[i, i]
    if its % 10 == 0:
        return dr + 0.75 * _cabs1(hr[i, i - 1], hi[i, i - 1]), di
    br, bi, cr, ci = hr[i - 1, i], hi[i - 1, i], hr[i, i - 1], hi[i, i - 1]
    pr, pi = br * cr - bi * ci, br * ci + bi * cr  # b c
    xr, xi = 0.5 * (hr[i - 1, i - 1] - dr), 0.5 * (hi[i - 1, i - 1] - di)
    yr, yi = _csqrt(xr * xr - xi * xi + pr, 2.0 * xr * xi + pi)  # sqrt(x^2 + b c)
    if xr * yr + xi * yi < 0.0:  # x + y the larger of x +- y
        yr, yi = -yr, -yi
    sr, si = xr + yr, xi + yi
    if sr == 0.0 and si == 0.0:  # x = y = 0: b c = 0 and d is an eigenvalue
        return dr, di
    qr, qi = _cdiv(pr, pi, sr, si)  # the eigenvalue d + x - y = d - b c / (x + y)
    return dr - qr, di - qi


@_device
def _shrink_if_needed(xr, xi, start, stop, sr, si, d):
    """Rescales x[start:stop] and s together until |s| <= _BIG * d; returns s (ztrevc's
    overflow guard, by exact powers of two)."""
    for _ in range(_MAX_SHRINKS):
        if _cabs1(sr, si) <= _BIG * d:
            break
        for j in range(start, stop):
            xr[j] = xr[j] * _SHRINK
            xi[j] = xi[j] * _SHRINK
        sr, si = sr * _SHRINK, si * _SHRINK
    return sr, si


@_device
def _line_norms(ar, ai, i):
    """(2-norm of column i, of row i, largest modulus in column i, in row i)."""
    cs, cq, rs, rq, ca, ra = 0.0, 1.0, 0.0, 1.0, 0.0, 0.0
    for j in range(ar.shape[0]):
        x = math.hypot(ar[j, i], ai[j, i])
        y = math.hypot(ar[i, j], ai[i, j])
        cs, cq = _ssq_step(cs, cq, x)
        rs, rq = _ssq_step(rs, rq, y)
        ca = x if x > ca else ca
        ra = y if y > ra else ra
    return cs * math.sqrt(cq), rs * math.sqrt(rq), ca, ra


@_device
def _balance_factor(c, r, ca, ra):
    """The power of two f that zgebal scales column i by (row i by 1 / f) to bring its column
    norm c and row norm r together; 1.0 when that would not shrink c + r by 5%."""
    f, s, g = 1.0, c + r, r / 2.0
    while c < g and f < _SFMAX2 and c < _SFMAX2 and ca < _SFMAX2 and r > _SFMIN2 and g > _SFMIN2 and ra > _SFMIN2:
        f, c, ca, r, g, ra = f * 2.0, c * 2.0, ca * 2.0, r / 2.0, g / 2.0, ra / 2.0
    g = c / 2.0
    while g >= r and r < _SFMAX2 and ra < _SFMAX2 and f > _SFMIN2 and c > _SFMIN2 and g > _SFMIN2 and ca > _SFMIN2:
        f, c, g, ca, r, ra = f / 2.0, c / 2.0, g / 2.0, ca / 2.0, r * 2.0, ra * 2.0
    return 1.0 if c + r >= 0.95 * s else f


# --- phases ------------------------------------------------------------------------------------


@_device
def finite(ar, ai):
    """Whether the matrix holds no inf or NaN."""
    for i in range(ar.shape[0]):
        for j in range(ar.shape[1]):
            if not (math.isfinite(ar[i, j]) and math.isfinite(ai[i, j])):
                return False
    return True


@_device
def scale_to_unit(ar, ai):
    """Scales a by 2**-e so that its largest component magnitude lies in [0.5, 1); e."""
    big = 0.0
    for i in range(ar.shape[0]):
        for j in range(ar.shape[1]):
            x = math.fabs(ar[i, j])
            y = math.fabs(ai[i, j])
            big = x if x > big else big
            big = y if y > big else big
    if big == 0.0:
        return 0
    e = math.frexp(big)[1]
    for i in range(ar.shape[0]):
        for j in range(ar.shape[1]):
            ar[i, j] = math.ldexp(ar[i, j], -e)  # not times 2**-e: that overflows for subnormal big
            ai[i, j] = math.ldexp(ai[i, j], -e)
    return e


@_device
def balance(ar, ai, d):
    """a := D^-1 a D with D = diag(d) powers of two that bring each row's and column's norms
    together (zgebal's scaling; no permutations), which makes the eigenvalues of badly scaled
    matrices as accurate as LAPACK's. Exact; `unbalance` maps eigenvectors back."""
    n = ar.shape[0]
    for i in range(n):
        d[i] = 1.0
    for _ in range(_MAX_BALANCE_SWEEPS):
        converged = True
        for i in range(n):
            c, r, ca, ra = _line_norms(ar, ai, i)
            if c == 0.0 or r == 0.0:
                continue
            f = _balance_factor(c, r, ca, ra)
            if f == 1.0 or (f < 1.0 and d[i] < 1.0 and f * d[i] <= _SFMIN1) or (
                    f > 1.0 and d[i] > 1.0 and d[i] >= _SFMAX1 / f):
                continue
            d[i] *= f
            converged = False
            for j in range(n):
                ar[i, j], ai[i, j] = ar[i, j] / f, ai[i, j] / f
                ar[j, i], ai[j, i] = ar[j, i] * f, ai[j, i] * f
        if converged:
            return


@_device
def unbalance(vr, vi, d, left):
    """Eigenvectors of `balance`'s D^-1 A D := those of A: right ones D v, left ones D^-1 u."""
    for r in range(vr.shape[0]):
        f = 1.0 / d[r] if left else d[r]
        for k in range(vr.shape[1]):
            vr[r, k], vi[r, k] = vr[r, k] * f, vi[r, k] * f


@_device
def hessenberg(hr, hi, qr, qi, ur, ui, vectors):
    """h := Q^H h Q upper Hessenberg by Householder reflections I - 2 u u^H (u in ur/ui); when
    `vectors`, q := Q. Columns already zero below the subdiagonal are left alone."""
    n = hr.shape[0]
    if vectors:
        for i in range(n):
            for j in range(n):
                qr[i, j] = 1.0 if i == j else 0.0
                qi[i, j] = 0.0
    for k in range(n - 2):
        tail = _column_norm(hr, hi, k, k + 2, n)
        if tail == 0.0:
            continue
        x0r, x0i = hr[k + 1, k], hi[k + 1, k]
        head = math.hypot(x0r, x0i)
        alpha = math.hypot(head, tail)
        pr, pi = (x0r / head, x0i / head) if head > 0.0 else (1.0, 0.0)
        # u = x + p alpha e_1 (no cancellation), |u|^2 = 2 alpha (alpha + head); P x = -p alpha e_1
        unorm = math.sqrt(2.0 * alpha) * math.sqrt(alpha + head)
        ur[k + 1] = pr * ((head + alpha) / unorm)
        ui[k + 1] = pi * ((head + alpha) / unorm)
        for i in range(k + 2, n):
            ur[i] = hr[i, k] / unorm
            ui[i] = hi[i, k] / unorm
        _reflect_rows(hr, hi, ur, ui, k + 1, k + 1)
        hr[k + 1, k] = -pr * alpha
        hi[k + 1, k] = -pi * alpha
        for i in range(k + 2, n):
            hr[i, k] = 0.0
            hi[i, k] = 0.0
        _reflect_columns(hr, hi, ur, ui, k + 1)
        if vectors:
            _reflect_columns(qr, qi, ur, ui, k + 1)


@_device
def schur(hr, hi, qr, qi, vectors):
    """Single-shift QR iteration: Hessenberg h := T (upper triangular, the eigenvalues on its
    diagonal), and when `vectors` q := q Z, so that A = q T q^H. False if some eigenvalue did
    not converge within 30 * max(10, n) iterations."""
    n = hr.shape[0]
    smlnum = _SAFMIN * (n / _ULP)
    itmax = 30 * (n if n > 10 else 10)
    ihi = n - 1
    its = 0
    while ihi > 0:
        low = ihi
        while low > 0 and not _negligible(hr, hi, low, ihi, smlnum):
            low -= 1
        if low > 0:
            hr[low, low - 1] = 0.0
            hi[low, low - 1] = 0.0
        if low == ihi:  # H[ihi, ihi] has converged: deflate
            ihi -= 1
            its = 0
            continue
        if its >= itmax:
            return False
        its += 1
        mur, mui = _shift(hr, hi, ihi, its)
        first_row = 0 if vectors else low  # all of T when vectors need it, else the active block
        stop_col = n if vectors else ihi + 1
        for k in range(low, ihi):  # chase the bulge down the active block
            if k == low:
                c, sr, si, rr, ri = _rotation(hr[k, k] - mur, hi[k, k] - mui, hr[k + 1, k], hi[k + 1, k])
            else:
                c, sr, si, rr, ri = _rotation(hr[k, k - 1], hi[k, k - 1], hr[k + 1, k - 1], hi[k + 1, k - 1])
                hr[k, k - 1], hi[k, k - 1] = rr, ri
                hr[k + 1, k - 1], hi[k + 1, k - 1] = 0.0, 0.0
            _rotate_rows(hr, hi, k, c, sr, si, k, stop_col)
            _rotate_columns(hr, hi, k, c, sr, si, first_row, k + 3 if k + 3 < ihi + 1 else ihi + 1)
            if vectors:
                _rotate_columns(qr, qi, k, c, sr, si, 0, n)
    return True


@_device
def eigenvalues(tr, ti, wr, wi, e):
    """w := the diagonal of T times 2**e."""
    for i in range(tr.shape[0]):
        wr[i] = math.ldexp(tr[i, i], e)
        wi[i] = math.ldexp(ti[i, i], e)


@_device
def right_vectors(tr, ti, qr, qi, xr, xi):
    """q := q X, X's column k the right eigenvector of T for T[k, k] (x[k] = 1, zero below,
    (T - T[k, k]) x = 0 above by back substitution). Column k of q X needs only q's columns
    up to k, so k runs backwards and overwrites them in place (x: a work vector)."""
    n = tr.shape[0]
    smlnum = _SAFMIN * (n / _ULP)
    for k in range(n - 1, -1, -1):
        lr, li = tr[k, k], ti[k, k]
        smin = _ULP * _cabs1(lr, li)
        smin = smin if smin > smlnum else smlnum
        xr[k], xi[k] = 1.0, 0.0
        for i in range(k - 1, -1, -1):
            sr, si = 0.0, 0.0
            for j in range(i + 1, k + 1):
                sr -= tr[i, j] * xr[j] - ti[i, j] * xi[j]
                si -= tr[i, j] * xi[j] + ti[i, j] * xr[j]
            dr, di = tr[i, i] - lr, ti[i, i] - li
            if _cabs1(dr, di) < smin:
                dr, di = smin, 0.0
            sr, si = _shrink_if_needed(xr, xi, i + 1, k + 1, sr, si, _cabs1(dr, di))
            xr[i], xi[i] = _cdiv(sr, si, dr, di)
        for r in range(n):
            vr, vi = 0.0, 0.0
            for j in range(k + 1):
                vr += qr[r, j] * xr[j] - qi[r, j] * xi[j]
                vi += qr[r, j] * xi[j] + qi[r, j] * xr[j]
            qr[r, k], qi[r, k] = vr, vi


@_device
def left_vectors(tr, ti, qr, qi, lr, li, zr, zi):
    """l := q Y, Y's column k the left eigenvector y of T for T[k, k] (y^H T = T[k, k] y^H:
    y[k] = 1, zero above, forward substitution below, on z = conj(y)). Column k of q Y needs
    only columns k onwards, so k runs forwards over a copy of q, in place."""
    n = tr.shape[0]
    smlnum = _SAFMIN * (n / _ULP)
    for i in range(n):
        for j in range(n):
            lr[i, j], li[i, j] = qr[i, j], qi[i, j]
    for k in range(n):
        er, ei = tr[k, k], ti[k, k]
        smin = _ULP * _cabs1(er, ei)
        smin = smin if smin > smlnum else smlnum
        zr[k], zi[k] = 1.0, 0.0
        for i in range(k + 1, n):
            sr, si = 0.0, 0.0
            for j in range(k, i):  # z_i (T[i,i] - T[k,k]) = - sum_j T[j,i] z_j
                sr -= tr[j, i] * zr[j] - ti[j, i] * zi[j]
                si -= tr[j, i] * zi[j] + ti[j, i] * zr[j]
            dr, di = tr[i, i] - er, ti[i, i] - ei
            if _cabs1(dr, di) < smin:
                dr, di = smin, 0.0
            sr, si = _shrink_if_needed(zr, zi, k, i, sr, si, _cabs1(dr, di))
            zr[i], zi[i] = _cdiv(sr, si, dr, di)
        for r in range(n):
            vr, vi = 0.0, 0.0
            for j in range(k, n):  # l[r, j] conj(z_j)
                vr += lr[r, j] * zr[j] + li[r, j] * zi[j]
                vi += li[r, j] * zr[j] - lr[r, j] * zi[j]
            lr[r, k], li[r, k] = vr, vi


@_device
def normalize(vr, vi):
    """Each column := itself over its 2-norm, times the phase that makes its first
    largest-magnitude component real and positive (zgeev's normalization)."""
    n = vr.shape[0]
    for k in range(vr.shape[1]):
        big = 0.0
        for r in range(n):
            x = _cabs1(vr[r, k], vi[r, k])
            big = x if x > big else big
        if big == 0.0:
            continue
        e = math.frexp(big)[1]  # scaled first (exactly): the squares below neither overflow nor underflow
        best, at, ssq = -1.0, 0, 0.0
        for r in range(n):
            vr[r, k] = math.ldexp(vr[r, k], -e)
            vi[r, k] = math.ldexp(vi[r, k], -e)
            m2 = vr[r, k] * vr[r, k] + vi[r, k] * vi[r, k]
            ssq += m2
            if m2 > best:
                best, at = m2, r
        norm = math.sqrt(ssq)
        m = math.sqrt(best)
        pr, pi = vr[at, k] / (m * norm), -vi[at, k] / (m * norm)  # conj(v_at) / (|v_at| |v|)
        for r in range(n):
            x, y = vr[r, k], vi[r, k]
            vr[r, k] = x * pr - y * pi
            vi[r, k] = x * pi + y * pr
        vr[at, k], vi[at, k] = m / norm, 0.0
