"""Port of JAX's examples/kernel_lsq.py (removed from JAX in 2024, commit c856560): kernel
least squares on 100 points in 20 dimensions; the Gram matrix is a nested `vmap` of the kernel,
the fit 10,000 jitted momentum steps.

Timed: the Gram matrix of the linear and the RBF kernel (jitted nested vmap), one `update`
step of the fit (the original runs 10,000; a few hundred here), and the jitted vmapped
`predict`.
"""
from functools import partial

from benchmarks.examples import common

if common.BACKEND == "jax":
    import jax.numpy as jnp
    from jax import grad, jit, vmap
    from jax.example_libraries import optimizers
else:
    import omnistage.numpy as jnp
    from omnistage import grad, jit, vmap
    from omnistage.example_libraries import optimizers

import itertools
import numpy.random as npr

EXAMPLE = "kernel_lsq"


def gram(kernel, xs):
    """a[i, j] = kernel(xs[i], xs[j])."""
    return vmap(lambda x: vmap(lambda y: kernel(x, y))(xs))(xs)


def train(kernel, xs, ys, regularization=0.01, num_steps=10000):
    gram_ = jit(partial(gram, kernel))
    gram_mat = gram_(xs)
    n = xs.shape[0]

    def objective(v):
        risk = .5 * jnp.sum((jnp.dot(gram_mat, v) - ys) ** 2.0)
        reg = regularization * jnp.sum(v ** 2.0)
        return risk + reg

    opt_init, opt_update, get_params = optimizers.momentum(0.000001, 0.9)

    @jit
    def update(i, opt_state):
        x = get_params(opt_state)
        return opt_update(i, grad(objective)(x), opt_state)

    steps = itertools.count()  # (the warm-up calls take steps too)
    opt_state = common.time_program(
        EXAMPLE, "update (one step of the fit)",
        lambda state: update(next(steps), state or opt_init(jnp.zeros(n))), num_steps - 1)
    v = get_params(opt_state)

    def predict(x):
        prods = vmap(lambda x_: kernel(x, x_))(xs)
        return jnp.sum(v * prods)

    return jit(vmap(predict))


def main():
    n, d = common.pick(100, tiny=20), 20
    rng = npr.RandomState(0)
    truth = rng.randn(d)
    xs = rng.randn(n, d).astype("float32")
    ys = jnp.dot(xs, truth)

    linear_kernel = lambda x, y: jnp.dot(x, y)  # noqa: E731 - the original's precision=HIGH is XLA's
    rbf_kernel = lambda x, y: jnp.exp(-jnp.sum((x - y) ** 2))  # noqa: E731
    for name, kernel in (("linear", linear_kernel), ("rbf", rbf_kernel)):
        gram_ = jit(partial(gram, kernel))
        common.time_program(EXAMPLE, f"gram ({name} kernel, {n}x{n})", lambda _: gram_(xs), common.repeats(50))

    predict = train(linear_kernel, xs, ys, num_steps=common.repeats(300) + 1)
    common.time_program(EXAMPLE, f"predict (vmap over {n} points)", lambda _: predict(xs), common.repeats(50))


if __name__ == "__main__":
    main()
