"""Symbolic zeros: a tangent or cotangent that is `None` is known to be zero and costs
nothing; these helpers make one concrete only where an operation needs an array."""
import numpy as np

from ..core import dtypes
from ..core.array import aval_of
from ..lax import elementwise as lax_ew
from ..lax import reductions as lax_red
from ..lax import shapes as lax_shapes


def zeros(aval):
    """A zero array of `aval`'s shape and dtype (a broadcast scalar: free after fusion)."""
    scalar = np.zeros((), dtype=aval.dtype)
    return lax_shapes.broadcast_in_dim(scalar, tuple(aval.shape), ())


def instantiate(t, aval):
    return zeros(aval) if t is None else t


def add(a, b):
    """The sum of two (co)tangents, either of which may be a symbolic zero."""
    if a is None:
        return b
    if b is None:
        return a
    return lax_ew.add(a, b)


def add_all(terms):
    out = None
    for t in terms:
        out = add(out, t)
    return out


def is_differentiable(aval):
    return dtypes.is_inexact(aval.dtype)


def fit(t, aval):
    """Make the (co)tangent `t` match `aval`: sum away broadcast dimensions (lax lets a
    rank-0 operand broadcast), broadcast a rank-0 value up, convert the dtype."""
    if t is None:
        return None
    t_aval = aval_of(t)
    if t_aval.shape != tuple(aval.shape):
        if not aval.shape:
            t = lax_red.reduce_sum(t, tuple(range(t_aval.ndim)))
        elif not t_aval.shape:
            t = lax_shapes.broadcast_in_dim(t, tuple(aval.shape), ())
        else:
            raise ValueError(f"cannot fit a cotangent of shape {t_aval.shape} to {aval.shape}")
    if aval_of(t).dtype != aval.dtype:
        t = lax_ew.convert_element_type(t, aval.dtype)
    return t
