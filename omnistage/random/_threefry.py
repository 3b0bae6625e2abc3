"""The `threefry2x32` primitive: the Threefry-2x32 hash (20 rounds, Salmon et al. 2011) of
counter pairs under a key, as one operation, as in JAX (`threefry2x32_p`).

Why a primitive and not ~125 lax operations: every random draw hashes, a vmapped
`random.gamma` hashes seven times, and each unrolled hash was a hundred statements for the
code generators to fuse and Numba to compile (70% of gamma's generated code, tens of seconds
of compile time). As one primitive it is one loop nest calling a compiled scalar helper
(`codegen.support.threefry2x32`), and the staged program shows `threefry2x32(...)` where a
reader expects it.

Operands are four uint32 arrays of equal shape, rank-0 ones broadcasting (lax's elementwise
rule); the results are the two output words. Integer-valued, so not differentiable; batching
is the elementwise rule. Imports core and lax only.
"""
import numpy as np

from ..core.aval import ShapedArray
from ..core.primitive import Primitive
from ..lax import _rules as R
from ..lax._rules import operands

ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
KEY_PARITY = 0x1BD11BDA  # Threefry's key-schedule constant


def hash_words(k1, k2, x1, x2, rotate_left):
    """The 20 rounds on anything with uint32 wraparound arithmetic (NumPy arrays here,
    Numba scalars in `codegen.support`): (y1, y2). `rotate_left(x, d)` rotates by d bits."""
    ks = (k1, k2, k1 ^ k2 ^ np.uint32(KEY_PARITY))
    x0, x1 = x1 + ks[0], x2 + ks[1]
    for i in range(5):
        for r in ROTATIONS[i % 2]:
            x0 = x0 + x1
            x1 = x0 ^ rotate_left(x1, r)
        # key injection after every four rounds, with the injection counter i + 1
        x0 = x0 + ks[(i + 1) % 3]
        x1 = x1 + ks[(i + 2) % 3] + np.uint32(i + 1)
    return x0, x1


def _rotate_left(x, d):
    return (x << np.uint32(d)) | (x >> np.uint32(32 - d))


def _impl(k1, k2, x1, x2):
    shape = np.broadcast_shapes(*(np.shape(v) for v in (k1, k2, x1, x2)))
    # 1-d arrays: NumPy wraps uint32 array arithmetic silently (scalars would warn)
    flat = [np.ascontiguousarray(np.broadcast_to(np.asarray(v, np.uint32), shape)).reshape(-1) for v in (k1, k2, x1, x2)]
    y1, y2 = hash_words(*flat, _rotate_left)
    return [y1.reshape(shape), y2.reshape(shape)]


def _abstract(k1, k2, x1, x2):
    avals = (k1, k2, x1, x2)
    for a in avals:
        if a.dtype != np.uint32:
            raise TypeError(f"threefry2x32 requires uint32 operands, got {[v.dtype.name for v in avals]}")
    shape = R.nary_shape("threefry2x32", avals)
    return [ShapedArray(shape, np.dtype(np.uint32)), ShapedArray(shape, np.dtype(np.uint32))]


threefry2x32_p = Primitive("threefry2x32", _abstract, _impl, multiple_results=True)


def threefry2x32(k1, k2, x1, x2):
    """Threefry-2x32 of the counter pairs (x1, x2) under the key (k1, k2), all uint32;
    rank-0 operands broadcast. Returns the two uint32 output words."""
    return threefry2x32_p.bind(*operands(k1, k2, x1, x2))


__all__ = ["threefry2x32", "threefry2x32_p", "hash_words"]
