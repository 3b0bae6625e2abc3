"""Shared test fixtures: 64-bit mode toggling, and a seeded NumPy generator."""
import os

import numpy as np
import pytest

# No background builds of native libraries for every program the suite compiles
# (tests/codegen/test_aot.py turns them on for its own subprocesses).
os.environ.setdefault("OMNISTAGE_AOT", "0")

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
