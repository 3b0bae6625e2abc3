"""omnistage.random reproduces JAX's numbers: the cases of make_vectors.py, run with
omnistage, against the stored JAX outputs (jax_vectors.py), bit for bit.

Every stored case must match exactly, floating-point samplers included: omnistage replays
XLA's CPU arithmetic (its log/log1p/exp expansions, glibc's float64 log, fused
multiply-adds, flush-to-zero; see omnistage/random/_xla_math.py). The mantissa sweeps run
normal's float arithmetic on 137,500 float32 mantissas and 50,000 float64 bit patterns and
compare SHA-256 digests with JAX's.
"""
import warnings

import numpy as np
import pytest

import omnistage
import omnistage.numpy as jnp
import omnistage.random as jr
from omnistage.random.distributions import normal_from_bits

from . import jax_vectors, make_vectors


def _as_stored(x):
    x = np.asarray(x)
    if x.dtype.kind == "c":
        x = x.view(f"float{x.dtype.itemsize * 4}")
    if x.dtype.kind == "f" or x.dtype.name == "bfloat16":
        return x.view(f"uint{x.dtype.itemsize * 8}")
    return x


def _check(name, got, want):
    got = np.asarray(got)
    assert got.dtype.name == want["dtype"], (name, got.dtype)
    assert got.shape == tuple(want["shape"]), (name, got.shape)
    stored = _as_stored(got)
    expected = np.array(want["data"], dtype=object).astype(stored.dtype).reshape(stored.shape)
    np.testing.assert_array_equal(stored, expected, err_msg=name)


CASES_32 = sorted(jax_vectors.VECTORS)
CASES_64 = sorted(jax_vectors.VECTORS_X64)


@pytest.mark.parametrize("name", CASES_32)
def test_matches_jax_in_32_bit_mode(name):
    fn = make_vectors.cases_32(jr, jnp)[name]
    _check(name, fn(), jax_vectors.VECTORS[name])


@pytest.mark.parametrize("name", CASES_64)
def test_matches_jax_in_64_bit_mode(name, x64):
    fn = make_vectors.cases_64(jr, jnp)[name]
    _check(name, fn(), jax_vectors.VECTORS_X64[name])


def test_every_stored_case_is_defined():
    assert set(make_vectors.cases_32(jr, jnp)) == set(CASES_32)


# Cases whose function is jit-compatible with the key as the only argument (static shapes):
# re-run them under omnistage.jit and require the identical result.
_JIT_FUNCTIONS = {
    "split3": lambda k: jr.split(k, 3),
    "fold_in": lambda k: jr.fold_in(k, 7),
    "bits": lambda k: jr.bits(k, (5, 3)),
    "uniform": lambda k: jr.uniform(k, (7, 5), minval=-3.0, maxval=7.0),
    "normal": lambda k: jr.normal(k, (3, 5)),
    "exponential": lambda k: jr.exponential(k, (9,)),
    "gumbel": lambda k: jr.gumbel(k, (11,), mode="high"),
    "truncated_normal": lambda k: jr.truncated_normal(k, -1.0, 2.0, (9,)),
    "randint": lambda k: jr.randint(k, (13,), -5, 100),
    "bernoulli": lambda k: jr.bernoulli(k, 0.3, (17,)),
    "permutation": lambda k: jr.permutation(k, 11),
    "choice": lambda k: jr.choice(k, 10, (4,), replace=False),
    "choice_p": lambda k: jr.choice(k, 5, (6,), p=jnp.array([0.1, 0.2, 0.3, 0.15, 0.25])),
    "categorical": lambda k: jr.categorical(k, jnp.log(jnp.array([0.1, 0.2, 0.7])), shape=(20,)),
}


@pytest.mark.parametrize("name", sorted(_JIT_FUNCTIONS))
def test_jit_is_bit_identical_to_eager(name):
    fn = _JIT_FUNCTIONS[name]
    key = jr.PRNGKey(42)
    eager = np.asarray(fn(key))
    jitted = np.asarray(omnistage.jit(fn)(key))
    assert eager.dtype == jitted.dtype
    np.testing.assert_array_equal(_as_stored(eager), _as_stored(jitted))


def test_normal_compiles_to_a_numba_module_without_falling_back():
    fn = omnistage.jit(lambda k: jr.normal(k, (4, 3)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an interpreter fallback warns
        text = fn.lower(jr.PRNGKey(0)).compile().as_text()
        out = fn(jr.PRNGKey(0))
    assert "numba" in text.lower()
    np.testing.assert_array_equal(_as_stored(out), _as_stored(jr.normal(jr.PRNGKey(0), (4, 3))))


# --- mantissa sweeps ---------------------------------------------------------------------


def test_float32_normal_matches_jax_on_a_sweep_of_mantissas():
    out = normal_from_bits(jnp.asarray(make_vectors.sweep_bits(32)), np.dtype(np.float32))
    assert make_vectors.digest(out) == jax_vectors.SWEEP_DIGESTS["normal_float32"]


def test_float64_normal_matches_jax_on_random_bit_patterns(x64):
    out = normal_from_bits(jnp.asarray(make_vectors.sweep_bits(64)), np.dtype(np.float64))
    assert make_vectors.digest(out) == jax_vectors.SWEEP_DIGESTS["normal_float64"]


def test_seed_can_be_traced_under_jit():
    keys = omnistage.jit(lambda s: jr.split(jr.PRNGKey(s), 3))(jnp.int32(7))
    np.testing.assert_array_equal(np.asarray(keys), np.asarray(jr.split(jr.PRNGKey(7), 3)))
