"""vmap of random functions with batched keys, and of custom_jvp/custom_vjp functions
(whose rules must still apply when the batched program is differentiated)."""
import numpy as np

import omnistage
import omnistage.numpy as jnp
from omnistage import random
from tests.helpers import assert_same


def test_random_functions_with_batched_keys():
    keys = random.split(random.PRNGKey(0), 4)
    for sample in (
        lambda k: random.normal(k, (3,)),
        lambda k: random.uniform(k, (2, 2)),
        lambda k: random.randint(k, (3,), 0, 10),
        lambda k: random.bernoulli(k, 0.3, (5,)),
        lambda k: random.split(k, 3),
        lambda k: random.permutation(k, 5),
    ):
        got = omnistage.vmap(sample)(keys)
        expected = np.stack([np.asarray(sample(k)) for k in keys])
        assert_same(got, expected)
        assert_same(omnistage.jit(omnistage.vmap(sample))(keys), expected)


def test_random_with_shared_key_and_batched_data():
    key = random.PRNGKey(1)
    xs = np.arange(4, dtype=np.float32)
    got = omnistage.vmap(lambda k, x: random.normal(k) + x, (None, 0))(key, xs)
    assert_same(got, np.asarray(random.normal(key)) + xs)


def _sin_with_doubled_derivative():
    @omnistage.custom_jvp
    def f(x):
        return jnp.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return f(x), 2.0 * t  # not sin's derivative: tells whether the rule was used

    return f


def test_custom_jvp_rule_survives_vmap_in_both_orders():
    f = _sin_with_doubled_derivative()
    xs = np.linspace(0, 1, 4).astype(np.float32)
    assert_same(omnistage.vmap(f)(xs), np.sin(xs))
    assert_same(omnistage.grad(lambda v: omnistage.vmap(f)(v).sum())(xs), np.full(4, 2.0, np.float32))
    assert_same(omnistage.vmap(omnistage.grad(f))(xs), np.full(4, 2.0, np.float32))
    w = np.float32(0.5)
    got = omnistage.grad(lambda a: omnistage.vmap(lambda x: f(x * a))(xs).sum())(w)
    assert_same(got, np.float32(2 * xs.sum()))


def test_custom_vjp_rule_survives_vmap_and_sums_shared_cotangents():
    @omnistage.custom_vjp
    def g(x, y):
        return x * y

    def g_fwd(x, y):
        return g(x, y), (x, y)

    def g_bwd(res, ct):
        x, y = res
        return 3.0 * ct * y, 5.0 * ct * x

    g.defvjp(g_fwd, g_bwd)
    xs, ys = np.linspace(0, 1, 4).astype(np.float32), np.arange(4, dtype=np.float32)
    assert_same(omnistage.vmap(g)(xs, ys), xs * ys)
    shared = omnistage.grad(lambda a: omnistage.vmap(g, (None, 0))(a, ys).sum())(np.float32(2.0))
    assert_same(shared, np.float32(3 * ys.sum()))
    per_example = omnistage.grad(lambda a: omnistage.vmap(g)(a, ys).sum())(xs)
    assert_same(per_example, 3 * ys)
