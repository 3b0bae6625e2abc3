"""`jax.scipy.special.sph_harm_y`, the spherical harmonics Y_n^m(theta, phi) with SciPy's
normalisation and Condon-Shortley phase. Each element runs its own recurrence over the degree
in one masked while loop: the fully normalised associated Legendre function starts from its
closed form at degree |m| (through lgamma) and climbs with
Q_l = (x Q_{l-1} - b_{l-1} Q_{l-2}) / b_l, b_l = sqrt((l**2 - m**2) / (4 l**2 - 1)), which is
stable. Unlike JAX's (a table of every degree and order up to n_max), n needs no static
bound, so it may be traced. Imports numpy, lax and this package's promotion rules.
"""
import math
import operator

import numpy as np

from .. import lax
from .. import numpy as jnp
from .promotion import promote_args_inexact as _inexact


def _b(l, m):
    return jnp.sqrt((l * l - m * m) / (4 * l * l - 1))


def _normalised_legendre(n, m, x, s):
    """sqrt((2n+1)/(4 pi) (n-m)!/(n+m)!) P_n^m(x) for 0 <= m <= n (Condon-Shortley phase),
    x = cos(theta), s = sin(theta) >= 0."""
    # Q_m^m = (-1)^m sqrt((2m+1)/(4 pi) Gamma(m + 1/2) / (sqrt(pi) m!)) s**m
    log_q = 0.5 * (jnp.log((2 * m + 1) / (4 * math.pi)) + lax.lgamma(m + 0.5) - lax.lgamma(m + 1) - 0.5 * math.log(math.pi))
    start = jnp.where(jnp.fmod(m, 2) == 1, -1.0, 1.0).astype(x.dtype) * jnp.exp(log_q) * s ** m

    def body(state):
        l, previous, current = state
        going = l < n
        step = l + 1
        new = (x * current - _b(l, m) * previous) / _b(jnp.where(going, step, m + 1), m)
        return jnp.where(going, step, l), jnp.where(going, current, previous), jnp.where(going, new, current)

    return lax.while_loop(lambda state: jnp.any(state[0] < n), body, (m, jnp.zeros_like(x), start))[2]


def sph_harm_y(n, m, theta, phi, diff_n=None, n_max=None):
    """The spherical harmonic of degree n and order m (|m| <= n; undefined otherwise, as JAX's)
    at colatitude theta and longitude phi, as scipy.special.sph_harm_y: a complex array of the
    arguments' broadcast shape. `n_max`, if given, clips n to it (JAX's meaning); it is not
    needed here. `diff_n` (derivatives) is not supported, as in JAX."""
    if diff_n is not None:
        raise NotImplementedError("The 'diff_n' argument to sph_harm_y is not supported (as in JAX); "
                                  "differentiate with omnistage.grad/jacfwd instead.")
    n, m = jnp.asarray(n), jnp.asarray(m)
    for name, a in (("n", n), ("m", m)):
        if np.dtype(a.dtype).kind not in "iub":
            raise TypeError(f"sph_harm_y: the degree and order must be integer arrays; {name} has dtype {a.dtype}.")
    theta, phi = _inexact(theta, phi)
    if np.dtype(theta.dtype).kind == "c":
        raise ValueError(f"sph_harm_y: theta and phi must be real, got {theta.dtype}.")
    if n_max is not None:
        try:
            n_max = operator.index(n_max)
        except TypeError:
            raise TypeError(f"sph_harm_y: n_max must be a static Python integer, got {n_max!r}.") from None
        n = jnp.minimum(n, n_max)
    n, m, theta, phi = jnp.broadcast_arrays(n, m, theta, phi)
    dt = theta.dtype
    abs_m = jnp.abs(m).astype(dt)
    q = _normalised_legendre(n.astype(dt), abs_m, jnp.cos(theta), jnp.abs(jnp.sin(theta)))
    angle = abs_m * phi
    y = lax.complex(q * jnp.cos(angle), q * jnp.sin(angle))
    # Y_n^{-m} = (-1)^m conj(Y_n^m)
    odd = (jnp.fmod(abs_m, 2) == 1)
    return jnp.where(m < 0, jnp.where(odd, -jnp.conj(y), jnp.conj(y)), y)


__all__ = ["sph_harm_y"]
