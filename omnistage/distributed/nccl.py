"""NCCL, through CuPy, for the GPU collectives of a multi-process pmap: the communicator that
generated CUDA host drivers call (`omnistage.codegen.cuda.collectives`).

    comm = NcclCommunicator.from_mpi(mpi_comm)   # collective: rank 0's NCCL id, broadcast by MPI
    comm.allreduce(src, dst, "sum")              # ncclAllReduce on the kernels' stream
    comm.allgather(src, dst)                     # ncclAllGather, ranks' rows in rank order
    comm.ppermute(src, dst, pairs)               # ncclSend/ncclRecv of rows, one group

`src`/`dst` are C-contiguous device arrays (CuPy's, Numba's, anything with
`__cuda_array_interface__`); the call is enqueued on the stream Numba launches the kernels on
(`kernel_stream`), so it is ordered after the kernel that produced `src` and before the one
that reads `dst`, with no synchronization and no host copy. Element types map to NCCL's
(`NCCL_TYPES`): complex numbers travel as pairs of reals (sums only: the batching pass
reduces complex max/min by gathering), booleans as bytes ('or' is MAX, 'and' is MIN); a
gather moves bytes, so it takes every dtype.

`communicator_factory(group)` is what `distributed.initialize()` installs: on the first GPU
collective it builds the NCCL communicator, or returns None where NCCL cannot run (Numba's CUDA
simulator, CuPy or its NCCL missing), and the drivers then stage through host memory and MPI.

Not run on hardware: this machine has no GPU and no CuPy. The tests drive `NcclCommunicator`
with a fake `nccl` module (tests/cuda/fake_nccl.py: the same calls, ranks as threads, device
memory the simulator's host memory read through the pointers this module computes), so the id
broadcast, the type/op/count mapping, the pointers and the drivers' split at each collective
are checked; NCCL itself, CuPy's binding and the stream ordering on a real GPU are not.
Each process uses its current CUDA device: with several GPUs per node, give each rank its own
(CUDA_VISIBLE_DEVICES from the launcher's local rank) before the first GPU computation.

Imports nothing of omnistage's at import time; CuPy only when a communicator is built.
"""
import warnings

import numpy as np

_HINT = ("install CuPy built with NCCL (pip install cupy-cuda12x; the wheels bring NCCL through "
         "nvidia-nccl-cu12)")


def import_nccl():
    """`cupy.cuda.nccl`, or an ImportError saying what to install."""
    try:
        from cupy.cuda import nccl
    except ImportError as e:
        raise ImportError(f"GPU collectives across processes run on NCCL: {_HINT} ({e})") from e
    if not getattr(nccl, "available", True):
        raise ImportError(f"CuPy was built without NCCL: {_HINT}")
    return nccl


# numpy dtype name -> (name of the NCCL datatype constant in cupy.cuda.nccl, elements per value)
NCCL_TYPES = {
    "float16": ("NCCL_FLOAT16", 1), "float32": ("NCCL_FLOAT32", 1), "float64": ("NCCL_FLOAT64", 1),
    "complex64": ("NCCL_FLOAT32", 2), "complex128": ("NCCL_FLOAT64", 2),
    "int8": ("NCCL_INT8", 1), "uint8": ("NCCL_UINT8", 1), "bool": ("NCCL_UINT8", 1),
    "int32": ("NCCL_INT32", 1), "uint32": ("NCCL_UINT32", 1),
    "int64": ("NCCL_INT64", 1), "uint64": ("NCCL_UINT64", 1),
}

# process_allreduce's op -> the NCCL reduction constant (booleans are bytes of 0 and 1)
NCCL_OPS = {"sum": "NCCL_SUM", "max": "NCCL_MAX", "min": "NCCL_MIN", "or": "NCCL_MAX", "and": "NCCL_MIN"}


def device_pointer(array):
    """The address of a device array's first element (the simulator's arrays: host memory)."""
    interface = getattr(array, "__cuda_array_interface__", None)
    if interface is not None:
        return int(interface["data"][0])
    return int(array._ary.ctypes.data)  # Numba's CUDA simulator (tests with a fake NCCL)


def kernel_stream():
    """The handle of the stream Numba launches kernels on when given none: the legacy default
    stream (0), or the per-thread one (CU_STREAM_PER_THREAD) when Numba is configured so."""
    from numba.core import config

    return 2 if config.CUDA_PER_THREAD_DEFAULT_STREAM else 0


class NcclCommunicator:
    """This process's NCCL communicator (every process of the job holds one, same order as MPI)."""

    def __init__(self, comm, nccl, rank, size, stream=None):
        self.comm, self.nccl, self.rank, self.size = comm, nccl, rank, size
        self.stream = kernel_stream() if stream is None else stream

    @classmethod
    def from_mpi(cls, mpi_comm, nccl=None, stream=None):
        """Collective over `mpi_comm`: rank 0 makes the NCCL id, MPI broadcasts it, every rank
        joins the NCCL communicator with it."""
        nccl = import_nccl() if nccl is None else nccl
        rank, size = mpi_comm.Get_rank(), mpi_comm.Get_size()
        uid = nccl.get_unique_id() if rank == 0 else None
        uid = mpi_comm.bcast(uid, root=0)
        return cls(nccl.NcclCommunicator(size, uid, rank), nccl, rank, size, stream)

    def _type(self, array):
        dtype = np.dtype(array.dtype)
        entry = NCCL_TYPES.get(dtype.name)
        if entry is None:
            raise TypeError(f"NCCL has no type for {dtype.name}: convert it (to a 32-bit type) before the collective")
        name, per_value = entry
        return getattr(self.nccl, name), int(np.prod(array.shape, dtype=np.int64)) * per_value

    def allreduce(self, src, dst, op):
        datatype, count = self._type(src)
        if np.dtype(src.dtype).kind == "c" and op != "sum":
            raise TypeError(f"a cross-process {op!r} of complex numbers has no NCCL form (gather, then reduce)")
        self.comm.allReduce(device_pointer(src), device_pointer(dst), count, datatype,
                            getattr(self.nccl, NCCL_OPS[op]), self.stream)

    def allgather(self, src, dst):
        # a gather moves bytes: every dtype (int16, bfloat16's bits, ...) travels as uint8
        count = int(np.prod(src.shape, dtype=np.int64)) * np.dtype(src.dtype).itemsize
        self.comm.allGather(device_pointer(src), device_pointer(dst), count, self.nccl.NCCL_UINT8, self.stream)


    def ppermute(self, src, dst, pairs):
        """Rows of `src` (axis 0: this process's examples) sent to the processes of their
        destinations, received into `dst`: one ncclSend/ncclRecv per pair, in one group (NCCL
        matches a peer's sends and receives in order, and every process walks the same pairs)."""
        local = src.shape[0]
        row = int(np.prod(src.shape[1:], dtype=np.int64)) * np.dtype(src.dtype).itemsize
        send_base, recv_base = device_pointer(src), device_pointer(dst)
        self.nccl.groupStart()
        try:
            for s, t in pairs:
                if s // local == self.rank:
                    self.comm.send(send_base + (s % local) * row, row, self.nccl.NCCL_UINT8, t // local, self.stream)
                elif t // local == self.rank:
                    self.comm.recv(recv_base + (t % local) * row, row, self.nccl.NCCL_UINT8, s // local, self.stream)
        finally:
            self.nccl.groupEnd()


def communicator_factory(mpi_comm):
    """What `distributed.initialize()` installs: builds this process's GPU communicator on the
    first GPU collective (every process reaches it in the same program), or returns None where
    NCCL cannot run, so the collectives are staged through the host."""

    def build():
        from ..codegen.cuda import runtime

        if runtime.SIMULATED:
            return None
        try:
            nccl = import_nccl()
        except ImportError as e:
            warnings.warn(f"GPU collectives go through host memory and MPI (slow): {e}", stacklevel=2)
            return None
        return NcclCommunicator.from_mpi(mpi_comm, nccl)

    return build
