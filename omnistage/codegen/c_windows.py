"""The native tier's windowed max/min reductions and their gradients: `kernels.reduce_window_chooser`,
`select_and_gather_add` and `select_and_scatter_add` in C, for operands of one dtype (float32,
float64, int32, int64), a translation unit compiled once per machine (c_objects) and linked into
each library whose module pools (c_translate's section "windows": STUB).

Why: as with convolutions (c_conv), a library that pooled called the kernels' Numba builds, so
every process that ran it imported Numba and loaded them from its cache, and a fresh machine
compiled them first.

What it computes is the Numba kernels' algorithm step for step (kernels._window_choices: the
first NaN, else the first extremum of each window in row-major order, padding and dilation holes
holding the identity; then the gather, or the scatter-add in window order), so its choices and
sums are theirs. Other dtypes, and operands of different dtypes, keep the Numba kernels.
"""
from . import c_objects

DTYPES = {"float32": ("float", "f32"), "float64": ("double", "f64"), "int32": ("int32_t", "i32"),
          "int64": ("int64_t", "i64")}

# kernel name -> (C function stem, its declaration with SUF and T)
FUNCTIONS = {
    "reduce_window_chooser": ("omnistage_window_reduce", "int32_t omnistage_window_reduce_SUF(const T *x, "
                              "const int64_t *x_shape, int64_t nd, T *out, const int64_t *out_shape, "
                              "const int64_t *params, T identity)"),
    "select_and_gather_add": ("omnistage_window_gather", "int32_t omnistage_window_gather_SUF(const T *t, "
                              "const T *x, const int64_t *x_shape, int64_t nd, T *out, const int64_t *out_shape, "
                              "const int64_t *params, T identity)"),
    "select_and_scatter_add": ("omnistage_window_scatter", "int32_t omnistage_window_scatter_SUF(const T *source, "
                               "const int64_t *source_shape, const T *x, const int64_t *x_shape, int64_t nd, T *out, "
                               "const int64_t *params, T identity)"),
}


def function(kernel, dtype):
    """The C function of `kernel` (a kernels name) for operands of `dtype` (a NumPy dtype name), or None."""
    if kernel not in FUNCTIONS or dtype not in DTYPES:
        return None
    return f"{FUNCTIONS[kernel][0]}_{DTYPES[dtype][1]}"


# the section a translated module gets: the functions' declarations
STUB = "/* c_windows' pooling kernels, linked in from their object file */\n" + "".join(
    declaration.replace("SUF", suf).replace("T ", f"{ct} ") + ";\n"
    for ct, suf in DTYPES.values() for _, declaration in FUNCTIONS.values())

_COMMON = r"""
#include <stdint.h>
#include <stdlib.h>

static int64_t os_wn_size(const int64_t *shape, int64_t nd) {
    int64_t n = 1;
    for (int64_t d = 0; d < nd; d++) n *= shape[d];
    return n;
}
"""

_TYPED = r"""
/* kernels._window_choices: the flat index into x of the element each window (C order over
   out_shape) chooses, -1 where padding or a dilation hole (holding identity) wins; NULL when out
   of memory (the caller frees the result) */
static int64_t *os_wn_choices_SUF(const T *x, const int64_t *x_shape, int64_t nd, const int64_t *out_shape,
                                  const int64_t *params, T identity) {
    const int64_t *window = params, *strides = params + nd, *pad_lo = params + 2 * nd;
    const int64_t *base_dil = params + 3 * nd, *win_dil = params + 4 * nd;
    int take_max = params[5 * nd] == 1;
    int64_t in_stride[nd > 0 ? nd : 1], step = 1;
    for (int64_t d = nd - 1; d >= 0; d--) { in_stride[d] = step; step *= x_shape[d]; }
    int64_t split = nd;  /* axes split and beyond form the inner block */
    while (split > 0 && window[split - 1] == 1 && strides[split - 1] == 1 && pad_lo[split - 1] == 0
           && base_dil[split - 1] == 1 && out_shape[split - 1] == x_shape[split - 1])
        split--;
    int64_t inner = 1, n_outer = 1, n_win = 1;
    for (int64_t d = split; d < nd; d++) inner *= x_shape[d];
    for (int64_t d = 0; d < split; d++) { n_outer *= out_shape[d]; n_win *= window[d]; }
    int64_t ns = split > 1 ? split : 1;
    int64_t *woff = (int64_t *)calloc((size_t)(n_win * ns > 0 ? n_win * ns : 1), sizeof(int64_t));
    int64_t *choice = (int64_t *)malloc(sizeof(int64_t) * (n_outer * inner > 0 ? n_outer * inner : 1));
    T *acc = (T *)malloc(sizeof(T) * (inner > 0 ? inner : 1));
    if (woff == NULL || choice == NULL || acc == NULL) { free(woff); free(choice); free(acc); return NULL; }
    for (int64_t w = 0; w < n_win; w++) {
        int64_t flat = w;
        for (int64_t d = split - 1; d >= 0; d--) { woff[w * ns + d] = (flat % window[d]) * win_dil[d]; flat /= window[d]; }
    }
    int undilated = 1;
    int64_t extent[ns], oi[ns], start[ns];
    for (int64_t d = 0; d < ns; d++) { extent[d] = 0; oi[d] = 0; start[d] = 0; }
    for (int64_t d = 0; d < split; d++) {
        undilated &= base_dil[d] == 1;
        extent[d] = (x_shape[d] - 1) * base_dil[d];
        start[d] = -pad_lo[d];
    }
    for (int64_t j = 0; j < n_outer; j++) {
        int64_t at = j * inner;
        for (int64_t w = 0; w < n_win; w++) {
            int64_t off = 0;
            for (int64_t d = 0; d < split; d++) {
                int64_t p = start[d] + woff[w * ns + d];  /* in the dilated operand */
                if (p < 0 || p > extent[d]) { off = -1; break; }
                if (undilated) off += p * in_stride[d];
                else if (p % base_dil[d] != 0) { off = -1; break; }
                else off += (p / base_dil[d]) * in_stride[d];
            }
            if (w == 0) {
                for (int64_t c = 0; c < inner; c++) {
                    acc[c] = off >= 0 ? x[off + c] : identity;
                    choice[at + c] = off >= 0 ? off + c : -1;
                }
            } else if (off >= 0) {
                for (int64_t c = 0; c < inner; c++) {
                    T a = acc[c], v = x[off + c];
                    int keep = (take_max ? a >= v : a <= v) | (a != a);
                    acc[c] = keep ? a : v;
                    choice[at + c] = keep ? choice[at + c] : off + c;
                }
            } else {
                for (int64_t c = 0; c < inner; c++) {
                    T a = acc[c];
                    int keep = (take_max ? a >= identity : a <= identity) | (a != a);
                    acc[c] = keep ? a : identity;
                    choice[at + c] = keep ? choice[at + c] : -1;
                }
            }
        }
        for (int64_t d = split - 1; d >= 0; d--) {  /* the next output position (C order) */
            oi[d]++;
            start[d] += strides[d];
            if (oi[d] < out_shape[d]) break;
            oi[d] = 0;
            start[d] = -pad_lo[d];
        }
    }
    free(woff); free(acc);
    return choice;
}

/* kernels.reduce_window_chooser; 0 done, 1 out of memory */
REDUCE {
    int64_t *choice = os_wn_choices_SUF(x, x_shape, nd, out_shape, params, identity);
    if (choice == NULL) return 1;
    for (int64_t j = 0, n = os_wn_size(out_shape, nd); j < n; j++) out[j] = choice[j] >= 0 ? x[choice[j]] : identity;
    free(choice);
    return 0;
}

/* kernels.select_and_gather_add: out (pooled) = t at the element of x each window chooses, 0 for padding */
GATHER {
    int64_t *choice = os_wn_choices_SUF(x, x_shape, nd, out_shape, params, identity);
    if (choice == NULL) return 1;
    for (int64_t j = 0, n = os_wn_size(out_shape, nd); j < n; j++) out[j] = choice[j] >= 0 ? t[choice[j]] : (T)0;
    free(choice);
    return 0;
}

/* kernels.select_and_scatter_add: out (x's shape) = the sum of source over the windows choosing
   each element, added in window order */
SCATTER {
    int64_t *choice = os_wn_choices_SUF(x, x_shape, nd, source_shape, params, identity);
    if (choice == NULL) return 1;
    for (int64_t j = 0, n = os_wn_size(x_shape, nd); j < n; j++) out[j] = 0;
    for (int64_t j = 0, n = os_wn_size(source_shape, nd); j < n; j++)
        if (choice[j] >= 0) out[choice[j]] += source[j];
    free(choice);
    return 0;
}
"""

SOURCE = _COMMON + c_objects.for_types(
    _TYPED.replace("REDUCE", FUNCTIONS["reduce_window_chooser"][1])
    .replace("GATHER", FUNCTIONS["select_and_gather_add"][1])
    .replace("SCATTER", FUNCTIONS["select_and_scatter_add"][1]),
    [(ct, suf, {}) for ct, suf in DTYPES.values()])

STEM = "windows"  # its object file's name in the cache (c_objects)
