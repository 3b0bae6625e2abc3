"""The GEMM pool (gemm_pool): a native thread pool running a big product's blocks, built once
per machine into the private cache and loaded only from bytes its tagged record vouches for.
Checked: the same bits as the serial kernel whether the pool runs, runs alone or is absent;
several Python threads multiplying at once; a forked child (no workers) still multiplies; a
library file that is not the recorded one is never loaded."""
import os
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

from omnistage.codegen import blas_table, gemm_pool
from omnistage.codegen import kernels as kn
from tests.helpers import gemm_pool_ready


def _operands(M, K, N, ta, tb, dtype, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((K, M) if ta else (M, K)).astype(dtype)
    b = rng.standard_normal((N, K) if tb else (K, N)).astype(dtype)
    for x in (a, b):
        x.setflags(write=False)
    return a, b, np.array([1, *a.shape, 1, *b.shape, ta, tb], np.int64)


SHAPES = [(32, 784, 512, 0, 0), (784, 32, 512, 1, 0), (300, 200, 130, 0, 1), (130, 260, 700, 1, 1), (17, 3000, 1000, 0, 0)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_the_pool_gives_the_serial_kernels_bits(shape, dtype):
    gemm_pool_ready()
    M, K, N, ta, tb = shape
    a, b, p = _operands(M, K, N, ta, tb, dtype)
    assert kn.gemm_blocks.py_func(M, N, K)[0] > 1  # the pool has blocks to share
    serial, pooled, alone = (np.full((1, M, N), np.nan, dtype) for _ in range(3))
    kn.matmul(a, b, serial, p)
    kn.matmul_pool(a, b, pooled, p)
    with gemm_pool.one_thread():
        kn.matmul_pool(a, b, alone, p)
    assert np.array_equal(serial, pooled) and np.array_equal(serial, alone)
    A = a.T if ta else a
    B = b.T if tb else b
    np.testing.assert_allclose(serial[0], A.astype(np.complex128) @ B, rtol=1e-4, atol=1e-3)


def test_without_the_pool_the_kernel_runs_its_blocks_itself():
    gemm_pool_ready()
    a, b, p = _operands(64, 900, 700, 0, 0, np.float32)
    want, got = np.empty((1, 64, 700), np.float32), np.empty((1, 64, 700), np.float32)
    kn.matmul(a, b, want, p)
    saved = blas_table.table[blas_table.POOL_SLOT]
    try:
        blas_table.table[blas_table.POOL_SLOT] = 0
        kn.matmul_pool(a, b, got, p)
    finally:
        blas_table.table[blas_table.POOL_SLOT] = saved
    assert np.array_equal(want, got)


def test_python_threads_multiplying_at_once_get_their_own_products():
    gemm_pool_ready()
    jobs = [_operands(96, 800, 600, i % 2, 0, np.float32, seed=i) for i in range(6)]
    want = []
    for a, b, p in jobs:
        out = np.empty((1, 96, 600), np.float32)
        kn.matmul(a, b, out, p)
        want.append(out)
    errors = []

    def worker(i):
        a, b, p = jobs[i]
        out = np.empty((1, 96, 600), np.float32)
        for _ in range(30):
            kn.matmul_pool(a, b, out, p)
            if not np.array_equal(out, want[i]):
                errors.append(i)
                return

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork")
def test_a_forked_child_multiplies_without_the_parents_workers():
    gemm_pool_ready()
    a, b, p = _operands(64, 900, 700, 0, 0, np.float32)
    want = np.empty((1, 64, 700), np.float32)
    kn.matmul(a, b, want, p)
    out = np.empty((1, 64, 700), np.float32)
    kn.matmul_pool(a, b, out, p)  # the workers are up and have run a product
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            got = np.empty((1, 64, 700), np.float32)
            kn.matmul_pool(a, b, got, p)
            code = 0 if np.array_equal(got, want) else 2
        finally:
            os._exit(code)
    deadline = time.time() + 60
    while time.time() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 0
            return
        time.sleep(0.05)
    os.kill(pid, 9)
    pytest.fail("the forked child hung in the GEMM pool")


def test_a_pool_library_that_is_not_the_recorded_one_is_not_loaded(tmp_path):
    """Build the pool in a fresh cache, replace the library's bytes, and load it in a new
    process: the record's SHA-256 no longer matches, so nothing is loaded (and products still
    run, serially)."""
    code = textwrap.dedent("""
        import sys, time
        from omnistage.codegen import blas_threads, gemm_pool
        blas_threads.configure()
        deadline = time.time() + 60
        while not gemm_pool.ready() and time.time() < deadline:
            time.sleep(0.02)
        print("READY" if gemm_pool.ready() else "NONE")
    """)
    env = dict(os.environ, OMNISTAGE_CACHE_DIR=str(tmp_path / "cache"))
    first = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    if "READY" not in first.stdout:
        pytest.skip("no GEMM pool here (no C compiler, or one core)")
    library = tmp_path / "cache" / gemm_pool.LIBRARY
    assert library.exists() and (tmp_path / "cache" / gemm_pool.RECORD).exists()
    data = bytearray(library.read_bytes())
    data[-1] ^= 0xFF
    library.write_bytes(bytes(data))
    probe = textwrap.dedent("""
        from omnistage.codegen import gemm_pool
        gemm_pool._started = True  # no background rebuild: only the cached file is tried
        print("LOADED" if gemm_pool._load(1) else "REFUSED")
    """)
    second = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=300)
    assert "REFUSED" in second.stdout, second.stdout + second.stderr
