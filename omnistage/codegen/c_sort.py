"""The native tier's sort: `kernels.refine_sort` in C, one function per key type, made on demand
(`function`). The same algorithm as the Numba kernel (runs of 16 insertion-sorted, then
bottom-up merges), and a stable sort by a strict weak order has one result whatever the
algorithm: `lax.sort`'s order, NaNs after everything, -0.0 equal to 0.0, ties in their order.
`identity_permutation` and `take_along` are plain loops the translator writes inline (c_calls).
"""
from .c_types import C_TYPES, FLOAT_NAME

RUN = 16  # kernels._RUN


def name(dtype):
    return f"os_refine_sort_{dtype}"


def function(dtype):
    """The C definition of `name(dtype)`: perm (outer, n, inner) int64, reordered in each line
    perm[o, :, i] stably by key[o, perm[o, :, i], i]; the key's element j is at key[j * kstride]
    (a complex array's real or imaginary parts); v, v2, o, o2: scratch of n elements each."""
    t = C_TYPES[dtype]
    less = "(a < b || (b != b && a == a))" if dtype in FLOAT_NAME else "(a < b)"
    return f"""
static inline bool os_less_{dtype}({t} a, {t} b) {{ return {less}; }}

static void {name(dtype)}(int64_t *perm, const {t} *key, int64_t kstride, int64_t outer, int64_t n, int64_t inner,
                          {t} *v, {t} *v2, int64_t *o, int64_t *o2) {{
    for (int64_t oo = 0; oo < outer; oo++)
        for (int64_t i = 0; i < inner; i++) {{
            int64_t *p = perm + oo * n * inner + i;
            for (int64_t k = 0; k < n; k++) {{
                o[k] = p[k * inner];
                v[k] = key[(oo * n * inner + o[k] * inner + i) * kstride];
            }}
            for (int64_t lo = 0; lo < n; lo += {RUN}) {{  /* kernels._insertion_runs */
                int64_t hi = lo + {RUN} < n ? lo + {RUN} : n;
                for (int64_t a = lo + 1; a < hi; a++) {{
                    {t} x = v[a];
                    int64_t xo = o[a], j = a - 1;
                    while (j >= lo && os_less_{dtype}(x, v[j])) {{ v[j + 1] = v[j]; o[j + 1] = o[j]; j--; }}
                    v[j + 1] = x; o[j + 1] = xo;
                }}
            }}
            {t} *src = v, *dst = v2;
            int64_t *osrc = o, *odst = o2;
            for (int64_t width = {RUN}; width < n; width *= 2) {{  /* kernels._merge_pass */
                for (int64_t lo = 0; lo < n; lo += 2 * width) {{
                    int64_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
                    int64_t a = lo, b = mid, k = lo;
                    while (a < mid && b < hi) {{
                        if (os_less_{dtype}(src[b], src[a])) {{ dst[k] = src[b]; odst[k++] = osrc[b++]; }}
                        else {{ dst[k] = src[a]; odst[k++] = osrc[a++]; }}
                    }}
                    while (a < mid) {{ dst[k] = src[a]; odst[k++] = osrc[a++]; }}
                    while (b < hi) {{ dst[k] = src[b]; odst[k++] = osrc[b++]; }}
                }}
                {t} *t1 = src; src = dst; dst = t1;
                int64_t *t2 = osrc; osrc = odst; odst = t2;
            }}
            for (int64_t k = 0; k < n; k++) p[k * inner] = osrc[k];
        }}
}}
"""
