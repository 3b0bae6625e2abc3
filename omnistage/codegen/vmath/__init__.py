"""vmath: branch-free, LLVM-vectorizable float32/float64 transcendental functions for the Numba
code generator.

Why: Numba lowers `math.exp`/`np.exp` on a scalar to a libm call per element (pip's llvmlite has
no SVML), so a loop over a float32 array runs scalar libm code, several times slower than XLA's
vectorized kernels. The kernels here are plain arithmetic (range reduction, a minimax polynomial,
exponent arithmetic through bitcast intrinsics, selects for special values) that LLVM inlines
into the caller's loop and vectorizes (AVX2/AVX-512 on x86-64; see tests/codegen/test_vmath.py).

Use: `lookup(name, dtype)` (or the `VMATH` table keyed by `(lax primitive name, dtype name)`)
gives an njit function; generated modules import it by its name, e.g.
`from omnistage.codegen.vmath import exp_float32`. A name/dtype missing from the table (float64
sin/cos/pow/erf, complex dtypes, ...) returns None and the code generator falls back to NumPy.

Semantics follow NumPy: inf, -inf, nan, signed zeros, subnormal inputs and outputs, overflow to
inf and underflow to 0/subnormals (exp(89f) = inf, exp(-104f) = 0, log(0) = -inf, log(-1) = nan,
tanh(+-large) = +-1, pow's C99 special cases). Fast-math is limited to 'contract' (no nnan/ninf,
which would delete the NaN handling; no reassoc, which would undo the error-compensation steps).

Accuracy measured by the tests (max error in ulp against a correctly rounded reference; float32:
every 4099th bit pattern of the whole float32 range, dense grids around each function's tricky
points and a sweep of subnormals; float64: 3 x 10^5 random points per range against long
double). The last column is NumPy 2's own float32 ufunc on the same float32 points (its exp
and log are SIMD approximations; the logistic figure is the `1 / (1 + exp(-x))` formula
underflowing to 0 where the true result is subnormal).

    function  float32  float64  NumPy f32  float32 method
    exp         0.96     0.97     2.42     Cody-Waite ln2, degree-7 polynomial, 2-step ldexp
    exp2        0.84     0.88     2.77     n + r split, degree-7 polynomial in r
    expm1       1.30     1.79     2.57     2 * (t * em1(r) + (t - 1/2)), t = 2^(n-1)
    log         0.80     0.86     3.11     frexp to [sqrt(1/2), sqrt(2)), degree-11 polynomial
    log2        0.91     1.00     1.98     log parts times a two-part log2(e)
    log10       0.94     0.97     3.07     log parts times a two-part log10(e)
    log1p       0.88     0.80     1.87     log of u = 1 + x plus (x - (u - 1)) / u
    tanh        1.43     2.51     1.36     odd polynomial below 0.625, em1 / (em1 + 2) above
    logistic    1.83     1.81      (*)     e / (1 + e) or 1 / (1 + e), e = exp(-|x|)
    sin, cos    0.50       -      1.41     exact Payne-Hanek reduction in float64, table by exponent
    erf         0.69       -      0.50     x P(x^2) below 0.875, 1 - exp(-x^2) Q(x) above (float64)
    pow         0.51       -        -      exp(y log|x|) in float64; C99 special cases as selects

The final scaling by 2**n (ldexp) is one AVX-512 `vscalef` where the CPU has AVX-512 (LLVM's
llvm.ldexp; ~30% faster float32 exp, bit-identical results), two exact multiplications elsewhere.

float64 versions use the fdlibm s = f / (2 + f) form for log and em1 / (em1 + 2) for all of
tanh. Not provided (lookup gives None, the code generator keeps NumPy/libm): float64 sin/cos
(needs a double-double Payne-Hanek reduction), float64 pow (needs a double-double log) and
float64 erf. One known deviation: pow(-0.0, 0.5) is +0.0 (C99), where NumPy's ufunc takes a
sqrt fast path and gives -0.0.

Only the code generator imports this package (lazily): it imports Numba and llvmlite.
"""
import numpy as np

from ._kernels import build  # first: it installs omnistage's Numba cache locator
from . import _xla_erf_inv  # noqa: E402 - imports support, whose functions Numba caches

DTYPES = ("float32", "float64")

VMATH = {(name, dtype): fn for dtype in DTYPES for name, fn in build(dtype).items()}
# XLA's expansions of lax primitives, emitted once (xla_expansions.py): their values are
# XLA's, not vmath's accuracy contract
EXPANSIONS = {("erf_inv", "float32"): _xla_erf_inv.erf_inv_float32}

# export every kernel under its own name (exp_float32, ...), which generated code imports
globals().update({fn.py_func.__name__: fn for fn in (*VMATH.values(), *EXPANSIONS.values())})


def lookup(name, dtype):
    """The vectorizable kernel for lax primitive `name` on `dtype`, or None when there is none."""
    try:
        key = np.dtype(dtype).name
    except TypeError:
        return None
    return VMATH.get((name, key)) or EXPANSIONS.get((name, key))


__all__ = ["VMATH", "EXPANSIONS", "DTYPES", "lookup",
           *sorted(fn.py_func.__name__ for fn in (*VMATH.values(), *EXPANSIONS.values()))]
