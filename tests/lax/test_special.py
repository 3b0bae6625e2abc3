"""omnistage.lax's special functions against scipy.special (float32 and float64), their
derivatives against JAX's rules and finite differences, vmap against a loop, jit against
eager, and lax's strict typing."""
import numpy as np
import pytest
import scipy.special as ss

import omnistage as jax
from omnistage import lax
from tests.scipy.finite_differences import central_difference as _fd

A = np.array([0.1, 0.5, 1.0, 1.5, 3.0, 7.5, 20.0, 120.0])
X = np.array([0.05, 0.4, 1.0, 2.5, 6.0, 9.0, 25.0, 150.0])
Q = np.array([0.3, 1.0, 2.5, 10.0, -1.5, -7.25, 40.0, 1e3])

# name: (ours, scipy's, operands, (rtol float64, rtol float32))
CASES = {
    "erf": (lax.erf, ss.erf, (np.linspace(-5, 5, 41),), (1e-15, 2e-6)),
    "erfc": (lax.erfc, ss.erfc, (np.linspace(-5, 9, 57),), (1e-13, 2e-5)),
    "erf_inv": (lax.erf_inv, ss.erfinv, (np.linspace(-0.999, 0.999, 41),), (1e-13, 2e-6)),
    "lgamma": (lax.lgamma, ss.gammaln, (np.concatenate([A, X, -Q[4:6]]),), (1e-12, 5e-6)),
    "digamma": (lax.digamma, ss.digamma, (np.concatenate([A, X, -Q[4:6]]),), (1e-12, 5e-5)),
    "igamma": (lax.igamma, ss.gammainc, np.broadcast_arrays(A[:, None], X[None, :]), (1e-12, 5e-5)),
    "igammac": (lax.igammac, ss.gammaincc, np.broadcast_arrays(A[:, None], X[None, :]), (1e-11, 5e-5)),
    "zeta": (lax.zeta, ss.zeta, np.broadcast_arrays(np.array([1.5, 2.0, 3.0, 7.0])[:, None], Q[None, :]), (1e-12, 2e-5)),
    "polygamma": (lax.polygamma, ss.polygamma,
                  np.broadcast_arrays(np.array([0.0, 1.0, 2.0, 5.0])[:, None], np.concatenate([A, -Q[4:6]])[None, :]),
                  (1e-11, 1e-4)),
    "betainc": (lax.betainc, ss.betainc,
                np.broadcast_arrays(A[:5, None, None], A[None, 2:6, None], np.array([0.01, 0.3, 0.5, 0.77, 0.999])[None, None, :]),
                (1e-11, 2e-4)),
    "bessel_i0e": (lax.bessel_i0e, ss.i0e, (np.linspace(-30, 30, 61),), (1e-14, 2e-6)),
    "bessel_i1e": (lax.bessel_i1e, ss.i1e, (np.linspace(-30, 30, 61),), (1e-13, 2e-6)),
}


def _check(name, dtype):
    ours, theirs, args, (rtol64, rtol32) = CASES[name]
    args = [np.array(a, dtype) for a in args]
    got = np.asarray(ours(*args))
    want = theirs(*[a.astype(np.float64) for a in args])
    assert got.dtype == dtype
    finite = np.isfinite(want)
    np.testing.assert_array_equal(np.isfinite(got), finite)
    rtol = rtol64 if dtype == np.float64 else rtol32
    atol = 1e-300 if dtype == np.float64 else 1e-30
    if name in ("lgamma", "digamma", "polygamma"):  # zeros of these: compare absolutely there
        atol = 1e-13 if dtype == np.float64 else 2e-5
    if name == "zeta" and dtype == np.float32:  # zeta(7, -1.5) sums -128 + 128 + ... = 0.0018
        atol = 1e-5
    np.testing.assert_allclose(got[finite], want[finite], rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", CASES)
def test_values_match_scipy_in_float64(name, x64):
    _check(name, np.float64)


@pytest.mark.parametrize("name", CASES)
def test_values_match_scipy_in_float32(name):
    _check(name, np.float32)


def test_igamma_edge_values_are_xlas(x64):
    a = np.array([0.0, 1.0, 1.0, -1.0, np.nan, 2.0, 2.0])
    x = np.array([0.0, 0.0, np.inf, 1.0, 1.0, -1.0, 1e-320])
    np.testing.assert_array_equal(np.asarray(lax.igamma(a, x)), [np.nan, 0.0, 1.0, np.nan, np.nan, np.nan, ss.gammainc(2.0, 1e-320)])
    np.testing.assert_array_equal(np.asarray(lax.igammac(a, x)), [np.nan, 1.0, 0.0, np.nan, np.nan, np.nan, 1.0])


def test_zeta_poles_and_domain(x64):
    got = np.asarray(lax.zeta(np.array([1.0, 2.0, 0.5, 2.5]), np.array([3.0, -2.0, 1.0, -1.5])))
    assert got[0] == np.inf and got[1] == np.inf and np.isnan(got[2]) and np.isnan(got[3])


def test_igamma_derivatives_are_jaxs_rules(x64):
    a, x = np.array([0.5, 2.0, 3.5, 10.0]), np.array([0.3, 4.0, 1.5, 12.0])
    ga = jax.vmap(jax.grad(lax.igamma, argnums=0))(a, x)
    gx = jax.vmap(jax.grad(lax.igamma, argnums=1))(a, x)
    np.testing.assert_allclose(np.asarray(gx), np.exp(-x + (a - 1) * np.log(x) - ss.gammaln(a)), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(ga), np.asarray(lax.igamma_grad_a(a, x)), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(ga), _fd(ss.gammainc, (a, x), 0), rtol=1e-6)
    gcx = jax.vmap(jax.grad(lax.igammac, argnums=1))(a, x)
    np.testing.assert_allclose(np.asarray(gcx), -np.asarray(gx), rtol=1e-12)


def test_random_gamma_grad_is_the_implicit_derivative(x64):
    a, x = np.array([0.5, 2.0, 3.5, 10.0]), np.array([0.3, 4.0, 1.5, 12.0])
    dpdx = np.exp(-x + (a - 1) * np.log(x) - ss.gammaln(a))
    want = -_fd(ss.gammainc, (a, x), 0) / dpdx
    np.testing.assert_allclose(np.asarray(lax.random_gamma_grad(a, x)), want, rtol=1e-6)


@pytest.mark.parametrize("name, closed_form", [
    ("erf", lambda x: 2 / np.sqrt(np.pi) * np.exp(-x * x)),
    ("erfc", lambda x: -2 / np.sqrt(np.pi) * np.exp(-x * x)),
    ("erf_inv", lambda x: np.sqrt(np.pi) / 2 * np.exp(ss.erfinv(x) ** 2)),
    ("lgamma", ss.digamma),
    ("digamma", lambda x: ss.polygamma(1, x)),
    ("bessel_i0e", lambda x: ss.i1e(x) - np.sign(x) * ss.i0e(x)),
    ("bessel_i1e", lambda x: (ss.i0e(x) - ss.i1e(x) * (np.sign(x) + 1 / x))),
])
def test_unary_derivatives_are_jaxs_rules(name, closed_form, x64):
    x = np.array([-0.7, 0.2, 0.45, 0.9]) if name in ("erf_inv",) else np.array([-2.3, 0.3, 1.7, 6.0])
    if name in ("lgamma", "digamma"):
        x = np.array([-2.3, 0.3, 1.7, 6.0, 30.0])
    got = jax.vmap(jax.grad(getattr(lax, name)))(x)
    np.testing.assert_allclose(np.asarray(got), closed_form(x), rtol=1e-10)


def test_polygamma_zeta_and_betainc_derivatives_match_finite_differences(x64):
    x = np.array([0.4, 1.3, 5.0])
    n = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(np.asarray(jax.vmap(jax.grad(lax.polygamma, argnums=1))(n, x)), ss.polygamma(n + 1, x), rtol=1e-10)
    s = np.array([2.0, 3.5, 6.0])
    np.testing.assert_allclose(np.asarray(jax.vmap(jax.grad(lax.zeta, argnums=1))(s, x)), -s * ss.zeta(s + 1, x), rtol=1e-9)
    np.testing.assert_allclose(np.asarray(jax.vmap(jax.grad(lax.zeta, argnums=0))(s, x)), _fd(ss.zeta, (s, x), 0), rtol=1e-6)
    a, b, t = np.array([0.5, 2.0, 7.0]), np.array([1.5, 3.0, 2.0]), np.array([0.2, 0.6, 0.9])
    gx = jax.vmap(jax.grad(lax.betainc, argnums=2))(a, b, t)
    np.testing.assert_allclose(np.asarray(gx), t ** (a - 1) * (1 - t) ** (b - 1) / ss.beta(a, b), rtol=1e-9)
    for i in (0, 1):
        g = jax.vmap(jax.grad(lax.betainc, argnums=i))(a, b, t)
        np.testing.assert_allclose(np.asarray(g), _fd(ss.betainc, (a, b, t), i), rtol=1e-5)


def test_vmap_matches_a_loop_and_jit_matches_eager():
    a = np.float32([0.5, 2.0, 3.5, 10.0])
    x = np.float32([0.3, 4.0, 1.5, 12.0])
    eager = np.asarray(lax.igamma(a, x))
    looped = np.array([np.asarray(lax.igamma(ai, xi)) for ai, xi in zip(a, x)])
    np.testing.assert_allclose(np.asarray(jax.vmap(lax.igamma)(a, x)), looped, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.jit(lax.igamma)(a, x)), eager, rtol=1e-6)
    z = np.float32([-0.5, 0.25, 0.75])
    np.testing.assert_array_equal(np.asarray(jax.jit(lax.erf_inv)(z)), np.asarray(lax.erf_inv(z)))


def test_strict_typing_as_lax(x64):
    with pytest.raises(TypeError, match="same dtypes"):
        lax.igamma(np.float32([1]), np.float64([2]))
    with pytest.raises(TypeError, match="floating-point"):
        lax.lgamma(np.int32(3))
    assert lax.igamma(np.float32([1, 2]), 1.0).dtype == np.float32  # a Python scalar adopts the dtype
