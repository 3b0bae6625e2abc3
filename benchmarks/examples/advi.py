"""Port of JAX's examples/advi.py: automatic differentiation variational inference of a 2-D
Gaussian fitted to the funnel density, 40 Monte Carlo samples per ELBO estimate (a vmap over
random keys).

Timed: the jitted `update` step (grad of the batched ELBO) the original runs 100 times, the
jitted `objective` its callback prints, and the 101x101 density mesh (`mesh_eval`: static
function argument, vmap over the grid) it plots. The plotting itself is left out.
"""
from functools import partial

from benchmarks.examples import common

if common.BACKEND == "jax":
    import jax.numpy as jnp
    from jax import grad, jit, random, vmap
    from jax.example_libraries import optimizers
else:
    import omnistage.numpy as jnp
    from omnistage import grad, jit, random, vmap
    from omnistage.example_libraries import optimizers

import itertools
import numpy as np

EXAMPLE = "advi"
try:
    if common.BACKEND == "jax":
        import jax.scipy.stats.norm as norm
    else:
        import omnistage.scipy.stats.norm as norm
except ImportError:
    class norm:  # noqa: N801 - stands in for the module omnistage.scipy.stats.norm (issue #21)
        @staticmethod
        def logpdf(x, loc=0, scale=1):
            return -0.5 * ((x - loc) / scale) ** 2 - jnp.log(scale) - 0.5 * np.log(2 * np.pi)
    common.note(EXAMPLE, "omnistage.scipy.stats.norm missing (issue #21): used a one-line logpdf")


def diag_gaussian_sample(rng, mean, log_std):
    return mean + jnp.exp(log_std) * random.normal(rng, mean.shape)


def diag_gaussian_logpdf(x, mean, log_std):
    return jnp.sum(vmap(norm.logpdf)(x, mean, jnp.exp(log_std)))


def elbo(logprob, rng, mean, log_std):
    sample = diag_gaussian_sample(rng, mean, log_std)
    return logprob(sample) - diag_gaussian_logpdf(sample, mean, log_std)


def batch_elbo(logprob, rng, params, num_samples):
    rngs = random.split(rng, num_samples)
    vectorized_elbo = vmap(partial(elbo, logprob), in_axes=(0, None, None))
    return jnp.mean(vectorized_elbo(rngs, *params))


@partial(jit, static_argnums=(0, 1, 2, 4))
def _mesh_eval(func, x_limits, y_limits, params, num_ticks):
    x = jnp.linspace(*x_limits, num=num_ticks)
    y = jnp.linspace(*y_limits, num=num_ticks)
    X, Y = jnp.meshgrid(x, y)  # noqa: N806
    xy_vec = jnp.stack([X.ravel(), Y.ravel()]).T
    zs = vmap(func, in_axes=(0, None))(xy_vec, params)
    return X, Y, zs.reshape(X.shape)


def mesh_eval(func, x_limits, y_limits, params, num_ticks=101):
    return _mesh_eval(func, x_limits, y_limits, params, num_ticks)


def funnel_log_density(params):
    return norm.logpdf(params[0], 0, jnp.exp(params[1])) + norm.logpdf(params[1], 0, 1.35)


def approx_dist(x, params):
    return jnp.exp(diag_gaussian_logpdf(x, *params))


def main():
    num_samples = 40

    @jit
    def objective(params, t):
        rng = random.key(t)
        return -batch_elbo(funnel_log_density, rng, params, num_samples)

    D = 2  # noqa: N806
    init_params = (jnp.zeros(D), jnp.zeros(D))
    opt_init, opt_update, get_params = optimizers.momentum(step_size=0.1, mass=0.9)

    @jit
    def update(i, opt_state):
        params = get_params(opt_state)
        gradient = grad(objective)(params, i)
        return opt_update(i, gradient, opt_state)

    steps = itertools.count()  # (the original runs 1000 steps; warm-up calls take more)
    opt_state = common.time_program(
        EXAMPLE, "update (grad of a 40-sample ELBO)",
        lambda state: update(next(steps), state or opt_init(init_params)), common.repeats(99))
    params = get_params(opt_state)
    common.time_program(EXAMPLE, "objective", lambda _: objective(params, 7), common.repeats(50))
    common.time_program(
        EXAMPLE, "mesh_eval (101x101 approximate density)",
        lambda _: mesh_eval(approx_dist, (-2, 2), (-4, 2), params), common.repeats(20))


if __name__ == "__main__":
    main()
