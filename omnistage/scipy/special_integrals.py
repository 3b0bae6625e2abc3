"""`jax.scipy.special`'s integrals of elementary functions: `spence` (the dilogarithm, Cephes'
rational approximation as JAX's) and `owens_t` (Owen's T function: Patefield and Tandy's
13-point quadrature with the exact forms at h = 0 and |a| = 1 and the reciprocal correction
for |a| > 1, as JAX's). Unused branches are evaluated at safe inputs, so gradients stay
finite. Imports numpy, lax and this package's promotion rules.
"""
import math

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..autodiff.custom import custom_jvp
from .promotion import promote_args_real as _real

_SPENCE_A = (4.65128586073990045278E-5, 7.31589045238094711071E-3, 1.33847639578309018650E-1,
             8.79691311754530315341E-1, 2.71149851196553469920E0, 4.25697156008121755724E0,
             3.29771340985225106936E0, 1.00000000000000000126E0)
_SPENCE_B = (6.90990488912553276999E-4, 2.54043763932544379113E-2, 2.82974860602568089943E-1,
             1.41172597751831069617E0, 3.63800533345137075418E0, 5.03278880143316990390E0,
             3.54771340985225096217E0, 9.99999999999999998740E-1)


def spence(x):
    """Spence's function: the integral of log(t) / (1 - t) from 1 to x, for x >= 0 (NaN below)."""
    (x,) = _real("spence", x)
    dt = x.dtype
    special = (x < 0) | (x == 1) | (x == 0)
    z = jnp.where(special | jnp.isnan(x), jnp.full_like(x, 0.75), x)
    above_2 = z > 2
    z = jnp.where(above_2, 1 / z, z)
    above_1_5, below_0_5 = z > 1.5, z < 0.5
    w = jnp.where(above_1_5, 1 / z - 1, jnp.where(below_0_5, -z, z - 1))
    y = -w * jnp.polyval(jnp.asarray(_SPENCE_A, dt), w) / jnp.polyval(jnp.asarray(_SPENCE_B, dt), w)
    zb = jnp.where(below_0_5, z, jnp.full_like(z, 0.25))  # log(1 - z) only where z < 1/2 (finite gradients elsewhere)
    y = jnp.where(below_0_5, math.pi ** 2 / 6 - jnp.log(zb) * jnp.log(1 - zb) - y, y)
    y = jnp.where(above_2 | above_1_5, -0.5 * jnp.log(z) ** 2 - y, y)
    edge = jnp.where(x < 0, jnp.full_like(x, np.nan), jnp.where(x == 1, jnp.zeros_like(x), jnp.full_like(x, math.pi ** 2 / 6)))
    return jnp.where(special, edge, jnp.where(jnp.isnan(x), x, y))


# T(h, a) ~ a sum_i w_i exp(-h**2 (1 + a**2 t_i) / 2) / (1 + a**2 t_i) (Patefield and Tandy's T5)
_OWENS_T_POINTS = (0.0035082039676451715, 0.031279042338030754, 0.085266826283219451, 0.16245071730812277,
                   0.25851196049125435, 0.36807553840697534, 0.48501092905604697, 0.60277514152618577,
                   0.71477884217753227, 0.81475510988760099, 0.89711029755948966, 0.95723808085944262,
                   0.99178832974629704)
_OWENS_T_WEIGHTS = (0.018831438115323503, 0.018567086243977649, 0.018042093461223386, 0.017263829606398753,
                    0.016243219975989857, 0.014994592034116705, 0.013535474469662088, 0.011886351605820165,
                    0.010070377242777432, 0.0081130545742299587, 0.0060419009528470239, 0.0038862217010742058,
                    0.0016793031084546090)


def _owens_t_quadrature(h, a):
    total = jnp.zeros_like(a)
    for t, w in zip(_OWENS_T_POINTS, _OWENS_T_WEIGHTS):
        r = a * a * t
        total = total + w * jnp.exp(-0.5 * h * h * (1 + r)) / (1 + r)
    return a * total


@custom_jvp
def _owens_t(h, a):
    h = jnp.abs(h)
    abs_a = jnp.abs(a)
    h_normed = h / math.sqrt(2)
    small_a = abs_a <= 1
    mod_a = jnp.where(small_a, abs_a, 1 / jnp.where(small_a, jnp.ones_like(abs_a), abs_a))
    mod_h = jnp.where(small_a, h, abs_a * h)
    result = _owens_t_quadrature(mod_h, mod_a)
    result = jnp.where(mod_h == 0, jnp.arctan(mod_a) / (2 * math.pi), result)
    result = jnp.where(mod_a == 1, 0.125 * lax.erfc(-mod_h / math.sqrt(2)) * lax.erfc(mod_h / math.sqrt(2)), result)
    norm_h, norm_ah = lax.erfc(h_normed), lax.erfc(abs_a * h_normed)
    near = 0.25 - 0.25 * lax.erf(h_normed) * lax.erf(abs_a * h_normed) - result
    far = 0.25 * (norm_h + norm_ah - norm_h * norm_ah) - result
    result = jnp.where(abs_a > 1, jnp.where(abs_a * h <= 0.67, near, far), result)
    result = jnp.sign(a) * result
    return jnp.where(jnp.isnan(a) | jnp.isnan(h), jnp.full_like(result, np.nan), result)


_owens_t.defjvps(
    lambda dh, ans, h, a: dh * -jnp.exp(-0.5 * h * h) * lax.erf(a * h / math.sqrt(2)) / (2 * math.sqrt(2 * math.pi)),
    lambda da, ans, h, a: da * jnp.exp(-0.5 * (a * a + 1) * h * h) / (2 * math.pi * (a * a + 1)),
)


def owens_t(h, a):
    """Owen's T function, (1/2pi) * integral of exp(-h**2 (1 + x**2) / 2) / (1 + x**2) from 0 to a."""
    return _owens_t(*_real("owens_t", h, a))


__all__ = ["spence", "owens_t"]
