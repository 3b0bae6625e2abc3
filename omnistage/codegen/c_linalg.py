"""The native tier's loop kernels of linear algebra: `kernels.lu`, `kernels.lu_pivots_to_permutation`
and `kernels.forward_substitution` in C, one instance per dtype, the same operations in the same
order as the Numba build of a program runs them (complex arithmetic through c_complex's helpers,
which round as Numba does; real products contracted with their sums, as LLVM contracts the
kernels inlined into a program), so a program gets the same results from either build.

Prepended to a translated module only when it calls one (c_translate's `sections`).
"""

SOURCE = r"""
/* ops per dtype: subtract, divide, != 0, LAPACK's pivot magnitude
   (kernels._pivot_magnitude: |re| + |im|), and c + a * b / c - a * b as the Numba build computes
   them: a kernel inlined into the program's module is contracted (fastmath 'contract') into one
   fused multiply-add for real numbers; complex products round twice (cuda/solve_emit agrees). In
   lu it matters: rounded twice, a rank-deficient matrix's trailing zeros become tiny numbers and
   change the pivots. */
#define OS_LA_REAL(S, T, ABS, FMA)                                                              \
static inline T os_la_muladd_##S(T c, T a, T b) { return FMA(a, b, c); }                      \
static inline T os_la_mulsub_##S(T c, T a, T b) { return FMA(-a, b, c); }                     \
static inline T os_la_sub_##S(T a, T b) { return a - b; }                                       \
static inline T os_la_div_##S(T a, T b) { return a / b; }                                       \
static inline bool os_la_nonzero_##S(T a) { return a != 0; }                                    \
static inline T os_la_pivot_##S(T a) { return ABS(a) + (T)0; }
OS_LA_REAL(f32, float, fabsf, fmaf)
OS_LA_REAL(f64, double, fabs, fma)
#undef OS_LA_REAL
#define OS_LA_COMPLEX(S, T, P, ABS)                                                             \
static inline T os_la_muladd_##S(T c, T a, T b) { return os_cadd_##S(c, os_cmul_##S(a, b)); }  \
static inline T os_la_mulsub_##S(T c, T a, T b) { return os_csub_##S(c, os_cmul_##S(a, b)); }  \
static inline T os_la_sub_##S(T a, T b) { return os_csub_##S(a, b); }                          \
static inline T os_la_div_##S(T a, T b) { return os_cdiv_##S(a, b); }                          \
static inline bool os_la_nonzero_##S(T a) { return a.re != 0 || a.im != 0; }                    \
static inline P os_la_pivot_##S(T a) { return ABS(a.re) + ABS(a.im); }
OS_LA_COMPLEX(c64, os_c64, float, fabsf)
OS_LA_COMPLEX(c128, os_c128, double, fabs)
#undef OS_LA_COMPLEX

/* kernels.lu: partial-pivoting LU of a (nb, m, n) into out, pivots (nb, k), perm (nb, m) */
#define OS_LA_LU(S, T, P)                                                                       \
static void os_lu_##S(const T *a, int64_t nb, int64_t m, int64_t n, T *out, int32_t *pivots, int32_t *perm) { \
    int64_t k = m < n ? m : n;                                                                  \
    memcpy(out, a, sizeof(T) * (size_t)(nb * m * n));                                          \
    memset(pivots, 0, sizeof(int32_t) * (size_t)(nb * k));                                     \
    for (int64_t b = 0; b < nb; b++) {                                                          \
        T *o = out + b * m * n;                                                                 \
        for (int64_t i = 0; i < m; i++) perm[b * m + i] = (int32_t)i;                          \
        for (int64_t j = 0; j < k; j++) {                                                       \
            int64_t p = j;                                                                      \
            P best = os_la_pivot_##S(o[j * n + j]);                                             \
            for (int64_t i = j + 1; i < m; i++) {                                               \
                P mag = os_la_pivot_##S(o[i * n + j]);                                          \
                if (mag > best || (mag != mag && best == best)) { p = i; best = mag; }          \
            }                                                                                   \
            pivots[b * k + j] = (int32_t)p;                                                     \
            if (p != j) {                                                                       \
                for (int64_t c = 0; c < n; c++) {                                               \
                    T t = o[j * n + c]; o[j * n + c] = o[p * n + c]; o[p * n + c] = t;          \
                }                                                                               \
                int32_t t = perm[b * m + j]; perm[b * m + j] = perm[b * m + p]; perm[b * m + p] = t; \
            }                                                                                   \
            T piv = o[j * n + j];                                                               \
            if (os_la_nonzero_##S(piv))                                                         \
                for (int64_t i = j + 1; i < m; i++) o[i * n + j] = os_la_div_##S(o[i * n + j], piv); \
            for (int64_t i = j + 1; i < m; i++) {                                               \
                T lij = o[i * n + j];                                                           \
                for (int64_t c = j + 1; c < n; c++)                                             \
                    o[i * n + c] = os_la_mulsub_##S(o[i * n + c], lij, o[j * n + c]);              \
            }                                                                                   \
        }                                                                                       \
    }                                                                                           \
}

/* kernels.forward_substitution: x with m x = rhs, m (nb, n, n) lower triangular, rhs (nb, n, kk) */
#define OS_LA_FORWARD(S, T)                                                                     \
static void os_forward_substitution_##S(const T *mat, const T *rhs, int unit, int64_t nb, int64_t n, \
                                        int64_t kk, T *x) {                                     \
    memset(x, 0, sizeof(T) * (size_t)(nb * n * kk));                                           \
    for (int64_t b = 0; b < nb; b++) {                                                          \
        const T *mb = mat + b * n * n, *rb = rhs + b * n * kk;                                  \
        T *xb = x + b * n * kk;                                                                 \
        for (int64_t i = 0; i < n; i++)                                                         \
            for (int64_t c = 0; c < kk; c++) {                                                  \
                T dot = os_la_sub_##S(rb[i * kk + c], rb[i * kk + c]);                          \
                for (int64_t j = 0; j < i; j++)                                                 \
                    dot = os_la_muladd_##S(dot, mb[i * n + j], xb[j * kk + c]);                 \
                T acc = os_la_sub_##S(rb[i * kk + c], dot);                                     \
                xb[i * kk + c] = unit ? acc : os_la_div_##S(acc, mb[i * n + i]);                \
            }                                                                                   \
    }                                                                                           \
}

OS_LA_LU(f32, float, float)
OS_LA_LU(f64, double, double)
OS_LA_LU(c64, os_c64, float)
OS_LA_LU(c128, os_c128, double)
OS_LA_FORWARD(f32, float)
OS_LA_FORWARD(f64, double)
OS_LA_FORWARD(c64, os_c64)
OS_LA_FORWARD(c128, os_c128)
#undef OS_LA_LU
#undef OS_LA_FORWARD

/* kernels.lu_pivots_to_permutation: the swaps i <-> pivots[b, i] applied in order to the
   identity; a pivot outside [0, size) swaps nothing */
static void os_lu_pivots_to_permutation(const int32_t *pivots, int64_t nb, int64_t k, int64_t size, int32_t *perm) {
    for (int64_t b = 0; b < nb; b++) {
        int32_t *pb = perm + b * size;
        for (int64_t i = 0; i < size; i++) pb[i] = (int32_t)i;
        for (int64_t i = 0; i < k; i++) {
            int32_t p = pivots[b * k + i];
            if (0 <= p && p < size) { int32_t t = pb[i]; pb[i] = pb[p]; pb[p] = t; }
        }
    }
}
"""
