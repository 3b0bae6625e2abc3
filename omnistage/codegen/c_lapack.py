"""The native tier's LAPACK runtime: `kernels.eig`, `cholesky`, `eigh` and `svd` in C,
on the LAPACK functions of `lapack_table` (the ones Numba's `np.linalg` calls, through this
library's copy of the table).

Prepended to a translated module only when it calls one (c_translate's `uses_lapack`). Each
function does what its namesake in kernels.py does, with Numba's LAPACK calls made the way
Numba's helper library makes them (`numba_ez_rgeev`/`numba_ez_cgeev`/`numba_ez_xxgetri`: a
workspace query, then the call) and Numba's complex arithmetic (c_complex's helpers), so a
matrix gets the bits the Numba build gives it.

Return codes: 1 done, 0 LAPACK failed or an operand was not finite (the kernel's NaN result),
-1 no memory (the entry then fails and `aot.AotProgram` repeats the call on the Numba path).
"""

SOURCE = r"""
/* LAPACK: the addresses of lapack_table (NAMES order), mirrored into this library's own copy */
int64_t omnistage_lapack[12];
enum { OS_L_DGEEV, OS_L_ZGEEV, OS_L_DGETRF, OS_L_ZGETRF, OS_L_DGETRI, OS_L_ZGETRI, OS_L_DPOTRF, OS_L_ZPOTRF,
       OS_L_DSYEVD, OS_L_ZHEEVD, OS_L_DGESDD, OS_L_ZGESDD };
/* Fortran ABI: every argument by address, then the hidden lengths of the character arguments
   (a Cython wrapper found instead ignores them) */
typedef void (*os_dgeev_t)(const char *, const char *, const int *, double *, const int *, double *, double *,
                           double *, const int *, double *, const int *, double *, const int *, int *, size_t, size_t);
typedef void (*os_zgeev_t)(const char *, const char *, const int *, os_c128 *, const int *, os_c128 *, os_c128 *,
                           const int *, os_c128 *, const int *, os_c128 *, const int *, double *, int *, size_t, size_t);
typedef void (*os_getrf_t)(const int *, const int *, void *, const int *, int *, int *);
typedef void (*os_getri_t)(const int *, void *, const int *, const int *, void *, const int *, int *);
typedef void (*os_potrf_t)(const char *, const int *, void *, const int *, int *, size_t);
typedef void (*os_dgesdd_t)(const char *, const int *, const int *, double *, const int *, double *, double *,
                            const int *, double *, const int *, double *, const int *, int *, int *, size_t);
typedef void (*os_zgesdd_t)(const char *, const int *, const int *, os_c128 *, const int *, double *, os_c128 *,
                            const int *, os_c128 *, const int *, os_c128 *, const int *, double *, int *, int *,
                            size_t);
typedef void (*os_dsyevd_t)(const char *, const char *, const int *, double *, const int *, double *, double *,
                            const int *, int *, const int *, int *, size_t, size_t);
typedef void (*os_zheevd_t)(const char *, const char *, const int *, os_c128 *, const int *, double *, os_c128 *,
                            const int *, double *, const int *, int *, const int *, int *, size_t, size_t);
#define OS_LAPACK(T, slot) ((T)(intptr_t)omnistage_lapack[slot])

/* x * (s + 0j) and x / (s + 0j): Numba promotes the real operand to complex */
static inline os_c128 os_l_scale(os_c128 x, double s) { return os_cmul_c128(x, os_c128_make(s, 0.0)); }
static inline os_c128 os_l_over(os_c128 x, double s) { return os_cdiv_c128(x, os_c128_make(s, 0.0)); }
/* a + 1j * b and a - 1j * b for reals a, b, as Numba computes them */
static inline os_c128 os_l_plus_j(double a, double b, double sign) {
    double re = 0.0 * b - 1.0 * 0.0, im = 0.0 * 0.0 + 1.0 * b;
    return sign > 0 ? os_c128_make(a + re, 0.0 + im) : os_c128_make(a - re, 0.0 - im);
}

/* kernels._geev for real a (n x n, C order): w (n) and, when `vectors`, v (n x n, C order,
   columns), unpacking ?geev's conjugate pairs as NumPy does */
static int os_geev_d(const double *a, int n, os_c128 *w, os_c128 *v, int vectors) {
    for (int64_t i = 0; i < (int64_t)n * n; i++)
        if (!isfinite(a[i])) return 0;
    int nv = vectors ? n : 1, lwork = -1, info = 0, one = 1;
    size_t nn = (size_t)n * n;
    double *f = malloc(sizeof(double) * (nn + 3 * (size_t)n + 1 + (size_t)n * nv));
    if (!f) return -1;
    double *wr = f + nn, *wi = wr + n, *vl = wi + n, *vr = vl + 1, query = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) f[i + (size_t)j * n] = a[(size_t)i * n + j];  /* Fortran order */
    char jobvl = 'N', jobvr = vectors ? 'V' : 'N';
    os_dgeev_t geev = OS_LAPACK(os_dgeev_t, OS_L_DGEEV);
    geev(&jobvl, &jobvr, &n, f, &n, wr, wi, vl, &one, vr, &nv, &query, &lwork, &info, 1, 1);
    lwork = (int)query;
    double *work = malloc(sizeof(double) * (size_t)(lwork > 1 ? lwork : 1));
    if (!work) { free(f); return -1; }
    geev(&jobvl, &jobvr, &n, f, &n, wr, wi, vl, &one, vr, &nv, work, &lwork, &info, 1, 1);
    free(work);
    if (info != 0) { free(f); return 0; }
    /* row i of vr (C view) is eigenvector i; a pair (i, i + 1) holds the real part in vector i
       and the imaginary part in vector i + 1 */
    for (int i = 0; i < n;) {
        if (wi[i] == 0) {
            w[i] = os_c128_make(wr[i], 0.0);
            for (int j = 0; j < (vectors ? n : 0); j++) v[(size_t)j * n + i] = os_c128_make(vr[(size_t)i * n + j], 0.0);
            i += 1;
        } else {
            w[i] = os_l_plus_j(wr[i], wi[i], 1);
            w[i + 1] = os_l_plus_j(wr[i + 1], wi[i + 1], 1);
            for (int j = 0; j < (vectors ? n : 0); j++) {
                v[(size_t)j * n + i] = os_l_plus_j(vr[(size_t)i * n + j], vr[(size_t)(i + 1) * n + j], 1);
                v[(size_t)j * n + i + 1] = os_l_plus_j(vr[(size_t)i * n + j], vr[(size_t)(i + 1) * n + j], -1);
            }
            i += 2;
        }
    }
    free(f);
    return 1;
}

/* kernels._geev for complex a: np.linalg.eig (or eigvals, without vectors) */
static int os_geev_z(const os_c128 *a, int n, os_c128 *w, os_c128 *v, int vectors) {
    for (int64_t i = 0; i < (int64_t)n * n; i++)
        if (!isfinite(a[i].re) || !isfinite(a[i].im)) return 0;
    int nv = vectors ? n : 1, lwork = -1, info = 0, one = 1;
    size_t nn = (size_t)n * n;
    os_c128 *f = malloc(sizeof(os_c128) * (nn + 1 + (size_t)n * nv)), query = {0, 0};
    double *rwork = malloc(sizeof(double) * 2 * (size_t)(n > 0 ? n : 1));
    if (!f || !rwork) { free(f); free(rwork); return -1; }
    os_c128 *vl = f + nn, *vr = vl + 1;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) f[i + (size_t)j * n] = a[(size_t)i * n + j];
    char jobvl = 'N', jobvr = vectors ? 'V' : 'N';
    os_zgeev_t geev = OS_LAPACK(os_zgeev_t, OS_L_ZGEEV);
    geev(&jobvl, &jobvr, &n, f, &n, w, vl, &one, vr, &nv, &query, &lwork, rwork, &info, 1, 1);
    lwork = (int)query.re;
    os_c128 *work = malloc(sizeof(os_c128) * (size_t)(lwork > 1 ? lwork : 1));
    if (!work) { free(f); free(rwork); return -1; }
    geev(&jobvl, &jobvr, &n, f, &n, w, vl, &one, vr, &nv, work, &lwork, rwork, &info, 1, 1);
    free(work);
    free(rwork);
    if (info == 0 && vectors)  /* vector i is column i of v (vr holds it in its row i) */
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) v[(size_t)j * n + i] = vr[(size_t)i * n + j];
    free(f);
    return info == 0;
}

/* np.linalg.inv of vb (n x n, C order) into `inv` in Fortran order (getrf, then getri with
   its workspace query); 0 when singular or not finite */
static int os_inverse_z(const os_c128 *vb, int n, os_c128 *inv) {
    for (int64_t i = 0; i < (int64_t)n * n; i++)
        if (!isfinite(vb[i].re) || !isfinite(vb[i].im)) return 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) inv[i + (size_t)j * n] = vb[(size_t)i * n + j];
    int *ipiv = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1)), info = 0, lwork = -1;
    if (!ipiv) return -1;
    OS_LAPACK(os_getrf_t, OS_L_ZGETRF)(&n, &n, inv, &n, ipiv, &info);
    if (info != 0) { free(ipiv); return 0; }
    os_c128 query = {0, 0};
    os_getri_t getri = OS_LAPACK(os_getri_t, OS_L_ZGETRI);
    getri(&n, inv, &n, ipiv, &query, &lwork, &info);
    lwork = (int)query.re;
    os_c128 *work = malloc(sizeof(os_c128) * (size_t)(lwork > 1 ? lwork : 1));
    if (!work) { free(ipiv); return -1; }
    getri(&n, inv, &n, ipiv, work, &lwork, &info);
    free(work);
    free(ipiv);
    return info == 0;
}

/* kernels._normalized_columns of conj(inv).T, with inv in Fortran order: column j of that
   matrix is conj(inv[j, :]), element i of it conj(inv[j + i * n]) */
static void os_left_vectors(const os_c128 *inv, int n, os_c128 *out) {
    for (int j = 0; j < n; j++) {
        double sum = 0;
        for (int i = 0; i < n; i++) {
            double mag = os_cabs_c128(os_cconj_c128(inv[j + (size_t)i * n]));
            sum += mag * mag;
        }
        double norm = sqrt(sum), best = -1.0;
        os_c128 first = os_cconj_c128(inv[j]);
        os_c128 big = os_c128_make(first.re - first.re, first.im - first.im);
        for (int i = 0; i < n; i++) {
            os_c128 x = os_l_over(os_cconj_c128(inv[j + (size_t)i * n]), norm);
            double mag = os_cabs_c128(x);
            if (mag > best) { best = mag; big = x; }
        }
        os_c128 phase = (big.re != 0 || big.im != 0)
            ? os_l_over(os_cconj_c128(big), os_cabs_c128(big))
            : os_c128_make(big.re - big.re + 1.0, big.im - big.im + 0.0);
        for (int i = 0; i < n; i++)
            out[(size_t)i * n + j] = os_cmul_c128(os_l_over(os_cconj_c128(inv[j + (size_t)i * n]), norm), phase);
    }
}

/* kernels.eig: w (b, n), vr (b, n, n) when `vectors`, vl (b, n, n) when `left`, of a
   (b, n, n) float64 (`real`) or complex128 stack */
static int os_eig(const void *a, int real, int64_t batch, int n, os_c128 *w, os_c128 *vl, int left,
                  os_c128 *vr, int vectors) {
    if (n == 0) return 1;
    size_t nn = (size_t)n * n;
    os_c128 *buf = malloc(sizeof(os_c128) * (3 * nn + (size_t)n));
    double *scaled_d = malloc(sizeof(double) * nn);
    if (!buf || !scaled_d) { free(buf); free(scaled_d); return -1; }
    os_c128 *vb = buf, *inv = vb + nn, *lb = inv + nn, *wb = lb + nn, *scaled_z = inv;
    int status = 1;
    for (int64_t b = 0; b < batch; b++) {
        const double *ad = real ? (const double *)a + b * nn : NULL;
        const os_c128 *az = real ? NULL : (const os_c128 *)a + b * nn;
        /* kernels.eig scales far-from-1 matrices by a power of two (exact) */
        double m = -INFINITY;
        bool nan = false;
        for (size_t i = 0; i < nn; i++) {
            double x = real ? fabs(ad[i]) : os_cabs_c128(az[i]);
            if (isnan(x)) nan = true;
            else if (x > m) m = x;
        }
        if (nan) m = NAN;
        double scale = ((m < 1e-100 || m > 1e100) && 0 < m && m < INFINITY) ? pow(2.0, -rint(log2(m))) : 1.0;
        int done;
        if (real) {
            for (size_t i = 0; i < nn; i++) scaled_d[i] = ad[i] * scale;
            done = os_geev_d(scaled_d, n, wb, vb, vectors);
        } else {
            for (size_t i = 0; i < nn; i++) scaled_z[i] = os_l_scale(az[i], scale);
            done = os_geev_z(scaled_z, n, wb, vb, vectors);
        }
        if (done < 0) { status = -1; break; }
        if (done == 0) {  /* kernels._NAN_NAN */
            for (int i = 0; i < n; i++) w[b * n + i] = os_c128_make(NAN, NAN);
            for (size_t i = 0; i < (vectors ? nn : 0); i++) vr[b * nn + i] = os_c128_make(NAN, NAN);
            for (size_t i = 0; i < (left ? nn : 0); i++) vl[b * nn + i] = os_c128_make(NAN, NAN);
            continue;
        }
        for (int i = 0; i < n; i++) w[b * n + i] = os_l_over(wb[i], scale);
        if (vectors) memcpy(vr + b * nn, vb, sizeof(os_c128) * nn);
        if (left) {
            int inverted = os_inverse_z(vb, n, inv);
            if (inverted < 0) { status = -1; break; }
            if (inverted) {
                os_left_vectors(inv, n, lb);
                memcpy(vl + b * nn, lb, sizeof(os_c128) * nn);
            } else {
                for (size_t i = 0; i < nn; i++) vl[b * nn + i] = os_c128_make(NAN, NAN);
            }
        }
    }
    free(buf);
    free(scaled_d);
    return status;
}

/* dst (rows x cols, C order) := the column-major src (leading dimension ld), or, when not `ok`,
   NaN (nan + 0j when complex: the Numba kernels' `x[b] = np.nan`) */
static void os_from_fortran(void *dst, const void *src, int real, int rows, int cols, int ld, bool ok) {
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) {
            size_t to = (size_t)i * cols + j, from = i + (size_t)j * ld;
            if (real) ((double *)dst)[to] = ok ? ((const double *)src)[from] : NAN;
            else ((os_c128 *)dst)[to] = ok ? ((const os_c128 *)src)[from] : os_c128_make(NAN, 0.0);
        }
}

/* kernels.cholesky: out (b, n, n) := the lower factors of a (b, n, n) float64 (`real`) or
   complex128 stack, as Numba's np.linalg.cholesky (?potrf with 'U' on the C-ordered copy, then
   the upper triangle zeroed); a matrix ?potrf refuses gets NaN on and below the diagonal */
static void os_cholesky(const void *a, int real, int64_t batch, int n, void *out) {
    size_t nn = (size_t)n * n, item = real ? sizeof(double) : sizeof(os_c128);
    memset(out, 0, item * nn * (size_t)batch);
    if (n == 0) return;
    os_potrf_t potrf = OS_LAPACK(os_potrf_t, real ? OS_L_DPOTRF : OS_L_ZPOTRF);
    for (int64_t b = 0; b < batch; b++) {
        char *o = (char *)out + (size_t)b * nn * item, up = 'U';
        int info = 0;
        memcpy(o, (const char *)a + (size_t)b * nn * item, nn * item);
        potrf(&up, &n, o, &n, &info, 1);
        if (info == 0) {
            for (int col = 0; col < n; col++)
                for (int row = 0; row < col; row++) memset(o + ((size_t)row * n + col) * item, 0, item);
            continue;
        }
        memset(o, 0, nn * item);  /* `out[b, i, j] = np.nan` for j <= i: nan + 0j when complex */
        for (int i = 0; i < n; i++)
            for (int j = 0; j <= i; j++) {
                if (real) ((double *)o)[(size_t)i * n + j] = NAN;
                else ((os_c128 *)o)[(size_t)i * n + j] = os_c128_make(NAN, 0.0);
            }
    }
}

/* kernels.eigh: w (b, n) ascending and v (b, n, n) (columns) of Hermitian a (b, n, n) from its
   lower triangle (or, `lower` false, the upper one: the lower triangle of conj(a).T), as Numba's
   np.linalg.eigh (?syevd / ?heevd, 'V', 'L', on a Fortran-ordered copy, workspace queried);
   NaN for a matrix holding inf or NaN, or one LAPACK fails on. -1: no memory */
static int os_eigh(const void *a, int real, int lower, int64_t batch, int n, void *v, double *w) {
    if (n == 0) return 1;
    size_t nn = (size_t)n * n, item = real ? sizeof(double) : sizeof(os_c128);
    char *f = malloc(nn * item);
    if (!f) return -1;
    char jobz = 'V', uplo = 'L';
    for (int64_t b = 0; b < batch; b++) {
        bool finite = true;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                size_t at = lower ? (size_t)i * n + j : (size_t)j * n + i;
                if (real) {
                    double x = ((const double *)a)[(size_t)b * nn + at];
                    finite = finite && isfinite(x);
                    ((double *)f)[i + (size_t)j * n] = x;
                } else {
                    os_c128 x = ((const os_c128 *)a)[(size_t)b * nn + at];
                    finite = finite && isfinite(x.re) && isfinite(x.im);
                    ((os_c128 *)f)[i + (size_t)j * n] = lower ? x : os_cconj_c128(x);
                }
            }
        int info = 1, lwork = -1, lrwork = -1, liwork = -1, iquery = 0;
        double *wb = w + (size_t)b * n;
        if (finite && real) {
            double query = 0;
            os_dsyevd_t syevd = OS_LAPACK(os_dsyevd_t, OS_L_DSYEVD);
            syevd(&jobz, &uplo, &n, (double *)f, &n, wb, &query, &lwork, &iquery, &liwork, &info, 1, 1);
            lwork = (int)query; liwork = iquery;
            double *work = malloc(sizeof(double) * (size_t)(lwork > 1 ? lwork : 1));
            int *iwork = malloc(sizeof(int) * (size_t)(liwork > 1 ? liwork : 1));
            if (!work || !iwork) { free(work); free(iwork); free(f); return -1; }
            syevd(&jobz, &uplo, &n, (double *)f, &n, wb, work, &lwork, iwork, &liwork, &info, 1, 1);
            free(work); free(iwork);
        } else if (finite) {
            os_c128 query = {0, 0};
            double rquery = 0;
            os_zheevd_t heevd = OS_LAPACK(os_zheevd_t, OS_L_ZHEEVD);
            heevd(&jobz, &uplo, &n, (os_c128 *)f, &n, wb, &query, &lwork, &rquery, &lrwork, &iquery, &liwork, &info, 1, 1);
            lwork = (int)query.re; lrwork = (int)rquery; liwork = iquery;
            os_c128 *work = malloc(sizeof(os_c128) * (size_t)(lwork > 1 ? lwork : 1));
            double *rwork = malloc(sizeof(double) * (size_t)(lrwork > 1 ? lrwork : 1));
            int *iwork = malloc(sizeof(int) * (size_t)(liwork > 1 ? liwork : 1));
            if (!work || !rwork || !iwork) { free(work); free(rwork); free(iwork); free(f); return -1; }
            heevd(&jobz, &uplo, &n, (os_c128 *)f, &n, wb, work, &lwork, rwork, &lrwork, iwork, &liwork, &info, 1, 1);
            free(work); free(rwork); free(iwork);
        }
        os_from_fortran((char *)v + (size_t)b * nn * item, f, real, n, n, n, info == 0);
        if (info != 0)
            for (int i = 0; i < n; i++) wb[i] = NAN;
    }
    free(f);
    return 1;
}

/* kernels.svd: u (b, m, ucol), s (b, k) descending, vh (b, vrow, n) of a (b, m, n) float64
   (`real`) or complex128, as Numba's np.linalg.svd (?gesdd, jobz 'A' for full matrices else
   'S', on a Fortran-ordered copy, workspace queried, Numba's rwork size); NaN for a matrix
   holding inf or NaN or one LAPACK fails on; identities when k = 0. -1: no memory */
static int os_svd(const void *a, int real, int full, int64_t batch, int m, int n, void *u, double *s, void *vh) {
    int k = m < n ? m : n, ucol = full ? m : k, ldvt = full ? n : k, big = m > n ? m : n;
    size_t item = real ? sizeof(double) : sizeof(os_c128), mn = (size_t)m * n;
    size_t usize = (size_t)m * ucol, vsize = (size_t)ldvt * n;
    if (k == 0) {  /* kernels._eye_into(u), _eye_into(vh) */
        memset(u, 0, item * usize * (size_t)batch);
        memset(vh, 0, item * vsize * (size_t)batch);
        for (int64_t b = 0; b < batch; b++) {
            for (int i = 0; i < (m < ucol ? m : ucol); i++) {
                if (real) ((double *)u)[(size_t)b * usize + (size_t)i * ucol + i] = 1.0;
                else ((os_c128 *)u)[(size_t)b * usize + (size_t)i * ucol + i] = os_c128_make(1.0, 0.0);
            }
            for (int i = 0; i < (ldvt < n ? ldvt : n); i++) {
                if (real) ((double *)vh)[(size_t)b * vsize + (size_t)i * n + i] = 1.0;
                else ((os_c128 *)vh)[(size_t)b * vsize + (size_t)i * n + i] = os_c128_make(1.0, 0.0);
            }
        }
        return 1;
    }
    char *f = malloc(item * (mn + usize + vsize));
    int *iwork = malloc(sizeof(int) * 8 * (size_t)k);
    int lrwork = k * ((5 * k + 7) > (2 * big + 2 * k + 1) ? (5 * k + 7) : (2 * big + 2 * k + 1));
    double *rwork = real ? NULL : malloc(sizeof(double) * (size_t)(lrwork > 1 ? lrwork : 1));
    if (!f || !iwork || (!real && !rwork)) { free(f); free(iwork); free(rwork); return -1; }
    char *uf = f + item * mn, *vf = uf + item * usize, jobz = full ? 'A' : 'S';
    for (int64_t b = 0; b < batch; b++) {
        bool finite = true;
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++) {
                size_t from = (size_t)b * mn + (size_t)i * n + j, to = i + (size_t)j * m;
                if (real) {
                    double x = ((const double *)a)[from];
                    finite = finite && isfinite(x);
                    ((double *)f)[to] = x;
                } else {
                    os_c128 x = ((const os_c128 *)a)[from];
                    finite = finite && isfinite(x.re) && isfinite(x.im);
                    ((os_c128 *)f)[to] = x;
                }
            }
        int info = 1, lwork = -1;
        double *sb = s + (size_t)b * k;
        if (finite && real) {
            double query = 0;
            os_dgesdd_t gesdd = OS_LAPACK(os_dgesdd_t, OS_L_DGESDD);
            gesdd(&jobz, &m, &n, (double *)f, &m, sb, (double *)uf, &m, (double *)vf, &ldvt, &query, &lwork, iwork, &info, 1);
            lwork = (int)query;
            double *work = malloc(sizeof(double) * (size_t)(lwork > 1 ? lwork : 1));
            if (!work) { free(f); free(iwork); return -1; }
            gesdd(&jobz, &m, &n, (double *)f, &m, sb, (double *)uf, &m, (double *)vf, &ldvt, work, &lwork, iwork, &info, 1);
            free(work);
        } else if (finite) {
            os_c128 query = {0, 0};
            os_zgesdd_t gesdd = OS_LAPACK(os_zgesdd_t, OS_L_ZGESDD);
            gesdd(&jobz, &m, &n, (os_c128 *)f, &m, sb, (os_c128 *)uf, &m, (os_c128 *)vf, &ldvt, &query, &lwork, rwork,
                  iwork, &info, 1);
            lwork = (int)query.re;
            os_c128 *work = malloc(sizeof(os_c128) * (size_t)(lwork > 1 ? lwork : 1));
            if (!work) { free(f); free(iwork); free(rwork); return -1; }
            gesdd(&jobz, &m, &n, (os_c128 *)f, &m, sb, (os_c128 *)uf, &m, (os_c128 *)vf, &ldvt, work, &lwork, rwork,
                  iwork, &info, 1);
            free(work);
        }
        /* u[b][i, j] = U(i, j) (column-major, ld m); vh[b][i, j] = VT(i, j) (ld ldvt); NaN + 0j on failure */
        os_from_fortran((char *)u + (size_t)b * usize * item, uf, real, m, ucol, m, info == 0);
        os_from_fortran((char *)vh + (size_t)b * vsize * item, vf, real, ldvt, n, ldvt, info == 0);
        if (info != 0)
            for (int i = 0; i < k; i++) sb[i] = NAN;
    }
    free(f); free(iwork); free(rwork);
    return 1;
}
"""
