"""The rest of jax.scipy.special (incomplete gamma/beta, zeta, combinatorics, entropies,
Box-Cox, erfcx, dawsn) against scipy.special in float64 and float32; derivatives of the ones
with custom rules against finite differences; jit and vmap like any function."""
import numpy as np
import pytest
import scipy.special as ss

import omnistage as jax
from omnistage.scipy import special as S
from tests.scipy.finite_differences import central_difference as _fd

A = np.array([0.2, 0.5, 1.0, 2.5, 7.0, 30.0])
X = np.array([0.1, 0.5, 1.0, 3.0, 8.0, 40.0])
P = np.array([0.0, 0.1, 0.5, 1.0, 2.0, 0.3])
Qv = np.array([0.0, 0.2, 0.5, 1.5, 0.0, -1.0])
G = np.array([-3.5, -2.0, -0.5, -0.0, 0.0, 0.5, 3.0, 12.5, np.inf])
Z = np.linspace(-12, 30, 85)

# name: (ours, scipy's, args, rtol float64, rtol float32)
CASES = {
    "gammainc": (S.gammainc, ss.gammainc, np.broadcast_arrays(A[:, None], X[None, :]), 1e-12, 5e-5),
    "gammaincc": (S.gammaincc, ss.gammaincc, np.broadcast_arrays(A[:, None], X[None, :]), 1e-11, 5e-5),
    "betainc": (S.betainc, ss.betainc, np.broadcast_arrays(A[:4, None], A[None, 1:5], 0.37), 1e-11, 2e-4),
    "zeta": (S.zeta, ss.zeta, (np.array([2.0, 3.0, 4.5]), np.array([0.5, 3.0, 20.0])), 1e-12, 2e-5),
    "gammasgn": (S.gammasgn, ss.gammasgn, (G,), 0, 0),
    "loggamma": (S.loggamma, lambda x: np.where(x > 0, ss.loggamma(np.where(x > 0, x, 1)), np.nan), (G[5:8],), 1e-12, 5e-6),
    "factorial": (S.factorial, ss.factorial, (np.array([-1.0, 0.0, 1.0, 5.0, 10.0, 20.0]),), 1e-12, 2e-5),
    "comb": (S.comb, ss.comb, (np.array([5.0, 10.0, 3.0, 40.0, 7.5]), np.array([2.0, 3.0, 5.0, 20.0, 2.0])), 1e-11, 2e-5),
    "poch": (S.poch, ss.poch, (np.array([0.5, 2.0, 3.5, 1.0]), np.array([0.0, 2.0, 1.5, 4.0])), 1e-12, 2e-5),
    "multigammaln": (lambda a: S.multigammaln(a, 3), lambda a: ss.multigammaln(a, 3), (np.array([1.5, 2.0, 7.0]),), 1e-12, 5e-6),
    "rel_entr": (S.rel_entr, ss.rel_entr, (P, Qv), 1e-14, 1e-6),
    "kl_div": (S.kl_div, ss.kl_div, (P, Qv), 1e-14, 1e-6),
    "boxcox": (S.boxcox, ss.boxcox, (np.array([0.5, 1.0, 2.0, 9.0]), np.array([0.0, 0.5, -1.0, 2.0])), 1e-14, 1e-6),
    "boxcox1p": (S.boxcox1p, ss.boxcox1p, (np.array([1e-9, 0.5, 2.0, 9.0]), np.array([0.0, 0.5, -1.0, 2.0])), 1e-14, 1e-6),
    "erfcx": (S.erfcx, ss.erfcx, (Z,), 1e-13, 5e-6),
    "dawsn": (S.dawsn, ss.dawsn, (Z,), 1e-13, 5e-6),
    "spence": (S.spence, ss.spence, (np.array([-1, 0, 0.1, 0.4, 0.5, 0.9, 1, 1.3, 1.7, 2.5, 10, 1e3, np.nan]),), 1e-14, 2e-6),
    "owens_t": (S.owens_t, ss.owens_t, (np.array([0.0, 0.3, 1.0, 2.5, -1.5, 0.5, 4.0]), np.array([0.5, 1.0, 2.0, -0.7, 3.0, 0.1, 0.9])),
                1e-12, 2e-5),
    "expn": (S.expn, ss.expn, np.broadcast_arrays(np.array([0.0, 1.0, 2.0, 5.0, 20.0])[:, None],
                                                  np.array([0, 1e-8, 0.1, 0.5, 1.0, 1.5, 3, 10, 41, 200, np.inf])[None, :]),
             1e-13, 5e-6),
    "exp1": (S.exp1, ss.exp1, (np.array([0, 1e-8, 0.1, 0.5, 1.0, 1.5, 3, 10, 41, 80, np.inf]),), 1e-13, 5e-6),
    "expi": (S.expi, ss.expi, (np.array([-np.inf, -50, -3, -0.5, -1e-8, 0, 1e-8, 0.3, 1, 5, 30, 39.9, 40.1, 80, np.inf]),),
             1e-13, 5e-6),
    "hyp1f1": (S.hyp1f1, ss.hyp1f1, (np.array([0.5, 1.0, 2.0, 3.5, 0.0, 2.0, 1.5, 0.3]), np.array([1.5, 2.0, 0.7, 3.5, 1.0, 2.0, 4.0, 2.2]),
                                     np.array([0.3, -2.0, 5.0, 1.0, 3.0, 150.0, 120.0, -6.0])), 1e-10, 5e-5),  # the series cancels for x << 0 (JAX's too)
}


def _check(name, dtype):
    ours, theirs, args, rtol64, rtol32 = CASES[name]
    args = [np.array(a, dtype) for a in args]
    got = np.asarray(ours(*args))
    with np.errstate(over="ignore", under="ignore"):
        want = theirs(*[a.astype(np.float64) for a in args]).astype(dtype)  # over/underflows as in dtype
    assert got.dtype == dtype
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    tiny = np.finfo(dtype).tiny  # subnormal results carry few digits
    np.testing.assert_allclose(got[ok], want[ok], rtol=rtol64 if dtype == np.float64 else rtol32, atol=tiny)


@pytest.mark.parametrize("name", CASES)
def test_values_match_scipy_in_float64(name, x64):
    _check(name, np.float64)


@pytest.mark.parametrize("name", CASES)
def test_values_match_scipy_in_float32(name):
    _check(name, np.float32)


def test_bernoulli_numbers(x64):
    exact = [1, -1 / 2, 1 / 6, 0, -1 / 30, 0, 1 / 42, 0, -1 / 30, 0, 5 / 66, 0, -691 / 2730]  # scipy's B_4 is 2e-12 off
    np.testing.assert_allclose(np.asarray(S.bernoulli(12)), exact, rtol=1e-14, atol=1e-15)
    assert np.asarray(S.bernoulli(1)).tolist() == [1.0, -0.5]


def test_domain_conventions_are_jaxs():
    with pytest.raises(NotImplementedError):
        S.zeta(2.0)
    with pytest.raises(NotImplementedError):
        S.factorial(3.0, exact=True)
    np.testing.assert_allclose(np.asarray(S.comb(4.0, 2.0, repetition=True)), ss.comb(4, 2, repetition=True), rtol=1e-6)


@pytest.mark.parametrize("name, argnums", [
    ("gammainc", (0, 1)), ("gammaincc", (0, 1)), ("poch", (0, 1)), ("erfcx", (0,)), ("dawsn", (0,)),
    ("boxcox", (0, 1)), ("rel_entr", (0, 1)), ("spence", (0,)), ("owens_t", (0, 1)), ("exp1", (0,)), ("expi", (0,)), ("hyp1f1", (0, 1, 2)),
])
def test_derivatives_match_finite_differences(name, argnums, x64):
    f = getattr(S, name)
    args = {"erfcx": (np.array([-1.0, 0.3, 4.0, 30.0]),), "dawsn": (np.array([-1.0, 0.3, 4.0, 9.0]),),
            "poch": (np.array([0.5, 2.0, 3.5]), np.array([0.7, 2.0, 1.5])),
            "boxcox": (np.array([0.5, 2.0, 9.0]), np.array([0.3, -1.0, 2.0])),
            "rel_entr": (np.array([0.1, 0.5, 2.0]), np.array([0.2, 0.5, 1.5])),
            "spence": (np.array([0.2, 0.7, 1.6, 3.0]),),
            "exp1": (np.array([0.2, 0.9, 1.6, 30.0]),), "expi": (np.array([-2.0, 0.7, 1.6, 45.0]),),
            "hyp1f1": (np.array([0.5, 1.0, 2.0]), np.array([1.5, 2.0, 0.7]), np.array([0.3, -2.0, 5.0])),
            "owens_t": (np.array([0.3, 1.0, 2.5]), np.array([0.5, 2.0, -0.7]))}.get(name, (A[:4], X[1:5]))
    for i in argnums:
        got = jax.vmap(jax.grad(f, argnums=i))(*args)
        np.testing.assert_allclose(np.asarray(got), _fd(f, args, i), rtol=1e-6)


def test_jit_and_vmap_agree_with_eager():
    a, x = np.float32([0.5, 2.0, 7.0]), np.float32([1.0, 3.0, 5.0])
    eager = np.asarray(S.gammainc(a, x))
    np.testing.assert_allclose(np.asarray(jax.jit(S.gammainc)(a, x)), eager, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.vmap(S.betainc, in_axes=(0, 0, None))(a, x, np.float32(0.4))),
                               np.asarray(S.betainc(a, x, np.float32(0.4))), rtol=1e-6)


def test_expn_derivative_is_minus_the_next_lower_order(x64):
    n, x = np.array([0.0, 1.0, 2.0, 6.0]), np.array([0.4, 1.5, 0.8, 3.0])
    got = jax.vmap(jax.grad(S.expn, argnums=1))(n, x)
    np.testing.assert_allclose(np.asarray(got), _fd(ss.expn, (n, x), 1), rtol=1e-6)
