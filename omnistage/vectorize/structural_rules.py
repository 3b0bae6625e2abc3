"""Batching rules of shape primitives, reductions, cumulative ops, sort and dot_general.

Most keep the batch axis where it is and shift the static axis parameters around it
(`reduce_sum(axes=(1,))` of a value batched at 0 becomes `axes=(2,)`); the ones whose
parameters describe the whole shape (reshape, sort's operands, concatenate) move it first.
`dot_general` of two batched operands adds a dot_general batch dimension, so a batch of
matmuls is one contraction, never a loop.
"""
import numpy as np

from ..core.array import aval_of
from ..lax import cumulative as lax_cum
from ..lax import elementwise as E
from ..lax import reductions as lax_red
from ..lax import shapes as S
from .rules import (
    BATCH, all_batched_at, batch_at, batch_size, bind, move_axis, register, shifted,
)


# --- nullary primitives: never batched, bound as they are ------------------------------------


@register("iota")
def _nullary_iota(args, dims, **params):
    return bind("iota", **params), None


# --- reductions ------------------------------------------------------------------------------


def _reduction_rule(name):
    def rule(args, dims, *, axes):
        (x,), (d,) = args, dims
        out_d = d - sum(1 for a in axes if a < d)
        return bind(name, x, axes=tuple(shifted(a, d) for a in axes)), out_d

    return rule


for _name in lax_red.PRIMITIVES:
    BATCH[_name] = _reduction_rule(_name)


def _arg_reduction_rule(name):
    def rule(args, dims, *, axis, index_dtype):
        (x,), (d,) = args, dims
        out_d = d - (1 if axis < d else 0)
        return bind(name, x, axis=shifted(axis, d), index_dtype=index_dtype), out_d

    return rule


for _name in ("argmax", "argmin"):
    BATCH[_name] = _arg_reduction_rule(_name)


def _cumulative_rule(name):
    def rule(args, dims, *, axis, reverse):
        (x,), (d,) = args, dims
        return bind(name, x, axis=shifted(axis, d), reverse=reverse), d

    return rule


for _name in lax_cum.PRIMITIVES:
    BATCH[_name] = _cumulative_rule(_name)


# --- shape primitives ------------------------------------------------------------------------


@register("broadcast_in_dim")
def _broadcast_in_dim(args, dims, *, shape, broadcast_dimensions):
    (x,), (d,) = args, dims
    size = aval_of(x).shape[d]
    bd = broadcast_dimensions
    # put the batch axis of the result right after the output axis of the operand axis
    # before it, so broadcast_dimensions stay increasing and no transpose is needed
    q = bd[d - 1] + 1 if d > 0 else 0
    new_bd = tuple(bd[:d]) + (q,) + tuple(b + 1 for b in bd[d:])
    new_shape = tuple(shape[:q]) + (size,) + tuple(shape[q:])
    return bind("broadcast_in_dim", x, shape=new_shape, broadcast_dimensions=new_bd), q


@register("reshape")
def _reshape(args, dims, *, new_sizes, dimensions=None):
    (x,), (d,) = args, dims
    x = move_axis(x, d, 0)
    if dimensions is not None:
        x = S.transpose(x, (0,) + tuple(p + 1 for p in dimensions))
    size = aval_of(x).shape[0]
    return bind("reshape", x, new_sizes=(size,) + tuple(new_sizes)), 0


@register("transpose")
def _transpose(args, dims, *, permutation):
    (x,), (d,) = args, dims
    perm = (d,) + tuple(shifted(p, d) for p in permutation)
    return S.transpose(x, perm), 0


@register("squeeze")
def _squeeze(args, dims, *, dimensions):
    (x,), (d,) = args, dims
    out_d = d - sum(1 for a in dimensions if a < d)
    return bind("squeeze", x, dimensions=tuple(shifted(a, d) for a in dimensions)), out_d


@register("rev")
def _rev(args, dims, *, dimensions):
    (x,), (d,) = args, dims
    return bind("rev", x, dimensions=tuple(shifted(a, d) for a in dimensions)), d


@register("slice")
def _slice(args, dims, *, start_indices, limit_indices, strides=None):
    (x,), (d,) = args, dims
    size = aval_of(x).shape[d]
    start = tuple(start_indices[:d]) + (0,) + tuple(start_indices[d:])
    limit = tuple(limit_indices[:d]) + (size,) + tuple(limit_indices[d:])
    if strides is not None:
        strides = tuple(strides[:d]) + (1,) + tuple(strides[d:])
    return bind("slice", x, start_indices=start, limit_indices=limit, strides=strides), d


@register("concatenate")
def _concatenate(args, dims, *, dimension):
    target = next(d for d in dims if d is not None)
    size = batch_size(args, dims)
    xs = [batch_at(x, d, size, target) for x, d in zip(args, dims)]
    return bind("concatenate", *xs, dimension=shifted(dimension, target)), target


@register("pad")
def _pad(args, dims, *, padding_config):
    (x, v), (dx, dv) = args, dims
    if dv is None:
        cfg = tuple(padding_config[:dx]) + ((0, 0, 0),) + tuple(padding_config[dx:])
        return bind("pad", x, v, padding_config=cfg), dx
    # a per-example padding value: pad with zeros, then pick each example's value where a
    # padded mask of ones is False
    size = aval_of(v).shape[dv]
    x = batch_at(x, dx, size, 0)
    dt = aval_of(x).dtype
    padded = bind("pad", x, np.zeros((), dt), padding_config=((0, 0, 0),) + tuple(padding_config))
    inner = aval_of(x).shape[1:]
    ones = S.broadcast_in_dim(np.True_, inner, ())
    mask = bind("pad", ones, np.False_, padding_config=tuple(padding_config))
    out_shape = aval_of(padded).shape
    mask = S.broadcast_in_dim(mask, out_shape, tuple(range(1, len(out_shape))))
    values = S.broadcast_in_dim(move_axis(v, dv, 0), out_shape, (0,))
    return E.select_n(mask, values, padded), 0


# --- sort ------------------------------------------------------------------------------------


@register("sort")
def _sort(args, dims, *, dimension, is_stable, num_keys):
    xs = all_batched_at(args, dims, 0)
    outs = bind("sort", *xs, dimension=dimension + 1, is_stable=is_stable, num_keys=num_keys)
    return list(outs), [0] * len(outs)


# --- dot_general -----------------------------------------------------------------------------


def _free_dims(ndim, contract, batch):
    return [i for i in range(ndim) if i not in contract and i not in batch]


@register("dot_general")
def _dot_general(args, dims, *, dimension_numbers, precision=None, preferred_element_type=None):
    (lhs, rhs), (dl, dr) = args, dims
    (lc, rc), (lb, rb) = dimension_numbers
    lc2, lb2 = tuple(shifted(a, dl) for a in lc), tuple(shifted(a, dl) for a in lb)
    rc2, rb2 = tuple(shifted(a, dr) for a in rc), tuple(shifted(a, dr) for a in rb)
    if dl is not None and dr is not None:
        # both batched: the examples become the leading dot_general batch dimension
        lb2, rb2 = (dl,) + lb2, (dr,) + rb2
        out_d = 0
    elif dl is not None:
        lfree = _free_dims(aval_of(lhs).ndim, lc2, lb2)
        out_d = len(lb2) + lfree.index(dl)
    else:
        lfree = _free_dims(aval_of(lhs).ndim, lc2, lb2)
        rfree = _free_dims(aval_of(rhs).ndim, rc2, rb2)
        out_d = len(lb2) + len(lfree) + rfree.index(dr)
    dn = ((lc2, rc2), (lb2, rb2))
    out = bind("dot_general", lhs, rhs, dimension_numbers=dn, precision=precision,
               preferred_element_type=preferred_element_type)
    return out, out_d
