"""The native tier's own float32 matrix product: a register-tiled kernel in C that os_matmul
(c_runtime) calls instead of BLAS's sgemm for the products of float32 programs.

Why: the products of the real programs of issue 18 have few rows (a batch of 32 or 128) and
SciPy's OpenBLAS spends a good part of such a product packing its operands and zeroing the result
(sgemm_itcopy/incopy/oncopy and sgemm_beta were a third of mnist_vae's BLAS time). On a 2-core
AMD EPYC Zen4 (AVX-512 on two 256-bit FMA pipes: a pure-FMA loop peaks at 117 GFLOP/s per core)
it ran mnist_classifier's 128x784 @ 784x512 at 107 GFLOP/s on one core in a C harness (91% of
peak; perf: the 6-row tile 84%, packing Y 6%, the 2-row remainder tile 3%) and at 203 on two
threads (4 GEMM-pool blocks). On that shape and one core NumPy's OpenBLAS 0.3.31 reached 97
(fastest of 50 calls; median 85), SciPy's sgemm on the same C-ordered operands 46 (median 33, its
layout copies included). (An earlier note's 200-240 GFLOP/s "on one thread" cannot be one core
of that machine.)
benchmarks/examples/gemm.py times products through programs, against NumPy and JAX.

How: k in blocks of KC and the rows of X in blocks of MC, each block swept by panels of NR
columns of Y and each panel by tiles of MR rows of X; an MR x NR block of the result lives in
vector registers (6 x 64 floats on AVX-512, 6 x 16 on AVX2) and each step of k is MR broadcasts
and MR * NV fused multiply-adds. Y's panels are packed into a thread's buffer (read in place only
for products of few rows whose Y rows are contiguous and not a multiple of 4 KB apart: such rows
share a few cache sets, and the fused forward products of issue 18, 1024-wide float32 weights,
ran at 80-90 GFLOP/s in place, 140-155 packed), and a column-major X (a gradient's X^T) is
packed per block into MR-row tiles. Vector widths follow the target the library is compiled for
(-march=native).

Bits: each element of the result is one chain of fused multiply-adds in k order, from 0, so its
value depends on the product's shape and operands alone, never on the panel, k block, GEMM-pool
block or thread that computes it: a library's results are the same on any number of threads and
in every process. They differ from BLAS's (another order of summation), so a float32 program
this tier builds and the same program's Numba build may differ in the last bits; a program has
one build (c_tier), so its results do not change from call to call.

Compile time: the kernel is a separate translation unit (SOURCE), compiled once per machine
and compiler flags into an object file (c_objects) linked into each library whose module has a
float32 product (c_translate's section "sgemm": STUB, which registers it with os_matmul through
a constructor). Compiled with every such program it cost 160 ms of each one's first call.
"""
from . import c_objects

# the section a translated module gets: os_matmul's hook, filled when the library loads
STUB = r"""
/* c_sgemm's kernel, linked in from its object file */
void omnistage_sgemm_f(const char *, const char *, const int *, const int *, const int *, const void *,
                       const void *, const int *, const void *, const int *, const void *, void *, const int *);
int64_t omnistage_sgemm_panel(void);
__attribute__((constructor)) static void os_sgemm_register(void) {
    os_own_sgemm = omnistage_sgemm_f;
    os_own_sgemm_cols = omnistage_sgemm_panel();
}
"""

SOURCE = r"""
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
typedef void (*os_gemm_t)(const char *, const char *, const int *, const int *, const int *, const void *,
                          const void *, const int *, const void *, const int *, const void *, void *, const int *);
extern int64_t omnistage_blas_gemm[];  /* the library's BLAS table (c_runtime) */
/* vector width and register tile from the target the library is compiled for */
#if defined(__AVX512F__)
#define OS_SG_VF 16
#define OS_SG_NV 4
#define OS_SG_MR 6
#elif defined(__AVX__)
#define OS_SG_VF 8
#define OS_SG_NV 2
#define OS_SG_MR 6
#else
#define OS_SG_VF 4
#define OS_SG_NV 2
#define OS_SG_MR 4
#endif
#define OS_SG_NR (OS_SG_VF * OS_SG_NV)
#define OS_SG_KC 512
typedef float os_sg_v __attribute__((vector_size(OS_SG_VF * 4)));
typedef float os_sg_v8 __attribute__((vector_size(32)));
typedef int32_t os_sg_i8 __attribute__((vector_size(32)));
#if defined(__clang__)
#define OS_SG_FAST
#define OS_SG_CONTRACT _Pragma("clang fp contract(fast)")
#else
#define OS_SG_FAST __attribute__((optimize("O2", "fp-contract=fast")))
#define OS_SG_CONTRACT
#endif
#define OS_SG_UNROLL _Pragma("GCC unroll 16")

/* Z[0:MR, 0:nr] (+)= X[0:MR, 0:kc] @ P[0:kc, 0:NR]: the register tile. Each element is one chain
   of fused multiply-adds in k order, from 0 (first) or from what Z holds (a later k block), so
   its value depends on the shape alone, never on the panel, block or thread that computes it. */
#define OS_SG_KERNEL(MR) \
OS_SG_FAST static void os_sg_tile##MR(int64_t kc, const float *x, int64_t xr, int64_t xc, const float *p, int64_t ps, \
                                     float *z, int64_t ldz, int64_t nr, int first) { \
    OS_SG_CONTRACT \
    os_sg_v acc[MR][OS_SG_NV]; \
    float t[OS_SG_NR]; \
    OS_SG_UNROLL for (int r = 0; r < MR; r++) { \
        if (first) { OS_SG_UNROLL for (int v = 0; v < OS_SG_NV; v++) acc[r][v] = (os_sg_v){0}; } \
        else { memset(t, 0, sizeof t); memcpy(t, z + r * ldz, (size_t)nr * sizeof(float)); \
               OS_SG_UNROLL for (int v = 0; v < OS_SG_NV; v++) memcpy(&acc[r][v], t + v * OS_SG_VF, sizeof(os_sg_v)); } \
    } \
    for (int64_t k = 0; k < kc; k++) { \
        os_sg_v y[OS_SG_NV]; \
        OS_SG_UNROLL for (int v = 0; v < OS_SG_NV; v++) memcpy(&y[v], p + k * ps + v * OS_SG_VF, sizeof(os_sg_v)); \
        OS_SG_UNROLL for (int r = 0; r < MR; r++) { \
            float a = x[r * xr + k * xc]; \
            OS_SG_UNROLL for (int v = 0; v < OS_SG_NV; v++) acc[r][v] += a * y[v]; \
        } \
    } \
    OS_SG_UNROLL for (int r = 0; r < MR; r++) { \
        if (nr == OS_SG_NR) { OS_SG_UNROLL for (int v = 0; v < OS_SG_NV; v++) memcpy(z + r * ldz + v * OS_SG_VF, &acc[r][v], sizeof(os_sg_v)); } \
        else { memcpy(t, acc[r], sizeof t); memcpy(z + r * ldz, t, (size_t)nr * sizeof(float)); } \
    } \
}
OS_SG_KERNEL(1) OS_SG_KERNEL(2) OS_SG_KERNEL(3) OS_SG_KERNEL(4)
#if OS_SG_MR == 6
OS_SG_KERNEL(5) OS_SG_KERNEL(6)
#endif

typedef void (*os_sg_tile_t)(int64_t, const float *, int64_t, int64_t, const float *, int64_t, float *, int64_t, int64_t, int);
static const os_sg_tile_t os_sg_tiles[] = {NULL, os_sg_tile1, os_sg_tile2, os_sg_tile3, os_sg_tile4,
#if OS_SG_MR == 6
                                           os_sg_tile5, os_sg_tile6
#endif
};

/* a thread's buffers (the pool's workers each have their own), kept for its next product: a panel
   of Y (KC x NR) and a block of X (MC x KC) */
static __thread float *os_sg_buf = NULL;
static __thread float *os_sg_xbuf = NULL;
static __thread float *os_sg_ybuf = NULL;  /* the whole of Y packed, for products of several row blocks */
static __thread int64_t os_sg_ybuf_n = 0;  /* its floats */
#define OS_SG_MC 384  /* rows of X per block at most: MC x KC floats stay in L2 */
#define OS_SG_WHOLE_Y (1 << 22)  /* floats (16 MB): the most of Y packed at once */
#define OS_SG_FEW_ROWS 64      /* fewer rows than this share a packed panel too little: Y in place */
#define OS_SG_SET_STRIDE 1024  /* floats (4 KB): rows a multiple of this apart share a few cache sets */

/* b (kc x NR, row stride NR) = Y[k0:k0+kc, jp:jp+nr], zero-padded to NR columns */
static void os_sg_pack_y(float *b, const float *y, int64_t yr, int64_t yc, int64_t k0, int64_t kc, int64_t jp, int64_t nr) {
    if (yr == 1) {  /* Y's columns are contiguous: a transpose, in 8x8 register blocks, the rest by blocks of 16 k that stay in L1 */
        int64_t kk8 = 0;
#if defined(__GNUC__) && !defined(__clang__)
        /* 8x8 blocks transposed in registers (GCC's vector shuffles) */
        for (; kk8 + 8 <= kc; kk8 += 8) {
            int64_t j0 = 0;
            for (; j0 + 8 <= nr; j0 += 8) {
                os_sg_v8 r[8], t[8], u[8];
                for (int j = 0; j < 8; j++) memcpy(&r[j], y + (jp + j0 + j) * yc + k0 + kk8, sizeof(os_sg_v8));
                for (int q = 0; q < 8; q += 2) {
                    t[q] = __builtin_shuffle(r[q], r[q + 1], (os_sg_i8){0, 8, 1, 9, 4, 12, 5, 13});
                    t[q + 1] = __builtin_shuffle(r[q], r[q + 1], (os_sg_i8){2, 10, 3, 11, 6, 14, 7, 15});
                }
                for (int q = 0; q < 8; q += 4) {
                    u[q] = __builtin_shuffle(t[q], t[q + 2], (os_sg_i8){0, 1, 8, 9, 4, 5, 12, 13});
                    u[q + 1] = __builtin_shuffle(t[q], t[q + 2], (os_sg_i8){2, 3, 10, 11, 6, 7, 14, 15});
                    u[q + 2] = __builtin_shuffle(t[q + 1], t[q + 3], (os_sg_i8){0, 1, 8, 9, 4, 5, 12, 13});
                    u[q + 3] = __builtin_shuffle(t[q + 1], t[q + 3], (os_sg_i8){2, 3, 10, 11, 6, 7, 14, 15});
                }
                for (int q = 0; q < 4; q++) {
                    os_sg_v8 lo = __builtin_shuffle(u[q], u[q + 4], (os_sg_i8){0, 1, 2, 3, 8, 9, 10, 11});
                    os_sg_v8 hi = __builtin_shuffle(u[q], u[q + 4], (os_sg_i8){4, 5, 6, 7, 12, 13, 14, 15});
                    memcpy(b + (kk8 + q) * OS_SG_NR + j0, &lo, sizeof lo);
                    memcpy(b + (kk8 + q + 4) * OS_SG_NR + j0, &hi, sizeof hi);
                }
            }
            for (int64_t j = j0; j < nr; j++)
                for (int64_t k = kk8; k < kk8 + 8; k++) b[k * OS_SG_NR + j] = y[(jp + j) * yc + k0 + k];
        }
#endif
        for (int64_t kk = kk8; kk < kc; kk += 16) {
            int64_t ke = kc - kk < 16 ? kc : kk + 16;
            for (int64_t j = 0; j < nr; j++) {
                const float *col = y + (jp + j) * yc + k0;
                for (int64_t k = kk; k < ke; k++) b[k * OS_SG_NR + j] = col[k];
            }
        }
    } else if (yc == 1) {  /* rows of 256 bytes 1 KB apart or more: the prefetcher stops at pages, so prefetch ahead */
        for (int64_t k = 0; k < kc; k++) {
            if (k + 16 < kc) {
                const char *ahead = (const char *)(y + (k0 + k + 16) * yr + jp);
                for (int64_t l = 0; l < nr * (int64_t)sizeof(float); l += 64) __builtin_prefetch(ahead + l);
            }
            if (nr == OS_SG_NR) memcpy(b + k * OS_SG_NR, y + (k0 + k) * yr + jp, OS_SG_NR * sizeof(float));  /* (inlined) */
            else memcpy(b + k * OS_SG_NR, y + (k0 + k) * yr + jp, (size_t)nr * sizeof(float));
        }
    } else {
        for (int64_t k = 0; k < kc; k++) for (int64_t j = 0; j < nr; j++) b[k * OS_SG_NR + j] = y[(k0 + k) * yr + (jp + j) * yc];
    }
    if (nr < OS_SG_NR) for (int64_t k = 0; k < kc; k++) memset(b + k * OS_SG_NR + nr, 0, (size_t)(OS_SG_NR - nr) * sizeof(float));
}

/* d = X[0:mc, 0:kc] in tiles of MR rows, each tile k-major (its MR values of one k contiguous) */
static void os_sg_pack_x(float *d, const float *x, int64_t xr, int64_t xc, int64_t mc, int64_t kc) {
    for (int64_t t = 0; t < mc; t += OS_SG_MR) {
        int64_t mr = mc - t < OS_SG_MR ? mc - t : OS_SG_MR;
        for (int64_t k = 0; k < kc; k++) for (int64_t r = 0; r < mr; r++) d[t * kc + k * OS_SG_MR + r] = x[(t + r) * xr + k * xc];
    }
}

/* row-major Z (M x N, row stride ldz) = X @ Y with X[i,k] = x[i*xr + k*xc], Y[k,j] = y[k*yr + j*yc]:
   blocks of MC rows of X and KC steps of k, each swept by panels of NR columns of Y and those by
   MR-row tiles of X. Y's panels are packed (read in place only when its rows are contiguous, the
   product has few rows to share the packing and the rows are not a multiple of 4 KB apart, which
   maps a panel's rows onto a few cache sets); X is read in place when its rows are contiguous,
   else packed once per block (a column-major X is 6 reads 4 bytes apart per k). 1 when out of
   memory. */
static int os_sgemm_rm(int64_t M, int64_t N, int64_t K, const float *x, int64_t xr, int64_t xc,
                       const float *y, int64_t yr, int64_t yc, float *z, int64_t ldz) {
    if (M <= 0 || N <= 0) return 0;
    if (K <= 0) { for (int64_t i = 0; i < M; i++) memset(z + i * ldz, 0, (size_t)N * sizeof(float)); return 0; }
    int pack_x = xc != 1, y_in_place = yc == 1 && M < OS_SG_FEW_ROWS && yr % OS_SG_SET_STRIDE != 0;
    if (os_sg_buf == NULL && (os_sg_buf = (float *)aligned_alloc(64, OS_SG_KC * OS_SG_NR * sizeof(float))) == NULL)
        return 1;
    if (pack_x && os_sg_xbuf == NULL && (os_sg_xbuf = (float *)aligned_alloc(64, OS_SG_MC * OS_SG_KC * sizeof(float))) == NULL)
        return 1;
    int64_t row_blocks = (M + OS_SG_MC - 1) / OS_SG_MC;  /* blocks of equal size: a short last one would pack Y again for a few rows */
    int64_t block = ((M + row_blocks - 1) / row_blocks + OS_SG_MR - 1) / OS_SG_MR * OS_SG_MR;
    /* k in blocks of equal size: each block is a pass over the result's tiles, and a short last
       one (784 = 3 x 256 + 16) costs a whole pass for little work */
    int64_t k_blocks = (K + OS_SG_KC - 1) / OS_SG_KC, kstep = (K + k_blocks - 1) / k_blocks;
    int64_t panels = (N + OS_SG_NR - 1) / OS_SG_NR;
    /* with several row blocks, Y is packed once, every k block's panels, and read by every row
       block (10,000 rows packed Y 27 times, panel by panel); else, or when the packed Y would
       be big (OS_SG_WHOLE_Y floats), panel by panel, the one panel staying in L1/L2 while its
       tiles run. Block b's panels start at k0 * panels * NR (the blocks before it are kstep long). */
    float *whole = NULL;
    if (row_blocks > 1 && K * panels * OS_SG_NR <= OS_SG_WHOLE_Y) {
        int64_t need = K * panels * OS_SG_NR;
        if (os_sg_ybuf_n < need) {
            free(os_sg_ybuf);
            os_sg_ybuf = (float *)aligned_alloc(64, (size_t)need * sizeof(float));
            os_sg_ybuf_n = os_sg_ybuf == NULL ? 0 : need;
        }
        whole = os_sg_ybuf;  /* NULL when out of memory: panel by panel */
        if (whole != NULL)
            for (int64_t k0 = 0; k0 < K; k0 += kstep) {
                int64_t kc = K - k0 < kstep ? K - k0 : kstep;
                for (int64_t jp = 0; jp < N; jp += OS_SG_NR)
                    os_sg_pack_y(whole + k0 * panels * OS_SG_NR + jp / OS_SG_NR * kc * OS_SG_NR, y, yr, yc, k0, kc, jp,
                                 N - jp < OS_SG_NR ? N - jp : OS_SG_NR);
            }
    }
    for (int64_t i0 = 0; i0 < M; i0 += block) {
        int64_t mc = M - i0 < block ? M - i0 : block;
        for (int64_t k0 = 0; k0 < K; k0 += kstep) {
            int64_t kc = K - k0 < kstep ? K - k0 : kstep;
            const float *xs = x + i0 * xr + k0 * xc;
            int64_t txr = xr, txc = xc, tile_step = OS_SG_MR * xr;
            if (pack_x) {
                os_sg_pack_x(os_sg_xbuf, xs, xr, xc, mc, kc);
                xs = os_sg_xbuf; txr = 1; txc = OS_SG_MR; tile_step = OS_SG_MR * kc;
            }
            for (int64_t jp = 0; jp < N; jp += OS_SG_NR) {
                int64_t nr = N - jp < OS_SG_NR ? N - jp : OS_SG_NR;
                const float *p = os_sg_buf;
                int64_t ps = OS_SG_NR;
                if (whole != NULL) p = whole + k0 * panels * OS_SG_NR + jp / OS_SG_NR * kc * OS_SG_NR;
                else if (y_in_place && nr == OS_SG_NR) { p = y + k0 * yr + jp; ps = yr; }
                else os_sg_pack_y(os_sg_buf, y, yr, yc, k0, kc, jp, nr);
                float *zb = z + i0 * ldz + jp;
                int64_t i = 0, t = 0;
                for (; i + OS_SG_MR <= mc; i += OS_SG_MR, t++)
                    os_sg_tiles[OS_SG_MR](kc, xs + t * tile_step, txr, txc, p, ps, zb + i * ldz, ldz, nr, k0 == 0);
                if (i < mc) os_sg_tiles[mc - i](kc, xs + t * tile_step, txr, txc, p, ps, zb + i * ldz, ldz, nr, k0 == 0);
            }
        }
    }
    return 0;
}

/* BLAS's sgemm contract (column-major, alpha 1 and beta 0, what os_matmul passes): column-major
   C (m x n) = op(A) op(B) is row-major C^T (n x m) = op(B)^T op(A)^T. Out of memory for a panel
   (128 KB), BLAS computes it. */
void omnistage_sgemm_f(const char *ta, const char *tb, const int *m, const int *n, const int *k, const void *alpha,
                       const void *a, const int *lda, const void *b, const int *ldb, const void *beta, void *c, const int *ldc) {
    int64_t xr = *tb == 'n' ? *ldb : 1, xc = *tb == 'n' ? 1 : *ldb;
    int64_t yr = *ta == 'n' ? *lda : 1, yc = *ta == 'n' ? 1 : *lda;
    if (os_sgemm_rm(*n, *m, *k, (const float *)b, xr, xc, (const float *)a, yr, yc, (float *)c, *ldc))
        ((os_gemm_t)(intptr_t)omnistage_blas_gemm[0])(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

int64_t omnistage_sgemm_panel(void) { return OS_SG_NR; }
"""

STEM = "sgemm"  # its object file's name in the cache (c_objects)
