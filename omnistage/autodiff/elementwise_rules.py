"""Derivative rules of the elementwise primitives (`omnistage.lax.elementwise`).

Most are one line of partial derivatives (`def_partials`), each written in terms of the
inputs and the primal output so nothing is recomputed. Complex numbers follow JAX: rules
are the plain transposes of the JVPs, never conjugated, so `grad` of a real function of a
complex input equals JAX's. `max`/`min` split the derivative evenly on ties, as JAX does.
"""
import numpy as np

from ..core import dtypes
from ..core.array import aval_of
from ..lax import elementwise as E
from . import zeros as Z
from .rules import JVP, VJP, bind, def_linear, def_partials, def_zero


def _c(x, value):
    """`value` as a typed scalar of `x`'s dtype (generated code never promotes literals)."""
    return np.asarray(value, dtype=aval_of(x).dtype)[()]


def _is_complex(x):
    return dtypes.is_complex(aval_of(x).dtype)


def _one_plus_sq(x):
    return E.add(_c(x, 1), E.mul(x, x))


def _one_minus_sq(x):
    return E.sub(_c(x, 1), E.mul(x, x))


# --- smooth unary functions: d out / d x ------------------------------------------------

_UNARY = {
    "exp": lambda x, out: out,
    "exp2": lambda x, out: E.mul(out, _c(x, np.log(2.0))),
    "expm1": lambda x, out: E.add(out, _c(x, 1)),
    "log": lambda x, out: E.div(_c(x, 1), x),
    "log1p": lambda x, out: E.div(_c(x, 1), E.add(x, _c(x, 1))),
    "sin": lambda x, out: E.cos(x),
    "cos": lambda x, out: E.neg(E.sin(x)),
    "tan": lambda x, out: E.add(_c(x, 1), E.mul(out, out)),
    "asin": lambda x, out: E.rsqrt(_one_minus_sq(x)),
    "acos": lambda x, out: E.neg(E.rsqrt(_one_minus_sq(x))),
    "atan": lambda x, out: E.div(_c(x, 1), _one_plus_sq(x)),
    "sinh": lambda x, out: E.cosh(x),
    "cosh": lambda x, out: E.sinh(x),
    "tanh": lambda x, out: E.mul(E.add(_c(x, 1), out), E.sub(_c(x, 1), out)),
    "asinh": lambda x, out: E.rsqrt(_one_plus_sq(x)),
    "acosh": lambda x, out: E.rsqrt(E.mul(E.sub(x, _c(x, 1)), E.add(x, _c(x, 1)))),
    "atanh": lambda x, out: E.div(_c(x, 1), _one_minus_sq(x)),
    "sqrt": lambda x, out: E.div(_c(x, 0.5), out),
    "rsqrt": lambda x, out: E.mul(E.div(out, x), _c(x, -0.5)),
    "cbrt": lambda x, out: E.mul(E.integer_pow(out, -2), _c(x, 1 / 3)),
    "logistic": lambda x, out: E.mul(out, E.sub(_c(x, 1), out)),
    # lax.erf_inv (lax/error_function.py): sqrt(pi)/2 exp(erf_inv(x)**2), JAX's rule
    "erf_inv": lambda x, out: E.mul(_c(x, np.sqrt(np.pi) / 2), E.exp(E.mul(out, out))),
}

for _name, _d in _UNARY.items():
    def_partials(_name, _d)


# --- binary arithmetic ---------------------------------------------------------------------


def _balanced(x, y, out):
    """JAX's tie rule for max/min, d out / d x: 1 where x alone attains `out`, 1/2 where
    both do, else 0 (equality only, so complex operands work too)."""
    one, half, zero = _c(x, 1), _c(x, 0.5), _c(x, 0)
    return E.select_n(E.eq(x, out), zero, E.select_n(E.eq(y, out), one, half))


def _pow_dx(x, y, out):
    # y * x**(y-1), and 0 where y == 0 (so 0**0 has derivative 0, as JAX)
    d = E.mul(y, E.pow(x, E.sub(y, _c(y, 1))))
    return E.select_n(E.eq(y, _c(y, 0)), d, _c(x, 0))


def _pow_dy(x, y, out):
    # log(x) * out, with 0 where x == 0 (log would give -inf * 0 = nan)
    safe = E.select_n(E.eq(x, _c(x, 0)), x, _c(x, 1))
    return E.select_n(E.eq(x, _c(x, 0)), E.mul(E.log(safe), out), _c(x, 0))


def _atan2_den(x, y):
    return E.add(E.mul(x, x), E.mul(y, y))


def _rem_dy(x, y, out):
    q = E.div(x, y)
    return E.neg(E.mul(E.sign(q), E.floor(E.abs(q))))


def_partials("mul", lambda x, y, out: y, lambda x, y, out: x)
def_partials("div", lambda x, y, out: E.div(_c(x, 1), y), lambda x, y, out: E.neg(E.div(out, y)))
def_partials("pow", _pow_dx, _pow_dy)
def_partials("atan2", lambda x, y, out: E.div(y, _atan2_den(x, y)), lambda x, y, out: E.neg(E.div(x, _atan2_den(x, y))))
def_partials("rem", lambda x, y, out: _c(x, 1), _rem_dy)
def_partials("max", lambda x, y, out: _balanced(x, y, out), lambda x, y, out: _balanced(y, x, out))
def_partials("min", lambda x, y, out: _balanced(x, y, out), lambda x, y, out: _balanced(y, x, out))
def_partials("fma", lambda a, b, c, out: b, lambda a, b, c, out: a, lambda a, b, c, out: _c(c, 1))


def _integer_pow_d(x, out, *, y):
    if y == 0:
        return _c(x, 0)
    return E.mul(_c(x, y), E.integer_pow(x, y - 1)) if y != 1 else _c(x, 1)


def_partials("integer_pow", _integer_pow_d)


# --- linear ------------------------------------------------------------------------------------


def _add_jvp(primals, tangents, out):
    return Z.fit(Z.add(*tangents), aval_of(out))


def _sub_jvp(primals, tangents, out):
    tx, ty = tangents
    if ty is None:
        return Z.fit(tx, aval_of(out))
    return Z.fit(E.neg(ty) if tx is None else E.sub(tx, ty), aval_of(out))


JVP["add"], VJP["add"] = _add_jvp, lambda ct, ins, out: [ct, ct]
JVP["sub"], VJP["sub"] = _sub_jvp, lambda ct, ins, out: [ct, lambda: E.neg(ct)]
def_linear("neg", lambda ct, x: E.neg(ct))
def_linear("real", lambda ct, x: E.complex(ct, _c(ct, 0)))
def_linear("imag", lambda ct, x: E.complex(_c(ct, 0), E.neg(ct)))
def_linear("conj", lambda ct, x: E.conj(ct) if _is_complex(x) else ct)


def _complex_jvp(primals, tangents, out):
    tx, ty = (Z.instantiate(t, aval_of(p)) for t, p in zip(tangents, primals))
    return Z.fit(E.complex(tx, ty), aval_of(out))


JVP["complex"] = _complex_jvp
VJP["complex"] = lambda ct, ins, out: [lambda: E.real(ct), lambda: E.neg(E.imag(ct))]


def _convert_jvp(primals, tangents, out, *, new_dtype, weak_type):
    if not Z.is_differentiable(aval_of(out)):
        return None
    return bind("convert_element_type", tangents[0], new_dtype=new_dtype, weak_type=weak_type)


def _convert_vjp(ct, ins, out, *, new_dtype, weak_type):
    x_aval = aval_of(ins[0])
    if not Z.is_differentiable(x_aval):
        return [None]
    return [lambda: bind("convert_element_type", ct, new_dtype=x_aval.dtype.name, weak_type=x_aval.weak_type)]


JVP["convert_element_type"], VJP["convert_element_type"] = _convert_jvp, _convert_vjp


# --- abs: not holomorphic ----------------------------------------------------------------------


def _abs_factor(x, out):
    """d|x|: sign for real x; conj(x)/|x| (0 at 0) for complex x, used as real(t * factor)."""
    if not _is_complex(x):
        return E.select_n(E.ge(x, _c(x, 0)), _c(x, -1), _c(x, 1))
    out_c = E.complex(out, _c(out, 0))
    safe = E.select_n(E.eq(out, _c(out, 0)), out_c, _c(x, 1))
    return E.div(E.conj(x), safe)


def _abs_jvp(primals, tangents, out):
    x, = primals
    d = E.mul(tangents[0], _abs_factor(x, out))
    return E.real(d) if _is_complex(x) else d


def _abs_vjp(ct, ins, out):
    x, = ins
    if not _is_complex(x):
        return [lambda: E.mul(ct, _abs_factor(x, out))]
    return [lambda: E.mul(E.complex(ct, _c(ct, 0)), _abs_factor(x, out))]


JVP["abs"], VJP["abs"] = _abs_jvp, _abs_vjp


# --- locally constant ----------------------------------------------------------------------------

for _name in ("floor", "ceil", "round", "round_away", "sign", "nextafter", "stop_gradient", "threefry2x32"):
    def_zero(_name)


# --- select_n: linear in the cases ---------------------------------------------------------------


def _select_jvp(primals, tangents, out):
    which, *cases = primals
    if all(t is None for t in tangents[1:]):
        return None
    ts = [Z.fit(Z.instantiate(t, aval_of(c)), aval_of(out)) for t, c in zip(tangents[1:], cases)]
    return E.select_n(which, *ts)


def _select_vjp(ct, ins, out):
    which, *cases = ins
    zero = _c(ct, 0)

    def case_ct(i):
        picks = [zero] * len(cases)
        picks[i] = ct
        return E.select_n(which, *picks)

    return [None] + [lambda i=i: case_ct(i) for i in range(len(cases))]


JVP["select_n"], VJP["select_n"] = _select_jvp, _select_vjp

