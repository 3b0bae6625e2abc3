"""The MPI calls compiled kernels make: generated modules import this module as `_mpi` and call
`_mpi.allreduce(x, op)` (or `allreduce_in_place`), `_mpi.allgather(x)`, `_mpi.ppermute(x, pairs)`
and `_mpi.rank()` inside their njit functions,
so a multi-process collective is one native call in the middle of the kernel, not a return to
Python.

The MPI library is reached through `mpi_handles`' table (communicator, datatypes, operations,
function pointers), read through the one external symbol registered below: nothing
process-specific is compiled in, so Numba's on-disk cache serves every process and every job
(see `mpi_handles`). Each call is a small LLVM intrinsic: load the handles from the table,
call the MPI function through its pointer on the arrays' data.

Arrays reach the wrappers flattened and C-contiguous (the emitter, `mpi_lowering`, does that);
counts above MPI's C `int` are sent in chunks. A kernel called before
`distributed.initialize()` (or after `shutdown()`) raises instead of calling MPI; an MPI error
aborts the job (MPI's default error handler), as any MPI program.

Imports Numba and llvmlite: only generated code and the code generator import this module.
"""
import numba
import numpy as np
from llvmlite import binding as llvm
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from . import mpi_handles as H
from . import table_mirrors
from .numba_flags import ROUNDED

llvm.add_symbol(H.SYMBOL, H.address())

_kernel = numba.njit(nogil=True, cache=True, **ROUNDED)

_I32, _I64 = ir.IntType(32), ir.IntType(64)
_I8P = ir.IntType(8).as_pointer()
_ALLREDUCE_T = ir.FunctionType(_I32, [_I8P, _I8P, _I32, _I64, _I64, _I64])
_ALLGATHER_T = ir.FunctionType(_I32, [_I8P, _I32, _I64, _I8P, _I32, _I64, _I64])
_ISEND_T = ir.FunctionType(_I32, [_I8P, _I32, _I64, _I32, _I32, _I64, _I8P])  # also MPI_Irecv's
_WAIT_T = ir.FunctionType(_I32, [_I8P, _I8P])
_CHUNK = 1 << 30  # elements per MPI call: MPI counts are C ints

# the reduction operations, as generated code names them: `_mpi.allreduce(x, _mpi.SUM)`
SUM, MAX, MIN, LOR, LAND = (H.OP_SLOT[op] for op in ("sum", "max", "min", "or", "and"))


def _table(builder):
    """The table: an external global, resolved at load time to `mpi_handles.table`."""
    return table_mirrors.declare(builder, H.SYMBOL, H.LENGTH)


def _load(builder, slot):
    """Table entry `slot` (an int or an i64 value) as an i64."""
    index = _I64(slot) if isinstance(slot, int) else slot
    return builder.load(builder.gep(_table(builder), [_I32(0), index]))


def _data(context, builder, ty, value):
    return builder.bitcast(context.make_array(ty)(context, builder, value).data, _I8P)


def _dtype_slot(ty):
    name = str(ty.dtype)
    if name == "bool":
        return H.DTYPE_SLOT["bool"]
    if name not in H.DTYPE_SLOT:
        raise numba.core.errors.TypingError(f"no MPI datatype for {name}")
    return H.DTYPE_SLOT[name]


@intrinsic
def _slot(typingctx, slot):
    """Table entry `slot` as an int64."""
    def codegen(context, builder, sig, args):
        return _load(builder, args[0])

    return types.int64(types.int64), codegen


@intrinsic
def _allreduce_call(typingctx, src, dst, count, op_slot):
    """MPI_Allreduce(src, dst, count, <dtype>, table[op_slot], comm)."""
    if not (isinstance(src, types.Array) and isinstance(dst, types.Array)):
        return None
    dtype_slot = _dtype_slot(src)

    def codegen(context, builder, sig, args):
        fn = builder.inttoptr(_load(builder, H.ALLREDUCE), _ALLREDUCE_T.as_pointer())
        n = builder.trunc(args[2], _I32)
        call_args = [_data(context, builder, sig.args[0], args[0]), _data(context, builder, sig.args[1], args[1]),
                     n, _load(builder, dtype_slot), _load(builder, args[3]), _load(builder, H.COMM)]
        return builder.call(fn, call_args)

    return types.int32(src, dst, types.int64, types.int64), codegen


@intrinsic
def _allreduce_in_place_call(typingctx, buf, count, op_slot):
    """MPI_Allreduce(MPI_IN_PLACE, buf, count, <dtype>, table[op_slot], comm)."""
    if not isinstance(buf, types.Array):
        return None
    dtype_slot = _dtype_slot(buf)

    def codegen(context, builder, sig, args):
        fn = builder.inttoptr(_load(builder, H.ALLREDUCE), _ALLREDUCE_T.as_pointer())
        in_place = builder.inttoptr(_load(builder, H.IN_PLACE), _I8P)
        n = builder.trunc(args[1], _I32)
        call_args = [in_place, _data(context, builder, sig.args[0], args[0]), n, _load(builder, dtype_slot),
                     _load(builder, args[2]), _load(builder, H.COMM)]
        return builder.call(fn, call_args)

    return types.int32(buf, types.int64, types.int64), codegen


@intrinsic
def _allgather_call(typingctx, src, dst, count):
    """MPI_Allgather(src, count, <dtype>, dst, count, <dtype>, comm)."""
    if not (isinstance(src, types.Array) and isinstance(dst, types.Array)):
        return None
    dtype_slot = _dtype_slot(src)

    def codegen(context, builder, sig, args):
        fn = builder.inttoptr(_load(builder, H.ALLGATHER), _ALLGATHER_T.as_pointer())
        n = builder.trunc(args[2], _I32)
        dt = _load(builder, dtype_slot)
        call_args = [_data(context, builder, sig.args[0], args[0]), n, dt,
                     _data(context, builder, sig.args[1], args[1]), n, dt, _load(builder, H.COMM)]
        return builder.call(fn, call_args)

    return types.int32(src, dst, types.int64), codegen


def _point_to_point(slot):
    @intrinsic
    def call(typingctx, buf, peer, tag, request):
        """MPI_Isend/MPI_Irecv(buf, len(buf), <dtype>, peer, tag, comm, &request[0])."""
        if not (isinstance(buf, types.Array) and isinstance(request, types.Array)):
            return None
        dtype_slot = _dtype_slot(buf)

        def codegen(context, builder, sig, args):
            fn = builder.inttoptr(_load(builder, slot), _ISEND_T.as_pointer())
            arr = context.make_array(sig.args[0])(context, builder, args[0])
            n = builder.trunc(builder.extract_value(arr.shape, 0), _I32)
            call_args = [builder.bitcast(arr.data, _I8P), n, _load(builder, dtype_slot),
                         builder.trunc(args[1], _I32), builder.trunc(args[2], _I32), _load(builder, H.COMM),
                         _data(context, builder, sig.args[3], args[3])]
            return builder.call(fn, call_args)

        return types.int32(buf, types.int64, types.int64, request), codegen

    return call


_isend_call = _point_to_point(H.ISEND)
_irecv_call = _point_to_point(H.IRECV)


@intrinsic
def _wait_call(typingctx, request, status):
    """MPI_Wait(&request[0], status): `status` is scratch larger than any MPI_Status."""
    def codegen(context, builder, sig, args):
        fn = builder.inttoptr(_load(builder, H.WAIT), _WAIT_T.as_pointer())
        return builder.call(fn, [_data(context, builder, sig.args[0], args[0]),
                                 _data(context, builder, sig.args[1], args[1])])

    return types.int32(request, status), codegen


@_kernel
def _check_ready():
    if _slot(H.READY) == 0:
        raise RuntimeError(
            "this program was compiled for a multi-process pmap, but MPI is not set up in this "
            "process: call omnistage.distributed.initialize() first (and not after shutdown())")


@_kernel
def _check_status(status):
    if status != 0:
        raise RuntimeError("an MPI collective failed")


@_kernel
def rank():
    """This process's rank in the kernels' communicator, as an int32."""
    _check_ready()
    return np.int32(_slot(H.RANK))


@_kernel
def allreduce(x, op_slot):
    """A new array: reduction `op_slot` (an `mpi_handles.OP_SLOT` value) of the 1-D
    C-contiguous array `x` over every process."""
    _check_ready()
    out = np.empty_like(x)
    n = x.shape[0]
    for start in range(0, n, _CHUNK):
        stop = min(n, start + _CHUNK)
        _check_status(_allreduce_call(x[start:stop], out[start:stop], stop - start, op_slot))
    return out


@_kernel
def allreduce_in_place(buf, op_slot):
    """Reduce the 1-D C-contiguous array `buf` over every process, in place (the caller owns
    it: a fresh local result no one else reads); returns it."""
    _check_ready()
    n = buf.shape[0]
    for start in range(0, n, _CHUNK):
        stop = min(n, start + _CHUNK)
        _check_status(_allreduce_in_place_call(buf[start:stop], stop - start, op_slot))
    return buf


@_kernel
def allgather(x):
    """A new array: every process's 1-D C-contiguous `x`, concatenated in rank order."""
    _check_ready()
    n = x.shape[0]
    size = _slot(H.SIZE)
    out = np.empty(size * n, x.dtype)
    if n <= _CHUNK:
        _check_status(_allgather_call(x, out, n))
        return out
    # a count beyond a C int: gather chunk by chunk into a (size, chunk) scratch
    for start in range(0, n, _CHUNK):
        stop = min(n, start + _CHUNK)
        part = np.empty(size * (stop - start), x.dtype)
        _check_status(_allgather_call(x[start:stop], part, stop - start))
        for p in range(size):
            out[p * n + start:p * n + stop] = part[p * (stop - start):(p + 1) * (stop - start)]
    return out


@_kernel
def ppermute(x, pairs):
    """lax.ppermute across processes: `x` is this process's (L, row) C-contiguous examples of a
    global axis of L * size; `pairs` the flat (source, destination) global indices. Returns
    the new (L, row) array: row t % L of process t // L is source s's, zeros where nothing
    arrives. Sends and receives are nonblocking (tag: the destination index, unique), then
    waited on, so no order of the pairs can deadlock; pairs within a process are copies."""
    _check_ready()
    local = x.shape[0]
    me = _slot(H.RANK)
    out = np.empty_like(x)  # rows nothing arrives at are zeroed below (not all: a 16 MiB
    received = np.zeros(local, np.bool_)  # zero fill cost ~2 ms a call)
    if x.shape[1] >= _CHUNK:
        raise ValueError("ppermute across processes: an example of 2**30 elements or more")
    n = pairs.shape[0] // 2
    # one int64 per request (MPICH's are C ints, Open MPI's pointers), scratch for the status
    requests = np.zeros(max(2 * n, 1), np.int64)
    status = np.empty(32, np.int64)
    k = 0
    for j in range(n):
        s, t = pairs[2 * j], pairs[2 * j + 1]
        if t // local == me:
            received[t % local] = True
        if s // local == me and t // local == me:
            out[t % local] = x[s % local]
        elif s // local == me:
            _check_status(_isend_call(x[s % local], t // local, t, requests[k:k + 1]))
            k += 1
        elif t // local == me:
            _check_status(_irecv_call(out[t % local], s // local, t, requests[k:k + 1]))
            k += 1
    for row in range(local):
        if not received[row]:
            out[row] = 0
    for i in range(k):
        _check_status(_wait_call(requests[i:i + 1], status))
    return out
