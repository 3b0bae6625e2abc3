"""Behaviour of omnistage.random beyond the stored JAX vectors: statistics, key handling and
its errors, dtypes, staging, and the fma/erf building blocks."""
import fractions
import math
import platform

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import omnistage
import omnistage.numpy as jnp
import omnistage.random as jr
from omnistage.lax import glibc_log as _glibc_log, xla_math as _xla_math
from omnistage.lax.fused_multiply_add import fma
from omnistage.random._rsqrt import rsqrt_f32
from omnistage.lax.error_function import erf, erf_inv
from tests.helpers import check_staged

KEY = jr.PRNGKey(0)


# --- statistics ------------------------------------------------------------------------


def test_a_million_normals_have_mean_zero_and_unit_std():
    x = np.asarray(jr.normal(KEY, (1000, 1000)))
    assert x.dtype == np.float32
    assert abs(x.mean()) < 5e-3 and abs(x.std() - 1) < 5e-3
    assert np.isfinite(x).all()


def test_uniform_stays_in_its_half_open_interval():
    x = np.asarray(jr.uniform(KEY, (100_000,), minval=-2.0, maxval=3.0))
    assert x.min() >= -2.0 and x.max() < 3.0
    assert abs(x.mean() - 0.5) < 0.02


def test_uniform_broadcasts_array_bounds():
    lo = jnp.array([0.0, 10.0, 20.0])
    x = np.asarray(jr.uniform(KEY, (1000, 3), minval=lo, maxval=lo + 1))
    assert (x >= np.array([0, 10, 20])).all() and (x < np.array([1, 11, 21])).all()


def test_truncated_normal_stays_strictly_inside_the_bounds():
    x = np.asarray(jr.truncated_normal(KEY, -0.5, 1.5, (10_000,)))
    assert x.min() > -0.5 and x.max() < 1.5


def test_exponential_has_unit_mean():
    x = np.asarray(jr.exponential(KEY, (100_000,)))
    assert x.min() >= 0 and abs(x.mean() - 1) < 0.02


def test_bernoulli_frequency_follows_p():
    x = np.asarray(jr.bernoulli(KEY, 0.25, (100_000,)))
    assert x.dtype == np.bool_ and abs(x.mean() - 0.25) < 0.01


def test_categorical_frequencies_follow_softmax():
    p = np.array([0.1, 0.2, 0.7], np.float32)
    x = np.asarray(jr.categorical(KEY, jnp.log(p), shape=(20_000,)))
    np.testing.assert_allclose(np.bincount(x, minlength=3) / x.size, p, atol=0.02)


def test_randint_covers_its_range_and_respects_narrow_dtypes():
    x = np.asarray(jr.randint(KEY, (10_000,), -3, 4))
    assert set(np.unique(x)) == set(range(-3, 4))
    y = jr.randint(KEY, (100,), 0, 256, jnp.uint8)
    assert y.dtype == np.uint8


def test_randint_with_empty_range_returns_minval():
    np.testing.assert_array_equal(np.asarray(jr.randint(KEY, (5,), 3, 3)), 3)


def test_permutation_is_a_permutation_and_choice_without_replacement_is_distinct():
    p = np.asarray(jr.permutation(KEY, 1000))
    np.testing.assert_array_equal(np.sort(p), np.arange(1000))
    c = np.asarray(jr.choice(KEY, 50, (20,), replace=False))
    assert len(set(c.tolist())) == 20


def test_permutation_of_rows_keeps_rows_and_independent_shuffles_each_row():
    x = np.arange(20).reshape(4, 5)
    rows = np.asarray(jr.permutation(KEY, x))
    assert sorted(map(tuple, rows)) == sorted(map(tuple, x))
    ind = np.asarray(jr.permutation(KEY, x, axis=1, independent=True))
    np.testing.assert_array_equal(np.sort(ind, axis=1), x)


def test_choice_with_p_never_picks_zero_probability_entries():
    x = np.asarray(jr.choice(KEY, jnp.arange(4) * 10, (1000,), p=jnp.array([0.5, 0.0, 0.5, 0.0])))
    assert set(np.unique(x)) <= {0, 20}


def test_choice_along_an_axis_has_numpy_take_shape():
    a = jnp.arange(24).reshape(2, 3, 4)
    assert jr.choice(KEY, a, (5,), axis=1).shape == (2, 5, 4)


# --- keys --------------------------------------------------------------------------------


def test_keys_are_uint32_pairs_and_key_equals_prngkey():
    k = jr.key(7)
    assert k.dtype == np.uint32 and k.shape == (2,)
    np.testing.assert_array_equal(np.asarray(k), np.asarray(jr.PRNGKey(7)))
    np.testing.assert_array_equal(np.asarray(jr.key_data(k)), [0, 7])


def test_split_accepts_a_shape_and_subkeys_differ():
    ks = np.asarray(jr.split(KEY, (2, 3)))
    assert ks.shape == (2, 3, 2)
    assert len({tuple(k) for k in ks.reshape(6, 2)}) == 6


def test_any_uint32_pair_is_a_key_and_keys_are_data():
    k = np.array([1, 2], np.uint32)
    assert jr.normal(k, (3,)).shape == (3,)
    arithmetic = jr.PRNGKey(1) + jnp.uint32(1)  # keys are plain arrays
    assert arithmetic.dtype == np.uint32


@pytest.mark.parametrize("bad", [np.array([1, 2], np.int32), np.zeros(3, np.uint32), 1.5])
def test_invalid_keys_raise_type_error(bad):
    with pytest.raises(TypeError):
        jr.normal(bad, (2,))


def test_batched_keys_raise_and_point_at_vmap():
    with pytest.raises(ValueError, match="vmap"):
        jr.normal(jr.split(KEY, 3), (2,))


def test_seed_must_be_a_scalar_integer():
    with pytest.raises(TypeError, match="scalar seed"):
        jr.PRNGKey(np.arange(2))
    with pytest.raises(TypeError, match="integer"):
        jr.PRNGKey(1.5)


def test_fold_in_rejects_python_ints_outside_uint32():
    with pytest.raises(OverflowError):
        jr.fold_in(KEY, -1)


def test_big_seed_uses_both_words_in_x64_mode(x64):
    np.testing.assert_array_equal(np.asarray(jr.PRNGKey(2**40 + 3)), [256, 3])


# --- dtypes ------------------------------------------------------------------------------


def test_default_dtypes_follow_64_bit_mode(x64):
    assert jr.normal(KEY).dtype == np.float64
    assert jr.uniform(KEY, dtype=float).dtype == np.float64
    assert jr.randint(KEY, (2,), 0, 5).dtype == np.int64
    assert jr.bits(KEY).dtype == np.uint64


def test_default_dtypes_are_32_bit():
    assert jr.normal(KEY).dtype == np.float32
    assert jr.uniform(KEY, dtype=float).dtype == np.float32
    assert jr.randint(KEY, (2,), 0, 5).dtype == np.int32
    assert jr.bits(KEY).dtype == np.uint32


def test_complex_normal_has_unit_variance():
    z = np.asarray(jr.normal(KEY, (100_000,), jnp.complex64))
    assert z.dtype == np.complex64 and abs(np.mean(np.abs(z) ** 2) - 1) < 0.02


def test_non_float_dtypes_are_rejected():
    with pytest.raises(ValueError, match="float"):
        jr.uniform(KEY, (2,), jnp.int32)
    with pytest.raises(TypeError, match="integer"):
        jr.randint(KEY, (2,), 0, 3, jnp.float32)


def test_gamma_family_moments():
    a = 2.5
    g = np.asarray(jr.gamma(KEY, a, (50_000,)))
    assert g.dtype == np.float32 and (g > 0).all()
    assert abs(g.mean() - a) < 0.04 and abs(g.var() - a) < 0.12
    small = np.asarray(jr.gamma(KEY, 0.3, (20_000,)))  # the boosted branch
    assert abs(small.mean() - 0.3) < 0.02
    lg = np.asarray(jr.loggamma(KEY, 0.3, (20_000,)))
    assert abs(np.exp(lg).mean() - 0.3) < 0.02
    b = np.asarray(jr.beta(KEY, 2.0, 5.0, (20_000,)))
    assert ((b > 0) & (b < 1)).all() and abs(b.mean() - 2 / 7) < 6e-3


def test_dirichlet_rows_sum_to_one_with_mean_alpha_over_its_sum():
    alpha = np.array([0.5, 1.0, 2.5], np.float32)
    d = np.asarray(jr.dirichlet(KEY, jnp.asarray(alpha), (20_000,)))
    assert d.shape == (20_000, 3)
    np.testing.assert_allclose(d.sum(-1), 1, rtol=1e-5)
    np.testing.assert_allclose(d.mean(0), alpha / alpha.sum(), atol=8e-3)


def test_more_continuous_samplers_have_their_moments():
    lap = np.asarray(jr.laplace(KEY, (200_000,)))
    assert abs(lap.mean()) < 0.01 and abs(lap.var() - 2) < 0.05
    logi = np.asarray(jr.logistic(KEY, (200_000,)))
    assert abs(logi.mean()) < 0.02 and abs(logi.var() - np.pi**2 / 3) < 0.1
    cau = np.asarray(jr.cauchy(KEY, (200_000,)))
    assert abs(np.median(cau)) < 0.01 and abs(np.percentile(cau, 75) - 1) < 0.02
    mx = np.asarray(jr.maxwell(KEY, (200_000,)))
    assert (mx >= 0).all() and abs(mx.mean() - 2 * np.sqrt(2 / np.pi)) < 0.01
    st_ = np.asarray(jr.t(KEY, 5.0, (200_000,)))
    assert abs(st_.mean()) < 0.02 and abs(st_.var() - 5 / 3) < 0.1
    rad = np.asarray(jr.rademacher(KEY, (100_000,)))
    assert rad.dtype == np.int32 and set(np.unique(rad)) == {-1, 1} and abs(rad.mean()) < 0.01


def test_gamma_parameter_shapes_and_dtypes(x64):
    assert jr.gamma(KEY, jnp.ones((2, 3))).shape == (2, 3)
    assert jr.gamma(KEY, 1.5, (4, 2)).dtype == np.float64
    assert jr.gamma(KEY, 1.5, (3,), jnp.float32).dtype == np.float32
    assert jr.gamma(KEY, 1.5, (0,)).shape == (0,)
    with pytest.raises(ValueError, match="broadcast"):
        jr.gamma(KEY, jnp.ones(3), (2,))


# --- staging -----------------------------------------------------------------------------


@pytest.mark.parametrize("sampler", [
    lambda k: jr.normal(k, (3, 2)),
    lambda k: jr.uniform(k, (5,), minval=-1.0, maxval=2.0),
    lambda k: jr.randint(k, (4,), 0, 10),
    lambda k: jr.split(k, 3),
])
def test_samplers_stage_into_runnable_programs(sampler):
    check_staged(sampler, KEY, rtol=0, atol=0)


def test_staged_program_is_one_hash_of_iota_counters():
    text = str(omnistage.make_jaxpr(lambda k: jr.bits(k, (4,)))(KEY))
    assert text.count("threefry2x32(") == 1 and "iota" in text and "xor" in text
    assert "shift_left" not in text  # the rounds are inside the primitive, as in JAX's jaxprs


# --- building blocks ---------------------------------------------------------------------


finite32 = st.floats(-1e6, 1e6, width=32).filter(lambda v: v == 0 or abs(v) > 1e-6)


@settings(max_examples=50, deadline=None)
@given(finite32, finite32, finite32)
def test_fma_float32_rounds_once(a, b, c):
    got = np.asarray(fma(np.float32(a), np.float32(b), np.float32(c)))
    # the correctly rounded float32 of the exact value: nearest of three neighbours, ties even
    f = fractions.Fraction
    exact = f(float(np.float32(a))) * f(float(np.float32(b))) + f(float(np.float32(c)))
    candidates = np.float32(float(exact))
    lo, hi = np.nextafter(candidates, np.float32(-np.inf)), np.nextafter(candidates, np.float32(np.inf))
    best = min((candidates, lo, hi), key=lambda v: (abs(f(float(v)) - exact), int(np.asarray(v).view(np.int32)) & 1))
    assert got == best


def _correctly_rounded_f32(a, b, c):
    """fma's float32 answer from exact rationals: nearest of three neighbours, ties to even."""
    f = fractions.Fraction
    out = []
    for x, y, z in zip(a.ravel(), b.ravel(), c.ravel()):
        exact = f(float(x)) * f(float(y)) + f(float(z))
        if exact == 0:  # IEEE's sign of an exact zero: what float64 arithmetic gives
            out.append(np.float32(np.float64(x) * np.float64(y) + np.float64(z)))
            continue
        near = np.float32(float(exact))
        lo, hi = np.nextafter(near, np.float32(-np.inf)), np.nextafter(near, np.float32(np.inf))
        out.append(min((near, lo, hi), key=lambda v: (abs(f(float(v)) - exact), int(np.asarray(v).view(np.int32)) & 1)))
    return np.array(out, np.float32).reshape(a.shape)


def test_fma_float32_arrays_round_once_where_float64_rounding_twice_would_not():
    """Eager float32 fma adds in float64 and redoes only the values a second rounding could
    get wrong: sums halfway between two float32 values, and float32's subnormal range."""
    rng = np.random.default_rng(3)
    n = 4000
    small_ints = lambda: rng.integers(1, 1 << 12, n).astype(np.float32)  # noqa: E731 - exact products
    odd = lambda lo, hi: (rng.integers(lo, hi, n) | 1).astype(np.float32)  # noqa: E731
    cases = [
        # a * b an odd 25-bit integer (halfway between two float32 values) plus a c far below
        # float64's precision there: float64 rounds the sum onto the halfway point, and a second
        # rounding to even goes the wrong way in about half of these
        (odd(4097, 8192), odd(2049, 4096), (rng.choice([-1, 1], n) * 2.0 ** rng.integers(-60, -40, n)).astype(np.float32)),
        # c = (integer + 1/2) * 2**k: sums exactly halfway, where rounding to even is right
        (small_ints(), small_ints(), ((rng.integers(1, 1 << 24, n) + 0.5) * 2.0 ** rng.integers(-30, -1, n)).astype(np.float32)),
        # the same in float32's subnormal range, where the halfway points are odd multiples of
        # 2**-150: a * b = 2**-150 * (1 - j**2 * 2**-46), plus c = k * 2**-149
        (np.float32(2.0 ** -75) * (1 + np.arange(1, n + 1) % 100 * np.float32(2.0 ** -23)),
         np.float32(2.0 ** -75) * (1 - np.arange(1, n + 1) % 100 * np.float32(2.0 ** -23)),
         (rng.integers(1, 1 << 20, n) * 2.0 ** -149).astype(np.float32)),
        # products and sums in float32's subnormal range
        tuple((rng.standard_normal(n) * 2.0 ** rng.integers(lo, hi, n)).astype(np.float32)
              for lo, hi in ((-70, -30), (-70, -30), (-140, -120))),
        tuple(rng.standard_normal(n).astype(np.float32) for _ in range(3)),
    ]
    for a, b, c in cases:
        got = np.asarray(fma(a, b, c))
        assert np.array_equal(got.view(np.int32), _correctly_rounded_f32(a, b, c).view(np.int32))
    # scalars broadcast, a rank-0 result, and an exact -0.0
    grid = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(np.asarray(fma(np.float32(2), grid, np.float32(1))), 2 * grid + 1)
    assert np.asarray(fma(np.float32(-0.0), np.float32(1), np.float32(-0.0))).view(np.int32) == np.float32(-0.0).view(np.int32)
    assert np.isnan(np.asarray(fma(np.float32(np.inf), np.float32(0), np.float32(1))))


# exactness is promised while a * b stays clear of the subnormal range (see _fma)
finite64 = st.floats(-1e6, 1e6).filter(lambda v: v == 0 or abs(v) > 1e-100)


@settings(max_examples=50, deadline=None)
@given(finite64, finite64, st.floats(-1e6, 1e6))
def test_fma_float64_rounds_once(a, b, c):
    f = fractions.Fraction
    exact = f(a) * f(b) + f(c)
    old = omnistage.config.read("jax_enable_x64")
    omnistage.config.update("jax_enable_x64", True)  # float64 operands stay float64
    try:
        got = float(np.asarray(fma(np.float64(a), np.float64(b), np.float64(c))))
    finally:
        omnistage.config.update("jax_enable_x64", old)
    assert got == float(exact)  # Fraction -> float rounds correctly (to nearest, ties even)


def test_fma_differs_from_separate_rounding():
    a = np.float32(1 + 2**-12)
    got = np.asarray(fma(a, a, np.float32(-1)))  # (1 + 2**-12)**2 - 1 = 2**-11 + 2**-24
    assert got == np.float32(2**-11 + 2**-24) and a * a - np.float32(1) == np.float32(2**-11)


@pytest.mark.parametrize("dtype,tol", [(np.float32, 2e-6), (np.float64, 1e-14)])
def test_erf_inv_inverts_erf(dtype, tol, x64):
    x = np.linspace(-0.999, 0.999, 2001).astype(dtype)
    y = np.asarray(erf(erf_inv(jnp.asarray(x))))
    np.testing.assert_allclose(y, x, rtol=tol * 50, atol=tol)
    assert np.asarray(erf_inv(jnp.asarray(np.array([1, -1], dtype)))).tolist() == [np.inf, -np.inf]


def test_erf_matches_the_math_module():
    import math

    x = np.linspace(-6, 6, 241)
    want = np.array([math.erf(v) for v in x], np.float32)
    np.testing.assert_allclose(np.asarray(erf(jnp.asarray(x.astype(np.float32)))), want, atol=2e-7)


# --- XLA's and glibc's elementary functions --------------------------------------------


def _ulps(a, b):
    bits = f"int{np.asarray(a).dtype.itemsize * 8}"
    return np.abs(np.asarray(a).view(bits).astype(np.int64) - np.asarray(b).view(bits).astype(np.int64))


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="the reference is glibc's log")
def test_float64_log_is_glibcs_bit_for_bit(x64):
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.random(20_000) * 3, 1 + (rng.random(20_000) - 0.5) / 8,
                        np.exp(rng.uniform(-745, 709, 20_000)), [5e-324, 2.0**-1022, 1.0, 0.9375]])
    want = np.array([math.log(v) for v in x])
    got = np.asarray(_glibc_log.log(jnp.asarray(x)))
    np.testing.assert_array_equal(got.view(np.uint64), want.view(np.uint64))


def test_float64_log_special_values(x64):
    got = np.asarray(_glibc_log.log(jnp.asarray([0.0, -0.0, np.inf, -1.0, np.nan])))
    assert got[0] == got[1] == -np.inf and got[2] == np.inf and np.isnan(got[3:]).all()


def test_float32_log_log1p_exp_are_within_two_ulps():
    x = np.geomspace(1e-30, 1e30, 50_001).astype(np.float32)
    assert _ulps(_xla_math.log_f32(jnp.asarray(x)), np.log(x.astype(np.float64)).astype(np.float32)).max() <= 2
    y = np.linspace(-0.999, 3, 50_001).astype(np.float32)
    assert _ulps(_xla_math.log1p(jnp.asarray(y)), np.log1p(y.astype(np.float64)).astype(np.float32)).max() <= 2
    z = np.linspace(-80, 80, 50_001).astype(np.float32)
    assert _ulps(_xla_math.exp_f32(jnp.asarray(z)), np.exp(z.astype(np.float64)).astype(np.float32)).max() <= 2


def test_xla_functions_special_values():
    log = np.asarray(_xla_math.log_f32(jnp.asarray(np.float32([0, np.inf, -1, np.nan]))))
    assert log[0] == -np.inf and log[1] == np.inf and np.isnan(log[2:]).all()
    exp = np.asarray(_xla_math.exp_f32(jnp.asarray(np.float32([-100, 100, np.nan, -87.5]))))
    # XLA clamps to [-87.8, 88.8] and flushes subnormal results to zero
    assert exp[0] == 0 and exp[1] == np.inf and np.isnan(exp[2]) and exp[3] == 0


def test_flush_denormals_keeps_the_sign():
    x = np.float32([1e-40, -1e-40, 1e-30, 0.0])
    got = np.asarray(_xla_math.flush_denormals(jnp.asarray(x)))
    assert got.tolist() == [0.0, 0.0, 1e-30 * 1, 0.0] or np.allclose(got, [0, 0, np.float32(1e-30), 0])
    assert np.signbit(got[1]) and not np.signbit(got[0])


def test_rsqrt_is_within_two_ulps_and_handles_special_values():
    x = np.geomspace(1e-37, 1e37, 100_001).astype(np.float32)
    got = np.asarray(rsqrt_f32(jnp.asarray(x)))  # one Newton step from a 12-bit estimate
    assert _ulps(got, (1 / np.sqrt(x.astype(np.float64))).astype(np.float32)).max() <= 2
    special = np.asarray(rsqrt_f32(jnp.asarray(np.float32([0, np.inf, -1, np.nan]))))
    assert special[0] == np.inf and special[1] == 0 and np.isnan(special[2:]).all()


def test_fma_keeps_the_sign_of_an_exact_zero():
    zero = np.asarray(fma(np.float32(0), np.float32(-0.5), np.float32(-0.0)))
    assert zero == 0 and np.signbit(zero)
