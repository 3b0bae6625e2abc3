"""Port of JAX's examples/gaussian_process_regression.py (removed from JAX in 2024, commit
c856560): Gaussian process regression of a noisy sine on 7 points; the three kernel
hyperparameters (amplitude, noise, lengthscale, each through a softplus) are fitted by 1,000
steps of RMSProp-with-momentum on the negative log marginal likelihood (a Cholesky factor and
two triangular solves of the 7x7 covariance, the covariance a nested `vmap` of the kernel).

Timed: the jitted gradient `grad_fun`, the whole `train_step` the original loops over (that
gradient, then the update of the three parameters, eager), the eager `marginal_likelihood` it
prints every 50 steps, and the eager `predict` (posterior mean and covariance) on the 200 test
points. The plotting is left out.
"""
from functools import partial

from benchmarks.examples import common

if common.BACKEND == "jax":
    import jax.numpy as jnp
    import jax.random as random
    import jax.scipy as scipy
    from jax import grad, jit, vmap
else:
    import omnistage.numpy as jnp
    import omnistage.random as random
    import omnistage.scipy as scipy
    from omnistage import grad, jit, vmap

EXAMPLE = "gaussian_process_regression"
numpts = 7
eye = jnp.eye(numpts)


def cov_map(cov_func, xs, xs2=None):
    """a[i, j] = cov_func(xs[i], xs[j]) (against xs2's points along the second axis if given)."""
    if xs2 is None:
        return vmap(lambda x: vmap(lambda y: cov_func(x, y))(xs))(xs)
    else:
        return vmap(lambda x: vmap(lambda y: cov_func(x, y))(xs))(xs2).T


def softplus(x):
    return jnp.logaddexp(x, 0.)


def exp_quadratic(x1, x2):
    return jnp.exp(-jnp.sum((x1 - x2)**2))


def gp(params, x, y, xtest=None, compute_marginal_likelihood=False):
    noise = softplus(params['noise'])
    amp = softplus(params['amplitude'])
    ls = softplus(params['lengthscale'])
    ymean = jnp.mean(y)
    y = y - ymean
    x = x / ls
    train_cov = amp * cov_map(exp_quadratic, x) + eye * (noise + 1e-6)
    chol = scipy.linalg.cholesky(train_cov, lower=True)
    kinvy = scipy.linalg.solve_triangular(
        chol.T, scipy.linalg.solve_triangular(chol, y, lower=True))
    if compute_marginal_likelihood:
        log2pi = jnp.log(2. * 3.1415)
        ml = jnp.sum(
            -0.5 * jnp.dot(y.T, kinvy) -
            jnp.sum(jnp.log(jnp.diag(chol))) -
            (numpts / 2.) * log2pi)
        ml -= jnp.sum(-0.5 * jnp.log(2 * 3.1415) - jnp.log(amp) - 0.5 * jnp.log(amp)**2)  # lognormal prior
        return -ml

    if xtest is not None:
        xtest = xtest / ls
    cross_cov = amp * cov_map(exp_quadratic, x, xtest)
    mu = jnp.dot(cross_cov.T, kinvy) + ymean
    v = scipy.linalg.solve_triangular(chol, cross_cov, lower=True)
    var = (amp * cov_map(exp_quadratic, xtest) - jnp.dot(v.T, v))
    return mu, var


marginal_likelihood = partial(gp, compute_marginal_likelihood=True)
predict = partial(gp, compute_marginal_likelihood=False)
grad_fun = jit(grad(marginal_likelihood))
lr = 0.01  # Learning rate


def init_state():
    """(params, momentums, scales) as the original starts them."""
    params = {"amplitude": jnp.zeros((1, 1)),
              "noise": jnp.zeros((1, 1)) - 5.,
              "lengthscale": jnp.zeros((1, 1))}
    momentums = {k: p * 0. for k, p in params.items()}
    scales = {k: p * 0. + 1. for k, p in params.items()}
    return params, momentums, scales


def train_step(params, momentums, scales, x, y):
    grads = grad_fun(params, x, y)
    for k in params:
        momentums[k] = 0.9 * momentums[k] + 0.1 * grads[k][0]
        scales[k] = 0.9 * scales[k] + 0.1 * grads[k][0]**2
        params[k] -= lr * momentums[k] / jnp.sqrt(scales[k] + 1e-5)
    return params, momentums, scales


def data():
    """The original's toy 1-D problem: x uniform in [1, 5), y = sin(x) + noise, 200 test points."""
    key = random.key(0)
    y_fun = lambda x: jnp.sin(x) + 0.1 * random.normal(key, shape=(x.shape[0], 1))  # noqa: E731
    x = (random.uniform(key, shape=(numpts, 1)) * 4.) + 1
    y = y_fun(x)
    xtest = jnp.linspace(0, 6., 200)[:, None]
    return x, y, xtest


def main():
    x, y, xtest = data()
    params, momentums, scales = init_state()
    common.time_program(EXAMPLE, "grad_fun (jitted gradient)", lambda _: grad_fun(params, x, y), common.repeats(200))

    num_steps = common.pick(1000, 200)
    state = (params, momentums, scales)
    state = common.time_program(
        EXAMPLE, "train_step (jitted gradient, eager update)",
        lambda s: train_step(*(s or state), x, y), common.repeats(num_steps - 1))
    params = state[0]
    common.time_program(
        EXAMPLE, "marginal_likelihood, eager", lambda _: marginal_likelihood(params, x, y), common.repeats(20))
    common.time_program(
        EXAMPLE, "predict, eager (200 test points)", lambda _: predict(params, x, y, xtest), common.repeats(20))


if __name__ == "__main__":
    main()
