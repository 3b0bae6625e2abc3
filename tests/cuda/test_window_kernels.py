"""The CUDA kernels of the max/min window primitives under Numba's CUDA simulator: no host
round trip, and results equal to the CPU kernels' bit for bit (the same scan, the same order
of addition) and to the NumPy implementation, with NaN, ties, padding, strides and both
dilations; the max pool's gradient too."""
import numpy as np
import pytest

import omnistage
from omnistage import lax
from omnistage.codegen.cuda import runtime

from .test_solve_kernels import assert_agree, cuda_source

pytestmark = pytest.mark.skipif(not runtime.is_usable(), reason="neither a GPU nor Numba's CUDA simulator is usable")

WINDOW = ((1, 2, 3, 1), (1, 2, 1, 1), ((0, 0), (1, 0), (1, 1), (0, 0)), (1, 1, 2, 1), (1, 1, 2, 1))


def pools(v):
    return lax.reduce_window(v, -np.inf, lax.max, *WINDOW), lax.reduce_window(v, np.inf, lax.min, *WINDOW)


def _inputs():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 6, 5, 3)).astype(np.float32)
    x[0, :2, :2, 0] = 1.0  # a tied window
    x[1, 3, 2, 1] = np.nan
    t = rng.standard_normal(x.shape).astype(np.float32)
    ct = rng.standard_normal(pools(x)[0].shape).astype(np.float32)
    return x, t, ct


PROGRAMS = {
    "pools": (pools, lambda x, t, ct: (x,)),
    "jvp": (lambda v, dv: omnistage.jvp(pools, (v,), (dv,)), lambda x, t, ct: (x, t)),
    "vjp": (lambda v, c: omnistage.vjp(lambda u: pools(u)[0], v)[1](c), lambda x, t, ct: (x, ct)),
    "int_same": (lambda v: lax.reduce_window(v, np.iinfo(np.int32).min, lax.max, (2, 2), (1, 1), "SAME"),
                 lambda x, t, ct: (np.arange(20, dtype=np.int32).reshape(4, 5) % 7,)),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_window_kernels_run_on_the_device_and_equal_the_cpu(name):
    fun, make_args = PROGRAMS[name]
    args = make_args(*_inputs())
    text = cuda_source(fun, *args)
    assert "runs on the host" not in text and "host_call" not in text
    got = omnistage.jit(fun, backend="cuda")(*args)
    cpu = omnistage.jit(fun, backend="cpu")(*args)
    for g, c in zip(omnistage.tree_util.tree_leaves(got), omnistage.tree_util.tree_leaves(cpu)):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(c))
    with omnistage.disable_jit():
        want = fun(*args)
    assert_agree(got, want, rtol=1e-6, atol=1e-6)
