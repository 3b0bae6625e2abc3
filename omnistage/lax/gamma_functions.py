"""The gamma family as compositions of lax operations, with JAX's derivative rules: `lgamma`,
`digamma` (XLA's Lanczos forms), the Hurwitz `zeta` (Cephes' Euler-Maclaurin summation, as
XLA's CHLO expansion), `polygamma`, and the regularized incomplete gamma functions `igamma`/`igammac` with
`igamma_grad_a` and `random_gamma_grad` (XLA's math.cc series and continued fraction, ported
line by line from JAX's `lax.special`, so values match JAX to float rounding).

Operands here are of one float dtype and one shape (`lax.special` checks and broadcasts).
lgamma, digamma, polygamma (in x), igamma and igammac carry JAX's rules (`with_jvp`); zeta,
igamma_grad_a and random_gamma_grad differentiate through their composition. Everything is elementwise: loops run over
iterations of whole arrays (a per-element `enabled` mask), never over elements, so they
stage, batch and lower like any lax code. Imports core and lax only.
"""
import enum
import math

import numpy as np

from .control_flow import while_loop
from .conveniences import full_like
from .elementwise import (
    abs, add, bitwise_and, bitwise_not, bitwise_or, cos, div, eq, exp, floor, ge, gt, is_finite, le, log,
    log1p, lt, mul, ne, neg, pow, select, sin, sub,
)
from .custom_derivatives import with_jvp
from .reductions import reduce_or


def const(x, value):
    """A rank-0 constant of x's dtype (lax operands broadcast rank-0 values)."""
    return np.asarray(value, dtype=x.dtype)[()]


def any_of(pred):
    """Whether any element of a boolean array is set (a loop's 'not converged yet')."""
    return reduce_or(pred, tuple(range(pred.ndim)))


def is_nan(x):
    return ne(x, x)


def is_integer(x):
    return eq(x, floor(x))


def any_pred(*preds):
    out = preds[0]
    for p in preds[1:]:
        out = bitwise_or(out, p)
    return out


# --- lgamma and digamma: XLA's Lanczos approximation (g = 7, 8 terms) ---------------------

_LANCZOS_G = 7.0
_LANCZOS_BASE = 0.99999999999980993227684700473478
_LANCZOS = (676.520368121885098567009190444019, -1259.13921672240287047156078755283,
            771.3234287776530788486528258894, -176.61502916214059906584551354,
            12.507343278686904814458936853, -0.13857109526572011689554707,
            9.984369578019570859563e-6, 1.50563273514931155834e-7)


def _lanczos_parts(x):
    """XLA's shift: z = x - 1, or -x where x < 1/2 (the result is then reflected)."""
    reflect = lt(x, const(x, 0.5))
    return reflect, select(reflect, neg(x), sub(x, const(x, 1)))


def _log_t(x, z):
    """log(z + g + 1/2), as log1p for accuracy near z = 0."""
    return add(log1p(div(z, const(x, _LANCZOS_G + 0.5))), const(x, math.log(_LANCZOS_G + 0.5)))


def lgamma_value(x):
    """log|Gamma(x)|, reflected below 1/2 (inf at the poles and at +-inf)."""
    reflect, z = _lanczos_parts(x)
    total = full_like(x, _LANCZOS_BASE)
    for i, coefficient in enumerate(_LANCZOS):
        total = add(total, div(const(x, coefficient), add(z, const(x, i + 1))))
    t = add(z, const(x, _LANCZOS_G + 0.5))
    log_t = _log_t(x, z)
    log_y = add(add(const(x, 0.5 * math.log(2 * math.pi)), mul(sub(add(z, const(x, 0.5)), div(t, log_t)), log_t)), log(total))
    abs_x = abs(x)
    frac = sub(abs_x, floor(abs_x))
    reduced = select(gt(frac, const(x, 0.5)), sub(const(x, 1), frac), frac)
    reduced = select(reflect, reduced, full_like(x, 0.5))  # keeps the unused branch finite (its gradient too)
    denom = log(sin(mul(const(x, math.pi), reduced)))
    reflection = select(is_finite(denom), sub(sub(const(x, math.log(math.pi)), denom), log_y), neg(denom))
    out = select(reflect, reflection, log_y)
    return select(eq(abs_x, const(x, np.inf)), full_like(x, np.inf), out)


def digamma_value(x):
    """d/dx log Gamma(x), reflected below 1/2; NaN at the poles 0, -1, -2, ..."""
    reflect, z = _lanczos_parts(x)
    num = full_like(x, 0)
    denom = full_like(x, _LANCZOS_BASE)
    for i, coefficient in enumerate(_LANCZOS):
        d = add(z, const(x, i + 1))
        num = sub(num, div(const(x, coefficient), mul(d, d)))
        denom = add(denom, div(const(x, coefficient), d))
    t = add(z, const(x, _LANCZOS_G + 0.5))
    y = sub(add(_log_t(x, z), div(num, denom)), div(const(x, _LANCZOS_G), t))
    reduced = add(x, abs(floor(add(x, const(x, 0.5)))))
    reduced = select(reflect, reduced, full_like(x, 0.5))  # keeps the unused branch finite (its gradient too)
    pi = const(x, math.pi)
    reflection = sub(y, div(mul(pi, cos(mul(pi, reduced))), sin(mul(pi, reduced))))
    out = select(reflect, reflection, y)
    return select(bitwise_and(le(x, const(x, 0)), is_integer(x)), full_like(x, np.nan), out)


# --- Hurwitz zeta and polygamma --------------------------------------------------------------

# Cephes zeta.c: (2k)! / B_2k, the Euler-Maclaurin correction terms' denominators
_ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
           -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
           1.8152105401943546773e17, -7.1661652561756670113e18)
_ZETA_DIRECT_TERMS = 9  # Cephes sums (q + k)**-x directly until q + k > 9


def zeta(x, q):
    """The Hurwitz zeta function sum over k >= 0 of (q + k)**-x, for x > 1 (Cephes' algorithm:
    the terms k = 0..9 directly, more while q + k <= 9, then the Euler-Maclaurin tail with 12
    Bernoulli terms).
    inf at x == 1 and at q a non-positive integer; NaN for x < 1, and for q < 0 with x not an
    integer (as Cephes and XLA)."""
    s = pow(q, neg(x))
    a = q
    for _ in range(_ZETA_DIRECT_TERMS):
        a = add(a, const(a, 1))
        s = add(s, pow(a, neg(x)))

    def below_nine(carry):
        return any_of(le(carry[1], const(q, 9)))

    def one_more_term(carry):  # only where q < 0: a starts at q + 9
        s, a = carry
        more = le(a, const(a, 9))
        a = select(more, add(a, const(a, 1)), a)
        return select(more, add(s, pow(a, neg(x))), s), a

    s, w = while_loop(below_nine, one_more_term, (s, a))
    b = pow(w, neg(x))
    s = sub(add(s, div(mul(b, w), sub(x, const(x, 1)))), mul(const(x, 0.5), b))
    factor = full_like(x, 1)
    k = full_like(x, 0)
    for denominator in _ZETA_A:
        factor = mul(factor, add(x, k))
        b = div(b, w)
        s = add(s, div(mul(factor, b), const(x, denominator)))
        k = add(k, const(x, 1))
        factor = mul(factor, add(x, k))
        b = div(b, w)
        k = add(k, const(x, 1))
    pole = bitwise_or(eq(x, const(x, 1)), bitwise_and(le(q, const(q, 0)), is_integer(q)))
    undefined = bitwise_or(lt(x, const(x, 1)), bitwise_and(lt(q, const(q, 0)), bitwise_not(is_integer(x))))
    s = select(pole, full_like(s, np.inf), s)
    return select(bitwise_or(undefined, any_pred(is_nan(x), is_nan(q))), full_like(s, np.nan), s)


def polygamma_value(n, x):
    """The n-th derivative of digamma: (-1)**(n+1) n! zeta(n + 1, x) for integer n >= 1,
    digamma(x) for n == 0, NaN for n negative or not an integer."""
    n_plus_1 = add(n, const(n, 1))
    odd = eq(sub(n, mul(const(n, 2), floor(mul(n, const(n, 0.5))))), const(n, 1))
    sign = select(odd, full_like(n, 1), full_like(n, -1))
    higher = mul(mul(sign, exp(lgamma_value(n_plus_1))), zeta(n_plus_1, x))
    out = select(eq(n, const(n, 0)), digamma_value(x), higher)
    return select(bitwise_or(lt(n, const(n, 0)), bitwise_not(is_integer(n))), full_like(out, np.nan), out)


# --- regularized incomplete gamma: XLA's series and continued fraction -----------------------


class IgammaMode(enum.Enum):
    """What the series / continued fraction return: P(a, x) (or Q), its derivative in a, or
    the derivative of a Gamma(a) sample in a (the implicit reparameterization gradient)."""
    VALUE = 1
    DERIVATIVE = 2
    SAMPLE_DERIVATIVE = 3


def _eps(x):
    return const(x, np.finfo(x.dtype).eps)


def _igamma_series(ax, x, a, enabled, mode):
    """P(a, x) = ax/a * sum x**n / ((a+1)...(a+n)), with its derivative in a alongside."""
    eps = _eps(x)

    def body(vals):
        enabled, r, term, ans, x_, dc_da, dans_da = vals
        r = add(r, const(r, 1))
        dc_da = sub(mul(dc_da, div(x_, r)), div(mul(term, x_), mul(r, r)))
        dans_da = add(dans_da, dc_da)
        term = mul(term, div(x_, r))
        ans = add(ans, term)
        if mode == IgammaMode.VALUE:
            going = bitwise_and(enabled, gt(div(term, ans), eps))
        else:
            going = bitwise_and(enabled, gt(abs(div(dc_da, dans_da)), eps))
        new = (r, term, ans, x_, dc_da, dans_da)
        return (going,) + tuple(select(enabled, v, old) for v, old in zip(new, vals[1:]))

    zero, one = full_like(a, 0), full_like(a, 1)
    vals = while_loop(lambda v: any_of(v[0]), body, (enabled, a, one, one, x, zero, zero))
    ans, dans_da = vals[3], vals[6]
    if mode == IgammaMode.VALUE:
        return div(mul(ans, ax), a)
    dlogax_da = sub(log(x), digamma_value(add(a, const(a, 1))))
    if mode == IgammaMode.DERIVATIVE:
        return div(mul(ax, add(mul(ans, dlogax_da), dans_da)), a)
    return div(mul(neg(add(dans_da, mul(ans, dlogax_da))), x), a)


def _igammac_continued_fraction(ax, x, a, enabled, mode):
    """Q(a, x) = ax * (Legendre's continued fraction), with its derivative in a alongside;
    at most 2000 steps, rescaling the convergents to stay finite."""
    eps = _eps(x)

    def cond(vals):
        return bitwise_and(lt(vals[5], const(x, 2000)), any_of(vals[0]))

    def body(vals):
        (enabled, ans, t, y, z, k, pkm1, qkm1, pkm2, qkm2, dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da, dans_da) = vals
        k = add(k, const(k, 1))
        y = add(y, const(y, 1))
        z = add(z, const(z, 2))
        yc = mul(y, k)
        pk = sub(mul(pkm1, z), mul(pkm2, yc))
        qk = sub(mul(qkm1, z), mul(qkm2, yc))
        qk_nonzero = ne(qk, const(qk, 0))
        r = div(pk, qk)
        t = select(qk_nonzero, abs(div(sub(ans, r), r)), full_like(r, 1))
        ans = select(qk_nonzero, r, ans)
        dpk_da = add(sub(sub(mul(dpkm1_da, z), pkm1), mul(dpkm2_da, yc)), mul(pkm2, k))
        dqk_da = add(sub(sub(mul(dqkm1_da, z), qkm1), mul(dqkm2_da, yc)), mul(qkm2, k))
        dans_da_new = select(qk_nonzero, div(sub(dpk_da, mul(ans, dqk_da)), qk), dans_da)
        grad_change = select(qk_nonzero, abs(sub(dans_da_new, dans_da)), full_like(dans_da, 1))
        pkm2, pkm1, qkm2, qkm1 = pkm1, pk, qkm1, qk
        dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da = dpkm1_da, dqkm1_da, dpk_da, dqk_da
        rescale = gt(abs(pk), div(const(pk, 1), eps))
        pkm2, pkm1, qkm2, qkm1, dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da = (
            select(rescale, mul(v, eps), v) for v in (pkm2, pkm1, qkm2, qkm1, dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da))
        if mode == IgammaMode.VALUE:
            going = bitwise_and(enabled, gt(t, eps))
        else:
            going = bitwise_and(enabled, gt(grad_change, eps))
        new = (ans, t, y, z, k, pkm1, qkm1, pkm2, qkm2, dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da, dans_da_new)
        kept = tuple(v if i == 4 else select(enabled, v, old) for i, (v, old) in enumerate(zip(new, vals[1:])))
        return (going,) + kept

    y = sub(const(a, 1), a)
    z = add(add(x, y), const(x, 1))
    pkm2 = full_like(x, 1)
    qkm2 = x
    pkm1 = add(x, const(x, 1))
    qkm1 = mul(z, x)
    ans = div(pkm1, qkm1)
    zero = full_like(x, 0)
    dqkm1_da = neg(x)
    dans_da = div(sub(zero, mul(ans, dqkm1_da)), qkm1)
    init = (enabled, ans, full_like(x, 1), y, z, const(x, 0), pkm1, qkm1, pkm2, qkm2,
            zero, zero, zero, dqkm1_da, dans_da)
    vals = while_loop(cond, body, init)
    ans = vals[1]
    if mode == IgammaMode.VALUE:
        return mul(ans, ax)
    dans_da = vals[14]
    dlogax_da = sub(log(x), digamma_value(a))
    if mode == IgammaMode.DERIVATIVE:
        return mul(ax, add(mul(ans, dlogax_da), dans_da))
    return neg(mul(add(dans_da, mul(ans, dlogax_da)), x))


def _log_ax(a, x):
    """log(x**a e**-x / Gamma(a)), the prefactor of both expansions, and where it underflows."""
    log_ax = sub(sub(mul(a, log(x)), x), lgamma_value(a))
    return log_ax, lt(log_ax, const(x, -np.log(np.finfo(x.dtype).max)))


def _series_or_fraction(a, x, use_fraction, disabled, mode, on_fraction, on_series):
    """XLA's split: Legendre's continued fraction where `use_fraction`, the power series
    elsewhere, each loop masked off where `disabled` or where x**a e**-x / Gamma(a) underflows;
    the result is on_fraction(fraction) or on_series(series) per element."""
    log_ax, underflow = _log_ax(a, x)
    ax = exp(log_ax)
    enabled = bitwise_not(bitwise_or(disabled, underflow))
    fraction = _igammac_continued_fraction(ax, x, a, bitwise_and(enabled, use_fraction), mode)
    series = _igamma_series(ax, x, a, bitwise_and(enabled, bitwise_not(use_fraction)), mode)
    return select(use_fraction, on_fraction(fraction), on_series(series))


def _one_minus(v):
    return sub(const(v, 1), v)


def _same(v):
    return v


def igamma_value(a, x):
    """P(a, x), the regularized lower incomplete gamma function (XLA's algorithm)."""
    x_inf = eq(x, const(x, np.inf))
    x_zero = eq(x, const(x, 0))
    domain_error = any_pred(lt(x, const(x, 0)), lt(a, const(a, 0)), bitwise_and(eq(a, const(a, 0)), x_zero),
                            is_nan(a), is_nan(x))
    use_igammac = bitwise_and(ge(x, const(x, 1)), gt(x, a))
    out = _series_or_fraction(a, x, use_igammac, any_pred(x_zero, domain_error, x_inf), IgammaMode.VALUE,
                              _one_minus, _same)
    out = select(x_zero, full_like(a, 0), out)
    out = select(x_inf, full_like(a, 1), out)
    return select(domain_error, full_like(a, np.nan), out)


def igammac_value(a, x):
    """Q(a, x) = 1 - P(a, x), computed directly where P is close to 1 (XLA's algorithm)."""
    a_zero = eq(a, const(a, 0))
    x_inf = eq(x, const(x, np.inf))
    domain_error = any_pred(lt(x, const(x, 0)), lt(a, const(a, 0)), bitwise_and(a_zero, eq(x, const(x, 0))),
                            is_nan(a), is_nan(x))
    use_fraction = bitwise_not(bitwise_or(lt(x, const(x, 1)), lt(x, a)))
    out = _series_or_fraction(a, x, use_fraction, any_pred(domain_error, x_inf, a_zero), IgammaMode.VALUE,
                              _same, _one_minus)
    out = select(bitwise_or(x_inf, a_zero), full_like(out, 0), out)
    return select(domain_error, full_like(a, np.nan), out)


def _igamma_derivative(a, x, mode):
    nan = any_pred(is_nan(a), is_nan(x))
    x_zero = eq(x, const(x, 0))
    domain_error = bitwise_or(lt(x, const(x, 0)), le(a, const(a, 0)))
    use_igammac = bitwise_and(gt(x, const(x, 1)), gt(x, a))
    out = _series_or_fraction(a, x, use_igammac, any_pred(x_zero, domain_error, nan), mode, neg, _same)
    out = select(x_zero, full_like(out, 0), out)
    return select(bitwise_or(domain_error, nan), full_like(a, np.nan), out)


def igamma_grad_a(a, x):
    """d/da P(a, x) (XLA's series and continued fraction, differentiated in a)."""
    return _igamma_derivative(a, x, IgammaMode.DERIVATIVE)


def random_gamma_grad(a, x):
    """d/da of a Gamma(a, 1) sample x at fixed P(a, x) (implicit reparameterization):
    -(dP/da) / (dP/dx)."""
    return _igamma_derivative(a, x, IgammaMode.SAMPLE_DERIVATIVE)


# --- JAX's derivative rules ------------------------------------------------------------------
# Rules and values call the plain compositions (`*_value`), never a rule-equipped function:
# each custom-JVP call stages its value and its rule, so nesting them multiplies the staging.


def _polygamma_dx(t, ans, n, x):
    return mul(t, polygamma_value(add(n, const(n, 1)), x))


def _igamma_dx(t, ans, a, x):
    """d/dx P(a, x) = exp(-x + (a - 1) log x - lgamma(a))."""
    return mul(t, exp(sub(sub(mul(sub(a, const(a, 1)), log(x)), x), lgamma_value(a))))


def _igamma_da(t, ans, a, x):
    return mul(t, igamma_grad_a(a, x))


lgamma = with_jvp(lgamma_value, lambda t, ans, x: mul(t, digamma_value(x)))
digamma = with_jvp(digamma_value, lambda t, ans, x: mul(t, polygamma_value(full_like(x, 1), x)))
polygamma = with_jvp(polygamma_value, None, _polygamma_dx)  # none in n, as JAX
igamma = with_jvp(igamma_value, _igamma_da, _igamma_dx)
igammac = with_jvp(igammac_value, lambda *args: neg(_igamma_da(*args)), lambda *args: neg(_igamma_dx(*args)))

__all__ = ["lgamma", "digamma", "zeta", "polygamma", "igamma", "igammac", "igamma_grad_a", "random_gamma_grad"]
