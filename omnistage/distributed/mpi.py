"""mpi4py, imported only here and only by `initialize()`: the communicator of this job, the
collectives the interpreter runs (`ProcessGroup`, installed into `core.devices`' layout), and
the hook that turns one rank's uncaught exception into the end of the whole job.

Compiled kernels do not go through this module: they call the MPI library directly (see
`omnistage.codegen.mpi_kernels`); this is the eager path and the set-up.
"""
import sys
import threading
import time

import numpy as np

EXTRA_HINT = (
    "omnistage's multi-process mode runs on MPI and needs mpi4py and an MPI library: "
    "pip install 'omnistage[distributed]' (mpi4py and MPICH, which brings mpiexec); with a "
    "system MPI (Open MPI, Cray MPICH, Intel MPI), pip install mpi4py alone"
)


def import_mpi4py():
    """mpi4py's MPI module (importing it initializes MPI), or an ImportError naming the extra."""
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise ImportError(f"{EXTRA_HINT} ({e})") from e
    return MPI


ABORT_DRAIN_S = 0.5  # time for mpiexec to forward the last output before MPI_Abort

# per dtype, what mpi4py reduces it with (float16/bfloat16 travel as float32)
_WIDE = {"float16": np.float32, "bfloat16": np.float32}
_OPS = {"sum": "SUM", "max": "MAX", "min": "MIN", "or": "LOR", "and": "LAND"}


class ProcessGroup:
    """The processes of a job and their collectives on NumPy arrays (the interpreter's
    implementation of `process_allreduce`/`process_allgather`)."""

    def __init__(self, MPI, comm):
        self.MPI, self.comm = MPI, comm
        self.index, self.count = comm.Get_rank(), comm.Get_size()

    def allreduce(self, x, op):
        x = np.asarray(x)
        wide = _WIDE.get(x.dtype.name)
        src = np.ascontiguousarray(x if wide is None else x.astype(wide))
        out = np.empty_like(src)
        self.comm.Allreduce(src, out, getattr(self.MPI, _OPS[op]))
        out = out.reshape(x.shape)  # ascontiguousarray makes a 0-d operand 1-d
        return out if wide is None else out.astype(x.dtype)

    def allgather(self, x):
        """Every process's `x`, concatenated along axis 0 in process order."""
        x = np.asarray(x)
        wide = _WIDE.get(x.dtype.name)
        src = np.ascontiguousarray(x if wide is None else x.astype(wide))
        out = np.empty((self.count * src.shape[0],) + src.shape[1:], src.dtype)
        self.comm.Allgather(src, out)
        return out if wide is None else out.astype(x.dtype)

    def allgather_object(self, value):
        return self.comm.allgather(value)


class AbortOnError:
    """sys.excepthook and threading.excepthook that print the failing rank's error, then abort
    every process of the job (MPI_Abort), as `python -m mpi4py` does: the other ranks may be
    waiting in a collective this one will never join."""

    def __init__(self, MPI, rank):
        self.MPI, self.rank = MPI, rank
        self.saved = (sys.excepthook, threading.excepthook)

    def install(self):
        sys.excepthook, threading.excepthook = self._excepthook, self._thread_excepthook

    def uninstall(self):
        if sys.excepthook == self._excepthook:
            sys.excepthook, threading.excepthook = self.saved

    def _abort(self):
        try:
            sys.stderr.write(f"omnistage.distributed: process {self.rank} failed; aborting the MPI job\n")
            sys.stderr.flush()
            sys.stdout.flush()
            # mpiexec forwards our pipes asynchronously and drops what it has not read when the
            # abort kills the job: CI once got only the traceback's first line.
            time.sleep(ABORT_DRAIN_S)
        finally:
            self.MPI.COMM_WORLD.Abort(1)

    def _excepthook(self, kind, value, tb):
        self.saved[0](kind, value, tb)
        if issubclass(kind, KeyboardInterrupt) or (issubclass(kind, SystemExit) and value.code in (None, 0)):
            return
        self._abort()

    def _thread_excepthook(self, args):
        self.saved[1](args)
        if not issubclass(args.exc_type, SystemExit):
            self._abort()
