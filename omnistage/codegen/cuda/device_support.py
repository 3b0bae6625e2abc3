"""Scalar math that generated CUDA kernels call as `_cd.<name>(...)`: libdevice's functions on
a GPU, NumPy's on the same scalar types under Numba's CUDA simulator (where kernels run as
Python and must give what the NumPy implementation gives).

Names follow libdevice: `expf` is float32, `exp` float64. Helpers of `codegen.support` that use
NumPy math (not available in CUDA kernels) have CUDA versions here.
"""
import math
import types

import numba
import numpy as np
from numba import config as _numba_config
from numba import cuda

SIMULATED = bool(_numba_config.ENABLE_CUDASIM)

# NumPy function name (as the CPU scalar rules write it) -> libdevice base name
LIBDEVICE = {
    "exp": "exp", "exp2": "exp2", "log": "log", "expm1": "expm1", "log1p": "log1p",
    "tanh": "tanh", "sin": "sin", "cos": "cos", "tan": "tan", "arcsin": "asin",
    "arccos": "acos", "arctan": "atan", "sinh": "sinh", "cosh": "cosh", "arcsinh": "asinh",
    "arccosh": "acosh", "arctanh": "atanh", "cbrt": "cbrt", "erf": "erf", "sqrt": "sqrt",
    "floor": "floor", "ceil": "ceil", "rint": "rint", "fmod": "fmod", "arctan2": "atan2",
    "power": "pow", "nextafter": "nextafter", "abs": "fabs", "erf_inv": "erfinv",
}


def libdevice_name(numpy_name, dtype):
    """`_cd` attribute for NumPy function `numpy_name` on real `dtype`, or None."""
    base = LIBDEVICE.get(numpy_name)
    if base is None or np.dtype(dtype).name not in ("float32", "float64"):
        return None
    return base + "f" if np.dtype(dtype).name == "float32" else base


def _erfinv(x):
    from scipy.special import erfinv

    return erfinv(x)


# what NumPy lacks, computed in double and rounded to the operand's type
_NOT_IN_NUMPY = {"erf": math.erf, "erf_inv": _erfinv}


def _numpy_version(numpy_name, cast):
    fn = _NOT_IN_NUMPY.get(numpy_name) or getattr(np, numpy_name)
    return lambda *a: cast(fn(*a))


def _install_simulated():
    """The simulator: NumPy scalar math, results in the operand's dtype."""
    g = globals()
    for numpy_name in LIBDEVICE:
        for dtype, suffix in ((np.float32, "f"), (np.float64, "")):
            g[LIBDEVICE[numpy_name] + suffix] = _numpy_version(numpy_name, dtype)
    g["finitef"] = g["finite"] = lambda x: int(np.isfinite(x))


def _install_libdevice():
    from numba.cuda import libdevice

    g = globals()
    for base in set(LIBDEVICE.values()):
        g[base] = getattr(libdevice, base)
        g[base + "f"] = getattr(libdevice, base + "f")
    g["finitef"] = libdevice.finitef
    g["finite"] = libdevice.isfinited


if SIMULATED:
    _install_simulated()
else:
    _install_libdevice()


# --- helpers with NumPy semantics ----------------------------------------------------------------
# Numba functions inlined into the kernel's IR (inline='always'): typed and lowered by the CUDA
# target at the call site, so PTX can be produced without a GPU (a separately compiled CUDA
# device function asks the driver for the current device's compute capability).

_inline = numba.njit(inline="always")

_TINY32 = np.float32(float(np.finfo(np.float32).tiny) * 2.0 ** (np.finfo(np.float32).nmant + 2))
_TINY64 = np.float64(float(np.finfo(np.float64).tiny) * 2.0 ** (np.finfo(np.float64).nmant + 2))

if SIMULATED:
    def _fma(a, b, c):
        """The fma primitive's exact NumPy implementation (the compiled one is llvm.fma)."""
        from ...core.primitive import registry

        return type(a)(registry["fma"].impl(a, b, c)[()])

    fma_float32 = fma_float64 = _fma

    def round_half_away(x, half):
        """As `codegen.support.round_half_away` (from the truncation)."""
        t = np.trunc(x)
        return t + np.copysign(half + half, x) if abs(x - t) >= half else t

    def isign(x):
        return np.sign(x)

    def conj(x):
        return np.conj(x)

    def _shift_step(op):
        """The branch-free shift intrinsics of `codegen.support` as plain Python."""

        def shift(a, b):
            bits, v, n = np.dtype(type(a)).itemsize * 8, int(a), int(b)
            if not 0 <= n < bits:
                return type(a)(-1 if op == "ashr" and v < 0 else 0)
            return _wrap_integer(v << n if op == "shl" else v >> n, a)

        return shift

    shift_left, shift_right_arithmetic, shift_right_logical = (_shift_step(op) for op in ("shl", "ashr", "lshr"))

    def select(c, a, b):
        return a if c else b

    def popcount(x):
        """Set bits in x's own width (a Numba intrinsic cannot run as plain Python)."""
        bits = np.dtype(type(x)).itemsize * 8
        return type(x)(bin(int(x) & ((1 << bits) - 1)).count("1"))
else:
    def _make_fma(tiny):
        @_inline
        def fma(a, b, c):
            """fma(a, b, c) as `codegen.support` computes it: one rounding where the product
            neither overflows nor falls near the subnormals, else `a * b + c`."""
            prod = a * b
            naive = prod + c
            big = abs(prod)
            if math.isfinite(naive) and math.isfinite(prod) and (big == 0 or big > tiny):
                return cuda.fma(a, b, c)
            return naive

        return fma

    fma_float32, fma_float64 = _make_fma(_TINY32), _make_fma(_TINY64)

    @_inline
    def round_half_away(x, half):
        """As `codegen.support.round_half_away`, in floats (the CUDA target types math.floor
        and math.trunc as integers, which lose -0.0): the truncation is x minus its fractional
        part, with x's sign; infinities and NaN give a NaN truncation and come back as they are."""
        one = half + half
        t = math.copysign(x - math.fmod(x, one), x)
        if t != t:
            return x
        return t + math.copysign(one, x) if abs(x - t) >= half else t

    @_inline
    def isign(x):
        return (x > 0) - (x < 0)

    @_inline
    def conj(x):
        return x.conjugate()

    @_inline
    def logaddexp(x, y, log2):
        """np.logaddexp in x's precision (as `codegen.support.logaddexp`)."""
        if x == y:
            return x + log2
        d = x - y
        if d > 0:
            return x + math.log1p(math.exp(-d))
        if d <= 0:
            return y + math.log1p(math.exp(d))
        return d


def _argbetter(greater):
    """Whether candidate (v, i) beats (best, at): the first NaN wins, then the first extremum
    (np.argmax / np.argmin); `at == n` marks "no candidate yet"."""

    def better(v, i, best, at, n):
        if i >= n:
            return False
        if at >= n:
            return True
        if best != best:
            return v != v and i < at
        if v != v:
            return True
        return (v > best if greater else v < best) or (v == best and i < at)

    return better


argmax_better = _argbetter(True) if SIMULATED else _inline(_argbetter(True))
argmin_better = _argbetter(False) if SIMULATED else _inline(_argbetter(False))


# --- the CPU backend's other scalar helpers (`codegen.support`) ------------------------------------


def _wrap_integer(value, like):
    """`value` (a Python or NumPy integer, possibly widened) wrapped to the integer type of
    `like`, as the compiled cast does; NumPy 2 refuses out-of-range Python ints instead."""
    dt = np.dtype(type(like))
    bits = dt.itemsize * 8
    v = int(value) & ((1 << bits) - 1)
    if dt.kind == "i" and v >= 1 << (bits - 1):
        v -= 1 << bits
    return dt.type(v)


def _simulated_helper(fn):
    """A `support` helper called from simulated kernels (plain Python): results keep the first
    operand's type and width, as they do in compiled code."""

    fn = getattr(fn, "py_func", fn)  # plain Python: no CPU compile per signature

    def helper(*args):
        out = fn(*args)
        like = args[0]
        if isinstance(like, np.integer) and isinstance(out, (int, np.integer)) and not isinstance(out, bool):
            return _wrap_integer(out, like)
        if isinstance(like, np.inexact) and isinstance(out, (float, complex)) and not isinstance(out, np.generic):
            return type(like)(out)  # Numba returns Python floats; float32 math must stay float32
        return out

    return helper


def _inlined_helpers(rt):
    """`rt`'s namespace with every Numba function in it replaced by an inline='always' copy
    whose globals are that same namespace. The CPU helpers are compiled once and called (their
    compile time is paid once per machine), but a CUDA kernel cannot call a separately compiled
    device function without the driver, so on the GPU each helper, and each helper it calls,
    is inlined into the kernel's IR."""
    ns = dict(vars(rt))
    for name, fn in vars(rt).items():
        py = getattr(fn, "py_func", None)
        if py is None or not isinstance(fn, numba.core.dispatcher.Dispatcher):
            continue
        clone = types.FunctionType(py.__code__, ns, py.__name__, py.__defaults__, py.__closure__)
        ns[name] = _inline(clone)
    return ns


def _install_support_helpers():
    from .. import support as _rt

    g = globals()
    device = None if SIMULATED else _inlined_helpers(_rt)
    for name in dir(_rt):
        fn = getattr(_rt, name)
        if name.startswith("_") or name in g or not callable(fn) or isinstance(fn, type(np)):
            continue
        if getattr(fn, "__module__", "") not in (_rt.__name__,) and not hasattr(fn, "py_func") and not hasattr(fn, "_defn"):
            continue
        g[name] = _simulated_helper(fn) if SIMULATED else device[name]


_install_support_helpers()


# --- float16 / bfloat16 values computed in float32 (codegen/narrow_floats.py) ---------------------
# The CPU helpers are LLVM intrinsics that libNVVM refuses (llvm.fabs): on a GPU, float16 is the
# hardware conversion (cvt.rn.f16.f32 / cvt.rn.f16.f64: nearest even, overflow to inf, subnormals,
# one rounding from float64) and back; bfloat16 is the CPU's bit rounding through libdevice's
# float_as_int (float64 goes through float32 first, as ml_dtypes does).

if SIMULATED:
    def round_to_float16(x):
        return np.float32(np.float16(x))

    def round_to_bfloat16(x):
        import ml_dtypes

        return np.float32(ml_dtypes.bfloat16(np.float32(x)))
else:
    from numba.cuda import libdevice as _ld

    @_inline
    def round_to_float16(x):
        return np.float32(np.float16(x))

    @_inline
    def round_to_bfloat16(x):
        x = np.float32(x)
        b = _ld.float_as_int(_ld.fabsf(x))  # <= 0x7f800000 unless NaN: no overflow below
        r = _ld.int_as_float(np.int32((b + np.int32(0x7FFF) + ((b >> np.int32(16)) & np.int32(1))) & np.int32(-65536)))
        return x if x != x else _ld.copysignf(r, x)


# same-width bitcasts of float16/bfloat16 (narrow_floats: float32 values <-> their 16 bits), as
# the CPU's support.float16_from_bits & co., on libdevice's int <-> float reinterpretation
if SIMULATED:
    def float16_from_bits(h):
        return np.float32(np.uint16(int(h) & 0xFFFF).view(np.float16))

    def float16_to_bits(x):
        return np.float16(x).view(np.uint16)

    def bfloat16_from_bits(h):
        return np.uint32((int(h) & 0xFFFF) << 16).view(np.float32)

    def bfloat16_to_bits(x):
        return np.uint16(int(np.float32(x).view(np.uint32)) >> 16)
else:
    @_inline
    def float16_from_bits(h):
        u = np.int32(h) & np.int32(0xFFFF)
        em = u & np.int32(0x7FFF)
        if em < np.int32(0x400):
            r = np.float32(em) * np.float32(2.0 ** -24)  # exact: subnormal or zero
        elif em >= np.int32(0x7C00):
            r = _ld.int_as_float((em << np.int32(13)) | np.int32(0x7F800000))  # inf, NaN
        else:
            r = _ld.int_as_float((em << np.int32(13)) + np.int32(0x38000000))
        return _ld.int_as_float(_ld.float_as_int(r) | ((u & np.int32(0x8000)) << np.int32(16)))

    @_inline
    def float16_to_bits(x):
        b = _ld.float_as_int(x)
        a = b & np.int32(0x7FFFFFFF)
        if a < np.int32(0x38800000):
            h = np.int32(_ld.fabsf(x) * np.float32(2.0 ** 24))
        elif a >= np.int32(0x7F800000):
            h = np.int32(0x7C00) + ((a >> np.int32(13)) & np.int32(0x3FF))
            if a > np.int32(0x7F800000) and h == np.int32(0x7C00):
                h = h + np.int32(1)  # a NaN stays a NaN
        else:
            h = (a - np.int32(0x38000000)) >> np.int32(13)
        return np.uint16(h | ((b >> np.int32(16)) & np.int32(0x8000)))

    @_inline
    def bfloat16_from_bits(h):
        return _ld.int_as_float((np.int32(h) & np.int32(0xFFFF)) << np.int32(16))

    @_inline
    def bfloat16_to_bits(x):
        return np.uint16((_ld.float_as_int(x) >> np.int32(16)) & np.int32(0xFFFF))
