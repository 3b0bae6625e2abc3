"""`omnistage.distributed`: multi-process mode on MPI, with `jax.distributed`'s API.

    # train.py, started as: mpiexec -n 4 python train.py   (or srun under Slurm)
    import omnistage as jax
    jax.distributed.initialize()
    jax.process_index(), jax.process_count(), jax.devices(), jax.local_devices()
    jax.pmap(step, axis_name='batch')(local_shard)   # collectives span every process

`initialize()` detects the launcher (`launcher.py`), checks any explicit argument against it,
initializes MPI through mpi4py (an optional dependency: the `distributed` extra), and then:
- `core.devices` gets this process's layout (so `devices()`/`process_index()`/... have JAX's
  multi-process meaning) and a `ProcessGroup` for the interpreter's collectives;
- the MPI handle table of compiled kernels is filled (`codegen.mpi_handles`), and GPU programs
  get a communicator factory (`nccl.py`: NCCL through CuPy, built on the first GPU collective);
- an uncaught exception on any rank aborts the whole job after printing it (`mpi.AbortOnError`).

The collectives use a duplicate of MPI's world communicator, so they never match messages of
the user's own mpi4py calls. Processes are started by the launcher, never by omnistage: there is
no coordinator service, and `coordinator_address` is accepted for JAX compatibility only.

Imports core and `codegen.mpi_handles` (which imports neither Numba nor mpi4py); mpi4py only
when `initialize()` runs.
"""
import os

from ..core import devices as _devices
from . import launcher

_state = None  # while initialized: (ProcessGroup, AbortOnError)


def is_initialized():
    return _state is not None


def initialize(coordinator_address=None, num_processes=None, process_id=None, local_device_ids=None,
               cluster_detection_method=None, initialization_timeout=300, coordinator_bind_address=None):
    """Join the multi-process job this process was started in (by mpiexec or srun).

    With a launcher, no argument is needed; explicit `num_processes`/`process_id` must agree
    with it. Without one, this is a job of one process (`num_processes` must be 1 or None).
    The coordinator and cluster-detection options are JAX's, accepted and unused: MPI's
    launcher has already connected the processes."""
    global _state
    if _state is not None:
        raise RuntimeError("distributed.initialize should only be called once.")
    if _devices.computation_started:
        raise RuntimeError(
            "distributed.initialize() must be called before any computation runs: a jit or "
            "pmap computation already ran in this process. Call it first thing, right after "
            "`import omnistage`.")
    _check_arguments(coordinator_address, num_processes, process_id, local_device_ids)
    launch = launcher.detect(os.environ)
    _check_against_launcher(launch, num_processes, process_id)

    from . import mpi

    MPI = mpi.import_mpi4py()
    world = MPI.COMM_WORLD
    _check_against_mpi(launch, world.Get_rank(), world.Get_size(), num_processes, process_id)
    comm = world.Dup()
    group = mpi.ProcessGroup(MPI, comm)
    hook = mpi.AbortOnError(MPI, group.index)

    from ..codegen import mpi_handles

    mpi_handles.fill(MPI, comm)
    _install_gpu_communicator(comm)
    _devices.set_process_layout(group.index, group.count, group=group)
    hook.install()
    _state = (group, hook)


def shutdown():
    """Leave multi-process mode: this process is a one-process job again (MPI itself is
    finalized by mpi4py at exit). Kernels compiled for the job refuse to run afterwards."""
    global _state
    if _state is None:
        return
    group, hook = _state
    _state = None
    from ..codegen import mpi_handles

    mpi_handles.clear()
    _install_gpu_communicator(None)
    hook.uninstall()
    _devices.set_process_layout(0, 1)
    group.comm.Free()


def _install_gpu_communicator(comm):
    """GPU programs' collectives: NCCL over `comm`'s processes, built on the first one (`nccl`);
    None: none (after shutdown). Only when the CUDA backend is loaded or loads later: its
    runtime module is light, but importing it must not start CUDA."""
    from ..codegen.cuda import collectives
    from . import nccl

    collectives.install(None if comm is None else nccl.communicator_factory(comm))


def _check_arguments(coordinator_address, num_processes, process_id, local_device_ids):
    if coordinator_address is not None and not isinstance(coordinator_address, str):
        raise TypeError(f"coordinator_address must be a string such as 'host:port', got {coordinator_address!r}")
    if num_processes is not None and (not _is_int(num_processes) or num_processes < 1):
        raise ValueError(f"num_processes must be a positive integer, got {num_processes!r}")
    if process_id is not None:
        if not _is_int(process_id) or process_id < 0:
            raise ValueError(f"process_id must be a non-negative integer, got {process_id!r}")
        if num_processes is not None and process_id >= num_processes:
            raise ValueError(f"process_id {process_id} is out of range for num_processes={num_processes}")
    if local_device_ids is not None:
        ids = [local_device_ids] if _is_int(local_device_ids) else list(local_device_ids)
        n = _devices.configured_cpu_devices()
        if sorted(ids) != list(range(n)):
            have = "one CPU device, id 0" if n == 1 else f"{n} CPU devices, ids 0..{n - 1}"
            raise ValueError(
                f"local_device_ids={local_device_ids!r}: each process has {have} "
                f"(OMNISTAGE_CPU_DEVICES or XLA_FLAGS=--xla_force_host_platform_device_count set "
                f"how many), and uses all of them; pass local_device_ids=None")


def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def _check_against_launcher(launch, num_processes, process_id):
    if launch is None:
        if num_processes not in (None, 1):
            raise ValueError(
                f"num_processes={num_processes}, but no launcher started this process: "
                f"omnistage's processes are started by MPI, e.g. `mpiexec -n {num_processes} "
                f"python script.py` (or `srun -n {num_processes} ...` under Slurm); omnistage "
                f"then finds the rank and size itself, so initialize() needs no arguments")
        return
    for what, given, found in (("num_processes", num_processes, launch.size), ("process_id", process_id, launch.rank)):
        if given is not None and found is not None and given != found:
            raise ValueError(
                f"{what}={given} disagrees with the launcher: {launch.name} started this process "
                f"with {what}={found}. Leave {what} out (initialize() reads it from the launcher)")


def _check_against_mpi(launch, rank, size, num_processes, process_id):
    if launch is not None and launch.size is not None and launch.size != size:
        raise RuntimeError(
            f"{launch.name} describes a job of {launch.size} processes, but MPI's world "
            f"communicator has {size}: this process was not started by an MPI launcher that "
            f"matches the MPI library mpi4py loaded. Start it with that MPI's mpiexec (or srun "
            f"with --mpi=pmix/pmi2)")
    for what, given, found in (("num_processes", num_processes, size), ("process_id", process_id, rank)):
        if given is not None and given != found:
            raise ValueError(f"{what}={given} disagrees with MPI: this process has {what}={found}")


__all__ = ["initialize", "shutdown", "is_initialized"]
