"""`jax.scipy.special.hyp2f1`, Gauss's hypergeometric function 2F1(a, b; c; x) for real
arguments, as JAX's (Pearson, Olver and Porter 2014): the closed forms at the special points,
the Euler transformation s**(c-a-b) 2F1(c-a, c-b; c; x) when c - a - b <= -1, and otherwise the
terminating series (a or b a non-positive integer), the Taylor series (at most 250 terms), or
near x = 1 with an integer c - a - b the digamma transformation (AMS55 15.3.10-12). JAX runs
each scalar through its loops; here each loop is one masked while loop over whole arrays,
entered only by the elements whose branch needs it. Derivatives are JAX's series in a, b, c and
a b / c 2F1(a+1, b+1; c+1; x) in x. Imports numpy, lax and this package's modules.
"""
import numpy as np

from .. import lax
from .. import numpy as jnp
from ..autodiff.custom import custom_jvp
from .promotion import promote_args_real as _real
from .special_gamma import gammasgn

_MAX_TERMS = 250


def _masked_while(cond, body, state, enabled):
    """Per element: `while cond(state): state = body(state)`, for the elements in `enabled`
    (others keep their initial values); stops when no element is still going."""
    def step(carry):
        going, state = carry
        new = body(state)
        state = tuple(jnp.where(going, n, o) for n, o in zip(new, state))
        return going & cond(state), state

    going = enabled & cond(state)
    return lax.while_loop(lambda carry: jnp.any(carry[0]), step, (going, tuple(state)))[1]


def _gamma(x):
    return gammasgn(x) * jnp.exp(lax.lgamma(x))


def _series(a, b, c, x, enabled):
    """sum_k (a)_k (b)_k / (c)_k x**k / k!, until a term is below eps times the sum."""
    rtol = np.finfo(x.dtype).eps

    def body(state):
        total, k, term = state
        return total + term, k + 1, term * (a + k - 1) * (b + k - 1) / (c + k - 1) / k * x

    def cond(state):
        total, k, term = state
        return (k < _MAX_TERMS) & (jnp.abs(term) > rtol * jnp.abs(total))

    one = jnp.ones_like(x)
    return _masked_while(cond, body, (jnp.zeros_like(x), one, one), enabled)[0]


def _terminal(a, b, c, x, enabled):
    """The series that stops after |a| terms, a (or b, swapped in) a non-positive integer: of
    the two, the one of greater magnitude that still does not pass a non-positive integer c."""
    eps = np.finfo(x.dtype).eps * 50
    c_blocks = (jnp.fmod(c, 1) == 0) & (c <= 0) & (c > b)
    swap = (b < a) & (jnp.abs(b - jnp.round(b)) < eps) & ~c_blocks
    a, b = jnp.where(swap, b, a), jnp.where(swap, a, b)
    a = jnp.abs(a)

    def body(state):
        total, i, term = state
        term = term * -(a - i + 1) / (c + i - 1) * (b + i - 1) / i * x
        return total + term, i + 1, term

    def cond(state):
        return state[1] < a + 1

    one = jnp.ones_like(x)
    return _masked_while(cond, body, (one, one, one), enabled)[0]


def _digamma_transform(a, b, c, x, enabled):
    """2F1 near x = 1 when c - a - b is (close to) an integer: AMS55 15.3.10-12 (as JAX's)."""
    rtol = np.finfo(x.dtype).eps
    d = c - a - b
    s = jnp.where(enabled, 1 - x, jnp.full_like(x, 0.5))
    rd = jnp.round(d)
    up = rd >= 0
    zero = jnp.zeros_like(x)
    e = jnp.where(up, d, -d)
    d1, d2 = jnp.where(up, d, zero), jnp.where(up, zero, d)
    ard = jnp.abs(rd)
    log_s = jnp.log(s)
    y = (lax.digamma(jnp.ones_like(x)) + lax.digamma(1 + e) - lax.digamma(a + d1) - lax.digamma(b + d1) - log_s) / _gamma(e + 1)
    p = (a + d1) * (b + d1) * s / _gamma(e + 2)

    def body(state):
        p, q, t, y = state
        r = lax.digamma(1 + t) + lax.digamma(1 + t + e) - lax.digamma(a + t + d1) - lax.digamma(b + t + d1) - log_s
        q = p * r
        y = y + q
        p = p * s * (a + t + d1) / (t + 1) * (b + t + d1) / (t + 1 + e)
        return p, q, t + 1, y

    def cond(state):
        p, q, t, y = state
        return (t < _MAX_TERMS) & (jnp.abs(q) >= rtol * jnp.abs(y))

    _, _, _, y = _masked_while(cond, body, (p, y, jnp.ones_like(x), y), enabled)

    def finite_body(state):
        i, p, t, y1 = state
        p = p * s * (a + t + d2) * (b + t + d2) / (1 - e + t)
        t = t + 1
        p = p / t
        return i + 1, p, t, y1 + p

    one = jnp.ones_like(x)
    y1 = _masked_while(lambda state: state[0] < ard, finite_body, (one, one, zero, one), enabled & (rd != 0))[3]
    gc = _gamma(c)
    y1 = y1 * _gamma(e) * gc / (_gamma(a + d1) * _gamma(b + d1))
    y_sum = y * gc / (_gamma(a + d2) * _gamma(b + d2))
    y_sum = jnp.where(jnp.fmod(ard, 2) == 1, -y_sum, y_sum)
    q = s ** rd
    summed = jnp.where(rd > 0, y_sum * q + y1, y_sum + y1 * q)
    return jnp.where(rd == 0, y * gc / (_gamma(a) * _gamma(b)), summed)


def _terminal_or_series(a, b, c, x, enabled):
    eps = np.finfo(x.dtype).eps * 50
    d = c - a - b
    neg_int = ((a <= 0) & (jnp.abs(a - jnp.round(a)) < eps)) | ((b <= 0) & (jnp.abs(b - jnp.round(b)) < eps))
    near_one = (x > 0.9) & ~neg_int
    integer_d = jnp.abs(d - jnp.round(d)) < eps
    use_digamma = near_one & integer_d
    use_terminal = ~near_one & neg_int
    use_series = ~use_digamma & ~use_terminal
    series = _series(a, b, c, x, enabled & use_series)
    digamma = _digamma_transform(a, b, c, x, enabled & use_digamma)
    terminal = _terminal(a, b, c, x, enabled & use_terminal)
    return jnp.where(use_digamma, digamma, jnp.where(use_terminal, terminal, series))


def _hyp2f1_value(a, b, c, x):
    eps = np.finfo(x.dtype).eps * 50
    d = c - a - b
    s = 1 - x
    ca, cb = c - a, c - b
    one, inf = jnp.ones_like(x), jnp.full_like(x, np.inf)
    # JAX's table of cases, first match wins: (condition, value or None for "the general case")
    is_one = (x == 0) | (((a == 0) | (b == 0)) & (c != 0))
    is_inf = (c == 0) | ((c < 0) & (jnp.fmod(c, 1) == 0))
    euler = (d <= -1) & ~((jnp.abs(d - jnp.round(d)) >= eps) & (s < 0))
    is_inf_at_one = (d <= 0) & (x == 1)
    b_is_c = (x < 1) & (b == c)
    a_is_c = (x < 1) & (a == c)
    beyond = x > 1
    at_one = x == 1
    taken = jnp.zeros_like(x, dtype=bool)
    cases = []
    for condition in (is_one, is_inf, euler, is_inf_at_one, b_is_c, a_is_c, beyond, at_one):
        cases.append(condition & ~taken)
        taken = taken | condition
    general = ~taken
    is_one, is_inf, euler, is_inf_at_one, b_is_c, a_is_c, beyond, at_one = cases
    # one series evaluation serves the Euler-transformed and the general cases
    ta, tb = jnp.where(euler, ca, a), jnp.where(euler, cb, b)
    series = _terminal_or_series(ta, tb, c, x, euler | general)
    s_pos = jnp.where(s > 0, s, one)  # s**(...) only where x < 1
    out = series
    out = jnp.where(euler, s ** d * series, out)
    out = jnp.where(b_is_c, s_pos ** -a, out)
    out = jnp.where(a_is_c, s_pos ** -b, out)
    out = jnp.where(at_one, _gamma(c) * _gamma(d) / (_gamma(ca) * _gamma(cb)), out)
    out = jnp.where(is_inf | is_inf_at_one | beyond, inf, out)
    return jnp.where(is_one, one, out)


def _parameter_series(a, b, c, x, weight):
    """sum over k >= 1 of weight(k) (a)_k (b)_k / (c)_k x**k / k!: the derivative of 2F1 in a
    parameter (functions.wolfram.com 07.23.20.0001-3), as JAX's."""
    precision = np.finfo(x.dtype).eps

    def body(state):
        total, k, term = state
        return total + term * weight(k), k + 1, term * (a + k) * (b + k) / (c + k) / (k + 1) * x

    def cond(state):
        total, k, term = state
        with np.errstate(invalid="ignore", divide="ignore"):
            return (k < _MAX_TERMS) & (jnp.abs(term) / jnp.abs(total) > precision)

    state = (jnp.zeros_like(x), jnp.ones_like(x), a * b / c * x)
    return _masked_while(cond, body, state, jnp.ones_like(x, dtype=bool))[0]


_hyp2f1 = custom_jvp(_hyp2f1_value)
_hyp2f1.defjvps(
    lambda t, ans, a, b, c, x: t * _parameter_series(a, b, c, x, lambda k: lax.digamma(a + k) - lax.digamma(a)),
    lambda t, ans, a, b, c, x: t * _parameter_series(a, b, c, x, lambda k: lax.digamma(b + k) - lax.digamma(b)),
    lambda t, ans, a, b, c, x: t * _parameter_series(a, b, c, x, lambda k: lax.digamma(c) - lax.digamma(c + k)),
    lambda t, ans, a, b, c, x: t * a * b / c * _hyp2f1(a + 1, b + 1, c + 1, x),
)


def hyp2f1(a, b, c, x):
    """Gauss's hypergeometric function 2F1(a, b; c; x) = sum_k (a)_k (b)_k / (c)_k x**k / k! for
    real arguments (inf for x > 1, as JAX's); large values may be inexact in float32, and near
    x = 1 with a non-integer c - a - b the series is cut at 250 terms, as JAX's."""
    return _hyp2f1(*_real("hyp2f1", a, b, c, x))


__all__ = ["hyp2f1"]
