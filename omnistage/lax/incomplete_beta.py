"""The regularized incomplete beta function I_x(a, b) as a composition of lax operations:
JAX's `regularized_incomplete_beta` (XLA's math.cc): the continued fraction of DLMF 8.17.22
evaluated by the modified Lentz method, on x or, by symmetry, on 1 - x (where it converges
fast). One while loop over iterations of the whole array (per-element convergence flags are
reduced to one 'any left' predicate), so it stages, batches and lowers like other lax code.
Imports core and lax only.
"""
import numpy as np

from .control_flow import while_loop
from .conveniences import full_like
from .elementwise import (
    abs, add, bitwise_and, bitwise_not, bitwise_or, convert_element_type, div, eq, exp, ge, gt, log, log1p, lt, mul,
    neg, rem, select, sub,
)
from .shapes import broadcast_in_dim
from .gamma_functions import any_of, any_pred, const, is_nan, lgamma_value as lgamma


def _lentz(num_iterations, tiny, threshold, numerator, denominator):
    """The continued fraction b0 + a1/(b1 + a2/(b2 + ...)) by the modified Lentz method, for
    per-iteration partial numerators/denominators (functions of the int32 step).

    After the value has converged at step s it runs on to step 2s (the value no longer changes):
    a derivative of the fraction converges later than its value. Where a partial numerator is
    exactly 0 (b an integer) the value is exact from there on, but its derivative in b is not."""
    n = np.int32(num_iterations)

    def cond(vals):
        step, going, first = vals[0], vals[1], vals[5]
        return bitwise_and(lt(step, n), bitwise_or(going, lt(step, mul(np.int32(2), first))))

    def body(vals):
        step, _, c_ratio, d_ratio, h, first = vals
        a_n, b_n = numerator(step), denominator(step)
        cc = add(b_n, div(a_n, c_ratio))
        cc = select(lt(abs(cc), tiny), full_like(cc, tiny), cc)
        d = add(b_n, mul(a_n, d_ratio))
        d = select(lt(abs(d), tiny), full_like(d, tiny), d)
        d = div(const(d, 1), d)
        delta = mul(cc, d)
        going = any_of(ge(abs(sub(delta, const(delta, 1))), threshold))
        step = add(step, np.int32(1))
        first = select(bitwise_and(eq(first, n), bitwise_not(going)), step, first)
        return step, going, cc, d, mul(h, delta), first

    b0 = denominator(np.int32(0))
    h = select(lt(abs(b0), tiny), full_like(b0, tiny), b0)
    return while_loop(cond, body, (np.int32(1), np.True_, h, full_like(h, 0), h, n))[4]


def betainc(a, b, x):
    """I_x(a, b) = B(x; a, b) / B(a, b) for a, b >= 0 and 0 <= x <= 1 (NaN outside)."""
    dt = np.dtype(x.dtype)
    a_zero = bitwise_or(eq(a, const(a, 0)), eq(b, const(b, np.inf)))
    b_zero = bitwise_or(eq(b, const(b, 0)), eq(a, const(a, np.inf)))
    x_zero, x_one = eq(x, const(x, 0)), eq(x, const(x, 1))
    result_zero = bitwise_or(bitwise_and(b_zero, bitwise_not(x_one)), bitwise_and(a_zero, x_zero))
    result_one = bitwise_or(bitwise_and(a_zero, bitwise_not(x_zero)), bitwise_and(b_zero, x_one))
    result_nan = any_pred(lt(a, const(a, 0)), lt(b, const(b, 0)), lt(x, const(x, 0)), gt(x, const(x, 1)),
                          bitwise_and(a_zero, b_zero), is_nan(a), is_nan(b), is_nan(x))

    # DLMF 8.17.E23 converges fast for x < (a + 1) / (a + b + 2); elsewhere use I_x(a, b) = 1 - I_{1-x}(b, a)
    direct = lt(x, div(add(a, const(a, 1)), add(add(a, b), const(b, 2))))
    a, b = select(direct, a, b), select(direct, b, a)
    x = select(direct, x, sub(const(x, 1), x))

    def fill(pred):
        """A rank-0 predicate of the step, as an array like x."""
        return broadcast_in_dim(pred, x.shape, ())

    def numerator(step):
        """DLMF 8.17.23's d_m: 1 at step 1, then alternating even/odd terms in m = (step-1)//2."""
        m = convert_element_type(div(sub(step, np.int32(1)), np.int32(2)), dt)
        two_m = mul(const(x, 2), m)
        first_even = div(mul(neg(add(a, b)), x), add(a, const(a, 1)))  # m == 0: exact near a = 0 under FTZ
        even = select(fill(eq(m, const(x, 0))), first_even,
                      div(mul(mul(neg(add(a, m)), add(add(a, b), m)), x),
                          mul(add(a, two_m), add(add(a, two_m), const(a, 1)))))
        odd = div(mul(mul(m, sub(b, m)), x), mul(sub(add(a, two_m), const(a, 1)), add(a, two_m)))
        is_even = eq(rem(step, np.int32(2)), np.int32(0))
        return select(fill(eq(step, np.int32(1))), full_like(x, 1), select(fill(is_even), even, odd))

    def denominator(step):
        return select(fill(eq(step, np.int32(0))), full_like(x, 0), full_like(x, 1))

    eps_half = np.asarray(np.finfo(dt).eps / 2, dt)[()]
    fraction = _lentz(200 if dt == np.float32 else 600, eps_half, eps_half, numerator, denominator)

    # a Gamma(a) = Gamma(a + 1) -> 1 as a -> 0+: drop the 1/a and log Gamma(a) together there
    very_small = np.asarray(np.finfo(dt).tiny * 2, dt)[()]
    lbeta_small_a = sub(lgamma(b), lgamma(add(a, b)))
    lbeta = add(lgamma(a), lbeta_small_a)
    log1p_neg_x = log1p(neg(x))
    factor = select(lt(a, very_small), exp(sub(mul(log1p_neg_x, b), lbeta_small_a)),
                    div(exp(sub(add(mul(log(x), a), mul(log1p_neg_x, b)), lbeta)), a))
    out = mul(fraction, factor)
    out = select(direct, out, sub(const(out, 1), out))
    out = select(result_zero, full_like(out, 0), out)
    out = select(result_one, full_like(out, 1), out)
    return select(result_nan, full_like(out, np.nan), out)


__all__ = ["betainc"]
