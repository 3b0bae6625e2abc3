"""Per-matrix QR, symmetric eigendecomposition and SVD for the CUDA decomposition kernels
(`decomp_emit`), called from generated kernels as `_dd.<name>(...)`, one GPU thread per matrix.

The routines work in place on float64 views of scratch buffers the host driver allocated (the
generated kernel copies its matrix in, widened, and rounds the results out), so results follow
the CPU backend's, which runs LAPACK in float64 and rounds:

* QR (`qr_factor`, `qr_form_q`): Householder QR with LAPACK's conventions: dgeqr2's dlarfg
  (beta = -sign(alpha) * norm, tau = 0 for a column already zero below the diagonal), Q
  accumulated backwards as dorg2r does; Q and R equal the CPU's to rounding, signs included.
* eigh (`symmetrize`, `eigh_jacobi`, `eigh_sorted`): cyclic two-sided Jacobi; eigenvalues
  ascending. Eigenvector signs are not determined (LAPACK's are not either): each eigenvector
  gets its largest-magnitude component positive (the first of equal ones).
* SVD (`svd_jacobi`, `svd_sorted`, `complete_columns`): one-sided (Hestenes) Jacobi on a p x q
  matrix with p >= q (the emitter passes the transpose of a wide matrix); singular values
  descending. Each right singular vector gets its largest-magnitude component positive and its
  left partner follows; left vectors of zero singular values and the extra columns of a full U
  are completed deterministically (Gram-Schmidt on the unit vector with the largest residual).

The generated kernel sequences these phases and sends a matrix holding inf or NaN to
`fill_nan` instead (NaN everywhere: the CPU path's result). Jacobi sweeps are bounded, so no
input hangs a thread, and run on the matrix scaled by a power of two (`scale_to_unit`, exact),
so that squares of tiny or huge entries neither underflow nor overflow.

Plain Python under Numba's CUDA simulator (kernels run as Python there); otherwise Numba
functions inlined into the kernel's IR (inline='always'), so PTX is produced without a GPU, as
`device_support` does. Numba copies a callee's whole IR for every inlined call, at a cost that
grows with the square of its size, so the phases are separate functions the kernel calls in
turn and call nothing bigger than a one-loop helper themselves. Divisions are arranged never
to divide by zero: plain Python raises where CUDA gives inf.
"""
import math

import numba
from numba import config as _numba_config

SIMULATED = bool(_numba_config.ENABLE_CUDASIM)

_EPS = 2.0 ** -52
_MAX_SWEEPS = 60  # Jacobi converges quadratically (about 6-12 sweeps); this only bounds bad cases
_HUGE = 2.0 ** 500  # beyond this |x|, 1 + x * x is not formed (it would overflow)
_SAFMIN = 2.0 ** -969  # LAPACK's dlamch('S') / dlamch('E'): dlarfg rescales below it
_RSAFMIN = 2.0 ** 969


def _device(fn):
    return fn if SIMULATED else numba.njit(inline="always")(fn)


# --- one-loop helpers ------------------------------------------------------------------------


@_device
def _column_norm(a, col, start, stop):
    """2-norm of a[start:stop, col] without overflow or underflow (dnrm2's scaled sum)."""
    scale, ssq = 0.0, 1.0
    for i in range(start, stop):
        x = math.fabs(a[i, col])
        if x != 0.0:
            if scale < x:
                ssq = 1.0 + ssq * (scale / x) * (scale / x)
                scale = x
            else:
                ssq = ssq + (x / scale) * (x / scale)
    return scale * math.sqrt(ssq)


@_device
def _tangent(zeta):
    """The smaller root t of t**2 + 2 zeta t - 1 = 0 (a Jacobi rotation's tangent)."""
    if math.fabs(zeta) > _HUGE:
        return 0.5 / zeta
    t = 1.0 / (math.fabs(zeta) + math.sqrt(1.0 + zeta * zeta))
    return t if zeta >= 0.0 else -t


@_device
def _swap_columns(a, i, j):
    for r in range(a.shape[0]):
        x = a[r, i]
        a[r, i] = a[r, j]
        a[r, j] = x


@_device
def _largest_is_negative(a, col):
    """Whether the first largest-magnitude entry of a[:, col] is negative."""
    best, at = -1.0, 0
    for r in range(a.shape[0]):
        x = math.fabs(a[r, col])
        if x > best:
            best, at = x, r
    return a[at, col] < 0.0


# --- shared phases ---------------------------------------------------------------------------


@_device
def finite(a, rows, cols):
    """Whether a[:rows, :cols] holds no inf or NaN."""
    for i in range(rows):
        for j in range(cols):
            if not math.isfinite(a[i, j]):
                return False
    return True


@_device
def fill_nan(a):
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            a[i, j] = math.nan


@_device
def fill_nan_vector(x):
    for i in range(x.shape[0]):
        x[i] = math.nan


@_device
def scale_to_unit(a, rows, cols):
    """Scales a[:rows, :cols] by 2**-e so that its largest magnitude lies in [0.5, 1); e."""
    big = 0.0
    for i in range(rows):
        for j in range(cols):
            x = math.fabs(a[i, j])
            if x > big:
                big = x
    if big == 0.0:
        return 0
    e = math.frexp(big)[1]
    for i in range(rows):
        for j in range(cols):
            a[i, j] = math.ldexp(a[i, j], -e)  # not times 2**-e: that overflows for subnormal big
    return e


# --- qr ------------------------------------------------------------------------------------------


@_device
def _householder(a, i, m):
    """dlarfg on a[i:m, i]: beta into a[i, i], the reflector's vector (leading 1 implied) into
    a[i+1:m, i]; returns tau. A tiny beta is computed on the column scaled up, as LAPACK does,
    so that 1 / (alpha - beta) does not overflow."""
    alpha = a[i, i]
    xnorm = _column_norm(a, i, i + 1, m)
    if xnorm == 0.0:
        return 0.0
    beta = -math.copysign(math.hypot(alpha, xnorm), alpha)
    knt = 0
    while math.fabs(beta) < _SAFMIN and knt < 20:
        knt += 1
        for r in range(i + 1, m):
            a[r, i] = a[r, i] * _RSAFMIN
        alpha *= _RSAFMIN
        beta *= _RSAFMIN
    if knt > 0:
        beta = -math.copysign(math.hypot(alpha, _column_norm(a, i, i + 1, m)), alpha)
    t = (beta - alpha) / beta
    scale = 1.0 / (alpha - beta)
    for r in range(i + 1, m):
        a[r, i] = a[r, i] * scale
    for _ in range(knt):
        beta *= _SAFMIN
    a[i, i] = beta
    return t


@_device
def qr_factor(a, tau):
    """dgeqr2: a (m, n) := R on and above the diagonal, the Householder vectors below it (their
    leading 1 implied); tau (min(m, n),) their scalars (dlarfg's conventions)."""
    m, n = a.shape[0], a.shape[1]
    for i in range(tau.shape[0]):
        t = _householder(a, i, m)
        tau[i] = t
        if t != 0.0:
            _reflect_columns(a, i, t, a, n, m)


@_device
def _reflect_columns(a, i, t, x, last, m):
    """x[i:, i+1:last] := (I - t u u^T) x[i:, i+1:last], u = [1, a[i+1:, i]] (dlarf); x may be a."""
    for j in range(i + 1, last):
        dot = x[i, j]
        for r in range(i + 1, m):
            dot += a[r, i] * x[r, j]
        dot *= t
        x[i, j] -= dot
        for r in range(i + 1, m):
            x[r, j] -= dot * a[r, i]


@_device
def qr_form_q(a, tau, q):
    """dorg2r: q (m, c) := the first c columns of H_0 ... H_{k-1} from `qr_factor`'s a and tau
    (c >= k), applied to the identity last reflector first; then a := R (zeros below)."""
    m, n, c = a.shape[0], a.shape[1], q.shape[1]
    for i in range(m):
        for j in range(c):
            q[i, j] = 1.0 if i == j else 0.0
    for i in range(tau.shape[0] - 1, -1, -1):
        t = tau[i]
        _reflect_columns(a, i, t, q, c, m)
        for r in range(i + 1, m):  # column i is H_i e_i
            q[r, i] = -t * a[r, i]
        q[i, i] = 1.0 - t
    for i in range(1, m):
        for j in range(i if i < n else n):
            a[i, j] = 0.0


# --- eigh ------------------------------------------------------------------------------------


@_device
def symmetrize(a, lower):
    """Mirrors the lower (or upper) triangle of a (n, n) onto the other one."""
    n = a.shape[0]
    for i in range(n):
        for j in range(i + 1, n):
            if lower:
                a[i, j] = a[j, i]
            else:
                a[j, i] = a[i, j]


@_device
def eigh_jacobi(a, v):
    """Cyclic Jacobi: a (n, n) symmetric := diagonal (the eigenvalues), v (n, n) := the
    accumulated rotations (eigenvectors as columns). Rutishauser's update formulas; an entry
    is left alone when it is negligible next to both diagonal entries it couples (Demmel and
    Veselic's criterion, which keeps small eigenvalues relatively accurate)."""
    n = a.shape[0]
    for i in range(n):
        for j in range(n):
            v[i, j] = 1.0 if i == j else 0.0
    for _ in range(_MAX_SWEEPS):
        rotated = False
        for p in range(n - 1):
            for q in range(p + 1, n):
                apq = a[p, q]
                if math.fabs(apq) <= _EPS * math.sqrt(math.fabs(a[p, p])) * math.sqrt(math.fabs(a[q, q])):
                    continue
                rotated = True
                t = _tangent((a[q, q] - a[p, p]) / (2.0 * apq))
                c = 1.0 / math.sqrt(1.0 + t * t)
                s = t * c
                tau = s / (1.0 + c)
                a[p, p] = a[p, p] - t * apq
                a[q, q] = a[q, q] + t * apq
                a[p, q] = 0.0
                a[q, p] = 0.0
                for r in range(n):
                    if r != p and r != q:
                        g, h = a[r, p], a[r, q]
                        a[r, p] = g - s * (h + g * tau)
                        a[r, q] = h + s * (g - h * tau)
                        a[p, r] = a[r, p]
                        a[q, r] = a[r, q]
                    g, h = v[r, p], v[r, q]
                    v[r, p] = g - s * (h + g * tau)
                    v[r, q] = h + s * (g - h * tau)
        if not rotated:
            return


@_device
def eigh_sorted(a, v, w, e):
    """w := the diagonal of `eigh_jacobi`'s a times 2**e, ascending (the first of equal values
    first), v's columns in the same order, each with its largest component positive."""
    n = a.shape[0]
    for i in range(n):
        w[i] = math.ldexp(a[i, i], e)
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
        if _largest_is_negative(v, j):
            for r in range(n):
                v[r, j] = -v[r, j]


# --- svd -------------------------------------------------------------------------------------


@_device
def svd_jacobi(w, v, q, vectors):
    """One-sided Jacobi: rotates column pairs of w[:, :q] (p >= q rows) until they are
    orthogonal to working precision (dgesvj's criterion, tolerance sqrt(p) * eps); when
    `vectors`, v (q, q) := the accumulated rotations."""
    p = w.shape[0]
    if vectors:
        for i in range(q):
            for j in range(q):
                v[i, j] = 1.0 if i == j else 0.0
    tol = math.sqrt(1.0 * p) * _EPS
    for _ in range(_MAX_SWEEPS):
        rotated = False
        for i in range(q - 1):
            for j in range(i + 1, q):
                alpha, beta, gamma = 0.0, 0.0, 0.0
                for r in range(p):
                    alpha += w[r, i] * w[r, i]
                    beta += w[r, j] * w[r, j]
                    gamma += w[r, i] * w[r, j]
                if math.fabs(gamma) <= tol * math.sqrt(alpha) * math.sqrt(beta):
                    continue
                rotated = True
                t = _tangent((beta - alpha) / (2.0 * gamma))
                c = 1.0 / math.sqrt(1.0 + t * t)
                s = c * t
                for r in range(p):
                    x, y = w[r, i], w[r, j]
                    w[r, i] = c * x - s * y
                    w[r, j] = s * x + c * y
                if vectors:
                    for r in range(q):
                        x, y = v[r, i], v[r, j]
                        v[r, i] = c * x - s * y
                        v[r, j] = s * x + c * y
        if not rotated:
            return


@_device
def svd_sorted(w, s, v, vectors, e):
    """After `svd_jacobi`: s (q,) := the column norms of w times 2**e, descending (the first
    of equal values first). When `vectors`, w's and v's columns follow that order, the nonzero
    columns of w are normalized, and each pair gets the largest component of v's column
    positive. Returns the number of nonzero singular values."""
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
                sign = -1.0 if _largest_is_negative(v, j) else 1.0
                for r in range(q):
                    v[r, j] = sign * v[r, j]
                for r in range(p):
                    w[r, j] = sign * (w[r, j] / s[j])
        s[j] = math.ldexp(s[j], e)
    return rank


@_device
def complete_columns(u, first):
    """u[:, first:] := orthonormal columns orthogonal to the orthonormal u[:, :first]: for each,
    the unit vector e_i with the largest residual, orthogonalized twice (Gram-Schmidt)."""
    p, c = u.shape[0], u.shape[1]
    for col in range(first, c):
        best, at = -1.0, 0
        for i in range(p):  # e_i's squared residual is 1 - |u[i, :col]|^2
            r2 = 1.0
            for j in range(col):
                r2 -= u[i, j] * u[i, j]
            if r2 > best:
                best, at = r2, i
        for r in range(p):
            u[r, col] = 1.0 if r == at else 0.0
        for _ in range(2):
            for j in range(col):
                d = 0.0
                for r in range(p):
                    d += u[r, j] * u[r, col]
                for r in range(p):
                    u[r, col] -= d * u[r, j]
        norm = _column_norm(u, col, 0, p)
        for r in range(p):
            u[r, col] = u[r, col] / norm
