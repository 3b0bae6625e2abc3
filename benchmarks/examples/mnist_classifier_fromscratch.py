"""Port of JAX's examples/mnist_classifier_fromscratch.py: a 784-1024-1024-10 tanh network
written with jnp alone, trained by plain SGD on MNIST-shaped synthetic data, batch 128.

Timed: the jitted `update` step, and the un-jitted (eager) `accuracy` on the test set.
"""
from benchmarks.examples import common

if common.BACKEND == "jax":
    import jax.numpy as jnp
    from jax import grad, jit
else:
    import omnistage.numpy as jnp
    from omnistage import grad, jit

import numpy.random as npr

EXAMPLE = "mnist_classifier_fromscratch"
try:
    if common.BACKEND == "jax":
        from jax.scipy.special import logsumexp
    else:
        from omnistage.scipy.special import logsumexp
except ImportError:
    # omnistage.scipy is issue #21; nn.logsumexp is the same function (JAX has both)
    from omnistage.nn import logsumexp
    common.note(EXAMPLE, "omnistage.scipy.special.logsumexp missing (issue #21): used omnistage.nn.logsumexp")


def init_random_params(scale, layer_sizes, rng=npr.RandomState(0)):
    return [(scale * rng.randn(m, n), scale * rng.randn(n)) for m, n in zip(layer_sizes[:-1], layer_sizes[1:])]


def predict(params, inputs):
    activations = inputs
    for w, b in params[:-1]:
        outputs = jnp.dot(activations, w) + b
        activations = jnp.tanh(outputs)
    final_w, final_b = params[-1]
    logits = jnp.dot(activations, final_w) + final_b
    return logits - logsumexp(logits, axis=1, keepdims=True)


def loss(params, batch):
    inputs, targets = batch
    preds = predict(params, inputs)
    return -jnp.mean(jnp.sum(preds * targets, axis=1))


def accuracy(params, batch):
    inputs, targets = batch
    target_class = jnp.argmax(targets, axis=1)
    predicted_class = jnp.argmax(predict(params, inputs), axis=1)
    return jnp.mean(predicted_class == target_class)


def main():
    width = common.pick(1024, tiny=32)
    layer_sizes = [784, width, width, 10]
    param_scale, step_size, batch_size = 0.1, 0.001, 128
    train_images, train_labels, test_images, test_labels = common.mnist(
        *common.pick((60000, 10000), tiny=(1024, 256)))

    batches = common.batches(train_images, train_labels, batch_size, seed=0)

    @jit
    def update(params, batch):
        grads = grad(loss)(params, batch)
        return [(w - step_size * dw, b - step_size * db) for (w, b), (dw, db) in zip(params, grads)]

    # the original's parameters are float64 NumPy arrays, float32 once inside jit (x64 off)
    params = init_random_params(param_scale, layer_sizes)
    params = common.time_program(
        EXAMPLE, "update (batch 128)", lambda p: update(p or params, next(batches)), common.repeats(30))
    common.time_program(
        EXAMPLE, f"accuracy, eager ({len(test_images)} images)",
        lambda _: accuracy(params, (test_images, test_labels)), common.repeats(5))


if __name__ == "__main__":
    main()
