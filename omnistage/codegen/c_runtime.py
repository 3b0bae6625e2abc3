"""The C runtime of the native tier (c_tier.py): what a translated module (c_translate.py) calls
in place of `support` (`_rt`) and `kernels` (`_kn`), as one C source prepended to it.

Memory is an arena per call, not reference counting: every shape is static, so a translated
function allocates by bumping a pointer, a loop body that allocates releases its iteration's
memory at the end of the iteration (its values that live on are first copied into slots
allocated outside the loop), and the whole arena goes when the call returns. A failed
allocation makes the entry return nonzero; `aot.AotProgram` then repeats the call on the Numba
path, which raises MemoryError properly.

Each helper computes what its namesake in support.py computes (the docstrings there say why
each exists); the C here is the same operations in the same order. The C library's declarations come from
c_prelude, not its headers.
"""
from . import blas_table, c_prelude

# the BLAS table's layout (blas_table: its slots, as the process fills them)
_TABLE = (f"#define OS_POOL_SLOT {blas_table.POOL_SLOT}\n#define OS_LOOP_SLOT {blas_table.LOOP_SLOT}\n"
          f"#define OS_TABLE_LENGTH {blas_table.LENGTH}\n")

SOURCE = c_prelude.SOURCE + _TABLE + r"""

#define OS_ALIGN 64
#define OS_CHUNK ((size_t)16 << 10)

typedef struct os_chunk { struct os_chunk *prev; size_t size, used; } os_chunk;
/* hint: the size of the first chunk to open (the last call's total, when it took several);
   total: what this call's chunks add up to */
typedef struct { os_chunk *top; os_chunk *spare; size_t hint, total; } os_arena;
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
            if (A->hint > size) size = A->hint;
            A->hint = 0;
            fresh = (os_chunk *)aligned_alloc(OS_ALIGN, OS_HEADER + size);
            if (fresh == NULL) return NULL;
            fresh->size = size;
        }
        A->total += fresh->size;
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
   time (selu on 1e5 floats: 520 us a call instead of 37). A call that needed several chunks
   leaves a hint, so the next one opens a single chunk of their total, which is then kept: a
   library holds about its program's peak, 16 KB for a small one (dropped programs keep their
   libraries loaded; 1 MB chunks cost 1 MB each). */
#define OS_KEEP_MAX ((size_t)64 << 20)
static os_chunk *_Atomic os_kept = NULL;
static _Atomic size_t os_hint = 0;

static os_arena os_arena_open(void) {
    os_arena A = {NULL, atomic_exchange(&os_kept, NULL), atomic_load(&os_hint), 0};
    return A;
}

static void os_release(os_arena *A) {
    os_mark none = {NULL, 0};
    os_reset(A, none);
    size_t kept = A->spare != NULL ? A->spare->size : 0;
    if (A->total > kept && A->total <= OS_KEEP_MAX) atomic_store(&os_hint, A->total);
    if (A->spare != NULL && A->spare->size <= OS_KEEP_MAX) free(atomic_exchange(&os_kept, A->spare));
    else free(A->spare);
    A->spare = NULL;
}

/* support.py's scalar helpers */
/* selects, not branches, and one comparison per select, no `&` / `|` of comparisons: gcc 12 does
   not vectorize a loop where such a boolean meets a constant its jump threading found (a clamp
   before the max does it). Of equal operands both zeros or the same bits, so fmax's a + b is
   their bits and-ed (+0 unless both are -0) and fmin's -(-a - b) or-ed; nan a gives a, else nan b
   gives b. */
#define OS_FMAXMIN(T, I, NAME, LESS, OP) static inline T os_##NAME##_##T(T a, T b) { \
    I ia, ib; memcpy(&ia, &a, sizeof a); memcpy(&ib, &b, sizeof b); \
    I eb = ia OP ib; T eq; memcpy(&eq, &eb, sizeof eq); \
    T r = LESS ? b : a; r = a == b ? eq : r; r = b != b ? b : r; return a != a ? a : r; }
OS_FMAXMIN(float, int32_t, fmax, a < b, &) OS_FMAXMIN(double, int64_t, fmax, a < b, &)
OS_FMAXMIN(float, int32_t, fmin, b < a, |) OS_FMAXMIN(double, int64_t, fmin, b < a, |)

static inline int64_t os_idiv(int64_t a, int64_t b) {
    if (b == 0) return (int64_t)((uint64_t)a - (uint64_t)a) - 1;
    if (b == -1) return (int64_t)(0 - (uint64_t)a);
    return a / b;  /* C truncates, as the floor-then-correct of support.idiv */
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
    return i < 0 ? 0 : (i > n - 1 ? n - 1 : i);
}

#define OS_SIGN(T) static inline T os_sign_##T(T x, T one) { \
    return x > 0 ? one : (x < 0 ? -one : x); }
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
/* double -> int64 / uint64 for x strictly inside the range. AVX2 has no vector conversion to
   64-bit integers (AVX-512DQ has), so without AVX-512DQ (OS_INT64_VIA_BITS) trunc(x) is split into
   32-bit halves, each read off the bits of half + 2**52 (exact: an integer below 2**52 is the low
   mantissa bits there), and a loop of these conversions still vectorizes; both forms give the
   same values (tests/codegen/test_c_vmath.py checks). */
#ifndef OS_INT64_VIA_BITS
#ifdef __AVX512DQ__
#define OS_INT64_VIA_BITS 0
#else
#define OS_INT64_VIA_BITS 1
#endif
#endif
#if OS_INT64_VIA_BITS
static inline uint64_t os_low_bits(double v) {  /* an integer 0 <= v < 2**52, as an integer */
    uint64_t b, m; double s = v + 0x1p52, magic = 0x1p52;
    memcpy(&b, &s, 8); memcpy(&m, &magic, 8); return b - m; }
static inline uint64_t os_split_trunc(double x, double bias) {  /* trunc(x) + bias*2**32 mod 2**64 */
    double t = trunc(x), hi = floor(t * 0x1p-32), lo = t - hi * 0x1p32;  /* exact */
    return (os_low_bits(hi + bias) << 32) + os_low_bits(lo); }
static inline int64_t os_d2i64(double x) { return (int64_t)(os_split_trunc(x, 0x1p31) - ((uint64_t)1 << 63)); }
static inline uint64_t os_d2u64(double x) { return os_split_trunc(x, 0.0); }
#else
static inline int64_t os_d2i64(double x) { return (int64_t)x; }
static inline uint64_t os_d2u64(double x) { return (uint64_t)x; }
#endif
/* float(iinfo.max) of the 64-bit types rounds up to 2**63 / 2**64: at or above it saturates */
static inline int64_t os_f2i_int64_float(float x) {
    if (x != x) return 0; if ((double)x <= -9223372036854775808.0) return INT64_MIN;
    if ((double)x >= 9223372036854775808.0) return INT64_MAX; return os_d2i64((double)x); }
static inline int64_t os_f2i_int64_double(double x) {
    if (x != x) return 0; if (x <= -9223372036854775808.0) return INT64_MIN;
    if (x >= 9223372036854775808.0) return INT64_MAX; return os_d2i64(x); }
static inline uint64_t os_f2i_uint64_float(float x) {
    if (x != x) return 0; if ((double)x <= 0.0) return 0;
    if ((double)x >= 18446744073709551616.0) return UINT64_MAX; return os_d2u64((double)x); }
static inline uint64_t os_f2i_uint64_double(double x) {
    if (x != x) return 0; if (x <= 0.0) return 0;
    if (x >= 18446744073709551616.0) return UINT64_MAX; return os_d2u64(x); }

/* support.fma_float32/64: one rounding unless the product overflows or nears the subnormals.
   The condition (isfinite(naive) & isfinite(prod) & (|prod| == 0 | |prod| > tiny)) is computed on
   the bits as an all-ones / all-zeros integer mask of the float's width, and the result picked
   with it: gcc 12 does not vectorize a loop where a boolean `&` / `|` of comparisons meets a
   constant its jump threading found (chains of these fmas with selected operands: erf_inv).
   A finite naive sum implies a finite product; |prod| == 0 or > tiny is `pb - 1 >= bits(tiny)`,
   as the signs of bits(tiny) - pb and pb - 1 (arithmetic shifts, as gcc does them). */
#define OS_FMA(T, I, NAME, FMA, TINY_BITS, INF_BITS, ABS, SHIFT) static inline T NAME(T a, T b, T c) { \
    T prod = a * b, naive = prod + c, fused = FMA(a, b, c); \
    I pb, nb, fb; memcpy(&pb, &prod, sizeof pb); memcpy(&nb, &naive, sizeof nb); memcpy(&fb, &fused, sizeof fb); \
    pb &= ABS; \
    I finite = ((nb & ABS) - (INF_BITS)) >> SHIFT; \
    I normal = (((TINY_BITS) - pb) >> SHIFT) | ((pb - 1) >> SHIFT); \
    I m = finite & normal, rb = (fb & m) | (nb & ~m); \
    T r; memcpy(&r, &rb, sizeof r); return r; }
OS_FMA(float, int32_t, os_fma_float32, fmaf, 0x0d000000, 0x7f800000, INT32_MAX, 31)           /* tiny 2^-101 */
OS_FMA(double, int64_t, os_fma_float64, fma, INT64_C(0x0370000000000000), INT64_C(0x7ff0000000000000), INT64_MAX, 63)  /* 2^-968 */

/* support.logaddexp: NumPy's formula in x's precision */
#define OS_LOGADDEXP(T, S) static inline T os_logaddexp_##T(T x, T y, T log2) { \
    if (x == y) return x + log2; \
    T d = x - y; \
    if (d > 0) return x + log1p##S(exp##S(-d)); \
    if (d <= 0) return y + log1p##S(exp##S(d)); \
    return d; }
OS_LOGADDEXP(float, f)
OS_LOGADDEXP(double, )

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

/* threefry2x32, 20 rounds, unrolled with constant rotations (support.threefry2x32): a pure
   function of its words, so gcc inlines it, vectorizes a loop of them and merges the two calls
   generated code makes for the two words of one block */
typedef struct { uint32_t w0, w1; } os_u32x2;
#define OS_ROTL32(x, d) (((x) << (d)) | ((x) >> (32 - (d))))
#define OS_ROUND(r) x0 += x1; x1 = OS_ROTL32(x1, r); x1 ^= x0;
#define OS_FOUR(a, b, c, d) OS_ROUND(a) OS_ROUND(b) OS_ROUND(c) OS_ROUND(d)
__attribute__((always_inline)) static inline os_u32x2 os_threefry2x32(uint32_t k1, uint32_t k2, uint32_t x1_in, uint32_t x2_in) {
    uint32_t k3 = k1 ^ k2 ^ 0x1BD11BDAu;
    uint32_t x0 = x1_in + k1, x1 = x2_in + k2;
    OS_FOUR(13, 15, 26, 6) x0 += k2; x1 += k3 + 1u;
    OS_FOUR(17, 29, 16, 24) x0 += k3; x1 += k1 + 2u;
    OS_FOUR(13, 15, 26, 6) x0 += k1; x1 += k2 + 3u;
    OS_FOUR(17, 29, 16, 24) x0 += k2; x1 += k3 + 4u;
    OS_FOUR(13, 15, 26, 6) x0 += k3; x1 += k1 + 5u;
    os_u32x2 out = {x0, x1};
    return out;
}

/* BLAS: the gemm addresses of blas_table, mirrored into this library's own copy */
int64_t omnistage_blas_gemm[OS_TABLE_LENGTH];  /* gemm by dtype (sdcz), the GEMM pool, its loop runner */
typedef void (*os_gemm_t)(const char *, const char *, const int *, const int *, const int *, const void *,
                          const void *, const int *, const void *, const int *, const void *, void *, const int *);

/* out[i] = op(a[i]) @ op(b[i]) for row-major C-ordered stacks, cut into the blocks of
   kernels.matmul (gemm_blocks, _block_edges, _block_args: the same rule, so the same calls and
   the same bits as the Numba build's; float32 products at least half a panel wide run the
   tier's own kernel instead, c_sgemm, in blocks of whole panels), run on the GEMM pool (gemm_pool, its entry in the BLAS
   table's last slot) when it is loaded, else here. Row-major C is column-major
   C^T = op(B)^T op(A)^T, so BLAS's A is our b. */
#define OS_SPLIT_WORK ((int64_t)1 << 21)
#define OS_BLOCK_ALIGN 16
#define OS_MAX_BLOCKS 4
#define OS_MIN_BLOCK 64
#define OS_CALL_WORDS 11
typedef void (*os_pool_t)(void *, int64_t, const int64_t *, const void *, const void *);
/* the pool's loop runner (gemm_pool.omnistage_pool_for, the table's OS_LOOP_SLOT): fn(ctx, lo, hi) over [0, n) */
typedef void (*os_pool_for_t)(void (*)(void *, int64_t, int64_t), void *, int64_t);
/* the tier's own float32 product (c_sgemm, registered when the module has one), and the width of
   its column panels: products at least half a panel wide use it, narrower ones BLAS */
static os_gemm_t os_own_sgemm = NULL;
static int64_t os_own_sgemm_cols = 0;

static void os_matmul(int slot, const void *alpha, const void *beta, size_t itemsize, const char *a, const char *b, char *out,
                      int64_t batch_a, int64_t ra, int64_t ca, int64_t batch_b, int64_t rb, int64_t cb,
                      int ta, int tb, int64_t batch, int64_t M, int64_t N) {
    int64_t K = ta ? ra : ca;
    int64_t blocks = 1, rows = 1;
    os_gemm_t gemm = (os_gemm_t)(intptr_t)omnistage_blas_gemm[slot];
    int64_t align = OS_BLOCK_ALIGN;
    if (slot == 0 && os_own_sgemm != NULL && 2 * N >= os_own_sgemm_cols
            && *(const float *)alpha == 1.0f && *(const float *)beta == 0.0f) {
        gemm = os_own_sgemm;
        align = os_own_sgemm_cols;  /* blocks of whole panels (its bits do not depend on the blocks) */
    }
    if (M * N * K >= OS_SPLIT_WORK) {
        rows = M >= N;
        int64_t extent = rows ? M : N;
        blocks = extent / OS_MIN_BLOCK < OS_MAX_BLOCKS ? extent / OS_MIN_BLOCK : OS_MAX_BLOCKS;
        if (blocks < 1) blocks = 1;
    }
    int64_t tasks = (M && N) ? batch * blocks : 0;
    if (tasks == 0) return;
    int64_t stack_calls[OS_CALL_WORDS * 8];
    int64_t *calls = tasks <= 8 ? stack_calls : (int64_t *)malloc(sizeof(int64_t) * OS_CALL_WORDS * tasks);
    if (calls == NULL) calls = stack_calls, tasks = -tasks;  /* no memory for the list: one call at a time */
    int64_t lda = ta ? M : K, ldb = tb ? K : N;
    for (int64_t t = 0; t < (tasks < 0 ? -tasks : tasks); t++) {
        int64_t i = t / blocks, j = t % blocks;
        int64_t extent = rows ? M : N;
        int64_t step = (extent + blocks - 1) / blocks;
        step = (step + align - 1) / align * align;
        int64_t lo = j * step < extent ? j * step : extent, hi = (j + 1) * step < extent ? (j + 1) * step : extent;
        int64_t size = hi - lo > 0 ? hi - lo : 0;
        int64_t a_at = i * ra * ca, b_at = i * rb * cb, c_at = i * M * N;
        int64_t *c = tasks < 0 ? stack_calls : calls + OS_CALL_WORDS * t;
        c[0] = tb; c[1] = ta; c[4] = K; c[7] = N;
        if (rows) {
            c[2] = N; c[3] = size; c[5] = ldb; c[6] = lda;
            c[8] = (int64_t)(intptr_t)(b + b_at * itemsize);
            c[9] = (int64_t)(intptr_t)(a + (a_at + (ta ? lo : lo * K)) * itemsize);
            c[10] = (int64_t)(intptr_t)(out + (c_at + lo * N) * itemsize);
        } else {
            c[2] = size; c[3] = M; c[5] = ldb; c[6] = lda;
            c[8] = (int64_t)(intptr_t)(b + (b_at + (tb ? lo * K : lo)) * itemsize);
            c[9] = (int64_t)(intptr_t)(a + a_at * itemsize);
            c[10] = (int64_t)(intptr_t)(out + (c_at + lo) * itemsize);
        }
        if (tasks < 0 || tasks < 2 || omnistage_blas_gemm[OS_POOL_SLOT] == 0) {  /* run it now */
            char fa = c[0] ? 't' : 'n', fb = c[1] ? 't' : 'n';
            int m = (int)c[2], n = (int)c[3], k = (int)c[4], la = (int)c[5], lb = (int)c[6], lc = (int)c[7];
            if (m > 0 && n > 0)
                gemm(&fa, &fb, &m, &n, &k, alpha, (const void *)(intptr_t)c[8], &la, (const void *)(intptr_t)c[9], &lb,
                     beta, (void *)(intptr_t)c[10], &lc);
        }
    }
    if (tasks >= 2 && omnistage_blas_gemm[OS_POOL_SLOT] != 0)
        ((os_pool_t)(intptr_t)omnistage_blas_gemm[OS_POOL_SLOT])((void *)gemm, tasks, calls, alpha, beta);
    if (calls != stack_calls) free(calls);
}
"""
