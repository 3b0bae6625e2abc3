"""Real MPI jobs (`mpiexec -n 2`): a kernel compiled by one job is loaded from the disk cache
by the next without recompiling, a GPU pmap's collectives run (communicator calls between the
kernels, staged through the host and MPI under Numba's CUDA simulator, which has no NCCL), and a
failing process aborts the whole job within seconds; lax.ppermute across processes."""
import time

import pytest

from tests.distributed.mpi_job import checks, frozen_copy, run_job


def test_second_job_loads_the_cached_kernel(tmp_path):
    first = checks(run_job("job_worker.py", "cache", cache_dir=tmp_path))
    second = checks(run_job("job_worker.py", "cache", cache_dir=tmp_path))
    assert any("compiled" in r["cache_status"] for r in first.values()), first
    for rank, r in second.items():
        assert r["cache_status"] == "machine code loaded from the disk cache", (rank, r)


@pytest.mark.slow  # two jobs and a native-library build: ~30-60 s here
def test_second_job_runs_the_native_library_of_a_program_with_collectives(tmp_path):
    """The AOT warm path (no Numba in the process) for a program calling MPI: the library
    defines the MPI handle table's symbol, and the process keeps it filled."""
    from omnistage.codegen import aot

    if aot.compiler() is None:
        pytest.skip("no C compiler: native libraries are not built")
    root = frozen_copy(tmp_path / "code")
    first = checks(run_job("job_worker.py", "aot", cache_dir=tmp_path, root=root, OMNISTAGE_AOT="1"))
    second = checks(run_job("job_worker.py", "aot", cache_dir=tmp_path, root=root, OMNISTAGE_AOT="1"))
    assert all("compiled" in r["cache_status"] for r in first.values()), first
    for rank, r in second.items():
        assert r["cache_status"] == "native library loaded from the disk cache", (rank, r)
        assert r["numba_imported"] == "False", (rank, r)


def test_gpu_collectives_run_between_kernels_staged_through_the_host(tmp_path):
    checks(run_job("job_worker.py", "cuda", cache_dir=tmp_path, NUMBA_ENABLE_CUDASIM="1"))


@pytest.mark.slow  # four kernels and a gradient compiled by two processes at once: ~30 s here
def test_ppermute_across_processes_matches_one_process(tmp_path):
    checks(run_job("job_worker.py", "ppermute", cache_dir=tmp_path))


def test_a_failing_process_aborts_the_job(tmp_path):
    start = time.perf_counter()
    proc = run_job("job_worker.py", "abort", cache_dir=tmp_path, timeout=120)
    elapsed = time.perf_counter() - start
    assert proc.returncode != 0
    assert "process 1 gives up on purpose" in proc.stderr
    assert "aborting the MPI job" in proc.stderr
    assert elapsed < 100, elapsed  # the job ended: it would otherwise wait in psum until the timeout
