"""Elementwise functions of `omnistage.numpy`: NumPy's ufuncs with JAX's promotion.

Each function promotes its arguments (`_promote`) and applies lax primitives, so NumPy
broadcasting and dtype rules become explicit statements in staged programs.
"""
import numpy as np

from ..core import dtypes
from .. import lax
from ._promote import promote_args, promote_args_inexact, promote_args_numeric, check_arraylike
from ..lax import _rules


def _binary(name, lax_fn, promote=promote_args):
    def fn(x1, x2, /):
        a, b = promote(name, x1, x2)
        return lax_fn(a, b)

    fn.__name__ = name
    fn.__doc__ = f"Elementwise `numpy.{name}` with JAX's type promotion."
    return fn


def _unary(name, lax_fn, promote=promote_args):
    def fn(x, /):
        (a,) = promote(name, x)
        return lax_fn(a)

    fn.__name__ = name
    fn.__doc__ = f"Elementwise `numpy.{name}` with JAX's type promotion."
    return fn


add = _binary("add", lax.add)
subtract = _binary("subtract", lax.sub)
multiply = _binary("multiply", lax.mul)
true_divide = _binary("true_divide", lax.div, promote_args_inexact)
divide = true_divide
maximum = _binary("maximum", lax.max)
minimum = _binary("minimum", lax.min)
arctan2 = _binary("arctan2", lax.atan2, promote_args_inexact)
equal = _binary("equal", lax.eq)
not_equal = _binary("not_equal", lax.ne)
less = _binary("less", lax.lt)
less_equal = _binary("less_equal", lax.le)
greater = _binary("greater", lax.gt)
greater_equal = _binary("greater_equal", lax.ge)
bitwise_and = _binary("bitwise_and", lax.bitwise_and)
bitwise_or = _binary("bitwise_or", lax.bitwise_or)
bitwise_xor = _binary("bitwise_xor", lax.bitwise_xor)

negative = _unary("negative", lax.neg)
exp = _unary("exp", lax.exp, promote_args_inexact)
log = _unary("log", lax.log, promote_args_inexact)
sqrt = _unary("sqrt", lax.sqrt, promote_args_inexact)
sin = _unary("sin", lax.sin, promote_args_inexact)
cos = _unary("cos", lax.cos, promote_args_inexact)
tan = _unary("tan", lax.tan, promote_args_inexact)
tanh = _unary("tanh", lax.tanh, promote_args_inexact)
isfinite = _unary("isfinite", lambda x: lax.is_finite(x) if dtypes.is_float(x.dtype) else lax.eq(x, x))


def invert(x, /):
    (a,) = promote_args("invert", x)
    return lax.bitwise_not(a)


bitwise_not = invert


def positive(x, /):
    (a,) = promote_args("positive", x)
    return a


def absolute(x, /):
    (a,) = promote_args("absolute", x)
    if a.dtype.kind in "ub":
        return a
    return lax.abs(a)


abs = absolute


def conjugate(x, /):
    (a,) = promote_args("conjugate", x)
    return lax.conj(a) if dtypes.is_complex(a.dtype) else a


conj = conjugate


def real(x, /):
    (a,) = promote_args("real", x)
    return lax.real(a) if dtypes.is_complex(a.dtype) else a


def imag(x, /):
    (a,) = promote_args("imag", x)
    return lax.imag(a) if dtypes.is_complex(a.dtype) else lax.mul(a, _zero_like(a))


def _zero_like(a):
    from ..core.array import Array

    return Array(np.zeros((), a.dtype), a.weak_type)


def power(x1, x2, /):
    """x1 ** x2; a static integer exponent becomes `integer_pow` (exact for ints)."""
    check_arraylike("power", x1, x2)
    if isinstance(x2, int) and not isinstance(x2, bool):
        (a,) = promote_args("power", x1)
        if x2 >= 0 or dtypes.is_inexact(a.dtype):
            return lax.integer_pow(a, x2)
    a, b = promote_args_numeric("power", x1, x2)
    if dtypes.is_integer(a.dtype):
        return _integer_power(a, b)
    return lax.pow(a, b)


def _integer_power(a, b):
    """Integer ** integer by repeated squaring over the bits of b (negative b gives 0, as JAX)."""
    from ..core.array import Array

    bits = a.dtype.itemsize * 8
    one = Array(np.ones((), a.dtype), a.weak_type)
    zero = Array(np.zeros((), a.dtype), a.weak_type)
    acc = lax.broadcast_in_dim(one, a.shape, ()) if a.shape else one
    base = a
    e = b
    for _ in range(bits - 1):
        odd = lax.ne(lax.bitwise_and(e, one), zero)
        acc = lax.select(odd, lax.mul(acc, base), acc)
        base = lax.mul(base, base)
        e = lax.shift_right_logical(e, one)
    return lax.select(lax.lt(b, zero), lax.mul(acc, zero), acc)


def where(condition, x=None, y=None, /, *, size=None, fill_value=None):
    """`x` where `condition` else `y` (NumPy broadcasting, JAX promotion)."""
    if x is None and y is None:
        from .indexing import nonzero

        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise ValueError("Either both or neither of the x and y arguments should be provided to jax.numpy.where")
    check_arraylike("where", condition, x, y)
    x, y = _promote_pair_dtypes(x, y)
    cond = _rules.to_operand(condition)
    if cond.dtype != np.bool_:
        cond = lax.ne(cond, _zero_like(cond))
    from ._promote import promote_shapes

    cond, x, y = promote_shapes("where", cond, x, y)
    if cond.ndim == 0 and (x.ndim or y.ndim):
        from ._promote import broadcast_to_shape

        cond = broadcast_to_shape(cond, x.shape if x.ndim else y.shape)
    return lax.select(cond, x, y)


def _promote_pair_dtypes(x, y):
    from ._promote import promote_dtypes

    return promote_dtypes(x, y)


__all__ = [
    "add", "subtract", "multiply", "true_divide", "divide", "maximum", "minimum", "arctan2",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "bitwise_and",
    "bitwise_or", "bitwise_xor", "negative", "exp", "log", "sqrt", "sin", "cos", "tan", "tanh",
    "isfinite", "invert", "bitwise_not", "positive", "absolute", "abs", "conjugate", "conj",
    "real", "imag", "power", "where",
]
