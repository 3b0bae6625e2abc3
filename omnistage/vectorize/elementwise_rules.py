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
from .rules import BATCH, batch_size, bind, broadcast_batched, move_axis


def _per_example_rank(x, d):
    return aval_of(x).ndim - (d is not None)


def _per_example_shape(x, d):
    shape = aval_of(x).shape
    return shape if d is None else shape[:d] + shape[d + 1:]


def align_elementwise(args, dims):
    """Operands of an elementwise primitive batched consistently: (operands, batch axis)."""
    size = batch_size(args, dims)
    ranks = [_per_example_rank(x, d) for x, d in zip(args, dims)]
    rank = max(ranks)
    full = [(x, d) for x, d, r in zip(args, dims, ranks) if r == rank]
    batched_full = [d for _, d in full if d is not None]
    target = batched_full[0] if batched_full else 0
    shape = _per_example_shape(*full[0])
    out_shape = shape[:target] + (size,) + shape[target:]
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
