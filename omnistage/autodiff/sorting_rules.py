"""Derivative rules of `sort` (any number of operands, `num_keys` keys), as JAX's: sorting
permutes, so each float operand's tangent is its tangent permuted the same way. The
permutation is found by sorting an iota along with the keys (one more sort, stable, so ties
keep the primal's order), and applied with a gather along the sort dimension; the
cotangent goes back with that gather's transpose (a scatter_add of a permutation).
`top_k` is built on sort in lax, so it needs no rule of its own.

Imports lax and the rule tables only.
"""
import numpy as np

from ..core.array import aval_of
from ..lax import shapes as S
from . import indexing_rules as IR
from . import zeros as Z
from .rules import JVP, VJP, bind


def _permutation(keys, dimension, num_keys):
    """Where each sorted entry came from along `dimension` (int32, the operands' shape).
    Sorted stably, so that ties keep the order the primal sort gave them (every
    implementation of `sort` is stable, which satisfies is_stable=False too)."""
    shape = tuple(aval_of(keys[0]).shape)
    iota = S.broadcasted_iota(np.int32, shape, dimension)
    outs = bind("sort", *keys, iota, dimension=dimension, is_stable=True, num_keys=num_keys)
    return outs[-1]


def _sort_jvp(primals, tangents, out, *, dimension, is_stable, num_keys):
    perm = _permutation(primals[:num_keys], dimension, num_keys)
    return [
        None if t is None else IR.take_along_axis(t, perm, dimension)
        for t in tangents
    ]


def _sort_vjp(cts, ins, outs, *, dimension, is_stable, num_keys):
    perm = []  # computed once, on the first input that needs a cotangent

    def ct_in(i):
        if cts[i] is None or not Z.is_differentiable(aval_of(ins[i])):
            return None
        if not perm:
            perm.append(_permutation(ins[:num_keys], dimension, num_keys))
        return IR.put_along_axis(cts[i], ins[i], perm[0], dimension)

    return [lambda i=i: ct_in(i) for i in range(len(ins))]


JVP["sort"], VJP["sort"] = _sort_jvp, _sort_vjp
