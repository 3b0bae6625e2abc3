"""omnistage.random reproduces JAX's numbers: the cases of make_vectors.py, run with
omnistage, against the stored JAX outputs (jax_vectors.py).

Bit-level samplers (keys, split, fold_in, bits, uniform, randint, bernoulli, permutation,
choice, categorical) must match bit for bit. `normal` goes through log1p, whose last bit
XLA takes from its own vector math library, so it is allowed a few ulps (see _special).
"""
import numpy as np
import pytest

import omnistage
import omnistage.numpy as jnp
import omnistage.random as jr

from . import jax_vectors, make_vectors

# Cases that pass through log1p, and the ulps they may differ by per dtype (measured over
# 10**5 draws against jaxlib 0.10.2: float32 at most 3, float64 at most 30, a relative
# 4e-15; the float64 polynomial amplifies log1p's last bit near u = 0).
_ULP_TOLERANCE = {"normal": {"float32": 4, "float64": 32}}


def _tolerance(name, dtype):
    return next((t[dtype] for prefix, t in _ULP_TOLERANCE.items() if name.startswith(prefix)), 0)


def _as_stored(x):
    x = np.asarray(x)
    if x.dtype.kind == "f":
        return x.view(f"uint{x.dtype.itemsize * 8}")
    return x


def _check(name, got, want):
    got = np.asarray(got)
    assert got.dtype.name == want["dtype"], (name, got.dtype)
    assert got.shape == tuple(want["shape"]), (name, got.shape)
    expected = np.array(want["data"], dtype=object).astype(_as_stored(got).dtype).reshape(got.shape)
    ulps = _tolerance(name, got.dtype.name)
    if ulps == 0:
        np.testing.assert_array_equal(_as_stored(got), expected, err_msg=name)
    else:
        signed = f"int{got.dtype.itemsize * 8}"
        diff = np.abs(_as_stored(got).view(signed).astype(np.int64) - expected.view(signed).astype(np.int64))
        assert diff.max() <= ulps, (name, diff.max())


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
    "truncated_normal": lambda k: jr.truncated_normal(k, -1.0, 2.0, (9,)),
    "randint": lambda k: jr.randint(k, (13,), -5, 100),
    "bernoulli": lambda k: jr.bernoulli(k, 0.3, (17,)),
    "permutation": lambda k: jr.permutation(k, 11),
    "choice": lambda k: jr.choice(k, 10, (4,), replace=False),
    "choice_p": lambda k: jr.choice(k, 5, (6,), p=jnp.array([0.1, 0.2, 0.3, 0.15, 0.25])),
    "categorical": lambda k: jr.categorical(k, jnp.log(jnp.array([0.1, 0.2, 0.7])), shape=(20,)),
}


# Samplers that go through log/log1p/erf_inv: under jit those run omnistage's vectorized
# transcendentals (vmath, <= 2 ulp), eagerly NumPy's libm, so the last bit may differ.
_TRANSCENDENTAL = {"normal", "truncated_normal", "exponential", "gumbel"}


@pytest.mark.parametrize("name", sorted(_JIT_FUNCTIONS))
def test_jit_is_bit_identical_to_eager(name):
    fn = _JIT_FUNCTIONS[name]
    key = jr.PRNGKey(42)
    eager = np.asarray(fn(key))
    jitted = np.asarray(omnistage.jit(fn)(key))
    assert eager.dtype == jitted.dtype
    if name in _TRANSCENDENTAL:
        np.testing.assert_array_max_ulp(eager, jitted, maxulp=4)
    else:
        np.testing.assert_array_equal(_as_stored(eager), _as_stored(jitted))


def test_seed_can_be_traced_under_jit():
    keys = omnistage.jit(lambda s: jr.split(jr.PRNGKey(s), 3))(jnp.int32(7))
    np.testing.assert_array_equal(np.asarray(keys), np.asarray(jr.split(jr.PRNGKey(7), 3)))
