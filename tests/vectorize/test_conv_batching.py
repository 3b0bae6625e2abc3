"""vmap of convolutions and max pools (issue 18's per-example gradients of a conv net): values
against a Python loop over the examples (both operands batched, one batched, batch axes not
leading, feature groups, strides, padding, both dilations), derivatives of the batched
programs against finite differences, and the batched program staying one primitive per
convolution and per pool, so the generated module does not grow with the batch."""
import re

import numpy as np
import pytest

import omnistage
import omnistage.numpy as jnp
from omnistage import lax
from omnistage.codegen.emit_cpu import emit_module
from omnistage.codegen.executable import vmath_lookup
from omnistage.example_libraries import stax
from omnistage.staging.cleanup import cleanup
from tests.autodiff.check import check_grads

from .check import check_vmap

NHWC = ("NHWC", "HWIO", "NHWC")


def rand(rng, *shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def convs(x, w):
    """Two 2-D convolutions of one (x, w): strided 'SAME' with rhs dilation, and explicit
    padding with lhs dilation and two feature groups."""
    return (lax.conv_general_dilated(x, w, (2, 1), "SAME", rhs_dilation=(1, 2), dimension_numbers=NHWC),
            lax.conv_general_dilated(x, w[..., :2, :], (1, 2), ((2, 0), (1, 1)), lhs_dilation=(2, 1),
                                     dimension_numbers=NHWC, feature_group_count=2))


@pytest.mark.parametrize("in_axes", [(0, 0), (0, None), (None, 0), (2, 4)], ids=["both", "lhs", "rhs", "not_leading"])
def test_vmap_of_conv_matches_a_loop(rng, in_axes):
    b, x_shape, w_shape = 3, (2, 6, 5, 4), (3, 2, 4, 6)
    x = rand(rng, *x_shape) if in_axes[0] is None else np.moveaxis(rand(rng, b, *x_shape), 0, in_axes[0])
    w = rand(rng, *w_shape) if in_axes[1] is None else np.moveaxis(rand(rng, b, *w_shape), 0, in_axes[1])
    check_vmap(convs, x, w, in_axes=in_axes, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("groups", [(2, 1), (1, 2)], ids=["feature_groups", "batch_groups"])
def test_vmap_of_grouped_conv_with_both_operands_batched(rng, groups):
    fgc, bgc = groups
    x, w = rand(rng, 3, 2 * bgc, 4, 5, 2 * fgc), rand(rng, 3, 2, 2, 2, 4 * bgc)

    def conv(a, k):
        return lax.conv_general_dilated(a, k, (1, 1), ((1, 0), (0, 1)), rhs_dilation=(2, 1), dimension_numbers=NHWC,
                                        feature_group_count=fgc, batch_group_count=bgc)

    check_vmap(conv, x, w, rtol=1e-4, atol=1e-4)


def max_pool(x):
    return lax.reduce_window(x, -np.inf, lax.max, (1, 2, 3, 1), (1, 1, 2, 1), ((0, 0), (0, 1), (1, 1), (0, 0)))


def test_vmap_of_max_pool_and_its_gradient_match_a_loop(rng):
    x = rand(rng, 3, 2, 5, 6, 3)
    check_vmap(max_pool, x)
    check_vmap(omnistage.grad(lambda v: jnp.sum(jnp.sin(max_pool(v)))), x)
    # an operand shared by the examples, cotangents per example
    ct = rand(rng, 3, *omnistage.eval_shape(max_pool, x[0]).shape)
    check_vmap(lambda c: omnistage.vjp(max_pool, x[0])[1](c)[0], ct)


def test_batched_conv_and_pool_derivatives_match_finite_differences(x64, rng):
    x, w = rng.standard_normal((2, 2, 6, 5, 4)), rng.standard_normal((2, 3, 2, 4, 6))
    check_grads(omnistage.vmap(convs), (x, w))
    check_grads(omnistage.vmap(convs, (0, None)), (x, w[0]))
    check_grads(omnistage.vmap(lambda a, k: max_pool(convs(a, k)[0])), (x, w))


# --- the per-example gradient of a conv net (differentially_private_sgd) ---------------------

init_net, predict = stax.serial(
    stax.Conv(4, (3, 3), padding="SAME", strides=(2, 2)), stax.Relu, stax.MaxPool((2, 2), (1, 1)),
    stax.Conv(6, (2, 2), padding="VALID"), stax.Relu, stax.MaxPool((2, 2), (1, 1)),
    stax.Flatten, stax.Dense(3),
)


def loss(params, x, y):
    return -jnp.sum(stax.logsoftmax(predict(params, x)) * y)


def per_example_grads(params, xs, ys):
    return omnistage.vmap(omnistage.grad(loss), (None, 0, 0))(params, xs[:, None], ys[:, None])


def _example(batch, seed=0):
    rng = np.random.default_rng(seed)
    _, params = init_net(omnistage.random.key(0), (-1, 12, 12, 1))
    xs = rng.standard_normal((batch, 12, 12, 1)).astype(np.float32)
    ys = np.eye(3, dtype=np.float32)[rng.integers(0, 3, batch)]
    return params, xs, ys


def _prims(program):
    return re.findall(r"= (\w+)\(", program.source())


def test_per_example_gradients_keep_one_primitive_per_convolution_and_pool():
    params, xs, ys = _example(4)
    batched = _prims(omnistage.make_jaxpr(per_example_grads)(params, xs, ys))
    single = _prims(omnistage.make_jaxpr(omnistage.grad(loss))(params, xs[:1], ys[:1]))
    for prim in ("conv_general_dilated", "reduce_window_max", "select_and_scatter_add"):
        assert batched.count(prim) == single.count(prim) > 0, prim
    assert len(batched) < 2 * len(single)


def _module_lines(fun, *args):
    program = cleanup(omnistage.jit(fun).lower(*args).program)
    source, _ = emit_module(program, vmath_lookup())
    return len(source.splitlines())


def test_generated_module_does_not_grow_with_the_batch():
    small, big = _module_lines(per_example_grads, *_example(2)), _module_lines(per_example_grads, *_example(16))
    assert big <= small + 5, (small, big)


@pytest.mark.slow
def test_per_example_gradients_match_a_loop_of_gradients():
    """Compiled by Numba: the conv and pool kernels under vmap and grad."""
    params, xs, ys = _example(3)
    got = omnistage.jit(per_example_grads)(params, xs, ys)
    for i in range(3):
        want = omnistage.grad(loss)(params, xs[i:i + 1], ys[i:i + 1])
        for g, w in zip(omnistage.tree_util.tree_leaves(got), omnistage.tree_util.tree_leaves(want)):
            np.testing.assert_allclose(np.asarray(g)[i], np.asarray(w), rtol=1e-4, atol=1e-5)
