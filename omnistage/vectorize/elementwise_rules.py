"""Batching rules of elementwise primitives (arithmetic, comparisons, conversions, select_n,
stop_gradient, fma, threefry2x32).

lax's elementwise operands have equal shapes, rank-0 operands broadcasting. The rule keeps
the batch axis where the operands already agree on it (no transpose for `x * y` with both
batched at the same axis), moves the others there, and broadcasts only what lax needs
broadcast: an unbatched operand of full rank, or a batched per-example scalar meeting
operands of higher rank. Unbatched rank-0 operands stay as they are.
"""
import numpy as np

from ..core.array import aval_of
from ..lax import elementwise as lax_ew
from ..lax import shapes as S
from .rules import BATCH, bind, broadcast_batched, move_axis


def align_elementwise(args, dims):
    """Operands of an elementwise primitive batched consistently: (operands, batch axis)."""
    # one loop over the operands, each aval read once (eager vmap runs this per statement per
    # call): the examples' count, each per-example rank, the first operand of the highest
    # rank (its per-example shape is the result's) and the batch axis of the first batched one
    size = target = None
    rank = -1
    ranks = []
    for x, d in zip(args, dims):
        shape = aval_of(x).shape
        r = len(shape) - (d is not None)
        ranks.append(r)
        if size is None and d is not None:
            size = shape[d]
        if r > rank:
            rank, first_shape, first_d, target = r, shape, d, d
        elif r == rank and target is None:
            target = d
    if size is None:
        raise ValueError("batching rule called without a batched operand")
    if target is None:
        target = 0
    shape = first_shape if first_d is None else first_shape[:first_d] + first_shape[first_d + 1:]
    out_shape = shape[:target] + (size,) + shape[target:]
    if all(d == target and r == rank for d, r in zip(dims, ranks)):
        return list(args), target  # already aligned: `x - y` with both batched alike
    aligned = []
    for x, d, r in zip(args, dims, ranks):
        if d is None:
            aligned.append(x if r == 0 else broadcast_batched(x, size, target))
        elif r == rank:
            aligned.append(move_axis(x, d, target))
        else:  # a batched per-example scalar among higher-rank operands
            aligned.append(S.broadcast_in_dim(x, out_shape, (target,)))
    return aligned, target


def elementwise_rule(name):
    def rule(args, dims, **params):
        aligned, target = align_elementwise(args, dims)
        return bind(name, *aligned, **params), target

    rule.__name__ = f"batch_{name}"
    return rule


_EXTRA = (
    "shift_right_logical", "round_away", "complex", "integer_pow", "convert_element_type",
    "select_n", "stop_gradient", "fma", "erf_inv",
)

for _name in list(lax_ew.PRIMITIVES) + list(_EXTRA):
    BATCH[_name] = elementwise_rule(_name)


def _bitcast_convert_type(args, dims, *, new_dtype):
    (x,), (d,) = args, dims
    aval = aval_of(x)
    if aval.dtype.itemsize != np.dtype(new_dtype).itemsize and d == aval.ndim - 1:
        # the width change adds or removes the trailing axis: keep the batch axis off it
        x, d = move_axis(x, d, 0), 0
    return bind("bitcast_convert_type", x, new_dtype=new_dtype), d


BATCH["bitcast_convert_type"] = _bitcast_convert_type


def _threefry2x32(args, dims):
    aligned, target = align_elementwise(args, dims)
    return list(bind("threefry2x32", *aligned)), [target, target]


BATCH["threefry2x32"] = _threefry2x32
