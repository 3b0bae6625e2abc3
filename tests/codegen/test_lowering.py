"""Differential tests of the Numba lowerings: every primitive of the registry (control flow
aside) compiles to Numba, and the compiled program equals the NumPy interpreter (exactly
for integers and booleans, to tolerance for floats, NaNs in the same places, same dtypes and
shapes), on several dtypes and shapes (0-d, size 0, odd sizes).

Programs group several primitives each, because Numba compiles every program (about 0.1 to
1 s); each group is small enough that a failure still names the primitive.
"""
import numpy as np
import pytest

import omnistage
import omnistage.numpy as jnp
from omnistage import lax
from omnistage.codegen import emit_cpu, index_maps, scalar_rules
from omnistage.core import tree_util
from omnistage.core.primitive import registry

CONTROL_FLOW = {"cond", "while_loop", "scan"}  # lowered by the control-flow code generator
SEEN = set()  # primitives that reached the Numba backend in a differential test of this file

TOLERANCE = {  # (rtol, atol) by result dtype
    "float32": (1e-5, 1e-6), "complex64": (1e-5, 1e-6),
    "float64": (1e-12, 1e-14), "complex128": (1e-12, 1e-14),
}


def _leaves(tree):
    return [np.asarray(v) for v in tree_util.tree_leaves(tree)]


def assert_matches(got, want, tol=None):
    got, want = _leaves(got), _leaves(want)
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype, f"output {k}: dtype {g.dtype} != interpreter's {w.dtype}"
        assert g.shape == w.shape, f"output {k}: shape {g.shape} != interpreter's {w.shape}"
        if g.dtype.kind in "biu":
            np.testing.assert_array_equal(g, w, err_msg=f"output {k}")
        else:
            rtol, atol = tol or TOLERANCE[g.dtype.name]
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True, err_msg=f"output {k}")


def check(f, *args, tol=None, compare=True):
    """jit(f) on the Numba backend equals jit(f) on the interpreter; the compiled program is
    really Numba. Returns (numba result, interpreter result)."""
    cpu = omnistage.jit(f, backend="cpu")
    compiled = cpu.lower(*args).compile()
    text = compiled.as_text()
    assert "numba.njit" in text and "interpreted by NumPy" not in text, text[:400]
    SEEN.update(e.prim for e in compiled.program.eqns())
    got = cpu(*args)
    want = omnistage.jit(f, backend="interpreter")(*args)
    if compare:
        assert_matches(got, want, tol)
    return got, want


RNG = np.random.default_rng(1234)
FLOAT_SPECIALS = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5]


def floats(shape, dtype="float32", scale=3.0, specials=True):
    x = (RNG.standard_normal(shape) * scale).astype(dtype)
    if specials and x.size:
        flat = x.reshape(-1)
        k = min(len(FLOAT_SPECIALS), flat.size // 2)
        flat[RNG.choice(flat.size, k, replace=False)] = FLOAT_SPECIALS[:k]
    return x


def complexes(shape, dtype="complex64", scale=2.0):
    re = RNG.standard_normal(shape) * scale
    im = RNG.standard_normal(shape) * scale
    return (re + 1j * im).astype(dtype)


def ints(shape, dtype="int32", lo=-50, hi=50):
    return RNG.integers(lo, hi, shape).astype(dtype)


def bools(shape):
    return RNG.random(shape) < 0.5


SHAPES = [(), (0,), (7,), (3, 5)]


# --- every primitive has a lowering ---------------------------------------------------------


def _has_lowering(prim):
    return (
        prim in scalar_rules.RULES or prim in index_maps.INDEX_MAPS or prim == "iota"
        or prim in emit_cpu.REDUCTIONS or prim in ("argmax", "argmin") or prim in emit_cpu.OPAQUE_RULES
    )


def test_every_non_control_flow_primitive_has_a_numba_lowering():
    missing = sorted(p for p in registry if p not in CONTROL_FLOW and not _has_lowering(p))
    assert not missing, f"primitives without a Numba lowering: {missing}"


# --- elementwise: floating point ------------------------------------------------------------

FLOAT_UNARY = [
    lax.neg, lax.sign, lax.abs, lax.floor, lax.ceil, lax.round,
    lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN), lax.is_finite, lax.exp, lax.exp2,
    lax.log, lax.expm1, lax.log1p, lax.sqrt, lax.rsqrt, lax.cbrt, lax.tanh, lax.logistic, lax.sin,
    lax.cos, lax.tan, lax.asin, lax.acos, lax.atan, lax.sinh, lax.cosh, lax.asinh, lax.acosh,
    lax.atanh, lax.real, lax.imag, lax.conj, lambda x: lax.integer_pow(x, 3),
    lambda x: lax.integer_pow(x, -2), lambda x: lax.integer_pow(x, 0),
]


def _all_of(fns):
    return lambda *xs: tuple(fn(*xs) for fn in fns)


@pytest.mark.parametrize("shape", SHAPES)
def test_float32_unary_elementwise(shape):
    check(_all_of(FLOAT_UNARY), floats(shape))


def test_float64_unary_elementwise(x64):
    check(_all_of(FLOAT_UNARY), floats((4, 9), "float64"))


def test_round_half_away_from_zero_rounds_in_float32():
    # 0.49999997f + 0.5f rounds up to 1.0 in float32 (not in float64)
    x = np.array([0.49999997, -0.49999997, 2.5, -2.5, 0.5, 1.5], np.float32)
    check(lax.round, x)


FLOAT_BINARY = [
    lax.add, lax.sub, lax.mul, lax.div, lax.rem, lax.pow, lax.max, lax.min, lax.atan2,
    lax.nextafter, lax.eq, lax.ne, lax.lt, lax.le, lax.gt, lax.ge, lax.complex,
]


@pytest.mark.parametrize("shape", [(), (0,), (11,), (2, 3)])
def test_float32_binary_elementwise(shape):
    check(_all_of(FLOAT_BINARY), floats(shape), floats(shape))


def test_float64_binary_elementwise(x64):
    check(_all_of(FLOAT_BINARY), floats((5, 7), "float64"), floats((5, 7), "float64"))


def test_binary_elementwise_with_a_scalar_operand():
    check(lambda x, s: (lax.max(x, s), lax.div(s, x), lax.pow(x, s)), floats((6,)), np.float32(1.5))


def test_complex_keeps_infinite_and_nan_parts():
    re = np.array([np.inf, 1.0, np.nan, -np.inf], np.float32)
    im = np.array([1.0, np.inf, 2.0, np.nan], np.float32)
    got, _ = check(lax.complex, re, im)
    np.testing.assert_array_equal(np.asarray(got).real, re)


def test_fma_rounds_once():
    from omnistage.random._fma import fma

    a = (1 + RNG.random(64)).astype(np.float32)
    b = (1 + RNG.random(64)).astype(np.float32)
    c = -(a.astype(np.float64) * b).astype(np.float32)  # a*b + c is the product's rounding error
    got, want = check(fma, a, b, c, tol=(0, 0))
    assert np.count_nonzero(np.asarray(got)) > 0


def test_fma_float64_and_specials(x64):
    from omnistage.random._fma import fma

    a, b, c = floats((3, 5), "float64"), floats((3, 5), "float64"), floats((3, 5), "float64")
    check(fma, a, b, c)


COMPLEX_UNARY = [
    lax.neg, lax.sign, lax.abs, lax.exp, lax.log, lax.expm1, lax.log1p, lax.sqrt, lax.rsqrt,
    lax.tanh, lax.logistic, lax.sin, lax.cos, lax.tan, lax.asin, lax.acos, lax.atan, lax.sinh,
    lax.cosh, lax.asinh, lax.acosh, lax.atanh, lax.real, lax.imag, lax.conj, lax.exp2,
    lambda x: lax.integer_pow(x, 3), lambda x: lax.integer_pow(x, -1),
]
COMPLEX_BINARY = [lax.add, lax.sub, lax.mul, lax.div, lax.pow, lax.max, lax.min, lax.eq, lax.ne]


@pytest.mark.parametrize("shape", [(), (9,)])
def test_complex64_elementwise(shape):
    x, y = complexes(shape), complexes(shape)
    check(_all_of(COMPLEX_UNARY), x, tol=(2e-5, 1e-6))
    check(_all_of(COMPLEX_BINARY), x, y, tol=(2e-5, 1e-6))


def test_complex_max_min_are_lexicographic_and_propagate_nan():
    x = np.array([1 + 2j, 1 + 2j, complex(np.nan, 0), complex(1, np.nan), 3 + 0j], np.complex64)
    y = np.array([1 + 3j, 0 + 9j, 2 + 0j, 2 + 0j, complex(3, np.nan)], np.complex64)
    check(lambda a, b: (lax.max(a, b), lax.min(a, b), lax.max(b, a), lax.min(b, a)), x, y)


def test_complex128_elementwise(x64):
    check(_all_of(COMPLEX_UNARY + [lambda x: lax.div(x, x)]), complexes((7,), "complex128"))


# --- elementwise: integers and booleans -----------------------------------------------------

INT_BINARY = [
    lax.add, lax.sub, lax.mul, lax.div, lax.rem, lax.max, lax.min, lax.eq, lax.ne, lax.lt, lax.le,
    lax.gt, lax.ge, lax.bitwise_and, lax.bitwise_or, lax.bitwise_xor, lax.shift_left,
    lax.shift_right_arithmetic, lax.shift_right_logical,
]
INT_UNARY = [
    lax.neg, lax.sign, lax.abs, lax.bitwise_not, lax.population_count,
    lambda x: lax.integer_pow(x, 2), lambda x: lax.integer_pow(x, 5),
]


def _int_operands(dtype, shape):
    info = np.iinfo(dtype)
    x, y = ints(shape, dtype, max(info.min, -50), min(info.max, 50)), ints(shape, dtype, max(info.min, -9), 10)
    if x.size >= 6:  # division by zero, INT_MIN / -1, extreme values, shifts past the width
        x.reshape(-1)[:6] = [info.min, info.min, info.max, 7, info.min, 3]
        y.reshape(-1)[:6] = [0, -1 if info.min else 1, 0, 0, 1, info.bits]
    return x, y


@pytest.mark.parametrize("dtype", ["int32", "int8", "uint8", "uint32", "int16"])
def test_integer_elementwise_is_exact(dtype):
    x, y = _int_operands(dtype, (24,))
    check(_all_of(INT_BINARY), x, y)
    check(_all_of(INT_UNARY), x)


def test_int64_and_uint64_elementwise(x64):
    for dtype in ("int64", "uint64"):
        x, y = _int_operands(dtype, (3, 8))
        check(_all_of(INT_BINARY), x, y)
        check(_all_of(INT_UNARY), x)


def test_integer_division_follows_xla():
    x = np.array([7, -7, 7, -7, 5, -5, np.iinfo(np.int32).min, np.iinfo(np.int32).min], np.int32)
    y = np.array([2, 2, -2, -2, 0, 0, -1, 0], np.int32)
    got, _ = check(lambda a, b: (lax.div(a, b), lax.rem(a, b)), x, y)
    np.testing.assert_array_equal(got[0], [3, -3, -3, 3, -1, -1, np.iinfo(np.int32).min, -1])
    np.testing.assert_array_equal(got[1], [1, -1, 1, -1, 5, -5, 0, np.iinfo(np.int32).min])


def test_shifts_by_negative_and_oversized_counts():
    x = np.array([-8, 8, -1, 1, 12345, -12345], np.int32)
    s = np.array([-1, 32, 33, -5, 31, 40], np.int32)
    check(lambda a, b: (lax.shift_left(a, b), lax.shift_right_arithmetic(a, b), lax.shift_right_logical(a, b)), x, s)


@pytest.mark.parametrize("shape", [(), (0,), (13,)])
def test_boolean_elementwise(shape):
    fns = [lax.bitwise_and, lax.bitwise_or, lax.bitwise_xor, lambda a, b: lax.bitwise_not(a), lax.eq,
           lax.ne, lax.max, lax.min, lax.lt, lax.ge, lambda a, b: lax.select(a, a, b)]
    check(_all_of(fns), bools(shape), bools(shape))


def test_select_n_with_an_integer_which_clamps():
    which = np.array([0, 1, 2, -3, 7, 1, 0], np.int32)
    cases = [floats((7,)) for _ in range(3)]
    check(lambda w, a, b, c: (lax.select_n(w, a, b, c), lax.select_n(w, a)), which, *cases)
    check(lambda w, a, b: lax.select_n(w, a, b), np.int32(1), ints((3,)), ints((3,)))


CONVERSIONS = ["int8", "int32", "uint8", "uint32", "float32", "bool", "complex64"]


@pytest.mark.parametrize("src", ["float32", "int32", "bool", "complex64", "uint8"])
def test_convert_element_type(src):
    if src == "float32":
        x = np.array([np.nan, np.inf, -np.inf, 3e9, -3e9, 2.1e9, 255.7, -1.5, -0.7, 0.0, 2**31, 1e20], np.float32)
    elif src == "complex64":
        x = np.array([1 + 2j, 0 + 3j, -2.7 + 0j, complex(np.nan, 1), 0j, 1e10 + 0j], np.complex64)
    elif src == "bool":
        x = bools((9,))
    else:
        x = ints((9,), src, 0 if src == "uint8" else -300, 300)
    check(lambda v: tuple(lax.convert_element_type(v, dt) for dt in CONVERSIONS), x)


def test_float_to_int64_conversion_saturates(x64):
    x = np.array([np.nan, np.inf, -np.inf, 1e19, -1e19, 9.2e18, -7.5, 4e9], np.float64)
    check(lambda v: tuple(lax.convert_element_type(v, dt) for dt in ("int64", "uint64", "int32", "uint32", "int16")), x)
