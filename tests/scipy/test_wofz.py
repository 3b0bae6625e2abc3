"""scipy.special.wofz (the Faddeeva function) against SciPy in both half-planes and precisions,
its derivative against w'(z) = -2 z w(z) + 2i / sqrt(pi), jit and vmap against eager."""
import numpy as np
import pytest
import scipy.special as sp

import omnistage as jax
from omnistage.scipy import special as S


def _points(rng, n=300, scale=3.0):
    return (rng.standard_normal(n) + 1j * rng.standard_normal(n)) * scale


def test_wofz_matches_scipy_in_complex128(x64):
    rng = np.random.default_rng(0)
    z = np.concatenate([_points(rng), _points(rng, 50, 0.05), _points(rng, 50, 200.0).real + 1j * np.abs(_points(rng, 50, 200.0).imag)])
    got = np.asarray(S.wofz(z))
    ref = sp.wofz(z)
    assert got.dtype == np.complex128
    np.testing.assert_allclose(got, ref, rtol=5e-14, atol=0)


def test_wofz_matches_scipy_in_complex64_where_finite():
    rng = np.random.default_rng(1)
    z = _points(rng).astype(np.complex64)
    got = np.asarray(jax.jit(S.wofz)(z))
    ref = sp.wofz(z.astype(np.complex128))
    assert got.dtype == np.complex64
    fits = np.abs(ref) < 1e30  # below the real axis w grows like exp(y**2): float32 overflows
    np.testing.assert_allclose(got[fits], ref[fits], rtol=1e-5, atol=0)


def test_wofz_of_reals_is_complex():
    got = np.asarray(S.wofz(np.array([0.0, 1.0, -2.0], np.float32)))
    assert got.dtype == np.complex64
    np.testing.assert_allclose(got, sp.wofz(np.array([0.0, 1.0, -2.0])), rtol=2e-6)
    assert abs(got[0] - 1) <= 2.4e-7  # w(0) = 1, within two float32 ulps


def test_wofz_derivative_is_the_differential_equation(x64):
    z = np.array([0.3 + 0.4j, -1.2 + 0.1j, 2.0 - 0.5j, -0.7 - 1.1j])
    w = sp.wofz(z)
    want = -2 * z * w + 2j / np.sqrt(np.pi)
    _, tangent = jax.jvp(S.wofz, (z,), (np.ones_like(z),))
    np.testing.assert_allclose(np.asarray(tangent), want, rtol=1e-12)


def test_wofz_vmap_and_jit_agree_with_eager():
    z = _points(np.random.default_rng(2), 12).astype(np.complex64).reshape(3, 4)
    eager = np.asarray(S.wofz(z))
    np.testing.assert_allclose(np.asarray(jax.vmap(S.wofz)(z)), eager, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.jit(jax.vmap(S.wofz))(z)), eager, rtol=1e-6)


def test_wofz_rejects_non_numbers():
    with pytest.raises((TypeError, ValueError)):  # JAX: NumPy's ValueError for a string
        S.wofz("1+2j")
