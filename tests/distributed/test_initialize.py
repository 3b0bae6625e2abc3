"""distributed.initialize() without starting MPI: which launcher the environment names, and
the errors for arguments that disagree with it or make no sense (all raised before MPI starts;
the successful path runs in the MPI jobs of test_multiprocess/test_jobs)."""
import sys

import pytest

import omnistage as jax
from omnistage.core import devices
from omnistage.distributed import launcher

LAUNCH_VARIABLES = ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "PMI_RANK",
                    "PMI_SIZE", "MPI_LOCALRANKID", "PMIX_RANK", "PRTE_LAUNCHED", "SLURM_PROCID", "SLURM_NTASKS",
                    "SLURM_LOCALID")


@pytest.mark.parametrize("environ, expected", [
    ({"PMI_RANK": "1", "PMI_SIZE": "4", "MPI_LOCALRANKID": "1", "PMI_FD": "9"}, ("MPICH", 1, 4, 1)),
    ({"OMPI_COMM_WORLD_RANK": "2", "OMPI_COMM_WORLD_SIZE": "3", "OMPI_COMM_WORLD_LOCAL_RANK": "0"},
     ("Open MPI", 2, 3, 0)),
    ({"PRTE_LAUNCHED": "1"}, ("PRRTE", None, None, None)),
    ({"SLURM_PROCID": "5", "SLURM_NTASKS": "8", "SLURM_LOCALID": "1"}, ("Slurm", 5, 8, 1)),
    # mpiexec inside a Slurm allocation: MPI's own variables describe the job
    ({"SLURM_PROCID": "0", "SLURM_NTASKS": "1", "PMI_RANK": "3", "PMI_SIZE": "4"}, ("MPICH", 3, 4, None)),
    ({"HOME": "/root"}, None),
])
def test_launcher_is_detected_from_its_variables(environ, expected):
    found = launcher.detect(environ)
    assert (tuple(found) if found else None) == expected


def test_a_garbled_launcher_variable_is_named():
    with pytest.raises(ValueError, match="PMI_SIZE='two'"):
        launcher.detect({"PMI_RANK": "0", "PMI_SIZE": "two"})


@pytest.fixture
def fresh(monkeypatch):
    """A process where no computation ran and no launcher variable is set."""
    monkeypatch.setattr(devices, "computation_started", False)
    for name in LAUNCH_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(num_processes=0), ValueError, "num_processes must be a positive integer"),
    (dict(num_processes=2, process_id=2), ValueError, "out of range"),
    (dict(process_id=-1), ValueError, "process_id must be a non-negative integer"),
    (dict(local_device_ids=[0, 1]), ValueError, "one CPU device"),
    (dict(coordinator_address=1234), TypeError, "coordinator_address must be a string"),
    (dict(num_processes=4), ValueError, r"no launcher started this process.*mpiexec -n 4"),
])
def test_bad_arguments_are_errors(fresh, kwargs, error, match):
    with pytest.raises(error, match=match):
        jax.distributed.initialize(**kwargs)
    assert not jax.distributed.is_initialized()


@pytest.mark.parametrize("variables, kwargs, match", [
    ({"PMI_RANK": "1", "PMI_SIZE": "2"}, dict(num_processes=3), "MPICH started this process with num_processes=2"),
    ({"PMI_RANK": "1", "PMI_SIZE": "2"}, dict(process_id=0), "MPICH started this process with process_id=1"),
    ({"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "4"}, dict(num_processes=2, process_id=0),
     "Open MPI started this process with num_processes=4"),
])
def test_arguments_that_disagree_with_the_launcher_are_errors(fresh, variables, kwargs, match):
    for name, value in variables.items():
        fresh.setenv(name, value)
    with pytest.raises(ValueError, match=match):
        jax.distributed.initialize(**kwargs)


def test_initialize_after_a_computation_is_an_error(fresh):
    fresh.setattr(devices, "computation_started", True)
    with pytest.raises(RuntimeError, match="before any computation runs"):
        jax.distributed.initialize()


def test_jit_marks_a_computation_started(fresh):
    jax.jit(lambda x: x + 1, backend="interpreter")(1.0)
    assert devices.computation_started


def test_without_mpi4py_the_error_names_the_extra(fresh):
    fresh.setitem(sys.modules, "mpi4py", None)  # import mpi4py raises ImportError
    with pytest.raises(ImportError, match=r"omnistage\[distributed\]"):
        jax.distributed.initialize()
    assert not jax.distributed.is_initialized() and jax.process_count() == 1


def test_one_process_devices_are_unchanged():
    assert jax.process_count() == 1 and jax.process_index() == 0
    assert jax.local_devices(backend="cpu") == jax.devices("cpu")[:1] and jax.devices("cpu")[0].process_index == 0
    assert jax.local_device_count("cpu") == 1  # (a GPU, or the simulator, adds one more)


def test_local_device_ids_must_name_every_cpu_device(fresh):
    fresh.setattr(devices, "configured_cpu_devices", lambda: 2)
    with pytest.raises(ValueError, match=r"2 CPU devices, ids 0\.\.1.*OMNISTAGE_CPU_DEVICES"):
        jax.distributed.initialize(local_device_ids=[0, 2])
    assert not jax.distributed.is_initialized()
