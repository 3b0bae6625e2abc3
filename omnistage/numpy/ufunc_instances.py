"""The 14 functions that are `jnp.ufunc` instances in JAX (`jnp.add.reduce`, `jnp.add.at`,
`jnp.multiply.outer`, `jnp.logical_or.reduce`, ...): each wraps this package's plain function
(`call`), with the fast reduction, accumulation and `at` JAX gives it where one exists (sum,
cumsum, `x.at[i].add`, ...); the rest come from `ufunc`'s loops. Imports this package's modules only.
"""
import numpy as np

from . import reductions as RD
from . import ufuncs as U
from .ufunc_class import ufunc


def _asarray(a):
    from .. import numpy as jnp  # noqa: PLC0415 - this package imports this module

    return jnp.asarray(a)


def _reduce(fn, takes_dtype=True, takes_initial=True, combine=None):
    """A ufunc.reduce from a NumPy-style reduction `fn(a, axis, dtype, keepdims, initial, where)`."""
    def reduce(a, axis=0, dtype=None, keepdims=False, initial=None, where=None):
        kwargs = {"axis": axis, "keepdims": keepdims, "where": where}
        if takes_dtype:
            kwargs["dtype"] = dtype
        elif dtype is not None:
            a = _asarray(a).astype(dtype)
        if takes_initial:
            kwargs["initial"] = initial
        out = fn(a, **kwargs)
        return out if takes_initial or initial is None else combine(out, initial)

    return reduce


def _accumulate(fn):
    def accumulate(a, axis=0, dtype=None):
        return fn(a, axis=axis, dtype=dtype)

    return accumulate


def _at(method):
    def at(a, indices, b):
        return getattr(_asarray(a).at[indices], method)(b)

    return at


def _make():
    u = {}
    u["add"] = ufunc(U.add, 2, 1, name="add", identity=0, call=U.add, reduce=_reduce(RD.sum),
                     accumulate=_accumulate(RD.cumsum), at=_at("add"))
    u["multiply"] = ufunc(U.multiply, 2, 1, name="multiply", identity=1, call=U.multiply, reduce=_reduce(RD.prod),
                          accumulate=_accumulate(RD.cumprod), at=_at("multiply"))
    u["maximum"] = ufunc(U.maximum, 2, 1, name="maximum", call=U.maximum, reduce=_reduce(RD.max, takes_dtype=False),
                         at=_at("max"))
    u["minimum"] = ufunc(U.minimum, 2, 1, name="minimum", call=U.minimum, reduce=_reduce(RD.min, takes_dtype=False),
                         at=_at("min"))
    u["logical_and"] = ufunc(U.logical_and, 2, 1, name="logical_and", identity=True, call=U.logical_and,
                             reduce=_reduce(RD.all, False, False, U.logical_and))
    u["logical_or"] = ufunc(U.logical_or, 2, 1, name="logical_or", identity=False, call=U.logical_or,
                            reduce=_reduce(RD.any, False, False, U.logical_or))
    u["logical_xor"] = ufunc(U.logical_xor, 2, 1, name="logical_xor", identity=False, call=U.logical_xor)
    u["subtract"] = ufunc(U.subtract, 2, 1, name="subtract", call=U.subtract)
    u["bitwise_and"] = ufunc(U.bitwise_and, 2, 1, name="bitwise_and", identity=-1, call=U.bitwise_and)
    u["bitwise_or"] = ufunc(U.bitwise_or, 2, 1, name="bitwise_or", identity=0, call=U.bitwise_or)
    u["bitwise_xor"] = ufunc(U.bitwise_xor, 2, 1, name="bitwise_xor", identity=0, call=U.bitwise_xor)
    u["logaddexp"] = ufunc(U.logaddexp, 2, 1, name="logaddexp", identity=-np.inf, call=U.logaddexp)
    u["logaddexp2"] = ufunc(U.logaddexp2, 2, 1, name="logaddexp2", identity=-np.inf, call=U.logaddexp2)
    u["negative"] = ufunc(U.negative, 1, 1, name="negative", call=U.negative)
    return u


globals().update(_make())

__all__ = ["add", "multiply", "maximum", "minimum", "logical_and", "logical_or", "logical_xor", "subtract",
           "bitwise_and", "bitwise_or", "bitwise_xor", "logaddexp", "logaddexp2", "negative"]
