"""A materialized reshape of a value computed in its own loop nest runs that nest in the
operand's shape and writes the result's memory in the same order: a (100, 784) draw reshaped
to (100, 28, 28) keeps one long vectorizable row per image (3x faster than a nest whose inner
loop is 28 long)."""
import numpy as np

import omnistage
import omnistage.numpy as jnp
from omnistage import lax, random


def test_the_producer_loops_in_its_own_shape_and_the_values_are_numpys():
    x = np.random.RandomState(0).rand(10, 28).astype(np.float32)
    f = omnistage.jit(lambda x: jnp.exp(x * 2).reshape(10, 4, 7))
    source = f.lower(x).compile().as_text()
    assert "_rt.reshape(" in source and "(10, 28))" in source and "range(28)" in source
    assert "range(7)" not in source
    np.testing.assert_allclose(np.asarray(f(x)), np.exp(x * 2).reshape(10, 4, 7), rtol=1e-6)


def test_reshapes_of_inputs_and_with_dimensions_keep_their_values():
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    np.testing.assert_array_equal(np.asarray(omnistage.jit(lambda x: x.reshape(2, 12) * 1)(x)), x.reshape(2, 12))
    got = omnistage.jit(lambda x: lax.reshape(x + 1, (3, 8), dimensions=(1, 0)))(x)
    np.testing.assert_array_equal(np.asarray(got), (x + 1).T.reshape(3, 8))


def test_a_reshaped_draw_equals_the_unreshaped_one():
    key = random.PRNGKey(5)
    p = np.random.RandomState(1).rand(100, 784).astype(np.float32)
    flat = omnistage.jit(lambda k, p: random.bernoulli(k, p))(key, p)
    images = omnistage.jit(lambda k, p: random.bernoulli(k, p).reshape(100, 28, 28))(key, p)
    np.testing.assert_array_equal(np.asarray(images), np.asarray(flat).reshape(100, 28, 28))
