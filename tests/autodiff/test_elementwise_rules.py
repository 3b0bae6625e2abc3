"""Every elementwise and structural rule against finite differences (float64, both modes,
order 2), and under jit against eager."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import omnistage as jax
import omnistage.numpy as jnp
from omnistage import lax
from omnistage.autodiff import rules

from .check import check_grads

# (function, a sampler of valid inputs)
_pos = lambda r, s: r.uniform(0.5, 2.0, s)  # noqa: E731
_unit = lambda r, s: r.uniform(-0.8, 0.8, s)  # noqa: E731
_any = lambda r, s: r.standard_normal(s)  # noqa: E731
_gt1 = lambda r, s: r.uniform(1.2, 3.0, s)  # noqa: E731

UNARY = {
    "exp": (lax.exp, _any), "exp2": (lax.exp2, _any), "expm1": (lax.expm1, _any),
    "log": (lax.log, _pos), "log1p": (lax.log1p, _pos), "sin": (lax.sin, _any),
    "cos": (lax.cos, _any), "tan": (lax.tan, _unit), "asin": (lax.asin, _unit),
    "acos": (lax.acos, _unit), "atan": (lax.atan, _any), "sinh": (lax.sinh, _any),
    "cosh": (lax.cosh, _any), "tanh": (lax.tanh, _any), "asinh": (lax.asinh, _any),
    "acosh": (lax.acosh, _gt1), "atanh": (lax.atanh, _unit), "sqrt": (lax.sqrt, _pos),
    "rsqrt": (lax.rsqrt, _pos), "cbrt": (lax.cbrt, _pos), "logistic": (lax.logistic, _any),
    "neg": (lax.neg, _any), "abs": (lax.abs, _pos),
    "integer_pow": (lambda x: lax.integer_pow(x, 3), _any),
    "integer_pow_neg": (lambda x: lax.integer_pow(x, -2), _pos),
}

BINARY = {
    "add": lax.add, "sub": lax.sub, "mul": lax.mul, "div": lax.div, "atan2": lax.atan2,
    "pow": lax.pow, "max": lax.max, "min": lax.min, "rem": lax.rem,
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_rules(name, x64):
    fn, sample = UNARY[name]
    x = sample(np.random.default_rng(hash(name) % 2**32), (2, 3))
    check_grads(fn, (x,), order=2, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_rules(name, x64):
    rng = np.random.default_rng(hash(name) % 2**32)
    x, y = rng.uniform(0.5, 2.0, (2, 3)), rng.uniform(0.5, 2.0, (2, 3))
    if name in ("max", "min"):
        y = x + rng.choice([-0.5, 0.5], x.shape)  # away from ties
    if name == "rem":
        y = rng.uniform(0.7, 0.9, (2, 3))
        x = y * 1.5 + 0.05  # away from the jumps
    check_grads(BINARY[name], (x, y), order=2, atol=1e-4, rtol=1e-4)


def test_max_splits_ties_evenly_like_jax():
    gx, gy = jax.grad(lambda x, y: lax.max(x, y), argnums=(0, 1))(1.0, 1.0)
    assert (gx.item(), gy.item()) == (0.5, 0.5)


def test_rank0_operands_broadcast_and_sum_back(x64):
    rng = np.random.default_rng(0)
    check_grads(lambda s, x: lax.mul(s, x) + lax.sub(x, s), (np.float64(1.5), rng.standard_normal((3, 2))))


def test_complex_holomorphic_rules(x64):
    rng = np.random.default_rng(1)
    z = rng.standard_normal(3) + 1j * rng.standard_normal(3)
    for fn in (jnp.sin, jnp.exp, jnp.tanh, lambda z: z * z / (z + 3.0), jnp.log):
        check_grads(fn, (z,), atol=1e-4, rtol=1e-4)


def test_complex_parts(x64):
    rng = np.random.default_rng(2)
    z = rng.standard_normal(3) + 1j * rng.standard_normal(3)
    check_grads(lambda z: jnp.real(z) * jnp.imag(z) + jnp.abs(z), (z,))
    check_grads(lambda z: jnp.conj(z) * 2.0, (z,))
    check_grads(lambda x, y: lax.complex(x, y) * (1 + 2j), (z.real, z.imag))


def test_select_convert_and_structural(x64):
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    check_grads(lambda x, y: jnp.where(x > 0, x * y, jnp.sin(y)), (x, y))
    check_grads(lambda x: jnp.real(x.astype(np.complex128) * (1 + 1j)), (x,))
    check_grads(lambda x: jnp.broadcast_to(x[:, None, :], (2, 4, 3)).sum(1), (x,))
    check_grads(lambda x: x.reshape(3, 2).T @ x.reshape(3, 2), (x,))
    check_grads(lambda x: jnp.squeeze(x[None], 0).sum(axis=0), (x,))
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 4, 5))
    check_grads(lambda a, b: jnp.einsum("bij,bjk->bik", a, b), (a, b))
    check_grads(lambda a, b: jnp.einsum("bij,bjk->kib", a, b), (a, b))


def test_locally_constant_functions_have_zero_derivative():
    for fn in (jnp.floor, jnp.ceil, jnp.round, jnp.sign):
        assert jax.grad(lambda x: fn(x) * 1.0)(1.3).item() == 0.0


@settings(max_examples=20, deadline=None)
@given(
    shape=st.lists(st.integers(1, 3), min_size=0, max_size=3).map(tuple),
    name=st.sampled_from(["exp", "sin", "tanh", "logistic", "atan"]),
)
def test_grad_under_jit_equals_eager(shape, name):
    fn = UNARY[name][0]
    x = np.random.default_rng(len(shape)).standard_normal(shape).astype(np.float32)

    def loss(x):
        return (fn(x) * x).sum()

    np.testing.assert_allclose(jax.jit(jax.grad(loss))(x), jax.grad(loss)(x), rtol=2e-6, atol=1e-6)


def test_every_float_elementwise_primitive_has_both_rules():
    from omnistage.lax.elementwise import PRIMITIVES

    non_float = {"eq", "ne", "lt", "le", "gt", "ge", "and_", "or_", "not_", "xor", "is_finite",
                 "population_count", "shift_left", "shift_right_arithmetic", "shift_right_logical",
                 "bitcast_convert_type"}
    missing = [n for n in PRIMITIVES if n not in non_float and not rules.has_rules(n)]
    assert missing == []


@pytest.mark.parametrize("fn", [jnp.logaddexp, jnp.logaddexp2])
@pytest.mark.parametrize("wrap", [lambda f: f, jax.jit])
def test_logaddexp_splits_ties_evenly_like_jax(fn, wrap):
    """At x1 == x2 the derivative is (1/2, 1/2) (JAX's answer); an abs kink inside the formula
    once gave (0, 1) and stalled a Gaussian-process example."""
    for v in [1.0, 0.0, -3.5, 40.0]:
        g1, g2 = wrap(jax.grad(fn, argnums=(0, 1)))(v, v)
        np.testing.assert_allclose([float(g1), float(g2)], [0.5, 0.5], rtol=1e-6)
    d = wrap(jax.grad(lambda x: fn(x, x)))(2.0)
    np.testing.assert_allclose(float(d), 1.0, rtol=1e-6)
    np.testing.assert_allclose(float(wrap(jax.grad(jax.nn.softplus))(0.0)), 0.5, rtol=1e-6)


def test_logaddexp_values_match_numpy_at_ties_and_infinities():
    x = np.array([1, -np.inf, np.inf, np.nan, -np.inf, np.inf, 0.0, 88.0], np.float32)
    y = np.array([1, -np.inf, np.inf, 1, np.inf, -np.inf, -0.0, 88.0], np.float32)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(np.asarray(jnp.logaddexp(x, y)), np.logaddexp(x, y))
        np.testing.assert_array_equal(np.asarray(jax.jit(jnp.logaddexp)(x, y)), np.logaddexp(x, y))
