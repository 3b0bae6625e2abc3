"""The CUDA conv_general_dilated kernel under Numba's CUDA simulator: no host round trip, one
thread per output element reading the operands in place, results equal to the CPU backend and
to the NumPy implementation, for hand-picked and hypothesis-drawn parameters."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import omnistage
from omnistage import lax
from omnistage.codegen.cuda import runtime

from .programs_conv import PROGRAMS, conv_nhwc
from .test_solve_kernels import assert_agree, compiles_to_ptx_in_x64, cuda_source

pytestmark = pytest.mark.skipif(not runtime.is_usable(), reason="neither a GPU nor Numba's CUDA simulator is usable")


@pytest.mark.parametrize("name,fun,make_args", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_no_host_round_trip(name, fun, make_args):
    text = cuda_source(fun, *make_args())
    assert "runs on the host" not in text and "host_call" not in text


def test_operands_are_read_in_place_through_the_dimension_numbers():
    text = cuda_source(conv_nhwc, *dict((p[0], p[2]) for p in PROGRAMS)["conv_nhwc"]())
    # channels-last operands indexed directly: no transposed copies, no relayout kernels
    assert text.count("@cuda.jit") == 2 and "transpose" not in text
    assert "for _k0 in range(2):" in text and "for _c in range(3):" in text


@pytest.mark.parametrize("name,fun,make_args", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_agrees_with_the_numpy_implementation(name, fun, make_args):
    args = make_args()
    got = omnistage.jit(fun, backend="cuda")(*args)
    with omnistage.disable_jit():
        want = fun(*args)
    assert_agree(got, want, rtol=2e-5, atol=2e-5)


def test_zero_batch_and_zero_channels():
    f = lambda x, w: lax.conv_general_dilated(x, w, (1,), ((1, 1),))  # noqa: E731
    for x, w in ((np.ones((0, 2, 3), np.float32), np.ones((4, 2, 2), np.float32)),
                 (np.ones((2, 0, 3), np.float32), np.ones((4, 0, 2), np.float32))):
        assert "runs on the host" not in cuda_source(f, x, w)
        assert_agree(omnistage.jit(f, backend="cuda")(x, w), omnistage.jit(f, backend="cpu")(x, w))


def test_float64(x64):
    x, w = np.random.default_rng(0).standard_normal((2, 3, 5, 4)), np.random.default_rng(1).standard_normal((4, 3, 2, 2))
    f = lambda x, w: lax.conv_general_dilated(x, w, (2, 1), ((1, 0), (-1, 1)), (1, 2), (2, 1))  # noqa: E731
    got = omnistage.jit(f, backend="cuda")(x, w)
    assert np.asarray(got).dtype == np.float64
    assert_agree(got, omnistage.jit(f, backend="cpu")(x, w), rtol=1e-13, atol=1e-13)


def test_float64_kernels_compile_to_ptx():
    compiles_to_ptx_in_x64("tests.cuda.programs_conv", ["conv_nchw", "conv_groups", "conv_1d_3d"])


# --- hypothesis: random parameters against the CPU backend ------------------------------------------


@st.composite
def conv_cases(draw):
    """(lhs, rhs, params) of a small valid convolution: 0-2 spatial dimensions, any layout,
    strides, padding (negative too), dilations and feature or batch groups."""
    nsp = draw(st.integers(0, 2))
    kind = draw(st.sampled_from(["none", "feature", "batch"]))
    g = 1 if kind == "none" else 2
    batch = draw(st.integers(1, 2)) * (g if kind == "batch" else 1)
    in_ch = draw(st.integers(1, 2))
    out_ch = draw(st.integers(1, 2)) * g
    in_sp = [draw(st.integers(1, 4)) for _ in range(nsp)]
    k_sp = [draw(st.integers(1, 3)) for _ in range(nsp)]
    specs = [tuple(draw(st.permutations(range(nsp + 2)))) for _ in range(3)]
    lhs_shape, rhs_shape = [0] * (nsp + 2), [0] * (nsp + 2)
    for pos, d in zip(specs[0], [batch, in_ch * (g if kind == "feature" else 1)] + in_sp):
        lhs_shape[pos] = d
    for pos, d in zip(specs[1], [out_ch, in_ch] + k_sp):
        rhs_shape[pos] = d
    params = dict(
        window_strides=[draw(st.integers(1, 2)) for _ in range(nsp)],
        padding=[(draw(st.integers(-1, 2)), draw(st.integers(-1, 2))) for _ in range(nsp)],
        lhs_dilation=[draw(st.integers(1, 2)) for _ in range(nsp)],
        rhs_dilation=[draw(st.integers(1, 2)) for _ in range(nsp)],
        dimension_numbers=specs,
        feature_group_count=g if kind == "feature" else 1,
        batch_group_count=g if kind == "batch" else 1,
    )
    dtype = draw(st.sampled_from([np.float32, np.int32]))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    lhs = (rng.standard_normal(lhs_shape) * 4).astype(dtype)
    rhs = (rng.standard_normal(rhs_shape) * 4).astype(dtype)
    return lhs, rhs, params


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conv_cases())
def test_random_parameters_agree_with_the_cpu_backend(case):
    lhs, rhs, params = case
    f = lambda x, w: lax.conv_general_dilated(x, w, **params)  # noqa: E731
    assert "runs on the host" not in cuda_source(f, lhs, rhs)
    assert_agree(omnistage.jit(f, backend="cuda")(lhs, rhs), omnistage.jit(f, backend="cpu")(lhs, rhs))
