"""The native tier's convolutions: `kernels.conv_in_layout` for float32 and float64 operands in C,
a translation unit compiled once per machine (c_objects) and linked into each library whose
module convolves (c_translate's section "conv": STUB).

Why: a library that convolved called the kernel's Numba build (numba_kernel_table), so every
process that ran it imported Numba and loaded the kernel and its task function from Numba's
cache (1.0-1.4 s before a cached convolutional program's first result, against 0.1 s for one
without), and a fresh machine compiled them first (9.4 s and 2.6 s for float32). Compiled by the
C compiler, the unit takes about a second once per machine and nothing after.

What it computes is the Numba kernel's algorithm step for step (kernels.conv_in_layout,
_spec_ordered, _taps, _phases, _conv_gemm, _conv_tasks, permuted_copy): operands relaid out in
their specs' order, per phase of the output positions and per (group, block of batch entries)
task, the windows gathered into columns and multiplied by the group's kernel rows with one call
of the BLAS table's gemm, the same calls with the same arguments, so its bits are the Numba
build's. A phase's tasks run on the GEMM pool's threads when it is loaded (the table's loop
runner), else on the caller; each task computes the same products either way. Integer and
complex convolutions, and operands of different dtypes, keep the Numba kernel.
"""
from . import blas_table, c_objects

DTYPES = {"float32": ("float", "f32", blas_table.KINDS.index("s")),
          "float64": ("double", "f64", blas_table.KINDS.index("d"))}


def function(dtype):
    """The C function convolving operands of `dtype` (a NumPy dtype name), or None."""
    return f"omnistage_conv_{DTYPES[dtype][1]}" if dtype in DTYPES else None


_PROTOTYPE = ("int32_t omnistage_conv_SUF(const T *lhs, const int64_t *lhs_shape, const T *rhs, "
              "const int64_t *rhs_shape, T *out, const int64_t *params)")

# the section a translated module gets: the functions' declarations
STUB = "/* c_conv's convolutions, linked in from their object file */\n" + "".join(
    _PROTOTYPE.replace("SUF", suf).replace("T ", f"{ct} ") + ";\n" for ct, suf, _ in DTYPES.values())

_COMMON = r"""
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
typedef void (*os_cv_gemm_t)(const char *, const char *, const int *, const int *, const int *, const void *,
                             const void *, const int *, const void *, const int *, const void *, void *, const int *);
typedef void (*os_cv_pool_for_t)(void (*)(void *, int64_t, int64_t), void *, int64_t);
extern int64_t omnistage_blas_gemm[];  /* the library's BLAS table (c_runtime) */
#define OS_CV_LOOP_SLOT LOOP_SLOT_VALUE
#define OS_CV_COLS_BUDGET ((int64_t)1 << 16)  /* kernels._COLS_BUDGET */

static int64_t os_cv_prod(const int64_t *v, int64_t n) {
    int64_t p = 1;
    for (int64_t d = 0; d < n; d++) p *= v[d];
    return p;
}

static void os_cv_unravel(int64_t flat, const int64_t *shape, int64_t n, int64_t *out) {
    for (int64_t d = n - 1; d >= 0; d--) { out[d] = flat % shape[d]; flat /= shape[d]; }
}

static int64_t os_cv_mod(int64_t a, int64_t b) {  /* Python's %: the result has b's sign */
    int64_t r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

/* kernels._taps: taps[s * n_k + t], the flat input position output position s reads at tap t, -1
   in padding or between lhs-dilated elements */
static int64_t *os_cv_taps(int64_t nsp, const int64_t *in_sp, const int64_t *k_sp, const int64_t *out_sp,
                           const int64_t *strides, const int64_t *pad_lo, const int64_t *lhs_dil, const int64_t *rhs_dil) {
    int64_t n_out = os_cv_prod(out_sp, nsp), n_k = os_cv_prod(k_sp, nsp);
    int64_t *taps = (int64_t *)malloc(sizeof(int64_t) * (n_out * n_k > 0 ? n_out * n_k : 1));
    int64_t oi[nsp > 0 ? nsp : 1], ki[nsp > 0 ? nsp : 1];
    if (taps == NULL) return NULL;
    for (int64_t s = 0; s < n_out; s++) {
        os_cv_unravel(s, out_sp, nsp, oi);
        for (int64_t t = 0; t < n_k; t++) {
            os_cv_unravel(t, k_sp, nsp, ki);
            int64_t flat = 0;
            for (int64_t d = 0; d < nsp; d++) {
                int64_t p = oi[d] * strides[d] + ki[d] * rhs_dil[d] - pad_lo[d];
                int64_t dilated = in_sp[d] > 0 ? (in_sp[d] - 1) * lhs_dil[d] + 1 : 0;
                if (p < 0 || p >= dilated || os_cv_mod(p, lhs_dil[d]) != 0) { flat = -1; break; }
                flat = flat * in_sp[d] + p / lhs_dil[d];
            }
            taps[s * n_k + t] = flat;
        }
    }
    return taps;
}

/* kernels._phases: phase[s] of each output position, reads[ph * n_k + t] whether phase ph reads tap t */
static int os_cv_phases(int64_t nsp, const int64_t *k_sp, const int64_t *out_sp, const int64_t *strides,
                        const int64_t *pad_lo, const int64_t *lhs_dil, const int64_t *rhs_dil,
                        int64_t **phase_out, char **reads_out, int64_t *n_ph_out) {
    int64_t n_out = os_cv_prod(out_sp, nsp), n_k = os_cv_prod(k_sp, nsp), n_ph = os_cv_prod(lhs_dil, nsp);
    int64_t oi[nsp > 0 ? nsp : 1], ki[nsp > 0 ? nsp : 1], pi[nsp > 0 ? nsp : 1];
    int64_t *phase = (int64_t *)malloc(sizeof(int64_t) * (n_out > 0 ? n_out : 1));
    char *reads = (char *)malloc(n_ph * n_k > 0 ? n_ph * n_k : 1);
    if (phase == NULL || reads == NULL) { free(phase); free(reads); return 1; }
    for (int64_t s = 0; s < n_out; s++) {
        os_cv_unravel(s, out_sp, nsp, oi);
        int64_t ph = 0;
        for (int64_t d = 0; d < nsp; d++) ph = ph * lhs_dil[d] + os_cv_mod(oi[d] * strides[d] - pad_lo[d], lhs_dil[d]);
        phase[s] = ph;
    }
    for (int64_t p = 0; p < n_ph; p++) {
        os_cv_unravel(p, lhs_dil, nsp, pi);
        for (int64_t t = 0; t < n_k; t++) {
            os_cv_unravel(t, k_sp, nsp, ki);
            char hit = 1;
            for (int64_t d = 0; d < nsp; d++)
                if (os_cv_mod(pi[d] + ki[d] * rhs_dil[d], lhs_dil[d]) != 0) hit = 0;
            reads[p * n_k + t] = hit;
        }
    }
    *phase_out = phase, *reads_out = reads, *n_ph_out = n_ph;
    return 0;
}
"""

_TYPED = r"""
/* kernels.permuted_copy: dst (C order) = src (C order, of shape src_shape) with dst axis k = src axis perm[k] */
static void os_cv_permute_SUF(const T *src, int64_t nd, const int64_t *src_shape, const int64_t *perm, T *dst) {
    int64_t size = os_cv_prod(src_shape, nd);
    if (size == 0) return;
    int64_t src_stride[nd], dims[nd], strides[nd], idx[nd];
    int64_t step = 1;
    for (int64_t d = nd - 1; d >= 0; d--) { src_stride[d] = step; step *= src_shape[d]; }
    for (int64_t k = 0; k < nd; k++) { dims[k] = src_shape[perm[k]]; strides[k] = src_stride[perm[k]]; idx[k] = 0; }
    int64_t inner = dims[nd - 1], inner_stride = strides[nd - 1], base = 0;
    for (int64_t j = 0; j < size; j += inner) {
        for (int64_t i = 0; i < inner; i++) dst[j + i] = src[base + i * inner_stride];
        for (int64_t k = nd - 2; k >= 0; k--) {  /* next index of the outer axes */
            idx[k]++;
            base += strides[k];
            if (idx[k] < dims[k]) break;
            base -= idx[k] * strides[k];
            idx[k] = 0;
        }
    }
}

/* kernels._spec_ordered: x with its axes in spec order (batch or out-feature, feature, spatial);
   x itself when spec is the identity, else a new array (*owned, NULL when out of memory) */
static const T *os_cv_spec_ordered_SUF(const T *x, int64_t nd, const int64_t *shape, const int64_t *spec, T **owned) {
    *owned = NULL;
    int identity = 1;
    for (int64_t k = 0; k < nd; k++) identity &= spec[k] == k;
    if (identity) return x;
    int64_t size = os_cv_prod(shape, nd);
    *owned = (T *)malloc(sizeof(T) * (size > 0 ? size : 1));
    if (*owned != NULL) os_cv_permute_SUF(x, nd, shape, spec, *owned);
    return *owned;
}

/* one phase's tasks (kernels._conv_gemm's ctx, _conv_tasks's arguments) */
typedef struct {
    const T *lhs; int64_t lhs_n, lhs_c, in_sz;
    const T *rhs; int64_t in_ch, n_t;
    T *out; int64_t n_out, o_feats, n_s;
    const int64_t *reads_at, *s_at, *t_at; int64_t nt, ns;
    int64_t feature_groups, batch_groups, chunk;
    int failed;
} os_cv_phase_SUF;

/* kernels._conv_tasks: tasks [lo, hi) of a phase */
static void os_cv_tasks_SUF(void *arg, int64_t lo, int64_t hi) {
    os_cv_phase_SUF *c = (os_cv_phase_SUF *)arg;
    int64_t groups = c->feature_groups > c->batch_groups ? c->feature_groups : c->batch_groups;
    int64_t per_group = c->o_feats / groups, nt = c->nt, ns = c->ns, in_ch = c->in_ch, chunk = c->chunk;
    int64_t kdim = in_ch * nt, blocks = (c->n_out + chunk - 1) / chunk;
    T *w = (T *)malloc(sizeof(T) * (per_group * kdim > 0 ? per_group * kdim : 1));
    T *cols = (T *)malloc(sizeof(T) * (kdim * chunk * ns > 0 ? kdim * chunk * ns : 1));
    T *res = (T *)malloc(sizeof(T) * (per_group * chunk * ns > 0 ? per_group * chunk * ns : 1));
    if (w == NULL || cols == NULL || res == NULL) {
        __atomic_store_n(&c->failed, 1, __ATOMIC_RELAXED);
        free(w); free(cols); free(res);
        return;
    }
    os_cv_gemm_t gemm = (os_cv_gemm_t)(intptr_t)omnistage_blas_gemm[GEMM_SLOT];
    const T one = 1, zero = 0;
    int64_t w_of = -1;
    for (int64_t task = lo; task < hi; task++) {
        int64_t g = task / blocks, n0 = (task % blocks) * chunk;
        if (g != w_of) {
            for (int64_t o = 0; o < per_group; o++)
                for (int64_t ch = 0; ch < in_ch; ch++)
                    for (int64_t i = 0; i < nt; i++)
                        w[o * kdim + ch * nt + i] = c->rhs[((g * per_group + o) * in_ch + ch) * c->n_t + c->t_at[i]];
            w_of = g;
        }
        int64_t ch0 = c->feature_groups > 1 ? g * in_ch : 0;
        int64_t nb = chunk < c->n_out - n0 ? chunk : c->n_out - n0;
        int64_t width = nb * ns;
        for (int64_t ch = 0; ch < in_ch; ch++)
            for (int64_t i = 0; i < nt; i++) {
                int64_t row_at = (ch * nt + i) * width;
                const int64_t *reads = c->reads_at + i * ns;
                for (int64_t j = 0; j < nb; j++) {
                    int64_t src_n = c->batch_groups > 1 ? g * c->n_out + n0 + j : n0 + j;
                    const T *src = c->lhs + (src_n * c->lhs_c + ch0 + ch) * c->in_sz;
                    T *dst = cols + row_at + j * ns;
                    for (int64_t q = 0; q < ns; q++) dst[q] = reads[q] >= 0 ? src[reads[q]] : zero;
                }
            }
        /* res = w @ cols, as column-major res^T = cols^T @ w^T (kernels._xxgemm's call) */
        int m_ = (int)width, n_ = (int)per_group, k_ = (int)kdim, lda = (int)width, ldb = (int)kdim, ldc = (int)width;
        gemm("n", "n", &m_, &n_, &k_, &one, cols, &lda, w, &ldb, &zero, res, &ldc);
        for (int64_t o = 0; o < per_group; o++)
            for (int64_t j = 0; j < nb; j++) {
                T *dst = c->out + ((n0 + j) * c->o_feats + g * per_group + o) * c->n_s;
                const T *src = res + o * width + j * ns;
                if (ns == c->n_s) for (int64_t q = 0; q < ns; q++) dst[q] = src[q];  /* one phase: in order */
                else for (int64_t q = 0; q < ns; q++) dst[c->s_at[q]] = src[q];
            }
    }
    free(w); free(cols); free(res);
}

/* kernels._conv_gemm: out (n_out, o_feats, n_s) of lhs (N, C, S_in) and rhs (O, I, n_t); 1 when out of memory */
static int os_cv_gemm_SUF(const T *lhs, int64_t lhs_n, int64_t lhs_c, int64_t in_sz, const T *rhs, int64_t in_ch,
                          int64_t n_t, T *out, int64_t n_out, int64_t o_feats, int64_t n_s, int64_t nsp,
                          const int64_t *in_sp, const int64_t *k_sp, const int64_t *out_sp, const int64_t *strides,
                          const int64_t *pad_lo, const int64_t *lhs_dil, const int64_t *rhs_dil,
                          int64_t feature_groups, int64_t batch_groups) {
    int64_t groups = feature_groups > batch_groups ? feature_groups : batch_groups;
    for (int64_t i = 0; i < n_out * o_feats * n_s; i++) out[i] = 0;
    if (in_ch * n_t == 0 || n_s == 0 || n_out == 0 || o_feats == 0) return 0;
    int64_t *taps = os_cv_taps(nsp, in_sp, k_sp, out_sp, strides, pad_lo, lhs_dil, rhs_dil);
    int64_t *phase = NULL, n_ph = 0;
    char *reads = NULL;
    if (taps == NULL || os_cv_phases(nsp, k_sp, out_sp, strides, pad_lo, lhs_dil, rhs_dil, &phase, &reads, &n_ph)) {
        free(taps);
        return 1;
    }
    int64_t n_k = os_cv_prod(k_sp, nsp);
    int64_t *s_at = (int64_t *)malloc(sizeof(int64_t) * n_s), *t_at = (int64_t *)malloc(sizeof(int64_t) * n_k);
    int64_t *reads_at = (int64_t *)malloc(sizeof(int64_t) * n_s * n_k);
    int failed = s_at == NULL || t_at == NULL || reads_at == NULL;
    for (int64_t ph = 0; ph < n_ph && !failed; ph++) {
        int64_t ns = 0, nt = 0;
        for (int64_t s = 0; s < n_s; s++) if (phase[s] == ph) s_at[ns++] = s;
        for (int64_t t = 0; t < n_k; t++) if (reads[ph * n_k + t]) t_at[nt++] = t;
        if (ns == 0 || nt == 0) continue;  /* no outputs, or outputs that read only holes: zeros */
        for (int64_t i = 0; i < nt; i++)
            for (int64_t q = 0; q < ns; q++) reads_at[i * ns + q] = taps[s_at[q] * n_k + t_at[i]];
        int64_t chunk = OS_CV_COLS_BUDGET / (in_ch * nt * ns);
        chunk = chunk < n_out ? chunk : n_out;
        chunk = chunk > 1 ? chunk : 1;
        int64_t tasks = groups * ((n_out + chunk - 1) / chunk);
        os_cv_phase_SUF c = {lhs, lhs_n, lhs_c, in_sz, rhs, in_ch, n_t, out, n_out, o_feats, n_s,
                             reads_at, s_at, t_at, nt, ns, feature_groups, batch_groups, chunk, 0};
        if (tasks >= 2 && omnistage_blas_gemm[OS_CV_LOOP_SLOT] != 0)
            ((os_cv_pool_for_t)(intptr_t)omnistage_blas_gemm[OS_CV_LOOP_SLOT])(os_cv_tasks_SUF, &c, tasks);
        else
            os_cv_tasks_SUF(&c, 0, tasks);
        failed = c.failed;
    }
    free(taps); free(phase); free(reads); free(s_at); free(t_at); free(reads_at);
    return failed;
}

/* kernels.conv_in_layout (its params as there); 0 done, 1 out of memory */
PROTOTYPE {
    int64_t nd = params[0], ns = nd - 2 > 1 ? nd - 2 : 1;
    const int64_t *lhs_spec = params + 1, *rhs_spec = params + 1 + nd;
    const int64_t *out_perm = params + 1 + 2 * nd, *spec_shape = params + 1 + 3 * nd;
    const int64_t *sp = params + 1 + 4 * nd;
    const int64_t *in_sp = sp, *k_sp = sp + ns, *out_sp = sp + 2 * ns, *strides = sp + 3 * ns, *pad_lo = sp + 4 * ns;
    const int64_t *lhs_dil = sp + 5 * ns, *rhs_dil = sp + 6 * ns;
    int64_t feature_groups = sp[7 * ns], batch_groups = sp[7 * ns + 1];
    T *lhs_owned, *rhs_owned, *buf = NULL;
    const T *x = os_cv_spec_ordered_SUF(lhs, nd, lhs_shape, lhs_spec, &lhs_owned);
    const T *k = os_cv_spec_ordered_SUF(rhs, nd, rhs_shape, rhs_spec, &rhs_owned);
    int64_t lhs_n = lhs_shape[lhs_spec[0]], lhs_c = lhs_shape[lhs_spec[1]];
    int64_t in_sz = os_cv_prod(lhs_shape, nd) / (lhs_n * lhs_c > 1 ? lhs_n * lhs_c : 1);
    int64_t o_k = rhs_shape[rhs_spec[0]], in_ch = rhs_shape[rhs_spec[1]];
    int64_t n_t = os_cv_prod(rhs_shape, nd) / (o_k * in_ch > 1 ? o_k * in_ch : 1);
    int64_t n = spec_shape[0], o = spec_shape[1], size = os_cv_prod(spec_shape, nd);
    int64_t spatial = size / (n * o > 1 ? n * o : 1);
    int identity = 1;
    for (int64_t a = 0; a < nd; a++) identity &= out_perm[a] == a;
    int failed = x == NULL || k == NULL;
    if (!failed && !identity) {
        buf = (T *)malloc(sizeof(T) * (size > 0 ? size : 1));
        failed = buf == NULL;
    }
    if (!failed)
        failed = os_cv_gemm_SUF(x, lhs_n, lhs_c, in_sz, k, in_ch, n_t, identity ? out : buf, n, o, spatial, ns,
                                in_sp, k_sp, out_sp, strides, pad_lo, lhs_dil, rhs_dil, feature_groups, batch_groups);
    if (!failed && !identity) os_cv_permute_SUF(buf, nd, spec_shape, out_perm, out);
    free(lhs_owned); free(rhs_owned); free(buf);
    return failed;
}
"""

SOURCE = _COMMON.replace("LOOP_SLOT_VALUE", str(blas_table.LOOP_SLOT)) + c_objects.for_types(
    _TYPED.replace("PROTOTYPE", _PROTOTYPE), [(ct, suf, {"GEMM_SLOT": slot}) for ct, suf, slot in DTYPES.values()])

STEM = "conv"  # its object file's name in the cache (c_objects)
