"""Per-matrix complex QR, Hermitian eigendecomposition and SVD for the CUDA decomposition
kernels (`decomp_emit`), called from generated kernels as `_dz.<name>(...)`, one GPU thread per
matrix: the complex counterparts of `decomp_device`'s routines, with the same names, phases
and structure, on complex128 scratch (the results are rounded out to complex64/float32 by the
kernel, as the CPU backend rounds LAPACK's complex128 results).

* QR (`qr_factor`, `qr_form_q`): Householder QR with LAPACK's zgeqr2/zung2r conventions:
  zlarfg makes beta real (R's diagonal is real) and tau complex, and is the identity (tau = 0)
  only for a column already zero below a real diagonal entry; the factorization applies H^H
  (conj(tau)) and Q accumulates H_0 ... H_{k-1} (tau). Q and R equal the CPU's to rounding.
* eigh (`symmetrize`, `eigh_jacobi`, `eigh_sorted`): cyclic Jacobi with complex rotations. A
  rotation first turns a_pq into |a_pq| by the phase e = a_pq / |a_pq| of column q, then is the
  real rotation of the 2x2 block [[a_pp, |a_pq|], [|a_pq|, a_qq]]; eigenvalues (the real
  diagonal) ascending. Each eigenvector gets its largest-modulus component real and positive
  (LAPACK leaves the phase undetermined).
* SVD (`svd_jacobi`, `svd_sorted`, `complete_columns`): one-sided Jacobi, the same rotation on
  the Gram entries (alpha, gamma = w_i^H w_j, beta) of a column pair; the emitter passes the
  conjugate transpose of a wide matrix. Each right singular vector gets its largest-modulus
  component real and positive and its left partner the same phase.

Numba's CUDA target compiles complex128 +, -, *, .real, .imag, .conjugate() and complex(x, y);
moduli and divisions are written on the real and imaginary parts with math.* (hypot, Smith's
division), so that nothing depends on how cmath or complex division lower, and plain Python
(the simulator) never divides by a complex zero.
"""
import math

from . import decomp_device as _dd
from .decomp_device import _EPS, _MAX_SWEEPS, _RSAFMIN, _SAFMIN, _device, _swap_columns, _tangent

fill_nan_vector = _dd.fill_nan_vector  # eigenvalues and singular values are real


# --- one-loop helpers ------------------------------------------------------------------------


@_device
def _scaled_add(scale, ssq, x):
    """dnrm2's update of its scaled sum of squares (scale, ssq) with one real entry x."""
    x = math.fabs(x)
    if x != 0.0:
        if scale < x:
            ssq = 1.0 + ssq * (scale / x) * (scale / x)
            scale = x
        else:
            ssq = ssq + (x / scale) * (x / scale)
    return scale, ssq


@_device
def _column_norm(a, col, start, stop):
    """2-norm of complex a[start:stop, col] without overflow or underflow (dznrm2)."""
    scale, ssq = 0.0, 1.0
    for i in range(start, stop):
        z = a[i, col]
        scale, ssq = _scaled_add(scale, ssq, z.real)
        scale, ssq = _scaled_add(scale, ssq, z.imag)
    return scale * math.sqrt(ssq)


@_device
def _lapy3(x, y, z):
    """sqrt(x**2 + y**2 + z**2) without overflow (LAPACK's dlapy3)."""
    x, y, z = math.fabs(x), math.fabs(y), math.fabs(z)
    w = x if x > y else y
    w = w if w > z else z
    if w == 0.0:
        return x + y + z
    return w * math.sqrt((x / w) * (x / w) + (y / w) * (y / w) + (z / w) * (z / w))


@_device
def _reciprocal(re, im):
    """1 / (re + i im) by Smith's division (zladiv's purpose: no overflow in re**2 + im**2)."""
    if math.fabs(im) <= math.fabs(re):
        ratio = im / re
        den = re + im * ratio
        return complex(1.0 / den, -ratio / den)
    ratio = re / im
    den = im + re * ratio
    return complex(ratio / den, -1.0 / den)


@_device
def _unit_phase(a, col, rows):
    """(the unit complex number that makes the first largest-modulus entry of a[:rows, col]
    real and positive (1 for a zero column), that entry's row)."""
    best, at = -1.0, 0
    for r in range(rows):
        z = a[r, col]
        x = z.real * z.real + z.imag * z.imag  # entries of unit vectors: no overflow
        if x > best:
            best, at = x, r
    big = a[at, col]
    modulus = math.hypot(big.real, big.imag)
    if modulus == 0.0:
        return complex(1.0, 0.0), at
    return complex(big.real / modulus, -big.imag / modulus), at


@_device
def _rotate_phase(a, col, rows, phase, at):
    """a[:rows, col] *= phase, the entry at row `at` made exactly real (as zgeev does: the
    product leaves a rounding-size imaginary part)."""
    for r in range(rows):
        a[r, col] = phase * a[r, col]
    a[at, col] = complex(a[at, col].real, 0.0)


# --- shared phases ---------------------------------------------------------------------------


@_device
def finite(a, rows, cols):
    """Whether a[:rows, :cols] holds no inf or NaN in either part."""
    for i in range(rows):
        for j in range(cols):
            z = a[i, j]
            if not (math.isfinite(z.real) and math.isfinite(z.imag)):
                return False
    return True


@_device
def fill_nan(a):
    """NaN + 0j everywhere: what the CPU path's `out[b] = np.nan` writes into complex arrays."""
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            a[i, j] = complex(math.nan, 0.0)


@_device
def scale_to_unit(a, rows, cols):
    """Scales a[:rows, :cols] by 2**-e so that its largest real or imaginary magnitude lies in
    [0.5, 1); e."""
    big = 0.0
    for i in range(rows):
        for j in range(cols):
            z = a[i, j]
            x = math.fabs(z.real)
            y = math.fabs(z.imag)
            if x > big:
                big = x
            if y > big:
                big = y
    if big == 0.0:
        return 0
    e = math.frexp(big)[1]
    for i in range(rows):
        for j in range(cols):
            z = a[i, j]
            a[i, j] = complex(math.ldexp(z.real, -e), math.ldexp(z.imag, -e))
    return e


# --- qr ------------------------------------------------------------------------------------------


@_device
def _householder(a, i, m):
    """zlarfg on a[i:m, i]: real beta into a[i, i], the reflector's vector (leading 1 implied)
    into a[i+1:m, i]; returns tau (complex). A tiny beta is computed on the column scaled up, as
    LAPACK does, so that 1 / (alpha - beta) does not overflow."""
    alpha = a[i, i]
    ar, ai = alpha.real, alpha.imag
    xnorm = _column_norm(a, i, i + 1, m)
    if xnorm == 0.0 and ai == 0.0:
        return complex(0.0, 0.0)
    beta = -math.copysign(_lapy3(ar, ai, xnorm), ar)
    knt = 0
    while math.fabs(beta) < _SAFMIN and knt < 20:
        knt += 1
        for r in range(i + 1, m):
            a[r, i] = a[r, i] * _RSAFMIN
        ar *= _RSAFMIN
        ai *= _RSAFMIN
        beta *= _RSAFMIN
    if knt > 0:
        beta = -math.copysign(_lapy3(ar, ai, _column_norm(a, i, i + 1, m)), ar)
    tau = complex((beta - ar) / beta, -ai / beta)
    scale = _reciprocal(ar - beta, ai)  # |ar - beta| >= |beta| > 0: beta's sign is -ar's
    for r in range(i + 1, m):
        a[r, i] = a[r, i] * scale
    for _ in range(knt):
        beta *= _SAFMIN
    a[i, i] = complex(beta, 0.0)
    return tau


@_device
def _reflect_columns(a, i, t, x, last, m):
    """x[i:, i+1:last] := (I - t u u^H) x[i:, i+1:last], u = [1, a[i+1:, i]] (zlarf); x may be a."""
    for j in range(i + 1, last):
        dot = x[i, j]
        for r in range(i + 1, m):
            dot += a[r, i].conjugate() * x[r, j]
        dot = dot * t
        x[i, j] -= dot
        for r in range(i + 1, m):
            x[r, j] -= a[r, i] * dot


@_device
def qr_factor(a, tau):
    """zgeqr2: a (m, n) := R on and above the diagonal (real diagonal), the Householder vectors
    below it (their leading 1 implied); tau (min(m, n),) their complex scalars."""
    m, n = a.shape[0], a.shape[1]
    for i in range(tau.shape[0]):
        t = _householder(a, i, m)
        tau[i] = t
        if t.real != 0.0 or t.imag != 0.0:
            _reflect_columns(a, i, t.conjugate(), a, n, m)  # H^H from the left, as zgeqr2 does


@_device
def qr_form_q(a, tau, q):
    """zung2r: q (m, c) := the first c columns of H_0 ... H_{k-1} from `qr_factor`'s a and tau
    (c >= k), applied to the identity last reflector first; then a := R (zeros below)."""
    m, n, c = a.shape[0], a.shape[1], q.shape[1]
    for i in range(m):
        for j in range(c):
            q[i, j] = complex(1.0 if i == j else 0.0, 0.0)
    for i in range(tau.shape[0] - 1, -1, -1):
        t = tau[i]
        _reflect_columns(a, i, t, q, c, m)
        for r in range(i + 1, m):  # column i is H_i e_i
            q[r, i] = -t * a[r, i]
        q[i, i] = 1.0 - t
    for i in range(1, m):
        for j in range(i if i < n else n):
            a[i, j] = complex(0.0, 0.0)


# --- eigh ------------------------------------------------------------------------------------


@_device
def symmetrize(a, lower):
    """Mirrors the lower (or upper) triangle of a (n, n) onto the other one, conjugated, and
    drops the diagonal's imaginary part (zheevd reads only the real part of the diagonal)."""
    n = a.shape[0]
    for i in range(n):
        a[i, i] = complex(a[i, i].real, 0.0)
        for j in range(i + 1, n):
            if lower:
                a[i, j] = a[j, i].conjugate()
            else:
                a[j, i] = a[i, j].conjugate()


@_device
def eigh_jacobi(a, v):
    """Cyclic Jacobi: a (n, n) Hermitian := diagonal (the eigenvalues, real), v (n, n) := the
    accumulated unitary rotations (eigenvectors as columns). A rotation of (p, q) has columns
    (c, -s conj(e)) and (s e, c) with e = a_pq / |a_pq|, c and s the real rotation's of
    [[a_pp, |a_pq|], [|a_pq|, a_qq]]; Rutishauser's update formulas, Demmel and Veselic's
    criterion for leaving an entry alone, as `decomp_device.eigh_jacobi`."""
    n = a.shape[0]
    for i in range(n):
        for j in range(n):
            v[i, j] = complex(1.0 if i == j else 0.0, 0.0)
    for _ in range(_MAX_SWEEPS):
        rotated = False
        for p in range(n - 1):
            for q in range(p + 1, n):
                apq = a[p, q]
                r = math.hypot(apq.real, apq.imag)
                app, aqq = a[p, p].real, a[q, q].real
                if r <= _EPS * math.sqrt(math.fabs(app)) * math.sqrt(math.fabs(aqq)):
                    continue
                rotated = True
                e = complex(apq.real / r, apq.imag / r)
                ec = e.conjugate()
                t = _tangent((aqq - app) / (2.0 * r))
                c = 1.0 / math.sqrt(1.0 + t * t)
                s = t * c
                tau = s / (1.0 + c)
                a[p, p] = complex(app - t * r, 0.0)
                a[q, q] = complex(aqq + t * r, 0.0)
                a[p, q] = complex(0.0, 0.0)
                a[q, p] = complex(0.0, 0.0)
                for k in range(n):
                    if k != p and k != q:
                        g, h = a[k, p], a[k, q]
                        g2 = g - s * (ec * h + tau * g)
                        h2 = h + s * (e * g - tau * h)
                        a[k, p] = g2
                        a[k, q] = h2
                        a[p, k] = g2.conjugate()
                        a[q, k] = h2.conjugate()
                    g, h = v[k, p], v[k, q]
                    v[k, p] = g - s * (ec * h + tau * g)
                    v[k, q] = h + s * (e * g - tau * h)
        if not rotated:
            return


@_device
def eigh_sorted(a, v, w, e):
    """w := the (real) diagonal of `eigh_jacobi`'s a times 2**e, ascending (the first of equal
    values first), v's columns in the same order, each with its largest component real and
    positive."""
    n = a.shape[0]
    for i in range(n):
        w[i] = math.ldexp(a[i, i].real, e)
    for i in range(n):
        at = i
        for j in range(i + 1, n):
            if w[j] < w[at]:
                at = j
        if at != i:
            x = w[i]
            w[i] = w[at]
            w[at] = x
            _swap_columns(v, i, at)
    for j in range(n):
        phase, at = _unit_phase(v, j, n)
        _rotate_phase(v, j, n, phase, at)


# --- svd -------------------------------------------------------------------------------------


@_device
def svd_jacobi(w, v, q, vectors):
    """One-sided Jacobi: rotates column pairs of complex w[:, :q] (p >= q rows) until they are
    orthogonal to working precision (dgesvj's criterion, tolerance sqrt(p) * eps), each by
    `eigh_jacobi`'s rotation of their Gram matrix; when `vectors`, v (q, q) := the accumulated
    rotations."""
    p = w.shape[0]
    if vectors:
        for i in range(q):
            for j in range(q):
                v[i, j] = complex(1.0 if i == j else 0.0, 0.0)
    tol = math.sqrt(1.0 * p) * _EPS
    for _ in range(_MAX_SWEEPS):
        rotated = False
        for i in range(q - 1):
            for j in range(i + 1, q):
                alpha, beta = 0.0, 0.0
                gamma = complex(0.0, 0.0)
                for r in range(p):
                    x, y = w[r, i], w[r, j]
                    alpha += x.real * x.real + x.imag * x.imag
                    beta += y.real * y.real + y.imag * y.imag
                    gamma += x.conjugate() * y
                g = math.hypot(gamma.real, gamma.imag)
                if g <= tol * math.sqrt(alpha) * math.sqrt(beta):
                    continue
                rotated = True
                e = complex(gamma.real / g, gamma.imag / g)
                ec = e.conjugate()
                t = _tangent((beta - alpha) / (2.0 * g))
                c = 1.0 / math.sqrt(1.0 + t * t)
                s = c * t
                for r in range(p):
                    x, y = w[r, i], w[r, j]
                    w[r, i] = c * x - s * (ec * y)
                    w[r, j] = s * (e * x) + c * y
                if vectors:
                    for r in range(q):
                        x, y = v[r, i], v[r, j]
                        v[r, i] = c * x - s * (ec * y)
                        v[r, j] = s * (e * x) + c * y
        if not rotated:
            return


@_device
def svd_sorted(w, s, v, vectors, e):
    """After `svd_jacobi`: s (q,) := the column norms of w times 2**e, descending (the first
    of equal values first). When `vectors`, w's and v's columns follow that order, the nonzero
    columns of w are normalized, and each pair gets the phase that makes the largest component
    of v's column real and positive. Returns the number of nonzero singular values."""
    p, q = w.shape[0], s.shape[0]
    for j in range(q):
        s[j] = _column_norm(w, j, 0, p)
    for i in range(q):
        at = i
        for j in range(i + 1, q):
            if s[j] > s[at]:
                at = j
        if at != i:
            x = s[i]
            s[i] = s[at]
            s[at] = x
            if vectors:
                _swap_columns(w, i, at)
                _swap_columns(v, i, at)
    rank = 0
    for j in range(q):
        if s[j] > 0.0:
            rank += 1
            if vectors:
                phase, at = _unit_phase(v, j, q)
                _rotate_phase(v, j, q, phase, at)
                for r in range(p):
                    z = w[r, j]
                    w[r, j] = phase * complex(z.real / s[j], z.imag / s[j])
        s[j] = math.ldexp(s[j], e)
    return rank


@_device
def complete_columns(u, first):
    """u[:, first:] := orthonormal columns orthogonal to the orthonormal u[:, :first]: for each,
    the unit vector e_i with the largest residual, orthogonalized twice (Gram-Schmidt with the
    complex inner product)."""
    p, c = u.shape[0], u.shape[1]
    for col in range(first, c):
        best, at = -1.0, 0
        for i in range(p):  # e_i's squared residual is 1 - |u[i, :col]|^2
            r2 = 1.0
            for j in range(col):
                z = u[i, j]
                r2 -= z.real * z.real + z.imag * z.imag
            if r2 > best:
                best, at = r2, i
        for r in range(p):
            u[r, col] = complex(1.0 if r == at else 0.0, 0.0)
        for _ in range(2):
            for j in range(col):
                d = complex(0.0, 0.0)
                for r in range(p):
                    d += u[r, j].conjugate() * u[r, col]
                for r in range(p):
                    u[r, col] -= d * u[r, j]
        norm = _column_norm(u, col, 0, p)
        for r in range(p):
            z = u[r, col]
            u[r, col] = complex(z.real / norm, z.imag / norm)
