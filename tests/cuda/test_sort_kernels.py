"""The CUDA sort kernels and width-changing bitcasts under Numba's CUDA simulator: they stay on
the device (no host round trip in the generated source, no copy back while running), sorts
give NumPy's stable order bit for bit (NaNs last, -0.0 and 0.0 in their input order), and
random shapes, axes, dtypes and key counts agree with the CPU backend.

The simulator runs every thread as Python: shapes are tiny and examples few."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import omnistage
import omnistage.numpy as jnp
from omnistage import lax
from omnistage.codegen.cuda import runtime
from omnistage.core.array import GpuArray

from .programs_sort import PROGRAMS

pytestmark = pytest.mark.skipif(not runtime.is_usable(), reason="neither a GPU nor Numba's CUDA simulator is usable")


def _source(fun, *args):
    return omnistage.jit(fun, backend="cuda").lower(*args).compile().as_text()


def _bits(a):
    """An array's exact contents (NaN payloads and the sign of zero included)."""
    a = np.ascontiguousarray(a)
    return a.dtype.str, a.shape, a.tobytes()


def _cuda(fun, *args):
    outs = omnistage.jit(fun, backend="cuda")(*args)
    leaves = omnistage.tree_util.tree_leaves(outs)
    assert all(isinstance(o, GpuArray) for o in leaves)
    return [np.asarray(o) for o in leaves]


def _cpu(fun, *args):
    return [np.asarray(o) for o in omnistage.tree_util.tree_leaves(omnistage.jit(fun, backend="cpu")(*args))]


# --- no host round trip --------------------------------------------------------------------------


@pytest.mark.parametrize("name,fun,make_args", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_generated_source_has_no_host_round_trip(name, fun, make_args):
    text = _source(fun, *make_args())
    assert "runs on the host" not in text and "host_call" not in text
    assert "atomic" not in text and "cuda.shared" not in text
    if "sort" in name:
        assert "_merge[" in text and "_gather[" in text
    else:
        assert "_cu.bitcast(" in text


def test_nothing_is_copied_back_while_sorting(count_host_copies):
    x = omnistage.device_put(np.random.default_rng(1).standard_normal((3, 9)).astype(np.float32), "gpu")
    f = omnistage.jit(lambda v: (jnp.sort(v, axis=1), jnp.argsort(v, axis=0),
                                 lax.bitcast_convert_type(v, jnp.uint8)), backend="cuda")
    f(x)  # compiled before counting
    copies = count_host_copies()
    outs = f(x)
    assert copies == [] and all(isinstance(o, GpuArray) for o in outs)


# --- NumPy's order ------------------------------------------------------------------------------


def _specials(shape, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(-2, 3, shape).astype(np.float32)  # ties everywhere
    pick = rng.random(shape)
    x[pick < 0.15] = np.nan
    x[(pick >= 0.15) & (pick < 0.2)] = -np.nan
    x[(pick >= 0.2) & (pick < 0.35)] = -0.0
    x[(pick >= 0.35) & (pick < 0.45)] = np.inf
    return x


@pytest.mark.parametrize("shape", [(13,), (1,), (2,), (4, 9), (3, 1, 5)])
def test_sort_and_argsort_equal_numpy_stable_sort_bit_for_bit(shape):
    x = _specials(shape, seed=len(shape))
    for axis in range(len(shape)):
        got_sorted, got_order = _cuda(lambda v: (jnp.sort(v, axis=axis), jnp.argsort(v, axis=axis)), x)
        assert _bits(got_sorted) == _bits(np.sort(x, axis=axis, kind="stable"))
        np.testing.assert_array_equal(got_order, np.argsort(x, axis=axis, kind="stable"))


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "complex64"])
def test_keys_of_every_32_bit_dtype_sort_as_numpy(dtype):
    rng = np.random.default_rng(4)
    if dtype == "bool":
        x = rng.random(11) < 0.5
    elif dtype == "complex64":
        x = (rng.integers(-1, 2, 11) + 1j * rng.integers(-1, 2, 11)).astype(np.complex64)
        x[[2, 7]] = complex(np.nan, 0.0), complex(0.0, np.nan)
    else:
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max, 11, dtype=dtype, endpoint=True)
        x[[3, 8]] = info.min, info.max
    got_sorted, got_order = _cuda(lambda v: (jnp.sort(v), jnp.argsort(v)), x)
    _assert_numpy_order(x, got_sorted, got_order)


def _assert_numpy_order(x, got_sorted, got_order):
    """NumPy's stable order, except for complex NaNs, which NumPy sends to the end while
    lax orders by (real, imag), each part with NaNs last: a stable lexsort of the parts."""
    order = np.lexsort((x.imag, x.real)) if x.dtype.kind == "c" else np.argsort(x, kind="stable")
    assert _bits(got_sorted) == _bits(x[order])
    np.testing.assert_array_equal(got_order, order)


@pytest.mark.parametrize("dtype", ["int64", "uint64", "float64", "complex128"])
def test_keys_of_64_bit_dtypes_sort_as_numpy(x64, dtype):
    rng = np.random.default_rng(6)
    x = rng.integers(-3, 4, 10).astype(dtype)
    if dtype == "uint64":
        x[4] = np.iinfo(np.uint64).max
    if dtype in ("float64", "complex128"):
        x[[1, 5]] = np.nan
        x[[2, 6]] = -0.0
    got_sorted, got_order = _cuda(lambda v: (jnp.sort(v), jnp.argsort(v)), x)
    _assert_numpy_order(x, got_sorted, got_order)


def test_two_keys_order_lexicographically_and_stably():
    a = np.array([1, 0, 1, 0, 1, 0, 1], np.int32)
    b = np.array([np.nan, 2.0, -0.0, 2.0, 0.0, np.nan, -1.0], np.float32)
    v = np.arange(7, dtype=np.int32)
    got = _cuda(lambda *o: lax.sort(o, dimension=0, num_keys=2), a, b, v)
    order = np.lexsort((b, a))  # lexsort is stable; its last key is the primary one
    for g, want in zip(got, (a[order], b[order], v[order])):
        assert _bits(g) == _bits(want)


def test_empty_operands():
    for shape, axis in (((0, 3), 0), ((0, 3), 1), ((2, 0), 1)):
        x = np.zeros(shape, np.float32)
        got_sorted, got_order = _cuda(lambda v: (jnp.sort(v, axis=axis), jnp.argsort(v, axis=axis)), x)
        assert got_sorted.shape == shape and got_order.shape == shape


# --- against the CPU backend, at random ----------------------------------------------------------


_DTYPES = ("float32", "int32", "bool", "uint8", "complex64")


@st.composite
def _sort_cases(draw):
    shape = tuple(draw(st.lists(st.integers(0, 5), min_size=1, max_size=3)))
    axis = draw(st.integers(0, len(shape) - 1))
    dtypes = draw(st.lists(st.sampled_from(_DTYPES), min_size=1, max_size=3))
    num_keys = draw(st.integers(1, len(dtypes)))
    seed = draw(st.integers(0, 2**16))
    return shape, axis, dtypes, num_keys, seed


def _operand(shape, dtype, rng):
    small = rng.integers(-2, 3, shape)  # few distinct values: ties, which stability orders
    if dtype == "bool":
        return small > 0
    if dtype == "uint8":
        return small.astype(np.uint8)
    x = small.astype(dtype)
    if dtype in ("float32", "complex64"):
        special = rng.random(shape)
        x[special < 0.2] = np.nan
        x[(special >= 0.2) & (special < 0.35)] = -0.0
    if dtype == "complex64":
        x = x + 1j * rng.integers(-1, 2, shape).astype(np.float32)
    return x


@settings(max_examples=15, deadline=None, derandomize=True)
@given(_sort_cases())
def test_random_sorts_agree_with_the_cpu_backend(case):
    shape, axis, dtypes, num_keys, seed = case
    rng = np.random.default_rng(seed)
    operands = [_operand(shape, dt, rng) for dt in dtypes]
    f = lambda *o: lax.sort(o, dimension=axis, num_keys=num_keys)  # noqa: E731
    got, want = _cuda(f, *operands), _cpu(f, *operands)
    assert [_bits(g) for g in got] == [_bits(w) for w in want]


# --- width-changing bitcasts ------------------------------------------------------------------


@pytest.mark.parametrize("src,dst,shape", [
    ("float32", "uint8", (2, 3)), ("uint8", "float32", (2, 3, 4)), ("float32", "int16", (5,)),
    ("int16", "float32", (3, 2)), ("float32", "uint8", ()), ("uint8", "float32", (4,)),
    ("complex64", "float32", (2,)), ("float32", "uint8", (0, 3)),
])
def test_width_changing_bitcasts_equal_numpy_views(src, dst, shape):
    raw = np.random.default_rng(2).integers(0, 256, int(np.prod(shape)) * np.dtype(src).itemsize, dtype=np.uint8)
    x = raw.view(src).reshape(shape)
    (got,) = _cuda(lambda v: lax.bitcast_convert_type(v, dst), x)
    wide, narrow = np.dtype(src).itemsize, np.dtype(dst).itemsize
    # lax: a narrower type adds a trailing axis of the width ratio, a wider one removes it
    expected_shape = shape + (wide // narrow,) if wide > narrow else shape[:-1]
    assert _bits(got) == _bits(raw.view(dst).reshape(expected_shape))


def test_bitcast_of_a_strided_device_array():
    from numba import cuda

    host = np.arange(24, dtype=np.float32).reshape(4, 6)
    strided = omnistage.device_put(cuda.to_device(host)[:, ::2], "gpu")
    (got,) = _cuda(lambda v: lax.bitcast_convert_type(v, jnp.uint16), strided)
    assert _bits(got) == _bits(np.ascontiguousarray(host[:, ::2]).view(np.uint16).reshape(4, 3, 2))
