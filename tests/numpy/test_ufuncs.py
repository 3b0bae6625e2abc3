"""jnp's elementwise functions against NumPy: values and dtypes (JAX's promotion rules) for
float32, float64, int32, bool and complex64 inputs, each run eagerly, under jit, from the printed
program and through the checked interpreter (`check_staged`)."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import omnistage
import omnistage.numpy as jnp
from omnistage import lax
from tests.helpers import check_staged

inf, nan = np.inf, np.nan

# --- inputs ------------------------------------------------------------------------------

_X = {
    "f": [-2.5, -1.5, -0.75, -0.0, 0.0, 0.3, 0.5, 1.5, 2.5, 7.25, inf, -inf, nan],
    "i": [-7, -3, -1, 0, 1, 2, 5, 100],
    "b": [True, False, True, True, False],
    "c": [1 + 2j, -0.5 + 0.25j, 0.3 - 1.2j, -2 - 0.5j, 0.75 + 0j, -1.5j],
}
_Y = {
    "f": [1.5, -2.0, 3.0, 0.5, -0.7, 2.0, 1.0, -1.25, 0.25, 4.0, 2.0, 3.0, 1.0],
    "i": [2, -2, 3, -5, 7, 1, -3, 9],
    "b": [True, True, False, True, False],
    "c": [0.5 - 1j, 2 + 0.5j, -1 + 1j, 0.25 + 0.25j, -1.5 - 2j, 3 + 0j],
}
_DTYPE = {"f": np.float32, "i": np.int32, "b": np.bool_, "c": np.complex64}


def _inputs(kind, which=_X, dtype=None, finite=False):
    """Test values of one kind; `finite` drops the positions where _X is infinite or NaN (in
    _X and _Y alike, so that pairs stay aligned)."""
    values = [v for v, x in zip(which[kind], _X[kind]) if not finite or np.isfinite(x)]
    return np.array(values, dtype or _DTYPE[kind])


# --- JAX's result-dtype rules (64-bit mode off unless the test turns it on) ---------------


def _default_float():
    return np.dtype(np.float64 if omnistage.config.read("jax_enable_x64") else np.float32)


def _inexact(dt):
    return np.dtype(dt) if np.dtype(dt).kind in "fc" else _default_float()


def _numeric(dt):
    return np.dtype(np.int32) if np.dtype(dt).kind == "b" else np.dtype(dt)


def _same(dt):
    return np.dtype(dt)


def _boolean(dt):
    return np.dtype(np.bool_)


def _real(dt):
    return np.dtype(np.float32 if np.dtype(dt) == np.complex64 else np.float64) if np.dtype(dt).kind == "c" else np.dtype(dt)


def _real_inexact(dt):
    return _real(_inexact(dt))


def _at_least_f64(dt):
    wide = np.complex128 if np.dtype(dt).kind == "c" else np.float64
    return omnistage.dtypes.canonicalize_dtype(wide)


def _uint8(dt):
    return np.dtype(np.uint8)


# The dtype NumPy computes in for the oracle: what JAX's promotion hands to lax.
_COMPUTE = {_inexact: _inexact, _numeric: _numeric, _same: _same, _boolean: _same, _real: _same,
            _real_inexact: _inexact, _at_least_f64: _at_least_f64, _uint8: _numeric}

# name: (NumPy oracle, input kinds jnp accepts (the others raise), result-dtype rule)
UNARY = {
    "negative": (np.negative, "fic", _same),
    "positive": (lambda x: x, "fibc", _same),  # NumPy rejects bool; JAX returns it
    "square": (np.square, "fibc", _numeric),
    "reciprocal": (np.reciprocal, "fibc", _inexact),
    "exp": (np.exp, "fibc", _inexact),
    "exp2": (np.exp2, "fibc", _inexact),
    "expm1": (np.expm1, "fibc", _inexact),
    "log": (np.log, "fibc", _inexact),
    "log1p": (np.log1p, "fibc", _inexact),
    "log2": (np.log2, "fibc", _inexact),
    "log10": (np.log10, "fibc", _inexact),
    "sqrt": (np.sqrt, "fibc", _inexact),
    "cbrt": (np.cbrt, "fib", _inexact),
    "sin": (np.sin, "fibc", _inexact),
    "cos": (np.cos, "fibc", _inexact),
    "tan": (np.tan, "fibc", _inexact),
    "arcsin": (np.arcsin, "fibc", _inexact),
    "asin": (np.arcsin, "fibc", _inexact),
    "arccos": (np.arccos, "fibc", _inexact),
    "acos": (np.arccos, "fibc", _inexact),
    "arctan": (np.arctan, "fibc", _inexact),
    "atan": (np.arctan, "fibc", _inexact),
    "sinh": (np.sinh, "fibc", _inexact),
    "cosh": (np.cosh, "fibc", _inexact),
    "tanh": (np.tanh, "fibc", _inexact),
    "arcsinh": (np.arcsinh, "fibc", _inexact),
    "asinh": (np.arcsinh, "fibc", _inexact),
    "arccosh": (np.arccosh, "fibc", _inexact),
    "acosh": (np.arccosh, "fibc", _inexact),
    "arctanh": (np.arctanh, "fibc", _inexact),
    "atanh": (np.arctanh, "fibc", _inexact),
    "deg2rad": (np.deg2rad, "fib", _inexact),
    "radians": (np.radians, "fib", _inexact),
    "rad2deg": (np.rad2deg, "fib", _inexact),
    "degrees": (np.degrees, "fib", _inexact),
    "sinc": (np.sinc, "fibc", _inexact),
    "floor": (np.floor, "fib", _same),
    "ceil": (np.ceil, "fib", _same),
    "trunc": (np.trunc, "fib", _same),
    "fix": (np.fix, "fib", _same),
    "rint": (np.rint, "fibc", _inexact),
    "round": (np.round, "fic", _same),
    "around": (np.round, "fic", _same),
    "absolute": (np.absolute, "fibc", _real),
    "abs": (np.abs, "fibc", _real),
    "fabs": (np.fabs, "fib", _inexact),
    "sign": (np.sign, "fic", _same),
    "signbit": (np.signbit, "fib", _boolean),
    "spacing": (np.spacing, "fib", _inexact),
    "isnan": (np.isnan, "fibc", _boolean),
    "isinf": (np.isinf, "fibc", _boolean),
    "isfinite": (np.isfinite, "fibc", _boolean),
    "isposinf": (np.isposinf, "fib", _boolean),
    "isneginf": (np.isneginf, "fib", _boolean),
    "iscomplex": (np.iscomplex, "fibc", _boolean),
    "isreal": (np.isreal, "fibc", _boolean),
    "conjugate": (np.conjugate, "fibc", _same),
    "conj": (np.conj, "fibc", _same),
    "real": (np.real, "fibc", _real),
    "imag": (np.imag, "fibc", _real),
    "angle": (np.angle, "fibc", _real_inexact),
    "nan_to_num": (np.nan_to_num, "fibc", _same),
    "logical_not": (np.logical_not, "fibc", _boolean),
    "invert": (np.invert, "ib", _same),
    "bitwise_not": (np.invert, "ib", _same),
    "bitwise_invert": (np.invert, "ib", _same),
    "bitwise_count": (np.bitwise_count, "ib", _uint8),
}

# name: (NumPy oracle, accepted kinds, result-dtype rule, second-operand transform)
_small_nonneg = lambda y: np.abs(y) % 5  # noqa: E731 - exponents and shift counts
_nonzero = lambda y: np.where(y == 0, 1, y)  # noqa: E731 - integer division by 0 is tested apart
BINARY = {
    "add": (np.add, "fibc", _same, None),
    "subtract": (np.subtract, "fic", _same, None),
    "multiply": (np.multiply, "fibc", _same, None),
    "true_divide": (np.true_divide, "fibc", _inexact, None),
    "divide": (np.divide, "fibc", _inexact, None),
    "floor_divide": (np.floor_divide, "fib", _numeric, _nonzero),
    "remainder": (np.remainder, "fib", _numeric, _nonzero),
    "mod": (np.mod, "fib", _numeric, _nonzero),
    "fmod": (np.fmod, "fib", _numeric, _nonzero),
    "power": (np.power, "fibc", _numeric, _small_nonneg),
    "pow": (np.power, "fibc", _numeric, _small_nonneg),
    "float_power": (np.float_power, "fibc", _at_least_f64, None),
    "maximum": (np.maximum, "fibc", _same, None),
    "minimum": (np.minimum, "fibc", _same, None),
    "fmax": (np.fmax, "fibc", _same, None),
    "fmin": (np.fmin, "fibc", _same, None),
    "arctan2": (np.arctan2, "fib", _inexact, None),
    "atan2": (np.arctan2, "fib", _inexact, None),
    "hypot": (np.hypot, "fib", _inexact, None),
    "copysign": (np.copysign, "fib", _inexact, None),
    "nextafter": (np.nextafter, "fib", _inexact, None),
    "logaddexp": (np.logaddexp, "fib", _inexact, None),
    "logaddexp2": (np.logaddexp2, "fib", _inexact, None),
    "heaviside": (np.heaviside, "fib", _inexact, None),
    "equal": (np.equal, "fibc", _boolean, None),
    "not_equal": (np.not_equal, "fibc", _boolean, None),
    "less": (np.less, "fibc", _boolean, None),
    "less_equal": (np.less_equal, "fibc", _boolean, None),
    "greater": (np.greater, "fibc", _boolean, None),
    "greater_equal": (np.greater_equal, "fibc", _boolean, None),
    "logical_and": (np.logical_and, "fibc", _boolean, None),
    "logical_or": (np.logical_or, "fibc", _boolean, None),
    "logical_xor": (np.logical_xor, "fibc", _boolean, None),
    "bitwise_and": (np.bitwise_and, "ib", _same, None),
    "bitwise_or": (np.bitwise_or, "ib", _same, None),
    "bitwise_xor": (np.bitwise_xor, "ib", _same, None),
    "left_shift": (np.left_shift, "ib", _numeric, _small_nonneg),
    "bitwise_left_shift": (np.left_shift, "ib", _numeric, _small_nonneg),
    "right_shift": (np.right_shift, "ib", _numeric, _small_nonneg),
    "bitwise_right_shift": (np.right_shift, "ib", _numeric, _small_nonneg),
}

# Where JAX's documented semantics and NumPy's differ, the oracle skips those inputs.
_FINITE_ONLY = {"heaviside"}  # JAX: heaviside(nan, x2) == x2, NumPy: nan


def _oracle(np_fn, rule, *xs):
    compute = _COMPUTE[rule]
    args = [x.astype(compute(x.dtype)) for x in xs]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = np.asarray(np_fn(*args))
    return out.astype(rule(xs[0].dtype))


def _assert_matches(got, want):
    got = np.asarray(got)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want)
    else:
        tol = 1e-5 if want.dtype in (np.float32, np.complex64) else 1e-12
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True)


def _cases(table):
    return [(name, kind) for name, spec in table.items() for kind in "fibc" if kind in spec[1]]


def _rejections(table):
    return [(name, kind) for name, spec in table.items() for kind in "fibc" if kind not in spec[1]]


@pytest.mark.parametrize("name,kind", _cases(UNARY))
def test_unary_matches_numpy_values_and_jax_dtypes(name, kind):
    np_fn, _, rule = UNARY[name]
    x = _inputs(kind)
    got = check_staged(getattr(jnp, name), x)
    _assert_matches(got, _oracle(np_fn, rule, x))


@pytest.mark.parametrize("name,kind", _cases(BINARY))
def test_binary_matches_numpy_values_and_jax_dtypes(name, kind):
    np_fn, _, rule, transform = BINARY[name]
    finite = name in _FINITE_ONLY
    x, y = _inputs(kind, finite=finite), _inputs(kind, _Y, finite=finite)
    if transform is not None:
        y = transform(y).astype(y.dtype)
    got = check_staged(getattr(jnp, name), x, y)
    _assert_matches(got, _oracle(np_fn, rule, x, y))


@pytest.mark.parametrize("name,kind", _rejections(UNARY))
def test_unary_rejects_dtypes_numpy_rejects(name, kind):
    with pytest.raises((TypeError, ValueError)):
        getattr(jnp, name)(_inputs(kind))


@pytest.mark.parametrize("name,kind", [c for c in _rejections(BINARY) if c != ("floor_divide", "c")])
def test_binary_rejects_dtypes_numpy_rejects(name, kind):
    with pytest.raises((TypeError, ValueError)):
        getattr(jnp, name)(_inputs(kind), _inputs(kind, _Y))


_F64_UNARY = [n for n, spec in UNARY.items() if "f" in spec[1]]
_F64_BINARY = [n for n, spec in BINARY.items() if "f" in spec[1]]


@pytest.mark.parametrize("name", _F64_UNARY)
def test_unary_float64_with_x64(x64, name):
    np_fn, _, rule = UNARY[name]
    x = _inputs("f", dtype=np.float64)
    got = check_staged(getattr(jnp, name), x, rtol=1e-12, atol=1e-12)
    _assert_matches(got, _oracle(np_fn, rule, x))


@pytest.mark.parametrize("name", _F64_BINARY)
def test_binary_float64_with_x64(x64, name):
    np_fn, _, rule, transform = BINARY[name]
    finite = name in _FINITE_ONLY
    x, y = _inputs("f", dtype=np.float64, finite=finite), _inputs("f", _Y, dtype=np.float64, finite=finite)
    if transform is not None:
        y = transform(y)
    got = check_staged(getattr(jnp, name), x, y, rtol=1e-12, atol=1e-12)
    _assert_matches(got, _oracle(np_fn, rule, x, y))


def test_complex128_functions_with_x64(x64):
    z = _inputs("c", dtype=np.complex128)
    for name in ("exp", "log", "sqrt", "sin", "arctanh", "log10", "sign", "abs", "rint"):
        got = check_staged(getattr(jnp, name), z, rtol=1e-12, atol=1e-12)
        _assert_matches(got, _oracle(UNARY[name][0], UNARY[name][2], z))


# --- division family ---------------------------------------------------------------------


def test_integer_floor_divide_and_remainder_follow_python_signs():
    x = np.array([7, -7, 7, -7, 6, -6, 0], np.int32)
    y = np.array([2, 2, -2, -2, 3, -3, -4], np.int32)
    np.testing.assert_array_equal(check_staged(jnp.floor_divide, x, y), x // y)
    np.testing.assert_array_equal(check_staged(jnp.remainder, x, y), x % y)
    np.testing.assert_array_equal(check_staged(jnp.fmod, x, y), np.fmod(x, y))


def test_integer_division_by_zero_as_jax():
    x = np.array([1, -1, 0, 5], np.int32)
    zero = np.zeros(4, np.int32)
    # XLA's truncating x / 0 is -1; floor_divide then subtracts 1 where the signs differ.
    np.testing.assert_array_equal(check_staged(jnp.floor_divide, x, zero), [-2, -2, -1, -2])
    np.testing.assert_array_equal(check_staged(jnp.remainder, x, zero), [0, 0, 0, 0])
    np.testing.assert_array_equal(check_staged(jnp.fmod, x, zero), [0, 0, 0, 0])
    u = np.array([3], np.uint32)
    np.testing.assert_array_equal(check_staged(jnp.floor_divide, u, np.zeros(1, np.uint32)), [2**32 - 1])


def test_float_division_by_zero():
    x = np.array([1.0, -1.0, 0.0], np.float32)
    np.testing.assert_array_equal(check_staged(jnp.true_divide, x, np.float32(0)), [inf, -inf, nan])
    assert np.isnan(np.asarray(check_staged(jnp.remainder, x, np.float32(0)))).all()


def test_divmod_matches_numpy_for_ints_and_floats():
    for x, y in [(_inputs("i"), _inputs("i", _Y)), (_inputs("f"), _inputs("f", _Y))]:
        q, r = check_staged(jnp.divmod, x, y)
        nq, nr = np.divmod(x, y)
        _assert_matches(q, nq)
        _assert_matches(r, nr)


def test_complex_floor_divide_floors_the_real_quotient():
    x = np.array([5 + 1j, -3 + 4j], np.complex64)
    y = np.array([2 + 0j, 1 + 1j], np.complex64)
    got = check_staged(jnp.floor_divide, x, y)
    assert got.dtype == np.complex64
    np.testing.assert_array_equal(got, np.floor((x / y).real).astype(np.complex64))


def test_power_with_static_and_traced_integer_exponents():
    x = np.array([-3, -1, 0, 2, 5], np.int32)
    _assert_matches(check_staged(lambda a: jnp.power(a, 3), x), x**3)
    _assert_matches(check_staged(jnp.power, x, np.array([0, 1, 2, 3, 4], np.int32)), x ** np.arange(5, dtype=np.int32))
    _assert_matches(check_staged(lambda a: a**-2, np.float32([2, 4])), np.float32([0.25, 0.0625]))
    _assert_matches(check_staged(lambda a: jnp.power(a, 2), np.array([True, False])), np.int32([1, 0]))


def test_float_power_is_float32_without_x64_and_float64_with(x64):
    got = check_staged(jnp.float_power, np.array([2, 3], np.int32), np.array([-1, 2], np.int32))
    _assert_matches(got, np.array([0.5, 9.0]))


# --- rounding ----------------------------------------------------------------------------


@pytest.mark.parametrize("decimals", [-2, -1, 0, 1, 2])
def test_round_decimals_matches_numpy(decimals):
    x = np.array([1234.5678, -0.125, 2.5, 3.5, -151.0, 0.0449], np.float32)
    _assert_matches(check_staged(lambda a: jnp.round(a, decimals), x), np.round(x, decimals))
    i = np.array([15, 25, -15, -25, 14, 1251, 0], np.int32)
    _assert_matches(check_staged(lambda a: jnp.round(a, decimals), i), np.round(i, decimals))


def test_round_of_complex_rounds_both_parts():
    z = np.array([1.25 + 2.75j, -0.5 - 1.5j], np.complex64)
    _assert_matches(check_staged(lambda a: jnp.around(a, 1), z), np.round(z, 1))


def test_round_rejects_traced_decimals():
    with pytest.raises(TypeError, match="decimals"):
        jnp.round(np.float32(1.5), 1.5)


def test_modf_and_frexp_match_numpy():
    x = np.array([-2.5, -0.0, 0.0, 0.75, 3.0, 1e-40, -5e-45, 3e38, inf, -inf, nan], np.float32)
    for fn, np_fn in ((jnp.modf, np.modf), (jnp.frexp, np.frexp)):
        got, want = check_staged(fn, x), np_fn(x)
        for g, w in zip(got, want):
            _assert_matches(g, w)
            np.testing.assert_array_equal(np.signbit(np.asarray(g)), np.signbit(w))


def test_frexp_float64_subnormals(x64):
    x = np.array([5e-324, 1e-310, -2.5, 1e308], np.float64)
    for g, w in zip(check_staged(jnp.frexp, x), np.frexp(x)):
        _assert_matches(g, w)


def test_ldexp_is_exact_across_the_range():
    x = np.array([1.0, 0.75, 3e-40, 1e30, -2.0, 1.5, 1.0, -0.0, inf, nan, 1.0], np.float32)
    n = np.array([3, -140, 50, 200, -1000, -149, 127, 5, -3, 2, 10**6], np.int32)
    with np.errstate(all="ignore"):
        want = np.ldexp(x, n)
    _assert_matches(check_staged(jnp.ldexp, x, n), want)
    _assert_matches(check_staged(jnp.ldexp, np.array([3, -1], np.int32), np.array([2, -1], np.int32)), np.float32([12, -0.5]))


def test_ldexp_rejects_float_exponents():
    with pytest.raises(ValueError, match="ldexp"):
        jnp.ldexp(np.float32(1), np.float32(2))


# --- predicates and comparisons ----------------------------------------------------------


def test_isclose_and_allclose_match_numpy():
    a = np.array([1.0, 1.0 + 1e-6, inf, -inf, nan, 1.0, 0.0], np.float32)
    b = np.array([1.0, 1.0, inf, inf, nan, 1.1, 1e-9], np.float32)
    for equal_nan in (False, True):
        _assert_matches(check_staged(lambda x, y: jnp.isclose(x, y, equal_nan=equal_nan), a, b), np.isclose(a, b, equal_nan=equal_nan))
    _assert_matches(check_staged(lambda x, y: jnp.isclose(x, y, rtol=0.2), a, b), np.isclose(a, b, rtol=0.2))
    assert not bool(jnp.allclose(a, b))
    assert bool(check_staged(lambda x: jnp.allclose(x, x + 1e-7), np.ones(3, np.float32)))
    z = np.array([1 + 1j, 1 + 2j], np.complex64)
    _assert_matches(check_staged(jnp.isclose, z, z + 1e-7j), np.isclose(z, z + 1e-7j))


def test_array_equal_and_array_equiv():
    a = np.array([1.0, nan, 3.0], np.float32)
    assert not bool(jnp.array_equal(a, a))
    assert bool(check_staged(lambda x: jnp.array_equal(x, x, equal_nan=True), a))
    assert not bool(jnp.array_equal(np.ones(3), np.ones(4)))
    assert bool(jnp.array_equiv(np.ones((2, 3)), np.ones(3)))
    assert not bool(jnp.array_equiv(np.ones((2, 3)), np.ones(2)))


def test_complex_comparisons_are_lexicographic_like_numpy():
    a = np.array([1 + 2j, 1 + 3j, 2 + 0j, nan + 0j], np.complex64)
    b = np.array([1 + 3j, 1 + 3j, 1 + 9j, 1 + 0j], np.complex64)
    for name in ("less", "less_equal", "greater", "greater_equal", "maximum", "minimum", "fmax", "fmin"):
        _assert_matches(check_staged(getattr(jnp, name), a, b), getattr(np, name)(a, b))


def test_maximum_propagates_nan_and_fmax_ignores_it():
    a = np.array([nan, 1.0, nan], np.float32)
    b = np.array([2.0, nan, nan], np.float32)
    _assert_matches(check_staged(jnp.maximum, a, b), np.maximum(a, b))
    _assert_matches(check_staged(jnp.minimum, a, b), np.minimum(a, b))
    _assert_matches(check_staged(jnp.fmax, a, b), np.fmax(a, b))
    _assert_matches(check_staged(jnp.fmin, a, b), np.fmin(a, b))


def test_iscomplexobj_and_isrealobj_are_static():
    assert jnp.iscomplexobj(np.complex64(1)) and jnp.iscomplexobj(jnp.ones(2, jnp.complex64)) and jnp.iscomplexobj(1j)
    assert jnp.isrealobj(jnp.ones(2)) and jnp.isrealobj(3) and not jnp.iscomplexobj(None)
    assert jnp.isrealobj([1, 2]) and jnp.iscomplexobj([1j])


def test_complex_sign_is_z_over_abs_z():
    z = np.array([3 + 4j, -2j, 0j], np.complex64)
    _assert_matches(check_staged(jnp.sign, z), np.array([0.6 + 0.8j, -1j, 0], np.complex64))
    _assert_matches(check_staged(jnp.abs, z), np.float32([5, 2, 0]))


def test_angle_in_degrees():
    z = np.array([1 + 1j, -1 + 0j, -1j], np.complex64)
    _assert_matches(check_staged(lambda a: jnp.angle(a, deg=True), z), np.angle(z, deg=True))


def test_imag_of_real_input_is_zero_even_for_infinities():
    _assert_matches(check_staged(jnp.imag, np.float32([inf, nan, 1])), np.float32([0, 0, 0]))


# --- clip and nan_to_num -----------------------------------------------------------------


def test_clip_with_min_max_positional_and_keywords():
    x = np.array([-3.0, 0.5, 7.0, nan], np.float32)
    _assert_matches(check_staged(lambda a: jnp.clip(a, 0, 1), x), np.clip(x, 0, 1))
    _assert_matches(check_staged(lambda a: jnp.clip(a, min=0.0), x), np.clip(x, 0, None))
    _assert_matches(check_staged(lambda a: jnp.clip(a, max=2), x), np.clip(x, None, 2))
    _assert_matches(check_staged(lambda a: a.clip(-1, 1), x), np.clip(x, -1, 1))
    lo, hi = np.float32([0, 1, 2, 3]), np.float32([1, 1, 5, 5])
    _assert_matches(check_staged(lambda a, b, c: jnp.clip(a, b, c), x, lo, hi), np.clip(x, lo, hi))
    _assert_matches(check_staged(lambda a: jnp.clip(a, 0, 3), np.arange(-2, 6, dtype=np.int32)), np.clip(np.arange(-2, 6, dtype=np.int32), 0, 3))


def test_clip_deprecated_a_min_a_max_still_work():
    x = np.array([-3.0, 0.5, 7.0], np.float32)
    with pytest.warns(DeprecationWarning):
        got = jnp.clip(x, a_min=0, a_max=1)
    _assert_matches(got, np.clip(x, 0, 1))
    with pytest.warns(DeprecationWarning):
        got = jnp.clip(a=x, max=1)
    _assert_matches(got, np.clip(x, None, 1))


def test_clip_rejects_complex():
    with pytest.raises(ValueError, match="complex"):
        jnp.clip(np.complex64([1j]), 0, 1)
    with pytest.raises(ValueError, match="No input"):
        jnp.clip()


def test_nan_to_num_defaults_and_custom_values():
    x = np.array([nan, inf, -inf, 1.5], np.float32)
    _assert_matches(check_staged(jnp.nan_to_num, x), np.nan_to_num(x))
    _assert_matches(check_staged(lambda a: jnp.nan_to_num(a, nan=-1.0, posinf=9.0, neginf=-9.0), x),
                    np.nan_to_num(x, nan=-1.0, posinf=9.0, neginf=-9.0))
    z = np.array([complex(nan, inf), complex(-inf, 2)], np.complex64)
    _assert_matches(check_staged(jnp.nan_to_num, z), np.nan_to_num(z))


# --- integer number theory ---------------------------------------------------------------

_needs_while_loop = pytest.mark.skipif(not hasattr(lax, "while_loop"), reason="lax.while_loop not built yet")


@_needs_while_loop
def test_gcd_and_lcm_match_numpy():
    x = np.array([12, -18, 0, 7, 0, 2**20, 35], np.int32)
    y = np.array([18, 12, 5, 13, 0, 2**12 * 3, -21], np.int32)
    _assert_matches(check_staged(jnp.gcd, x, y), np.gcd(x, y))
    _assert_matches(check_staged(jnp.lcm, x, y), np.lcm(x, y))
    _assert_matches(check_staged(jnp.gcd, x, np.int32(6)), np.gcd(x, 6))


def test_gcd_rejects_floats():
    with pytest.raises(ValueError, match="integers"):
        jnp.gcd(np.float32(1), np.float32(2))


# --- promotion ---------------------------------------------------------------------------


def _dtype_weak(x):
    return (np.dtype(x.dtype), x.weak_type)


def test_weak_python_scalars_keep_the_array_dtype():
    f = jnp.ones(3, jnp.float32)
    i = jnp.ones(3, jnp.int32)
    assert _dtype_weak(check_staged(lambda a: a * 2, f)) == (np.float32, False)
    assert _dtype_weak(check_staged(lambda a: a / 2, i)) == (np.float32, False)
    assert check_staged(lambda a: a + 1.5, i).dtype == np.float32
    assert _dtype_weak(check_staged(lambda a: a // 2, i)) == (np.int32, False)
    assert _dtype_weak(check_staged(lambda a: a * 2, jnp.ones(3, jnp.int8))) == (np.int8, False)
    assert _dtype_weak(check_staged(lambda a: a + 1, jnp.ones(3, jnp.uint8))) == (np.uint8, False)
    assert _dtype_weak(check_staged(lambda a: a * 2.0, jnp.ones(3, jnp.float16))) == (np.float16, False)
    assert _dtype_weak(check_staged(lambda a: a + 1j, f)) == (np.complex64, False)
    assert check_staged(lambda a: a + 1, jnp.ones(3, jnp.bool_)).dtype == np.int32


def test_array_joined_with_a_python_scalar_of_a_higher_kind_is_weak():
    assert _dtype_weak(jnp.ones(3, jnp.int32) + 1.5) == (np.float32, True)
    assert _dtype_weak(jnp.ones(3, jnp.bool_) + 1) == (np.int32, True)


def test_functions_of_python_scalars_stay_weak():
    assert _dtype_weak(jnp.sin(2.0)) == (np.float32, True)
    assert _dtype_weak(jnp.log2(2)) == (np.float32, True)
    assert _dtype_weak(jnp.floor_divide(7, 2)) == (np.int32, True)
    assert _dtype_weak(jnp.float32(1) + jnp.sin(2.0)) == (np.float32, False)


def test_mixed_strong_dtypes_promote_on_the_lattice():
    assert check_staged(jnp.add, np.int32([1]), np.float32([1])).dtype == np.float32
    assert check_staged(jnp.multiply, np.int8([1]), np.uint8([1])).dtype == np.int16
    assert check_staged(jnp.arctan2, np.int32([1]), np.int32([1])).dtype == np.float32
    assert check_staged(jnp.add, np.float32([1]), np.complex64([1])).dtype == np.complex64


def test_operators_use_the_ufuncs():
    x = jnp.array([7, -7, 5], jnp.int32)
    y = jnp.array([2, 2, -3], jnp.int32)
    _assert_matches(x // y, np.array([3, -4, -2], np.int32))
    _assert_matches(x % y, np.array([1, 1, -1], np.int32))
    _assert_matches(x << 1, np.array([14, -14, 10], np.int32))
    _assert_matches(x >> 1, np.array([3, -4, 2], np.int32))
    _assert_matches(7 // y, np.array([3, 3, -3], np.int32))
    q, r = divmod(x, y)
    _assert_matches(q, np.array([3, -4, -2], np.int32))
    _assert_matches(r, np.array([1, 1, -1], np.int32))
    _assert_matches(jnp.array([1.26, -2.5]).round(1), np.float32([1.3, -2.5]))


# --- broadcasting ------------------------------------------------------------------------

_BROADCAST_OPS = ["add", "subtract", "multiply", "true_divide", "floor_divide", "remainder", "maximum",
                  "fmin", "arctan2", "hypot", "copysign", "logaddexp", "less", "logical_xor", "heaviside"]


@settings(max_examples=40, deadline=None)
@given(
    shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3),
    name=st.sampled_from(_BROADCAST_OPS),
    seed=st.integers(0, 2**16),
)
def test_binary_ops_broadcast_like_numpy(shapes, name, seed):
    rng = np.random.default_rng(seed)
    x_shape, y_shape = shapes.input_shapes
    x = rng.uniform(-3, 3, x_shape).astype(np.float32)
    y = rng.uniform(0.5, 3, y_shape).astype(np.float32) * rng.choice([-1, 1], y_shape).astype(np.float32)
    got = check_staged(getattr(jnp, name), x, y)
    assert np.asarray(got).shape == shapes.result_shape
    _assert_matches(got, np.asarray(getattr(np, name)(x, y)))


def test_incompatible_shapes_name_both():
    with pytest.raises(ValueError, match=r"\(2,\).*\(3,\)"):
        jnp.hypot(np.ones(2, np.float32), np.ones(3, np.float32))


# --- the eager fast path of promotion (_promote.already_promoted) ---------------------------

_FAST_OPERANDS = [
    np.float32(1.5) * np.ones((2, 3), np.float32), np.ones((2, 3), np.float16), np.ones((2, 3), np.int32),
    np.ones((3,), np.float32), np.float32(2.0), np.ones((), np.float32), np.ones((2, 3), np.complex64),
]


def _operand(spec):
    kind, value = spec
    if kind == "python":
        return value
    return jnp.asarray(value) if kind == "strong" else omnistage.core.array.Array(np.asarray(value), True)


def test_the_promotion_fast_path_gives_the_general_paths_dtype_weak_type_and_value():
    from omnistage.numpy import _promote

    specs = [("strong", v) for v in _FAST_OPERANDS] + [("weak", np.float32(0.5)), ("weak", np.ones((2, 3), np.float32)),
                                                         ("python", 0.9), ("python", 2), ("python", True)]
    taken = 0
    for a in specs:
        for b in specs:
            x, y = _operand(a), _operand(b)
            fast = _promote.already_promoted((x, y))
            try:
                general = _promote.promote_shapes("add", *_promote.promote_dtypes(x, y))
            except (TypeError, ValueError):
                assert fast is None, (a, b)
                continue
            if fast is not None:
                taken += 1
                for f, g in zip(fast, general):
                    assert (f.dtype, f.weak_type, f.shape) == (g.dtype, g.weak_type, g.shape), (a, b)
                    np.testing.assert_array_equal(np.asarray(f), np.asarray(g))
                    assert type(f) is type(g)
    assert taken >= 20  # the path is taken: same-dtype arrays, and float arrays with Python floats


# --- composites run eagerly as one cached program (numpy/eager_programs.py) ----------------

@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2"])
def test_an_eager_composite_gives_the_op_by_op_bits_and_stages_inline_under_a_trace(name, monkeypatch):
    from omnistage.core import primitive
    from omnistage.numpy import ufuncs

    fn = getattr(ufuncs, name)  # jnp's ufunc object calls it
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((6, 5)) * 30).astype(np.float32)
    b = (rng.standard_normal((6, 5)) * 30).astype(np.float32)
    a[0, :4], b[0, :4] = [np.inf, -np.inf, np.nan, 0.0], [np.inf, -np.inf, 1.0, -0.0]
    for x, y in [(a, b), (a, 0.5), (jnp.asarray(a), jnp.asarray(b[0])), (np.float32(2.0), 3)]:
        got, want = fn(x, y), fn.__wrapped__(x, y)
        assert (got.dtype, got.weak_type, got.shape) == (want.dtype, want.weak_type, want.shape)
        assert np.asarray(got).tobytes() == np.asarray(want).tobytes()  # the same bits, NaNs and zeros too
    dispatched = []
    eager_apply = primitive.eager_apply
    monkeypatch.setattr(primitive, "eager_apply", lambda *args: dispatched.append(args[0].name) or eager_apply(*args))
    with omnistage.no_tracing():  # the second call with the same avals runs the cached program
        fn(a, b)
    assert dispatched == []  # one program, not a primitive at a time
    monkeypatch.undo()
    text = str(omnistage.make_jaxpr(lambda x: fn(x, 0.0))(a))
    assert "max(" in text and "log1p(" in text  # its primitives, staged into the caller's program
    np.testing.assert_allclose(omnistage.grad(lambda x: fn(x, 0.0).sum())(a[1]),
                               omnistage.grad(lambda x: fn.__wrapped__(x, 0.0).sum())(a[1]), rtol=1e-6)


def test_an_eager_composite_with_a_bad_argument_says_what_the_op_by_op_path_says():
    with pytest.raises(TypeError, match="requires ndarray or scalar arguments"):
        jnp.logaddexp([1.0, 2.0], 1.0)
    with pytest.raises(TypeError, match="complex"):
        jnp.logaddexp(np.ones(2, np.complex64), 1.0)
