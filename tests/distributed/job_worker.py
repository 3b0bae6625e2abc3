"""Worker of test_jobs.py, run as `mpiexec -n 2 python job_worker.py MODE`:

- `cache`: one small pmap with a psum; prints where its machine code came from (a second job
  with the same cache directory must load it, not compile); after shutdown() it refuses to run;
- `aot` (with OMNISTAGE_AOT=1): a pmap with collectives and ppermute, run from the native
  library a first job built (the second job's cache_status says which);
- `cuda` (under Numba's CUDA simulator): the collectives of a pmap with backend='cuda' are
  communicator calls between the kernel launches; with no NCCL (the simulator) the communicator
  stages them through the host and MPI;
- `ppermute`: lax.ppermute across the processes (point-to-point MPI inside the kernel) for
  several dtypes and permutations, and its gradient, against the one-process vmap;
- `abort`: process 1 raises while process 0 waits in a collective inside a compiled kernel: the
  job must end (MPI_Abort) with process 1's error printed, not hang.
"""
import sys
import time

import numpy as np

import omnistage as jax
from tests.distributed.report import report
from omnistage import lax

jax.distributed.initialize()
RANK = jax.process_index()
mode = sys.argv[1]

f = jax.pmap(lambda x: lax.psum(x * 2.0, "i"), axis_name="i")
x = np.full((1, 3), RANK + 1.0, np.float32)

if mode == "cache":
    compiled = f.lower(x).compile()
    report(RANK, "info", "cache_status", compiled.executable.cache_status)
    got = np.asarray(compiled(x))
    assert np.array_equal(got, np.full((1, 3), 6.0, np.float32)), got
    jax.distributed.shutdown()  # a one-process job again; the job's kernels refuse to run
    assert jax.process_count() == 1 and jax.devices() == jax.local_devices()
    try:
        compiled(x)
    except RuntimeError as e:
        assert "distributed.initialize()" in str(e), e
    else:
        raise AssertionError("a kernel of the job ran after shutdown()")
    report(RANK, "ok", "done")
elif mode == "aot":  # with OMNISTAGE_AOT=1: the first job builds the native library, the next loads it
    from omnistage.codegen import aot

    g = jax.pmap(lambda v: (lax.psum(v * 2.0, "i"), lax.all_gather(v, "i"), lax.axis_index("i"),
                            lax.ppermute(v, "i", [(0, 1), (1, 0)])), axis_name="i")
    compiled = g.lower(x).compile()
    report(RANK, "info", "cache_status", compiled.executable.cache_status)
    for _ in range(2):  # the second call runs after the builder was scheduled
        total, gathered, index, swapped = (np.asarray(v) for v in compiled(x))
        assert np.array_equal(total, np.full((1, 3), 6.0, np.float32)), total
        assert np.array_equal(gathered, np.array([[[1.0] * 3, [2.0] * 3]], np.float32)), gathered
        assert index.tolist() == [RANK] and np.array_equal(swapped, np.full((1, 3), 2.0 - RANK, np.float32)), (index, swapped)
    report(RANK, "info", "numba_imported", "numba" in sys.modules)  # the library ran: no fallback
    report(RANK, "info", "program_key", aot.program_key(compiled.executable.program))
    aot.wait_for_builds()
    report(RANK, "ok", "done")
elif mode == "cuda":  # under NUMBA_ENABLE_CUDASIM=1
    g = jax.pmap(lambda v: (lax.psum(v, "i"), lax.all_gather(v, "i"), lax.ppermute(v, "i", [(0, 1)])),
                 axis_name="i", backend="cuda")
    total, gathered, moved = g(x)
    assert np.array_equal(np.asarray(moved), np.full((1, 3), float(RANK), np.float32)), moved  # 0 sends its 1.0 to 1
    assert np.array_equal(np.asarray(total), np.full((1, 3), 3.0, np.float32)), total
    assert np.array_equal(np.asarray(gathered), np.array([[[1.0] * 3, [2.0] * 3]], np.float32)), gathered
    text = g.lower(x).compile().as_text()
    assert "_coll.allreduce(" in text and "_coll.allgather(" in text and "_coll.ppermute(" in text
    assert "host_call" not in text
    report(RANK, "ok", "done")
elif mode == "abort":
    if RANK == 1:
        time.sleep(1.0)
        raise ValueError("process 1 gives up on purpose")
    report(RANK, "ok", "waiting")
    while True:  # process 1 never joins this psum
        f(x)
elif mode == "ppermute":  # point-to-point MPI inside the compiled kernel, against the one-process vmap
    jax.config.update("jax_enable_x64", True)
    N = jax.process_count()
    rng = np.random.default_rng(0)
    perms = ([(0, 1), (1, 0)], [(1, 0)], [(0, 0)], [(i, (i + 1) % N) for i in range(N)])

    def f(v):
        return [lax.ppermute(v, "i", perm) * 2 for perm in perms] + [lax.ppermute(v, "i", perm=perms[0][::-1])]

    for dtype in (np.float32, np.float64, np.int32, np.complex64):
        data = (rng.normal(size=(N, 2, 3)) * 10).astype(dtype)
        compiled = jax.pmap(f, axis_name="i").lower(data[RANK:RANK + 1]).compile()
        got = compiled(data[RANK:RANK + 1])
        want = jax.vmap(f, axis_name="i")(data)
        for perm, g, w in zip(perms, got, want):
            assert np.array_equal(np.asarray(g), np.asarray(w)[RANK:RANK + 1]), (dtype, perm, g, w)
    assert "_mpi.ppermute(" in compiled.as_text()
    # grad through ppermute across processes: the transpose sends cotangents back
    w = np.float32(1.5)
    grad_of = lambda mapper: jax.grad(lambda w, x: (mapper(  # noqa: E731
        lambda v: lax.ppermute(v * w, "i", [(0, 1)]) * (1.0 + lax.axis_index("i")), axis_name="i")(x) ** 2).sum())
    from mpi4py import MPI

    mine = float(grad_of(jax.pmap)(w, data[RANK:RANK + 1].real.astype(np.float32)))
    want = float(grad_of(jax.vmap)(w, data.real.astype(np.float32)))
    assert np.isclose(sum(MPI.COMM_WORLD.allgather(mine)), want, rtol=1e-5), (mine, want)
    report(RANK, "ok", "done")
