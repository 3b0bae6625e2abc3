"""`ppermute` under vmap (`omnistage.lax.parallel`): over the pass's own axis name it moves
examples along the batch axis, statically (the permutation is a parameter):

    out[dest] = x[source] for each (source, destination) pair, zeros where nothing arrives

as slices of the batch axis concatenated in destination order (a ring shift is two slices).
When the axis spans processes (multi-process pmap), the pairs are global example indices and
the move is one `process_ppermute` of this process's examples (point-to-point MPI inside the
compiled kernel). Its result, unlike psum's, differs per example: it stays batched.

Over another axis (an enclosing vmap's) ppermute acts per example of this one: bound again,
the batch axis kept. `process_ppermute` under an enclosing vmap keeps the examples on axis 0
(what it permutes) and this pass's batch axis next to them.
"""
import numpy as np

from ..core.array import Array, aval_of
from ..lax import parallel
from ..lax import shapes as S
from .rules import COLLECTIVE, batch_at, bind, move_axis, register


def _runs(perm, size):
    """(destination start, source start or None for zeros, length) covering 0..size-1."""
    source_of = dict((d, s) for s, d in perm)
    runs, d = [], 0
    while d < size:
        s, n = source_of.get(d), 1
        if s is None:
            while d + n < size and d + n not in source_of:
                n += 1
        else:
            while d + n < size and source_of.get(d + n) == s + n:
                n += 1
        runs.append((d, s, n))
        d += n
    return runs


def permute_rows(x, perm):
    """`x` with its axis-0 entries moved by `perm` ((source, destination) pairs), zeros where
    none arrives."""
    aval = aval_of(x)
    pieces = []
    for _, s, n in _runs(perm, aval.shape[0]):
        if s is None:
            zero = Array(np.zeros((), aval.dtype), aval.weak_type)
            pieces.append(S.broadcast(zero, (n,) + tuple(aval.shape[1:])))
        else:
            pieces.append(S.slice_in_dim(x, s, s + n, axis=0))
    return pieces[0] if len(pieces) == 1 else S.concatenate(pieces, 0)


def _ppermute(args, dims, batch_axis, *, axis_name, perm):
    (x,), (d,) = args, dims
    rows = batch_at(x, d, batch_axis.size, 0)
    if parallel.processes_spanned(batch_axis.name) > 1:
        return parallel.process_ppermute_p.bind(rows, perm=perm), 0
    return permute_rows(rows, perm), 0


COLLECTIVE["ppermute"] = _ppermute


@register("ppermute")
def _other_axis_ppermute(args, dims, *, axis_name, perm):
    (x,), (d,) = args, dims
    return bind("ppermute", x, axis_name=axis_name, perm=perm), d


@register("process_ppermute")
def _batched_process_ppermute(args, dims, *, perm):
    (x,), (d,) = args, dims
    return parallel.process_ppermute_p.bind(move_axis(x, d, 1), perm=perm), 1
