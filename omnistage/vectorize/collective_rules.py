"""Collectives under vmap (`omnistage.lax.parallel`).

A collective over the pass's own axis name becomes an operation on the batch axis (the
`COLLECTIVE` table, which the pass consults even when the operand is unbatched):

    psum  -> reduce_sum over the batch axis (an unbatched operand: times the axis size)
    pmax / pmin -> reduce_max / reduce_min over it (an unbatched operand: itself)
    all_gather  -> the batch axis moved to `axis` (merged into it when `tiled`)
    axis_index  -> iota over the batch axis

Their results are the same for every example (unbatched). A reduction over several axis
names reduces ours and leaves the others to the enclosing transformations. A collective
over another axis (an enclosing vmap's) acts independently per example of this one, so its
`BATCH` rule keeps the batch axis and binds it again.

Multi-process pmap: when the axis spans processes (`parallel.processes_spanned`), each process
holds a slice of the examples; the local result above is then combined across processes with
one `process_allreduce` (psum; pmax/pmin of integers) or `process_allgather` (all_gather;
pmax/pmin of floats, whose NaN and complex ordering MPI's MAX/MIN do not follow: every
process's value is gathered and reduced as reduce_max/min do), and axis_index adds
`process_index() * local size`.
"""
import numpy as np

from ..core.array import Array, aval_of
from ..lax import elementwise as E
from ..lax import parallel
from ..lax import reductions as lax_red
from ..lax import shapes as S
from .rules import BATCH, COLLECTIVE, batch_at, bind, move_axis, register


def _rest(axis_name, batch_axis):
    return tuple(n for n in axis_name if n != batch_axis.name)


def _reduce_over_others(name, out, axis_name, batch_axis):
    rest = _rest(axis_name, batch_axis)
    return bind(name, out, axis_name=rest) if rest else out


# --- across processes (multi-process pmap) ------------------------------------------------------

_BOOL_OPS = {"sum": "or", "max": "or", "min": "and"}
_REDUCERS = {"sum": lax_red.reduce_sum, "max": lax_red.reduce_max, "min": lax_red.reduce_min}


def _across_processes(op, x, batch_axis):
    """`x`, this process's reduction over its examples, reduced over every process's."""
    processes = parallel.processes_spanned(batch_axis.name)
    if processes == 1:
        return x
    kind = aval_of(x).dtype.kind
    if kind == "b":
        return parallel.process_allreduce_p.bind(x, op=_BOOL_OPS[op])
    if op == "sum" or kind in "iu":
        return parallel.process_allreduce_p.bind(x, op=op)
    shape = aval_of(x).shape
    gathered = parallel.process_allgather_p.bind(S.reshape(x, (1,) + shape), processes=processes)
    return _REDUCERS[op](gathered, (0,))


def _gather_across_processes(x, axis, batch_axis):
    """`x`, holding this process's examples along `axis`, with every process's there."""
    processes = parallel.processes_spanned(batch_axis.name)
    if processes == 1:
        return x
    gathered = parallel.process_allgather_p.bind(move_axis(x, axis, 0), processes=processes)
    return move_axis(gathered, 0, axis)


# --- collectives over this pass's axis -------------------------------------------------------------


def _psum(args, dims, batch_axis, *, axis_name):
    (x,), (d,) = args, dims
    if d is None:
        aval = aval_of(x)
        out = E.mul(x, Array(np.asarray(batch_axis.size, aval.dtype), aval.weak_type))
    else:
        out = lax_red.reduce_sum(x, (d,))
    out = _across_processes("sum", out, batch_axis)
    return _reduce_over_others("psum", out, axis_name, batch_axis), None


def _extremum(name, reducer):
    op = name[1:]

    def rule(args, dims, batch_axis, *, axis_name):
        (x,), (d,) = args, dims
        out = x if d is None else reducer(x, (d,))
        out = _across_processes(op, out, batch_axis)
        return _reduce_over_others(name, out, axis_name, batch_axis), None

    return rule


def _all_gather_rule(args, dims, batch_axis, *, axis_name, axis, tiled):
    (x,), (d,) = args, dims
    if _rest(axis_name, batch_axis):
        raise NotImplementedError(
            f"all_gather over several axis names {axis_name} is not supported under vmap; "
            f"gather over one name at a time"
        )
    gathered = _gather_across_processes(batch_at(x, d, batch_axis.size, axis), axis, batch_axis)
    if not tiled:
        return gathered, None
    shape = aval_of(gathered).shape
    merged = shape[:axis] + (shape[axis] * shape[axis + 1],) + shape[axis + 2:]
    return S.reshape(gathered, merged), None


def _axis_index(args, dims, batch_axis, *, axis_name):
    local = S.broadcasted_iota(np.int32, (batch_axis.size,), 0)
    if parallel.processes_spanned(batch_axis.name) == 1:
        return local, 0
    first = E.mul(parallel.process_index_p.bind(), Array(np.asarray(batch_axis.size, np.int32)))
    return E.add(local, first), 0


COLLECTIVE["psum"] = _psum
COLLECTIVE["pmax"] = _extremum("pmax", lax_red.reduce_max)
COLLECTIVE["pmin"] = _extremum("pmin", lax_red.reduce_min)
COLLECTIVE["all_gather"] = _all_gather_rule
COLLECTIVE["axis_index"] = _axis_index


# --- collectives over an enclosing transformation's axis ----------------------------------------


def _other_axis_reduction(name):
    def rule(args, dims, *, axis_name):
        (x,), (d,) = args, dims
        return bind(name, x, axis_name=axis_name), d

    return rule


for _name in ("psum", "pmax", "pmin"):
    BATCH[_name] = _other_axis_reduction(_name)


@register("all_gather")
def _other_axis_all_gather(args, dims, *, axis_name, axis, tiled):
    (x,), (d,) = args, dims
    x = move_axis(x, d, 0)
    return bind("all_gather", x, axis_name=axis_name, axis=axis + 1, tiled=tiled), 0


@register("axis_index")
def _other_axis_index(args, dims, *, axis_name):
    return bind("axis_index", axis_name=axis_name), None


# --- the cross-process primitives under an enclosing vmap ----------------------------------------


@register("process_allreduce")
def _batched_process_allreduce(args, dims, *, op):
    (x,), (d,) = args, dims
    return parallel.process_allreduce_p.bind(x, op=op), d


@register("process_allgather")
def _batched_process_allgather(args, dims, *, processes):
    # concatenation runs along axis 0: keep each example's rows there, the batch axis next
    (x,), (d,) = args, dims
    return parallel.process_allgather_p.bind(move_axis(x, d, 1), processes=processes), 1


@register("process_index")
def _batched_process_index(args, dims):
    # no operands, so never batched itself: the same index for every example
    return parallel.process_index_p.bind(), None
