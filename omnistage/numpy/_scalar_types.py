"""`jnp.float32` and friends: callable scalar types that make Arrays and compare equal to
NumPy dtypes (`x.dtype == jnp.float32`)."""
import functools

import numpy as np

from ..core import dtypes


class _ScalarMeta(type):
    def __eq__(cls, other):
        try:
            return np.dtype(cls.dtype) == np.dtype(other)
        except (TypeError, ValueError):  # np.dtype raises ValueError for some malformed specs (dicts)
            return NotImplemented

    def __ne__(cls, other):
        eq = _ScalarMeta.__eq__(cls, other)
        return eq if eq is NotImplemented else not eq

    def __hash__(cls):
        return hash(cls.dtype.type)

    def __call__(cls, x=0):
        from .creation import array

        return array(x, dtype=cls.dtype)

    def __instancecheck__(cls, instance):
        return isinstance(instance, cls.dtype.type)

    def __repr__(cls):
        return f"<class 'omnistage.numpy.{cls.__name__}'>"


def _make(name, np_type):
    return _ScalarMeta(name, (), {"dtype": np.dtype(np_type)})


bool_ = _make("bool_", np.bool_)
int8, int16, int32, int64 = (_make(n, getattr(np, n)) for n in ("int8", "int16", "int32", "int64"))
uint8, uint16, uint32, uint64 = (_make(n, getattr(np, n)) for n in ("uint8", "uint16", "uint32", "uint64"))
float16, float32, float64 = (_make(n, getattr(np, n)) for n in ("float16", "float32", "float64"))
complex64, complex128 = _make("complex64", np.complex64), _make("complex128", np.complex128)


class _DtypeMeta(type):
    """`jnp.dtype`: NumPy's dtype, except that the name 'bfloat16' loads ml_dtypes first (it is
    not imported with omnistage: core.dtypes.bfloat16_type says why; JAX users write
    `jnp.dtype("bfloat16")` expecting it there). Instances and subclasses are np.dtype's."""

    def __call__(cls, obj, *args, **kwargs):
        return np.dtype(obj, *args, **kwargs) if args or kwargs else dtypes.as_dtype(obj)

    def __instancecheck__(cls, instance):
        return isinstance(instance, np.dtype)

    def __subclasscheck__(cls, subclass):
        return issubclass(subclass, np.dtype)

    def __getitem__(cls, item):
        return np.dtype[item]

    def __repr__(cls):
        return "<class 'numpy.dtype'>"


class dtype(metaclass=_DtypeMeta):  # noqa: N801 - NumPy's name
    """NumPy's dtype (see _DtypeMeta)."""


@functools.lru_cache(maxsize=None)
def bfloat16_scalar_type():
    """`jnp.bfloat16`, made when first asked for: it imports ml_dtypes (core.dtypes.bfloat16_type
    says why not at import)."""
    t = dtypes.bfloat16_type()
    return _make("bfloat16", t) if getattr(t, "dtype", 1) is not None else t


float_, complex_ = float64, complex128
int_ = int64
uint = uint64
single, double = float32, float64
csingle, cdouble = complex64, complex128

# (bfloat16 is not here: omnistage.numpy's __getattr__ makes it on first use)
__all__ = [
    "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128", "float_",
    "complex_", "int_", "uint", "single", "double", "csingle", "cdouble",
]
