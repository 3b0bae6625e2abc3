"""Special functions of `omnistage.numpy`: `i0`, the modified Bessel function of the first
kind, order 0 (NumPy's `numpy.i0`, JAX's `jnp.i0`).

It is an elementwise composition of lax arithmetic, `exp`, `sqrt` and `select`: no new
primitive, so it stages, differentiates (to any order), batches and compiles like any other
elementwise code. Series coefficients are computed here in Python from their closed forms,
once per dtype; they are constants of the staged program, never traced values.
Imports core and lax only.
"""
import functools
import math

import numpy as np

from ..core import dtypes
from ..core.array import Array
from .. import lax
from ._promote import promote_args_inexact

# Per working dtype: the switch point T between the two expansions and how many terms each
# keeps. Both series are least accurate at T; the counts are the fewest at which more terms
# stop changing any result (against scipy's I0: under 7 ulp, float32 and float64), plus one.
# A larger T needs ever more power-series terms; below it the asymptotic series diverges
# before it is accurate.
_PLAN = {
    np.dtype("float32"): (10.0, 16, 9),
    np.dtype("float64"): (20.0, 33, 23),
}


@functools.lru_cache(maxsize=None)
def _coefficients(dtype):
    """(T, power-series coefficients, asymptotic coefficients), lowest order first.

    Power series: I0(x) = sum_k y**k / (k!)**2 with y = x**2/4. Asymptotic series for large x:
    I0(x) ~ e**x / sqrt(2 pi x) * sum_k a_k / x**k, a_k = ((2k-1)!!)**2 / (k! 8**k)."""
    threshold, n_power, n_asymptotic = _PLAN[dtype]
    power = [1.0 / math.factorial(k) ** 2 for k in range(n_power + 1)]
    asymptotic = [1.0]
    for k in range(1, n_asymptotic + 1):
        asymptotic.append(asymptotic[-1] * (2 * k - 1) ** 2 / (8 * k))
    return threshold, tuple(power), tuple(asymptotic)


def _const(like, value):
    return Array(np.asarray(value, dtype=like.dtype), like.weak_type)


def _horner(coefficients, z):
    """sum_k coefficients[k] * z**k, highest order first (one multiply-add per term)."""
    acc = _const(z, coefficients[-1])
    for c in coefficients[-2::-1]:
        acc = lax.add(lax.mul(acc, z), _const(z, c))
    return acc


def _i0_real(x):
    threshold, power, asymptotic = _coefficients(x.dtype)
    small = lax.le(lax.abs(x), _const(x, threshold))
    # Each branch gets an argument where it is finite even when the other branch is taken:
    # reverse mode sends a zero cotangent into the untaken branch, and 0 * inf would be NaN.
    x_small = lax.select(small, x, _const(x, 0.0))
    # A series in x**2 (not |x|) keeps the small branch even and smooth at 0, so derivatives
    # of every order are right there (d/dx I0 = I1, I1(0) = 0, I0''(0) = 1/2).
    near = _horner(power, lax.mul(lax.mul(x_small, x_small), _const(x, 0.25)))
    x_large = lax.select(small, _const(x, 2 * threshold), lax.abs(x))
    # e**(x/2) twice: e**x alone overflows before I0 does (x in (709.8, 713.9] for float64).
    half = lax.exp(lax.mul(x_large, _const(x, 0.5)))
    tail = lax.div(_horner(asymptotic, lax.div(_const(x, 1.0), x_large)),
                   lax.sqrt(lax.mul(x_large, _const(x, 2 * math.pi))))
    far = lax.mul(lax.mul(half, tail), half)
    # At |x| = inf the product is inf * 0.
    far = lax.select(lax.eq(x_large, _const(x, np.inf)), _const(x, np.inf), far)
    return lax.select(small, near, far)


def i0(x, /):
    """Modified Bessel function of the first kind, order 0, elementwise (`numpy.i0`).

    Integers and bool promote to the default float; float16/bfloat16 compute in float32 and
    round back. Complex input raises, as in JAX. The derivative is I1, to all orders.
    """
    (a,) = promote_args_inexact("i0", x)
    if not dtypes.is_float(a.dtype):
        raise ValueError(
            f"Unsupported input type to omnistage.numpy.i0: {a.dtype.name}; "
            "i0 is defined here for real floating-point input only."
        )
    if a.dtype in _PLAN:
        return _i0_real(a)
    wide = lax.convert_element_type(a, np.float32)
    return lax.convert_element_type(_i0_real(wide), a.dtype)


__all__ = ["i0"]
