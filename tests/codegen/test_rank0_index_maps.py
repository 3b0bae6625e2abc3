"""A materialized index map with a rank-0 result (squeeze of a one-element slice) stays a
scalar in generated code: copied into a 0-d array by the copy kernel, it no longer unified
with the scalar it replaces as a while-loop carry, and Numba refused the program (jit then
fell back to the interpreter with a warning)."""
import warnings

import numpy as np

import omnistage as jax
import omnistage.numpy as jnp
from omnistage import lax


def test_rank0_squeeze_of_a_slice_is_a_scalar_loop_carry():
    def f(table, i):
        start = lax.squeeze(lax.dynamic_slice(table, (i,), (1,)), (0,))

        def body(c):
            k, acc = c
            return k + 1, acc * 2 + k

        return lax.while_loop(lambda c: c[0] < 4, body, (start, start))[1]

    table = np.array([0, 1, 2, 3], np.int32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the interpreter fallback warns
        got = jax.jit(f)(table, 1)
    want = f(jnp.asarray(table), 1)
    assert int(got) == int(want)
    text = jax.jit(f).lower(table, 1).compile().as_text()
    assert "_rt.empty((), " not in text
