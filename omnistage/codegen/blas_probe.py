"""Numba's import-time BLAS probe, answered without importing SciPy's linear algebra.

When `numba.np.arraymath` is first imported (at the first compile of every process), it calls
`ensure_blas()` once to set its `_HAVE_BLAS` flag, and that imports `scipy.linalg.cython_blas`,
i.e. the whole `scipy.linalg` package: ~0.14 s of the ~0.5 s first call of a selu in a fresh
process, a program that calls no BLAS at all. SciPy is one of omnistage's declared runtime
dependencies, so the probe's answer is known. `answer_present()` imports arraymath with that
one probe answered "present" without the import. Every real use of BLAS or LAPACK still goes
through Numba's own `ensure_blas`/`ensure_lapack` (untouched: only arraymath's import-time copy
of the name is the stand-in), which import SciPy then. Compiled products call gemm through
`blas_table` (no SciPy import); LAPACK goes through Numba's helper library.
"""
import importlib.util
import sys

_ARRAYMATH = "numba.np.arraymath"


def answer_present():
    """Import numba.np.arraymath with its BLAS probe answered "present", when it is not
    imported yet and SciPy is installed (else Numba's own probe runs, as it would anyway)."""
    if _ARRAYMATH in sys.modules or importlib.util.find_spec("scipy") is None:
        return
    from numba.np import linalg

    probe = linalg.ensure_blas
    linalg.ensure_blas = _present  # arraymath binds the name at import and calls it once
    try:
        importlib.import_module(_ARRAYMATH)
    finally:
        linalg.ensure_blas = probe


def _present():
    """SciPy's BLAS is there (a declared dependency); imported when first used."""
