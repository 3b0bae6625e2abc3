"""The CUDA kernels for triangular_solve, lu, lu_pivots_to_permutation and cholesky under Numba's
CUDA simulator: no host round trip, results equal to the CPU backend (values, dtypes, NaN
patterns, pivots) and to NumPy's linear algebra, every flag combination, float32/float64 and
complex, empty batches. Also home of the helpers the conv kernel tests share."""
import os
import subprocess
import sys

import numpy as np
import pytest

import omnistage
import omnistage.numpy as jnp
from omnistage import lax
from omnistage.codegen.cuda import runtime
from omnistage.core.array import GpuArray

from .programs_solve import FLAGS, PROGRAMS, not_positive_definite, singular_and_ties, well_conditioned

pytestmark = pytest.mark.skipif(not runtime.is_usable(), reason="neither a GPU nor Numba's CUDA simulator is usable")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# --- helpers (the conv kernel tests use them too) ---------------------------------------------------


def cuda_source(fun, *args):
    return omnistage.jit(fun, backend="cuda").lower(*args).compile().as_text()


def assert_agree(got, want, rtol=2e-6, atol=2e-6):
    """Same leaves, dtypes and shapes; floats to tolerance (NaNs where `want` has them)."""
    got, want = omnistage.tree_util.tree_leaves(got), omnistage.tree_util.tree_leaves(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert isinstance(g, GpuArray), type(g)
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, w.dtype, g.shape, w.shape)
        if w.dtype.kind in "fc":
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
        else:
            np.testing.assert_array_equal(g, w)


_PTX_X64 = """
import importlib, sys
import numpy as np
import omnistage
omnistage.config.update("jax_enable_x64", True)
from numba import cuda
from tests.cuda.ptx_check import argument_types, kernels_of, toolkit_missing
missing = toolkit_missing()
if missing:
    print("SKIP: " + missing)
    sys.exit(0)
wide = {"float32": np.float64, "complex64": np.complex128}
programs = {p[0]: p for p in importlib.import_module(sys.argv[1]).PROGRAMS}
count = 0
for name in sys.argv[2:]:
    _, fun, make_args = programs[name]
    args = [np.asarray(a).astype(wide.get(np.asarray(a).dtype.name, np.asarray(a).dtype)) for a in make_args()]
    for kname, kernel, sig in kernels_of(fun, args):
        ptx, _ = cuda.compile_ptx(kernel.py_func, argument_types(sig), cc=(9, 0))
        assert ".target sm_90" in ptx, kname
        count += 1
print(count, "kernels")
"""


def compiles_to_ptx_in_x64(module, names):
    """The kernels of programs `names` of `module` (float arguments widened to 64 bits, x64
    on) compile to PTX for sm_90 with the real CUDA target (ptx_check covers 32 bits only)."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    env["OMNISTAGE_AOT"] = "0"
    done = subprocess.run([sys.executable, "-c", _PTX_X64, module, *names], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    if done.stdout.startswith("SKIP:"):
        pytest.skip(done.stdout[len("SKIP: "):].strip())
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert int(done.stdout.split()[0]) > 0


# --- no host round trip ------------------------------------------------------------------------------


@pytest.mark.parametrize("name,fun,make_args", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_no_host_round_trip(name, fun, make_args):
    text = cuda_source(fun, *make_args())
    assert "runs on the host" not in text and "host_call" not in text


def test_one_thread_per_matrix_and_a_float64_scratch_for_float32_cholesky(x64):
    a = well_conditioned(3, 4, 4)
    text = cuda_source(lambda a: (lax.linalg.lu(a), lax.linalg.cholesky(a)), a)
    assert text.count("# one thread per matrix") == 2
    assert "_wide = _cu.empty((3, 4, 4), np.float64)" in text
    assert "_wide" not in cuda_source(lambda a: lax.linalg.cholesky(a), a.astype(np.float64))


# --- triangular_solve -------------------------------------------------------------------------------------


def _numpy_triangular_solve(a, b, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    t = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        t = t - t * np.eye(a.shape[-1]) + np.eye(a.shape[-1])
    t = np.conj(t) if conjugate_a else t
    t = np.swapaxes(t, -1, -2) if transpose_a else t
    if left_side:
        return np.linalg.solve(t, b)
    return np.swapaxes(np.linalg.solve(np.swapaxes(t, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_triangular_solve_every_flag_combination_against_numpy(dtype):
    rng = np.random.default_rng(5)
    noise = lambda *s: rng.standard_normal(s) + (1j * rng.standard_normal(s) if dtype == np.complex64 else 0)  # noqa: E731
    a = (noise(2, 3, 3) + 3 * np.eye(3)).astype(dtype)
    b_left, b_right = noise(2, 3, 4).astype(dtype), noise(2, 4, 3).astype(dtype)
    flags = [f for f in FLAGS if dtype == np.complex64 or not f[3]]

    def solves(a, bl, br):
        return [lax.linalg.triangular_solve(a, bl if f[0] else br, left_side=f[0], lower=f[1], transpose_a=f[2],
                                            conjugate_a=f[3], unit_diagonal=f[4]) for f in flags]

    assert "runs on the host" not in cuda_source(solves, a, b_left, b_right)
    got = omnistage.jit(solves, backend="cuda")(a, b_left, b_right)
    for x, f in zip(got, flags):
        want = _numpy_triangular_solve(a.astype(np.complex128), (b_left if f[0] else b_right).astype(np.complex128), *f)
        assert np.asarray(x).dtype == dtype
        np.testing.assert_allclose(np.asarray(x), want, rtol=1e-4, atol=1e-5, err_msg=str(f))


def test_triangular_solve_reads_only_its_triangle():
    a = well_conditioned(2, 3, 3)
    garbage = a + np.triu(np.full((3, 3), np.nan, np.float32), 1)
    b = np.ones((2, 3, 2), np.float32)
    f = lambda a, b: lax.linalg.triangular_solve(a, b, left_side=True, lower=True)  # noqa: E731
    np.testing.assert_array_equal(np.asarray(omnistage.jit(f, backend="cuda")(garbage, b)),
                                  np.asarray(omnistage.jit(f, backend="cuda")(np.tril(a), b)))


# --- lu and lu_pivots_to_permutation ----------------------------------------------------------------


def test_lu_pivots_follow_the_cpu_kernel_on_ties_zero_columns_and_nans():
    a = singular_and_ties()
    f = lambda a: lax.linalg.lu(a)  # noqa: E731
    got = omnistage.jit(f, backend="cuda")(a)
    assert_agree(got, omnistage.jit(f, backend="cpu")(a))
    lu, pivots, perm = (np.asarray(v) for v in got)
    assert pivots.dtype == perm.dtype == np.int32
    assert pivots[0, 0] == 0  # |1| == |-1| == |1|: the first largest
    assert pivots[1, 0] == 0 and (lu[1, :, 0] == 0).all()  # a zero column stays unscaled
    assert pivots[3, 0] == 1  # a NaN beats every number
    for k in (0, 1, 2, 4):  # x[perm] = L U
        low, up = np.tril(lu[k], -1) + np.eye(3), np.triu(lu[k])
        np.testing.assert_allclose(a[k][perm[k]], low @ up, rtol=1e-5, atol=1e-5)


def test_lu_permutation_equals_the_pivots_applied():
    a = np.random.default_rng(2).standard_normal((3, 4, 4)).astype(np.float32)

    def f(a):
        lu, pivots, perm = lax.linalg.lu(a)
        return perm, lax.linalg.lu_pivots_to_permutation(pivots, 4)

    perm, applied = omnistage.jit(f, backend="cuda")(a)
    np.testing.assert_array_equal(np.asarray(perm), np.asarray(applied))


def test_lu_pivots_to_permutation_ignores_pivots_out_of_range():
    p = np.array([[3, -1, 9], [1, 1, 2]], np.int32)
    f = lambda p: lax.linalg.lu_pivots_to_permutation(p, 4)  # noqa: E731
    got = np.asarray(omnistage.jit(f, backend="cuda")(p))
    np.testing.assert_array_equal(got, np.asarray(omnistage.jit(f, backend="cpu")(p)))
    np.testing.assert_array_equal(got, [[3, 1, 2, 0], [1, 0, 2, 3]])


# --- cholesky -----------------------------------------------------------------------------------------------


def test_cholesky_nan_patterns_equal_the_cpu_backend():
    a = not_positive_definite()
    f = lambda a: lax.linalg.cholesky(a, symmetrize_input=False)  # noqa: E731
    got = np.asarray(omnistage.jit(f, backend="cuda")(a))
    want = np.asarray(omnistage.jit(f, backend="cpu")(a))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=1e-6, equal_nan=True)
    assert np.isnan(got[1][np.tril_indices(3)]).all() and (got[1][np.triu_indices(3, 1)] == 0).all()
    assert np.isnan(got[2][np.tril_indices(3)]).all()  # a zero pivot fails too
    # a NaN propagates, it does not fail: the factor's first column still holds numbers
    assert got[3, 0, 0] == 1 and got[3, 2, 0] == 0 and np.isnan(got[3, 1, :2]).all() and np.isnan(got[3, 2, 1:]).all()
    np.testing.assert_allclose(got[4], got[0], rtol=1e-6)  # the upper triangle is never read


def test_cholesky_against_numpy():
    m = np.random.default_rng(1).standard_normal((3, 5, 5))
    spd = (m @ np.swapaxes(m, -1, -2) + np.eye(5)).astype(np.float32)
    got = omnistage.jit(lambda a: lax.linalg.cholesky(a), backend="cuda")(spd)
    # float64 work rounded once: within a rounding of NumPy's float64 factor
    np.testing.assert_allclose(np.asarray(got), np.linalg.cholesky(spd.astype(np.float64)), rtol=1e-6, atol=1e-6)


# --- float64, complex, empty -----------------------------------------------------------------------------


def _linalg_mix(a, b):
    lu, pivots, perm = lax.linalg.lu(a)
    chol = lax.linalg.cholesky(a @ jnp.conj(jnp.swapaxes(a, -1, -2)))
    solved = lax.linalg.triangular_solve(chol, b, left_side=True, lower=True, transpose_a=True, conjugate_a=True)
    return lu, pivots, perm, chol, solved, lax.linalg.lu_pivots_to_permutation(pivots, 4)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_64_bit_types_agree_with_the_cpu_backend(x64, dtype):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((2, 3, 3)) + 2 * np.eye(3) + (1j * rng.standard_normal((2, 3, 3)) if dtype == np.complex128 else 0)
    b = rng.standard_normal((2, 3, 2)).astype(dtype)
    a = a.astype(dtype)
    assert "runs on the host" not in cuda_source(_linalg_mix, a, b)
    got = omnistage.jit(_linalg_mix, backend="cuda")(a, b)
    assert np.asarray(got[0]).dtype == dtype
    assert_agree(got, omnistage.jit(_linalg_mix, backend="cpu")(a, b), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape", [(0, 3, 3), (2, 0, 0)])
def test_empty_batches_and_matrices(shape):
    a = np.zeros(shape, np.float32)
    b = np.zeros(shape[:-1] + (2,), np.float32)
    assert "runs on the host" not in cuda_source(_linalg_mix, a, b)
    assert_agree(omnistage.jit(_linalg_mix, backend="cuda")(a, b), omnistage.jit(_linalg_mix, backend="cpu")(a, b))


def test_float64_kernels_compile_to_ptx():
    compiles_to_ptx_in_x64("tests.cuda.programs_solve",
                           ["triangular_solve_flags", "triangular_solve_complex", "cholesky", "cholesky_complex", "lu",
                            "lu_complex", "lu_pivots_to_permutation"])
