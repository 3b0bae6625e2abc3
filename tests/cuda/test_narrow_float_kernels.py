"""float16/bfloat16 programs on the CUDA backend (codegen/narrow_floats.py): computed in float32
kernels rounded after each operation, with no host round trip in the generated source; results
keep their narrow dtypes, stay on the device, and equal the CPU backend's (exactly for
elementwise operations); the kernels compile to PTX for sm_90 with the real target.

The simulator runs every thread as Python: shapes are tiny and examples few."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import omnistage
import omnistage.numpy as jnp
from omnistage import lax
from omnistage.codegen.cuda import runtime
from omnistage.core.array import GpuArray

from tests.codegen.test_narrow_floats import WIDTH_CHANGING_BITCASTS, elementwise_chain

from .test_real_target import _run

ml_dtypes = pytest.importorskip("ml_dtypes")
BF16 = np.dtype(ml_dtypes.bfloat16)
F16 = np.dtype(np.float16)
DTYPES = pytest.mark.parametrize("dtype", [F16, BF16], ids=["float16", "bfloat16"])

pytestmark = pytest.mark.skipif(not runtime.is_usable(), reason="neither a GPU nor Numba's CUDA simulator is usable")

SPECIAL = [0.0, -0.0, 1.0, -1.5, 65504.0, 6e-8, 1e-5, np.inf, -np.inf, np.nan, 300.0, 0.1]


def _source(fun, *args):
    return omnistage.jit(fun, backend="cuda").lower(*args).compile().as_text()


def _cuda(fun, *args):
    leaves = omnistage.tree_util.tree_leaves(omnistage.jit(fun, backend="cuda")(*args))
    assert all(isinstance(o, GpuArray) for o in leaves)
    return [np.asarray(o) for o in leaves]


def _cpu(fun, *args):
    return [np.asarray(o) for o in omnistage.tree_util.tree_leaves(omnistage.jit(fun, backend="cpu")(*args))]


def _exact(fun, *args):
    got, want = _cuda(fun, *args), _cpu(fun, *args)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        assert g.tobytes() == w.tobytes() or np.array_equal(g, w, equal_nan=True), (g, w)


def _chain(x):
    y = jnp.tanh(x * 2 + 1) - jnp.exp(x / 7) + jnp.log1p(jnp.abs(x))
    return y, jnp.where(x > 0, jnp.sqrt(jnp.abs(x)), x * x), x.astype(jnp.float32) * 3, jnp.maximum(x, 0.5)


@DTYPES
def test_elementwise_programs_have_kernels_and_equal_the_cpu_backend(dtype):
    x = np.array(SPECIAL + [-20.0, -3.25, 7.5, 20.0], dtype)
    text = _source(_chain, x)
    assert "runs on the host" not in text and "host_call" not in text
    assert f"_cd.round_to_{dtype.name}(" in text
    with np.errstate(all="ignore"):
        _exact(_chain, x)


@DTYPES
def test_casts_to_and_from_narrow_floats(dtype):
    x64 = np.array(SPECIAL + [1 / 3, 2049.0, 65519.99, 65520.0, 70000.0, 3e-8], np.float64)
    ints = np.array([0, 1, -7, 2049, 70000], np.int32)
    narrow = x64.astype(dtype)
    f = lambda a, i, n: (a.astype(dtype), a.astype(np.float32).astype(dtype), i.astype(dtype),  # noqa: E731
                         n.astype(np.float32), n.astype(np.int32), (n > 1).astype(dtype))
    with np.errstate(all="ignore"):
        _exact(f, x64, ints, narrow)


@DTYPES
def test_reductions_and_contractions_are_close_to_the_cpu_backend(dtype):
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((4, 6)).astype(dtype), rng.standard_normal((6, 3)).astype(dtype)
    f = lambda a, b: (a.sum(1), a @ b, a - a.max(0, keepdims=True), jnp.argmax(a, 1))  # noqa: E731
    assert "runs on the host" not in _source(f, a, b)
    rtol = 2e-3 if dtype == F16 else 2e-2
    for g, w in zip(_cuda(f, a, b), _cpu(f, a, b)):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=rtol, atol=rtol)


def test_float16_device_arrays_convert_on_the_device(monkeypatch, count_host_copies):
    x = omnistage.device_put(np.linspace(-2, 2, 9).astype(np.float16), "gpu")
    f = omnistage.jit(lambda v: (v * 3 + 1, v.astype(jnp.float32)), backend="cuda")
    f(x)  # compiled before counting
    if runtime.SIMULATED:
        monkeypatch.setattr(runtime, "SIMULATED", False)  # take the device path under the simulator too
        monkeypatch.setattr(runtime, "_cupy", lambda: None)
    copies = count_host_copies()
    outs = f(x)
    assert copies == [] and [o.dtype for o in outs] == [np.float16, np.float32]
    monkeypatch.undo()
    host = np.asarray(x)
    np.testing.assert_array_equal(np.asarray(outs[0]), host * np.float16(3) + np.float16(1))


def test_rank0_and_constants():
    c = np.array([0.5, 1.25, -3.0], np.float16)
    _exact(lambda s, x: (s * x + jnp.asarray(c), s, jnp.sum(x * s)), np.float16(1.5), np.array([1.0, 2.0, 3.0], np.float16))


def test_bfloat16_device_arrays_hold_bits_and_convert_on_the_device(monkeypatch, count_host_copies):
    host = np.array(SPECIAL + [-3.25, 1e-38], BF16)
    x = omnistage.device_put(host, "gpu")
    assert x.dtype == BF16 and x._value.data.dtype == np.uint16  # CuPy and Numba have no bfloat16
    assert np.asarray(x).dtype == BF16 and np.asarray(x).tobytes() == host.tobytes()
    first = lambda v: (v * 3 + 1, v.astype(jnp.float32), jnp.sum(v))  # noqa: E731
    second = lambda v: jnp.tanh(v) - v  # noqa: E731
    f, g = omnistage.jit(first, backend="cuda"), omnistage.jit(second, backend="cuda")
    g(f(x)[0])  # compiled before counting
    if runtime.SIMULATED:
        monkeypatch.setattr(runtime, "SIMULATED", False)  # the device path under the simulator too
        monkeypatch.setattr(runtime, "_cupy", lambda: None)
    copies = count_host_copies()
    outs = list(f(x)) + [g(f(x)[0])]  # a bfloat16 result feeds the next program on the device
    assert copies == [] and [o.dtype for o in outs] == [BF16, np.float32, BF16, BF16]
    assert all(isinstance(o, GpuArray) for o in outs)
    assert [o._value.data.dtype for o in outs] == [np.uint16, np.float32, np.uint16, np.uint16]
    assert outs[2].shape == ()
    monkeypatch.undo()
    with np.errstate(all="ignore"):
        want = [np.asarray(o) for o in omnistage.jit(first, backend="cpu")(host)]
        want.append(np.asarray(omnistage.jit(second, backend="cpu")(want[0])))
    for got, w in zip(outs, want):  # the same bits, but for the sign of a NaN
        got = np.asarray(got)
        assert got.dtype == w.dtype and np.array_equal(got.astype(np.float32), w.astype(np.float32), equal_nan=True)


def test_a_bfloat16_gpu_array_is_not_shared_under_another_dtype():
    x = omnistage.device_put(np.array([1.0, 2.5], BF16), "gpu")
    assert not hasattr(x, "__cuda_array_interface__")
    with pytest.raises(AttributeError, match="bitcast_convert_type"):
        x.__cuda_array_interface__  # noqa: B018
    with pytest.raises(AttributeError, match="no bfloat16 type"):
        x.__dlpack__()
    bits = omnistage.jit(lambda v: lax.bitcast_convert_type(v, jnp.uint16), backend="cuda")(x)
    assert bits.dtype == np.uint16 and bits._value.shared_data() is bits._value.data  # its bits can be shared
    assert np.asarray(bits).tobytes() == np.array([1.0, 2.5], BF16).tobytes()


def _gpu_nans(a):
    """float16 `a` with every NaN as 0x7FFF: what a GPU's arithmetic makes of any NaN (IEEE
    leaves the payload open; the CPU keeps the operand's, NVIDIA's cores give one canonical NaN)."""
    bits = a.view(np.uint16).copy()
    bits[np.isnan(a)] = 0x7FFF
    return bits.view(np.float16)


@pytest.mark.parametrize("f, x, want", WIDTH_CHANGING_BITCASTS)
def test_width_changing_bitcasts_of_narrow_floats_have_kernels(f, x, want):
    assert "runs on the host" not in _source(f, x) and "host_call" not in _source(f, x)
    (got,) = _cuda(f, x)
    assert got.dtype == want.dtype and got.shape == want.shape
    if f is WIDTH_CHANGING_BITCASTS[0][0] and not runtime.SIMULATED:  # x * 2 on a NaN, then its bits
        want = _gpu_nans(x * 2).view(np.float32).reshape(want.shape)
    assert got.tobytes() == want.tobytes()  # a bitcast alone keeps every bit, NaN payloads too


@pytest.mark.parametrize("dtype", [np.float16, "bfloat16"])
def test_bitcasts_to_and_from_16_bits_and_random_floats_have_kernels(dtype):
    dtype = np.dtype(dtype)
    bits = np.array([0, 1, 0x3C00, 0x7BFF, 0x7C00, 0x7C01, 0x7E00, 0x8000, 0xFC00, 0x03FF, 0xFFFF, 0x4049], np.uint16)
    f = lambda u: (lax.bitcast_convert_type(u, dtype), lax.bitcast_convert_type(lax.bitcast_convert_type(u, dtype), jnp.int16))  # noqa: E731
    assert "runs on the host" not in _source(f, bits)
    got = _cuda(f, bits)
    assert np.asarray(got[0]).view(np.uint16).tobytes() == bits.tobytes()
    assert np.asarray(got[1]).tobytes() == bits.view(np.int16).tobytes()
    key = omnistage.random.PRNGKey(3)
    g = lambda k: omnistage.random.uniform(k, (16,), dtype=dtype)  # noqa: E731
    assert "runs on the host" not in _source(g, key)
    np.testing.assert_array_equal(np.asarray(_cuda(g, key)[0]).astype(np.float32), np.asarray(_cpu(g, key)[0]).astype(np.float32))


_UNARY = [jnp.exp, jnp.tanh, jnp.sin, jnp.abs, lambda v: v * v, lambda v: 1 / (v + 3)]
_BINARY = [jnp.add, jnp.subtract, jnp.multiply, jnp.divide, jnp.minimum]


@settings(max_examples=6, deadline=None)
@given(dtype=st.sampled_from([F16, BF16]), unary=st.lists(st.sampled_from(_UNARY), min_size=1, max_size=2),
       binary=st.sampled_from(_BINARY), seed=st.integers(0, 2 ** 31 - 1), scale=st.sampled_from([1e-6, 1.0, 3e4]))
def test_random_elementwise_programs_equal_the_cpu_backend(dtype, unary, binary, seed, scale):
    rng = np.random.default_rng(seed)
    x, y = (rng.standard_normal((2, 3)) * scale).astype(dtype), (rng.standard_normal(3) * scale).astype(dtype)

    with np.errstate(all="ignore"):
        _exact(elementwise_chain(unary, binary), x, y)


_PTX = """
import numpy as np, ml_dtypes, omnistage.numpy as jnp
from numba import cuda
from tests.cuda.ptx_check import argument_types, kernels_of, toolkit_missing
if toolkit_missing():
    print("SKIP:", toolkit_missing()); raise SystemExit
for dt in (np.float16, ml_dtypes.bfloat16):
    x = np.array([0.1, 1.5], dt)
    f = lambda x: (jnp.tanh(x * 2 + 1) - jnp.exp(x / 7), x.sum(), x.astype(np.float64).astype(dt))
    ptx = [cuda.compile_ptx(k.py_func, argument_types(s), cc=(9, 0))[0] for _, k, s in kernels_of(f, (x,))]
    print(np.dtype(dt).name, len(ptx), sum("cvt.rn.f16.f" in p for p in ptx), sum("-65536" in p for p in ptx))
from omnistage import lax
for dt in (np.float16, ml_dtypes.bfloat16):  # same-width bitcasts: the bits helpers compile too
    u = np.array([1, 0x7C01], np.uint16)
    f = lambda u: lax.bitcast_convert_type(lax.bitcast_convert_type(u, dt) * 2, jnp.int16)
    ptx = [cuda.compile_ptx(k.py_func, argument_types(s), cc=(9, 0))[0] for _, k, s in kernels_of(f, (u,))]
    print("bits", len(ptx))
"""


def test_narrow_float_kernels_compile_to_ptx_for_sm90():
    result = _run(_PTX)
    out = result.stdout.strip()
    if out.startswith("SKIP:"):
        pytest.skip(out[len("SKIP: "):])
    assert result.returncode == 0, out + result.stderr[-3000:]
    f16, bf16, *bits = (line.split() for line in out.splitlines())
    assert [b[0] for b in bits] == ["bits", "bits"] and all(int(b[1]) >= 1 for b in bits)
    assert f16[0] == "float16" and int(f16[2]) >= 2 and int(f16[3]) == 0  # the hardware conversion
    assert bf16[0] == "bfloat16" and int(bf16[2]) == 0 and int(bf16[3]) >= 2  # the bit rounding
