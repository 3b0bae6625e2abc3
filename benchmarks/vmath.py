"""Benchmark: vmath kernels vs NumPy and vs a Numba loop calling libm, per function.

    python benchmarks/vmath.py [n] [dtype]

Prints, per function on n (default 1M) elements: NumPy ufunc time, a Numba loop calling
`math.<fn>` (scalar libm per element), a Numba loop calling the vmath kernel, and the ratios
(median of repeats; the loops are compiled and warmed up before timing).
"""
import math
import sys
import time

import numba
import numpy as np

from omnistage.codegen import vmath

# name: (NumPy reference, scalar libm expression for the baseline loop, input sampler)
CASES = {
    "exp": (np.exp, lambda x: math.exp(x), lambda r, n: r.uniform(-80, 80, n)),
    "exp2": (np.exp2, lambda x: np.exp2(x), lambda r, n: r.uniform(-120, 120, n)),
    "expm1": (np.expm1, lambda x: math.expm1(x), lambda r, n: r.uniform(-5, 5, n)),
    "log": (np.log, lambda x: math.log(x), lambda r, n: r.uniform(0, 100, n)),
    "log2": (np.log2, lambda x: math.log2(x), lambda r, n: r.uniform(0, 100, n)),
    "log10": (np.log10, lambda x: math.log10(x), lambda r, n: r.uniform(0, 100, n)),
    "log1p": (np.log1p, lambda x: math.log1p(x), lambda r, n: r.uniform(-0.9, 100, n)),
    "tanh": (np.tanh, lambda x: math.tanh(x), lambda r, n: r.uniform(-5, 5, n)),
    "logistic": (lambda x: 1 / (1 + np.exp(-x)), lambda x: 1 / (1 + math.exp(-x)), lambda r, n: r.uniform(-10, 10, n)),
    "sin": (np.sin, lambda x: math.sin(x), lambda r, n: r.uniform(-100, 100, n)),
    "cos": (np.cos, lambda x: math.cos(x), lambda r, n: r.uniform(-100, 100, n)),
    "erf": (lambda x: _np_erf(x), lambda x: math.erf(x), lambda r, n: r.uniform(-3, 3, n)),
    "pow": (np.power, lambda x, y: x**y, lambda r, n: (r.uniform(0, 10, n), r.uniform(-5, 5, n))),
}


def _np_erf(x):
    try:
        from scipy.special import erf
    except ImportError:
        return None
    return erf(x)


def _unary_loop(fn):
    @numba.njit(error_model="numpy", fastmath={"contract"})
    def loop(x, out):
        for i in range(x.size):
            out[i] = fn(x[i])

    return loop


def _binary_loop(fn):
    @numba.njit(error_model="numpy", fastmath={"contract"})
    def loop(x, y, out):
        for i in range(x.size):
            out[i] = fn(x[i], y[i])

    return loop


def _median_time(fn, repeats=15):
    fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def bench(name, n, dtype):
    npfn, libm, sample = CASES[name]
    kernel = vmath.lookup(name, dtype)
    if kernel is None:
        return None
    rng = np.random.default_rng(0)
    args = sample(rng, n)
    args = tuple(a.astype(dtype) for a in (args if isinstance(args, tuple) else (args,)))
    out = np.empty(n, dtype)
    make = _binary_loop if len(args) == 2 else _unary_loop
    libm_loop, vmath_loop = make(numba.njit(libm)), make(kernel)
    t_np = _median_time(lambda: npfn(*args)) if npfn(*args) is not None else float("nan")
    t_libm = _median_time(lambda: libm_loop(*args, out))
    t_vmath = _median_time(lambda: vmath_loop(*args, out))
    return t_np, t_libm, t_vmath


def main(argv):
    n = int(argv[1]) if len(argv) > 1 else 1_000_000
    dtype = argv[2] if len(argv) > 2 else "float32"
    print(f"{n} {dtype} elements, median of 15; numba {numba.__version__}")
    print(f"{'function':10s} {'numpy ms':>9s} {'libm loop':>10s} {'vmath':>8s} {'numpy/vmath':>12s} {'libm/vmath':>11s}")
    for name in CASES:
        res = bench(name, n, dtype)
        if res is None:
            print(f"{name:10s} {'(no vmath kernel for ' + dtype + ')':>40s}")
            continue
        t_np, t_libm, t_vm = res
        print(f"{name:10s} {t_np * 1e3:9.3f} {t_libm * 1e3:10.3f} {t_vm * 1e3:8.3f} "
              f"{t_np / t_vm:11.1f}x {t_libm / t_vm:10.1f}x")


if __name__ == "__main__":
    main(sys.argv)
