"""Port of JAX's examples/spmd_mnist_classifier_fromscratch.py: the from-scratch 784-1024-1024-10
tanh network trained with `pmap` data parallelism, gradients summed by `lax.psum` over the
mapped axis, on MNIST-shaped synthetic data, batch 128 split over every local device (one on a
CPU, for both backends: the batch gains a leading axis of size 1).

Timed: the pmapped `spmd_update` step, and the jitted `accuracy` on the test set.
"""
from functools import partial

from benchmarks.examples import common

if common.BACKEND == "jax":
    import jax
    import jax.numpy as jnp
    from jax import grad, jit, lax, pmap
    from jax.tree_util import tree_map
    device_count = jax.device_count
else:
    import omnistage
    import omnistage.numpy as jnp
    from omnistage import grad, jit, lax, pmap
    from omnistage.tree_util import tree_map
    device_count = omnistage.device_count

import numpy as onp

# the original repeats mnist_classifier_fromscratch's network and accuracy; the port shares them
from benchmarks.examples import mnist_classifier_fromscratch as fromscratch
from benchmarks.examples.mnist_classifier_fromscratch import init_random_params, predict

EXAMPLE = "spmd_mnist_classifier_fromscratch"


def loss(params, batch):
    inputs, targets = batch
    preds = predict(params, inputs)
    return -jnp.mean(preds * targets)


# the original jits the same accuracy function
accuracy = jit(fromscratch.accuracy)


def main():
    width = common.pick(1024, tiny=32)
    layer_sizes = [784, width, width, 10]
    param_scale, step_size, batch_size = 0.1, 0.001, 128
    train_images, train_labels, test_images, test_labels = common.mnist(
        *common.pick((60000, 10000), tiny=(1024, 256)))
    num_devices = device_count()

    def data_stream():
        # the original's: each batch's leading axis split into (devices, per-device batch)
        for images, labels in common.batches(train_images, train_labels, batch_size, seed=0):
            batch_size_per_device, ragged = divmod(images.shape[0], num_devices)
            if ragged:
                raise ValueError(f"batch size must be divisible by device count, got {batch_size} and {num_devices}.")
            shape_prefix = (num_devices, batch_size_per_device)
            yield (images.reshape(shape_prefix + images.shape[1:]),
                   labels.reshape(shape_prefix + labels.shape[1:]))

    batches = data_stream()

    @partial(pmap, axis_name="batch")
    def spmd_update(params, batch):
        grads = grad(loss)(params, batch)
        grads = [(lax.psum(dw, "batch"), lax.psum(db, "batch")) for dw, db in grads]
        return [(w - step_size * dw, b - step_size * db) for (w, b), (dw, db) in zip(params, grads)]

    replicate_array = lambda x: onp.broadcast_to(x, (num_devices,) + x.shape)
    replicated = tree_map(replicate_array, init_random_params(param_scale, layer_sizes))
    replicated = common.time_program(
        EXAMPLE, f"spmd_update (batch 128, {num_devices} device)",
        lambda p: spmd_update(p or replicated, next(batches)), common.repeats(30))
    params = tree_map(lambda x: x[0], replicated)
    common.time_program(
        EXAMPLE, f"accuracy ({len(test_images)} images)",
        lambda _: accuracy(params, (test_images, test_labels)), common.repeats(5))


if __name__ == "__main__":
    main()
