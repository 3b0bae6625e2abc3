"""jnp.i0 vs np.i0: values over the whole finite range in float32 and float64, JAX's dtype
rules, special values; its derivative (I1) and second derivative against finite differences;
eagerly, staged, compiled for CPU and batched."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import omnistage
import omnistage.numpy as jnp
from tests.helpers import check_staged

F32_RTOL = 8 * np.finfo(np.float32).eps
F64_RTOL = 10 * np.finfo(np.float64).eps


def test_float32_matches_numpy_up_to_overflow():
    # Past |x| ~ 88.7 e**x alone overflows float32; I0 itself stays finite up to ~91.9.
    x = np.linspace(-91.5, 91.5, 20001).astype(np.float32)
    got = jnp.i0(x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, np.i0(x.astype(np.float64)), rtol=F32_RTOL)


def test_float64_matches_numpy(x64):
    # np.i0 overflows from |x| = 709.8 (its e**x does); stop short of that.
    x = np.concatenate([np.linspace(-45, 45, 30001), np.linspace(45, 709, 3001)])
    got = jnp.i0(x)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, np.i0(x), rtol=F64_RTOL)


def test_float64_stays_finite_until_i0_itself_overflows(x64):
    # I0(713) = 6.705e307 < float64 max, although e**713 overflows.
    got = np.asarray(jnp.i0(np.array([713.0, -713.0, 714.0])))
    np.testing.assert_allclose(got[:2], 6.7051282e307, rtol=1e-7)
    assert got[2] == np.inf


def test_special_values():
    got = np.asarray(jnp.i0(np.array([0.0, -0.0, np.inf, -np.inf, np.nan], np.float32)))
    np.testing.assert_array_equal(got[:4], [1, 1, np.inf, np.inf])
    assert np.isnan(got[4])


@pytest.mark.parametrize(
    "dtype, result",
    [("int32", "float32"), ("bool", "float32"), ("uint8", "float32"), ("float16", "float16"),
     ("bfloat16", "bfloat16"), ("float32", "float32")],
)
def test_dtypes_follow_jax(dtype, result):
    x = np.arange(4).astype(jnp.bfloat16 if dtype == "bfloat16" else dtype)
    got = jnp.i0(x)
    assert got.dtype == np.dtype(jnp.bfloat16 if result == "bfloat16" else result)
    np.testing.assert_allclose(np.asarray(got, np.float64), np.i0(x.astype(np.float64)), rtol=1e-2)


def test_python_scalars_are_weak_and_ints_promote(x64):
    assert jnp.i0(2).dtype == np.float64
    assert jnp.i0(np.float32(2)).dtype == np.float32
    np.testing.assert_allclose(jnp.i0(2), np.i0(2.0), rtol=F64_RTOL)


def test_complex_input_raises():
    with pytest.raises(ValueError, match="real floating-point"):
        jnp.i0(np.ones(2, np.complex64))
    with pytest.raises(TypeError, match="ndarray or scalar"):
        jnp.i0([1.0, 2.0])


def test_staged_and_printed_programs_agree():
    x = np.array([-30.0, -10.5, -1.0, 0.0, 0.25, 9.99, 10.0, 10.01, 55.0], np.float32)
    got = check_staged(jnp.i0, x, rtol=F32_RTOL)
    np.testing.assert_allclose(got, np.i0(x.astype(np.float64)), rtol=F32_RTOL)


def test_compiled_cpu_backend_matches_numpy():
    x = np.linspace(-60, 60, 1001).astype(np.float32)
    got = omnistage.jit(jnp.i0, backend="cpu")(x)
    np.testing.assert_allclose(got, np.i0(x.astype(np.float64)), rtol=F32_RTOL)
    grad = omnistage.jit(omnistage.vmap(omnistage.grad(jnp.i0)), backend="cpu")(x)
    np.testing.assert_allclose(grad, omnistage.vmap(omnistage.grad(jnp.i0))(x), rtol=F32_RTOL)


def _central_difference(f, x, h):
    return (f(x + h) - f(x - h)) / (2 * h)


# Both sides of the switch between the two series (10 in float32, 20 in float64), and 0.
POINTS = [-25.0, -20.5, -19.5, -3.0, -0.5, 0.0, 0.5, 1.0, 7.25, 9.9, 10.1, 19.9, 20.1, 33.0, 150.0]


def test_grad_is_i1_against_finite_differences(x64):
    x = np.array(POINTS)
    h = 1e-6 * np.maximum(1.0, np.abs(x))
    want = _central_difference(np.i0, x, h)
    got = omnistage.vmap(omnistage.grad(jnp.i0))(x)
    np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-9)
    for xi, wi in zip(x, want):
        np.testing.assert_allclose(float(omnistage.grad(jnp.i0)(float(xi))), wi, rtol=1e-8, atol=1e-9)


def test_second_derivative_against_finite_differences(x64):
    x = np.array(POINTS)
    h = 1e-4  # truncation error ~h**2/12 relative (I0 grows like e**x), rounding ~eps/h**2
    want = (np.i0(x + h) - 2 * np.i0(x) + np.i0(x - h)) / h**2
    got = omnistage.vmap(omnistage.grad(omnistage.grad(jnp.i0)))(x)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert float(omnistage.grad(omnistage.grad(jnp.i0))(0.0)) == pytest.approx(0.5, rel=1e-14)


def test_grad_matches_scipy_i1(x64):
    special = pytest.importorskip("scipy.special")
    x = np.linspace(-700, 700, 20001)
    np.testing.assert_allclose(omnistage.vmap(omnistage.grad(jnp.i0))(x), special.i1(x), rtol=F64_RTOL, atol=0)


def test_grad_float32_is_finite_and_accurate_on_both_branches():
    x = np.linspace(-80, 80, 3201).astype(np.float32)
    got = np.asarray(omnistage.vmap(omnistage.grad(jnp.i0))(x))
    assert np.all(np.isfinite(got))
    # I1 = I0' is odd and lies within (0, I0) for x > 0.
    np.testing.assert_array_equal(got, -got[::-1])
    positive = x > 0
    assert np.all((got[positive] > 0) & (got[positive] < np.asarray(jnp.i0(x))[positive]))


def test_jvp_and_vjp_agree():
    x = np.array([0.3, -4.0, 12.0], np.float32)
    t = np.array([1.0, 2.0, -1.0], np.float32)
    _, tangent = omnistage.jvp(jnp.i0, (x,), (t,))
    _, pullback = omnistage.vjp(jnp.i0, x)
    (cotangent,) = pullback(t)
    np.testing.assert_allclose(tangent, cotangent, rtol=1e-6)


def test_vmap_matches_a_python_loop():
    xs = np.linspace(-15, 15, 24).astype(np.float32).reshape(4, 6)

    def f(row):
        return jnp.sum(jnp.i0(row) * row)

    batched = omnistage.vmap(f)(xs)
    np.testing.assert_allclose(batched, np.stack([np.asarray(f(r)) for r in xs]), rtol=1e-6)
    np.testing.assert_allclose(
        omnistage.vmap(omnistage.grad(f), in_axes=1, out_axes=1)(xs),
        np.stack([np.asarray(omnistage.grad(f)(c)) for c in xs.T], axis=1),
        rtol=1e-6,
    )


@settings(max_examples=40, deadline=None)
@given(st.floats(-91.0, 91.0, width=32, allow_subnormal=False))
def test_random_float32_values_match_numpy_and_are_even(x):
    x = np.float32(x)
    got = float(jnp.i0(x))
    assert got == float(jnp.i0(-x))
    np.testing.assert_allclose(got, np.i0(np.float64(x)), rtol=F32_RTOL)
