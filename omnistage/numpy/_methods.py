"""Operators and array methods shared by `Array` and tracers, installed at import.

Methods look up `omnistage.numpy` functions by name when called, so one table serves both
classes and every function the op library defines.
"""
import functools

import numpy as np

from ..core.array import Array
from ..core.tracer import Tracer


@functools.cache
def _jnp():
    """omnistage.numpy (which imports this module), found on first use."""
    from .. import numpy as jnp

    return jnp


def _forward(name):
    def op(self, other):
        return getattr(_jnp(), name)(self, other)

    return op


def _reverse(name):
    def op(self, other):
        return getattr(_jnp(), name)(other, self)

    return op


def _deferring(name, reverse=False):
    """Binary operator that returns NotImplemented for types it does not know."""
    def op(self, other):
        if not _is_operand(other):
            return NotImplemented
        fn = getattr(_jnp(), name)
        return fn(other, self) if reverse else fn(self, other)

    return op


def _is_operand(x):
    return isinstance(x, (Array, Tracer, np.ndarray, np.generic, bool, int, float, complex))


_BINARY = {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "true_divide",
    "floordiv": "floor_divide", "mod": "remainder", "pow": "power", "matmul": "matmul",
    "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor", "lshift": "left_shift",
    "rshift": "right_shift", "divmod": "divmod",
}
_COMPARE = {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal"}
_UNARY = {"neg": "negative", "pos": "positive", "abs": "abs", "invert": "invert"}

_METHODS = [
    "sum", "prod", "mean", "std", "var", "max", "min", "argmax", "argmin", "all", "any",
    "cumsum", "cumprod", "reshape", "ravel", "transpose", "swapaxes", "squeeze", "flatten",
    "clip", "round", "conj", "conjugate", "dot", "sort", "argsort", "take", "trace",
    "repeat", "nonzero", "ptp", "diagonal", "searchsorted", "choose", "compress",
]


def _method(name):
    def m(self, *args, **kwargs):
        return getattr(_jnp(), name)(self, *args, **kwargs)

    m.__name__ = name
    return m


def _reshape_method(self, *shape, order="C"):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    return _jnp().reshape(self, shape, order=order)


def _transpose_method(self, *axes):
    if len(axes) == 1 and (axes[0] is None or not isinstance(axes[0], (int, np.integer))):
        axes = axes[0]
    return _jnp().transpose(self, axes or None)


def _astype(self, dtype, copy=False, device=None):
    from .. import lax
    from .creation import _dtype_arg

    return lax.convert_element_type(self, _dtype_arg(dtype))


def _flatten(self, order="C"):
    return _jnp().ravel(self, order)


def _getitem(self, idx):
    from .indexing import getitem

    return getitem(self, idx)


def _at(self):
    from .indexing import _IndexUpdateHelper

    return _IndexUpdateHelper(self)


def _array_namespace(self, api_version=None):
    return _jnp()


def install(cls):
    for dunder, name in _BINARY.items():
        setattr(cls, f"__{dunder}__", _deferring(name))
        setattr(cls, f"__r{dunder}__", _deferring(name, reverse=True))
    for dunder, name in _COMPARE.items():
        setattr(cls, f"__{dunder}__", _deferring(name))
    for dunder, name in _UNARY.items():
        setattr(cls, f"__{dunder}__", _method(name))
    for name in _METHODS:
        setattr(cls, name, _method(name))
    cls.reshape = _reshape_method
    cls.transpose = _transpose_method
    cls.flatten = _flatten
    cls.astype = _astype
    # NumPy's method order differs from the function's: a.compress(condition) is compress(condition, a)
    cls.compress = lambda self, condition, axis=None, **kw: _jnp().compress(condition, self, axis, **kw)
    cls.__getitem__ = _getitem
    cls.at = property(_at)
    cls.T = property(lambda self: _jnp().transpose(self))
    cls.mT = property(lambda self: _jnp().swapaxes(self, -1, -2))
    cls.real = property(lambda self: _jnp().real(self))
    cls.imag = property(lambda self: _jnp().imag(self))
    cls.__array_namespace__ = _array_namespace
    cls.__hash__ = None


install(Array)
install(Tracer)
Tracer.copy = _method("copy")  # (Array has its own: a copy of the buffer)
