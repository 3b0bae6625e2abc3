"""Elementwise functions of `omnistage.numpy`: NumPy's ufuncs (and the elementwise helpers
around them: `clip`, `isclose`, `nan_to_num`, `where`, `select`, ...) with JAX's promotion and
semantics.

Each function promotes its arguments (`_promote`) and applies lax primitives, so NumPy
broadcasting and dtype rules become explicit statements in staged programs. Functions are
compositions of existing primitives; constants are built in Python from static values (dtypes,
finfo) and never from traced data. Imports core and lax only.
"""
import operator
import warnings

import numpy as np

from ..core import dtypes
from ..core.array import Array
from ..core.tracer import Tracer
from .. import lax
from ._promote import (
    already_promoted, broadcast_to_shape, check_arraylike, promote_args, promote_args_inexact, promote_args_numeric,
    promote_dtypes, promote_shapes,
)
from ..lax import _rules
from .eager_programs import one_program

# --- helpers -----------------------------------------------------------------------------


def _const(like, value, dtype=None):
    """A rank-0 constant of `like`'s dtype (or `dtype`), weak when `like` is weak, so that a
    unary function of a weakly typed value stays weakly typed."""
    dt = like.dtype if dtype is None else np.dtype(dtype)
    with np.errstate(all="ignore"):
        return Array(np.asarray(value).astype(dt), like.weak_type and dtype is None)


def _full_like(x, value, dtype):
    """An array of `x`'s shape filled with `value` (a broadcast constant, no dependence on x)."""
    c = Array(np.asarray(value, dtype=dtype))
    return lax.broadcast_in_dim(c, x.shape, ()) if x.shape else c


def _reject_complex(name, *xs):
    for x in xs:
        if dtypes.is_complex(x.dtype):
            raise TypeError(
                f"{name} does not support complex-valued inputs (got {x.dtype.name}); "
                "apply it to jnp.real(x) and jnp.imag(x) separately."
            )


def _require_integer(name, *xs):
    for x in xs:
        if not dtypes.is_integer(x.dtype):
            raise ValueError(f"Arguments to omnistage.numpy.{name} must be integers, got {x.dtype.name}.")


def _is_int_or_bool(dt):
    return np.dtype(dt).kind in "biu"


def _binary(name, lax_fn, promote=promote_args):
    def promoted(x1, x2, /):
        a, b = promote(name, x1, x2)
        return lax_fn(a, b)

    promoted.__name__ = name
    # eager operands that need promotion or broadcasting: one program, not three primitives
    program = one_program(promoted)
    fast_kind = {promote_args: False, promote_args_inexact: True}.get(promote)

    def fn(x1, x2, /):
        if fast_kind is not None:  # operands that need no promotion: the one primitive
            fast = already_promoted((x1, x2), fast_kind)
            if fast is not None:
                return lax_fn(*fast)
        return program(x1, x2)

    fn.__name__ = name
    fn.__doc__ = f"Elementwise `numpy.{name}` with JAX's type promotion."
    fn.__wrapped__ = promoted  # the op-by-op path, for tests
    return fn


def _unary(name, lax_fn, promote=promote_args):
    def fn(x, /):
        (a,) = promote(name, x)
        return lax_fn(a)

    fn.__name__ = name
    fn.__doc__ = f"Elementwise `numpy.{name}` with JAX's type promotion."
    return fn


def _real_only(name, lax_fn, promote=promote_args_inexact):
    """A function NumPy defines for real inputs only (complex raises TypeError)."""

    def checked(*xs):
        _reject_complex(name, *xs)
        return lax_fn(*xs)

    return _unary(name, checked, promote)


# --- arithmetic --------------------------------------------------------------------------

def _bool_as(bool_fn, fn):
    """On bool operands NumPy's add is `or` and multiply is `and` (XLA has no bool add)."""
    return lambda a, b: (bool_fn if dtypes.is_bool(a.dtype) else fn)(a, b)


add = _binary("add", _bool_as(lax.bitwise_or, lax.add))
subtract = _binary("subtract", lax.sub)
multiply = _binary("multiply", _bool_as(lax.bitwise_and, lax.mul))
true_divide = _binary("true_divide", lax.div, promote_args_inexact)
divide = true_divide
negative = _unary("negative", lax.neg)


def positive(x, /):
    (a,) = promote_args("positive", x)
    return a


def square(x, /):
    (a,) = promote_args_numeric("square", x)
    return lax.integer_pow(a, 2)


def reciprocal(x, /):
    """1 / x; integers promote to floating point (JAX's rule, unlike NumPy's integer result)."""
    (a,) = promote_args_inexact("reciprocal", x)
    return lax.integer_pow(a, -1)


def _float_divmod(x1, x2):
    """Floor quotient and remainder with the divisor's sign for floating operands (JAX's).

    Dividing by +-0 divides x1 itself (not the NaN x1 - rem(x1, 0)), so x // +-0 is +-inf as
    in NumPy; the quotient is rounded half to even, which keeps the -0 of +0 // negative
    (it is within rounding of an integer, so the two roundings agree elsewhere)."""
    mod = lax.rem(x1, x2)
    zero = _const(x2, 0)
    quotient = lax.div(lax.select(lax.eq(x2, zero), x1, lax.sub(x1, mod)), x2)
    fix = lax.bitwise_and(lax.ne(mod, _const(mod, 0)), lax.ne(lax.sign(x2), lax.sign(mod)))
    mod = lax.select(fix, lax.add(mod, x2), mod)
    quotient = lax.select(fix, lax.sub(quotient, _const(quotient, 1)), quotient)
    return lax.round(quotient, lax.RoundingMethod.TO_NEAREST_EVEN), mod


def _complex_floor_divide(x1, x2):
    """floor(real(x1 / x2)) as a complex number, dividing by the larger part first (JAX's)."""
    x1r, x1i, x2r, x2i = lax.real(x1), lax.imag(x1), lax.real(x2), lax.imag(x2)
    one = _const(x2r, 1)
    which = lax.ge(lax.abs(x2r), lax.abs(x2i))
    rat1 = lax.select(which, one, lax.div(x2r, x2i))
    rat2 = lax.select(which, lax.div(x2i, x2r), one)
    num = lax.add(lax.mul(x1r, rat1), lax.mul(x1i, rat2))
    den = lax.add(lax.mul(x2r, rat1), lax.mul(x2i, rat2))
    return lax.convert_element_type(lax.floor(lax.div(num, den)), x1.dtype)


def floor_divide(x1, x2, /):
    """x1 // x2, rounding toward minus infinity. Integer division by zero gives what XLA's
    truncating division gives, adjusted as JAX adjusts it (e.g. 1 // 0 == -2 for int32)."""
    a, b = promote_args_numeric("floor_divide", x1, x2)
    if a.dtype.kind == "u":
        return lax.div(a, b)
    if a.dtype.kind == "i":
        quotient = lax.div(a, b)
        fix = lax.bitwise_and(lax.ne(lax.sign(a), lax.sign(b)), lax.ne(lax.rem(a, b), _const(a, 0)))
        return lax.select(fix, lax.sub(quotient, _const(quotient, 1)), quotient)
    if dtypes.is_complex(a.dtype):
        return _complex_floor_divide(a, b)
    return _float_divmod(a, b)[0]


def remainder(x1, x2, /):
    """x1 % x2 with the sign of the divisor; integer x % 0 is 0 (JAX's)."""
    a, b = promote_args_numeric("remainder", x1, x2)
    _reject_complex("remainder", a)
    if dtypes.is_integer(b.dtype):
        b = lax.select(lax.eq(b, _const(b, 0)), _const(b, 1), b)
    zero = _const(a, 0)
    trunc_mod = lax.rem(a, b)
    fix = lax.bitwise_and(lax.ne(lax.lt(trunc_mod, zero), lax.lt(b, zero)), lax.ne(trunc_mod, zero))
    return lax.select(fix, lax.add(trunc_mod, b), trunc_mod)


mod = remainder


def fmod(x1, x2, /):
    """C's fmod: the remainder has the sign of the dividend; integer x fmod 0 is 0."""
    a, b = promote_args_numeric("fmod", x1, x2)
    _reject_complex("fmod", a)
    if dtypes.is_integer(b.dtype):
        b = lax.select(lax.eq(b, _const(b, 0)), _const(b, 1), b)
    return lax.rem(a, b)


def divmod(x1, x2, /):  # noqa: A001 - NumPy's name
    """(floor_divide(x1, x2), remainder(x1, x2))."""
    a, b = promote_args_numeric("divmod", x1, x2)
    _reject_complex("divmod", a)
    if dtypes.is_integer(a.dtype):
        return floor_divide(a, b), remainder(a, b)
    return _float_divmod(a, b)


def power(x1, x2, /):
    """x1 ** x2; a static integer exponent becomes `integer_pow` (exact for ints)."""
    check_arraylike("power", x1, x2)
    if isinstance(x2, int) and not isinstance(x2, bool):
        (a,) = promote_args_numeric("power", x1)
        if x2 >= 0 or dtypes.is_inexact(a.dtype):
            return lax.integer_pow(a, x2)
    a, b = promote_args_numeric("power", x1, x2)
    if dtypes.is_integer(a.dtype):
        return _integer_power(a, b)
    return lax.pow(a, b)


pow = power  # noqa: A001 - NumPy 2's alias


def _integer_power(a, b):
    """Integer ** integer by repeated squaring over the bits of b (negative b gives 0, as JAX)."""
    bits = a.dtype.itemsize * 8
    one, zero = _const(a, 1), _const(a, 0)
    acc = lax.broadcast_in_dim(one, a.shape, ()) if a.shape else one
    base = a
    e = b
    for _ in range(bits - 1):
        odd = lax.ne(lax.bitwise_and(e, one), zero)
        acc = lax.select(odd, lax.mul(acc, base), acc)
        base = lax.mul(base, base)
        e = lax.shift_right_logical(e, one)
    return lax.select(lax.lt(b, zero), lax.mul(acc, zero), acc)


def float_power(x1, x2, /):
    """x1 ** x2 computed in at least float64 precision (float32 while 64-bit mode is off)."""
    check_arraylike("float_power", x1, x2)
    dt = dtypes.result_type(x1, x2)
    target = dtypes.canonicalize_dtype(np.complex128 if dtypes.is_complex(dt) else np.float64)
    a, b = promote_shapes("float_power", *(lax.convert_element_type(x, target) for x in (x1, x2)))
    return lax.pow(a, b)


# --- rounding ----------------------------------------------------------------------------


def _integral_passthrough(name, float_fn):
    """Rounding functions return integer and bool inputs unchanged (JAX's rule)."""

    def fn(x, /):
        check_arraylike(name, x)
        a = _rules.to_operand(x)
        if _is_int_or_bool(a.dtype):
            return a
        (a,) = promote_args_inexact(name, a)
        _reject_complex(name, a)
        return float_fn(a)

    fn.__name__ = name
    fn.__doc__ = f"Elementwise `numpy.{name}`; integer and bool inputs are returned unchanged."
    return fn


def _trunc_float(a):
    return lax.select(lax.lt(a, _const(a, 0)), lax.ceil(a), lax.floor(a))


floor = _integral_passthrough("floor", lax.floor)
ceil = _integral_passthrough("ceil", lax.ceil)
trunc = _integral_passthrough("trunc", _trunc_float)
fix = _integral_passthrough("fix", _trunc_float)


def _round_even(a):
    return lax.round(a, lax.RoundingMethod.TO_NEAREST_EVEN)


def rint(x, /):
    """Round half to even; integers become floating point (JAX's rule)."""
    (a,) = promote_args_inexact("rint", x)
    if dtypes.is_complex(a.dtype):
        return lax.complex(_round_even(lax.real(a)), _round_even(lax.imag(a)))
    return _round_even(a)


def round(a, decimals=0, out=None):  # noqa: A001 - NumPy's name
    """Round half to even to `decimals` decimal places (negative: to tens, hundreds...)."""
    check_arraylike("round", a)
    if out is not None:
        raise NotImplementedError("The 'out' argument to omnistage.numpy.round is not supported.")
    try:
        decimals = operator.index(decimals)
    except TypeError:
        raise TypeError(f"'decimals' argument of jnp.round must be a static Python int, got {decimals!r}") from None
    x = _rules.to_operand(a)
    if dtypes.is_integer(x.dtype):
        return x if decimals >= 0 else _round_int(x, 10 ** -decimals)
    if dtypes.is_bool(x.dtype):
        raise TypeError("round does not accept dtype bool; convert to an integer or floating dtype first.")
    if dtypes.is_complex(x.dtype):
        return lax.complex(_round_float(lax.real(x), decimals), _round_float(lax.imag(x), decimals))
    return _round_float(x, decimals)


around = round


def _round_float(x, decimals):
    # NumPy scales by 10**d for d >= 0 and divides by 10**-d otherwise (both factors exact).
    if decimals == 0:
        return _round_even(x)
    if decimals > 0:
        factor = _const(x, 10.0 ** decimals)
        return lax.div(_round_even(lax.mul(x, factor)), factor)
    factor = _const(x, 10.0 ** -decimals)
    return lax.mul(_round_even(lax.div(x, factor)), factor)


def _round_int(x, factor):
    """Round an integer to a multiple of `factor`, half to even, exactly."""
    if factor > np.iinfo(x.dtype).max:
        return lax.mul(x, _const(x, 0))
    f = _const(x, factor)
    r = remainder(x, f)
    low = lax.sub(x, r)  # the multiple of f at or below x
    twice = lax.mul(r, _const(x, 2))
    low_is_odd = lax.ne(remainder(floor_divide(low, f), _const(x, 2)), _const(x, 0))
    up = lax.bitwise_or(lax.gt(twice, f), lax.bitwise_and(lax.eq(twice, f), low_is_odd))
    return lax.select(up, lax.add(low, f), low)


def modf(x, /, out=None):
    """(fractional part, integral part), both with x's sign; modf(inf) == (0, inf) as NumPy."""
    (a,) = promote_args_inexact("modf", x)
    _reject_complex("modf", a)
    whole = _trunc_float(a)
    # x - trunc(x) loses the sign of -0.0 and -2.0's zero fraction, and is NaN at infinities
    frac = lax.select(isinf(a), _const(a, 0), lax.sub(a, whole))
    return copysign(frac, a), whole


# --- exponentials and logarithms ---------------------------------------------------------

exp = _unary("exp", lax.exp, promote_args_inexact)
exp2 = _unary("exp2", lax.exp2, promote_args_inexact)
def _complex_expm1(z):
    """exp(z) - 1 of complex z, accurate near 0 (re = expm1(x) cos(y) - 2 sin(y/2)**2), with the
    Array API standard's special values: (+-0, +0) -> +0 + 0j, (x, +-0) keeps the zero
    imaginary part (inf + 0j, nan + 0j), (-inf, y) -> -1 + 0j, (+inf, inf or nan) -> inf + nan j."""
    x, y = lax.real(z), lax.imag(z)
    zero, one, two, half = (_const(x, v) for v in (0, 1, 2, 0.5))
    inf = _const(x, np.inf)
    s = lax.sin(lax.mul(y, half))
    re = lax.sub(lax.mul(lax.expm1(x), lax.cos(y)), lax.mul(two, lax.mul(s, s)))
    im = lax.mul(lax.exp(x), lax.sin(y))
    y_zero = lax.eq(y, zero)
    re = lax.select(lax.bitwise_and(y_zero, lax.eq(x, zero)), lax.abs(x), re)
    im = lax.select(y_zero, y, im)
    minus_inf = lax.eq(x, lax.neg(inf))
    re = lax.select(minus_inf, lax.neg(one), re)
    im = lax.select(lax.bitwise_and(minus_inf, lax.bitwise_not(y_zero)), lax.mul(zero, lax.sin(y)), im)
    im = lax.select(lax.bitwise_and(minus_inf, lax.bitwise_not(lax.is_finite(y))), zero, im)
    plus_inf = lax.bitwise_and(lax.eq(x, inf), lax.bitwise_not(lax.is_finite(y)))
    re = lax.select(plus_inf, inf, re)
    im = lax.select(lax.bitwise_and(plus_inf, lax.bitwise_not(y_zero)), _const(x, np.nan), im)
    return lax.complex(re, im)


def expm1(x, /):
    """Elementwise `numpy.expm1` with JAX's type promotion (complex: see _complex_expm1)."""
    (a,) = promote_args_inexact("expm1", x)
    return _complex_expm1(a) if dtypes.is_complex(a.dtype) else lax.expm1(a)
log = _unary("log", lax.log, promote_args_inexact)
log1p = _unary("log1p", lax.log1p, promote_args_inexact)
sqrt = _unary("sqrt", lax.sqrt, promote_args_inexact)
cbrt = _real_only("cbrt", lax.cbrt)


def _log_base(name, base):
    def fn(x, /):
        (a,) = promote_args_inexact(name, x)
        return lax.div(lax.log(a), _const(a, np.log(base)))

    fn.__name__ = name
    fn.__doc__ = f"Elementwise `numpy.{name}`: log(x) / log({base})."
    return fn


log2 = _log_base("log2", 2)
log10 = _log_base("log10", 10)


@one_program
def logaddexp(x1, x2, /):
    """log(exp(x1) + exp(x2)) without overflow."""
    a, b = promote_args_inexact("logaddexp", x1, x2)
    _reject_complex("logaddexp", a)
    amax = lax.max(a, b)
    delta = lax.sub(a, b)
    # min - max is -|a - b| to the bit, but written with min/max (whose derivatives split ties
    # evenly) rather than abs, so the derivative at a == b is (1/2, 1/2) as JAX's, not (0, 1)
    stable = lax.add(amax, lax.log1p(lax.exp(lax.sub(lax.min(a, b), amax))))
    # delta is NaN for NaN operands and for infinities of one sign, where a + b is the answer
    return lax.select(lax.ne(delta, delta), lax.add(a, b), stable)


@one_program
def logaddexp2(x1, x2, /):
    """log2(2**x1 + 2**x2) without overflow."""
    a, b = promote_args_inexact("logaddexp2", x1, x2)
    _reject_complex("logaddexp2", a)
    ln2 = _const(a, np.log(2))
    return lax.div(logaddexp(lax.mul(a, ln2), lax.mul(b, ln2)), ln2)


# --- trigonometric and hyperbolic --------------------------------------------------------

sin = _unary("sin", lax.sin, promote_args_inexact)
cos = _unary("cos", lax.cos, promote_args_inexact)
tan = _unary("tan", lax.tan, promote_args_inexact)
arcsin = asin = _unary("arcsin", lax.asin, promote_args_inexact)
arccos = acos = _unary("arccos", lax.acos, promote_args_inexact)
arctan = atan = _unary("arctan", lax.atan, promote_args_inexact)
sinh = _unary("sinh", lax.sinh, promote_args_inexact)
cosh = _unary("cosh", lax.cosh, promote_args_inexact)
def tanh(x, /):
    """Elementwise `numpy.tanh` with JAX's type promotion; complex tanh(+-inf + iy) for finite
    y is +-1 with the zero imaginary part signed as y (the Array API's special values)."""
    (a,) = promote_args_inexact("tanh", x)
    out = lax.tanh(a)
    if not dtypes.is_complex(a.dtype):
        return out
    re, im = lax.real(a), lax.imag(a)
    infinite_re = lax.bitwise_and(lax.bitwise_not(lax.is_finite(re)), lax.eq(re, re))
    saturated = lax.bitwise_and(infinite_re, lax.is_finite(im))
    zero = lax.mul(lax.sign(im), _const(im, 0))  # a zero with y's sign
    return lax.select(saturated, lax.complex(lax.sign(re), zero), out)
arcsinh = asinh = _unary("arcsinh", lax.asinh, promote_args_inexact)
arccosh = acosh = _unary("arccosh", lax.acosh, promote_args_inexact)
arctanh = atanh = _unary("arctanh", lax.atanh, promote_args_inexact)
arctan2 = atan2 = _binary("arctan2", lax.atan2, promote_args_inexact)


def _scale(name, factor):
    def fn(x, /):
        (a,) = promote_args_inexact(name, x)
        _reject_complex(name, a)
        return lax.mul(a, _const(a, factor))

    fn.__name__ = name
    fn.__doc__ = f"Elementwise `numpy.{name}`: x * {factor!r}."
    return fn


deg2rad = radians = _scale("deg2rad", np.pi / 180)
rad2deg = degrees = _scale("rad2deg", 180 / np.pi)


def hypot(x1, x2, /):
    """sqrt(x1**2 + x2**2) without overflow; inf if either is infinite (even with a NaN)."""
    a, b = promote_args_inexact("hypot", x1, x2)
    _reject_complex("hypot", a)
    a, b = lax.abs(a), lax.abs(b)
    inf = _const(a, np.inf)
    any_inf = lax.bitwise_or(lax.eq(a, inf), lax.eq(b, inf))
    big, small = lax.max(a, b), lax.min(a, b)
    big_is_zero = lax.eq(big, _const(big, 0))
    safe_big = lax.select(big_is_zero, _const(big, 1), big)
    ratio = lax.div(small, safe_big)
    scaled = lax.mul(big, lax.sqrt(lax.add(_const(big, 1), lax.mul(ratio, ratio))))
    return lax.select(any_inf, inf, lax.select(big_is_zero, big, scaled))


def sinc(x, /):
    """sin(pi x) / (pi x), 1 at x == 0."""
    (a,) = promote_args_inexact("sinc", x)
    is_zero = lax.eq(a, _const(a, 0))
    pi_x = lax.mul(a, _const(a, np.pi))
    one = _const(a, 1)
    safe = lax.select(is_zero, one, pi_x)
    return lax.select(is_zero, one, lax.div(lax.sin(safe), safe))


# --- signs and floating-point representation ---------------------------------------------


def absolute(x, /):
    """|x|; complex inputs give their (real) magnitude."""
    (a,) = promote_args("absolute", x)
    if a.dtype.kind in "ub":
        return a
    return lax.abs(a)


abs = absolute  # noqa: A001 - NumPy's name
fabs = _real_only("fabs", lax.abs)


def sign(x, /):
    """-1, 0 or 1 (NaN for NaN); x / |x| for complex x (0 at 0)."""
    (a,) = promote_args("sign", x)
    if dtypes.is_bool(a.dtype):
        raise TypeError("sign does not accept dtype bool. Accepted dtypes are: integer, floating, complexfloating.")
    return lax.sign(a)


_INT_OF_BITS = {16: np.dtype("int16"), 32: np.dtype("int32"), 64: np.dtype("int64")}


def _float_bits(a):
    """finfo of a floating dtype and the signed integer type of the same width."""
    info = np.finfo(a.dtype)
    return info, _INT_OF_BITS[info.bits]


def signbit(x, /):
    """True where the sign bit is set (so also for -0.0 and negative NaNs)."""
    (a,) = promote_args("signbit", x)
    if dtypes.is_integer(a.dtype):
        return lax.lt(a, _const(a, 0))
    if dtypes.is_bool(a.dtype):
        return _full_like(a, False, np.bool_)
    _reject_complex("signbit", a)
    info, int_t = _float_bits(a)
    bits = lax.bitcast_convert_type(a, int_t)
    return lax.lt(bits, Array(np.zeros((), int_t)))


def copysign(x1, x2, /):
    """|x1| with the sign bit of x2."""
    a, b = promote_args_inexact("copysign", x1, x2)
    _reject_complex("copysign", a)
    magnitude = lax.abs(a)
    return lax.select(signbit(b), lax.neg(magnitude), magnitude)


def nextafter(x1, x2, /):
    """The next representable value after x1 in the direction of x2."""
    a, b = promote_args_inexact("nextafter", x1, x2)
    _reject_complex("nextafter", a)
    return lax.nextafter(a, b)


def spacing(x, /):
    """The distance from x to the next representable value away from zero (-0.0 counts as
    positive, as in NumPy); NaN for infinities."""
    (a,) = promote_args_inexact("spacing", x)
    _reject_complex("spacing", a)
    inf = _const(a, np.inf)
    toward = lax.select(lax.lt(a, _const(a, 0)), lax.neg(inf), inf)
    return lax.sub(lax.nextafter(a, toward), a)


def heaviside(x1, x2, /):
    """0 where x1 < 0, 1 where x1 > 0, x2 where x1 == 0 (and where x1 is NaN, as JAX)."""
    a, b = promote_args_inexact("heaviside", x1, x2)
    _reject_complex("heaviside", a)
    zero, one = _const(a, 0), _const(a, 1)
    return lax.select(lax.lt(a, zero), zero, lax.select(lax.gt(a, zero), one, b))


def _normalize_float(a):
    """(bits of a with subnormals scaled up to normals, the exponent correction as int)."""
    info, int_t = _float_bits(a)
    is_tiny = lax.lt(lax.abs(a), _const(a, info.tiny))
    scaled = lax.select(is_tiny, lax.mul(a, _const(a, 2.0 ** info.nmant)), a)
    correction = lax.select(is_tiny, Array(np.asarray(-info.nmant, int_t)), Array(np.zeros((), int_t)))
    return lax.bitcast_convert_type(scaled, int_t), correction


def frexp(x, /):
    """(mantissa in [0.5, 1) with x's sign, int32 exponent) with x == mantissa * 2**exponent."""
    (a,) = promote_args_inexact("frexp", x)
    _reject_complex("frexp", a)
    info, int_t = _float_bits(a)
    mask, bias = (1 << info.nexp) - 1, 1 - info.minexp
    bits, exponent = _normalize_float(a)
    int_const = lambda v: Array(np.asarray(v, int_t))  # noqa: E731
    biased = lax.bitwise_and(lax.shift_right_logical(bits, int_const(info.nmant)), int_const(mask))
    exponent = lax.add(exponent, lax.sub(biased, int_const(bias - 1)))
    bits = lax.bitwise_and(bits, int_const(~(mask << info.nmant)))
    bits = lax.bitwise_or(bits, int_const((bias - 1) << info.nmant))
    mantissa = lax.bitcast_convert_type(bits, a.dtype)
    special = lax.bitwise_or(lax.bitwise_or(isinf(a), isnan(a)), lax.eq(a, _const(a, 0)))
    exponent = lax.select(special, Array(np.zeros((), int_t)), exponent)
    return lax.select(special, a, mantissa), lax.convert_element_type(exponent, np.int32)


def ldexp(x1, x2, /):
    """x1 * 2**x2, exactly (scaling in steps as C's scalbn does, so nothing overflows or
    double-rounds on the way)."""
    check_arraylike("ldexp", x1, x2)
    dt1, dt2 = dtypes.result_type(x1), dtypes.result_type(x2)
    if dtypes.is_complex(dt1) or dtypes.is_inexact(dt2):
        raise ValueError(f"ldexp not supported for input types {(dt1.name, dt2.name)}: x1 must be real, x2 an integer.")
    (a,) = promote_args_inexact("ldexp", x1)
    info, int_t = _float_bits(a)
    n = _rules.to_operand(x2)
    # Beyond +-limit every finite nonzero x1 over- or underflows: clamp first so n fits int_t.
    limit = 4 * (info.maxexp + info.nmant)
    n = lax.convert_element_type(lax.clamp(_const(n, -limit), n, _const(n, limit)), int_t)
    a, n = promote_shapes("ldexp", a, n)
    emax, emin, p = info.maxexp - 1, info.minexp, info.nmant + 1
    int_const = lambda v: Array(np.asarray(v, int_t))  # noqa: E731
    for _ in range(2):
        up = lax.gt(n, int_const(emax))
        a = lax.select(up, lax.mul(a, _const(a, 2.0 ** emax)), a)
        n = lax.select(up, lax.sub(n, int_const(emax)), n)
        # Going down, stop p above the subnormal range so the last step rounds only once.
        down = lax.lt(n, int_const(emin))
        a = lax.select(down, lax.mul(a, _const(a, 2.0 ** (emin + p))), a)
        n = lax.select(down, lax.sub(n, int_const(emin + p)), n)
    n = lax.clamp(int_const(emin), n, int_const(emax))
    scale_bits = lax.shift_left(lax.add(n, int_const(emax)), int_const(info.nmant))
    return lax.mul(a, lax.bitcast_convert_type(scale_bits, a.dtype))


# --- predicates --------------------------------------------------------------------------


def isnan(x, /):
    (a,) = promote_args("isnan", x)
    return lax.ne(a, a)


def isinf(x, /):
    (a,) = promote_args("isinf", x)
    if dtypes.is_float(a.dtype):
        return lax.eq(lax.abs(a), _const(a, np.inf))
    if dtypes.is_complex(a.dtype):
        return lax.bitwise_or(isinf(lax.real(a)), isinf(lax.imag(a)))
    return _full_like(a, False, np.bool_)


def _isinf_of_sign(name, value):
    def fn(x, /):
        (a,) = promote_args(name, x)
        if dtypes.is_complex(a.dtype):
            raise ValueError(f"{name} is not well defined for complex numbers (got {a.dtype.name}).")
        if not dtypes.is_float(a.dtype):
            return _full_like(a, False, np.bool_)
        return lax.eq(a, _const(a, value))

    fn.__name__ = name
    fn.__doc__ = f"True where x == {value}."
    return fn


isposinf = _isinf_of_sign("isposinf", np.inf)
isneginf = _isinf_of_sign("isneginf", -np.inf)


def isfinite(x, /):
    (a,) = promote_args("isfinite", x)
    if dtypes.is_float(a.dtype):
        return lax.is_finite(a)
    if dtypes.is_complex(a.dtype):
        return lax.bitwise_and(lax.is_finite(lax.real(a)), lax.is_finite(lax.imag(a)))
    return _full_like(a, True, np.bool_)


def iscomplex(x, /):
    """True where the imaginary part is nonzero."""
    i = imag(x)
    return lax.ne(i, _const(i, 0))


def isreal(x, /):
    """True where the imaginary part is zero."""
    i = imag(x)
    return lax.eq(i, _const(i, 0))


def iscomplexobj(x):
    """Whether x has a complex dtype (a static Python bool)."""
    if x is None:
        return False
    dt = getattr(x, "dtype", None)
    if dt is None:
        dt = dtypes.result_type(x) if not isinstance(x, (list, tuple)) else np.asarray(x).dtype
    return dtypes.is_complex(dt)


def isrealobj(x):
    """Whether x has a non-complex dtype (a static Python bool)."""
    return not iscomplexobj(x)


def _tolerance(value, dtype):
    if isinstance(value, (Array, Tracer)):
        return lax.convert_element_type(value, dtype)
    return Array(np.asarray(value, dtype=dtype))


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|a - b| <= atol + rtol * |b|, with infinities close only to themselves and NaNs never
    (unless `equal_nan`)."""
    x, y = promote_args("isclose", a, b)
    x, y = promote_args_inexact("isclose", x, y)
    real_t = dtypes.real_dtype(x.dtype)
    tol = lax.add(_tolerance(atol, real_t), lax.mul(_tolerance(rtol, real_t), lax.abs(y)))
    out = lax.le(lax.abs(lax.sub(x, y)), tol)
    x_inf, y_inf = isinf(x), isinf(y)
    out = lax.bitwise_and(out, lax.bitwise_not(lax.bitwise_or(x_inf, y_inf)))
    out = lax.bitwise_or(out, lax.bitwise_and(lax.bitwise_and(x_inf, y_inf), lax.eq(x, y)))
    x_nan, y_nan = isnan(x), isnan(y)
    out = lax.bitwise_and(out, lax.bitwise_not(lax.bitwise_or(x_nan, y_nan)))
    if equal_nan:
        out = lax.bitwise_or(out, lax.bitwise_and(x_nan, y_nan))
    return out


def _all(x):
    from .reductions import all as all_

    return all_(x)


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether every element of a is close to b (a bool array, as JAX)."""
    return _all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1, a2, equal_nan=False):
    """Whether a1 and a2 have one shape and equal elements (a bool array)."""
    try:
        x, y = _rules.to_operand(a1), _rules.to_operand(a2)
    except TypeError:
        return Array(np.bool_(False))
    if x.shape != y.shape:
        return Array(np.bool_(False))
    eq = equal(x, y)
    if equal_nan:
        eq = lax.bitwise_or(eq, lax.bitwise_and(isnan(x), isnan(y)))
    return _all(eq)


def array_equiv(a1, a2):
    """Whether a1 and a2 broadcast to one shape with equal elements (a bool array)."""
    x, y = _rules.to_operand(a1), _rules.to_operand(a2)
    try:
        eq = equal(x, y)
    except ValueError:
        return Array(np.bool_(False))
    return _all(eq)


# --- comparisons -------------------------------------------------------------------------

equal = _binary("equal", lax.eq)
not_equal = _binary("not_equal", lax.ne)


def _ordering(name, lax_fn):
    """An order comparison; complex numbers compare lexicographically (real part, then
    imaginary part), as in NumPy."""

    def compare(a, b):
        if not dtypes.is_complex(a.dtype):
            return lax_fn(a, b)
        ra, rb = lax.real(a), lax.real(b)
        return lax.select(lax.eq(ra, rb), lax_fn(lax.imag(a), lax.imag(b)), lax_fn(ra, rb))

    return _binary(name, compare)


less = _ordering("less", lax.lt)
less_equal = _ordering("less_equal", lax.le)
greater = _ordering("greater", lax.gt)
greater_equal = _ordering("greater_equal", lax.ge)


# --- logical, bitwise and shifts ---------------------------------------------------------


def _truth(x):
    a = _rules.to_operand(x)
    return a if dtypes.is_bool(a.dtype) else lax.ne(a, _const(a, 0))


def _logical(name, lax_fn):
    def fn(x1, x2, /):
        check_arraylike(name, x1, x2)
        a, b = promote_args(name, _truth(x1), _truth(x2))
        return lax_fn(a, b)

    fn.__name__ = name
    fn.__doc__ = f"Elementwise `numpy.{name}`: nonzero values are true."
    return fn


logical_and = _logical("logical_and", lax.bitwise_and)
logical_or = _logical("logical_or", lax.bitwise_or)
logical_xor = _logical("logical_xor", lax.bitwise_xor)


def logical_not(x, /):
    check_arraylike("logical_not", x)
    return lax.bitwise_not(_truth(x))


bitwise_and = _binary("bitwise_and", lax.bitwise_and)
bitwise_or = _binary("bitwise_or", lax.bitwise_or)
bitwise_xor = _binary("bitwise_xor", lax.bitwise_xor)
invert = bitwise_not = bitwise_invert = _unary("invert", lax.bitwise_not)
left_shift = bitwise_left_shift = _binary("left_shift", lax.shift_left, promote_args_numeric)


def right_shift(x1, x2, /):
    """x1 >> x2: arithmetic for signed integers, logical for unsigned."""
    a, b = promote_args_numeric("right_shift", x1, x2)
    shift = lax.shift_right_logical if a.dtype.kind == "u" else lax.shift_right_arithmetic
    return shift(a, b)


bitwise_right_shift = right_shift


def bitwise_count(x, /):
    """The number of set bits in |x|, as uint8 (NumPy's rule)."""
    (a,) = promote_args_numeric("bitwise_count", x)
    return lax.convert_element_type(lax.population_count(absolute(a)), np.uint8)


# --- extrema, clipping and cleaning ------------------------------------------------------

maximum = _binary("maximum", lax.max)
minimum = _binary("minimum", lax.min)


def fmax(x1, x2, /):
    """Elementwise maximum ignoring NaNs (NaN only where both are NaN)."""
    a, b = promote_args("fmax", x1, x2)
    return where(lax.bitwise_or(greater(a, b), isnan(b)), a, b)


def fmin(x1, x2, /):
    """Elementwise minimum ignoring NaNs (NaN only where both are NaN)."""
    a, b = promote_args("fmin", x1, x2)
    return where(lax.bitwise_or(less(a, b), isnan(b)), a, b)


_UNSET = object()  # marks JAX's deprecated clip arguments as not passed


def clip(arr=None, /, min=None, max=None, *, a=_UNSET, a_min=_UNSET, a_max=_UNSET):  # noqa: A002
    """arr limited to [min, max] (either may be None); NaNs propagate. `a`, `a_min` and
    `a_max` are JAX's deprecated spellings of `arr`, `min` and `max`."""
    if a is not _UNSET or a_min is not _UNSET or a_max is not _UNSET:
        warnings.warn(
            "Passing arguments 'a', 'a_min' or 'a_max' to jax.numpy.clip is deprecated. "
            "Please use 'arr', 'min' or 'max' respectively instead.", DeprecationWarning, stacklevel=2,
        )
    arr = arr if a is _UNSET else a
    min = min if a_min is _UNSET else a_min  # noqa: A001
    max = max if a_max is _UNSET else a_max  # noqa: A001
    if arr is None:
        raise ValueError("No input was provided to the clip function.")
    check_arraylike("clip", arr)
    if any(iscomplexobj(t) for t in (arr, min, max)):
        raise ValueError(
            "Clip received a complex value either through the input or the min/max keywords. Complex "
            "values have no ordering and cannot be clipped. Please convert to a real value or array by "
            "taking the real or imaginary components via jax.numpy.real/imag respectively."
        )
    out = _rules.to_operand(arr)
    if min is not None:
        out = maximum(min, out)
    if max is not None:
        out = minimum(max, out)
    return out


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """NaN -> `nan`, +inf -> `posinf` (default: the largest finite value), -inf -> `neginf`
    (default: the most negative finite value); complex parts are cleaned separately."""
    del copy  # arrays are immutable
    check_arraylike("nan_to_num", x)
    a = _rules.to_operand(x)
    if not dtypes.is_inexact(a.dtype):
        return a
    if dtypes.is_complex(a.dtype):
        parts = (nan_to_num(p, nan=nan, posinf=posinf, neginf=neginf) for p in (lax.real(a), lax.imag(a)))
        return lax.complex(*parts)
    info = np.finfo(a.dtype)
    out = lax.select(isnan(a), _const(a, nan), a)
    out = lax.select(lax.eq(out, _const(a, np.inf)), _const(a, info.max if posinf is None else posinf), out)
    return lax.select(lax.eq(out, _const(a, -np.inf)), _const(a, info.min if neginf is None else neginf), out)


# --- complex parts -----------------------------------------------------------------------


def conjugate(x, /):
    (a,) = promote_args("conjugate", x)
    return lax.conj(a) if dtypes.is_complex(a.dtype) else a


conj = conjugate


def real(x, /):
    (a,) = promote_args("real", x)
    return lax.real(a) if dtypes.is_complex(a.dtype) else a


def imag(x, /):
    """The imaginary part; zeros (of x's dtype) for real x."""
    (a,) = promote_args("imag", x)
    return lax.imag(a) if dtypes.is_complex(a.dtype) else _full_like(a, 0, a.dtype)


def angle(z, deg=False):
    """The argument of z: atan2(imag(z), real(z)), in radians unless `deg`."""
    (a,) = promote_args_inexact("angle", z)
    re, im = (lax.real(a), lax.imag(a)) if dtypes.is_complex(a.dtype) else (a, _full_like(a, 0, a.dtype))
    result = lax.atan2(im, re)
    return rad2deg(result) if deg else result


# --- integer number theory ---------------------------------------------------------------


def _gcd_cond(pair):
    from .reductions import any as any_

    _, b = pair
    return any_(lax.ne(b, _const(b, 0)))


def _gcd_body(pair):
    a, b = pair
    nonzero = lax.ne(b, _const(b, 0))
    safe_b = lax.select(nonzero, b, _const(b, 1))
    a, b = lax.select(nonzero, b, a), lax.select(nonzero, lax.rem(a, safe_b), lax.mul(b, _const(b, 0)))
    swap = lax.lt(a, b)
    return lax.select(swap, b, a), lax.select(swap, a, b)


def gcd(x1, x2, /):
    """Greatest common divisor of |x1| and |x2| (Euclid's algorithm in a `while_loop`)."""
    a, b = promote_args_numeric("gcd", x1, x2)
    _require_integer("gcd", a, b)
    shape = np.broadcast_shapes(a.shape, b.shape)
    a, b = broadcast_to_shape(absolute(a), shape), broadcast_to_shape(absolute(b), shape)
    result, _ = lax.while_loop(_gcd_cond, _gcd_body, (a, b))
    return result


def lcm(x1, x2, /):
    """Least common multiple of |x1| and |x2| (0 if either is 0)."""
    a, b = promote_args_numeric("lcm", x1, x2)
    _require_integer("lcm", a, b)
    a, b = absolute(a), absolute(b)
    d = gcd(a, b)
    zero = _const(d, 0)
    safe_d = lax.select(lax.eq(d, zero), _const(d, 1), d)
    return lax.select(lax.eq(d, zero), lax.mul(d, zero), multiply(a, floor_divide(b, safe_d)))


# --- selection ---------------------------------------------------------------------------


def where(condition, x=None, y=None, /, *, size=None, fill_value=None):
    """`x` where `condition` else `y` (NumPy broadcasting, JAX promotion)."""
    if x is None and y is None:
        from .indexing import nonzero

        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise ValueError("Either both or neither of the x and y arguments should be provided to jax.numpy.where")
    check_arraylike("where", condition, x, y)
    x, y = promote_dtypes(x, y)
    cond = _truth(condition)
    cond, x, y = promote_shapes("where", cond, x, y)
    if cond.ndim == 0 and (x.ndim or y.ndim):
        cond = broadcast_to_shape(cond, x.shape if x.ndim else y.shape)
    return lax.select(cond, x, y)


def _sequence_arg(name, seq):
    """A list of the entries of `seq` (a list, tuple or array iterated along its first axis)."""
    if getattr(seq, "ndim", 1) == 0 or not hasattr(seq, "__len__"):
        raise TypeError(f"select expects {name} to be a sequence of arrays, got {type(seq).__name__}.")
    return list(seq)


def select(condlist, choicelist, default=0):
    """`choicelist[i]` where `condlist[i]` is the first true condition, else `default`
    (`numpy.select`; conditions of any dtype count by truth, as in JAX)."""
    condlist, choicelist = _sequence_arg("condlist", condlist), _sequence_arg("choicelist", choicelist)
    if len(condlist) != len(choicelist):
        raise ValueError(
            f"condlist must have length equal to choicelist ({len(condlist)} vs {len(choicelist)})"
        )
    if not condlist:
        raise ValueError("condlist must be non-empty")
    check_arraylike("select", *condlist, *choicelist, default)
    default, *choices = promote_dtypes(default, *choicelist)
    conds = [_truth(c) for c in condlist]
    shaped = promote_shapes("select", default, *choices, *conds)
    shape = np.broadcast_shapes(*(a.shape for a in shaped))
    default, *rest = [broadcast_to_shape(a, shape) for a in shaped]
    choices, conds = rest[: len(choices)], rest[len(choices):]
    # Applied last to first, so the earliest true condition is the one left standing.
    out = default
    for cond, choice in zip(reversed(conds), reversed(choices)):
        out = lax.select(cond, choice, out)
    return out



# an eager where(c, x, y) is one program (promotion and broadcasting included); where(c)
# reads values (nonzero) and stays op by op
where = one_program(where)

__all__ = [
    # arithmetic
    "add", "subtract", "multiply", "true_divide", "divide", "negative", "positive", "square",
    "reciprocal", "floor_divide", "remainder", "mod", "fmod", "divmod", "power", "pow", "float_power",
    # rounding
    "floor", "ceil", "trunc", "fix", "rint", "round", "around", "modf",
    # exponentials and logarithms
    "exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "sqrt", "cbrt", "logaddexp", "logaddexp2",
    # trigonometric and hyperbolic
    "sin", "cos", "tan", "arcsin", "asin", "arccos", "acos", "arctan", "atan", "sinh", "cosh", "tanh",
    "arcsinh", "asinh", "arccosh", "acosh", "arctanh", "atanh", "arctan2", "atan2", "deg2rad", "radians",
    "rad2deg", "degrees", "hypot", "sinc",
    # signs and floating-point representation
    "absolute", "abs", "fabs", "sign", "signbit", "copysign", "nextafter", "spacing", "heaviside",
    "frexp", "ldexp",
    # predicates
    "isnan", "isinf", "isposinf", "isneginf", "isfinite", "iscomplex", "isreal", "iscomplexobj",
    "isrealobj", "isclose", "allclose", "array_equal", "array_equiv",
    # comparisons
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    # logical, bitwise and shifts
    "logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_and", "bitwise_or",
    "bitwise_xor", "invert", "bitwise_not", "bitwise_invert", "left_shift", "bitwise_left_shift",
    "right_shift", "bitwise_right_shift", "bitwise_count",
    # extrema, clipping and cleaning
    "maximum", "minimum", "fmax", "fmin", "clip", "nan_to_num",
    # complex parts
    "conjugate", "conj", "real", "imag", "angle",
    # integer number theory
    "gcd", "lcm",
    # selection
    "where", "select",
]
