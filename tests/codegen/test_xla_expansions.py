"""erf_inv is one primitive whose CPU kernel is its XLA expansion emitted once
(codegen/vmath/xla_expansions.py): the checked-in kernel module is what the generator writes
now, the kernel's values are the expansion's bit for bit, derivatives and batching are the
primitive's rules, and a normal sampler no longer carries the expansion's statements."""
import numpy as np
import pytest

import omnistage
from omnistage import lax, random
from omnistage.codegen.vmath import _xla_erf_inv, xla_expansions
from omnistage.core.primitive import eager
from omnistage.lax import error_function


def test_the_checked_in_kernel_module_is_what_the_generator_writes():
    # fails after an edit of the expansion or of the scalar rules: regenerate (see the module)
    with open(_xla_erf_inv.__file__) as f:
        assert f.read() == xla_expansions.make_source()


def _inputs():
    rng = np.random.RandomState(0)
    edges = [-1, 1, 0, -0.0, 1e-30, -1e-40, 0.99999994, -0.99999994, 0.5, -0.5, 0.9, 1e-4,
             np.nan, 2, -2, np.inf, -np.inf]
    return np.concatenate([rng.uniform(-1, 1, 50_000), np.linspace(-1, 1, 20_001), edges]).astype(np.float32)


def test_kernel_values_are_the_expansions_bit_for_bit():
    x = _inputs()
    got = np.asarray(omnistage.jit(lax.erf_inv)(x))
    with eager():
        want = np.asarray(error_function.erf_inv_expansion(x))
    np.testing.assert_array_equal(got, want)  # NaN where the expansion gives NaN
    assert (np.signbit(got) == np.signbit(want))[np.isfinite(want)].all()
    assert got[np.flatnonzero(x == 1)[0]] == np.inf and got[np.flatnonzero(x == -1)[0]] == -np.inf


def test_eager_jit_and_float16_agree():
    x = np.linspace(-0.99, 0.99, 101).astype(np.float32)
    eager_values = np.asarray(lax.erf_inv(x))
    np.testing.assert_array_equal(np.asarray(omnistage.jit(lax.erf_inv)(x)), eager_values)
    h = x.astype(np.float16)
    np.testing.assert_array_equal(np.asarray(omnistage.jit(lax.erf_inv)(h)), np.asarray(lax.erf_inv(h)))
    assert np.asarray(omnistage.jit(lax.erf_inv)(h)).dtype == np.float16


def test_float64_keeps_the_inline_expansion():
    with omnistage.config.override("jax_enable_x64", True):
        x = np.linspace(-0.9, 0.9, 7)
        text = omnistage.jit(lax.erf_inv).lower(x).as_text()
        assert "erf_inv(" not in text
        from scipy.special import erfinv

        np.testing.assert_allclose(np.asarray(omnistage.jit(lax.erf_inv)(x)), erfinv(x), rtol=1e-14)


def test_gradient_and_batching_are_the_primitives_rules():
    x = np.array([-0.7, 0.0, 0.3, 0.95], np.float32)
    g = np.asarray(omnistage.jit(omnistage.vmap(omnistage.grad(lambda v: lax.erf_inv(v))))(x))
    y = np.asarray(lax.erf_inv(x)).astype(np.float64)
    np.testing.assert_allclose(g, np.sqrt(np.pi) / 2 * np.exp(y * y), rtol=1e-6)
    batched = np.asarray(omnistage.vmap(lax.erf_inv)(x.reshape(2, 2)))
    np.testing.assert_array_equal(batched, np.asarray(lax.erf_inv(x)).reshape(2, 2))


@pytest.mark.parametrize("shape", [(10, 3), (7,)])
def test_a_normal_calls_the_kernel_instead_of_carrying_the_expansion(shape):
    f = omnistage.jit(lambda k: random.normal(k, shape))
    key = random.PRNGKey(3)
    source = f.lower(key).compile().as_text()
    assert "erf_inv_float32(" in source and source.count("fma_float32") == 1  # the uniform's one
    assert len(source.splitlines()) < 40
    with eager():
        want = np.asarray(random.normal(key, shape))
    np.testing.assert_array_equal(np.asarray(f(key)), want)
