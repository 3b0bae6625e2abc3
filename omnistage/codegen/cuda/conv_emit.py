"""The CUDA kernel for `conv_general_dilated`: one thread per output element.

`KERNELS` maps a primitive to its rule `rule(driver, e)` (a `HostDriver` and the statement);
`emit.py` merges it into `OPAQUE_KERNELS`."""

KERNELS = {}
