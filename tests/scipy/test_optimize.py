"""omnistage.scipy.optimize.minimize (BFGS): the same iterates as JAX 0.10.2's (results pinned
from JAX for the same problems, its failures included), eager and jitted."""
import numpy as np
import pytest

import omnistage as jax
import omnistage.numpy as jnp
from omnistage.scipy.optimize import minimize

A = np.array([[3.0, 1, 0], [1, 4, 1], [0, 1, 2]])
B = np.array([1.0, -2, 3])


def rosen(x):
    return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def quadratic(x, a, b):
    return 0.5 * x @ a @ x - b @ x


# (function, x0, args, JAX's x, success, status, nit, nfev)
CASES = {
    "quadratic": (quadratic, np.zeros(3), (A, B), [0.736842, -1.21052625, 2.10526306], True, 0, 10, 11),
    "rosen3": (rosen, np.array([0.5, 0.5, 0.5]), (), [0.96846392, 0.93320672, 0.86584026], False, 3, 13, 23),
}


@pytest.mark.parametrize("name", CASES)
def test_bfgs_follows_jax(name, x64):
    fun, x0, args, x, success, status, nit, nfev = CASES[name]
    r = minimize(fun, x0, args, method="BFGS")
    np.testing.assert_allclose(np.asarray(r.x), x, atol=1e-7)
    assert (bool(r.success), int(r.status), int(r.nit), int(r.nfev)) == (success, status, nit, nfev)


def test_quadratic_minimum_is_the_solution(x64):
    r = minimize(quadratic, np.zeros(3), (A, B), method="BFGS")
    np.testing.assert_allclose(np.asarray(r.x), np.linalg.solve(A, B), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(r.jac), 0, atol=1e-5)


@pytest.mark.slow
def test_jit_gives_the_eager_result(x64):
    eager = minimize(quadratic, np.zeros(3), (A, B), method="BFGS")
    jitted = jax.jit(lambda x0: minimize(quadratic, x0, (A, B), method="BFGS"))(np.zeros(3))
    np.testing.assert_allclose(np.asarray(jitted.x), np.asarray(eager.x), rtol=1e-10)
    assert int(jitted.nit) == int(eager.nit)


def test_argument_errors():
    with pytest.raises(ValueError, match="not recognized"):
        minimize(rosen, np.zeros(2), method="Nelder-Mead")
    with pytest.raises(TypeError, match="must be a tuple"):
        minimize(quadratic, np.zeros(3), [A, B], method="BFGS")
