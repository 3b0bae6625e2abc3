"""The runtime kernels a native-tier library calls in their Numba build (c_calls.numba_kernel_call):
qr, complex and integer convolutions, windowed reductions of dtypes c_windows has not, ...
(`kernels` functions made with kernel_calls.entry_kernel that the C translator has no rule of
its own for; float convolutions and pools are c_conv's and c_windows').

Why: a program with one such call kept the Numba path for all of it, and Numba compiled the
whole program (the DP-SGD update: 24 s against JAX's 4). Its other statements translate to C;
the kernel's machine code is compiled once per machine and kept in Numba's cache. So the
library calls the kernel's native entry (Numba's calling convention: status, return slot,
exception slot, each array argument flattened into meminfo, parent, size, itemsize, data,
shape and strides) through its table `omnistage_numba_kernels`, which this module fills when the
library is loaded: one address per (kernel, argument types), in the order the library lists
them in its record (key "numba_kernels": [name, [[dtype, ndim] or [dtype], ...]] each).

Importing this module imports Numba (about 0.4 s): only libraries that call kernels pay it.
"""
import ctypes

import numpy as np

SYMBOL = "omnistage_numba_kernels"


def _argtypes(signature):
    from numba.core import types
    from numba.np.numpy_support import from_dtype

    out = []
    for arg in signature:
        dtype = from_dtype(np.dtype(arg[0]))
        out.append(types.Array(dtype, int(arg[1]), "C") if len(arg) == 2 else dtype)
    return tuple(out)


def address(name, signature):
    """The native entry of kernel `name` (a kernel_calls.EntryKernel of `kernels`) compiled for
    `signature` (loaded from Numba's cache, else compiled). LookupError when `name` is not such
    a kernel or takes no such arguments."""
    from . import kernel_calls, kernels

    dispatcher = getattr(kernels, name, None)
    if not isinstance(dispatcher, kernel_calls.EntryKernel):
        raise LookupError(f"kernels.{name} is not an entry kernel")
    argtypes = _argtypes(signature)
    try:
        dispatcher.compile(argtypes)
    except Exception as e:  # noqa: BLE001 - a typing error: the program keeps the Numba path
        raise LookupError(f"kernels.{name}{argtypes}: {type(e).__name__}: {e}") from None
    cres = dispatcher.overloads[argtypes]
    return cres.library.get_pointer_to_function(cres.fndesc.llvm_func_name)


def fill(lib, entries):
    """Store the addresses of `entries` in library `lib`'s table (LookupError if one fails)."""
    addresses = [address(name, signature) for name, signature in entries]
    table = (ctypes.c_int64 * len(addresses)).in_dll(lib, SYMBOL)
    for k, a in enumerate(addresses):
        table[k] = a
