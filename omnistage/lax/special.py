"""`omnistage.lax`'s special functions, as `jax.lax`'s: `erf`, `erfc`, `erf_inv`, `lgamma`,
`digamma`, `polygamma`, `zeta`, `igamma`, `igammac`, `igamma_grad_a`, `random_gamma_grad`,
`betainc`, `bessel_i0e`, `bessel_i1e`.

Each is a composition of lax operations (the algorithms XLA and JAX use: `error_function`,
`gamma_functions`, `incomplete_beta`, `bessel` beside this module), so it stages, batches and
lowers like any lax code, and carries JAX's derivative rule where JAX has one (erf's
2/sqrt(pi) exp(-x**2), d/dx igamma = exp(-x + (a-1) log x - lgamma(a)), d/da igamma =
igamma_grad_a, ...) as a custom JVP, so gradients are the exact formula rather than the
derivative of an approximation. zeta, betainc, igamma_grad_a and random_gamma_grad (no rule
in JAX, or none for some arguments) differentiate through their composition.

Strict typing as lax: operands of one float dtype (Python scalars adopt it), equal shapes
or rank 0. Imports core and lax only (`custom_derivatives.with_jvp` builds autodiff's
custom_jvp at the first call).
"""
import math

import numpy as np

from ..core import dtypes
from ..core.array import aval_of
from . import _rules as R
from . import bessel as _bessel
from . import error_function as _erf
from . import gamma_functions as _gamma
from .custom_derivatives import with_jvp
from .elementwise import convert_element_type, exp, mul, neg
from .incomplete_beta import betainc as _betainc
from .shapes import broadcast_in_dim


def float_operands(name, *xs):
    """The operands as arrays of one float dtype and one shape: weak (Python scalar) operands
    take the others' dtype; rank-0 operands are broadcast to the others' shape."""
    ops = R.operands(*xs)
    avals = [aval_of(o) for o in ops]
    strong = [a for a in avals if not a.weak_type] or avals
    dt = R.same_dtype(name, strong)
    if not dtypes.is_float(dt):
        raise TypeError(f"lax.{name} does not accept dtype {dt.name}: it needs floating-point operands "
                        f"(convert with lax.convert_element_type(x, jnp.float32)).")
    shape = R.nary_shape(name, avals)
    ops = [convert_element_type(o, dt) if a.dtype != dt or a.weak_type else o for o, a in zip(ops, avals)]
    return [broadcast_in_dim(o, shape, ()) if o.shape != shape else o for o in ops]


def _c(x, value):
    return np.asarray(value, dtype=x.dtype)[()]


def _gaussian(x):
    return exp(neg(mul(x, x)))


_erf_rules = with_jvp(_erf.erf, lambda t, ans, x: mul(t, mul(_c(x, 2 / math.sqrt(math.pi)), _gaussian(x))))
_erfc_rules = with_jvp(_erf.erfc, lambda t, ans, x: mul(t, mul(_c(x, -2 / math.sqrt(math.pi)), _gaussian(x))))
_erf_inv_rules = with_jvp(_erf.erf_inv, lambda t, ans, x: mul(t, mul(_c(x, math.sqrt(math.pi) / 2), exp(mul(ans, ans)))))


def erf(x):
    """The error function 2/sqrt(pi) * integral of exp(-t**2) from 0 to x (XLA's kernel)."""
    return _erf_rules(*float_operands("erf", x))


def erfc(x):
    """1 - erf(x), accurate where erf(x) is close to 1."""
    return _erfc_rules(*float_operands("erfc", x))


def erf_inv(x):
    """The inverse of erf on (-1, 1); +-inf at +-1 (XLA's kernel, bit-identical to JAX's CPU)."""
    return _erf_inv_rules(*float_operands("erf_inv", x))


def lgamma(x):
    """log|Gamma(x)| (XLA's Lanczos approximation, reflected below 1/2)."""
    return _gamma.lgamma(*float_operands("lgamma", x))


def digamma(x):
    """psi(x) = d/dx log Gamma(x); NaN at the poles 0, -1, -2, ..."""
    return _gamma.digamma(*float_operands("digamma", x))


def polygamma(m, x):
    """psi^(m)(x), the m-th derivative of digamma, for integer-valued m >= 0 (NaN otherwise);
    differentiable in x (not in m, as JAX)."""
    return _gamma.polygamma(*float_operands("polygamma", m, x))


def zeta(x, q):
    """The Hurwitz zeta function sum_k (q + k)**-x (Cephes' Euler-Maclaurin summation)."""
    return _gamma.zeta(*float_operands("zeta", x, q))


def igamma(a, x):
    """P(a, x), the regularized lower incomplete gamma function (XLA's series and continued
    fraction); d/dx and d/da by JAX's rules."""
    return _gamma.igamma(*float_operands("igamma", a, x))


def igammac(a, x):
    """Q(a, x) = 1 - P(a, x), the regularized upper incomplete gamma function."""
    return _gamma.igammac(*float_operands("igammac", a, x))


def igamma_grad_a(a, x):
    """d/da P(a, x)."""
    return _gamma.igamma_grad_a(*float_operands("igamma_grad_a", a, x))


def random_gamma_grad(a, x):
    """The derivative in a of a Gamma(a, 1) sample x (implicit reparameterization)."""
    return _gamma.random_gamma_grad(*float_operands("random_gamma_grad", a, x))


def betainc(a, b, x):
    """I_x(a, b), the regularized incomplete beta function (JAX's continued fraction)."""
    return _betainc(*float_operands("betainc", a, b, x))


def bessel_i0e(x):
    """exp(-|x|) I0(x)."""
    return _bessel.bessel_i0e(*float_operands("bessel_i0e", x))


def bessel_i1e(x):
    """exp(-|x|) I1(x)."""
    return _bessel.bessel_i1e(*float_operands("bessel_i1e", x))


__all__ = [
    "erf", "erfc", "erf_inv", "lgamma", "digamma", "polygamma", "zeta", "igamma", "igammac", "igamma_grad_a",
    "random_gamma_grad", "betainc", "bessel_i0e", "bessel_i1e",
]
