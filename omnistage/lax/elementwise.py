"""Elementwise primitives and their lax wrappers (strict dtypes, no implicit promotion).

Each primitive: one `elementwise(...)` definition (shape/dtype rule + NumPy impl). The
lax-level function converts Python scalars and binds.
"""
import enum
import math

import numpy as np

from ..core import dtypes
from ..core.aval import ShapedArray
from ..core.primitive import Primitive
from . import _rules as R
from ._rules import ANY, FLOAT, INEXACT, INT_OR_BOOL, INTEGER, NUMBER, REAL, REAL_NUMBER, elementwise, operands

_bool = lambda dt: np.dtype("bool")  # noqa: E731


def _int_div(x, y):
    """XLA's integer division: rounds toward zero; x / 0 is -1 (all bits set, so the maximum
    for unsigned types) and INT_MIN / -1 wraps to INT_MIN."""
    x, y = np.asarray(x), np.asarray(y)
    zero = y == 0
    safe = np.where(zero, np.ones((), y.dtype), y)
    q = (x - np.fmod(x, safe)) // safe  # exact: x - fmod(x, y) is a multiple of y
    return np.where(zero, np.array(-1).astype(x.dtype), q)


def _int_rem(x, y):
    """XLA's integer remainder: the sign of the dividend; x % 0 is x; INT_MIN % -1 is 0."""
    x, y = np.asarray(x), np.asarray(y)
    zero = y == 0
    return np.where(zero, x, np.fmod(x, np.where(zero, np.ones((), y.dtype), y)))


def _population_count(x):
    """Set bits of the two's-complement representation (np.bitwise_count counts those of |x|)."""
    x = np.asarray(x)
    return np.bitwise_count(x.view(np.dtype(f"uint{x.dtype.itemsize * 8}")))


def _by_kind(int_impl, inexact_impl):
    """An impl that dispatches on the operands' dtype kind (integers round toward zero)."""
    return lambda x, y: (int_impl if np.asarray(x).dtype.kind in "iu" else inexact_impl)(x, y)


# Signed zeros as XLA: max(+0.0, -0.0) is +0.0 and min is -0.0 whatever the operands' order
# (NumPy returns one operand, so its answer depends on the order), and sign(-0.0) is -0.0.
# Of two zeros, x + y is +0.0 unless both are -0.0 (max's rule) and -(-x - y) is -0.0 unless
# both are +0.0 (min's).


def _zeros_as_xla(np_extreme, of_zeros, adds_zero=False):
    """`np_extreme` with XLA's zeros. Against a single number the check is cheaper: a nonzero
    one (or NaN) never meets a zero, and for max (`adds_zero`) a +0.0 one (relu's) is fixed by
    adding it (out + 0.0 turns -0.0 into +0.0 and changes nothing else): one in-place pass
    instead of the general case's five, on a 10000x1024 activation 23 -> ~5 ms."""
    def impl(x, y):
        out = np_extreme(x, y)
        if out.dtype.kind != "f" and not dtypes.is_float(out.dtype):
            return out
        # (the checks as methods and Python numbers: on a small array NumPy's np.size, np.ndim,
        # np.any and 0-d comparisons cost more than the op, and eager softplus is two of these)
        if out.ndim > 0:
            for single in (y, x):
                if (single.size if type(single) is np.ndarray else np.size(single)) == 1:
                    value = np.asarray(single).reshape(())
                    number = value.item()  # a Python float for every float dtype, bfloat16 too
                    if number != 0:  # NaN too (NaN != 0)
                        return out
                    if adds_zero and math.copysign(1.0, number) > 0:  # +0.0 (not signbit)
                        return np.add(out, value, out=out)
                    break
        if not (out == 0).any():
            return out
        return np.where((x == 0) & (y == 0), of_zeros(x, y), out)

    return impl


def _sign(x):
    out = np.sign(x)
    if dtypes.is_float(out.dtype) and np.any(x == 0):
        return np.where(x == 0, x, out)  # +-0.0 keeps its sign
    return out


# name: (impl, accepted kinds, out dtype rule, arity)
_TABLE = {
    # arithmetic
    "add": (np.add, NUMBER, None, 2),
    "sub": (np.subtract, NUMBER, None, 2),
    "mul": (np.multiply, NUMBER, None, 2),
    "div": (_by_kind(_int_div, np.true_divide), NUMBER, None, 2),
    "rem": (_by_kind(_int_rem, np.fmod), REAL_NUMBER, None, 2),
    "pow": (np.power, INEXACT, None, 2),
    # NaN-propagating; complex operands compare lexicographically (real, then imaginary part)
    "max": (_zeros_as_xla(np.maximum, lambda x, y: x + y, adds_zero=True), ANY, None, 2),
    "min": (_zeros_as_xla(np.minimum, lambda x, y: -(-x - y)), ANY, None, 2),
    "atan2": (np.arctan2, FLOAT, None, 2),
    "nextafter": (np.nextafter, FLOAT, None, 2),
    "neg": (np.negative, NUMBER, None, 1),
    "sign": (_sign, NUMBER, None, 1),
    "abs": (np.abs, NUMBER, dtypes.real_dtype, 1),
    "floor": (np.floor, FLOAT, None, 1),
    "ceil": (np.ceil, FLOAT, None, 1),
    "round": (np.round, FLOAT, None, 1),
    "is_finite": (np.isfinite, FLOAT, _bool, 1),
    # transcendental
    "exp": (np.exp, INEXACT, None, 1),
    "exp2": (np.exp2, INEXACT, None, 1),
    "log": (np.log, INEXACT, None, 1),
    "expm1": (np.expm1, INEXACT, None, 1),
    "log1p": (np.log1p, INEXACT, None, 1),
    "sqrt": (np.sqrt, INEXACT, None, 1),
    "rsqrt": (lambda x: 1 / np.sqrt(x), INEXACT, None, 1),
    "cbrt": (np.cbrt, FLOAT, None, 1),
    "tanh": (np.tanh, INEXACT, None, 1),
    "logistic": (lambda x: 1 / (1 + np.exp(-x)), INEXACT, None, 1),
    "sin": (np.sin, INEXACT, None, 1),
    "cos": (np.cos, INEXACT, None, 1),
    "tan": (np.tan, INEXACT, None, 1),
    "asin": (np.arcsin, INEXACT, None, 1),
    "acos": (np.arccos, INEXACT, None, 1),
    "atan": (np.arctan, INEXACT, None, 1),
    "sinh": (np.sinh, INEXACT, None, 1),
    "cosh": (np.cosh, INEXACT, None, 1),
    "asinh": (np.arcsinh, INEXACT, None, 1),
    "acosh": (np.arccosh, INEXACT, None, 1),
    "atanh": (np.arctanh, INEXACT, None, 1),
    # complex parts
    "real": (np.real, INEXACT, dtypes.real_dtype, 1),
    "imag": (np.imag, INEXACT, dtypes.real_dtype, 1),
    "conj": (np.conj, INEXACT, None, 1),
    # comparisons
    "eq": (np.equal, ANY, _bool, 2),
    "ne": (np.not_equal, ANY, _bool, 2),
    "lt": (np.less, REAL, _bool, 2),
    "le": (np.less_equal, REAL, _bool, 2),
    "gt": (np.greater, REAL, _bool, 2),
    "ge": (np.greater_equal, REAL, _bool, 2),
    # bitwise / logical (on bool they are logical). JAX calls the first three `and`, `or`, `not`;
    # those are Python keywords, and printed programs call primitives by name, hence the `_`.
    "and_": (np.bitwise_and, INT_OR_BOOL, None, 2),
    "or_": (np.bitwise_or, INT_OR_BOOL, None, 2),
    "xor": (np.bitwise_xor, INT_OR_BOOL, None, 2),
    "not_": (np.invert, INT_OR_BOOL, None, 1),
    "shift_left": (np.left_shift, INTEGER, None, 2),
    "shift_right_arithmetic": (np.right_shift, INTEGER, None, 2),
    "population_count": (_population_count, INTEGER, None, 1),
}

PRIMITIVES = {name: elementwise(name, impl, kind, out, nargs) for name, (impl, kind, out, nargs) in _TABLE.items()}
globals().update({f"{name}_p": p for name, p in PRIMITIVES.items()})


def _shift_right_logical_impl(x, y):
    dt = x.dtype
    u = np.dtype(f"uint{dt.itemsize * 8}")
    return (x.view(u) if x.ndim else np.asarray(x).view(u)) >> y.astype(u)


def _srl_abstract(x, y):
    return PRIMITIVES["shift_left"].abstract_eval(x, y)


shift_right_logical_p = Primitive(
    "shift_right_logical", _srl_abstract,
    lambda x, y: np.asarray(_shift_right_logical_impl(np.asarray(x), np.asarray(y))).view(np.asarray(x).dtype),
)


def _make_wrapper(p):
    def wrapper(*args):
        return p.bind(*operands(*args))

    wrapper.__name__ = p.name
    wrapper.__doc__ = f"Elementwise `{p.name}` (lax: operands must share a dtype)."
    return wrapper


_wrappers = {name: _make_wrapper(p) for name, p in PRIMITIVES.items()}
add, sub, mul, div, rem, pow = (_wrappers[n] for n in ("add", "sub", "mul", "div", "rem", "pow"))
max, min, atan2, nextafter = (_wrappers[n] for n in ("max", "min", "atan2", "nextafter"))
neg, sign, abs, floor, ceil, is_finite = (_wrappers[n] for n in ("neg", "sign", "abs", "floor", "ceil", "is_finite"))
exp, exp2, log, expm1, log1p = (_wrappers[n] for n in ("exp", "exp2", "log", "expm1", "log1p"))
sqrt, rsqrt, cbrt, tanh, logistic = (_wrappers[n] for n in ("sqrt", "rsqrt", "cbrt", "tanh", "logistic"))
sin, cos, tan, asin, acos, atan = (_wrappers[n] for n in ("sin", "cos", "tan", "asin", "acos", "atan"))
sinh, cosh, asinh, acosh, atanh = (_wrappers[n] for n in ("sinh", "cosh", "asinh", "acosh", "atanh"))
real, imag, conj = (_wrappers[n] for n in ("real", "imag", "conj"))
eq, ne, lt, le, gt, ge = (_wrappers[n] for n in ("eq", "ne", "lt", "le", "gt", "ge"))
bitwise_and, bitwise_or, bitwise_xor, bitwise_not = (_wrappers[n] for n in ("and_", "or_", "xor", "not_"))
shift_left, shift_right_arithmetic, population_count = (
    _wrappers[n] for n in ("shift_left", "shift_right_arithmetic", "population_count")
)


def shift_right_logical(x, y):
    return shift_right_logical_p.bind(*operands(x, y))


class RoundingMethod(enum.IntEnum):
    """`lax.round`'s tie-breaking rule (the values are JAX's)."""

    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def round(x, rounding_method=RoundingMethod.AWAY_FROM_ZERO):
    """Round half away from zero (JAX's default) or half to even (`TO_NEAREST_EVEN`, NumPy's)."""
    (x,) = operands(x)
    if int(rounding_method) == RoundingMethod.TO_NEAREST_EVEN:
        return PRIMITIVES["round"].bind(x)
    return round_away_p.bind(x)


def _round_half_away(x):
    """Half away from zero, from the truncation: floor(x + 0.5) rounds 0.49999997 up to 1
    and loses the sign of -0.0."""
    x = np.asarray(x)
    t = np.trunc(x)
    with np.errstate(invalid="ignore"):  # inf - inf: NaN, which selects t (the infinity)
        away = np.abs(x - t) >= 0.5
    return np.where(away, t + np.copysign(np.ones_like(x), x), t).astype(x.dtype)


round_away_p = elementwise(
    "round_away", _round_half_away, FLOAT, None, 1
)


def _complex_impl(x, y):
    # Assigning the parts (rather than computing x + 1j * y) keeps infinities and NaNs where they
    # are: 1j * inf would put a NaN in the real part.
    x, y = np.broadcast_arrays(x, y)
    out = np.empty(x.shape, dtypes.complex_dtype(x.dtype))
    out.real, out.imag = x, y
    return out


complex_p = elementwise("complex", _complex_impl, FLOAT, dtypes.complex_dtype, 2)


def complex(x, y):  # noqa: A001 - lax's name
    """The complex number x + i*y from real and imaginary parts of one floating dtype."""
    return complex_p.bind(*operands(x, y))


def square(x):
    return mul(x, x)


def reciprocal(x):
    (x,) = operands(x)
    one = np.ones((), x.dtype)
    return div(_same_typed_scalar(one, x), x)


def _same_typed_scalar(v, like):
    from ..core.array import Array

    return Array(np.asarray(v, dtype=like.dtype), like.weak_type)


def integer_pow(x, y):
    """x ** y for a static Python int y (negative allowed for inexact x)."""
    (x,) = operands(x)
    return integer_pow_p.bind(x, y=int(y))


def _integer_pow_abstract(x, *, y):
    R.check_kind("integer_pow", x.dtype, NUMBER)
    if y < 0 and not dtypes.is_inexact(x.dtype):
        raise TypeError(f"integer_pow: negative exponent {y} needs an inexact dtype, got {x.dtype.name}")
    return x


def _integer_pow_impl(x, *, y):
    x = np.asarray(x)
    if y < 0:
        return (np.ones((), x.dtype) / np.power(x, -y)).astype(x.dtype)
    if y == 0:
        return np.ones_like(x)
    return np.power(x, np.asarray(y, x.dtype) if x.dtype.kind != "c" else y).astype(x.dtype)


integer_pow_p = Primitive("integer_pow", _integer_pow_abstract, R.quiet(_integer_pow_impl))


# --- type conversion ---------------------------------------------------------------------


def _convert_abstract(x, *, new_dtype, weak_type=False):
    return ShapedArray(x.shape, np.dtype(new_dtype), weak_type)


def _convert_impl(x, *, new_dtype, weak_type=False):
    x = np.asarray(x)
    dt = np.dtype(new_dtype)
    if x.dtype.kind == "c" and dt.kind != "c":
        x = x.real
    if x.dtype.kind == "f" and dt.kind in "iu":
        # float -> int: NaN becomes 0 and out-of-range values saturate, as XLA does
        info = np.iinfo(dt)
        with np.errstate(invalid="ignore"):
            out = np.trunc(np.where(np.isnan(x), 0, np.clip(x, info.min, info.max))).astype(dt)
            # int max may round up in x's dtype (2**31 in float32), so the clip alone overflows
            return np.where(x >= np.asarray(info.max).astype(x.dtype), np.asarray(info.max, dt), out)
    if dt.kind == "b":
        return x != 0
    if x.dtype == dt:  # a weak type made strong: a copy, which cannot warn (errstate is 1 us)
        return x.astype(dt)
    with np.errstate(all="ignore"):
        return x.astype(dt)


convert_element_type_p = Primitive("convert_element_type", _convert_abstract, _convert_impl)


def convert_element_type(operand, new_dtype):
    """Cast `operand` to `new_dtype` (canonicalized: float64 -> float32 unless x64)."""
    (x,) = operands(operand)
    dt = dtypes.canonicalize_dtype(new_dtype)
    if x.dtype == dt and not x.weak_type:
        return x
    return convert_element_type_p.bind(x, new_dtype=dt.name, weak_type=False)


def _convert_weak(x, dt, weak):
    """Convert keeping/setting weak-typedness (used by jnp promotion)."""
    if x.dtype == dt and x.weak_type == weak:
        return x
    return convert_element_type_p.bind(x, new_dtype=np.dtype(dt).name, weak_type=bool(weak))


def bitcast_convert_type(operand, new_dtype):
    (x,) = operands(operand)
    return bitcast_convert_type_p.bind(x, new_dtype=np.dtype(new_dtype).name)


def _bitcast_abstract(x, *, new_dtype):
    dt = np.dtype(new_dtype)
    if dt.itemsize == x.dtype.itemsize:
        shape = x.shape
    elif dt.itemsize < x.dtype.itemsize:
        shape = x.shape + (x.dtype.itemsize // dt.itemsize,)
    else:
        ratio = dt.itemsize // x.dtype.itemsize
        if not x.shape or x.shape[-1] != ratio:
            raise TypeError(f"bitcast_convert_type from {x.dtype.name} to {dt.name} needs a last dimension of {ratio}")
        shape = x.shape[:-1]
    return ShapedArray(shape, dt)


def _bitcast_impl(x, *, new_dtype):
    x = np.array(x, order="C")  # (np.ascontiguousarray would turn a 0-d array into 1-d)
    dt = np.dtype(new_dtype)
    out = x.reshape(-1).view(dt)  # a 0-d array cannot change its item size in place
    if dt.itemsize < x.dtype.itemsize:
        return out.reshape(x.shape + (x.dtype.itemsize // dt.itemsize,))
    if dt.itemsize > x.dtype.itemsize:
        return out.reshape(x.shape[:-1])
    return out.reshape(x.shape)


bitcast_convert_type_p = Primitive("bitcast_convert_type", _bitcast_abstract, _bitcast_impl)


# --- selection ---------------------------------------------------------------------------


def _select_n_abstract(which, *cases):
    if not cases:
        raise TypeError("select_n requires at least one case")
    if which.dtype.kind not in "bi":
        raise TypeError(f"select_n: `which` must be bool or int32, got {which.dtype.name}")
    if which.dtype.kind == "b" and len(cases) > 2:
        raise TypeError("select_n: a boolean `which` selects between at most two cases")
    dt = R.same_dtype("select_n", cases)
    shape = R.nary_shape("select_n", (which,) + cases)
    return ShapedArray(shape, dt, R.all_weak(cases))


def _select_n_impl(which, *cases):
    which = np.asarray(which)
    if which.dtype == np.bool_:
        out = np.where(which, cases[1], cases[0]) if len(cases) == 2 else np.broadcast_to(cases[0], which.shape)
    else:
        out = np.choose(which, np.broadcast_arrays(*cases, which)[:-1], mode="clip")
    return np.asarray(out, dtype=np.asarray(cases[0]).dtype)


select_n_p = Primitive("select_n", _select_n_abstract, _select_n_impl)


def select_n(which, *cases):
    """cases[which] elementwise (`which` bool or int)."""
    return select_n_p.bind(*operands(which, *cases))


def select(pred, on_true, on_false):
    """`on_true` where `pred` else `on_false` (lax.select: pred is bool)."""
    return select_n(pred, on_false, on_true)


def clamp(min, x, max):  # noqa: A002 - lax's argument names
    """`x` clipped to [min, max] (lax.clamp's argument order; `min`/`max` of x's shape or rank 0,
    all of one dtype), valued as XLA's `min(max(x, min), max)`. Its derivative is JAX's: with
    respect to x where min < x < max, to min where x < min, to max where x > max, and zero at the
    ties (where max/min alone would split it)."""
    lo, v, hi = operands(min, x, max)
    if not lo.dtype == v.dtype == hi.dtype:
        raise TypeError(f"lax.clamp requires arguments to have the same dtypes, got {lo.dtype.name}, "
                        f"{v.dtype.name}, {hi.dtype.name}.")
    for name, bound in (("min", lo), ("max", hi)):
        if bound.shape not in ((), v.shape):
            raise TypeError(f"clamp requires {name}.shape == operand.shape or {name}.shape == (), got "
                            f"{name}.shape={bound.shape}, operand.shape={v.shape}.")
    value = _wrappers["min"](_wrappers["max"](v, lo), hi)
    if not dtypes.is_inexact(v.dtype):
        return value  # no derivative to route
    from . import shapes
    from .stop_gradient import stop_gradient

    lo, hi = (b if b.shape == v.shape else shapes.broadcast_in_dim(b, v.shape, ()) for b in (lo, hi))
    below, above, inside = lt(v, lo), gt(v, hi), bitwise_and(gt(v, lo), lt(v, hi))
    ordered = le(lo, hi)  # min > max: XLA's value is max; no derivative is routed
    out = select(bitwise_and(below, ordered), lo, stop_gradient(value))
    return select(inside, v, select(above, hi, out))


__all__ = [
    "add", "sub", "mul", "div", "rem", "pow", "max", "min", "atan2", "nextafter", "neg", "sign",
    "abs", "floor", "ceil", "round", "is_finite", "exp", "exp2", "log", "expm1", "log1p", "sqrt",
    "rsqrt", "cbrt", "tanh", "logistic", "sin", "cos", "tan", "asin", "acos", "atan", "sinh",
    "cosh", "asinh", "acosh", "atanh", "real", "imag", "conj", "eq", "ne", "lt", "le", "gt", "ge",
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "shift_left", "complex", "RoundingMethod",
    "shift_right_arithmetic", "shift_right_logical", "population_count", "square", "reciprocal",
    "integer_pow", "convert_element_type", "bitcast_convert_type", "select_n", "select", "clamp",
]
