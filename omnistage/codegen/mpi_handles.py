"""The MPI handle table: what compiled kernels need to call MPI, as data in one process-wide
array, so that their machine code holds no MPI handle and no MPI function address.

Compiled code (`mpi_kernels`) reads this table through one external symbol,
`omnistage_mpi_handles`, which the process registers with LLVM's symbol table when it loads
`mpi_kernels`; MPI itself is reached through the function pointers stored here. So a module
compiled by one process is loaded from Numba's on-disk cache by another (whose communicator,
datatypes and library addresses differ: Open MPI's handles are pointers) without recompiling,
and the same machine code serves MPICH, Open MPI or the standard MPI ABI alike.

A native library (`aot`, the warm path without Numba) defines the symbol itself, and the
process keeps that copy equal to `table` (`mirror`).

`fill` is called by `omnistage.distributed.initialize()` with mpi4py's module and the
communicator the kernels use; `clear` by `shutdown()`. Until filled, `READY` is 0 and kernels
raise instead of calling MPI. Handles are stored as 64-bit integers: MPICH's are C ints, which
the x86-64 and AArch64 calling conventions pass in the low half of the same register.

Imports only ctypes and NumPy (no Numba, no mpi4py): the distributed package fills the table
without importing the compiler.
"""
import ctypes

from .table_mirrors import Mirrors

SYMBOL = "omnistage_mpi_handles"

# slots
READY, COMM, RANK, SIZE, ALLREDUCE, ALLGATHER, IN_PLACE = range(7)

# element dtypes the kernels exchange (float16/bfloat16 are float32 in compiled code), and
# mpi4py's names of the matching MPI datatypes
DTYPES = {
    "float32": "FLOAT", "float64": "DOUBLE",
    "complex64": "C_FLOAT_COMPLEX", "complex128": "C_DOUBLE_COMPLEX",
    "int8": "INT8_T", "int16": "INT16_T", "int32": "INT32_T", "int64": "INT64_T",
    "uint8": "UINT8_T", "uint16": "UINT16_T", "uint32": "UINT32_T", "uint64": "UINT64_T",
    "bool": "C_BOOL",
}
DTYPE_SLOT = {name: 7 + i for i, name in enumerate(DTYPES)}

# reduction operations: the process_allreduce primitive's `op` parameter -> mpi4py's name
OPS = {"sum": "SUM", "max": "MAX", "min": "MIN", "or": "LOR", "and": "LAND"}
OP_SLOT = {name: 7 + len(DTYPES) + i for i, name in enumerate(OPS)}

# point-to-point (ppermute): addresses of MPI_Isend, MPI_Irecv, MPI_Wait
ISEND, IRECV, WAIT = (7 + len(DTYPES) + len(OPS) + i for i in range(3))

LENGTH = 7 + len(DTYPES) + len(OPS) + 3

table = (ctypes.c_int64 * LENGTH)()

# copies of the table inside native libraries (`aot`: a library defines its own, since it
# cannot see LLVM's symbol table), kept equal to `table` by fill/clear
_mirrors = Mirrors(table)


def address():
    """Where the table lives in this process (registered under SYMBOL for compiled code)."""
    return ctypes.addressof(table)


def fill(MPI, comm):
    """Store `comm`'s handle, this process's rank and size, the datatypes, the operations and
    the addresses of MPI_Allreduce/MPI_Allgather/MPI_Isend/MPI_Irecv/MPI_Wait of the MPI
    library mpi4py loaded."""
    lib = ctypes.CDLL(MPI.__file__)  # dlsym on mpi4py's extension searches its libmpi too
    table[COMM] = MPI._handleof(comm)
    table[RANK] = comm.Get_rank()
    table[SIZE] = comm.Get_size()
    table[ALLREDUCE] = ctypes.cast(lib.MPI_Allreduce, ctypes.c_void_p).value
    table[ALLGATHER] = ctypes.cast(lib.MPI_Allgather, ctypes.c_void_p).value
    for slot, name in ((ISEND, "MPI_Isend"), (IRECV, "MPI_Irecv"), (WAIT, "MPI_Wait")):
        table[slot] = ctypes.cast(getattr(lib, name), ctypes.c_void_p).value
    table[IN_PLACE] = int(MPI.IN_PLACE)  # the MPI_IN_PLACE pointer: (void *)-1 in MPICH, 1 in Open MPI
    for name, mpi_name in DTYPES.items():
        table[DTYPE_SLOT[name]] = MPI._handleof(getattr(MPI, mpi_name))
    for name, mpi_name in OPS.items():
        table[OP_SLOT[name]] = MPI._handleof(getattr(MPI, mpi_name))
    table[READY] = 1
    _sync()


def clear():
    for i in range(LENGTH):
        table[i] = 0
    _sync()


def mirror(address):
    """Keep the table at `address` (LENGTH int64s in a loaded native library) equal to this
    one from now on; it gets the current entries at once."""
    _mirrors.add(address)


def _sync():
    _mirrors.sync()


def ready():
    return bool(table[READY])
