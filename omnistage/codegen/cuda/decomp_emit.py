"""CUDA kernels for qr, eigh and svd.

`KERNELS` maps a primitive to its rule `rule(driver, e)` (a `HostDriver` and the statement);
`emit.py` merges it into `OPAQUE_KERNELS`."""

KERNELS = {}
