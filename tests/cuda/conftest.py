"""The CUDA backend's tests run under Numba's CUDA simulator (no GPU needed): the flag must be
set before `numba.cuda` is first imported, so it is set when this conftest is collected. It only
changes what `numba.cuda` is (the CPU backend never imports it), so the CPU tests collected in
the same worker are unaffected. `OMNISTAGE_CUDA_TESTS=device` runs them on a real GPU instead."""
import os
import sys

if os.environ.get("OMNISTAGE_CUDA_TESTS", "simulator") == "simulator" and "numba.cuda" not in sys.modules:
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    from numba.core import config as _numba_config

    _numba_config.ENABLE_CUDASIM = 1
