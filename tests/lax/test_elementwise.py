"""lax's elementwise primitives: strict typing (no implicit promotion), XLA's semantics where
they differ from NumPy's (integer division, shifts, rounding), and exact impl dtypes for every
primitive (eager == jit == printed program == checked interpreter)."""
import numpy as np
import pytest

import omnistage as jax
import omnistage.numpy as jnp
from omnistage import lax
from omnistage.lax import elementwise
from tests.helpers import check_staged

inf, nan = np.inf, np.nan

# --- strictness --------------------------------------------------------------------------


def test_lax_add_of_python_int_and_float_raises():
    with pytest.raises(TypeError, match="same dtypes"):
        lax.add(1, 1.0)


def test_weak_python_scalar_joins_a_typed_operand_of_its_kind():
    out = lax.add(jnp.float32(1), 1.0)
    assert out.dtype == np.float32 and not out.weak_type and float(out) == 2.0
    weak = lax.mul(2.0, 3.0)
    assert weak.dtype == np.float32 and weak.weak_type


def test_mixed_dtypes_raise_naming_both():
    with pytest.raises(TypeError, match="float32, int32"):
        lax.add(np.float32([1]), np.int32([1]))


def test_mismatched_shapes_raise_naming_both():
    with pytest.raises(TypeError, match=r"\(2,\), \(3,\)"):
        lax.mul(np.ones(2, np.float32), np.ones(3, np.float32))


def test_rank0_operands_broadcast():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(check_staged(lambda a: lax.sub(a, np.float32(1)), x), x - 1)


@pytest.mark.parametrize("fn,value", [
    (lax.sin, np.int32(1)), (lax.floor, np.complex64(1)), (lax.atan2, np.complex64(1)),
    (lax.bitwise_and, np.float32(1)), (lax.shift_left, np.float32(1)), (lax.neg, np.bool_(True)),
    (lax.complex, np.int32(1)), (lax.rem, np.complex64(1)),
])
def test_unaccepted_dtype_raises_type_error(fn, value):
    args = [value] * (2 if fn in (lax.atan2, lax.bitwise_and, lax.shift_left, lax.complex, lax.rem) else 1)
    with pytest.raises(TypeError, match="does not accept dtype"):
        fn(*args)


# --- integer division and remainder (XLA's semantics) -------------------------------------


def test_integer_div_truncates_toward_zero():
    x = np.array([7, -7, 7, -7], np.int32)
    y = np.array([2, 2, -2, -2], np.int32)
    np.testing.assert_array_equal(check_staged(lax.div, x, y), [3, -3, -3, 3])
    np.testing.assert_array_equal(check_staged(lax.rem, x, y), [1, -1, 1, -1])


def test_integer_division_by_zero_and_overflow():
    imin = np.iinfo(np.int32).min
    x = np.array([5, -5, 0, imin, imin], np.int32)
    y = np.array([0, 0, 0, -1, 1], np.int32)
    np.testing.assert_array_equal(check_staged(lax.div, x, y), [-1, -1, -1, imin, imin])
    np.testing.assert_array_equal(check_staged(lax.rem, x, y), [5, -5, 0, 0, 0])
    u = np.array([5, 9], np.uint8)
    np.testing.assert_array_equal(check_staged(lax.div, u, np.uint8([0, 2])), [255, 4])


def test_float_div_and_rem_follow_ieee():
    x = np.array([1.0, -1.0, 5.5, -5.5], np.float32)
    y = np.array([0.0, 0.0, 2.0, 2.0], np.float32)
    np.testing.assert_array_equal(check_staged(lax.div, x, y), [inf, -inf, 2.75, -2.75])
    np.testing.assert_array_equal(check_staged(lax.rem, x, y), np.fmod(x, y))


# --- rounding, signs, extrema ------------------------------------------------------------


def test_round_methods():
    x = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 2.4], np.float32)
    np.testing.assert_array_equal(check_staged(lax.round, x), [1, 2, 3, -1, -3, 2])
    even = check_staged(lambda a: lax.round(a, lax.RoundingMethod.TO_NEAREST_EVEN), x)
    np.testing.assert_array_equal(even, [0, 2, 2, -0.0, -2, 2])
    assert int(lax.RoundingMethod.AWAY_FROM_ZERO) == 0 and int(lax.RoundingMethod.TO_NEAREST_EVEN) == 1


def test_sign_of_complex_is_unit_phase():
    z = np.array([3 + 4j, 0j], np.complex64)
    np.testing.assert_allclose(check_staged(lax.sign, z), [0.6 + 0.8j, 0])


def test_max_min_propagate_nan_and_order_complex_lexicographically():
    a = np.array([nan, 1.0], np.float32)
    b = np.array([0.0, nan], np.float32)
    assert np.isnan(np.asarray(check_staged(lax.max, a, b))).all()
    assert np.isnan(np.asarray(check_staged(lax.min, a, b))).all()
    z1 = np.array([1 + 5j, 2 + 0j], np.complex64)
    z2 = np.array([1 + 6j, 1 + 9j], np.complex64)
    np.testing.assert_array_equal(check_staged(lax.max, z1, z2), [1 + 6j, 2 + 0j])
    np.testing.assert_array_equal(check_staged(lax.min, z1, z2), [1 + 5j, 1 + 9j])


def test_clamp_takes_min_operand_max():
    x = np.array([-2.0, 0.5, 3.0], np.float32)
    np.testing.assert_array_equal(check_staged(lambda a: lax.clamp(np.float32(0), a, np.float32(1)), x), [0, 0.5, 1])


# --- complex construction ----------------------------------------------------------------


def test_complex_keeps_infinite_and_nan_parts_in_place():
    re = np.array([1.0, inf, nan, -0.0], np.float32)
    im = np.array([inf, 2.0, 1.0, -0.0], np.float32)
    z = np.asarray(check_staged(lax.complex, re, im))
    assert z.dtype == np.complex64
    np.testing.assert_array_equal(z.real, re)
    np.testing.assert_array_equal(z.imag, im)
    np.testing.assert_array_equal(np.signbit(z.imag), np.signbit(im))


def test_complex_of_float64_is_complex128(x64):
    assert check_staged(lax.complex, np.float64([1]), np.float64([2])).dtype == np.complex128


def test_complex_broadcasts_rank0_part():
    z = check_staged(lax.complex, np.float32([1, 2]), np.float32(3))
    np.testing.assert_array_equal(z, [1 + 3j, 2 + 3j])


# --- shifts and bits ---------------------------------------------------------------------


def test_shifts_past_the_width_saturate_as_xla():
    x = np.array([1, -8, -8, 5], np.int32)
    s = np.array([32, 40, 1, 0], np.int32)
    np.testing.assert_array_equal(check_staged(lax.shift_left, x, s), [0, 0, -16, 5])
    np.testing.assert_array_equal(check_staged(lax.shift_right_arithmetic, x, s), [0, -1, -4, 5])
    np.testing.assert_array_equal(check_staged(lax.shift_right_logical, x, s), [0, 0, 2**31 - 4, 5])


def test_population_count_keeps_dtype():
    x = np.array([0, 1, 7, -1], np.int32)
    out = check_staged(lax.population_count, x)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, [0, 1, 3, 32])


def test_bitcast_of_rank0_keeps_rank0():
    out = check_staged(lambda a: lax.bitcast_convert_type(a, np.int32), np.float32(-0.0))
    assert out.shape == () and int(out) == np.iinfo(np.int32).min


def test_convert_float_to_int_maps_nan_to_zero_and_saturates():
    x = np.array([nan, 3e9, -3e9, -2.7], np.float32)
    out = check_staged(lambda a: lax.convert_element_type(a, np.int32), x)
    np.testing.assert_array_equal(out, [0, 2**31 - 1, -(2**31), -2])


def test_integer_pow_negative_exponent_needs_inexact():
    with pytest.raises(TypeError, match="negative exponent"):
        lax.integer_pow(np.int32(2), -1)
    np.testing.assert_allclose(check_staged(lambda a: lax.integer_pow(a, -2), np.float32([2, 4])), [0.25, 0.0625])


def test_bitwise_primitive_names_are_callable_in_printed_programs():
    x = np.array([True, False])
    out = check_staged(lambda a, b: lax.bitwise_not(lax.bitwise_or(lax.bitwise_and(a, b), b)), x, ~x)
    np.testing.assert_array_equal(out, [True, False])


# --- every table primitive: impl dtype == abstract dtype ----------------------------------

_SAMPLES = {
    "float": np.array([-1.5, -0.25, 0.0, 0.5, 2.0, 7.0], np.float32),
    "int": np.array([-7, -1, 0, 1, 3, 12], np.int32),
    "bool": np.array([True, False, True, False, True, True]),
    "complex": np.array([1 + 2j, -0.5j, 0.25 + 0j, -2 - 1j, 3 + 3j, 0.5 - 0.5j], np.complex64),
    "uint": np.array([0, 1, 2, 3, 200, 7], np.uint8),
}


def _sample_cases():
    for name, (_, kind, _, nargs) in elementwise._TABLE.items():
        prim = elementwise.PRIMITIVES[name]
        for label, sample in _SAMPLES.items():
            avals = [jnp.asarray(sample).aval] * nargs
            try:
                prim.abstract_eval(*avals)
            except TypeError:
                continue
            yield name, label


@pytest.mark.parametrize("name,label", list(_sample_cases()))
def test_every_primitive_impl_matches_its_abstract_dtype(name, label):
    _, _, _, nargs = elementwise._TABLE[name]
    prim = elementwise.PRIMITIVES[name]
    x = _SAMPLES[label]
    # shift counts and divisors: small and nonzero, so results are well defined
    y = np.where(x == 0, 1, x) if label != "bool" else x
    if name.startswith("shift"):
        y = (np.abs(x) % 5).astype(x.dtype)
    args = (x, y)[:nargs]
    check_staged(lambda *a: prim.bind(*a), *args)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("mode", ["eager", "jit", "interpreter"])
def test_round_half_away_from_zero_is_exact_at_the_edges(dtype, mode, x64):
    """lax.round's default: the float just below 0.5 rounds to 0 (floor(x + 0.5) gave 1), -0.0
    keeps its sign, ties go away from zero, infinities and NaN pass through (JAX's values)."""
    dt = np.dtype(dtype)
    below_half = np.nextafter(dt.type(0.5), dt.type(0))
    x = np.array([below_half, -below_half, 0.5, -0.5, 1.5, -2.5, -0.0, 0.0, -0.3, 2.0 ** 8 + 0.5,
                  np.inf, -np.inf, np.nan, np.finfo(dt).max, -np.finfo(dt).max], dt)
    want = np.array([0, -0.0, 1, -1, 2, -3, -0.0, 0, -0.0, 2.0 ** 8 + 1, np.inf, -np.inf, np.nan,
                     np.finfo(dt).max, -np.finfo(dt).max], dt)
    f = {"eager": lax.round, "jit": jax.jit(lax.round), "interpreter": jax.jit(lax.round, backend="interpreter")}[mode]
    got = np.asarray(f(x))
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
