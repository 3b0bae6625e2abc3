"""Numba CPU lowering of the cross-process primitives of multi-process pmap
(`omnistage.lax.parallel`: process_allreduce, process_allgather, process_index,
process_ppermute).

Each becomes a call, inside the generated njit function, of `mpi_kernels` (imported by the
module as `_mpi`): the operand flattened to one C-contiguous buffer, one MPI call on it, the
result reshaped. The local part of a collective (the reduction over this process's slices)
is an ordinary statement before it, fused and vectorized like any other:

    reduce_sum_1 = ...                            # this process's sum over its slices
    reduce_sum_1_flat = _mpi.allreduce_in_place(_rt.reshape(reduce_sum_1, 12), _mpi.SUM)  # MPI_Allreduce
    process_allreduce_1 = _rt.reshape(reduce_sum_1_flat, (3, 4))

The all-reduce works in place when its operand is a fresh array of this kernel that nothing
else reads (the local reduction's result, as above: `_owned`); otherwise (an input of the
kernel, a value used again) into a new array. In place saves a multi-MiB allocation and its
page faults per call: 4M float32 took 11 ms with a new output, 6.4 ms in place (mpi4py 7 ms).

Rules are registered in `emit_cpu.OPAQUE_RULES` (emit_cpu imports this module); the emitted
source names `_mpi.`, which makes `emit_cpu` import `mpi_kernels` in the module's header.
"""
import ast
import math

from ..staging import literals
from . import emit_cpu
from .emit_cpu import _loc_comment
from .plan import ELEMENTWISE, INDEX, REDUCE, SOURCE

MODULE_IMPORT = "from omnistage.codegen import mpi_kernels as _mpi"

# process_allreduce's `op` -> the mpi_kernels constant naming its table slot
_OP_CONSTANT = {"sum": "_mpi.SUM", "max": "_mpi.MAX", "min": "_mpi.MIN", "or": "_mpi.LOR", "and": "_mpi.LAND"}


def _flat(em, atom, owned=False):
    """A 1-D C-contiguous expression holding operand `atom`'s elements (a view of an `owned`
    one, which the emitter allocated C-contiguous)."""
    text = ast.unparse(atom)
    aval = em.aval(atom)
    dtype = emit_cpu.dtype_expr(aval.dtype)
    if literals.is_literal(atom):
        return f"_rt.full((1,), {text}, {dtype})"
    if aval.ndim == 0:
        return f"_rt.full((1,), {text}[()], {dtype})"
    return f"_rt.reshape({text if owned else f'_rt.contiguous({text})'}, {math.prod(aval.shape)})"


# statements the emitter writes into a new array of their own (loop nests), never a view
_FRESH_KINDS = (ELEMENTWISE, INDEX, REDUCE, SOURCE)


def _owned(em, atom):
    """Whether operand `atom` is an array this kernel made, read by this statement only, so
    the collective may overwrite it."""
    if literals.is_literal(atom) or em.aval(atom).ndim == 0:
        return True  # _flat copies it into a new 1-element array
    plan, name = em.plan, ast.unparse(atom)
    producer = plan.producer.get(name)
    return (producer is not None and plan.kind_of(producer) in _FRESH_KINDS and plan.materialized(name)
            and len(plan.consumers.get(name, ())) == 1 and name not in plan.outputs)


def _unflat(em, out, flat):
    shape = em.program.avals[out].shape
    em.line(f"{out} = _rt.reshape({flat}, {tuple(int(d) for d in shape)!r})")


def _emit_allreduce(em, e):
    (x,), (out,) = e.ins, e.outs
    op = e.params["op"]
    flat = em.fresh(f"{out}_flat")
    owned = _owned(em, x)
    call, how = ("allreduce_in_place", ", in place") if owned else ("allreduce", "")
    em.line(f"{flat} = _mpi.{call}({_flat(em, x, owned)}, {_OP_CONSTANT[op]})  # MPI_Allreduce({op}{how}){_loc_comment(e.stmt)}")
    _unflat(em, out, flat)


def _emit_allgather(em, e):
    (x,), (out,) = e.ins, e.outs
    flat = em.fresh(f"{out}_flat")
    em.line(f"{flat} = _mpi.allgather({_flat(em, x)})  # MPI_Allgather{_loc_comment(e.stmt)}")
    _unflat(em, out, flat)


def _emit_ppermute(em, e):
    (x,), (out,) = e.ins, e.outs
    shape = em.aval(x).shape
    rows = em.fresh(f"{out}_rows")
    pairs = [i for pair in e.params["perm"] for i in pair]
    # the pairs as a module constant: an array built from a list in the function would need
    # Numba's list machinery (and a native library could not link its helper)
    em.line(f"{rows} = _mpi.ppermute(_rt.reshape(_rt.contiguous({ast.unparse(x)}), ({shape[0]}, {math.prod(shape[1:])})), "
            f"{em.module.param_array(pairs)})  # MPI_Isend/MPI_Irecv{_loc_comment(e.stmt)}")
    _unflat(em, out, rows)


def _emit_process_index(em, e):
    (out,) = e.outs
    dtype = emit_cpu.dtype_expr(em.program.avals[out].dtype)
    em.line(f"{out} = _rt.full((), _mpi.rank(), {dtype}){_loc_comment(e.stmt)}")


emit_cpu.OPAQUE_RULES.update({
    "process_allreduce": _emit_allreduce,
    "process_allgather": _emit_allgather,
    "process_index": _emit_process_index,
    "process_ppermute": _emit_ppermute,
})
