"""What a translated module needs of the C library's headers, declared in a few lines.

Why: `<math.h>`, `<stdlib.h>`, `<string.h>`, `<stdint.h>`, `<stdatomic.h>` and `<stdbool.h>`
expand to ~3,000 lines the compiler parses for every program, a third of a small program's C
compile (selu's `cc -fsyntax-only` 23.5 ms with them, 16.4 ms with this). The declarations
here are the standard ones: the fixed-width integer types from the compiler's own predefined
macros (`__INT64_TYPE__`, what the headers use), the classification macros and constants as
glibc's math.h spells them for GCC and Clang (`__builtin_isnan`, `__builtin_inff`, ...), the C99
math functions in float and double, the allocation and memory functions; C11's atomics as the
`__atomic` builtins stdatomic.h maps them to (sequentially consistent, its default). Modules are
compiled with `-Werror=implicit-function-declaration` (c_tier.FLAGS): a function used without a
declaration here fails the build, and the program keeps the Numba path, never a wrong call.

`OS_PRELUDE` is defined, so C sources also compiled on their own (c_vmath, tested alone) include
the real headers only when it is not.
"""

# (name, signature with T for the floating type); T(T) when not listed
_SIGNATURES = {
    "atan2": "T(T, T)", "hypot": "T(T, T)", "pow": "T(T, T)", "fmod": "T(T, T)", "remainder": "T(T, T)",
    "copysign": "T(T, T)", "nextafter": "T(T, T)", "fdim": "T(T, T)", "fmax": "T(T, T)", "fmin": "T(T, T)",
    "fma": "T(T, T, T)", "frexp": "T(T, int *)", "ldexp": "T(T, int)", "modf": "T(T, T *)",
    "scalbn": "T(T, int)", "ilogb": "int(T)", "lrint": "long(T)", "llrint": "long long(T)",
    "lround": "long(T)", "llround": "long long(T)", "remquo": "T(T, T, int *)", "nan": "T(const char *)",
}
_MATH = ("acos asin atan atan2 cos sin tan acosh asinh atanh cosh sinh tanh exp exp2 expm1 frexp ilogb ldexp "
         "log log10 log1p log2 logb modf scalbn cbrt fabs hypot pow sqrt erf erfc lgamma tgamma ceil floor "
         "nearbyint rint lrint llrint round lround llround trunc fmod remainder remquo copysign nan nextafter "
         "fdim fmax fmin fma").split()


_LIBRARY = ("malloc", "calloc", "realloc", "aligned_alloc", "free", "abort", "memcpy", "memmove", "memset", "memcmp")
# every C library function a module may call (c_tier links against the process's own when all are there)
FUNCTIONS = (*_LIBRARY, *(name + suffix for name in _MATH for suffix in ("", "f")), "__stack_chk_fail")


def _math_declarations():
    lines = []
    for name in _MATH:
        result, _, args = _SIGNATURES.get(name, "T(T)").partition("(")
        for ctype, suffix in (("double", ""), ("float", "f")):
            lines.append(f"{result.replace('T', ctype)} {name}{suffix}({args.replace('T', ctype)};")
    return "\n".join(lines)


SOURCE = r"""#define OS_PRELUDE 1
typedef __INT8_TYPE__ int8_t;
typedef __INT16_TYPE__ int16_t;
typedef __INT32_TYPE__ int32_t;
typedef __INT64_TYPE__ int64_t;
typedef __UINT8_TYPE__ uint8_t;
typedef __UINT16_TYPE__ uint16_t;
typedef __UINT32_TYPE__ uint32_t;
typedef __UINT64_TYPE__ uint64_t;
typedef __INTPTR_TYPE__ intptr_t;
typedef __UINTPTR_TYPE__ uintptr_t;
typedef __SIZE_TYPE__ size_t;
#define INT8_C(c) c
#define INT32_C(c) c
#define UINT32_C(c) c ## U
#define INT64_C(c) __INT64_C(c)
#define UINT64_C(c) __UINT64_C(c)
#define INT32_MAX __INT32_MAX__
#define INT32_MIN (-__INT32_MAX__ - 1)
#define UINT32_MAX __UINT32_MAX__
#define INT64_MAX __INT64_MAX__
#define INT64_MIN (-__INT64_MAX__ - 1)
#define UINT64_MAX __UINT64_MAX__
#define INT_MAX __INT_MAX__
#define INT_MIN (-__INT_MAX__ - 1)
#define SIZE_MAX __SIZE_MAX__
#define bool _Bool
#define true 1
#define false 0
#define NULL ((void *)0)
#define FLT_MAX __FLT_MAX__
#define FLT_MIN __FLT_MIN__
#define DBL_MAX __DBL_MAX__
#define DBL_MIN __DBL_MIN__
#define INFINITY (__builtin_inff())
#define NAN (__builtin_nanf(""))
#define HUGE_VAL (__builtin_huge_val())
#define HUGE_VALF (__builtin_huge_valf())
#define isnan(x) __builtin_isnan(x)
#define isinf(x) __builtin_isinf_sign(x)
#define isfinite(x) __builtin_isfinite(x)
#define signbit(x) __builtin_signbit(x)
#ifdef __FP_FAST_FMA
#define FP_FAST_FMA 1
#endif
#ifdef __FP_FAST_FMAF
#define FP_FAST_FMAF 1
#endif
#define atomic_load(p) __atomic_load_n(p, __ATOMIC_SEQ_CST)
#define atomic_store(p, v) __atomic_store_n(p, v, __ATOMIC_SEQ_CST)
#define atomic_exchange(p, v) __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST)
void *malloc(size_t);
void *calloc(size_t, size_t);
void *realloc(void *, size_t);
void *aligned_alloc(size_t, size_t);
void free(void *);
void abort(void);
void *memcpy(void *, const void *, size_t);
void *memmove(void *, const void *, size_t);
void *memset(void *, int, size_t);
int memcmp(const void *, const void *, size_t);
""" + _math_declarations() + "\n"
