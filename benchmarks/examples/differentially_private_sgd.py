"""Port of JAX's examples/differentially_private_sgd.py: DP-SGD on a small conv net (two strided
convolutions with max pooling, two dense layers) on MNIST-shaped synthetic data, batch 256:
per-example gradients by `vmap`, each clipped to an L2 norm, summed, plus Gaussian noise.

Timed: the jitted `private_update` step (the original's default, --dpsgd=True) and the
non-private `update` step. The privacy accounting (the dp_accounting package) is left out: it
is NumPy work outside the timed steps.
"""
import itertools

from benchmarks.examples import common

if common.BACKEND == "jax":
    import jax.numpy as jnp
    from jax import grad, jit, random, vmap
    from jax.example_libraries import optimizers, stax
    from jax.tree_util import tree_flatten, tree_unflatten
else:
    import omnistage.numpy as jnp
    from omnistage import grad, jit, random, vmap
    from omnistage.example_libraries import optimizers, stax
    from omnistage.tree_util import tree_flatten, tree_unflatten


EXAMPLE = "differentially_private_sgd"
gap = common.missing_names(stax, ["Conv", "MaxPool", "Flatten", "Dense", "Relu", "serial", "logsoftmax"])
if gap:
    common.skip(EXAMPLE, "missing: " + ", ".join(gap) + " (issue #21)")

LEARNING_RATE, NOISE_MULTIPLIER, L2_NORM_CLIP, SEED = .15, 1.1, 1.0, 0
BATCH_SIZE = common.pick(256, tiny=8)

init_random_params, predict = stax.serial(
    stax.Conv(16, (8, 8), padding='SAME', strides=(2, 2)),
    stax.Relu,
    stax.MaxPool((2, 2), (1, 1)),
    stax.Conv(32, (4, 4), padding='VALID', strides=(2, 2)),
    stax.Relu,
    stax.MaxPool((2, 2), (1, 1)),
    stax.Flatten,
    stax.Dense(32),
    stax.Relu,
    stax.Dense(10),
)


def loss(params, batch):
    inputs, targets = batch
    logits = predict(params, inputs)
    logits = stax.logsoftmax(logits)
    return -jnp.mean(jnp.sum(logits * targets, axis=1))


def clipped_grad(params, l2_norm_clip, single_example_batch):
    """Gradient for a single-example batch, its norm clipped."""
    grads = grad(loss)(params, single_example_batch)
    nonempty_grads, tree_def = tree_flatten(grads)
    total_grad_norm = jnp.linalg.norm(jnp.array([jnp.linalg.norm(neg.ravel()) for neg in nonempty_grads]))
    divisor = jnp.maximum(total_grad_norm / l2_norm_clip, 1.)
    normalized_nonempty_grads = [g / divisor for g in nonempty_grads]
    return tree_unflatten(tree_def, normalized_nonempty_grads)


def private_grad(params, batch, rng, l2_norm_clip, noise_multiplier, batch_size):
    """Differentially private gradients for params, evaluated on batch."""
    clipped_grads = vmap(clipped_grad, (None, None, 0))(params, l2_norm_clip, batch)
    clipped_grads_flat, grads_treedef = tree_flatten(clipped_grads)
    aggregated_clipped_grads = [g.sum(0) for g in clipped_grads_flat]
    rngs = random.split(rng, len(aggregated_clipped_grads))
    noised = [g + l2_norm_clip * noise_multiplier * random.normal(r, g.shape)
              for r, g in zip(rngs, aggregated_clipped_grads)]
    return tree_unflatten(grads_treedef, [g / batch_size for g in noised])


def shape_as_image(images, labels, dummy_dim=False):
    target_shape = (-1, 1, 28, 28, 1) if dummy_dim else (-1, 28, 28, 1)
    return jnp.reshape(images, target_shape), labels


def main():
    train_images, train_labels, _, _ = common.mnist(*common.pick((60000, 10), tiny=(64, 10)))
    key = random.key(SEED)

    batches = common.batches(train_images, train_labels, BATCH_SIZE, seed=SEED)
    opt_init, opt_update, get_params = optimizers.sgd(LEARNING_RATE)

    @jit
    def update(_, i, opt_state, batch):
        params = get_params(opt_state)
        return opt_update(i, grad(loss)(params, batch), opt_state)

    @jit
    def private_update(rng, i, opt_state, batch):
        params = get_params(opt_state)
        rng = random.fold_in(rng, i)
        return opt_update(i, private_grad(params, batch, rng, L2_NORM_CLIP, NOISE_MULTIPLIER, BATCH_SIZE), opt_state)

    _, init_params = init_random_params(key, (-1, 28, 28, 1))
    itercount = itertools.count()
    opt_state = common.time_program(
        EXAMPLE, f"private_update (batch {BATCH_SIZE})",
        lambda state: private_update(key, next(itercount), state or opt_init(init_params),
                                     shape_as_image(*next(batches), dummy_dim=True)),
        common.repeats(10))
    common.time_program(
        EXAMPLE, f"update, non-private (batch {BATCH_SIZE})",
        lambda state: update(key, next(itercount), state or opt_state, shape_as_image(*next(batches))),
        common.repeats(20))


if __name__ == "__main__":
    main()
