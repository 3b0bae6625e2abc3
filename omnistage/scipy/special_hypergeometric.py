"""`jax.scipy.special.hyp1f1`, Kummer's confluent hypergeometric function 1F1(a; b; x), as JAX's:
the power series below |x| = 100 and the large-x asymptotic series above (Pearson, Olver and
Porter 2014, eqs. 3.2 and 3.8), each summed elementwise in a masked while loop (at most 250
terms); 1 at a == 0, exp(x) at a == b, inf at b == 0. Derivatives in a and b by their series
(functions.wolfram.com 07.20.20.0001/2), in x as a/b 1F1(a+1; b+1; x), as JAX's rules.
Imports numpy, lax and this package's modules.
"""
import numpy as np

from .. import lax
from .. import numpy as jnp
from ..autodiff.custom import custom_jvp
from .promotion import promote_args_real as _real
from .special_gamma import gammasgn

_MAX_TERMS = 250


def _series(start, first_term, weight, ratio, enabled):
    """start + sum over k >= 1 of weight(k) * term_k, term_1 = first_term, term_{k+1} = term_k *
    ratio(k), per element until |term| <= eps |sum| (at most 250 terms), as JAX's loops."""
    eps = np.finfo(first_term.dtype).eps

    def body(state):
        going, k, term, total = state
        new_total = total + term * weight(k)
        new_term = term * ratio(k)
        new_k = k + 1
        still = going & (new_k < _MAX_TERMS) & (jnp.abs(new_term) > eps * jnp.abs(new_total))
        return still, jnp.where(going, new_k, k), jnp.where(going, new_term, term), jnp.where(going, new_total, total)

    going = enabled & (jnp.abs(first_term) > eps * jnp.abs(start))
    return lax.while_loop(lambda s: jnp.any(s[0]), body, (going, jnp.ones_like(start), first_term, start))[3]


def _one(k):
    return 1


def _gamma(x):
    return gammasgn(x) * jnp.exp(lax.lgamma(x))


def _hyp1f1_value(a, b, x):
    near = jnp.abs(x) < 100
    xs = jnp.where(near, x, jnp.ones_like(x))
    xl = jnp.where(near, jnp.full_like(x, 200.0), x)
    series = _series(jnp.ones_like(x), a / b * xs, _one, lambda k: (a + k) / (b + k) * xs / (k + 1), near)
    asymptotic = _series(jnp.ones_like(x), (b - a) * (1 - a) / xl, _one,
                         lambda k: (b - a + k) * (1 - a + k) / (k + 1) / xl, ~near)
    asymptotic = _gamma(b) / _gamma(a) * jnp.exp(xl) * xl ** (a - b) * asymptotic
    out = jnp.where(near, series, asymptotic)
    out = jnp.where((b == 0) & (a != 0), jnp.full_like(x, np.inf), out)
    out = jnp.where((a == b) & (a != 0), jnp.exp(x), out)
    return jnp.where(a == 0, jnp.ones_like(x), out)


def _d_da(a, b, x):
    return _series(jnp.zeros_like(x), a / b * x, lambda k: lax.digamma(a + k) - lax.digamma(a),
                   lambda k: (a + k) / (b + k) * x / (k + 1), jnp.ones_like(x, dtype=bool))


def _d_db(a, b, x):
    return _series(jnp.zeros_like(x), a / b * x, lambda k: lax.digamma(b) - lax.digamma(b + k),
                   lambda k: (a + k) / (b + k) * x / (k + 1), jnp.ones_like(x, dtype=bool))


_hyp1f1 = custom_jvp(_hyp1f1_value)
_hyp1f1.defjvps(
    lambda ta, ans, a, b, x: ta * _d_da(a, b, x),
    lambda tb, ans, a, b, x: tb * _d_db(a, b, x),
    lambda tx, ans, a, b, x: tx * a / b * _hyp1f1_value(a + 1, b + 1, x),
)


def hyp1f1(a, b, x):
    """Kummer's function 1F1(a; b; x) = sum_k (a)_k / (b)_k x**k / k! for real a, b, x (1 at
    a = b = 0, unlike SciPy, as JAX); large values may be inexact in float32."""
    return _hyp1f1(*_real("hyp1f1", a, b, x))


__all__ = ["hyp1f1"]
