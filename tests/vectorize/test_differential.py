"""Differential tests: for hypothesis-generated functions, argument shapes, in_axes and
out_axes, vmap(f) equals stacking f over the examples, eagerly and jitted.

A generated function is a short program over per-example values of one shape S: each step
applies a shape-preserving operation (elementwise math, comparisons and selects, cumulative
ops, reductions broadcast back, flips, sorts, rolls, indexing with a traced index, small
matmuls when S is square, Python control flow on a traced value, fori/while/scan loops, the
while with a per-example trip count) to earlier values; the result is the last value,
optionally reduced.
"""
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import omnistage.numpy as jnp
from omnistage import lax
from tests.vectorize.check import check_vmap

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _unary(name):
    return {
        "sin": jnp.sin, "tanh": jnp.tanh, "abs": jnp.abs, "neg": lambda x: -x,
        "square": lambda x: x * x, "softplus": lambda x: jnp.log1p(jnp.exp(-jnp.abs(x))) + jnp.maximum(x, 0),
    }[name]


def _binary(name):
    return {
        "add": lambda a, b: a + b, "mul": lambda a, b: a * b, "max": jnp.maximum,
        "where": lambda a, b: jnp.where(a > b, a, b - 1.0), "sub": lambda a, b: a - b,
    }[name]


def _axis_op(name, axis):
    return {
        "cumsum": lambda x: jnp.cumsum(x, axis=axis),
        "center": lambda x: x - jnp.mean(x, axis=axis, keepdims=True),
        "max_bcast": lambda x: x + jnp.max(x, axis=axis, keepdims=True),
        "flip": lambda x: jnp.flip(x, axis),
        "sort": lambda x: jnp.sort(x, axis=axis),
        "roll": lambda x: jnp.roll(x, 1, axis=axis),
        "argmax_take": lambda x: x * jnp.take(x, jnp.argmax(x, axis=axis), axis=axis).sum(),
    }[name]


def _square_op(name):
    return {"matmul": lambda a, b: a @ b / 4.0, "matmul_t": lambda a, b: a.T @ jnp.tanh(b) / 4.0}[name]


def _loop(name):
    def fori(a, b):
        return lax.fori_loop(0, 2, lambda i, c: jnp.tanh(c) * 0.5 + a, b)

    def data_dependent_while(a, b):
        # per-example trip counts: halve until small (at most a few steps for these inputs)
        def cond(c):
            return (jnp.max(jnp.abs(c[0])) > 0.25) & (c[1] < 6)

        return lax.while_loop(cond, lambda c: (c[0] * 0.5 + 0.01 * b, c[1] + 1), (a, 0))[0]

    def scan_rows(a, b):
        flat = jnp.reshape(a, (-1,))
        carry, ys = lax.scan(lambda c, v: (c * 0.9 + v, c), jnp.sum(b) * 0.0, flat)
        return jnp.reshape(ys, jnp.shape(a)) + carry

    return {"fori": fori, "while": data_dependent_while, "scan": scan_rows}[name]


def _scalar_control(x):
    if x.sum() > 0:
        return x * 0.5
    return x - 1.0


@st.composite
def programs(draw):
    rank = draw(st.integers(0, 3))
    shape = tuple(draw(st.lists(st.integers(1, 3), min_size=rank, max_size=rank)))
    square = rank == 2 and shape[0] == shape[1]
    n_args = draw(st.integers(1, 3))
    steps = []
    for _ in range(draw(st.integers(1, 5))):
        kinds = ["unary", "binary", "control", "loop"] + (["axis"] if rank else []) + (["square"] if square else [])
        kind = draw(st.sampled_from(kinds))
        if kind == "unary":
            steps.append(("unary", draw(st.sampled_from(["sin", "tanh", "abs", "neg", "square", "softplus"]))))
        elif kind == "binary":
            steps.append(("binary", draw(st.sampled_from(["add", "mul", "max", "where", "sub"]))))
        elif kind == "axis":
            op = draw(st.sampled_from(["cumsum", "center", "max_bcast", "flip", "sort", "roll", "argmax_take"]))
            steps.append(("axis", op, draw(st.integers(-rank, rank - 1))))
        elif kind == "square":
            steps.append(("square", draw(st.sampled_from(["matmul", "matmul_t"]))))
        elif kind == "loop":
            steps.append(("loop", draw(st.sampled_from(["fori", "while", "scan"]))))
        else:
            steps.append(("control",))
        steps[-1] = steps[-1] + (draw(st.integers(0, 100)), draw(st.integers(0, 100)))
    reduce_out = draw(st.booleans())
    return shape, n_args, steps, reduce_out


def build(steps, reduce_out):
    def f(*args):
        values = list(args)
        for step in steps:
            kind, *rest = step
            i, j = rest[-2] % len(values), rest[-1] % len(values)
            a, b = values[i], values[j]
            if kind == "unary":
                values.append(_unary(rest[0])(a))
            elif kind == "binary":
                values.append(_binary(rest[0])(a, b))
            elif kind == "axis":
                values.append(_axis_op(rest[0], rest[1])(a))
            elif kind == "square":
                values.append(_square_op(rest[0])(a, b))
            elif kind == "loop":
                values.append(_loop(rest[0])(a, b))
            else:
                values.append(_scalar_control(a))
        out = values[-1]
        return (out, jnp.sum(out)) if reduce_out else out

    return f


@st.composite
def batched_arguments(draw, shape, n_args):
    size = draw(st.integers(1, 4))
    axes = [draw(st.one_of(st.none(), st.integers(-len(shape) - 1, len(shape)))) for _ in range(n_args)]
    if all(a is None for a in axes):
        axes[0] = 0
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    args = []
    for a in axes:
        x = rng.standard_normal(shape if a is None else (size,) + shape).astype(np.float32)
        args.append(x if a is None else np.moveaxis(x, 0, a))
    return args, tuple(axes)


@SETTINGS
@given(st.data())
def test_vmap_of_generated_functions_equals_the_loop(data):
    shape, n_args, steps, reduce_out = data.draw(programs())
    args, in_axes = data.draw(batched_arguments(shape, n_args))
    out_rank = len(shape) + 1
    out_axis = data.draw(st.integers(-out_rank, out_rank - 1))
    out_axes = (out_axis, 0) if reduce_out else out_axis
    f = build(steps, reduce_out)
    check_vmap(f, *args, in_axes=in_axes, out_axes=out_axes, rtol=1e-4, atol=1e-5, printed=False)


@SETTINGS
@given(st.data())
def test_vmap_of_matmul_and_contractions_any_axes(data):
    m, k, n, size = (data.draw(st.integers(1, 4)) for _ in range(4))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    lhs_axis = data.draw(st.one_of(st.none(), st.integers(0, 2)))
    rhs_axis = data.draw(st.one_of(st.none(), st.integers(0, 2)))
    if lhs_axis is None and rhs_axis is None:
        lhs_axis = 0

    def make(shape, axis):
        x = rng.standard_normal(shape if axis is None else (size,) + shape).astype(np.float32)
        return x if axis is None else np.moveaxis(x, 0, axis)

    lhs, rhs = make((m, k), lhs_axis), make((k, n), rhs_axis)
    f = data.draw(st.sampled_from([
        lambda a, b: a @ b,
        lambda a, b: jnp.einsum("ik,kj->ji", a, b),
        lambda a, b: jnp.tensordot(a, b, axes=1).sum(0),
        lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ()))) + a.sum(),
    ]))
    check_vmap(f, lhs, rhs, in_axes=(lhs_axis, rhs_axis), rtol=1e-4, atol=1e-5, printed=False)


@SETTINGS
@given(st.data())
def test_vmap_of_indexing_with_batched_indices(data):
    n, size = data.draw(st.integers(1, 5)), data.draw(st.integers(1, 4))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    x_batched, i_batched = data.draw(st.sampled_from([(True, True), (True, False), (False, True)]))
    x = rng.standard_normal((size, n, 3) if x_batched else (n, 3)).astype(np.float32)
    idx = rng.integers(-n, n, size=(size, 2) if i_batched else (2,)).astype(np.int32)
    f = data.draw(st.sampled_from([
        lambda a, i: a[i],
        lambda a, i: a[i[0]] * 2,
        lambda a, i: a.at[i].add(1.0),
        lambda a, i: a.at[i[1]].set(a[0]),
        lambda a, i: lax.dynamic_slice_in_dim(a, i[0], 1, 0),
        lambda a, i: lax.dynamic_update_slice_in_dim(a, a[:1] * 3, i[1], 0),
    ]))
    check_vmap(f, x, idx, in_axes=(0 if x_batched else None, 0 if i_batched else None), printed=False)
