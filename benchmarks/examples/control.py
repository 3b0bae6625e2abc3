"""Port of JAX's examples/control.py (removed from JAX in 2022, commit eadc346): model-predictive
non-linear control. `trajectory` unrolls the dynamics in a `lax.fori_loop`; `lqr_solve` is the
backward Riccati recursion (a `fori_loop` of 2x2 `jnp.linalg.solve`s); `ilqr` fits a control
sequence by iterated LQR on a local quadratic model (per time step, `jacfwd` of `grad` of the
cost and the Jacobians of the dynamics, under `vmap`); `mpc_predict` re-solves iLQR from each
step's state (iLQR inside a `fori_loop`). The original has no driver: its test file does.

Timed, jitted (the original runs them eagerly from its tests), on the test file's problems and
horizons (T = 10): `trajectory`, `lqr_solve` and `lqr_predict` on its 2-D LQR problem, `ilqr`
(7 iterations) and `mpc_predict` (iLQR with 7 iterations per step) on its 1-D non-linear
problem, and `mpc_predict` (3 iterations) on the 2-D LQR problem written as a general cost.
Each result is checked against the test file's expected values. lqr_solve reads `spec.Q[T + 1]`,
one past the end, which JAX (and omnistage, following it) clamps to the last step.
"""
import collections
from functools import partial

from benchmarks.examples import common

if common.BACKEND == "jax":
    import jax.numpy as jnp
    from jax import grad, jacfwd, jacobian, jit, lax, vmap
else:
    import omnistage.numpy as jnp
    from omnistage import grad, jacfwd, jacobian, jit, lax, vmap

import numpy as np

EXAMPLE = "control"

ControlSpec = collections.namedtuple(
    'ControlSpec', 'cost dynamics horizon state_dim control_dim')

LqrSpec = collections.namedtuple('LqrSpec', 'Q q R r M A B')


dot = jnp.dot
mm = jnp.matmul


def mv(mat, vec):
    assert mat.ndim == 2
    assert vec.ndim == 1
    return dot(mat, vec)


LOOP_VIA_SCAN = False


def fori_loop(lo, hi, loop, init):
    if LOOP_VIA_SCAN:
        return scan_fori_loop(lo, hi, loop, init)
    else:
        return lax.fori_loop(lo, hi, loop, init)


def scan_fori_loop(lo, hi, loop, init):
    def scan_f(x, t):
        return loop(t, x), ()
    x, _ = lax.scan(scan_f, init, jnp.arange(lo, hi))
    return x


def trajectory(dynamics, U, x0):
    '''Unrolls `X[t+1] = dynamics(t, X[t], U[t])`, where `X[0] = x0`.'''
    T, _ = U.shape
    d, = x0.shape

    X = jnp.zeros((T + 1, d), dtype=x0.dtype)
    X = X.at[0].set(x0)

    def loop(t, X):
        x = dynamics(t, X[t], U[t])
        X = X.at[t + 1].set(x)
        return X

    return fori_loop(0, T, loop, X)


def make_lqr_approx(p):
    T = p.horizon

    def approx_timestep(t, x, u):
        M = jacfwd(grad(p.cost, argnums=2), argnums=1)(t, x, u).T
        Q = jacfwd(grad(p.cost, argnums=1), argnums=1)(t, x, u)
        R = jacfwd(grad(p.cost, argnums=2), argnums=2)(t, x, u)
        q, r = grad(p.cost, argnums=(1, 2))(t, x, u)
        A, B = jacobian(p.dynamics, argnums=(1, 2))(t, x, u)
        return Q, q, R, r, M, A, B

    _approx = vmap(approx_timestep)

    def approx(X, U):
        assert X.shape[0] == T + 1 and U.shape[0] == T
        U_pad = jnp.vstack((U, jnp.zeros((1,) + U.shape[1:])))
        Q, q, R, r, M, A, B = _approx(jnp.arange(T + 1), X, U_pad)
        return LqrSpec(Q, q, R[:T], r[:T], M[:T], A[:T], B[:T])

    return approx


def lqr_solve(spec):
    EPS = 1e-7
    T, control_dim, _ = spec.R.shape
    _, state_dim, _ = spec.Q.shape

    K = jnp.zeros((T, control_dim, state_dim))
    k = jnp.zeros((T, control_dim))

    def rev_loop(t_, state):
        t = T - t_ - 1
        spec, P, p, K, k = state

        Q, q = spec.Q[t], spec.q[t]
        R, r = spec.R[t], spec.r[t]
        M = spec.M[t]
        A, B = spec.A[t], spec.B[t]

        AtP = mm(A.T, P)
        BtP = mm(B.T, P)
        G = R + mm(BtP, B)
        H = mm(BtP, A) + M.T
        h = r + mv(B.T, p)
        K_ = -jnp.linalg.solve(G + EPS * jnp.eye(G.shape[0]), H)
        k_ = -jnp.linalg.solve(G + EPS * jnp.eye(G.shape[0]), h)
        P_ = Q + mm(AtP, A) + mm(K_.T, H)
        p_ = q + mv(A.T, p) + mv(K_.T, h)

        K = K.at[t].set(K_)
        k = k.at[t].set(k_)
        return spec, P_, p_, K, k

    # the original's spec.Q[T + 1] is past the end (Q holds T or T + 1 steps): JAX clamps a
    # static out-of-bounds index to the last element
    _, P, p, K, k = fori_loop(
        0, T, rev_loop,
        (spec, spec.Q[T + 1], spec.q[T + 1], K, k))

    return K, k


def lqr_predict(spec, x0):
    T, control_dim, _ = spec.R.shape
    _, state_dim, _ = spec.Q.shape

    K, k = lqr_solve(spec)

    def fwd_loop(t, state):
        spec, X, U = state
        A, B = spec.A[t], spec.B[t]
        u = mv(K[t], X[t]) + k[t]
        x = mv(A, X[t]) + mv(B, u)
        X = X.at[t + 1].set(x)
        U = U.at[t].set(u)
        return spec, X, U

    U = jnp.zeros((T, control_dim))
    X = jnp.zeros((T + 1, state_dim))
    X = X.at[0].set(x0)
    _, X, U = fori_loop(0, T, fwd_loop, (spec, X, U))
    return X, U


def ilqr(iterations, p, x0, U):
    assert x0.ndim == 1 and x0.shape[0] == p.state_dim, x0.shape
    assert U.ndim > 0 and U.shape[0] == p.horizon, (U.shape, p.horizon)

    lqr_approx = make_lqr_approx(p)

    def loop(_, state):
        X, U = state
        p_lqr = lqr_approx(X, U)
        dX, dU = lqr_predict(p_lqr, jnp.zeros_like(x0))
        U = U + dU
        X = trajectory(p.dynamics, U, X[0] + dX[0])
        return X, U

    X = trajectory(p.dynamics, U, x0)
    return fori_loop(0, iterations, loop, (X, U))


def mpc_predict(solver, p, x0, U):
    assert x0.ndim == 1 and x0.shape[0] == p.state_dim
    T = p.horizon

    def zero_padded_controls_window(U, t):
        U_pad = jnp.vstack((U, jnp.zeros(U.shape)))
        return lax.dynamic_slice_in_dim(U_pad, t, T, axis=0)

    def loop(t, state):
        cost = lambda t_, x, u: p.cost(t + t_, x, u)  # noqa: E731
        dyns = lambda t_, x, u: p.dynamics(t + t_, x, u)  # noqa: E731

        X, U = state
        p_ = ControlSpec(cost, dyns, T, p.state_dim, p.control_dim)
        xt = X[t]
        U_rem = zero_padded_controls_window(U, t)
        _, U_ = solver(p_, xt, U_rem)
        ut = U_[0]
        x = p.dynamics(t, xt, ut)
        X = X.at[t + 1].set(x)
        U = U.at[t].set(ut)
        return X, U

    X = jnp.zeros((T + 1, p.state_dim))
    X = X.at[0].set(x0)
    return fori_loop(0, T, loop, (X, U))


# The test file's problems (examples/control_test.py).

def one_step_lqr(dim, T):
    Q = jnp.stack(T * (jnp.eye(dim),))
    q = jnp.zeros((T, dim))
    R = jnp.zeros((T, dim, dim))
    r = jnp.zeros((T, dim))
    M = jnp.zeros((T, dim, dim))
    A = jnp.stack(T * (jnp.eye(dim),))
    B = jnp.stack(T * (jnp.eye(dim),))
    return LqrSpec(Q, q, R, r, M, A, B)


def control_from_lqr(lqr):
    T, dim, _ = lqr.Q.shape
    dot = jnp.dot

    def cost(t, x, u):
        return (
            dot(dot(lqr.Q[t], x), x) + dot(lqr.q[t], x) +
            dot(dot(lqr.R[t], u), u) + dot(lqr.r[t], u) +
            dot(dot(lqr.M[t], u), x))

    def dynamics(t, x, u):
        return dot(lqr.A[t], x) + dot(lqr.B[t], u)

    return ControlSpec(cost, dynamics, T, dim, dim)


def nonlinear_control(T, d):
    def cost(t, x, u):
        return (x[0] ** 2. + 1e-3 * u[0] ** 2.) / (t + 1).astype(x.dtype)

    def dynamics(t, x, u):
        return (x ** 2. - u ** 2.) / (t + 1).astype(x.dtype)

    return ControlSpec(cost, dynamics, T, d, d)


def check(name, actual, expected, atol=1e-6):
    """The test file's assertion; a mismatch is a wrong result, so the run fails loudly."""
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=1e-6, atol=atol, err_msg=name)


def check_lqr_path(name, X, U, x0, T, dim):
    """The test file's LQR trajectory from x0: one step to the origin, then rest."""
    check(f"{name} X", X, np.concatenate((np.asarray(x0)[None], np.zeros((T, dim)))))
    check(f"{name} U", U, np.concatenate((-np.asarray(x0)[None], np.zeros((T - 1, dim)))))


def check_nonlinear_path(name, X, U, T, d):
    """The test file's non-linear problem from 0.2: u0^2 = 0.04 reaches the origin, then rest."""
    check(f"{name} X", X, np.concatenate(([[0.2]], np.zeros((T, d)))), atol=1e-2)
    check(f"{name} U^2", U[:1] ** 2, [[0.04]], atol=1e-2)
    check(f"{name} U", U[1:], np.zeros((T - 1, d)), atol=1e-2)


def main():
    dim, T = 2, 10
    x0 = jnp.array(np.random.default_rng(0).normal(size=dim), dtype=jnp.float32)

    cyclic = lambda t, x, u: (x + u) % 3  # noqa: E731 - testTrajectoryCyclicIntegerCounter
    traj = jit(partial(trajectory, cyclic))
    X = common.time_program(
        EXAMPLE, "trajectory (T=10)", lambda _: traj(2 * jnp.ones((T, 1)), jnp.zeros(1)), common.repeats(100))
    check("trajectory", X[:, 0], np.concatenate(([0.], np.cumsum(2 * np.ones(T)) % 3)))

    lqr = one_step_lqr(dim, T)
    solve_lqr, predict_lqr = jit(lqr_solve), jit(lqr_predict)
    K, k = common.time_program(EXAMPLE, "lqr_solve (T=10, 2-D)", lambda _: solve_lqr(lqr), common.repeats(100))
    check("lqr_solve K", K, -np.stack(T * (np.eye(dim),)))
    check("lqr_solve k", k, np.zeros((T, dim)))

    X, U = common.time_program(
        EXAMPLE, "lqr_predict (T=10, 2-D)", lambda _: predict_lqr(lqr, x0), common.repeats(100))
    check_lqr_path("lqr_predict", X, U, x0, T, dim)

    p, num_iters, d = nonlinear_control(T, 1), 7, 1
    solve = jit(partial(ilqr, num_iters, p))
    X, U = common.time_program(
        EXAMPLE, "ilqr (non-linear, T=10, 7 iterations)",
        lambda _: solve(jnp.array([0.2]), 1e-5 * jnp.ones((T, d))), common.repeats(50))
    check_nonlinear_path("ilqr", X, U, T, d)

    mpc = jit(partial(mpc_predict, partial(ilqr, num_iters), p))
    X, U = common.time_program(
        EXAMPLE, "mpc_predict (non-linear, T=10, iLQR 7 iterations per step)",
        lambda _: mpc(jnp.array([0.2]), 1e-5 * jnp.ones((T, d))), common.repeats(20))
    check_nonlinear_path("mpc", X, U, T, d)

    mpc = jit(partial(mpc_predict, partial(ilqr, 3), control_from_lqr(lqr)))
    X, U = common.time_program(
        EXAMPLE, "mpc_predict (2-D LQR as a general cost, T=10, iLQR 3 iterations per step)",
        lambda _: mpc(x0, jnp.zeros((T, dim))), common.repeats(20))
    check_lqr_path("mpc (LQR)", X, U, x0, T, dim)


if __name__ == "__main__":
    main()
