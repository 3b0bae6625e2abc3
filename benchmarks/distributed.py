"""Multi-process pmap on MPI: what a collective costs, and one training step on 1 and 2 processes.

    python benchmarks/distributed.py [--steps 30] [--batch 64,4096]

starts `mpiexec -n 1` and `mpiexec -n 2` of this file (`--worker`), which print:
- all-reduce latency (2 processes only) of 8 and 4M float32 elements: `_mpi.allreduce_in_place`
  called in a loop inside one njit function (the call compiled kernels make), against mpi4py's
  `comm.Allreduce` from Python, and `pmap(psum)` end to end (dispatch, local copy, MPI call);
- ppermute latency (a swap between the 2 processes) of 8 and 4M float32 elements:
  `_mpi.ppermute` in a loop inside one njit function against mpi4py's `comm.Sendrecv`;
- the median time of one step of the seeds' "Write your own Horovod" training
  (`examples/horovod.py`: pmap of value_and_grad, pmean of (loss, grad), adam) for each global
  batch size, on 1 and on 2 processes (each process half of the batch).

Medians over repeats; the first call (compile, or load from the cache) is excluded. On a busy
2-core machine two processes share the cores with everything else: compare ratios.
"""
import argparse
import os
import shutil
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _median_time(fn, repeats, inner=1, barrier=None):
    times = []
    for _ in range(repeats):
        if barrier is not None:
            barrier()
        start = time.perf_counter()
        for _ in range(inner):
            fn()
        times.append((time.perf_counter() - start) / inner)
    return float(np.median(times))


def _allreduce_rows(comm, rank):
    import numba

    import omnistage as jax
    from omnistage import lax
    from omnistage.codegen import mpi_kernels as _mpi

    @numba.njit(nogil=True)
    def in_kernel(x, repeats):  # what a compiled psum does after its local reduction
        for _ in range(repeats):
            _mpi.allreduce_in_place(x, _mpi.SUM)
        return x

    from mpi4py import MPI

    psum = jax.pmap(lambda v: lax.psum(v, "i"), axis_name="i")
    rows = []
    for n, inner in ((8, 2000), (4 << 20, 5)):
        x = np.zeros(n, np.float32)
        out = np.empty_like(x)
        in_kernel(x, 1)
        kernel = _median_time(lambda: in_kernel(x, inner), 7, barrier=comm.Barrier) / inner
        python = _median_time(lambda: comm.Allreduce(x, out, MPI.SUM), 7, inner, comm.Barrier)
        shard = x.reshape(1, n)
        psum(shard).block_until_ready()
        end_to_end = _median_time(lambda: psum(shard).block_until_ready(), 7, inner, comm.Barrier)
        rows.append((n, kernel, python, end_to_end))
    if rank == 0:
        print("all-reduce of float32 (2 processes), median per call:")
        print(f"{'elements':>10} {'in kernel':>12} {'mpi4py':>12} {'pmap(psum)':>12}")
        for n, kernel, python, end_to_end in rows:
            print(f"{n:>10} {_fmt(kernel):>12} {_fmt(python):>12} {_fmt(end_to_end):>12}")


def _ppermute_rows(comm, rank):
    """lax.ppermute's exchange (2 processes swapping one example): `_mpi.ppermute` (MPI_Isend,
    MPI_Irecv, MPI_Wait inside a kernel) called in a loop inside one njit function, against
    mpi4py's `comm.Sendrecv` from Python."""
    import numba

    from omnistage.codegen import mpi_kernels as _mpi

    @numba.njit(nogil=True)
    def in_kernel(x, pairs, repeats):
        for _ in range(repeats):
            x = _mpi.ppermute(x, pairs)
        return x

    pairs = np.array([0, 1, 1, 0], np.int64)
    rows = []
    for n, inner in ((8, 2000), (4 << 20, 5)):
        x = np.zeros((1, n), np.float32)
        out = np.empty_like(x)
        in_kernel(x, pairs, 1)
        kernel = _median_time(lambda: in_kernel(x, pairs, inner), 7, barrier=comm.Barrier) / inner
        python = _median_time(lambda: comm.Sendrecv(x, 1 - rank, 0, out, 1 - rank, 0), 7, inner, comm.Barrier)
        rows.append((n, kernel, python))
    if rank == 0:
        print("ppermute swap of float32 (2 processes), median per call:")
        print(f"{'elements':>10} {'in kernel':>12} {'mpi4py':>12}")
        for n, kernel, python in rows:
            print(f"{n:>10} {_fmt(kernel):>12} {_fmt(python):>12}")


def _fmt(seconds):
    return f"{seconds * 1e6:.1f} us" if seconds < 1e-3 else f"{seconds * 1e3:.2f} ms"


def _training_rows(batches, steps):
    sys.argv = sys.argv[:1]
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    import horovod  # initializes the job (distributed.initialize at import)

    import omnistage as jax

    from omnistage.core import devices

    comm = devices.process_layout().group.comm if jax.process_count() > 1 else None
    rank, world = jax.process_index(), jax.device_count()
    mine = slice(rank * jax.local_device_count(), (rank + 1) * jax.local_device_count())
    results = []
    for batch_size in batches:
        _, batch = horovod.randn(horovod.rng_key, (batch_size,) + horovod.input_shape)
        batch = batch.reshape((world, batch_size // world) + batch.shape[1:])[mine]
        state = horovod.opt_init(horovod.params)
        state, loss = horovod.pmap_train_batch(0, state, batch)  # compile (or load)

        def step():
            nonlocal state
            state, loss_ = horovod.pmap_train_batch(1, state, batch)
            loss_.block_until_ready()

        results.append((batch_size, _median_time(step, steps, barrier=comm.Barrier if comm else None)))
    if rank == 0:
        for batch_size, t in results:
            print(f"TRAIN {jax.process_count()} {batch_size} {t}", flush=True)
    return comm, rank


def worker(args):
    batches = [int(b) for b in args.batch.split(",")]
    comm, rank = _training_rows(batches, args.steps)
    if comm is not None:
        _allreduce_rows(comm, rank)
        _ppermute_rows(comm, rank)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--batch", default="64,4096", help="global batch sizes, comma-separated")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(args)
    mpiexec = shutil.which("mpiexec", path=os.path.dirname(sys.executable)) or shutil.which("mpiexec")
    if mpiexec is None:
        sys.exit("no mpiexec: pip install -e '.[distributed]'")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]),
               OMNISTAGE_LOG_COMPILES=os.environ.get("OMNISTAGE_LOG_COMPILES", "0"))
    train = {}
    for n in (1, 2):
        command = [mpiexec, "-n", str(n), sys.executable, os.path.abspath(__file__), "--worker",
                   "--steps", str(args.steps), "--batch", args.batch]
        out = subprocess.run(command, env=env, capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            if line.startswith("TRAIN "):
                _, procs, batch, t = line.split()
                train[(int(procs), int(batch))] = float(t)
            else:
                print(line)
    print("\none training step (examples/horovod.py), median:")
    print(f"{'global batch':>12} {'1 process':>12} {'2 processes':>12} {'speed-up':>9}")
    for batch in sorted({b for _, b in train}):
        one, two = train[(1, batch)], train[(2, batch)]
        print(f"{batch:>12} {_fmt(one):>12} {_fmt(two):>12} {one / two:>8.2f}x")


if __name__ == "__main__":
    main()
