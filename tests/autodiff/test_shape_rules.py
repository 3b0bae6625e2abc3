"""Rules of concatenate, pad (negative and interior padding, a differentiable padding
value), slice (strides), rev and iota: finite differences (float64, both modes, order 2)
over hypothesis-drawn configurations, literal transposes, jnp functions built on them, and
jit(grad) against eager grad."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import omnistage as jax
import omnistage.numpy as jnp
from omnistage import lax
from omnistage.autodiff import rules

from ..helpers import check_staged
from .check import check_grads

# x64 only switches a global flag on for the whole test: safe to share across examples
SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _rand(seed, shape):
    return np.random.default_rng(seed).standard_normal(shape)


@st.composite
def pad_configs(draw):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    config = []
    for d in shape:
        interior = draw(st.integers(0, 2))
        size = d + (d - 1) * interior
        lo = draw(st.integers(-size // 2, 2))
        hi = draw(st.integers(-(size + lo) // 2, 2))
        config.append((lo, hi, interior))
    return shape, tuple(config)


@SETTINGS
@given(pad_configs(), st.integers(0, 2**16))
def test_pad_matches_finite_differences_in_operand_and_padding_value(x64, shape_config, seed):
    shape, config = shape_config
    check_grads(lambda x, v: lax.pad(x, v, config), (_rand(seed, shape), np.float64(0.7)))


def test_pad_transpose_literal(x64):
    # negative low padding cuts x[0] off; interior padding puts one pad value between entries
    x = np.array([1.0, 2.0, 3.0])
    f = lambda x, v: jnp.sum(lax.pad(x, v, ((-1, 2, 1),)) * np.arange(1.0, 7.0))
    gx, gv = jax.grad(f, argnums=(0, 1))(x, np.float64(0.0))
    # out = [v, x1, v, x2, v, v]
    np.testing.assert_allclose(gx, [0.0, 2.0, 4.0])
    np.testing.assert_allclose(gv, 1 + 3 + 5 + 6)


@st.composite
def slices(draw):
    shape = tuple(draw(st.lists(st.integers(1, 6), min_size=1, max_size=3)))
    starts, limits, strides = [], [], []
    for d in shape:
        start = draw(st.integers(0, d - 1))
        starts.append(start)
        limits.append(draw(st.integers(start, d)))
        strides.append(draw(st.integers(1, 3)))
    return shape, tuple(starts), tuple(limits), tuple(strides)


@SETTINGS
@given(slices(), st.integers(0, 2**16))
def test_strided_slice_matches_finite_differences(x64, spec, seed):
    shape, starts, limits, strides = spec
    check_grads(lambda x: lax.slice(x, starts, limits, strides), (_rand(seed, shape),))


@SETTINGS
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.data(), st.integers(0, 2**16))
def test_concatenate_matches_finite_differences(x64, shape, data, seed):
    dim = data.draw(st.integers(0, len(shape) - 1))
    sizes = data.draw(st.lists(st.integers(0, 3), min_size=1, max_size=3))
    args = [_rand(seed + i, tuple(shape[:dim]) + (n,) + tuple(shape[dim + 1:])) for i, n in enumerate(sizes)]
    check_grads(lambda *xs: lax.concatenate(xs, dim), args)


def test_concatenate_with_constant_operand(x64):
    x = _rand(1, (2, 3))
    g = jax.grad(lambda x: jnp.sum(lax.concatenate([x, np.ones((1, 3))], 0) ** 2))(x)
    np.testing.assert_allclose(g, 2 * x)


@pytest.mark.parametrize("dims", [(0,), (1,), (0, 1)])
def test_rev(x64, dims):
    check_grads(lambda x: lax.rev(x, dims) * np.arange(12.0).reshape(3, 4), (_rand(2, (3, 4)),))


def test_iota_has_no_inputs_to_differentiate(x64):
    f = lambda x: jnp.sum(x * lax.iota(np.float64, 4))
    np.testing.assert_allclose(jax.grad(f)(_rand(3, (4,))), np.arange(4.0))
    check_grads(f, (_rand(3, (4,)),))


def test_complex_pad_and_slice(x64):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))
    padded = lambda x: lax.pad(x, np.complex128(1j), ((1, -1, 1), (0, 2, 0)))  # noqa: E731
    check_grads(lambda x: lax.slice(padded(x), (0, 1), (5, 6), (2, 2)), (x,))


JNP = {
    "concatenate": lambda x, y: jnp.concatenate([x, y, x[:1]], axis=0),
    "stack": lambda x, y: jnp.stack([x, y], axis=1),
    "pad_constant": lambda x, y: jnp.pad(x, ((1, 2), (0, 1)), constant_values=2.0),
    "pad_reflect": lambda x, y: jnp.pad(y, ((2, 1), (1, 2)), mode="reflect"),
    "pad_edge": lambda x, y: jnp.pad(x, 2, mode="edge"),
    "getitem": lambda x, y: x[1:, ::-2] * y[-1, ::2][:, None][:2, :1],
    "flip_roll": lambda x, y: jnp.flip(x, 1) + jnp.roll(y, 2, axis=0),
    "split": lambda x, y: jnp.split(jnp.concatenate([x, y], 1), [2, 5], axis=1)[1],
    "tile_repeat": lambda x, y: jnp.tile(x, (2, 1)) + jnp.repeat(y, 2, axis=0),
}


@pytest.mark.parametrize("name", sorted(JNP))
def test_jnp_functions_built_on_shape_ops(x64, name):
    check_grads(JNP[name], (_rand(5, (3, 4)), _rand(6, (3, 4))))


def test_jit_of_grad_equals_eager_grad(x64):
    x = _rand(7, (4, 5))

    def f(x):
        padded = lax.pad(x, np.float64(0.5), ((1, -2, 1), (2, 0, 0)))
        pieces = lax.concatenate([padded[::2, 2:], lax.rev(x, (1,))], 0)
        return jnp.sum(pieces ** 3) + jnp.sum(lax.slice(x, (1, 0), (4, 5), (2, 3)) ** 2)

    np.testing.assert_allclose(jax.jit(jax.grad(f))(x), jax.grad(f)(x), rtol=1e-12, atol=1e-12)


def test_derivative_programs_run_from_their_printed_source():
    x = np.random.default_rng(8).standard_normal((4, 5)).astype(np.float32)

    def f(x):
        padded = lax.pad(x, np.float32(0.5), ((1, -2, 1), (2, 0, 0)))
        return jnp.sum(padded ** 2) + jnp.sum(jnp.concatenate([x[::2], lax.rev(x, (1,))], 0) ** 3)

    check_staged(jax.grad(f), x)
    check_staged(lambda x: jax.jvp(f, (x,), (x,))[1], x)


@pytest.mark.parametrize("name", ["concatenate", "pad", "slice", "rev", "iota"])
def test_every_shape_primitive_has_both_rules(name):
    assert rules.has_rules(name)


def test_one_differentiated_operand_at_a_time(x64):
    # the other operand's tangent is a symbolic zero: forward and reverse Jacobians agree
    x, v = _rand(11, (3, 4)), np.float64(0.3)
    cases = [
        (lambda x, v: lax.pad(x, v, ((1, -1, 1), (0, 2, 0))), (x, v)),
        (lambda x, y: lax.concatenate([x, y], 0), (x, _rand(12, (2, 4)))),
    ]
    for f, args in cases:
        for i in (0, 1):
            np.testing.assert_allclose(jax.jacfwd(f, argnums=i)(*args), jax.jacrev(f, argnums=i)(*args), atol=1e-12)
