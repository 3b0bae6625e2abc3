"""`omnistage.scipy.stats`, as `jax.scipy.stats`: one module per distribution with SciPy's
function names (logpdf/pdf/cdf/... or logpmf/pmf/...), compositions of numpy and special."""
from . import (  # noqa: F401
    bernoulli, beta, cauchy, chi2, dirichlet, gamma, laplace, logistic, multivariate_normal, norm, poisson, t,
    uniform,
)
