"""Signed zeros as JAX's jit computes them (XLA), eagerly and compiled alike: max of +0.0 and
-0.0 is +0.0 and min is -0.0 whatever the operands' order (elementwise and reductions, short
and long), sign(-0.0) is -0.0, -0.0 + 0.0 is +0.0. NumPy, which omnistage's eager ops run on,
answers the first two by operand order."""
import numpy as np
import pytest

import omnistage
import omnistage.numpy as jnp

MODES = ["eager", "interpreter", "cpu"]


def run(mode, fn, *args):
    if mode == "eager":
        return np.asarray(fn(*args))
    return np.asarray(omnistage.jit(fn, backend=mode)(*args))


def signs(x):
    """1 where a value's sign bit is set: tells -0.0 from +0.0."""
    return np.signbit(np.asarray(x)).astype(int).tolist()


Z, NZ = np.float32(0.0), np.float32(-0.0)

# (name, function, arguments, the sign bits of JAX 0.10.2's jit result, checked against it)
CASES = [
    ("maximum(+0,-0)", jnp.maximum, (Z, NZ), 0),
    ("maximum(-0,+0)", jnp.maximum, (NZ, Z), 0),
    ("maximum(-0,-0)", jnp.maximum, (NZ, NZ), 1),
    ("minimum(-0,+0)", jnp.minimum, (NZ, Z), 1),
    ("minimum(+0,-0)", jnp.minimum, (Z, NZ), 1),
    ("minimum(+0,+0)", jnp.minimum, (Z, Z), 0),
    ("maximum rows", jnp.maximum, (np.array([0.0, -0.0, -0.0], np.float32), np.array([-0.0, 0.0, -0.0], np.float32)), [0, 0, 1]),
    ("minimum rows", jnp.minimum, (np.array([0.0, -0.0, 0.0], np.float32), np.array([-0.0, 0.0, 0.0], np.float32)), [1, 1, 0]),
    ("clip(-0, 0, 1)", lambda x: jnp.clip(x, 0.0, 1.0), (NZ,), 0),
    ("max([-0,+0])", jnp.max, (np.array([-0.0, 0.0], np.float32),), 0),
    ("max([+0,-0])", jnp.max, (np.array([0.0, -0.0], np.float32),), 0),
    ("min([-0,+0])", jnp.min, (np.array([-0.0, 0.0], np.float32),), 1),
    ("min([+0,-0])", jnp.min, (np.array([0.0, -0.0], np.float32),), 1),
    ("sign(-0)", jnp.sign, (NZ,), 1),
    ("sign(+0)", jnp.sign, (Z,), 0),
    ("-0 + 0", lambda a, b: a + b, (NZ, Z), 0),
    ("0 + -0", lambda a, b: a + b, (Z, NZ), 0),
    ("-0 + -0", lambda a, b: a + b, (NZ, NZ), 1),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name, fn, args, want", CASES, ids=[c[0] for c in CASES])
def test_signed_zero_results_match_jax_jit(mode, name, fn, args, want):
    assert signs(run(mode, fn, *args)) == want


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("n", [5, 40, 1000])  # short scalar loops and long vectorized reductions
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_max_and_min_reductions_of_zeros_ignore_order(mode, n, dtype):
    rng = np.random.default_rng(n)
    x = rng.choice(np.array([-0.0, 0.0], dtype), size=(4, n)).astype(dtype)
    x[1], x[2] = -0.0, 0.0
    x[3, :] = -0.0
    x[3, n // 2] = 0.0  # one +0.0 in the middle of -0.0s
    any_pos = (~np.signbit(x)).any(axis=1)
    any_neg = np.signbit(x).any(axis=1)
    assert signs(run(mode, lambda v: jnp.max(v, axis=1), x)) == (~any_pos).astype(int).tolist()
    assert signs(run(mode, lambda v: jnp.min(v, axis=1), x)) == any_neg.astype(int).tolist()



@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("single", [0.0, -0.0, 1.0, -1.0, np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("array_first", [True, False])
def test_an_array_against_a_single_number_gives_the_elementwise_answer(op, single, array_first):
    """Eager max/min against one number (relu's maximum(x, 0)) take a cheaper path; its values
    and sign bits equal those of the same operation against a full array of that number, in
    every mode (the cases: zeros of both signs, NaN, infinities)."""
    fn = {"max": omnistage.lax.max, "min": omnistage.lax.min}[op]
    a = np.array([0.0, -0.0, 1.0, -1.0, np.nan, np.inf, -np.inf, 2.5], np.float32)
    full = np.full_like(a, single)
    args = (a, np.float32(single)) if array_first else (np.float32(single), a)
    wide = (a, full) if array_first else (full, a)
    for mode in MODES:
        got, want = run(mode, fn, *args), run(mode, fn, *wide)
        assert np.array_equal(got, want, equal_nan=True) and signs(got) == signs(want), mode
