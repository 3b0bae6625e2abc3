"""The CPU convolution and window kernels as generated code calls them: one kernel call per
convolution or pool (no relayout loop nests in the program), one Numba specialization of each
kernel for any number of convolutions and pools of one rank and dtype (literal arguments would
make Numba compile a specialization per distinct value), and the BLAS path equal to the
direct loop."""
import numpy as np

import omnistage
from omnistage import lax
from omnistage.codegen import kernels as kn

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
