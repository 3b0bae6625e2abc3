"""Cumulative (scan-along-one-axis) primitives: cumsum, cumprod, cummax, cummin, cumlogsumexp.

Each takes static `axis` and `reverse` parameters and returns an array of the operand's
shape and dtype (lax is strict: no promotion here; `jnp.cumsum` promotes before calling).
Imports core only.
"""
import numpy as np

from ..core.aval import ShapedArray
from ..core.primitive import Primitive
from . import _rules as R
from ._rules import operands


def _np_cumsum(x, axis):
    return np.cumsum(x, axis=axis, dtype=x.dtype) if x.dtype != np.bool_ else np.logical_or.accumulate(x, axis=axis)


def _np_cumprod(x, axis):
    return np.cumprod(x, axis=axis, dtype=x.dtype) if x.dtype != np.bool_ else np.logical_and.accumulate(x, axis=axis)


def _np_cummax(x, axis):
    return np.maximum.accumulate(x, axis=axis)


def _np_cummin(x, axis):
    return np.minimum.accumulate(x, axis=axis)


def _np_cumlogsumexp(x, axis):
    return np.logaddexp.accumulate(x, axis=axis)


# name: (NumPy accumulate along an axis, accepted dtypes)
_TABLE = {
    "cumsum": (_np_cumsum, R.NUMBER),
    "cumprod": (_np_cumprod, R.NUMBER),
    "cummax": (_np_cummax, R.REAL),
    "cummin": (_np_cummin, R.REAL),
    "cumlogsumexp": (_np_cumlogsumexp, R.FLOAT),
}


def _cumulative_abstract(name, kind):
    def rule(x, *, axis, reverse):
        R.check_kind(name, x.dtype, kind)
        if not 0 <= axis < x.ndim:
            raise ValueError(f"{name}: axis {axis} is out of bounds for operand of shape {x.shape} (rank {x.ndim}).")
        return ShapedArray(x.shape, x.dtype, x.weak_type)

    return rule


def _cumulative_impl(fn):
    def impl(x, *, axis, reverse):
        x = np.asarray(x)
        if x.size == 0:
            return x.copy()
        if reverse:
            return np.flip(fn(np.flip(x, axis), axis), axis)
        return fn(x, axis)

    return R.quiet(R.exact(impl))


PRIMITIVES = {n: Primitive(n, _cumulative_abstract(n, kind), _cumulative_impl(fn)) for n, (fn, kind) in _TABLE.items()}
globals().update({f"{n}_p": p for n, p in PRIMITIVES.items()})


def _cumulative(name):
    p = PRIMITIVES[name]

    def cumulative(operand, axis=0, reverse=False):
        (x,) = operands(operand)
        if x.ndim == 0:
            raise ValueError(f"lax.{name} requires an operand of rank >= 1, got shape {x.shape}.")
        ax = R.canonical_axes(axis, x.ndim)[0]
        return p.bind(x, axis=ax, reverse=bool(reverse))

    cumulative.__name__ = name
    cumulative.__doc__ = f"`{name}` of `operand` along `axis` (from the end when `reverse`)."
    return cumulative


cumsum = _cumulative("cumsum")
cumprod = _cumulative("cumprod")
cummax = _cumulative("cummax")
cummin = _cumulative("cummin")
cumlogsumexp = _cumulative("cumlogsumexp")

__all__ = ["cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"]
