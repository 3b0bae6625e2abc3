"""What generated CUDA host drivers call for the cross-process steps of a multi-process pmap
(`_coll.<name>`): `process_allreduce`, `process_allgather` and `process_index` on device arrays.

The host driver is plain Python that launches kernels in program order, so it is split at each
collective by construction: the kernels before it (the local reduction over this process's
slices) are enqueued, then one call here puts the collective on the same stream, then the
kernels after it are enqueued; nothing is copied to the host:

    reduce_sum_1 = _cu.empty((3,), np.float32)
    k_reduce_sum_1[_cu.blocks(3)](reduce_sum_1, args_0)       # this process's slices
    process_allreduce_1 = _cu.empty((3,), np.float32)
    _coll.allreduce(reduce_sum_1, process_allreduce_1, 'sum')  # ncclAllReduce, same stream
    k_broadcast_in_dim_1[_cu.grid(3)](broadcast_in_dim_1, process_allreduce_1)

The calls go to this process's GPU *communicator*: an object with `rank`, `size`,
`allreduce(src, dst, op)`, `allgather(src, dst)` and `ppermute(src, dst, pairs)` on device
arrays (C-contiguous, `dst` preallocated; allgather concatenates every rank's `src` in rank
order; ppermute moves rows between processes, `pairs` being global (source, destination)
example indices whose processes differ). The real one is NCCL
through CuPy (`omnistage.distributed.nccl.NcclCommunicator`), built on the first GPU collective
by the factory that `distributed.initialize()` installs (building it is itself collective: the
NCCL id is broadcast over MPI). Where NCCL cannot run (Numba's CUDA simulator, no CuPy) the
factory returns None and the collective is staged through the host: device-to-host copy, MPI
(the job's `ProcessGroup`), host-to-device copy (`HostStaged`). Tests install a communicator
per thread (`use`), so ranks simulated as threads of one process each see their own.

Imports core, and the CUDA runtime when first called (never mpi4py, CuPy or the distributed
package).
"""
import contextlib
import threading

import numpy as np

from ...core import devices


def _cu():
    """The CUDA runtime, imported on first use: `distributed.initialize()` imports this module
    on CPU-only jobs too, which must not pay for importing numba.cuda."""
    from . import runtime

    return runtime

_factory = None        # () -> communicator or None; set by distributed.initialize()
_shared = None         # the communicator it built (one per process)
_local = threading.local()   # a communicator installed for this thread only (`use`)
_lock = threading.Lock()


def install(factory):
    """Build this process's GPU communicator with `factory()` on the first GPU collective."""
    global _factory, _shared
    with _lock:
        _factory, _shared = factory, None


def clear():
    """Forget the factory and the communicator (distributed.shutdown())."""
    install(None)


@contextlib.contextmanager
def use(communicator):
    """Route this thread's GPU collectives to `communicator` (tests: one thread per rank)."""
    saved = getattr(_local, "communicator", None)
    _local.communicator = communicator
    try:
        yield communicator
    finally:
        _local.communicator = saved


def communicator():
    """This thread's communicator: one installed by `use`, else the process's."""
    mine = getattr(_local, "communicator", None)
    if mine is not None:
        return mine
    global _shared
    with _lock:
        if _shared is None:
            if _factory is None:
                raise RuntimeError(
                    "this GPU program was compiled for a multi-process pmap, but this process is not "
                    "part of a multi-process job: call omnistage.distributed.initialize() first")
            _shared = _factory() or HostStaged(devices.process_layout().group)
        return _shared


class HostStaged:
    """The collectives through host memory and MPI (the job's `ProcessGroup`, which works on
    NumPy arrays): where NCCL cannot run. One device-to-host and one host-to-device copy each."""

    def __init__(self, group):
        if group is None:
            raise RuntimeError("internal: a GPU collective outside a multi-process job")
        self.group, self.rank, self.size = group, group.index, group.count

    def allreduce(self, src, dst, op):
        _store(dst, self.group.allreduce(_cu().to_host(src), op))

    def allgather(self, src, dst):
        _store(dst, self.group.allgather(_cu().to_host(src)))

    def ppermute(self, src, dst, pairs):
        host, local = _cu().to_host(dst).copy(), src.shape[0]
        everyone = self.group.allgather(_cu().to_host(src))
        for s, t in pairs:
            if t // local == self.rank:
                host[t % local] = everyone[s]
        _store(dst, host)


def _store(dst, host):
    """Copy host array `host` into the device array `dst` (same size)."""
    host = np.ascontiguousarray(host, dtype=dst.dtype).reshape(dst.shape)
    if hasattr(dst, "copy_to_device"):  # Numba (and the simulator's) device arrays
        dst.copy_to_device(host)
    else:  # CuPy
        dst.set(host)


# --- what the drivers call -------------------------------------------------------------------

# int16/uint16 have no NCCL type: they travel widened (sums wrap around the same way after
# narrowing back, and max/min are unchanged)
_WIDENED = {np.dtype(np.int16): np.dtype(np.int32), np.dtype(np.uint16): np.dtype(np.uint32)}


def allreduce(src, dst, op):
    """`dst` = reduction `op` ('sum', 'max', 'min', 'or', 'and') of `src` over every process."""
    wide = _WIDENED.get(np.dtype(src.dtype))
    if wide is None:
        communicator().allreduce(_dense(src), dst, op)
        return dst
    out = _cu().empty(tuple(dst.shape), wide)
    communicator().allreduce(_cu().astype(src, wide), out, op)
    _cu_copy(dst, _cu().astype(out, dst.dtype))
    return dst


def allgather(src, dst):
    """`dst` = every process's `src`, concatenated along axis 0 in process order."""
    communicator().allgather(_dense(src), dst)
    return dst


def ppermute(src, dst, perm):
    """`dst` = lax.ppermute of this process's examples `src` (rows, axis 0) over a global axis of
    every process's: `perm` holds (source, destination) global indices; rows that receive
    nothing are zeros. Pairs within this process are device copies; the others go to the
    communicator (NCCL send/recv in one group)."""
    comm, local = communicator(), src.shape[0]
    src = _dense(src)
    _cu_copy(dst, _cu().to_device(np.zeros(tuple(dst.shape), dst.dtype)))
    across = []
    for s, t in perm:
        if s // local == t // local:
            if s // local == comm.rank:
                _cu_copy(dst[t % local], src[s % local])
        else:
            across.append((s, t))
    if across:  # the same pairs on every process, so all of them call it or none
        comm.ppermute(src, dst, tuple(across))
    return dst


def rank():
    """This process's index as the int32 device scalar the kernels read."""
    return _cu().scalar(communicator().rank, np.int32)


def _dense(array):
    """`array` as a C-contiguous device array (a user's strided input is copied)."""
    if _cu().SIMULATED:
        return array if array._ary.flags.c_contiguous else _cu().to_device(_cu().to_host(array))
    interface = array.__cuda_array_interface__
    strides = interface.get("strides")
    if strides is None or strides == _c_strides(interface["shape"], np.dtype(interface["typestr"]).itemsize):
        return array
    return _cu().astype(array, array.dtype)  # a fresh, dense copy


def _c_strides(shape, itemsize):
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= n
    return tuple(reversed(strides))


def _cu_copy(dst, src):
    """Device-to-device copy of `src` into `dst` (same shape and dtype)."""
    if hasattr(dst, "copy_to_device"):  # Numba (and the simulator's) device arrays
        dst.copy_to_device(src)
    else:  # CuPy
        dst[...] = src
