"""The BLAS table: the addresses of SciPy's gemm functions, as data in one process-wide array,
so that compiled products call BLAS without Numba's helper library and without importing
`scipy.linalg`.

Compiled code (`kernels._xxgemm`) reads this table through one external symbol,
`omnistage_blas_gemm`, which the process registers with LLVM's symbol table when it loads
`kernels`; a native library (`aot`, the warm path without Numba) defines the symbol itself
and the process keeps that copy equal to `table` (`mirror`, table_mirrors), as with `mpi_handles`. So the
machine code holds no address of this process, Numba's cache serves every process, and a
library needs nothing of Numba's.

Its last slots, POOL_SLOT and LOOP_SLOT, are the GEMM pool's entries (gemm_pool), 0 until the
pool is loaded.

What the gemm slots hold is what Numba's `np.dot` reaches through `numba_xxgemm`: the Fortran
gemm of the BLAS that `scipy.linalg.cython_blas` wraps. SciPy's wheels bundle OpenBLAS in
`scipy.libs` with prefixed symbols (`scipy_sgemm_`); `fill` loads that library with ctypes
(~1 ms). Importing `scipy.linalg.cython_blas`, which imports the whole `scipy.linalg` package
(0.1-0.2 s of a first call), is the fallback for other SciPy builds, which read the same
functions from its Cython capsules. `libraries()` are the OpenBLAS libraries found, for
`blas_threads`.

Imports only ctypes (no Numba, no SciPy until the fallback).
"""
import ctypes
import importlib.util
import os
import threading

from .table_mirrors import Mirrors

SYMBOL = "omnistage_blas_gemm"
KINDS = "sdcz"  # slot order: float32, float64, complex64, complex128
POOL_SLOT = len(KINDS)  # then gemm_pool's function running a product's blocks (0: none loaded)
LOOP_SLOT = POOL_SLOT + 1  # then its function running a loop's ranges (gemm_pool.LOOP_FUNCTION; 0: none)
LENGTH = len(KINDS) + 2

table = (ctypes.c_int64 * LENGTH)()

_lock = threading.Lock()
_filled = False
_libraries = None  # ctypes handles of SciPy's bundled OpenBLAS, once looked for
_mirrors = Mirrors(table)  # copies in native libraries (aot)


def address():
    """Where the table lives in this process (registered under SYMBOL for compiled code)."""
    return ctypes.addressof(table)


def fill():
    """Store the gemm addresses (once); True when every slot holds one."""
    global _filled
    with _lock:
        if not _filled:
            found = find([f"{kind}gemm" for kind in KINDS], "cython_blas")
            if found:
                for i, kind in enumerate(KINDS):
                    table[i] = found[f"{kind}gemm"]
                _filled = True
                _mirrors.sync()
    return _filled


def set_pool(address, loop_address=0):
    """Compiled products run their blocks through the function at `address` from now on, and
    native libraries' parallel loops their ranges through `loop_address`."""
    with _lock:
        table[POOL_SLOT] = address
        table[LOOP_SLOT] = loop_address
        _mirrors.sync()


def mirror(address):
    """Keep the table at `address` (LENGTH int64s in a loaded native library) equal to this
    one from now on; it gets the current entries at once."""
    fill()
    _mirrors.add(address)


def libraries():
    """ctypes handles of the OpenBLAS libraries bundled with SciPy (loaded if they were not)."""
    global _libraries
    if _libraries is None:
        handles = []
        for path in _bundled_paths():
            try:
                handles.append(ctypes.CDLL(path))
            except OSError:
                continue
        _libraries = handles
    return _libraries


def _bundled_paths():
    """SciPy's wheel keeps its OpenBLAS in site-packages/scipy.libs (found without importing SciPy)."""
    try:
        spec = importlib.util.find_spec("scipy")
    except (ImportError, ValueError):
        return []
    if spec is None or not spec.submodule_search_locations:
        return []
    site = os.path.dirname(os.path.abspath(list(spec.submodule_search_locations)[0]))
    libs = os.path.join(site, "scipy.libs")
    try:
        names = sorted(os.listdir(libs))
    except OSError:
        return []
    return [os.path.join(libs, n) for n in names if "openblas" in n and ".so" in n]


def find(names, cython_module):
    """{name: address} of the Fortran BLAS/LAPACK functions `names` ('dgemm', 'zgeev') that
    `scipy.linalg.<cython_module>` wraps, or None unless every one is found: from SciPy's
    bundled OpenBLAS when it is there, else from the module's Cython capsules."""
    return _from_bundled_openblas(names) or _from_cython_capsules(names, cython_module)


def _from_bundled_openblas(names):
    for lib in libraries():
        for prefix in ("scipy_", ""):
            try:
                return {name: ctypes.cast(getattr(lib, f"{prefix}{name}_"), ctypes.c_void_p).value for name in names}
            except AttributeError:
                continue
    return None


def _from_cython_capsules(names, cython_module):
    """The functions `scipy.linalg.<cython_module>` exports to Cython (what Numba's helper reads)."""
    try:
        module = importlib.import_module(f"scipy.linalg.{cython_module}")
    except ImportError:
        return None
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype, get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    found = {}
    for name in names:
        capsule = module.__pyx_capi__.get(name)
        if capsule is None:
            return None
        found[name] = get_pointer(capsule, get_name(capsule))
    return found
