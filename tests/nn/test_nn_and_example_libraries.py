"""omnistage.nn and the example libraries (stax, optimizers): values against NumPy and
against JAX's documented behaviour; they jit, grad and train."""
import numpy as np
import pytest

import omnistage as jax
import omnistage.numpy as jnp
from omnistage import nn
from omnistage.example_libraries import optimizers, stax


def test_activations_match_numpy():
    x = np.linspace(-3, 3, 13).astype(np.float32)
    np.testing.assert_allclose(nn.relu(x), np.maximum(x, 0))
    np.testing.assert_allclose(nn.sigmoid(x), 1 / (1 + np.exp(-x)), rtol=1e-6)
    np.testing.assert_allclose(nn.softplus(x), np.log1p(np.exp(x)), rtol=1e-6)
    np.testing.assert_allclose(nn.elu(x), np.where(x > 0, x, np.expm1(x)), rtol=1e-6)
    np.testing.assert_allclose(nn.leaky_relu(x), np.where(x >= 0, x, 0.01 * x), rtol=1e-6)
    np.testing.assert_allclose(nn.silu(x), x / (1 + np.exp(-x)), rtol=1e-5, atol=1e-7)
    s = nn.softmax(x.reshape(13, 1) * np.arange(3), axis=-1)
    np.testing.assert_allclose(np.asarray(s).sum(-1), 1, rtol=1e-6)
    np.testing.assert_allclose(nn.logsumexp(x), np.log(np.exp(x.astype(np.float64)).sum()), rtol=1e-6)
    np.testing.assert_allclose(nn.log_softmax(x), x - np.log(np.exp(x.astype(np.float64)).sum()), rtol=1e-5, atol=1e-6)


def test_relu_derivative_at_zero_is_zero_and_softmax_grads():
    assert jax.grad(nn.relu)(0.0).item() == 0.0
    assert jax.grad(nn.relu)(2.0).item() == 1.0
    g = jax.grad(lambda x: nn.log_softmax(x)[0])(jnp.array([1.0, 2.0, 3.0]))
    p = np.exp([1.0, 2.0, 3.0]) / np.exp([1.0, 2.0, 3.0]).sum()
    np.testing.assert_allclose(g, np.eye(3)[0] - p, rtol=1e-5)


def test_one_hot():
    out = nn.one_hot(jnp.array([0, 2, 1]), 3)
    np.testing.assert_array_equal(out, np.eye(3)[[0, 2, 1]])
    assert out.dtype == np.float32


def test_glorot_normal_equals_jax_for_the_same_key():
    # JAX 0.10.2: jax.nn.initializers.glorot_normal()(jax.random.PRNGKey(0), (3, 2))
    expected = [[1.046842336654663, 1.2329133749008179], [-0.29671576619148254, -0.05394943431019783],
                [0.12079361826181412, -0.65617436170578]]
    got = nn.initializers.glorot_normal()(jax.random.PRNGKey(0), (3, 2))
    np.testing.assert_array_equal(np.asarray(got), np.asarray(expected, np.float32))


def test_stax_serial_shapes_and_apply():
    init, apply = stax.serial(stax.Dense(8), stax.Tanh, stax.Dense(3), stax.LogSoftmax)
    out_shape, params = init(jax.random.PRNGKey(1), (5, 4))
    assert out_shape == (5, 3)
    assert [tuple(p[0].shape) for p in params if p] == [(4, 8), (8, 3)]
    y = apply(params, jnp.ones((5, 4)))
    np.testing.assert_allclose(np.exp(np.asarray(y)).sum(-1), 1, rtol=1e-5)
    np.testing.assert_allclose(jax.jit(apply)(params, jnp.ones((5, 4))), y, rtol=1e-6)


def test_stax_combinators_and_dropout():
    init, apply = stax.serial(stax.FanOut(2), stax.parallel(stax.Dense(3), stax.Identity), stax.FanInConcat())
    shape, params = init(jax.random.PRNGKey(0), (2, 3))
    assert shape == (2, 6)
    assert apply(params, jnp.ones((2, 3))).shape == (2, 6)
    d_init, d_apply = stax.Dropout(0.5)
    with pytest.raises(ValueError, match="PRNG key"):
        d_apply((), jnp.ones(4))
    kept = d_apply((), jnp.ones(1000), rng=jax.random.PRNGKey(0))
    assert set(np.unique(np.asarray(kept))) <= {0.0, 2.0}


@pytest.mark.parametrize("make", [
    lambda: optimizers.sgd(0.1), lambda: optimizers.momentum(0.05, 0.9), lambda: optimizers.adam(0.05),
    lambda: optimizers.rmsprop(0.05), lambda: optimizers.adagrad(0.2), lambda: optimizers.adamax(0.05),
    lambda: optimizers.nesterov(0.05, 0.9),
])
def test_optimizers_minimize_a_quadratic_under_jit(make):
    opt_init, opt_update, get_params = make()
    target = {"a": jnp.array([1.0, -2.0]), "b": jnp.array(3.0)}

    def loss(p):
        return ((p["a"] - target["a"]) ** 2).sum() + (p["b"] - target["b"]) ** 2

    @jax.jit
    def step(i, state):
        return opt_update(i, jax.grad(loss)(get_params(state)), state)

    state = opt_init({"a": jnp.zeros(2), "b": jnp.array(0.0)})
    first = loss(get_params(state))
    for i in range(200):
        state = step(i, state)
    assert loss(get_params(state)) < 0.05 * first


def test_optimizer_rejects_a_mismatched_gradient_tree():
    opt_init, opt_update, _ = optimizers.sgd(0.1)
    state = opt_init({"a": jnp.zeros(2)})
    with pytest.raises(TypeError, match="did not match"):
        opt_update(0, {"b": jnp.zeros(2)}, state)


def test_schedules():
    assert optimizers.exponential_decay(1.0, 10, 0.5)(10) == 0.5
    assert float(optimizers.piecewise_constant([5, 10], [1.0, 0.5, 0.1])(7)) == 0.5
    np.testing.assert_allclose(float(optimizers.polynomial_decay(1.0, 10, 0.0)(5)), 0.5)
    g = {"x": jnp.array([3.0, 4.0])}
    np.testing.assert_allclose(optimizers.clip_grads(g, 1.0)["x"], [0.6, 0.8], rtol=1e-6)
