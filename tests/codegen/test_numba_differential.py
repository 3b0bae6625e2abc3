"""Differential tests of the Numba backend: hypothesis-generated programs (the generator of
tests/test_differential.py: jnp unary/binary ops, Python scalars, where, reductions over
random axes and broadcasting, float32/int32/bool) compiled by Numba must equal the NumPy
interpreter's results — exactly for integers and booleans, to tolerance for floats."""
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import omnistage
from tests.test_differential import array_for, programs, run_jnp


def _compare(numba_out, interp_out):
    for a, b in zip(numba_out, interp_out):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and a.shape == b.shape
        if a.dtype.kind in "biu":
            np.testing.assert_array_equal(a, b)
        else:
            np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-6, equal_nan=True)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_numba_equals_interpreter_on_random_programs(data):
    inputs, steps, outs = data.draw(programs())
    args = [data.draw(array_for(v)) for v in inputs]

    def f(*xs):
        return run_jnp(steps, outs, xs)

    compiled = omnistage.jit(f, backend="cpu")
    text = compiled.lower(*args).compile().as_text()
    assert "numba.njit" in text and "interpreted by NumPy" not in text, text
    _compare(compiled(*args), omnistage.jit(f, backend="interpreter")(*args))
