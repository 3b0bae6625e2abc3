"""float16/bfloat16 compiled by Numba (codegen/narrow_floats.py): the rounding helpers against
NumPy/ml_dtypes on every float16 and a dense float32/float64 sample, vectorized loops, and jitted
programs equal to the eager path (exactly for elementwise operations)."""
import platform
import re

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import omnistage
import omnistage.numpy as jnp
from omnistage import lax
from omnistage.codegen import support

ml_dtypes = pytest.importorskip("ml_dtypes")
BF16 = np.dtype(ml_dtypes.bfloat16)
F16 = np.dtype(np.float16)


# --- the rounding helpers -----------------------------------------------------------------------


@numba.njit(error_model="numpy")
def _to_f16(x, out):
    for i in range(x.size):
        out[i] = support.round_to_float16(x[i])


@numba.njit(error_model="numpy")
def _to_bf16(x, out):
    for i in range(x.size):
        out[i] = support.round_to_bfloat16(x[i])


def _same_values(got, want):
    same = (got.view(np.uint32) == want.view(np.uint32)) | (np.isnan(got) & np.isnan(want))
    assert same.all(), (np.flatnonzero(~same)[:5], got[~same][:5], want[~same][:5])


def _finite_halves():
    h = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    return np.unique(h[np.isfinite(h)].astype(np.float64))


def _sample(dtype):
    """Random bit patterns, values at every scale, midpoints between neighbouring halves (ties),
    their float neighbours, and the overflow threshold."""
    rng = np.random.default_rng(0)
    halves = _finite_halves()
    ties = (halves[:-1] + halves[1:]) / 2
    width = np.dtype(dtype).itemsize * 8
    bits = rng.integers(0, 2 ** width, 1 << 20, dtype=np.uint64).astype(f"uint{width}").view(dtype)
    scaled = (rng.standard_normal(1 << 18) * 10.0 ** rng.integers(-10, 7, 1 << 18)).astype(dtype)
    ties = ties.astype(dtype)
    edges = np.array([65504, 65519.996, 65520, 65536, 1e-8, 2.98e-8, 2.9802322e-8, 5.96e-8, -0.0, np.inf,
                      -np.inf, np.nan, 3.4e38, 1e-45], dtype)
    return np.concatenate([bits, scaled, ties, np.nextafter(ties, dtype(np.inf)),
                           np.nextafter(ties, dtype(-np.inf)), edges])


def test_every_float16_is_kept():
    h = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16).astype(np.float32)
    out = np.empty_like(h)
    _to_f16(h, out)
    _same_values(out, h)


# (rounding kernel, the cast it must equal): NumPy's float16 cast rounds once from float64;
# ml_dtypes' bfloat16 cast goes through float32
ROUNDINGS = {
    "float16": (lambda x, out: _to_f16(x, out), lambda x: x.astype(np.float16)),
    "bfloat16": (lambda x, out: _to_bf16(x, out), lambda x: x.astype(np.float32).astype(BF16)),
}


@pytest.mark.parametrize("narrow", sorted(ROUNDINGS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rounding_to_narrow_floats_equals_the_reference_cast(dtype, narrow):
    rounding, cast = ROUNDINGS[narrow]
    x = _sample(dtype)
    with np.errstate(all="ignore"):
        want = cast(x).astype(np.float32)
    out = np.empty(x.size, np.float32)
    rounding(x, out)
    _same_values(out, want)


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="inspects x86-64 assembly")
@pytest.mark.parametrize("loop", [_to_f16, _to_bf16])
def test_rounding_loops_are_vectorized(loop):
    sig = (numba.types.float32[::1], numba.types.float32[::1])
    loop.compile(sig)
    asm = loop.inspect_asm(sig)
    if not re.search(r"%[yz]mm", asm):
        pytest.skip("this CPU/LLVM target has no 256-bit vectors")
    assert re.search(r"\bv(pand|pandd|andps|pblendvb|blendvps|paddd)\b[^\n]*%[yz]mm", asm), "no packed integer/blend work"


def test_float16_boundary_conversions_equal_numpys_casts_bit_for_bit():
    h = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    want = h.view(np.float16).astype(np.float32)
    assert np.array_equal(support.float16_bits_to_float32(h).view(np.uint32), want.view(np.uint32))
    assert np.array_equal(support.float32_to_float16_bits(want), want.astype(np.float16).view(np.uint16))
    nans = np.array([0x7FC00000, 0xFF800001, 0x7F800100, 0x7FFFFFFF], np.uint32).view(np.float32)
    assert np.isnan(support.float32_to_float16_bits(nans).view(np.float16)).all()


def test_big_float16_arrays_cross_the_boundary_exactly():
    from omnistage.codegen import executable

    rng = np.random.default_rng(5)
    bits = rng.integers(0, 1 << 16, (3, executable._FAST_FLOAT16_SIZE), dtype=np.uint32).astype(np.uint16)
    x = bits.view(np.float16)[:, ::2]  # every bit pattern kind, strided
    with np.errstate(all="ignore"):
        _exact(lambda x: (x, x * 3 - 1, jnp.exp(x).T), x)


# --- jitted programs ----------------------------------------------------------------------------


def _run_both(f, *args):
    compiled = omnistage.jit(f, backend="cpu").lower(*args).compile()
    assert type(compiled.executable).__name__ == "NumbaProgram", compiled.as_text()[:300]
    got = omnistage.tree_util.tree_leaves(compiled(*args))
    want = omnistage.tree_util.tree_leaves(omnistage.jit(f, backend="interpreter")(*args))
    return compiled, [np.asarray(g) for g in got], [np.asarray(w) for w in want]


def _exact(f, *args):
    compiled, got, want = _run_both(f, *args)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == g.shape
        assert g.tobytes() == w.tobytes() or np.array_equal(g, w, equal_nan=True), (g, w, compiled.as_text())
    return compiled


def _close(f, *args, rtol):
    _, got, want = _run_both(f, *args)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=rtol, atol=rtol)


SPECIAL = [0.0, -0.0, 1.0, -1.5, 65504.0, -65504.0, 6e-8, 1e-5, np.inf, -np.inf, np.nan, 300.0, 0.1]


@pytest.mark.parametrize("dtype", [F16, BF16], ids=["float16", "bfloat16"])
def test_elementwise_chain_equals_eager_exactly_and_is_compiled(dtype):
    x = np.array(SPECIAL + list(np.linspace(-20, 20, 37)), dtype)

    def f(x):
        y = jnp.tanh(x * 2 + 1) - jnp.exp(x / 7) + jnp.log1p(jnp.abs(x))
        return y, jnp.where(x > 0, jnp.sqrt(jnp.abs(x)), x * x), x.astype(jnp.float32) * 3, -x, jnp.maximum(x, 0.5)

    src = _exact(f, x).as_text()
    assert f"_rt.round_to_{dtype.name}(" in src


@pytest.mark.parametrize("dtype", [F16, BF16], ids=["float16", "bfloat16"])
def test_casts_to_and_from_narrow_floats(dtype):
    x64 = np.array(SPECIAL + [1 / 3, 2049.0, 65519.99, 65520.0, 70000.0, 1e-7, 3e-8], np.float64)
    ints = np.array([0, 1, -7, 2049, 70000, -(2 ** 31)], np.int32)
    narrow = x64.astype(dtype)
    _exact(lambda a, i, n: (a.astype(dtype), a.astype(np.float32).astype(dtype), i.astype(dtype), n.astype(np.float32),
                            n.astype(np.float64), (n > 1).astype(dtype)), x64, ints, narrow)
    other = F16 if dtype == BF16 else BF16
    _exact(lambda n: n.astype(other), narrow[np.isfinite(narrow.astype(np.float32))])


def test_narrow_to_integer_conversion():
    x = np.array([0.0, 1.5, -2.5, 100.25, -300.0], np.float16)
    _exact(lambda x: (x.astype(np.int32), x.astype(np.uint8), jnp.round(x)), x)


@pytest.mark.parametrize("dtype", [F16, BF16], ids=["float16", "bfloat16"])
def test_reductions_contractions_and_broadcasting(dtype):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((6, 5)).astype(dtype)
    b = rng.standard_normal((5, 4)).astype(dtype)
    rtol = 2e-3 if dtype == F16 else 2e-2
    _close(lambda a, b: (a.sum(0), a.mean(1), a @ b, a - a.max(1, keepdims=True), jnp.argmax(a, 1),
                         jnp.cumsum(a, 1), jnp.sort(a, 0)), a, b, rtol=rtol)


def test_scalars_constants_and_mixed_dtypes():
    c = np.array([0.5, 1.25, -3.0], np.float16)
    _exact(lambda s, x: (s * x + jnp.asarray(c), s, x.astype(jnp.float32) + s.astype(jnp.float32)),
           np.float16(1.5), np.array([1.0, 2.0, 3.0], np.float16))


def test_control_flow_with_a_narrow_carry():
    x = np.linspace(0.1, 1, 8).astype(np.float16)
    _exact(lambda x: lax.fori_loop(0, 5, lambda i, v: v * jnp.float16(1.1) + jnp.sin(v), x), x)
    _exact(lambda x: lax.cond(x.sum() > 1, lambda v: v / 3, lambda v: v * 3, x), x)


def test_grad_and_vmap_of_a_float16_function():
    x = np.linspace(-1, 1, 6).astype(np.float16)
    f = lambda x: jnp.sum(jnp.tanh(x) * x)  # noqa: E731
    _exact(omnistage.grad(f), x)
    _exact(omnistage.vmap(lambda v: v * jnp.exp(v)), x.reshape(2, 3))


_F16_PAIRS = np.array([[1.0, -2.0], [np.inf, 0.5], [np.nan, -0.0], [6e-8, 65504]], np.float16)
_WORDS = np.array([1.5, -3.0, np.inf, 1e-40], np.float32)


def _bits(a):
    return np.ascontiguousarray(a).view(np.uint8).tobytes()


# (function, argument, what NumPy's views give): every pair of widths, both directions
WIDTH_CHANGING_BITCASTS = [
    (lambda x: lax.bitcast_convert_type(x * 2, np.float32), _F16_PAIRS, (_F16_PAIRS * 2).view(np.float32).reshape(4)),
    (lambda x: lax.bitcast_convert_type(x, np.uint32), _F16_PAIRS.astype(BF16), _F16_PAIRS.astype(BF16).view(np.uint32).reshape(4)),
    (lambda x: lax.bitcast_convert_type(x, np.uint8), _F16_PAIRS, _F16_PAIRS.view(np.uint8).reshape(4, 2, 2)),
    (lambda x: lax.bitcast_convert_type(x, BF16), _F16_PAIRS, _F16_PAIRS.view(BF16)),
    (lambda y: lax.bitcast_convert_type(y + 1, np.float16), _WORDS, (_WORDS + 1).view(np.float16).reshape(4, 2)),
    (lambda y: lax.bitcast_convert_type(y, BF16), _WORDS.view(np.int32), _WORDS.view(BF16).reshape(4, 2)),
    (lambda b: lax.bitcast_convert_type(b, np.float16) * 1, np.arange(8, dtype=np.uint8).reshape(4, 2),
     np.arange(8, dtype=np.uint8).view(np.float16).reshape(4)),
]


@pytest.mark.parametrize("f, x, want", WIDTH_CHANGING_BITCASTS)
def test_width_changing_bitcasts_of_narrow_floats_are_compiled_and_exact(f, x, want):
    compiled = omnistage.jit(f, backend="cpu").lower(x).compile()
    assert type(compiled.executable).__name__ == "NumbaProgram"
    got = np.asarray(compiled(x))
    assert got.dtype == want.dtype and got.shape == want.shape
    assert _bits(got) == _bits(want) or np.array_equal(got, want, equal_nan=True), (got, want)
    assert _bits(omnistage.jit(f, backend="interpreter")(x)) == _bits(got) or np.array_equal(got, want, equal_nan=True)


@pytest.mark.parametrize("dtype", [F16, BF16], ids=["float16", "bfloat16"])
def test_complex_to_narrow_conversions_round_the_real_part_once(dtype):
    z = np.array([1 + 2j, 1 / 3 - 1j, 65519.99 + 0j, np.nan + 1j, 1e-8 - 5j], np.complex64)
    f = lambda z: (lax.convert_element_type(z, dtype), lax.convert_element_type(z * 2, dtype))  # noqa: E731
    compiled = omnistage.jit(f, backend="cpu").lower(z).compile()
    assert type(compiled.executable).__name__ == "NumbaProgram"
    with np.errstate(all="ignore"):
        for got, want in zip(compiled(z), (z.real.astype(dtype), (z * 2).real.astype(dtype))):
            assert np.asarray(got).dtype == dtype
            np.testing.assert_array_equal(np.asarray(got).astype(np.float32), want.astype(np.float32))


@pytest.mark.parametrize("dtype", [F16, BF16], ids=["float16", "bfloat16"])
def test_bitcasts_to_and_from_16_bits_are_compiled_and_exact_for_every_pattern(dtype):
    bits = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    for f, x, want in [(lambda u: lax.bitcast_convert_type(u, dtype), bits, bits.view(dtype)),
                       (lambda u: lax.bitcast_convert_type(u, dtype), bits.view(np.int16), bits.view(dtype)),
                       (lambda x: lax.bitcast_convert_type(x, np.uint16), bits.view(dtype), bits),
                       (lambda x: lax.bitcast_convert_type(x, np.int16), bits.view(dtype), bits.view(np.int16))]:
        compiled = omnistage.jit(f, backend="cpu").lower(x).compile()
        assert type(compiled.executable).__name__ == "NumbaProgram"
        got = np.asarray(compiled(x))
        assert got.dtype == want.dtype and got.view(np.uint16).tobytes() == want.view(np.uint16).tobytes()


@pytest.mark.parametrize("dtype", [F16, BF16], ids=["float16", "bfloat16"])
def test_random_floats_of_a_narrow_dtype_are_compiled(dtype):
    key = omnistage.random.PRNGKey(7)
    _exact(lambda k: (omnistage.random.uniform(k, (64,), dtype=dtype), omnistage.random.normal(k, (3, 5), dtype=dtype)),
           key)


def elementwise_chain(unary, binary):
    """f(x, y): the unary functions applied to x in turn, then binary(x, y) (also the CUDA tests')."""
    def f(x, y):
        for u in unary:
            x = u(x)
        return binary(x, y)

    return f


_UNARY = [jnp.exp, jnp.tanh, jnp.sin, jnp.log1p, jnp.abs, jnp.floor, lambda v: v * v, lambda v: 1 / (v + 3)]
_BINARY = [jnp.add, jnp.subtract, jnp.multiply, jnp.divide, jnp.maximum, jnp.minimum, lambda a, b: a ** 2 - b]


@settings(max_examples=20, deadline=None)
@given(dtype=st.sampled_from([F16, BF16]), shape=st.sampled_from([(7,), (3, 4), (2, 1, 5)]),
       unary=st.lists(st.sampled_from(_UNARY), min_size=1, max_size=3), binary=st.sampled_from(_BINARY),
       broadcast=st.booleans(), seed=st.integers(0, 2 ** 31 - 1), scale=st.sampled_from([1e-6, 1.0, 300.0, 3e4]))
def test_random_elementwise_programs_equal_eager_exactly(dtype, shape, unary, binary, broadcast, seed, scale):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * scale).astype(dtype)
    y = (rng.standard_normal(shape[-1:] if broadcast else shape) * scale).astype(dtype)

    with np.errstate(all="ignore"):
        _exact(elementwise_chain(unary, binary), x, y)


def test_a_numba_compile_error_falls_back_with_the_callers_narrow_arrays(monkeypatch):
    from omnistage.codegen import scalar_rules

    monkeypatch.setitem(scalar_rules.RULES, "cosh", lambda ctx, a: f"{a} + 'oops'")
    x = np.array([0.5, 1.0], np.float16)
    with pytest.warns(RuntimeWarning, match="running it with the NumPy interpreter"):
        out = omnistage.jit(lambda x: jnp.cosh(x) * 2)(x)
    assert np.asarray(out).dtype == np.float16
    np.testing.assert_array_equal(np.asarray(out), (np.cosh(x) * np.float16(2)).astype(np.float16))
