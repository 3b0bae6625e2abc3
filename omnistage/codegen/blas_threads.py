"""How many threads the BLAS library of compiled code uses: SciPy's bundled OpenBLAS, whose
gemm compiled products call (blas_table). Set once per process, when the first
program that calls BLAS is emitted (`configure`), through OpenBLAS's own
`openblas_set_num_threads` on the library already loaded (as threadpoolctl does).

The rule, first match wins:
1. OMNISTAGE_BLAS_THREADS=n: n threads;
2. the user set OPENBLAS_NUM_THREADS, GOTO_NUM_THREADS or OMP_NUM_THREADS: OpenBLAS read it,
   nothing changes;
3. Numba's parallel loops are on in this process (parallel.enabled()): one thread. The two
   pools take turns on the same cores, and each spins after its work waiting for more
   (OpenBLAS for ~0.1 s), so each finds the cores taken by the other. Our parallelism is the
   loops'; a GEMM runs on one core, as XLA's small dots do;
4. otherwise OpenBLAS's default (a thread per core).

Measured on the shared 2-core machine this was written on (load 3-6, jit of `a.T @ b` on
128x1024 float32, medians of 30-40 calls, every implementation called in turn): default
threads 10-84 ms (medians quantized at scheduler time slices; minimum 1.2 ms), one thread
1.3-2.4 ms, JAX 1.5-1.6 ms; a 1024^3 product 92 ms on one thread, 100 ms on two. The MLP
gradient of issue 18 spent 17 of its 18 ms (serial loops, one BLAS thread) in BLAS.
Libraries other than OpenBLAS (MKL, Accelerate builds of SciPy) are left alone.
"""
import ctypes
import os
import warnings

from . import blas_table

ENV = "OMNISTAGE_BLAS_THREADS"
USER_VARIABLES = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")
_SETTERS = ("scipy_openblas_set_num_threads", "openblas_set_num_threads")  # SciPy >= 1.13 prefixes its symbols
_GETTERS = ("scipy_openblas_get_num_threads", "openblas_get_num_threads")

_configured = False


def wanted_threads(environ=os.environ, parallel_loops=None):
    """The thread count the rule above gives, or None to leave OpenBLAS as it is."""
    value = environ.get(ENV, "").strip()
    if value:
        try:
            n = int(value)
        except ValueError:
            n = 0
        if n < 1:
            warnings.warn(f"{ENV}={value!r} is not a positive integer; BLAS threads left as they are "
                          f"(set it to a count, e.g. {ENV}=1)", RuntimeWarning, stacklevel=3)
            return None
        return n
    if any(environ.get(k, "").strip() for k in USER_VARIABLES):
        return None
    if parallel_loops is None:
        from . import parallel

        parallel_loops = parallel.enabled()
    return 1 if parallel_loops else None


def configure(parallel_loops=None):
    """Apply the rule to the loaded SciPy OpenBLAS, once per process; returns the count set
    (None when nothing was changed). `parallel_loops`: rule 3's answer, when the caller knows it
    without Numba (aot's libraries)."""
    global _configured
    if _configured:
        return None
    _configured = True
    from . import gemm_pool

    gemm_pool.start()  # the threads a big product's blocks run on (loaded, or built in the background)
    n = wanted_threads(parallel_loops=parallel_loops)
    if n is None:
        return None
    setter = _function(_SETTERS)
    if setter is None:
        return None
    setter.argtypes, setter.restype = [ctypes.c_int], None
    setter(n)
    return n


def current_threads():
    """The SciPy OpenBLAS's thread count now, or None when it cannot be read."""
    getter = _function(_GETTERS)
    if getter is None:
        return None
    getter.restype = ctypes.c_int
    return getter()


def _function(names):
    for lib in _libraries():
        for name in names:
            fn = getattr(lib, name, None)
            if fn is not None:
                return fn
    return None


def _libraries():
    """ctypes handles of the OpenBLAS libraries bundled with SciPy: the BLAS compiled products
    call (blas_table), found without importing `scipy.linalg`."""
    return blas_table.libraries()
