"""omnistage.lax's special functions against JAX 0.10.2's own float32 values (stored in
special_jax_vectors.py by make_special_vectors.py, so JAX is not needed to run this): the same
algorithms give the same numbers to float32 rounding; erf and erf_inv are XLA's exact kernels,
bit for bit."""
import numpy as np
import pytest

from omnistage import lax
from tests.lax.special_jax_vectors import VECTORS

BIT_EXACT = {"erf", "erf_inv"}
# relative tolerance: a few float32 ulps, more where a series' stopping step or a rounding of
# lgamma near its zeros (x = 1, 2) moves the last digits
RTOL = {"lgamma": 2e-4, "igamma": 5e-5, "igammac": 5e-5, "igamma_grad_a": 5e-5, "betainc": 5e-5}


def _array(values):
    return np.array([float.fromhex(v) for v in values], np.float32)


@pytest.mark.parametrize("name", VECTORS)
def test_matches_jax(name):
    inputs, want = VECTORS[name]
    got = np.asarray(getattr(lax, name)(*[_array(v) for v in inputs]))
    want = _array(want)
    if name in BIT_EXACT:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=RTOL.get(name, 5e-6), atol=1e-30)
