"""The C runtime of the native tier (c_tier.py): what a translated module (c_translate.py) calls
in place of `support` (`_rt`) and `kernels` (`_kn`), as one C source prepended to it.

Memory is an arena per call, not reference counting: every shape is static, so a translated
function allocates by bumping a pointer, a loop body that allocates releases its iteration's
memory at the end of the iteration (its values that live on are first copied into slots
allocated outside the loop), and the whole arena goes when the call returns. A failed
allocation makes the entry return nonzero; `aot.AotProgram` then repeats the call on the Numba
path, which raises MemoryError properly.

Each helper computes what its namesake in support.py computes (the docstrings there say why
each exists); the C here is the same operations in the same order.
"""

SOURCE = r"""
#include <math.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define OS_ALIGN 64
#define OS_CHUNK ((size_t)1 << 20)

typedef struct os_chunk { struct os_chunk *prev; size_t size, used; } os_chunk;
typedef struct { os_chunk *top; os_chunk *spare; } os_arena;
typedef struct { os_chunk *chunk; size_t used; } os_mark;

#define OS_HEADER ((sizeof(os_chunk) + OS_ALIGN - 1) & ~(size_t)(OS_ALIGN - 1))

__attribute__((malloc)) static void *os_alloc(os_arena *A, size_t n) {
    n = (n + OS_ALIGN - 1) & ~(size_t)(OS_ALIGN - 1);
    if (n == 0) n = OS_ALIGN;
    os_chunk *c = A->top;
    if (c == NULL || c->used + n > c->size) {
        os_chunk *fresh = NULL;
        if (A->spare != NULL && A->spare->size >= n) { fresh = A->spare; A->spare = NULL; }
        else {
            size_t size = n > OS_CHUNK ? n : OS_CHUNK;
            fresh = (os_chunk *)aligned_alloc(OS_ALIGN, OS_HEADER + size);
            if (fresh == NULL) return NULL;
            fresh->size = size;
        }
        fresh->used = 0;
        fresh->prev = c;
        A->top = c = fresh;
    }
    void *p = (char *)c + OS_HEADER + c->used;
    c->used += n;
    return p;
}

static os_mark os_mark_get(os_arena *A) {
    os_mark m = {A->top, A->top ? A->top->used : 0};
    return m;
}

/* back to `m`: chunks opened since are freed, except one kept for the next iteration */
static void os_reset(os_arena *A, os_mark m) {
    while (A->top != m.chunk) {
        os_chunk *c = A->top;
        A->top = c->prev;
        if (A->spare == NULL) A->spare = c;
        else if (A->spare->size < c->size) { free(A->spare); A->spare = c; }
        else free(c);
    }
    if (A->top) A->top->used = m.used;
}

/* The biggest chunk of the last call that ended, kept for the next call (one per library,
   whichever thread takes it): a fresh chunk per call was mapped and its pages faulted in every
   time (selu on 1e5 floats: 520 us a call instead of 37) */
#define OS_KEEP_MAX ((size_t)64 << 20)
static os_chunk *_Atomic os_kept = NULL;

static os_arena os_arena_open(void) {
    os_arena A = {NULL, atomic_exchange(&os_kept, NULL)};
    return A;
}

static void os_release(os_arena *A) {
    os_mark none = {NULL, 0};
    os_reset(A, none);
    if (A->spare != NULL && A->spare->size <= OS_KEEP_MAX) free(atomic_exchange(&os_kept, A->spare));
    else free(A->spare);
    A->spare = NULL;
}

/* support.py's scalar helpers */
#define OS_FMAX(T) static inline T os_fmax_##T(T a, T b) { \
    if (a > b || a != a) return a; if (a == b && a == 0) return a + b; return b; }
#define OS_FMIN(T) static inline T os_fmin_##T(T a, T b) { \
    if (a < b || a != a) return a; if (a == b && a == 0) return -(-a - b); return b; }
OS_FMAX(float) OS_FMAX(double) OS_FMIN(float) OS_FMIN(double)

static inline int64_t os_idiv(int64_t a, int64_t b) {
    if (b == 0) return (int64_t)((uint64_t)a - (uint64_t)a) - 1;
    if (b == -1) return (int64_t)(0 - (uint64_t)a);
    int64_t q = a / b;  /* C truncates, as the floor-then-correct of support.idiv */
    return q;
}
static inline uint64_t os_udiv(uint64_t a, uint64_t b) { return b == 0 ? ~(uint64_t)0 : a / b; }
static inline int64_t os_irem(int64_t a, int64_t b) {
    if (b == 0) return a;
    if (b == -1) return 0;
    return (int64_t)((uint64_t)a - (uint64_t)os_idiv(a, b) * (uint64_t)b);
}
static inline uint64_t os_urem(uint64_t a, uint64_t b) { return b == 0 ? a : a % b; }

/* Python's // and % on integers (floor), with error_model='numpy': x // 0 and x % 0 are 0 */
static inline int64_t os_floordiv(int64_t a, int64_t b) {
    if (b == 0) return 0;
    if (b == -1) return (int64_t)(0 - (uint64_t)a);
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q -= 1;
    return q;
}
static inline int64_t os_floormod(int64_t a, int64_t b) {
    if (b == 0 || b == -1) return 0;
    int64_t r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}

static inline int64_t os_clamp_index(int64_t i, int64_t n) {
    if (i < 0) return 0;
    if (i > n - 1) return n - 1;
    return i;
}

#define OS_SIGN(T) static inline T os_sign_##T(T x, T one) { \
    if (x > 0) return one; if (x < 0) return -one; return x; }
OS_SIGN(float) OS_SIGN(double)

static inline float os_round_half_away_float(float x, float half) {
    float t = truncf(x);
    return fabsf(x - t) >= half ? t + copysignf(half + half, x) : t;
}
static inline double os_round_half_away_double(double x, double half) {
    double t = trunc(x);
    return fabs(x - t) >= half ? t + copysign(half + half, x) : t;
}

#define OS_F2I(NAME, T, F, LO, HI) static inline T os_f2i_##NAME##_##F(F x) { \
    if (x != x) return 0; if ((double)x <= (LO)) return (T)(LO); if ((double)x >= (HI)) return (T)(HI); return (T)x; }
#define OS_F2I_BOTH(NAME, T, LO, HI) OS_F2I(NAME, T, float, LO, HI) OS_F2I(NAME, T, double, LO, HI)
OS_F2I_BOTH(int8, int8_t, -128.0, 127.0)
OS_F2I_BOTH(int16, int16_t, -32768.0, 32767.0)
OS_F2I_BOTH(int32, int32_t, -2147483648.0, 2147483647.0)
OS_F2I_BOTH(uint8, uint8_t, 0.0, 255.0)
OS_F2I_BOTH(uint16, uint16_t, 0.0, 65535.0)
OS_F2I_BOTH(uint32, uint32_t, 0.0, 4294967295.0)
/* float(iinfo.max) of the 64-bit types rounds up to 2**63 / 2**64: at or above it saturates */
static inline int64_t os_f2i_int64_float(float x) {
    if (x != x) return 0; if ((double)x <= -9223372036854775808.0) return INT64_MIN;
    if ((double)x >= 9223372036854775808.0) return INT64_MAX; return (int64_t)x; }
static inline int64_t os_f2i_int64_double(double x) {
    if (x != x) return 0; if (x <= -9223372036854775808.0) return INT64_MIN;
    if (x >= 9223372036854775808.0) return INT64_MAX; return (int64_t)x; }
static inline uint64_t os_f2i_uint64_float(float x) {
    if (x != x) return 0; if ((double)x <= 0.0) return 0;
    if ((double)x >= 18446744073709551616.0) return UINT64_MAX; return (uint64_t)x; }
static inline uint64_t os_f2i_uint64_double(double x) {
    if (x != x) return 0; if (x <= 0.0) return 0;
    if (x >= 18446744073709551616.0) return UINT64_MAX; return (uint64_t)x; }

/* support.fma_float32/64: one rounding unless the product overflows or nears the subnormals */
static inline float os_fma_float32(float a, float b, float c) {
    float prod = a * b, naive = prod + c, big = fabsf(prod);
    if (isfinite(naive) && isfinite(prod) && (big == 0 || big > 0x1p-101f)) return fmaf(a, b, c);
    return naive;
}
static inline double os_fma_float64(double a, double b, double c) {
    double prod = a * b, naive = prod + c, big = fabs(prod);
    if (isfinite(naive) && isfinite(prod) && (big == 0 || big > 0x1p-968)) return fma(a, b, c);
    return naive;
}

static inline float os_logaddexp_float(float x, float y, float log2) {
    if (x == y) return x + log2;
    float d = x - y;
    if (d > 0) return x + log1pf(expf(-d));
    if (d <= 0) return y + log1pf(expf(d));
    return d;
}
static inline double os_logaddexp_double(double x, double y, double log2) {
    if (x == y) return x + log2;
    double d = x - y;
    if (d > 0) return x + log1p(exp(-d));
    if (d <= 0) return y + log1p(exp(d));
    return d;
}

/* float max/min reductions on order-preserving integer keys (support.kmax/kmin/unkey) */
static inline int32_t os_key32(float x) {
    int32_t b; memcpy(&b, &x, 4); return b ^ ((b >> 31) & INT32_MAX);
}
static inline int64_t os_key64(double x) {
    int64_t b; memcpy(&b, &x, 8); return b ^ ((b >> 63) & INT64_MAX);
}
static inline int32_t os_kmax32(int32_t acc, float x) { int32_t k = x != x ? INT32_MAX : os_key32(x); return acc > k ? acc : k; }
static inline int32_t os_kmin32(int32_t acc, float x) { int32_t k = x != x ? INT32_MIN : os_key32(x); return acc < k ? acc : k; }
static inline int64_t os_kmax64(int64_t acc, double x) { int64_t k = x != x ? INT64_MAX : os_key64(x); return acc > k ? acc : k; }
static inline int64_t os_kmin64(int64_t acc, double x) { int64_t k = x != x ? INT64_MIN : os_key64(x); return acc < k ? acc : k; }
static inline float os_unkey32(int32_t k) { int32_t b = k ^ ((k >> 31) & INT32_MAX); float x; memcpy(&x, &b, 4); return x; }
static inline double os_unkey64(int64_t k) { int64_t b = k ^ ((k >> 63) & INT64_MAX); double x; memcpy(&x, &b, 8); return x; }

/* threefry2x32, 20 rounds (support.threefry2x32) */
static inline uint32_t os_rotl32(uint32_t x, uint32_t d) { return (x << d) | (x >> (32 - d)); }
static inline void os_threefry2x32(uint32_t k1, uint32_t k2, uint32_t x1, uint32_t x2, uint32_t *o1, uint32_t *o2) {
    static const uint32_t R[8] = {13, 15, 26, 6, 17, 29, 16, 24};
    uint32_t k3 = k1 ^ k2 ^ 0x1BD11BDAu;
    uint32_t ks[3] = {k1, k2, k3};
    x1 += k1; x2 += k2;
    for (int i = 0; i < 5; i++) {
        const uint32_t *r = R + (i % 2) * 4;
        for (int j = 0; j < 4; j++) { x1 += x2; x2 = os_rotl32(x2, r[j]); x2 ^= x1; }
        x1 += ks[(i + 1) % 3];
        x2 += ks[(i + 2) % 3] + (uint32_t)(i + 1);
    }
    *o1 = x1; *o2 = x2;
}

/* BLAS: the gemm addresses of blas_table, mirrored into this library's own copy */
int64_t omnistage_blas_gemm[5];
typedef void (*os_gemm_t)(const char *, const char *, const int *, const int *, const int *, const void *,
                          const void *, const int *, const void *, const int *, const void *, void *, const int *);

/* out[i] = op(a[i]) @ op(b[i]) for row-major C-ordered stacks, as kernels.matmul with one block:
   row-major C is column-major C^T = op(B)^T op(A)^T */
static void os_matmul(int slot, const void *alpha, const void *beta, size_t itemsize, const char *a, const char *b, char *out,
                      int64_t batch_a, int64_t ra, int64_t ca, int64_t batch_b, int64_t rb, int64_t cb,
                      int ta, int tb, int64_t batch, int64_t M, int64_t N) {
    os_gemm_t gemm = (os_gemm_t)(intptr_t)omnistage_blas_gemm[slot];
    int64_t K = ta ? ra : ca;
    int m = (int)N, n = (int)M, k = (int)K;
    int lda = (int)(tb ? K : N), ldb = (int)(ta ? M : K), ldc = (int)N;
    char fa = tb ? 't' : 'n', fb = ta ? 't' : 'n';
    if (M == 0 || N == 0) return;
    for (int64_t i = 0; i < batch; i++) {
        const char *ai = a + (size_t)((batch_a == 1 ? 0 : i) * ra * ca) * itemsize;
        const char *bi = b + (size_t)((batch_b == 1 ? 0 : i) * rb * cb) * itemsize;
        if (K == 0) { memset(out + (size_t)(i * M * N) * itemsize, 0, (size_t)(M * N) * itemsize); continue; }
        gemm(&fa, &fb, &m, &n, &k, alpha, bi, &lda, ai, &ldb, beta, out + (size_t)(i * M * N) * itemsize, &ldc);
    }
}
"""
