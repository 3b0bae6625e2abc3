"""Test helpers: run a function eagerly, under jit, and from its printed program source,
and compare all three (values and dtypes).

`check_staged` is about the op libraries and staging, so its jit runs the NumPy interpreter
backend by default: Numba lowering is covered primitive by primitive in tests/codegen.
Set OMNISTAGE_TEST_BACKEND=cpu to run every op test through Numba as well (slow: one
compile per program).
"""
import os

import numpy as np

import omnistage
from omnistage.core import tree_util
from omnistage.staging import interpret_checked


TEST_BACKEND = os.environ.get("OMNISTAGE_TEST_BACKEND", "interpreter")


def run_printed_program(program, *flat_args):
    """Exec `str(program)` as a user would and call it on Arrays."""
    ns = {}
    exec(compile(str(program), "<printed program>", "exec"), ns)  # noqa: S102
    return ns[program.name](*flat_args)


def assert_same(a, b, rtol=1e-6, atol=1e-6, check_dtype=True):
    la, lb = tree_util.tree_leaves(a), tree_util.tree_leaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        x, y = np.asarray(x), np.asarray(y)
        if check_dtype:
            assert x.dtype == y.dtype, (x.dtype, y.dtype)
        assert x.shape == y.shape, (x.shape, y.shape)
        if x.dtype.kind in "biu":
            np.testing.assert_array_equal(x, y)
        else:
            np.testing.assert_allclose(x, y, rtol=rtol, atol=atol, equal_nan=True)


def check_staged(fun, *args, rtol=1e-6, atol=1e-6, **kwargs):
    """fun eager == jit(fun) == printed program == checked interpreter; returns eager result."""
    eager = fun(*args, **kwargs)
    jitted = omnistage.jit(fun, backend=TEST_BACKEND)(*args, **kwargs)
    assert_same(eager, jitted, rtol, atol)
    program = omnistage.make_jaxpr(fun)(*args, **kwargs)
    program.check()
    flat = [omnistage.numpy.asarray(x) if not isinstance(x, omnistage.Array) else x
            for x in tree_util.tree_leaves((args, kwargs))]
    printed = run_printed_program(program, *flat)
    assert_same(tree_util.tree_leaves(eager), list(printed), rtol, atol)
    checked = interpret_checked(program, *[np.asarray(x) for x in flat])
    assert_same(tree_util.tree_leaves(eager), [np.asarray(c) for c in checked], rtol, atol)
    return eager


def gemm_pool_ready():
    """The GEMM pool (codegen/gemm_pool.py) loaded in this process, with one OpenBLAS thread as
    compiled programs run it; the test is skipped where there is none (no C compiler, one core)."""
    import time

    import pytest

    from omnistage.codegen import blas_threads, gemm_pool

    blas_threads.configure()
    gemm_pool.start()
    deadline = time.time() + 60
    while not gemm_pool.ready() and time.time() < deadline:
        time.sleep(0.02)
    if not gemm_pool.ready():
        pytest.skip("no GEMM pool here (no C compiler, or one core)")
    return gemm_pool
