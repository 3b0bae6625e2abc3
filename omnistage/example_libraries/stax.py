"""`omnistage.example_libraries.stax`: layers as `(init_fun, apply_fun)` pairs, as in JAX.

`init_fun(rng, input_shape) -> (output_shape, params)`; `apply_fun(params, inputs, **kwargs)`.
Combinators (`serial`, `parallel`, `FanOut`, ...) build models from layers. Written over
`omnistage.numpy`, so models jit, grad and vmap like any function.
"""
import functools
import operator

from .. import lax
from .. import numpy as jnp
from .. import random
from ..nn import elu, gelu, leaky_relu, log_softmax, relu, selu, sigmoid, softmax, softplus, standardize
from ..nn.initializers import glorot_normal, normal, ones, zeros

# JAX's aliases, kept for code written against older stax
glorot = glorot_normal
randn = normal
logsoftmax = log_softmax


def Dense(out_dim, W_init=glorot_normal(), b_init=normal()):  # noqa: N802, N803 - JAX's names
    """A fully connected layer: inputs @ W + b."""

    def init_fun(rng, input_shape):
        output_shape = tuple(input_shape[:-1]) + (out_dim,)
        k1, k2 = random.split(rng)
        return output_shape, (W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,)))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return jnp.dot(inputs, W) + b

    return init_fun, apply_fun


def _conv_layer(dimension_numbers, out_chan, filter_shape, strides, W_init, b_init, output_shape_of, convolve):
    """The (init_fun, apply_fun) pair of a convolution-like layer: `output_shape_of(input_shape,
    kernel_shape, strides)` and `convolve(inputs, W, strides)` say which convolution it is."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    strides = strides or (1,) * len(filter_shape)
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def init_fun(rng, input_shape):
        kernel_shape = _kernel_shape(rhs_spec, out_chan, input_shape[lhs_spec.index("C")], filter_shape)
        k1, k2 = random.split(rng)
        params = (W_init(k1, kernel_shape), b_init(k2, _bias_shape(out_spec, out_chan)))
        return output_shape_of(input_shape, kernel_shape, strides), params

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return convolve(inputs, W, strides) + b

    return init_fun, apply_fun


def GeneralConv(dimension_numbers, out_chan, filter_shape, strides=None, padding="VALID",  # noqa: N802
                W_init=None, b_init=normal(1e-6)):  # noqa: N803
    """A convolution layer with explicit layouts, e.g. ('NHWC', 'HWIO', 'NHWC')."""
    one = (1,) * len(filter_shape)
    return _conv_layer(
        dimension_numbers, out_chan, filter_shape, strides, W_init, b_init,
        lambda shape, kernel, st: lax.conv_general_shape_tuple(shape, kernel, st, padding, dimension_numbers),
        lambda x, W, st: lax.conv_general_dilated(x, W, st, padding, one, one, dimension_numbers=dimension_numbers))


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))


def GeneralConvTranspose(dimension_numbers, out_chan, filter_shape, strides=None, padding="VALID",  # noqa: N802
                         W_init=None, b_init=normal(1e-6)):  # noqa: N803
    """A transposed-convolution layer with explicit layouts (see `lax.conv_transpose`)."""
    return _conv_layer(
        dimension_numbers, out_chan, filter_shape, strides, W_init, b_init,
        lambda shape, kernel, st: lax.conv_transpose_shape_tuple(shape, kernel, st, padding, dimension_numbers),
        lambda x, W, st: lax.conv_transpose(x, W, st, padding, dimension_numbers=dimension_numbers))


Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))


def _kernel_shape(rhs_spec, out_chan, in_chan, filter_shape):
    spatial = iter(filter_shape)
    return [out_chan if c == "O" else in_chan if c == "I" else next(spatial) for c in rhs_spec]


def _bias_shape(out_spec, out_chan):
    return [out_chan if c == "C" else 1 for c in out_spec]


def elementwise(fun, **fun_kwargs):
    """A parameterless layer applying `fun` to each element."""

    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return fun(inputs, **fun_kwargs)

    return init_fun, apply_fun


Tanh = elementwise(jnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(jnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


def _pooling_layer(reducer, init_val, rescaler=None):
    def PoolingLayer(window_shape, strides=None, padding="VALID", spec=None):  # noqa: N802
        """A pooling layer over the spatial dimensions (layout `spec`, default 'NHWC'-like)."""
        strides = strides or (1,) * len(window_shape)
        rescale = rescaler(window_shape, strides, padding) if rescaler else None
        non_spatial_axes = (0, len(window_shape) + 1) if spec is None else (spec.index("N"), spec.index("C"))
        for i in sorted(non_spatial_axes):
            window_shape = tuple(window_shape[:i]) + (1,) + tuple(window_shape[i:])
            strides = tuple(strides[:i]) + (1,) + tuple(strides[i:])

        def init_fun(rng, input_shape):
            pads = lax.padtype_to_pads(input_shape, window_shape, strides, padding)
            ones_ = (1,) * len(window_shape)
            return lax.reduce_window_shape_tuple(input_shape, window_shape, strides, pads, ones_, ones_), ()

        def apply_fun(params, inputs, **kwargs):
            out = lax.reduce_window(inputs, init_val, reducer, window_shape, strides, padding)
            return rescale(out, inputs, spec) if rescale else out

        return init_fun, apply_fun

    return PoolingLayer


MaxPool = _pooling_layer(lax.max, -jnp.inf)
SumPool = _pooling_layer(lax.add, 0.0)


def _normalize_by_window_size(dims, strides, padding):
    def rescale(outputs, inputs, spec):
        non_spatial_axes = (0, inputs.ndim - 1) if spec is None else (spec.index("N"), spec.index("C"))
        spatial_shape = tuple(inputs.shape[i] for i in range(inputs.ndim) if i not in non_spatial_axes)
        window_sizes = lax.reduce_window(jnp.ones(spatial_shape, dtype=inputs.dtype), 0.0, lax.add, dims, strides, padding)
        for i in sorted(non_spatial_axes):
            window_sizes = jnp.expand_dims(window_sizes, i)
        return outputs / window_sizes

    return rescale


AvgPool = _pooling_layer(lax.add, 0.0, _normalize_by_window_size)


def Flatten():  # noqa: N802
    """Flattens all but the leading (batch) dimension."""

    def init_fun(rng, input_shape):
        return (input_shape[0], functools.reduce(operator.mul, input_shape[1:], 1)), ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.reshape(inputs, (inputs.shape[0], -1))

    return init_fun, apply_fun


Flatten = Flatten()


def Identity():  # noqa: N802
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return inputs

    return init_fun, apply_fun


Identity = Identity()


def FanOut(num):  # noqa: N802
    """Copies its input `num` times (for `parallel`)."""

    def init_fun(rng, input_shape):
        return [input_shape] * num, ()

    def apply_fun(params, inputs, **kwargs):
        return [inputs] * num

    return init_fun, apply_fun


def FanInSum():  # noqa: N802
    def init_fun(rng, input_shape):
        return input_shape[0], ()

    def apply_fun(params, inputs, **kwargs):
        return functools.reduce(operator.add, inputs)

    return init_fun, apply_fun


FanInSum = FanInSum()


def FanInConcat(axis=-1):  # noqa: N802
    def init_fun(rng, input_shape):
        ax = axis % len(input_shape[0])
        concat = sum(shape[ax] for shape in input_shape)
        return input_shape[0][:ax] + (concat,) + input_shape[0][ax + 1:], ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.concatenate(inputs, axis)

    return init_fun, apply_fun


def Dropout(rate, mode="train"):  # noqa: N802
    """Keeps each element with probability `rate` (scaled by 1/rate) when mode is 'train'."""

    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.get("rng", None)
        if rng is None:
            raise ValueError(
                "Dropout layer requires apply_fun to be called with a PRNG key argument. That is, "
                "instead of `apply_fun(params, inputs)`, call it like `apply_fun(params, inputs, rng)` "
                "where `rng` is a PRNG key (e.g. from `omnistage.random.PRNGKey`)."
            )
        if mode != "train":
            return inputs
        keep = random.bernoulli(rng, rate, inputs.shape)
        return jnp.where(keep, inputs / rate, 0)

    return init_fun, apply_fun


def BatchNorm(axis=(0, 1, 2), epsilon=1e-5, center=True, scale=True, beta_init=zeros, gamma_init=ones):  # noqa: N802
    """Normalizes over `axis` with learned shift and scale (no running statistics, as JAX)."""
    axis = (axis,) if isinstance(axis, int) else tuple(axis)

    def init_fun(rng, input_shape):
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        k1, k2 = random.split(rng)
        beta = beta_init(k1, shape) if center else ()
        gamma = gamma_init(k2, shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        ed = tuple(None if i in axis else slice(None) for i in range(jnp.ndim(x)))
        z = standardize(x, axis, epsilon=epsilon)
        if center and scale:
            return gamma[ed] * z + beta[ed]
        if center:
            return z + beta[ed]
        if scale:
            return gamma[ed] * z
        return z

    return init_fun, apply_fun


def serial(*layers):
    """Composes layers in sequence: the output of one is the input of the next."""
    nlayers = len(layers)
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng, input_shape):
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, param = init(layer_rng, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, nlayers) if rng is not None else (None,) * nlayers
        for fun, param, r in zip(apply_funs, params, rngs):
            inputs = fun(param, inputs, rng=r, **kwargs)
        return inputs

    return init_fun, apply_fun


def parallel(*layers):
    """Applies layer i to input i of a sequence (use with FanOut / FanInSum)."""
    nlayers = len(layers)
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng, input_shape):
        rngs = random.split(rng, nlayers)
        return zip(*[init(r, shape) for init, r, shape in zip(init_funs, rngs, input_shape)])

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, nlayers) if rng is not None else (None,) * nlayers
        return [f(p, x, rng=r, **kwargs) for f, p, x, r in zip(apply_funs, params, inputs, rngs)]

    return init_fun, apply_fun


def shape_dependent(make_layer):
    """A layer built from the input shape on first use."""

    def init_fun(rng, input_shape):
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, **kwargs):
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)

    return init_fun, apply_fun


__all__ = [
    "AvgPool", "BatchNorm", "Conv", "Conv1DTranspose", "ConvTranspose", "Dense", "Dropout", "Elu", "Exp",
    "FanInConcat", "FanInSum", "FanOut", "Flatten", "Gelu", "GeneralConv", "GeneralConvTranspose",
    "Identity", "LeakyRelu", "LogSoftmax", "MaxPool", "Relu", "Selu", "Sigmoid", "Softmax", "Softplus",
    "SumPool", "Tanh", "elementwise", "parallel", "serial", "shape_dependent",
    "elu", "gelu", "glorot", "glorot_normal", "leaky_relu", "log_softmax", "logsoftmax", "normal", "ones",
    "randn", "relu", "selu", "sigmoid", "softmax", "softplus", "standardize", "zeros",
]
