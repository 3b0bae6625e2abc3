"""Abstract values: what a traced value is known to be (shape, dtype, weak type)."""
import math

import numpy as np

from . import dtypes


class ShapedArray:
    """Shape, dtype and weak-typedness of an array; hashable, used in jit cache keys."""

    __slots__ = ("shape", "dtype", "weak_type", "_hash")

    def __init__(self, shape, dtype, weak_type=False):
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype)
        self.weak_type = bool(weak_type)
        self._hash = hash((self.shape, self.dtype, self.weak_type))

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))

    def update(self, shape=None, dtype=None, weak_type=None):
        return ShapedArray(
            self.shape if shape is None else shape,
            self.dtype if dtype is None else dtype,
            self.weak_type if weak_type is None else weak_type,
        )

    def strip_weak_type(self):
        return self.update(weak_type=False) if self.weak_type else self

    def __eq__(self, other):
        return (
            isinstance(other, ShapedArray)
            and self.shape == other.shape
            and self.dtype == other.dtype
            and self.weak_type == other.weak_type
        )

    def __hash__(self):
        return self._hash

    def str_short(self):
        dims = ",".join(str(d) for d in self.shape)
        return f"{dtypes.short_name(self.dtype)}[{dims}]"

    def __str__(self):
        return ("~" if self.weak_type else "") + f"{self.dtype.name}[{', '.join(map(str, self.shape))}]"

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self.dtype.name}[{','.join(map(str, self.shape))}]{weak})"


def aval_of_value(x):
    """The ShapedArray of a concrete value (Python scalar, numpy value or Array)."""
    aval = getattr(x, "aval", None)
    if aval is not None:
        return aval
    dt, weak = dtypes.dtype_and_weak(x)
    return ShapedArray(np.shape(x), dt, weak)
