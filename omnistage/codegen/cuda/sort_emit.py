"""Kernels for `sort` (and the width-changing `bitcast_convert_type` lives in emit.py): filled in by the sort work.

`KERNELS` maps a primitive to its rule `rule(driver, e)` (a `HostDriver` and the statement);
`emit.py` merges it into `OPAQUE_KERNELS`."""

KERNELS = {}
