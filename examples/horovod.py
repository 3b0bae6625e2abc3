"""Write your own Horovod: the seeds' distributed training of a spectral-radius MLP, on MPI.

    python examples/horovod.py                   # one process: the reference run
    mpiexec -n 2 python examples/horovod.py      # two processes, half of every batch each
    OMNISTAGE_CPU_DEVICES=2 mpiexec -n 2 python examples/horovod.py   # 2 CPU devices per process

Every process draws the same global batch each step (same key), reshapes it to
(device_count(), local batch, 2, 2) as the tour does, and passes its own rows (its
local_device_count() devices) to the pmapped step. `lax.pmean((loss, grad), 'batch')` averages
over every device of every process (an MPI all-reduce inside the compiled step), so every
process applies the same Adam update and the printed loss is the global batch's: the same, to
float32 rounding, as the one-process run's. (One change to the tour's code: the loss compares
each prediction with its own target; see batch_loss.)

Options: --steps N (default 200), --batch-size B (64), --log-every K (20; 1 prints every step),
--all-processes (every process prints its loss lines, as `process 1: step 0; loss ...`).
"""
import argparse
import functools
import operator
import time

import numpy as np

import omnistage as jax
import omnistage.numpy as jnp
from omnistage.example_libraries import optimizers, stax

jax.distributed.initialize()  # under mpiexec/srun: join the job; alone: a job of one process

input_shape = (2, 2)
batch_axis = "batch"


def spectral_radius(mat):
    return jnp.max(jnp.abs(jnp.linalg.eigvals(mat)))


batched_spectral_radius = jax.vmap(spectral_radius)


def flatten():
    def init_fun(rng_key, input_shape):
        return (functools.reduce(operator.mul, input_shape, 1),), ()

    def apply_fun(params, inputs, **kwargs):
        return inputs.ravel()

    return init_fun, apply_fun


def build_model(rng_key):
    model_init, model = stax.serial(flatten(), stax.Dense(32), stax.Relu, stax.Dense(1))
    model = jax.vmap(model, in_axes=(None, 0))  # handle varying batch sizes
    rng_key, subkey = jax.random.split(rng_key)
    output_shape, params = model_init(subkey, input_shape)
    assert output_shape == (1,)
    return rng_key, params, model


rng_key, params, model = build_model(jax.random.PRNGKey(0))
opt_init, opt_update, get_params = optimizers.adam(3e-4)


def batch_loss(params, batch):
    # [:, 0]: the tour subtracts (B,) targets from (B, 1) predictions, a (B, B) matrix whose
    # mean over the global batch is not the mean of the shards' means; per-example errors are
    preds = model(params, batch)[:, 0]
    targets = batched_spectral_radius(batch)
    return jnp.mean(jnp.abs(preds - targets))


def distributed_train_batch(step, opt_state, batch):
    params = get_params(opt_state)
    loss, grad = jax.value_and_grad(batch_loss)(params, batch)
    # the only line added to the one-device training step
    loss, grad = jax.lax.pmean((loss, grad), batch_axis)
    # conjugate gradient for steepest-descent optimization
    grad = jax.tree_util.tree_map(jnp.conj, grad)
    opt_state = opt_update(step, grad, opt_state)
    return opt_state, loss


pmap_train_batch = jax.pmap(
    distributed_train_batch, axis_name=batch_axis, in_axes=(None, None, 0), out_axes=(None, None))


@functools.partial(jax.jit, static_argnums=(1,))
def randn(rng_key, shape):
    rng_key, subkey = jax.random.split(rng_key)
    return rng_key, jax.random.normal(subkey, shape, dtype=complex)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--log-every", type=int, default=20)
    parser.add_argument("--all-processes", action="store_true",
                        help="every process prints its own loss, prefixed with its index (pmean makes them equal)")
    args = parser.parse_args()

    world_size = jax.device_count()
    assert args.batch_size % world_size == 0, "the batch must split evenly over the devices"
    local_batch_size = args.batch_size // world_size
    mine = slice(jax.process_index() * jax.local_device_count(), (jax.process_index() + 1) * jax.local_device_count())
    key, opt_state = rng_key, opt_init(params)
    log = args.all_processes or jax.process_index() == 0
    prefix = f"process {jax.process_index()}: " if args.all_processes else ""
    if jax.process_index() == 0:
        print(f"Training with {world_size} devices in {jax.process_count()} processes.", flush=True)
    start = time.perf_counter()
    for step in range(args.steps):
        key, batch = randn(key, (args.batch_size,) + input_shape)
        batch = batch.reshape((world_size, local_batch_size) + batch.shape[1:])[mine]
        opt_state, loss = pmap_train_batch(step, opt_state, batch)
        if log and step % args.log_every == 0:
            # one write per line: lines of processes sharing mpiexec's stdout must not interleave
            print(f"{prefix}step {step}; loss {float(loss):.7g}\n", end="", flush=True)
    if jax.process_index() == 0:
        print(f"Distributed training took {time.perf_counter() - start:.3g} seconds.", flush=True)
    return opt_state


if __name__ == "__main__":
    main()
