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


@st.composite
def _view_programs(draw):
    """Chains of basic indexing, transposes and reshapes: all become index maps in Numba."""
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=ndim, max_size=ndim)))
    index = []
    for d in shape:
        kind = draw(st.sampled_from(["slice", "int", "full", "none"]))
        if kind == "slice":
            index.append(slice(draw(st.none() | st.integers(-d, d)), draw(st.none() | st.integers(-d, d)),
                               draw(st.sampled_from([None, 1, 2, -1, -2, -3]))))
        elif kind == "int":
            index.append(draw(st.integers(-d, d - 1)))
        elif kind == "none":
            index.append(None)
            index.append(slice(None))
        else:
            index.append(slice(None))
    transpose = draw(st.booleans())
    reshape = draw(st.booleans())
    return shape, tuple(index), transpose, reshape


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_view_programs())
def test_numba_index_maps_equal_interpreter(case):
    shape, index, transpose, reshape = case
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)

    def f(x):
        y = x[index] * 2.0
        if transpose:
            y = y.T
        if reshape:
            y = y.reshape(-1)
        return y + 1.0

    _compare([omnistage.jit(f, backend="cpu")(x)], [omnistage.jit(f, backend="interpreter")(x)])
