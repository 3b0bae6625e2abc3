"""The CPU convolution and window kernels as generated code calls them: one kernel call per
convolution or pool (no relayout loop nests in the program), one Numba specialization of each
kernel for any number of convolutions and pools of one rank and dtype (literal arguments would
make Numba compile a specialization per distinct value), and the BLAS path equal to the
direct loop."""
import numpy as np
import pytest

import omnistage
from omnistage import lax
from omnistage.codegen import kernels as kn
from tests.helpers import gemm_pool_ready

NHWC = ("NHWC", "HWIO", "NHWC")


def _program(x, w):
    a = lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=NHWC)
    b = lax.conv_general_dilated(x, w, (2, 1), ((1, 0), (0, 2)), rhs_dilation=(1, 2), dimension_numbers=NHWC)
    c = lax.conv_general_dilated(x, w[:, :, :1], (1, 2), "VALID", lhs_dilation=(2, 1), dimension_numbers=NHWC,
                                 feature_group_count=3)
    pools = [lax.reduce_window(v, -np.inf, lax.max, (1, 2, 2, 1), (1, s, 1, 1), "SAME") for v, s in ((a, 1), (b, 2))]
    return sum(v.sum() for v in (a, b, c, *pools))


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((2, 7, 6, 3)).astype(np.float32), rng.standard_normal((3, 2, 3, 6)).astype(np.float32)


def test_one_kernel_call_per_convolution_and_pool_and_no_relayout_loops():
    text = omnistage.jit(_program).lower(*_inputs()).compile().as_text()
    assert text.count("_kn.conv_in_layout(") == 3 and text.count("_kn.reduce_window_chooser(") == 2
    assert "_r0" not in text  # the relayout loop nests' indices


def test_each_kernel_is_compiled_once_for_many_convolutions_and_pools():
    kernels = (kn.conv_in_layout, kn._conv_gemm, kn._taps, kn.reduce_window_chooser, kn.select_and_scatter_add,
               kn._window_choices)
    before = [set(k.signatures) for k in kernels]
    x, w = _inputs(1)
    omnistage.jit(omnistage.value_and_grad(_program, (0, 1)))(x, w)
    new = {k.py_func.__name__: len(set(k.signatures) - b) for k, b in zip(kernels, before)}
    assert all(n <= 1 for n in new.values()), new


def test_blas_convolution_equals_the_direct_loop():
    rng = np.random.default_rng(3)
    for groups, bgroups in ((1, 1), (2, 1), (1, 2)):
        lhs = rng.standard_normal((4, 4, 30)).astype(np.float64)
        rhs = rng.standard_normal((4, 4 // groups, 6)).astype(np.float64)
        args = (np.array((6, 5)), np.array((2, 3)), np.array((3, 2)), np.array((2, 1)), np.array((1, 0)),
                np.array((1, 2)), np.array((2, 1)), groups, bgroups)
        n_out = 4 // bgroups
        direct, gemm = np.zeros((n_out, 4, 6)), np.zeros((n_out, 4, 6))
        kn.conv(lhs, rhs, direct, *args)
        kn._conv_gemm(lhs, rhs, gemm, *args)
        np.testing.assert_allclose(gemm, direct, rtol=1e-12, atol=1e-12)


# (lhs shape, rhs shape, in/kernel/out spatial, strides, pad_lo, lhs_dil, rhs_dil, groups, batch groups):
# one phase; a transposed convolution (four phases); feature groups of one example each (a
# per-example gradient); batch groups; big enough for several tasks a phase
_TASK_CASES = [
    ((64, 3, 196), (8, 3, 9), (14, 14), (3, 3), (12, 12), (1, 1), (0, 0), (1, 1), (1, 1), 1, 1),
    ((48, 8, 25), (6, 8, 16), (5, 5), (4, 4), (13, 13), (1, 1), (3, 3), (2, 2), (1, 1), 1, 1),
    ((6, 40, 169), (320, 1, 25), (13, 13), (5, 5), (4, 4), (1, 1), (0, 0), (1, 1), (2, 2), 40, 1),
    ((40, 6, 100), (12, 6, 9), (10, 10), (3, 3), (8, 8), (1, 1), (0, 0), (1, 1), (1, 1), 1, 4),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
@pytest.mark.parametrize("case", range(len(_TASK_CASES)))
def test_convolution_tasks_give_the_same_bits_on_the_pool_alone_and_without_it(case, dtype):
    """A phase's (group, block) tasks run on the GEMM pool's threads (kernels._tasks_on_pool)
    when it is loaded: the result must not depend on that, nor equal the direct loop less."""
    pool = gemm_pool_ready()
    kn.prepare_conv_tasks(dtype)  # what a program's convolution kernel of this dtype does first
    lhs_shape, rhs_shape, *geometry, groups, bgroups = _TASK_CASES[case]
    rng = np.random.default_rng(case)
    lhs = rng.standard_normal(lhs_shape).astype(dtype)
    rhs = rng.standard_normal(rhs_shape).astype(dtype)
    if np.dtype(dtype).kind == "c":
        lhs, rhs = lhs + 1j * rng.standard_normal(lhs_shape).astype(dtype), rhs + 1j * rng.standard_normal(rhs_shape).astype(dtype)
    args = tuple(np.array(v, np.int64) for v in geometry) + (groups, bgroups)
    out_shape = (lhs_shape[0] // bgroups, rhs_shape[0], int(np.prod(geometry[2])))
    pooled, alone, without, direct = (np.full(out_shape, np.nan, dtype) for _ in range(4))
    kn._conv_gemm(lhs, rhs, pooled, *args)
    with pool.one_thread():
        kn._conv_gemm(lhs, rhs, alone, *args)
    saved = list(kn._task_table)
    try:
        kn._task_table[:] = [0] * len(saved)
        kn._conv_gemm(lhs, rhs, without, *args)
    finally:
        kn._task_table[:] = saved
    assert pooled.tobytes() == alone.tobytes() == without.tobytes()
    kn.conv(lhs, rhs, direct, *args)
    tol = 1e-4 if dtype in (np.float32, np.complex64) else 1e-10
    np.testing.assert_allclose(pooled, direct, rtol=tol, atol=tol * 10)


def test_a_phase_has_several_tasks_and_each_task_function_is_registered():
    for dtype in (np.float32, np.float64):
        kn.prepare_conv_tasks(dtype)
    assert all(kn._task_table[:])
    chunk = max(1, min(64, kn._COLS_BUDGET // (3 * 9 * 196)))
    assert -(-64 // chunk) >= 4  # _TASK_CASES[0] is cut into tasks the pool can share


def test_a_process_prepares_the_task_function_of_the_dtypes_it_convolves_only():
    import os
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent("""
        import numpy as np
        import omnistage
        from omnistage import lax
        from omnistage.codegen import kernels as kn
        assert not any(kn._task_table[:])
        x = np.ones((2, 6, 6, 3), np.float32); w = np.ones((3, 3, 3, 4), np.float32)
        omnistage.jit(lambda a, b: lax.conv_general_dilated(a, b, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")))(x, w)
        f32, f64 = kn.TASK_DTYPES.index(kn.types.float32), kn.TASK_DTYPES.index(kn.types.float64)
        assert kn._task_table[f32] and not kn._task_table[f64], list(kn._task_table)
    """)
    # (the Numba build's kernels: the native tier convolves floats in C, c_conv)
    env = dict(os.environ, OMNISTAGE_C_TIER="0")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
