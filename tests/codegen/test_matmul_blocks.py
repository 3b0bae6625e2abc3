"""`_kn.matmul` cuts a big product into blocks, each one BLAS call with leading dimensions (no
copies), and `_kn.matmul_threads` runs the same blocks on Numba's threads: every transpose
combination and batch agrees with NumPy, and the two kernels agree bit for bit."""
import itertools
import os

import numpy as np
import pytest

import omnistage
import omnistage.numpy as jnp
from omnistage.codegen import kernels as kn
from omnistage.codegen import parallel

pytestmark = pytest.mark.numba_path  # tests of the Numba build (tests/conftest.py)

SHAPES = [(1, 5, 7, 3), (2, 130, 300, 90), (1, 200, 160, 300), (1, 1, 4096, 1024), (3, 1000, 50, 3)]


def _operands(rng, B, M, K, N, ta, tb, dtype):
    A = rng.standard_normal((B, M, K))
    Bm = rng.standard_normal((B, K, N))
    if np.dtype(dtype).kind == "c":
        A, Bm = A + 1j * rng.standard_normal(A.shape), Bm + 1j * rng.standard_normal(Bm.shape)
    A, Bm = A.astype(dtype), Bm.astype(dtype)
    a = np.ascontiguousarray(A.transpose(0, 2, 1)) if ta else A.copy()
    b = np.ascontiguousarray(Bm.transpose(0, 2, 1)) if tb else Bm.copy()
    for x in (a, b):  # as generated code passes them: the kernels type their operands read-only
        x.setflags(write=False)
    return A, Bm, a, b, np.array(list(a.shape) + list(b.shape) + [ta, tb], np.int64)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
def test_blocks_agree_with_numpy_and_threads_with_serial_bit_for_bit(dtype):
    rng = np.random.default_rng(0)
    for (B, M, K, N), ta, tb in itertools.product(SHAPES, (0, 1), (0, 1)):
        A, Bm, a, b, params = _operands(rng, B, M, K, N, ta, tb, dtype)
        serial, threaded = np.full((B, M, N), np.nan, dtype), np.full((B, M, N), np.nan, dtype)
        kn.matmul(a, b, serial, params)
        kn.matmul_threads(a, b, threaded, params)
        wide = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
        ref = A.astype(wide) @ Bm.astype(wide)
        tol = 1e-12 if dtype == np.float64 else 2e-5
        assert np.abs(serial - ref).max() <= tol * np.abs(ref).max(), ((B, M, K, N), ta, tb)
        assert np.array_equal(serial, threaded), ((B, M, K, N), ta, tb)


def test_block_rule_is_by_shape():
    assert kn.gemm_blocks(8, 8, 8) == (1, True)  # small: one call
    blocks, rows = kn.gemm_blocks(128, 1024, 784)
    assert (blocks, rows) == (4, False)  # the wider side is cut
    assert kn.gemm_blocks(784, 512, 32) == (4, True)
    # block edges are aligned and cover the extent exactly once
    for extent, blocks in ((1024, 4), (130, 2), (1000, 4), (70, 1)):
        edges = [kn._block_edges(extent, blocks, j) for j in range(blocks)]
        assert edges[0][0] == 0 and edges[-1][1] == extent
        assert all(hi == lo2 for (_, hi), (lo2, _) in zip(edges, edges[1:]))
        assert all(lo % kn.GEMM_BLOCK_ALIGN == 0 for lo, _ in edges)


def test_a_parallel_build_calls_the_threaded_kernel_and_the_serial_build_the_other():
    from omnistage.codegen.emit_cpu import emit_module

    x = np.random.RandomState(0).rand(128, 784).astype(np.float32)
    w = np.random.RandomState(1).rand(784, 1024).astype(np.float32)
    lowered = omnistage.jit(lambda x, w: jnp.tanh(x @ w)).lower(x, w)
    program = lowered.compile().executable.program
    serial, _ = emit_module(program, threads=False)
    assert "_kn.matmul_threads(" not in serial and not parallel.threaded(serial)
    if parallel.enabled():  # a library's module: the GEMM pool's kernel, no Numba threads
        assert "_kn.matmul_pool(" in serial
        threaded, _ = emit_module(program, threads=True)
        # no parallel loops here (a small tanh): the GEMM pool first, else Numba's threads
        assert "_kn.matmul_pool_threads(" in threaded and parallel.threaded(threaded) == "blas"


def test_a_program_threaded_only_in_its_products_has_one_build_and_the_same_bits_either_way(monkeypatch):
    from omnistage.codegen import executable

    monkeypatch.setattr(parallel, "_ENABLED", True)
    monkeypatch.setattr(executable, "_builder_busy", lambda: False)  # a library builder left by another test
    rng = np.random.RandomState(3)
    x, w = rng.rand(96, 700).astype(np.float32), rng.rand(700, 530).astype(np.float32)
    scale = float(rng.randint(2, 1000))  # a program no earlier run cached
    compiled = omnistage.jit(lambda x, w: jnp.tanh(x @ w / scale), backend="cpu").lower(x, w).compile()
    ex = compiled.executable
    assert parallel.threaded(compiled.as_text()) == "blas"
    assert ex._parallel_fn is ex._fn and ex._one_thread_serial and not ex._tier.parallel
    serial = np.asarray(compiled(x, w))  # the rent phase: one thread
    ex._tier._enter("trial")
    threaded = np.asarray(compiled(x, w))  # all of Numba's threads
    assert np.array_equal(serial, threaded)
    np.testing.assert_allclose(serial, np.tanh(x.astype(np.float64) @ w / scale), rtol=2e-5, atol=2e-6)
    assert len(ex._fn.overloads) == 1  # nothing else was compiled for the serial calls


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_the_blas_table_reaches_the_gemm_numbas_np_dot_calls(dtype):
    """One block, one gemm: the same bits as Numba's own np.dot (numba_xxgemm through
    scipy.linalg.cython_blas), so moving products off Numba's helper changed no result."""
    import numba

    rng = np.random.default_rng(1)
    for (B, M, K, N), ta, tb in itertools.product([(1, 37, 129, 61), (1, 64, 256, 32)], (0, 1), (0, 1)):
        A, Bm, a, b, params = _operands(rng, B, M, K, N, ta, tb, dtype)
        assert kn.gemm_blocks(M, N, K) == (1, True)
        ours = np.full((B, M, N), np.nan, dtype)
        kn.matmul(a, b, ours, params)
        theirs = numba.njit(lambda x, y: np.dot(x, y))(np.ascontiguousarray(A[0]), np.ascontiguousarray(Bm[0]))
        assert ours[0].tobytes() == theirs.tobytes(), ((M, K, N), ta, tb)


def test_the_blas_table_is_filled_without_importing_scipy_linalg():
    import subprocess
    import sys

    from omnistage.codegen import blas_table

    if not blas_table._bundled_paths():
        pytest.skip("this SciPy has no bundled OpenBLAS (scipy.libs): the table reads cython_blas")

    code = ("import sys; from omnistage.codegen import blas_table, blas_threads\n"
            "assert blas_table.fill() and all(blas_table.table[:len(blas_table.KINDS)])\n"
            "assert blas_threads.current_threads() is not None\n"
            "print('scipy.linalg' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "False"


def test_without_a_bundled_openblas_the_table_holds_scipys_cython_functions(tmp_path):
    """Another SciPy build (MKL, a system BLAS): the table reads cython_blas's capsules, the
    functions Numba's helper calls, and products give the same bits."""
    import subprocess
    import sys

    code = ("import numpy as np\n"
            "from omnistage.codegen import blas_table\n"
            "blas_table._bundled_paths = lambda: []\n"
            "from omnistage.codegen import kernels as kn\n"
            "assert blas_table.fill() and all(blas_table.table[:len(blas_table.KINDS)])\n"
            "rng = np.random.default_rng(0)\n"
            "a, b = rng.standard_normal((1, 50, 70)), rng.standard_normal((1, 70, 40))\n"
            "out = np.empty((1, 50, 40))\n"
            "kn.matmul(a, b, out, np.array([1, 50, 70, 1, 70, 40, 0, 0], np.int64))\n"
            "import numba\n"
            "assert out[0].tobytes() == numba.njit(lambda x, y: np.dot(x, y))(a[0], b[0]).tobytes()\n"
            "print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "OMNISTAGE_CACHE_DIR": str(tmp_path)})
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "ok"


def test_the_serial_build_of_a_parallel_program_runs_its_products_on_threads_while_renting(monkeypatch):
    """A program with parallel loops and a big product: its Numba serial build calls the
    threaded product kernel (its rent calls use every thread), its timed serial calls run on
    one thread, the library is built from a module with no threads at all, and every build and
    phase gives the same bits."""
    from omnistage.codegen import executable

    monkeypatch.setattr(parallel, "_ENABLED", True)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_WORK", 1)
    monkeypatch.setattr(executable, "_builder_busy", lambda: False)  # a library builder left by another test
    entered = []

    class counting_one_thread(parallel.one_thread):
        def __enter__(self):
            entered.append(1)
            return super().__enter__()

    monkeypatch.setattr(parallel, "one_thread", counting_one_thread)
    rng = np.random.RandomState(4)
    x, w = rng.rand(96, 700).astype(np.float32), rng.rand(700, 530).astype(np.float32)
    scale = float(rng.randint(2, 1000))  # a program no earlier run cached
    compiled = omnistage.jit(lambda x, w: jnp.tanh(x @ w / scale) + x.sum(), backend="cpu").lower(x, w).compile()
    ex = compiled.executable
    assert parallel.threaded(compiled.as_text()) == "loops"
    assert ex._serial_module_threaded and ex._one_thread_serial
    library = ex.serial_module
    assert library is not ex._serial_module and library is not ex.module
    assert ex.serial_module is library  # emitted once
    tier = ex._tier
    assert tier.phase == "rent" and tier.threads_allowed and not tier.parallel
    rent = np.asarray(compiled(x, w))
    assert not entered  # rent calls keep their threads
    tier._enter("resample")
    assert not tier.threads_allowed
    one = np.asarray(compiled(x, w))
    assert entered  # a timed serial call runs on one thread
    assert np.array_equal(rent, one)
    expected = np.tanh(x.astype(np.float64) @ w / scale) + x.astype(np.float64).sum()
    np.testing.assert_allclose(rent, expected, rtol=2e-5, atol=2e-4)


def test_the_serial_build_with_threaded_products_and_the_library_module_differ_only_in_threads():
    from omnistage.codegen.emit_cpu import emit_module

    x = np.random.RandomState(0).rand(128, 784).astype(np.float32)
    w = np.random.RandomState(1).rand(784, 1024).astype(np.float32)
    program = omnistage.jit(lambda x, w: jnp.tanh(x @ w)).lower(x, w).compile().executable.program
    blas, _ = emit_module(program, threads="blas")
    assert "numba.prange(" not in blas
    if parallel.enabled():
        assert "_kn.matmul_pool_threads(" in blas and parallel.threaded(blas) == "blas"
    library = emit_module(program, threads=False)[0]
    assert "_threads(" not in library and parallel.threaded(library) is None


def test_a_module_with_parallel_loops_keeps_its_products_on_numbas_threads(monkeypatch):
    """Numba's threads spin for a while after a parallel loop: the products of a module with
    parallel loops run on those threads, not on the GEMM pool's, which would fight them."""
    from omnistage.codegen.emit_cpu import emit_module

    monkeypatch.setattr(parallel, "_ENABLED", True)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_WORK", 1)
    x = np.random.RandomState(0).rand(128, 784).astype(np.float32)
    w = np.random.RandomState(1).rand(784, 1024).astype(np.float32)
    program = omnistage.jit(lambda x, w: jnp.tanh(x @ w) + x.sum()).lower(x, w).compile().executable.program
    loops, _ = emit_module(program, threads=True)
    assert "numba.prange(" in loops and "_kn.matmul_threads(" in loops and "_pool" not in loops
    assert "_kn.matmul_pool_threads(" in emit_module(program, threads="blas")[0]
