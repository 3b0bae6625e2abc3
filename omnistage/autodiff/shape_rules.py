"""Derivative rules of the linear shape primitives: `concatenate`, `pad`, `slice`, `rev`, and
`iota` (no inputs). Each is linear in its float operands, so the JVP applies the primitive
to the tangents and the VJP is the transpose (as JAX's):

- concatenate <-> slices of the cotangent, one per operand;
- slice (with strides) <-> pad with zeros (interior padding = stride - 1);
- pad <-> un-pad (negated edge padding) then a strided slice for the operand; the padding
  value gets the sum of the cotangent over the positions the operand does not fill;
- rev <-> rev.

(`broadcast_in_dim`, `reshape`, `transpose`, `squeeze` are in structural_rules.py.)
Imports lax and the rule tables only.
"""
import numpy as np

from ..core.array import aval_of
from ..lax import elementwise as E
from ..lax import reductions as RD
from ..lax import shapes as S
from . import zeros as Z
from .rules import JVP, VJP, def_linear, def_zero


def _zero_scalar(x):
    return np.zeros((), dtype=aval_of(x).dtype)[()]


# --- concatenate --------------------------------------------------------------------------


def _concatenate_jvp(primals, tangents, out, *, dimension):
    ts = [Z.instantiate(t, aval_of(x)) for t, x in zip(tangents, primals)]
    return S.concatenate(ts, dimension)


def _piece(ct, start, stop, dimension):
    shape = aval_of(ct).shape
    starts = [0] * len(shape)
    limits = list(shape)
    starts[dimension], limits[dimension] = start, stop
    return S.slice(ct, starts, limits)


def _concatenate_vjp(ct, ins, out, *, dimension):
    bounds = np.cumsum([0] + [aval_of(x).shape[dimension] for x in ins])
    return [
        lambda lo=int(lo), hi=int(hi): _piece(ct, lo, hi, dimension)
        for lo, hi in zip(bounds[:-1], bounds[1:])
    ]


JVP["concatenate"], VJP["concatenate"] = _concatenate_jvp, _concatenate_vjp


# --- slice --------------------------------------------------------------------------------


def _slice_transpose(ct, x, *, start_indices, limit_indices, strides=None):
    """Zeros of x's shape with `ct` at the sliced positions: a pad whose interior padding
    puts stride - 1 zeros between entries (JAX's rule)."""
    shape = aval_of(x).shape
    strides = strides or (1,) * len(shape)
    ct_shape = aval_of(ct).shape
    config = []
    for start, stride, d, n in zip(start_indices, strides, shape, ct_shape):
        real_limit = start + (0 if n == 0 else 1 + (n - 1) * stride)
        config.append((start, d - real_limit, stride - 1))
    return S.pad(ct, _zero_scalar(ct), tuple(config))


def_linear("slice", _slice_transpose)


# --- pad ----------------------------------------------------------------------------------


def _pad_jvp(primals, tangents, out, *, padding_config):
    x, value = primals
    tx = Z.instantiate(tangents[0], aval_of(x))
    tv = _zero_scalar(x) if tangents[1] is None else tangents[1]
    return S.pad(tx, tv, padding_config)


def _unpad(ct, padding_config):
    """The operand's cotangent: drop the edge padding (negated pads; a negative pad, which
    cut operand entries off, becomes zeros), then take every (interior + 1)-th entry."""
    unpad = tuple((-lo, -hi, 0) for lo, hi, _ in padding_config)
    unpadded = S.pad(ct, _zero_scalar(ct), unpad)
    shape = aval_of(unpadded).shape
    strides = tuple(interior + 1 for _, _, interior in padding_config)
    return S.slice(unpadded, (0,) * len(shape), shape, strides)


def _total(v):
    return RD.reduce_sum(v, tuple(range(aval_of(v).ndim)))


def _pad_vjp(ct, ins, out, *, padding_config):
    unpadded = []  # computed once, by whichever cotangent is asked for first

    def operand_ct():
        if not unpadded:
            unpadded.append(_unpad(ct, padding_config))
        return unpadded[0]

    return [operand_ct, lambda: E.sub(_total(ct), _total(operand_ct()))]


JVP["pad"], VJP["pad"] = _pad_jvp, _pad_vjp


# --- rev, iota ----------------------------------------------------------------------------

def_linear("rev", lambda ct, x, *, dimensions: S.rev(ct, dimensions))
def_zero("iota")  # no inputs: never differentiated, registered so every primitive has rules
