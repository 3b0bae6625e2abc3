"""Writes tests/lax/special_jax_vectors.py: JAX's float32 values of its lax special functions on
seeded inputs, the oracle of tests/lax/test_special_jax_vectors.py. Run with an environment
that has JAX (not a dependency of omnistage): python tests/lax/make_special_vectors.py"""
import os

import numpy as np, jax, jax.numpy as jnp
from jax import lax
rng = np.random.default_rng(1)
n = 24
a = np.float32(rng.uniform(0.05, 30, n)); x = np.float32(rng.uniform(0.0, 40, n)); u = np.float32(rng.uniform(0.01, 0.99, n))
z = np.float32(rng.uniform(-8, 8, n)); m = np.float32(np.floor(rng.uniform(0, 5, n)))
cases = {
  "igamma": (lax.igamma, (a, x)), "igammac": (lax.igammac, (a, x)), "igamma_grad_a": (lax.igamma_grad_a, (a, x)),
  "random_gamma_grad": (lax.random_gamma_grad, (a, x)), "lgamma": (lax.lgamma, (z,)), "digamma": (lax.digamma, (z,)),
  "betainc": (lax.betainc, (a / 3, a[::-1] / 3, u)), "erf": (lax.erf, (z / 2,)), "erfc": (lax.erfc, (z,)),
  "erf_inv": (lax.erf_inv, (u * 2 - 1,)), "zeta": (lax.zeta, (a + 1.5, x + 0.5)), "polygamma": (lax.polygamma, (m, x + 0.1)),
  "bessel_i0e": (lax.bessel_i0e, (z * 4,)), "bessel_i1e": (lax.bessel_i1e, (z * 4,)),
}
def lit(arr):
    return "(" + ", ".join(repr(float(v).hex()) for v in np.asarray(arr, np.float32)) + ")"
lines = ['"""jax.lax special-function values from JAX %s on CPU (float32), written by tests/lax/make_special_vectors.py:' % jax.__version__,
         'name -> (input arrays, JAX\'s outputs), each value as float.hex."""',
         "VECTORS = {"]
for name, (f, args) in cases.items():
    out = np.asarray(f(*[jnp.asarray(v) for v in args]))
    lines.append(f"    {name!r}: (")
    lines.append("        (" + ", ".join(lit(v) for v in args) + ",),")
    lines.append("        " + lit(out) + ",")
    lines.append("    ),")
lines.append("}")
open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "special_jax_vectors.py"), "w").write("\n".join(lines) + "\n")
