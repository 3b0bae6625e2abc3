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


import pytest  # noqa: E402


@pytest.fixture
def count_host_copies(monkeypatch):
    """`count_host_copies()` returns a list that, from then on in the test, collects every
    device-to-host copy and host call the CUDA runtime makes (`runtime.to_host`/`host_call`)."""

    def start():
        from omnistage.codegen.cuda import runtime

        copies = []
        for name in ("to_host", "host_call"):
            original = getattr(runtime, name)
            monkeypatch.setattr(runtime, name, lambda *a, _o=original: copies.append(a) or _o(*a))
        return copies

    return start
