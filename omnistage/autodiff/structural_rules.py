"""Derivative rules of the linear structural primitives: broadcasts, reshapes, transposes,
`reduce_sum`, and `dot_general` (bilinear). Each is linear, so its VJP is its transpose:
a broadcast's transpose is a sum, a sum's is a broadcast, a contraction's is a contraction
with the other operand."""
import numpy as np

from ..core.array import aval_of
from ..lax import elementwise as E
from ..lax import reductions as RD
from ..lax import shapes as S
from . import zeros as Z
from .rules import JVP, VJP, bind, def_linear


def _unbroadcast(ct, x, *, shape, broadcast_dimensions):
    x_shape = aval_of(x).shape
    dims = broadcast_dimensions
    summed = [i for i in range(len(shape)) if i not in dims]
    summed += [d for j, d in enumerate(dims) if x_shape[j] == 1 and shape[d] != 1]
    out = RD.reduce_sum(ct, tuple(sorted(summed))) if summed else ct
    return S.reshape(out, x_shape)


def _reshape_transpose(ct, x, *, new_sizes, dimensions=None):
    x_shape = aval_of(x).shape
    if dimensions is None:
        return S.reshape(ct, x_shape)
    permuted = tuple(x_shape[d] for d in dimensions)
    return S.transpose(S.reshape(ct, permuted), tuple(np.argsort(dimensions)))


def _sum_transpose(ct, x, *, axes):
    shape = aval_of(x).shape
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    return S.broadcast_in_dim(ct, shape, kept)


def_linear("broadcast_in_dim", _unbroadcast)
def_linear("reshape", _reshape_transpose)
def_linear("transpose", lambda ct, x, *, permutation: S.transpose(ct, tuple(int(i) for i in np.argsort(permutation))))
def_linear("squeeze", lambda ct, x, *, dimensions: S.reshape(ct, aval_of(x).shape))
def_linear("reduce_sum", _sum_transpose)


# --- dot_general ------------------------------------------------------------------------


def _dot(x, y, dims, pet):
    return bind("dot_general", x, y, dimension_numbers=dims, precision=None, preferred_element_type=pet)


def _dot_jvp(primals, tangents, out, *, dimension_numbers, precision=None, preferred_element_type=None):
    x, y = primals
    tx, ty = tangents
    terms = []
    if tx is not None:
        terms.append(_dot(tx, y, dimension_numbers, preferred_element_type))
    if ty is not None:
        terms.append(_dot(x, ty, dimension_numbers, preferred_element_type))
    return Z.add_all(terms)


def _remaining(n, *removed):
    gone = {i for r in removed for i in r}
    return [i for i in range(n) if i not in gone]


def _lhs_transpose(ct, x, y, dimension_numbers, swap_out):
    """The cotangent of dot_general's lhs `x`: contract `ct` with `y` over y's free axes,
    then put x's axes back in order. `swap_out`: the output lists y's free axes first (the
    rhs transpose reuses this with the operands swapped)."""
    (x_con, y_con), (x_bat, y_bat) = dimension_numbers
    x_nd, y_nd = aval_of(x).ndim, aval_of(y).ndim
    x_kept = _remaining(x_nd, x_con, x_bat)
    y_kept = _remaining(y_nd, y_con, y_bat)
    nb = len(x_bat)
    if swap_out:
        ct_y = list(range(nb, nb + len(y_kept)))
    else:
        ct_y = list(range(nb + len(x_kept), nb + len(x_kept) + len(y_kept)))
    dims = ((tuple(ct_y), tuple(y_kept)), (tuple(range(nb)), tuple(y_bat)))
    y_dtype = aval_of(y).dtype
    if aval_of(ct).dtype != y_dtype:
        ct = E.convert_element_type(ct, y_dtype)
    res = _dot(ct, y, dims, None)
    x_con_by_y = [x_con[i] for i in np.argsort(y_con)]
    perm = tuple(int(i) for i in np.argsort(list(x_bat) + x_kept + x_con_by_y))
    return S.transpose(res, perm)


def _dot_vjp(ct, ins, out, *, dimension_numbers, precision=None, preferred_element_type=None):
    x, y = ins
    (x_con, y_con), (x_bat, y_bat) = dimension_numbers
    swapped = ((y_con, x_con), (y_bat, x_bat))
    return [
        lambda: _lhs_transpose(ct, x, y, dimension_numbers, False),
        lambda: _lhs_transpose(ct, y, x, swapped, True),
    ]


JVP["dot_general"], VJP["dot_general"] = _dot_jvp, _dot_vjp
