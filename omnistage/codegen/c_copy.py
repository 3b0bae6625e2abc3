"""The native tier's strided copy (`kernels.strided_copy`: reshapes, transposes, slices and
concatenations of static shapes), a translation unit compiled once per machine (c_objects) and
linked into each library whose module copies (c_translate's section "copy": STUB).

Why: as a static function of the runtime every such program compiled it again, and it was a
third of a small program's quick build: control's `trajectory` (one reshape) took 75 ms of
`cc -O1` user time with it, 50 without. Linked, it is compiled once, and a piece that is one
contiguous run in both arrays (most reshapes) is a memmove in the program itself (c_calls).

What it computes: pieces (ndim, *shape, src offset, *src strides, dst offset, *dst strides) of
one flat array into another, in elements, each an odometer over the outer axes with a memcpy
or a strided loop for the innermost, as the Numba kernel does; copies are exact, so where it
runs changes no value.
"""

from . import c_objects

_BYTES16 = "typedef struct { uint64_t w[2]; } os_bytes16;\n"
_TYPES = (("uint8_t", "1", {}), ("uint16_t", "2", {}), ("uint32_t", "4", {}), ("uint64_t", "8", {}), ("os_bytes16", "16", {}))

# the section a translated module gets: the functions' declarations and the dispatch on item size
STUB = ("\n/* c_copy's strided copy, linked in from its object file */\n" + _BYTES16
        + "".join(f"void omnistage_copy_pieces{suf}(const {ct} *, {ct} *, const int64_t *, int64_t);\n" for ct, suf, _ in _TYPES)
        + r"""static inline void os_strided_copy(const void *src, void *dst, const int64_t *params, int64_t count, size_t itemsize) {
    switch (itemsize) {
        case 1: omnistage_copy_pieces1(src, dst, params, count); break;
        case 2: omnistage_copy_pieces2(src, dst, params, count); break;
        case 4: omnistage_copy_pieces4(src, dst, params, count); break;
        case 8: omnistage_copy_pieces8(src, dst, params, count); break;
        default: omnistage_copy_pieces16(src, dst, params, count); break;  /* complex128: c_translate's dtypes end there */
    }
}
""")

_PIECES = r"""
void omnistage_copy_piecesSUF(const T *src, T *dst, const int64_t *params, int64_t count) {
    int64_t at = 0;
    while (at < count) {
        int64_t nd = params[at];
        const int64_t *shape = params + at + 1, *s_str = params + at + 2 + nd, *d_str = params + at + 3 + 2 * nd;
        int64_t s_at = params[at + 1 + nd], d_at = params[at + 2 + 2 * nd];
        at += 3 + 3 * nd;
        int64_t total = 1, idx[64] = {0};
        for (int64_t k = 0; k < nd; k++) total *= shape[k];
        if (total == 0 || nd > 64) continue;  /* c_translate refuses more than 64 axes */
        int64_t inner = nd ? shape[nd - 1] : 1, s_step = nd ? s_str[nd - 1] : 0, d_step = nd ? d_str[nd - 1] : 0;
        for (int64_t row = 0; row < total / inner; row++) {
            if (s_step == 1 && d_step == 1) memcpy(dst + d_at, src + s_at, (size_t)inner * sizeof(T));
            else for (int64_t i = 0; i < inner; i++) dst[d_at + i * d_step] = src[s_at + i * s_step];
            for (int64_t k = nd - 2; k >= 0; k--) {  /* the next row: an odometer over the outer axes */
                s_at += s_str[k]; d_at += d_str[k];
                if (++idx[k] < shape[k]) break;
                s_at -= shape[k] * s_str[k]; d_at -= shape[k] * d_str[k]; idx[k] = 0;
            }
        }
    }
}
"""

# compiled alone (the real headers) or, where that fails, after the program (its prelude's declarations)
SOURCE = ("\n#ifndef OS_PRELUDE\n#include <stdint.h>\n#include <string.h>\n" + _BYTES16 + "#endif\n"
          + c_objects.for_types(_PIECES, _TYPES))

STEM = "copy"  # its object file's name in the cache (c_objects)
