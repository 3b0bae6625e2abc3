"""CUDA kernels for triangular_solve, lu_pivots_to_permutation, cholesky and lu.

`KERNELS` maps a primitive to its rule `rule(driver, e)` (a `HostDriver` and the statement);
`emit.py` merges it into `OPAQUE_KERNELS`."""

KERNELS = {}
