"""Batching cond, switch, while_loop, fori_loop and scan: batched and unbatched predicates,
carries the body makes batched, scanned operands batched on any axis."""
import numpy as np

import omnistage
import omnistage.numpy as jnp
from omnistage import lax
from tests.vectorize.check import check_vmap


def rand(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def test_python_if_on_a_batched_value_selects_per_example(rng):
    def f(x):
        if x.sum() > 0:
            y = x * 2
        else:
            y = -x
        return y

    check_vmap(f, rand(rng, 6, 3))
    text = str(omnistage.make_jaxpr(omnistage.vmap(f))(rand(rng, 6, 3)))
    assert "select_n" in text and "cond(" not in text


def test_cond_with_shared_predicate_stays_a_cond(rng):
    f = lambda x, p: lax.cond(p > 0, lambda a: a * 2, lambda a: a - 1, x)  # noqa: E731
    check_vmap(f, rand(rng, 5, 3), np.float32(1.0), in_axes=(0, None))
    check_vmap(f, rand(rng, 5, 3), np.float32(-1.0), in_axes=(0, None))
    text = str(omnistage.make_jaxpr(omnistage.vmap(f, (0, None)))(rand(rng, 5, 3), np.float32(1.0)))
    assert "cond(" in text


def test_cond_branch_batches_an_output_the_other_does_not(rng):
    f = lambda x, p: lax.cond(p > 0, lambda a: a * 2, lambda a: jnp.zeros_like(a), x)  # noqa: E731
    check_vmap(f, rand(rng, 3), rand(rng, 4), in_axes=(None, 0))


def test_switch_with_per_example_index_clamps_like_cond(rng):
    branches = [lambda a: a * 2, lambda a: a - 1, jnp.sin]
    idx = np.array([0, 1, 2, 5, -1], np.int32)
    check_vmap(lambda x, i: lax.switch(i, branches, x), rand(rng, 5, 3), idx)


def test_while_with_per_example_condition_runs_until_all_finish():
    def newton_sqrt(x):
        y = x
        while jnp.abs(y * y - x) > 1e-4 * x:
            y = 0.5 * (y + x / y)
        return y

    got = check_vmap(newton_sqrt, np.array([1.0, 4.0, 9.0, 100.0, 2.0], np.float32))
    np.testing.assert_allclose(np.asarray(got), np.sqrt([1, 4, 9, 100, 2]), rtol=1e-4)


def test_while_with_shared_condition_and_batched_carry(rng):
    def f(x, n):
        return lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 1.5), (0, x))[1]

    check_vmap(f, rand(rng, 4, 3), np.int32(3), in_axes=(0, None))


def test_fori_loop_with_static_and_per_example_bounds(rng):
    def count(x, n):
        return lax.fori_loop(0, n, lambda i, c: c + x * i, jnp.zeros_like(x))

    xs = rand(rng, 5, 3)
    check_vmap(count, xs, np.int32(4), in_axes=(0, None))
    check_vmap(count, xs, np.array([1, 2, 3, 0, 5], np.int32))
    check_vmap(lambda x: lax.fori_loop(0, 3, lambda i, c: c * x, x), xs)


def test_scan_over_batched_sequences_on_any_axis(rng):
    def decay(x):
        return lax.scan(lambda c, xi: (c * 0.5 + xi, c), jnp.zeros(()), x)

    xs = rand(rng, 5, 7)
    check_vmap(decay, xs)
    check_vmap(decay, xs, in_axes=1)


def test_scan_carry_becomes_batched_through_the_body(rng):
    def f(x, c0):
        return lax.scan(lambda c, xi: (c + xi, c * xi), c0, x)

    check_vmap(f, rand(rng, 5, 4), np.float32(1.0), in_axes=(0, None))
    check_vmap(f, rand(rng, 4), np.arange(5, dtype=np.float32), in_axes=(None, 0))


def test_scan_with_batched_constant_and_unbatched_sequence(rng):
    def f(w, x):
        return lax.scan(lambda c, xi: (jnp.tanh(c @ w + xi), c.sum()), jnp.zeros(3), x)

    check_vmap(f, rand(rng, 4, 3, 3), rand(rng, 6, 3), in_axes=(0, None))


def test_map_is_batched(rng):
    check_vmap(lambda x: lax.map(lambda r: r.sum() * r, x), rand(rng, 4, 3, 2))


def test_per_example_gradient_through_a_loop(rng):
    def loss(w, x):
        return lax.fori_loop(0, 3, lambda i, c: jnp.sin(c * w), x).sum()

    w, xs = np.float32(0.7), rand(rng, 4, 3)
    got = omnistage.vmap(omnistage.grad(loss), (None, 0))(w, xs)
    expected = np.stack([np.asarray(omnistage.grad(loss)(w, x)) for x in xs])
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-5)
