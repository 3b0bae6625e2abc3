"""omnistage.scipy.stats against scipy.stats: every provided function of every distribution
in 64 bits, a gradient against finite differences, vmap."""
import numpy as np
import pytest
import scipy.stats as st

import omnistage as jax
from omnistage.scipy import stats as S

RS = np.random.RandomState(0)
X = RS.randn(20) * 2
U = RS.rand(20)
POS = RS.rand(20) * 5 + 0.1
COV = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, 0.2], [0.1, 0.2, 0.5]])
MEAN = np.array([0.1, -0.2, 0.3])
ALPHA = np.array([1.5, 2.0, 3.0])
SIMPLEX = RS.dirichlet(ALPHA, 4).T

CASES = {
    "norm.logpdf": (lambda: S.norm.logpdf(X, 0.3, 1.7), lambda: st.norm.logpdf(X, 0.3, 1.7)),
    "norm.pdf": (lambda: S.norm.pdf(X, 0.3, 1.7), lambda: st.norm.pdf(X, 0.3, 1.7)),
    "norm.cdf": (lambda: S.norm.cdf(X, 0.3, 1.7), lambda: st.norm.cdf(X, 0.3, 1.7)),
    "norm.logcdf": (lambda: S.norm.logcdf(X), lambda: st.norm.logcdf(X)),
    "norm.sf": (lambda: S.norm.sf(X), lambda: st.norm.sf(X)),
    "norm.logsf": (lambda: S.norm.logsf(X), lambda: st.norm.logsf(X)),
    "norm.ppf": (lambda: S.norm.ppf(U, 1, 2), lambda: st.norm.ppf(U, 1, 2)),
    "norm.isf": (lambda: S.norm.isf(U), lambda: st.norm.isf(U)),
    "multivariate_normal.logpdf": (lambda: S.multivariate_normal.logpdf(RS.randn(5, 3) * 0 + X[:15].reshape(5, 3), MEAN, COV),
                                   lambda: st.multivariate_normal.logpdf(X[:15].reshape(5, 3), MEAN, COV)),
    "multivariate_normal.pdf_scalar": (lambda: S.multivariate_normal.pdf(X, 0.5, 2.0), lambda: st.norm.pdf(X, 0.5, np.sqrt(2.0))),
    "bernoulli.logpmf": (lambda: S.bernoulli.logpmf(np.array([0, 1, 1, 2]), 0.3), lambda: st.bernoulli.logpmf([0, 1, 1, 2], 0.3)),
    "bernoulli.cdf": (lambda: S.bernoulli.cdf(np.array([-1.0, 0, 0.5, 1, 2]), 0.3), lambda: st.bernoulli.cdf([-1.0, 0, 0.5, 1, 2], 0.3)),
    "bernoulli.ppf": (lambda: S.bernoulli.ppf(U, 0.3), lambda: st.bernoulli.ppf(U, 0.3)),
    "beta.logpdf": (lambda: S.beta.logpdf(U, 2.5, 0.7), lambda: st.beta.logpdf(U, 2.5, 0.7)),
    "gamma.logpdf": (lambda: S.gamma.logpdf(POS, 2.5, 0.1, 1.3), lambda: st.gamma.logpdf(POS, 2.5, 0.1, 1.3)),
    "t.logpdf": (lambda: S.t.logpdf(X, 3.5, 0.2, 1.1), lambda: st.t.logpdf(X, 3.5, 0.2, 1.1)),
    "uniform.logpdf": (lambda: S.uniform.logpdf(X, -1, 2), lambda: st.uniform.logpdf(X, -1, 2)),
    "uniform.cdf": (lambda: S.uniform.cdf(X, -1, 2), lambda: st.uniform.cdf(X, -1, 2)),
    "uniform.ppf": (lambda: S.uniform.ppf(U, -1, 2), lambda: st.uniform.ppf(U, -1, 2)),
    "poisson.logpmf": (lambda: S.poisson.logpmf(np.arange(10.0), 3.3), lambda: st.poisson.logpmf(np.arange(10), 3.3)),
    "cauchy.logpdf": (lambda: S.cauchy.logpdf(X, 1, 2), lambda: st.cauchy.logpdf(X, 1, 2)),
    "cauchy.cdf": (lambda: S.cauchy.cdf(X, 1, 2), lambda: st.cauchy.cdf(X, 1, 2)),
    "cauchy.logsf": (lambda: S.cauchy.logsf(X), lambda: st.cauchy.logsf(X)),
    "cauchy.ppf": (lambda: S.cauchy.ppf(U), lambda: st.cauchy.ppf(U)),
    "cauchy.isf": (lambda: S.cauchy.isf(U), lambda: st.cauchy.isf(U)),
    "laplace.logpdf": (lambda: S.laplace.logpdf(X, 1, 2), lambda: st.laplace.logpdf(X, 1, 2)),
    "laplace.cdf": (lambda: S.laplace.cdf(X, 1, 2), lambda: st.laplace.cdf(X, 1, 2)),
    "logistic.logpdf": (lambda: S.logistic.logpdf(X, 1, 2), lambda: st.logistic.logpdf(X, 1, 2)),
    "logistic.cdf": (lambda: S.logistic.cdf(X, 1, 2), lambda: st.logistic.cdf(X, 1, 2)),
    "logistic.sf": (lambda: S.logistic.sf(X), lambda: st.logistic.sf(X)),
    "logistic.ppf": (lambda: S.logistic.ppf(U, 1, 2), lambda: st.logistic.ppf(U, 1, 2)),
    "logistic.isf": (lambda: S.logistic.isf(U), lambda: st.logistic.isf(U)),
    "dirichlet.logpdf": (lambda: S.dirichlet.logpdf(SIMPLEX, ALPHA), lambda: st.dirichlet.logpdf(SIMPLEX, ALPHA)),
    "dirichlet.logpdf_k-1": (lambda: S.dirichlet.logpdf(SIMPLEX[:2], ALPHA), lambda: st.dirichlet.logpdf(SIMPLEX, ALPHA)),
    # the incomplete gamma and beta functions' distributions
    "gamma.cdf": (lambda: S.gamma.cdf(X, 2.5, -0.5, 1.3), lambda: st.gamma.cdf(X, 2.5, -0.5, 1.3)),
    "gamma.sf": (lambda: S.gamma.sf(X, 2.5, -0.5, 1.3), lambda: st.gamma.sf(X, 2.5, -0.5, 1.3)),
    "gamma.logcdf": (lambda: S.gamma.logcdf(POS, 0.7), lambda: st.gamma.logcdf(POS, 0.7)),
    "gamma.logsf": (lambda: S.gamma.logsf(POS, 0.7), lambda: st.gamma.logsf(POS, 0.7)),
    "beta.cdf": (lambda: S.beta.cdf(X / 4, 2.5, 0.7), lambda: st.beta.cdf(X / 4, 2.5, 0.7)),
    "beta.sf": (lambda: S.beta.sf(U, 2.5, 0.7, -0.1, 1.5), lambda: st.beta.sf(U, 2.5, 0.7, -0.1, 1.5)),
    "beta.logcdf": (lambda: S.beta.logcdf(U, 0.4, 3.0), lambda: st.beta.logcdf(U, 0.4, 3.0)),
    "beta.logsf": (lambda: S.beta.logsf(U, 0.4, 3.0), lambda: st.beta.logsf(U, 0.4, 3.0)),
    "chi2.logpdf": (lambda: S.chi2.logpdf(POS, 3.0, 0.05, 1.2), lambda: st.chi2.logpdf(POS, 3.0, 0.05, 1.2)),
    "chi2.pdf": (lambda: S.chi2.pdf(POS, 4.5), lambda: st.chi2.pdf(POS, 4.5)),
    "chi2.cdf": (lambda: S.chi2.cdf(X, 3.0, -1.0, 1.2), lambda: st.chi2.cdf(X, 3.0, -1.0, 1.2)),
    "chi2.sf": (lambda: S.chi2.sf(X, 3.0, -1.0, 1.2), lambda: st.chi2.sf(X, 3.0, -1.0, 1.2)),
    "chi2.logcdf": (lambda: S.chi2.logcdf(POS, 1.5), lambda: st.chi2.logcdf(POS, 1.5)),
    "chi2.logsf": (lambda: S.chi2.logsf(POS, 1.5), lambda: st.chi2.logsf(POS, 1.5)),
    "poisson.cdf": (lambda: S.poisson.cdf(np.arange(-2.0, 12.0, 0.5), 3.3), lambda: st.poisson.cdf(np.arange(-2.0, 12.0, 0.5), 3.3)),
    "poisson.pmf": (lambda: S.poisson.pmf(np.arange(10.0), 3.3), lambda: st.poisson.pmf(np.arange(10), 3.3)),
    "norm.sf_loc": (lambda: S.norm.sf(X, 0.3, 1.7), lambda: st.norm.sf(X, 0.3, 1.7)),
    "cauchy.sf": (lambda: S.cauchy.sf(X, 1, 2), lambda: st.cauchy.sf(X, 1, 2)),
    "cauchy.logcdf": (lambda: S.cauchy.logcdf(X, 1, 2), lambda: st.cauchy.logcdf(X, 1, 2)),
    "laplace.pdf": (lambda: S.laplace.pdf(X, 1, 2), lambda: st.laplace.pdf(X, 1, 2)),
    "t.pdf": (lambda: S.t.pdf(X, 3.5, 0.2, 1.1), lambda: st.t.pdf(X, 3.5, 0.2, 1.1)),
}


@pytest.mark.parametrize("name", CASES)
def test_matches_scipy_stats(name, x64):
    ours, theirs = CASES[name]
    got, want = np.asarray(ours()), np.asarray(theirs())
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_multivariate_normal_gradient_matches_finite_differences(x64):
    x = np.array([0.4, -0.1, 0.9])
    f = lambda m: S.multivariate_normal.logpdf(x, m, COV)  # noqa: E731
    g = np.asarray(jax.grad(f)(MEAN))
    np.testing.assert_allclose(g, np.linalg.solve(COV, x - MEAN), rtol=1e-10)


def test_logpdfs_vmap_like_a_loop():
    xs = X.astype(np.float32).reshape(4, 5)
    got = jax.vmap(lambda x: S.t.logpdf(x, 3.0) + S.norm.logcdf(x))(xs)
    want = np.stack([np.asarray(S.t.logpdf(x, 3.0) + S.norm.logcdf(x)) for x in xs])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


def test_incomplete_gamma_cdfs_differentiate_like_their_densities(x64):
    """d/dx cdf = pdf (JAX's rule for igamma and betainc in x), under vmap."""
    np.testing.assert_allclose(np.asarray(jax.vmap(jax.grad(S.gamma.cdf), (0, None))(POS, 2.5)), st.gamma.pdf(POS, 2.5), rtol=1e-10)
    np.testing.assert_allclose(np.asarray(jax.vmap(jax.grad(S.beta.cdf), (0, None, None))(U, 2.5, 0.7)), st.beta.pdf(U, 2.5, 0.7), rtol=1e-8)
    np.testing.assert_allclose(np.asarray(jax.vmap(jax.grad(S.chi2.sf), (0, None))(POS, 3.0)), -st.chi2.pdf(POS, 3.0), rtol=1e-10)
