"""stax's convolution, pooling and transposed-convolution layers and its function names:
values pinned to what JAX 0.10.2 prints for the same keys and inputs (stax's initializers
draw bit-identical random numbers), shapes from init_fun agree with apply_fun, pooling
against NumPy, jit and grad agree with eager."""
import numpy as np
import pytest

import omnistage as jax
import omnistage.numpy as jnp
from omnistage import lax, nn, random
from omnistage.example_libraries import stax

X = np.linspace(-1, 1, 2 * 4 * 4 * 2).reshape(2, 4, 4, 2).astype(np.float32)


def _net():
    return stax.serial(
        stax.Conv(3, (3, 3), (1, 1), padding="SAME"), stax.Relu, stax.MaxPool((2, 2), (2, 2)),
        stax.ConvTranspose(2, (3, 3), (2, 2), "SAME"), stax.AvgPool((3, 3), (1, 1), "SAME"), stax.Flatten,
        stax.Dense(3), stax.LogSoftmax,
    )


def test_conv_net_matches_jax_values_and_gradients():
    init, apply = _net()
    shape, params = init(random.PRNGKey(1), X.shape)
    assert tuple(shape) == (2, 3)
    # printed by JAX 0.10.2 (tests/nn/test_stax_layers.py's network, same key and input)
    want = [[-1.0819731, -1.1039543, -1.1101289], [-1.0976096, -1.0290385, -1.1744728]]
    np.testing.assert_allclose(np.asarray(apply(params, X)), want, rtol=2e-6)
    grad = jax.grad(lambda p: apply(p, X)[:, 0].sum())(params)
    want_w = [[0.03140993, 0.03506624, 0.00693627], [0.06887403, 0.06715649, 0.00500061], [0.09300035, 0.08575354, -0.0105837]]
    np.testing.assert_allclose(np.asarray(grad[0][0])[:, :, 0, 0], want_w, rtol=1e-5, atol=1e-7)
    jitted = jax.jit(jax.grad(lambda p: apply(p, X)[:, 0].sum()), backend="cpu")(params)
    for a, b in zip(jax.tree_util.tree_leaves(jitted), jax.tree_util.tree_leaves(grad)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-6)


def test_conv1d_transpose_matches_jax():
    init, apply = stax.Conv1DTranspose(2, (3,), (2,))
    shape, params = init(random.PRNGKey(2), (1, 5, 1))
    out = apply(params, np.arange(5.0, dtype=np.float32).reshape(1, 5, 1))
    assert tuple(shape) == out.shape == (1, 11, 2)
    want = [2.6262153e-06, 2.6262153e-06, 1.1831993e-01, -6.5314317e-01, 4.1461256e-01, -1.3062890e+00,
            7.1090519e-01, -1.9594347e+00, 1.0071979e+00, -2.6125805e+00, 7.1190393e-01]
    np.testing.assert_allclose(np.asarray(out)[0, :, 0], want, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("layer", [
    stax.Conv(4, (2, 3), (2, 1), "SAME"),
    stax.Conv(4, (3, 3)),
    stax.GeneralConv(("NCHW", "OIHW", "NCHW"), 3, (2, 2), (1, 2), "VALID"),
    stax.ConvTranspose(3, (3, 3), (2, 2), "VALID"),
    stax.GeneralConvTranspose(("NHWC", "HWIO", "NHWC"), 3, (2, 2), (3, 1), "SAME"),
    stax.MaxPool((2, 2)),
    stax.MaxPool((3, 2), (2, 2), "SAME"),
    stax.SumPool((2, 2), (1, 2), "SAME"),
    stax.AvgPool((2, 3), (2, 1), "VALID"),
    stax.AvgPool((2, 2), spec="NCHW"),
    stax.BatchNorm(),
])
def test_init_shape_is_the_apply_shape(layer):
    init, apply = layer
    x = np.random.RandomState(0).randn(2, 7, 6, 5).astype(np.float32)
    shape, params = init(random.PRNGKey(0), x.shape)
    assert tuple(int(d) for d in shape) == apply(params, x).shape


def test_pooling_values_against_numpy():
    x = np.random.RandomState(1).randn(2, 6, 4, 3).astype(np.float32)
    _, maxpool = stax.MaxPool((2, 2), (2, 2))
    want = x.reshape(2, 3, 2, 2, 2, 3).max(axis=(2, 4))
    np.testing.assert_array_equal(np.asarray(maxpool((), x)), want)
    _, sumpool = stax.SumPool((2, 2), (2, 2))
    np.testing.assert_allclose(np.asarray(sumpool((), x)), x.reshape(2, 3, 2, 2, 2, 3).sum(axis=(2, 4)), rtol=1e-6)
    # SAME average pooling divides by the number of real elements of each window
    _, avgpool = stax.AvgPool((3, 3), (1, 1), "SAME")
    padded = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    count = np.pad(np.ones((6, 4)), 1)
    sums = sum(padded[:, i:i + 6, j:j + 4] for i in range(3) for j in range(3))
    counts = sum(count[i:i + 6, j:j + 4] for i in range(3) for j in range(3))
    np.testing.assert_allclose(np.asarray(avgpool((), x)), sums / counts[None, :, :, None], rtol=1e-5, atol=1e-6)


def test_conv_layer_is_the_correlation_plus_bias():
    init, apply = stax.Conv(2, (2, 2))
    x = np.random.RandomState(2).randn(1, 3, 3, 1).astype(np.float32)
    _, (W, b) = init(random.PRNGKey(3), x.shape)
    W, b = np.asarray(W), np.asarray(b)
    want = np.array([[[(x[0, i:i + 2, j:j + 2, 0, None] * W[:, :, 0, :]).sum((0, 1)) for j in range(2)] for i in range(2)]]) + b
    np.testing.assert_allclose(np.asarray(apply((W, b), x)), want, rtol=1e-5, atol=1e-6)


def test_function_names_and_aliases_are_jax_s():
    assert stax.logsoftmax is nn.log_softmax and stax.log_softmax is nn.log_softmax
    assert stax.relu is nn.relu and stax.softplus is nn.softplus and stax.standardize is nn.standardize
    assert stax.glorot is stax.glorot_normal and stax.randn is stax.normal
    for name in ("Conv", "ConvTranspose", "Conv1DTranspose", "GeneralConv", "GeneralConvTranspose", "MaxPool",
                 "AvgPool", "SumPool", "BatchNorm", "Dropout", "Flatten", "Elu", "LeakyRelu", "Gelu", "Selu",
                 "Sigmoid", "Softplus", "FanOut", "FanInSum", "FanInConcat", "Identity", "shape_dependent"):
        assert name in stax.__all__ and hasattr(stax, name)


def test_pooled_classifier_vmaps_like_a_loop():
    init, apply = stax.serial(stax.Conv(2, (2, 2), padding="SAME"), stax.Relu, stax.MaxPool((2, 2), (2, 2)), stax.Flatten)
    _, params = init(random.PRNGKey(4), (1, 4, 4, 1))
    xs = np.random.RandomState(5).randn(3, 1, 4, 4, 1).astype(np.float32)
    batched = jax.vmap(lambda x: apply(params, x))(xs)
    np.testing.assert_allclose(np.asarray(batched), np.stack([np.asarray(apply(params, x)) for x in xs]), rtol=1e-6)


def test_conv_transpose_kernel_flip_and_shape_tuples():
    lhs = np.random.RandomState(6).randn(1, 4, 4, 2).astype(np.float32)
    rhs = np.random.RandomState(7).randn(3, 3, 2, 5).astype(np.float32)
    out = lax.conv_transpose(lhs, rhs, (2, 2), "VALID")
    assert out.shape == lax.conv_transpose_shape_tuple(lhs.shape, rhs.shape, (2, 2), "VALID", ("NHWC", "HWIO", "NHWC"))
    assert lax.conv_transpose_shape_tuple((1, 5, 5, 2), (3, 3, 2, 4), (2, 2), "VALID", ("NHWC", "HWIO", "NHWC")) == (1, 11, 11, 4)
    assert lax.conv_general_shape_tuple((1, 5, 5, 2), (3, 3, 2, 4), (2, 2), "SAME", ("NHWC", "HWIO", "NHWC")) == (1, 3, 3, 4)
    # with transpose_kernel it is the gradient of the forward convolution (JAX's docstring)
    fwd = lambda x: lax.conv_general_dilated(x, rhs_t, (2, 2), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    rhs_t = np.random.RandomState(8).randn(3, 3, 5, 2).astype(np.float32)
    x0 = np.zeros((1, 9, 9, 5), np.float32)
    cot = np.random.RandomState(9).randn(*fwd(x0).shape).astype(np.float32)
    _, vjp = jax.vjp(fwd, x0)
    t = lax.conv_transpose(cot, rhs_t, (2, 2), "VALID", transpose_kernel=True)
    np.testing.assert_allclose(np.asarray(t), np.asarray(vjp(cot)[0]), rtol=1e-5, atol=1e-5)
    assert lax.Precision("highest") is lax.Precision.HIGHEST and str(lax.Precision.HIGH) == "HIGH"
