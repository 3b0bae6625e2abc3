"""dot_general: the one contraction primitive (matmul, dot, einsum, tensordot lower to it)."""

import math

import numpy as np

from ..core.aval import ShapedArray
from ..core.primitive import Primitive
from . import _rules as R
from ._rules import operands


def _normalize_dims(dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    return ((tuple(int(i) for i in lc), tuple(int(i) for i in rc)), (tuple(int(i) for i in lb), tuple(int(i) for i in rb)))


def _dot_general_abstract(lhs, rhs, *, dimension_numbers, precision=None, preferred_element_type=None):
    (lc, rc), (lb, rb) = dimension_numbers
    if preferred_element_type is None:
        dt = R.same_dtype("dot_general", (lhs, rhs))
    else:
        dt = np.dtype(preferred_element_type)
    if lhs.dtype.kind == "b" and rhs.dtype.kind == "b" and preferred_element_type is None:
        dt = np.dtype("bool")
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise TypeError(f"dot_general requires equal numbers of contracting and batch dimensions, got {dimension_numbers}")
    for a, b in list(zip(lc, rc)) + list(zip(lb, rb)):
        if not (0 <= a < lhs.ndim and 0 <= b < rhs.ndim):
            raise TypeError(f"dot_general dimension numbers {dimension_numbers} out of range for shapes {lhs.shape}, {rhs.shape}")
        if lhs.shape[a] != rhs.shape[b]:
            raise TypeError(
                f"dot_general requires contracting/batch dimensions to have the same shape, got "
                f"lhs dim {a} of size {lhs.shape[a]} and rhs dim {b} of size {rhs.shape[b]} "
                f"(shapes {lhs.shape} and {rhs.shape})."
            )
    lfree = [d for i, d in enumerate(lhs.shape) if i not in lc and i not in lb]
    rfree = [d for i, d in enumerate(rhs.shape) if i not in rc and i not in rb]
    shape = [lhs.shape[i] for i in lb] + lfree + rfree
    return ShapedArray(shape, dt, lhs.weak_type and rhs.weak_type)


def _dot_general_impl(lhs, rhs, *, dimension_numbers, precision=None, preferred_element_type=None):
    """As one batched matmul: each operand transposed to (batch, free, contract) /
    (batch, contract, free) and flattened to 3-D, so NumPy calls BLAS once per batch
    element (einsum's generic path is ~100x slower on small complex batches)."""
    lhs, rhs = np.asarray(lhs), np.asarray(rhs)
    (lc, rc), (lb, rb) = dimension_numbers
    if preferred_element_type is None and lhs.dtype == rhs.dtype and lhs.dtype.kind != "b":
        dt = lhs.dtype  # what the shape rule says, without building avals (an eager call's cost)
    else:
        dt = _dot_general_abstract(
            ShapedArray(lhs.shape, lhs.dtype), ShapedArray(rhs.shape, rhs.dtype),
            dimension_numbers=dimension_numbers, preferred_element_type=preferred_element_type,
        ).dtype
    work = np.int32 if dt.kind == "b" else dt
    lfree = [i for i in range(lhs.ndim) if i not in lc and i not in lb]
    rfree = [i for i in range(rhs.ndim) if i not in rc and i not in rb]
    batch = [lhs.shape[i] for i in lb]
    size = lambda x, dims: math.prod(x.shape[i] for i in dims)  # noqa: E731
    a = np.transpose(lhs.astype(work, copy=False), list(lb) + lfree + list(lc))
    b = np.transpose(rhs.astype(work, copy=False), list(rb) + list(rc) + rfree)
    nb = math.prod(batch)
    a = a.reshape(nb, size(lhs, lfree), size(lhs, lc))
    b = b.reshape(nb, size(rhs, rc), size(rhs, rfree))
    # without contraction each element is one product: multiplied, not summed from +0 (which
    # makes -0.0 of x * 1.0 +0.0; XLA multiplies, and so do jitted programs: cleanup)
    out = (np.matmul(a, b) if lc else a * b).reshape(batch + [lhs.shape[i] for i in lfree] + [rhs.shape[i] for i in rfree])
    if dt.kind == "b":
        return out != 0
    return np.asarray(out, dtype=dt)


dot_general_p = Primitive("dot_general", _dot_general_abstract, _dot_general_impl)


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None):
    lhs, rhs = operands(lhs, rhs)
    pet = None if preferred_element_type is None else np.dtype(preferred_element_type).name
    return dot_general_p.bind(lhs, rhs, dimension_numbers=_normalize_dims(dimension_numbers), precision=None, preferred_element_type=pet)


def dot(lhs, rhs, precision=None, preferred_element_type=None):
    """Vector/matrix products of rank-1/2 operands (lax.dot)."""
    lhs, rhs = operands(lhs, rhs)
    if lhs.ndim in (1, 2) and rhs.ndim in (1, 2):
        return dot_general(lhs, rhs, (((lhs.ndim - 1,), (0,)), ((), ())), precision, preferred_element_type)
    raise TypeError(f"lax.dot requires rank-1 or rank-2 operands, got shapes {lhs.shape} and {rhs.shape}")


__all__ = ["dot_general", "dot"]
