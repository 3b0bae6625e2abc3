"""Shared test fixtures: 64-bit mode toggling, and a seeded NumPy generator."""
import atexit
import os
import shutil
import tempfile

import numpy as np
import pytest

# The suite never writes into the user's real cache directories: it gets a private temporary
# cache for our modules and for Numba's files (a test about the default location sets its own
# environment), made by the first process that loads this file (pytest's, before it starts its
# workers, which inherit the variable and share it: each would otherwise compile every runtime
# kernel again) and removed when that process exits; OMNISTAGE_TEST_SUITE_CACHE names one that
# outlives the run (.ci/run: its slow step and its default step share their kernels). Set before
# omnistage is imported, which reads them lazily.
_SUITE_CACHE = os.environ.get("OMNISTAGE_TEST_SUITE_CACHE", "").strip()
if not _SUITE_CACHE:
    _SUITE_CACHE = os.environ["OMNISTAGE_TEST_SUITE_CACHE"] = tempfile.mkdtemp(prefix="omnistage-test-cache-")
    atexit.register(shutil.rmtree, _SUITE_CACHE, ignore_errors=True)
os.environ["OMNISTAGE_CACHE_DIR"] = os.path.join(_SUITE_CACHE, "omnistage")
os.environ["NUMBA_CACHE_DIR"] = os.path.join(_SUITE_CACHE, "numba")

# No background builds of native libraries for every program the suite compiles
# (tests/codegen/test_aot.py turns them on for its own subprocesses).
os.environ.setdefault("OMNISTAGE_AOT", "0")
# The native tier's programs are compiled optimized at once, as a program runs at steady state
# (tests/codegen/test_c_background.py tests the quick build and its background switch).
os.environ.setdefault("OMNISTAGE_C_BACKGROUND", "0")

import omnistage


@pytest.fixture
def x64():
    """Run a test with 64-bit mode on, restoring the previous setting after."""
    old = omnistage.config.read("jax_enable_x64")
    omnistage.config.update("jax_enable_x64", True)
    yield
    omnistage.config.update("jax_enable_x64", old)


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture(scope="module", autouse=True)
def _numba_path(request):
    """A module marked `numba_path` tests the Numba build (its modules, machine code, parallel
    tiers, background builder): the native tier is off for it and for the processes it starts."""
    if not any(m.name == "numba_path" for m in getattr(request.node, "own_markers", [])):
        yield
        return
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("OMNISTAGE_C_TIER", "0")
        yield
