"""omnistage.scipy.special against scipy.special (64-bit values over wide ranges, 32-bit
values), derivatives against the closed forms, vmap and jit like any function."""
import numpy as np
import pytest
import scipy.special as ss

import omnistage as jax
from omnistage.scipy import special as S

X = np.concatenate([np.linspace(-30, 30, 601), [-1e-300, 1e-8, 0.5, 1, 2, 100, 700]])
POS = np.concatenate([np.linspace(1e-6, 50, 500), [1e-10, 0.5, 1.5, 3, 170, 1e5]])
NEG = np.linspace(-9.7, 0.3, 333)  # no poles sampled
U = np.concatenate([np.linspace(1e-12, 1 - 1e-12, 999), [1e-300, 1e-20, 1e-5]])

CASES = {
    "erf": (S.erf, ss.erf, X, 1e-15), "erfc": (S.erfc, ss.erfc, X, 1e-14),
    "erfinv": (S.erfinv, ss.erfinv, 2 * U - 1, 1e-13), "ndtr": (S.ndtr, ss.ndtr, X, 1e-14),
    "ndtri": (S.ndtri, ss.ndtri, U, 1e-14), "log_ndtr": (S.log_ndtr, ss.log_ndtr, np.linspace(-40, 7, 471), 1e-10),
    "gammaln": (S.gammaln, ss.gammaln, np.concatenate([POS, NEG]), 1e-12),
    "digamma": (S.digamma, ss.digamma, np.concatenate([POS, NEG]), 1e-12),
    "trigamma": (lambda x: S.polygamma(1, x), lambda x: ss.polygamma(1, x), np.concatenate([POS, NEG]), 1e-12),
    "gamma": (S.gamma, ss.gamma, np.concatenate([POS[:100], NEG]), 1e-13),
    "i0e": (S.i0e, ss.i0e, X, 1e-14), "i1e": (S.i1e, ss.i1e, X, 1e-13), "i1": (S.i1, ss.i1, X[np.abs(X) < 600], 1e-13),
    "expit": (S.expit, ss.expit, X, 1e-15), "logit": (S.logit, ss.logit, U, 1e-13),
    "betaln": (lambda a: S.betaln(a, 2.5), lambda a: ss.betaln(a, 2.5), POS[:400], 1e-12),
    "entr": (S.entr, ss.entr, np.concatenate([POS, [0.0, -1.0]]), 1e-14),
}


@pytest.mark.parametrize("name", CASES)
def test_values_match_scipy_in_64_bits(name, x64):
    ours, theirs, x, rtol = CASES[name]
    got, want = np.asarray(ours(x)), theirs(x)
    assert got.dtype == np.float64
    finite = np.isfinite(want)
    np.testing.assert_array_equal(np.isfinite(got), finite)
    np.testing.assert_allclose(got[finite], want[finite], rtol=rtol, atol=1e-300 if name not in ("gammaln", "digamma", "log_ndtr") else 1e-14)


@pytest.mark.parametrize("name", ["erf", "erfc", "erfinv", "ndtr", "ndtri", "gammaln", "digamma", "i0e", "i1e", "logit"])
def test_values_in_32_bits(name):
    ours, theirs, x, _ = CASES[name]
    x = x[(np.abs(x) < 20) & (np.abs(x) > 1e-30)]
    got = ours(x.astype(np.float32))
    assert got.dtype == np.float32
    want = theirs(x.astype(np.float32).astype(np.float64))
    finite = np.isfinite(want) & (np.abs(want) > 1e-30)
    np.testing.assert_allclose(np.asarray(got)[finite], want[finite], rtol=2e-4, atol=2e-6)


DERIVATIVES = {
    "erf": (S.erf, lambda x: 2 / np.sqrt(np.pi) * np.exp(-x * x), X),
    "erfc": (S.erfc, lambda x: -2 / np.sqrt(np.pi) * np.exp(-x * x), X),
    "erfinv": (S.erfinv, lambda x: np.sqrt(np.pi) / 2 * np.exp(ss.erfinv(x) ** 2), 2 * U[10:-13] - 1),
    "gammaln": (S.gammaln, ss.digamma, POS),
    "digamma": (S.digamma, lambda x: ss.polygamma(1, x), POS),
    "i0e": (S.i0e, lambda x: ss.i1e(x) - np.sign(x) * ss.i0e(x), X),
    "i1e": (S.i1e, lambda x: ss.i0e(x) - ss.i1e(x) * (np.sign(x) + 1 / x), X[X != 0]),
    "log_ndtr": (S.log_ndtr, lambda x: np.exp(-x * x / 2 - ss.log_ndtr(x)) / np.sqrt(2 * np.pi), np.linspace(-40, 7, 48)),
    "logit": (S.logit, lambda x: 1 / (x * (1 - x)), U[1:-3]),
}


@pytest.mark.parametrize("name", DERIVATIVES)
def test_derivatives_match_closed_forms(name, x64):
    fun, derivative, x = DERIVATIVES[name]
    got = np.asarray(jax.vmap(jax.grad(fun))(x))
    np.testing.assert_allclose(got, derivative(x), rtol=1e-8, atol=1e-300)


def test_second_derivative_of_gammaln_is_trigamma(x64):
    x = np.array([0.3, 1.0, 2.5, 10.0, -1.5])
    np.testing.assert_allclose(np.asarray(jax.vmap(jax.grad(jax.grad(S.gammaln)))(x)), ss.polygamma(1, x), rtol=1e-10)


def test_xlogy_and_xlog1py_follow_scipy_at_zero():
    np.testing.assert_array_equal(np.asarray(S.xlogy(np.array([0.0, 0.0, 1.0]), np.array([0.0, np.nan, 2.0]))),
                                  ss.xlogy([0.0, 0.0, 1.0], [0.0, np.nan, 2.0]).astype(np.float32))
    assert float(S.xlog1py(0.0, -1.0)) == 0.0
    gx, gy = jax.grad(S.xlogy, argnums=(0, 1))(0.0, 1.0)
    assert float(gx) == 0.0 and float(gy) == 0.0
    gx, gy = jax.grad(S.xlogy, argnums=(0, 1))(2.0, 3.0)
    np.testing.assert_allclose([float(gx), float(gy)], [np.log(3.0), 2 / 3], rtol=1e-6)


def test_jit_matches_eager():
    x = np.linspace(-3, 3, 11).astype(np.float32)
    f = lambda x: S.erf(x) + S.gammaln(x + 4) + S.i1e(x) + S.log_ndtr(x)  # noqa: E731
    np.testing.assert_allclose(np.asarray(jax.jit(f, backend="cpu")(x)), np.asarray(f(x)), rtol=1e-5, atol=1e-6)


def test_logsumexp_is_exported():
    np.testing.assert_allclose(float(S.logsumexp(np.array([1.0, 2.0, 3.0]))), ss.logsumexp([1.0, 2.0, 3.0]), rtol=1e-6)
