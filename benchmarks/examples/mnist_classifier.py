"""Port of JAX's examples/mnist_classifier.py: a stax 784-1024-1024-10 ReLU network trained by
momentum on MNIST-shaped synthetic data, batch 128.

Timed: the jitted `update` step, and the un-jitted (eager) `accuracy` on the test set, as the
original runs both each epoch.
"""
import itertools

from benchmarks.examples import common

if common.BACKEND == "jax":
    import jax
    import jax.numpy as jnp
    from jax import grad, jit, random
    from jax.example_libraries import optimizers, stax
else:
    import omnistage as jax
    import omnistage.numpy as jnp
    from omnistage import grad, jit, random
    from omnistage.example_libraries import optimizers, stax


EXAMPLE = "mnist_classifier"
gap = common.missing_names(stax, ["Dense", "Relu", "LogSoftmax", "serial"])
if gap:
    common.skip(EXAMPLE, "missing: " + ", ".join(gap))
Dense, Relu, LogSoftmax = stax.Dense, stax.Relu, stax.LogSoftmax


def loss(params, batch):
    inputs, targets = batch
    preds = predict(params, inputs)
    return -jnp.mean(jnp.sum(preds * targets, axis=1))


def accuracy(params, batch):
    inputs, targets = batch
    target_class = jnp.argmax(targets, axis=1)
    predicted_class = jnp.argmax(predict(params, inputs), axis=1)
    return jnp.mean(predicted_class == target_class)


width = common.pick(1024, tiny=32)
init_random_params, predict = stax.serial(Dense(width), Relu, Dense(width), Relu, Dense(10), LogSoftmax)


def main():
    rng = random.key(0)
    step_size, batch_size, momentum_mass = 0.001, 128, 0.9
    train_images, train_labels, test_images, test_labels = common.mnist(
        *common.pick((60000, 10000), tiny=(1024, 256)))

    batches = common.batches(train_images, train_labels, batch_size, seed=0)

    opt_init, opt_update, get_params = optimizers.momentum(step_size, mass=momentum_mass)

    @jit
    def update(i, opt_state, batch):
        params = get_params(opt_state)
        return opt_update(i, grad(loss)(params, batch), opt_state)

    _, init_params = init_random_params(rng, (-1, 28 * 28))
    itercount = itertools.count()
    opt_state = opt_init(init_params)
    opt_state = common.time_program(
        EXAMPLE, "update (batch 128)",
        lambda state: update(next(itercount), state or opt_state, next(batches)), common.repeats(30))
    params = get_params(opt_state)
    common.time_program(
        EXAMPLE, f"accuracy, eager ({len(test_images)} images)",
        lambda _: accuracy(params, (test_images, test_labels)), common.repeats(5))


if __name__ == "__main__":
    main()
