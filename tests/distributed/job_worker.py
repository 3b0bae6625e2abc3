"""Worker of test_jobs.py, run as `mpiexec -n 2 python job_worker.py MODE`:

- `cache`: one small pmap with a psum; prints where its machine code came from (a second job
  with the same cache directory must load it, not compile); after shutdown() it refuses to run;
- `cuda` (under Numba's CUDA simulator): the collectives of a pmap with backend='cuda' are
  communicator calls between the kernel launches; with no NCCL (the simulator) the communicator
  stages them through the host and MPI;
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
elif mode == "cuda":  # under NUMBA_ENABLE_CUDASIM=1
    g = jax.pmap(lambda v: (lax.psum(v, "i"), lax.all_gather(v, "i")), axis_name="i", backend="cuda")
    total, gathered = g(x)
    assert np.array_equal(np.asarray(total), np.full((1, 3), 3.0, np.float32)), total
    assert np.array_equal(np.asarray(gathered), np.array([[[1.0] * 3, [2.0] * 3]], np.float32)), gathered
    text = g.lower(x).compile().as_text()
    assert "_coll.allreduce(" in text and "_coll.allgather(" in text and "host_call" not in text
    report(RANK, "ok", "done")
elif mode == "abort":
    if RANK == 1:
        time.sleep(1.0)
        raise ValueError("process 1 gives up on purpose")
    report(RANK, "ok", "waiting")
    while True:  # process 1 never joins this psum
        f(x)
