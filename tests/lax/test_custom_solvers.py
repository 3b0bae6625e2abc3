"""lax.custom_root and lax.custom_linear_solve: the solver runs forward only, derivatives come
from the implicit function theorem (checked against closed forms, finite differences and the
derivative of a direct solve), in forward and reverse mode, under jit and vmap."""
import numpy as np
import omnistage as jax
import omnistage.numpy as jnp
from omnistage import lax


def binary_search(func, x0, low=0.0, high=100.0):
    """JAX's documentation example: a solver autodiff cannot go through (a while loop)."""
    del x0

    def cond(state):
        lo, hi = state
        mid = 0.5 * (lo + hi)
        return (lo < mid) & (mid < hi)

    def body(state):
        lo, hi = state
        mid = 0.5 * (lo + hi)
        upper = func(mid) > 0
        return jnp.where(upper, lo, mid), jnp.where(upper, mid, hi)

    return lax.while_loop(cond, body, (low, high))[0]


def scalar_solve(g, y):
    return y / g(1.0)


def sqrt_cubed(x):
    return lax.custom_root(lambda y: y ** 2 - x ** 3, 1.0, binary_search, scalar_solve)


def test_custom_root_value_and_implicit_derivative_in_both_modes():
    value, grad = jax.value_and_grad(sqrt_cubed)(5.0)
    np.testing.assert_allclose(value, 5.0 ** 1.5, rtol=1e-6)
    np.testing.assert_allclose(grad, 1.5 * 5.0 ** 0.5, rtol=1e-5)
    _, tangent = jax.jvp(sqrt_cubed, (5.0,), (1.0,))
    np.testing.assert_allclose(tangent, 1.5 * 5.0 ** 0.5, rtol=1e-5)
    np.testing.assert_allclose(jax.jit(jax.grad(sqrt_cubed), backend="interpreter")(5.0), grad, rtol=1e-6)
    xs = jnp.array([4.0, 9.0])
    np.testing.assert_allclose(jax.vmap(jax.grad(sqrt_cubed))(xs), [jax.grad(sqrt_cubed)(x) for x in xs], rtol=1e-6)


def test_custom_root_with_aux_and_a_pytree_guess():
    def solve(f, x0):
        a = binary_search(lambda v: f({"v": v})["v"], x0)
        return {"v": a}, jnp.float32(7.0)

    def f(c):
        sol, aux = lax.custom_root(lambda t: {"v": t["v"] - c * 2.0}, {"v": 0.0}, solve,
                                   lambda g, y: {"v": y["v"] / g({"v": 1.0})["v"]}, has_aux=True)
        return sol["v"] + aux

    np.testing.assert_allclose(f(3.0), 13.0, rtol=1e-6)
    np.testing.assert_allclose(jax.grad(f)(3.0), 2.0, rtol=1e-6)


A = np.array([[4.0, 1.0], [2.0, 3.0]], np.float32)
B = np.array([1.0, 2.0], np.float32)


def jacobi(matvec, b, iters=60):
    """An iterative solver (a loop autodiff would otherwise have to go through)."""
    diag = jnp.array([4.0, 3.0])
    return lax.fori_loop(0, iters, lambda i, x: x + (b - matvec(x)) / diag, jnp.zeros_like(b))


def jacobi_t(vecmat, b, iters=60):
    diag = jnp.array([4.0, 3.0])
    return lax.fori_loop(0, iters, lambda i, x: x + (b - vecmat(x)) / diag, jnp.zeros_like(b))


def solve_with(a, b):
    return lax.custom_linear_solve(lambda x: a @ x, b, jacobi, transpose_solve=jacobi_t)


def test_custom_linear_solve_matches_a_direct_solve_and_its_derivatives():
    a, b = jnp.asarray(A), jnp.asarray(B)
    np.testing.assert_allclose(solve_with(a, b), np.linalg.solve(A, B), rtol=1e-5)
    loss = lambda a, b: jnp.sum(solve_with(a, b) ** 2)
    direct = lambda a, b: jnp.sum(jnp.linalg.solve(a, b) ** 2)
    for got, want in zip(jax.grad(loss, argnums=(0, 1))(a, b), jax.grad(direct, argnums=(0, 1))(a, b)):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
    ta = jnp.ones((2, 2))
    np.testing.assert_allclose(jax.jvp(lambda m: solve_with(m, b), (a,), (ta,))[1],
                               jax.jvp(lambda m: jnp.linalg.solve(m, b), (a,), (ta,))[1], rtol=1e-4)
    np.testing.assert_allclose(jax.jit(jax.grad(loss), backend="interpreter")(a, b), jax.grad(direct)(a, b), rtol=1e-4)
    bs = jnp.stack([b, 2 * b, -b])
    np.testing.assert_allclose(jax.vmap(lambda v: solve_with(a, v))(bs),
                               [np.linalg.solve(A, np.asarray(v)) for v in bs],
                               rtol=1e-5)


def test_custom_linear_solve_symmetric_and_without_transpose_solve():
    s = jnp.array([[3.0, 1.0], [1.0, 2.0]])
    b = jnp.asarray(B)
    direct = lambda mv, r: jnp.linalg.solve(s, r)  # noqa: E731
    f = lambda b: jnp.sum(lax.custom_linear_solve(lambda x: s @ x, b, direct, symmetric=True))  # noqa: E731
    np.testing.assert_allclose(jax.grad(f)(b), np.linalg.solve(np.asarray(s).T, np.ones(2)), rtol=1e-5)
    g = lambda b: jnp.sum(lax.custom_linear_solve(lambda x: s @ x, b, lambda mv, r: jnp.linalg.solve(s, r)))
    np.testing.assert_allclose(g(b), np.linalg.solve(np.asarray(s), np.asarray(b)).sum(), rtol=1e-6)
    # without transpose_solve (JAX raises here) reverse mode goes through the differentiable solve
    np.testing.assert_allclose(jax.grad(g)(b), np.linalg.solve(np.asarray(s).T, np.ones(2)), rtol=1e-5)


def test_custom_linear_solve_with_aux():
    a, b = jnp.asarray(A), jnp.asarray(B)

    def solve(mv, r):
        x = jnp.linalg.solve(jax.jacfwd(mv)(r), r)
        return x, jnp.sum(x)

    def f(a, b):
        x, aux = lax.custom_linear_solve(lambda v: a @ v, b, solve, transpose_solve=solve, has_aux=True)
        return jnp.sum(x ** 2) + 0.0 * aux, aux

    (val, aux), g = jax.value_and_grad(f, has_aux=True)(a, b)
    x = np.linalg.solve(A, B)
    np.testing.assert_allclose(aux, x.sum(), rtol=1e-5)
    np.testing.assert_allclose(val, (x ** 2).sum(), rtol=1e-5)
    np.testing.assert_allclose(g, jax.grad(lambda a: jnp.sum(jnp.linalg.solve(a, b) ** 2))(a), rtol=1e-4)
