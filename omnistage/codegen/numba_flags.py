"""The floating-point flags every cached Numba function of ours is built with, spelled out.

Numba compiles a callee whose decorator leaves `fastmath` or `error_model` unset with its
caller's (`CPUTargetOptions.finalize`: `inherit_if_not_set`), but keys the callee's overloads, in
a process and in its disk cache, by argument types alone. An unset helper first compiled inside a
generated program (fastmath 'contract', error model 'numpy') was cached contracted, and a later
process's direct call loaded that build; compiled first by a direct call, programs got the
uncontracted one. So a kernel's bits depended on which process filled the cache first. Every
cached function names both flags, so each has one build.

- `KERNEL`: the whole-array runtime kernels (kernels.py, mpi_kernels.py) and what they call: the
  build a program's call always got (LLVM contracts a product with its sum; a float division by
  zero gives inf/nan, never an exception). The native tier's ports (c_linalg, c_conv, c_windows)
  mirror it.
- `EXACT`: support.py's scalar helpers: each operation rounds once, as NumPy's loops and the
  native tier's c_complex do (a complex product rounds its two products and their difference
  separately), the error model still 'numpy'.
"""

KERNEL = {"fastmath": {"contract"}, "error_model": "numpy"}
EXACT = {"fastmath": False, "error_model": "numpy"}
