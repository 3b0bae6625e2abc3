"""Large float sums in compiled code are as accurate as NumPy's pairwise summation: within a
few ulp * log2(n) of the exact sum (math.fsum), whichever loop shape the reduction gets."""
import math

import numpy as np
import pytest

import omnistage as jax
import omnistage.numpy as jnp


def _ulps(got, exact, dtype):
    return abs(float(got) - exact) / (abs(exact) * np.finfo(dtype).eps)


def test_sum_of_the_reported_mnist_array_is_right():
    x = np.full((10000, 784), 0.48, np.float32)
    exact = math.fsum(x.astype(np.float64).ravel())
    got = jax.jit(jnp.sum)(x)
    # a sequential float32 accumulation gave 3765064.75 (5e-4 relative)
    assert _ulps(got, exact, np.float32) <= 2
    assert _ulps(jax.jit(lambda a: jnp.mean(a))(x) * x.size, exact, np.float32) <= 4


@pytest.mark.parametrize("shape", [(3_000_001,), (400_000, 8), (2000, 1500), (2049,), (50_000, 31), (3, 700, 900)])
def test_full_float32_sums_are_within_a_few_ulp_log_n(rng, shape):
    y = (rng.standard_normal(shape) + 1).astype(np.float32)
    exact = math.fsum(y.astype(np.float64).ravel().tolist())
    assert _ulps(jax.jit(jnp.sum)(y), exact, np.float32) <= 2 * math.log2(y.size)


@pytest.mark.parametrize("shape, axis", [((200_000, 30), 0), ((40, 100_000), 1), ((3000, 20, 50), (0, 1)), ((20_000, 3, 40), (0, 2))])
def test_axis_float32_sums_are_within_a_few_ulp_log_n(rng, shape, axis):
    y = (rng.standard_normal(shape) + 1).astype(np.float32)
    exact = np.sum(y.astype(np.float64), axis=axis)
    got = np.asarray(jax.jit(lambda a: jnp.sum(a, axis=axis))(y))
    n = y.size // exact.size
    assert np.max(np.abs(got - exact) / (np.abs(exact) * np.finfo(np.float32).eps)) <= 2 * math.log2(n)


@pytest.mark.parametrize("shape", [(1_000_003,), (200_000, 8), (1000, 1500)])
def test_float64_sums_are_compensated(rng, shape, x64):
    y = rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4, shape) + 1
    exact = math.fsum(y.ravel().tolist())
    assert _ulps(jax.jit(jnp.sum)(y), exact, np.float64) <= 4


def test_complex64_sums_accumulate_wide(rng):
    y = (rng.standard_normal(1_000_000) + 1j * rng.standard_normal(1_000_000) + (1 + 1j)).astype(np.complex64)
    exact = complex(np.sum(y.astype(np.complex128)))
    got = complex(jax.jit(jnp.sum)(y))
    assert abs(got - exact) / abs(exact) <= 4 * np.finfo(np.float32).eps


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_blocked_sums_keep_infinities_and_nans(dtype, x64):
    ones = np.ones(5000, dtype)
    cases = {
        "inf": (np.concatenate([ones, [np.inf]]).astype(dtype), np.inf),
        "-inf": (np.concatenate([[-np.inf], ones]).astype(dtype), -np.inf),
        "inf-inf": (np.concatenate([[np.inf], ones, [-np.inf]]).astype(dtype), np.nan),
        "nan": (np.concatenate([ones, [np.nan], ones]).astype(dtype), np.nan),
        "overflow": (np.full(5000, np.finfo(dtype).max / 1000, dtype), np.inf),
    }
    for name, (y, want) in cases.items():
        got = float(jax.jit(jnp.sum)(y))
        assert (np.isnan(got) and np.isnan(want)) or got == want, name
