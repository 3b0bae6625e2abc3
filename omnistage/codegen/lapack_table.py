"""The LAPACK table: the addresses of the LAPACK functions the native tier's linear algebra
calls (c_lapack), as data in one process-wide array, like `blas_table`'s gemm slots.

A native library defines the symbol `omnistage_lapack` itself (LENGTH int64s) and the process
keeps that copy equal to `table` (`mirror`, table_mirrors): the machine code holds no address
of this process. The functions are the ones Numba's `np.linalg` reaches through SciPy's
`cython_lapack` (`blas_table.find`: SciPy's bundled OpenBLAS, without importing SciPy).

Imports only ctypes.
"""
import ctypes
import threading

from . import blas_table
from .table_mirrors import Mirrors

SYMBOL = "omnistage_lapack"
NAMES = ("dgeev", "zgeev", "dgetrf", "zgetrf", "dgetri", "zgetri",  # slot order (c_lapack's OS_L_* indices)
         "dpotrf", "zpotrf", "dsyevd", "zheevd", "dgesdd", "zgesdd")
LENGTH = len(NAMES)

table = (ctypes.c_int64 * LENGTH)()

_lock = threading.Lock()
_filled = False
_mirrors = Mirrors(table)


def fill():
    """Store the addresses (once); True when every slot holds one."""
    global _filled
    with _lock:
        if not _filled:
            found = blas_table.find(NAMES, "cython_lapack")
            if found:
                for i, name in enumerate(NAMES):
                    table[i] = found[name]
                _filled = True
                _mirrors.sync()
    return _filled


def mirror(address):
    """Keep the table at `address` (LENGTH int64s in a loaded native library) equal to this
    one from now on; it gets the current entries at once."""
    fill()
    _mirrors.add(address)
