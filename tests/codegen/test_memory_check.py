"""An intermediate larger than this machine's memory is reported before compiling, with the
value's shape, dtype and the user's line (codegen/memory_check.py), instead of a bare
MemoryError at run time; a value fused into its consumer (never stored) is not."""
import os

import numpy as np
import pytest

import omnistage
import omnistage.numpy as jnp
from omnistage.codegen import memory_check


def outer_exp(x, y):
    z = x[:, None] * y[None, :]
    w = jnp.exp(z)  # stored whole: sort needs all of it
    return jnp.sort(w, axis=0)[0].sum()


def test_an_intermediate_bigger_than_memory_names_its_line_shape_and_dtype():
    x = np.ones(10**6, np.float32)  # w: 10^12 float32 elements, 3.6 TiB
    with pytest.raises(MemoryError) as info:
        omnistage.jit(outer_exp)(x, x)
    message = str(info.value)
    assert isinstance(info.value, memory_check.IntermediateTooLargeError)
    assert "(1000000, 1000000)" in message and "float32" in message and "TiB" in message
    line = outer_exp.__code__.co_firstlineno + 2
    assert f"{os.path.basename(__file__)}:{line}" in message
    assert "lax.map" in message  # and how to fix it


def test_a_big_value_fused_into_its_reduction_is_not_an_error():
    x = np.ones(10**6, np.float32)
    # 10^12 products summed in one loop nest: never stored, so compiling is fine
    omnistage.jit(lambda a, b: jnp.sum(a[:, None] * b[None, :])).lower(x, x).compile()


def test_the_limit_is_the_machines_memory_or_its_cgroups():
    limit = memory_check.memory_limit()
    assert limit is None or 2**26 < limit <= os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def test_check_source_reads_allocations_with_their_provenance():
    source = "    w = _rt.empty((1000, 1000), np.float64)  # user.py:7\n    v = _rt.empty((10,), np.int32)\n"
    memory_check.check_source(source, "f", limit=8 * 10**6)  # exactly fits
    with pytest.raises(memory_check.IntermediateTooLargeError, match=r"'w' of shape \(1000, 1000\).*user.py:7"):
        memory_check.check_source(source, "f", limit=8 * 10**6 - 1)
