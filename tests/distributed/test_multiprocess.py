"""Multi-process pmap on a real MPI job (`mpiexec -n 2`, one worker run doing every check):
every collective and dtype against the one-process reference, grad through pmean and psum,
composition with vmap, jit and random, devices(), and the errors of a job."""
import pytest

from tests.distributed.mpi_job import checks, failures, run_job


@pytest.mark.slow  # one MPI job compiling a kernel with every collective for six dtypes: ~1-2 min
def test_multiprocess_pmap_matches_one_process(tmp_path):
    results = checks(run_job("multiprocess_worker.py", cache_dir=tmp_path, timeout=900))
    assert not failures(results), failures(results)
    for rank in (0, 1):
        for name in ("psum float32", "pmean complex64", "all_gather_tiled int32", "pmax bfloat16",
                     "grad through pmean", "compiled kernel calls MPI", "initialize twice is an error"):
            assert results[rank].get(name) == "ok", (rank, name)
