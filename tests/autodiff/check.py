"""`check_grads`: derivatives against finite differences, in both modes, to any order.

Forward mode: `jvp(f)(x; t)` must equal the central difference (f(x + eps t) - f(x - eps t)) /
2 eps. Reverse mode: the VJP must be the transpose of the JVP: <ct, J t> == <J^T ct, t> for
random t and ct. Order 2 repeats both checks on the JVP and the VJP functions themselves.
Run in float64 (the `x64` fixture) so differences are meaningful.
"""
import numpy as np

import omnistage as jax
from omnistage import tree_util


def _leaves(x):
    return [np.asarray(l) for l in tree_util.tree_leaves(x)]


def _rand_like(rng, x):
    def one(l):
        l = np.asarray(l)
        if l.dtype.kind == "c":
            return (rng.standard_normal(l.shape) + 1j * rng.standard_normal(l.shape)).astype(l.dtype)
        if l.dtype.kind == "f":
            return rng.standard_normal(l.shape).astype(l.dtype)
        return np.zeros(l.shape, dtype=jax.dtypes.float0)

    return tree_util.tree_map(one, x)


def _conj(x):
    return tree_util.tree_map(lambda l: np.conj(l) if np.asarray(l).dtype.kind == "c" else l, x)


def _inner(a, b):
    total = 0.0
    for x, y in zip(_leaves(a), _leaves(b)):
        if x.dtype == jax.dtypes.float0 or y.dtype == jax.dtypes.float0:
            continue
        total += np.sum(np.real(np.conj(x) * y)) if x.dtype.kind == "c" else np.sum(x * y)
    return total


def _axpy(a, t, x):
    return tree_util.tree_map(
        lambda xi, ti: xi if np.asarray(ti).dtype == jax.dtypes.float0 else xi + a * ti, x, t
    )


def _assert_close(a, b, atol, rtol, what):
    for x, y in zip(_leaves(a), _leaves(b)):
        if x.dtype == jax.dtypes.float0:
            continue
        np.testing.assert_allclose(x, y, atol=atol, rtol=rtol, err_msg=what)


def check_jvp(f, args, rng, eps, atol, rtol):
    tangents = _rand_like(rng, args)
    _, t_out = jax.jvp(f, args, tangents)
    plus = f(*_axpy(eps, tangents, args))
    minus = f(*_axpy(-eps, tangents, args))
    numeric = tree_util.tree_map(
        lambda p, m: np.asarray(p) if np.asarray(p).dtype == jax.dtypes.float0
        else (np.asarray(p) - np.asarray(m)) / (2 * eps), plus, minus)
    _assert_close(t_out, numeric, atol, rtol, "jvp vs central differences")


def check_vjp(f, args, rng, atol, rtol):
    out, pullback = jax.vjp(f, *args)
    tangents = _rand_like(rng, args)
    _, t_out = jax.jvp(f, args, tangents)
    ct = _rand_like(rng, out)
    # JAX's convention: cotangents are not conjugated, so the pullback of conj(ct),
    # conjugated, is the adjoint for the real inner product <a, b> = Re(sum(conj(a) b))
    ct_in = _conj(pullback(_conj(ct)))
    lhs = _inner(ct, t_out)
    rhs = _inner(ct_in, tangents)
    np.testing.assert_allclose(lhs, rhs, atol=atol, rtol=rtol, err_msg="vjp is not the transpose of jvp")


def check_grads(f, args, order=2, modes=("fwd", "rev"), eps=1e-6, atol=1e-5, rtol=1e-5, seed=0):
    """Check f's derivatives at `args` (a tuple) up to `order`."""
    rng = np.random.default_rng(seed)
    args = tuple(args)

    def check(fun, xs, k):
        if "fwd" in modes:
            check_jvp(fun, xs, rng, eps, atol, rtol)
        if "rev" in modes:
            check_vjp(fun, xs, rng, atol, rtol)
        if k > 1:
            ts = _rand_like(rng, xs)
            if "fwd" in modes:
                check(lambda *p: jax.jvp(fun, p, ts)[1], xs, k - 1)
            if "rev" in modes:
                ct = _rand_like(rng, fun(*xs))
                check(lambda *p: jax.vjp(fun, *p)[1](ct), xs, k - 1)

    check(f, args, order)
