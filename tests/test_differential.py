"""Differential tests: hypothesis builds random straight-line programs from jnp unary and
binary ops, comparisons, `where`, Python-scalar operands and reductions over random axes,
on random broadcast-compatible shapes with float32/int32/bool inputs. Each program runs
eagerly, under jit, from its printed source and through the checked interpreter
(`check_staged`), and the eager result is compared with NumPy computing the same program
in JAX's promoted dtypes."""
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import omnistage
import omnistage.numpy as jnp
from tests.helpers import check_staged

F32, I32, BOOL = np.dtype("float32"), np.dtype("int32"), np.dtype("bool")
_RANK = {BOOL: 0, I32: 1, F32: 2}


def promote(*dtypes):
    """JAX's lattice restricted to bool < int32 < float32 (64-bit mode off)."""
    return max(dtypes, key=_RANK.__getitem__)


def weak_promote(dtype, scalar):
    """A strong dtype joined with a weakly typed Python int or float."""
    if isinstance(scalar, float):
        return F32
    return I32 if dtype == BOOL else dtype


# --- op tables: (jnp function, numpy function, result-dtype rule) ---------------------------------

# Unary ops on numbers: "same" keeps the dtype, "inexact" computes in float32.
UNARY_NUMERIC = {
    "negative": (jnp.negative, np.negative, "same"),
    "abs": (jnp.abs, np.abs, "same"),
    "sign": (jnp.sign, np.sign, "same"),
    "square": (jnp.square, np.square, "same"),
    "sin": (jnp.sin, np.sin, "inexact"),
    "cos": (jnp.cos, np.cos, "inexact"),
    "tanh": (jnp.tanh, np.tanh, "inexact"),
    "sqrt_abs": (lambda x: jnp.sqrt(jnp.abs(x)), lambda x: np.sqrt(np.abs(x)), "inexact"),
    "log1p_abs": (lambda x: jnp.log1p(jnp.abs(x)), lambda x: np.log1p(np.abs(x)), "inexact"),
    "exp_tanh": (lambda x: jnp.exp(jnp.tanh(x)), lambda x: np.exp(np.tanh(x)), "inexact"),
}
UNARY_FLOAT_ONLY = {
    "floor": (jnp.floor, np.floor, "same"),
    "ceil": (jnp.ceil, np.ceil, "same"),
}
UNARY_BOOL = {
    "logical_not": (jnp.logical_not, np.logical_not, "same"),
    "invert": (jnp.invert, np.invert, "same"),
}

# Binary ops: "promote" gives the promoted dtype, "bool" a comparison result.
BINARY = {
    "add": (jnp.add, np.add, "promote"),
    "subtract": (jnp.subtract, np.subtract, "promote"),
    "multiply": (jnp.multiply, np.multiply, "promote"),
    "maximum": (jnp.maximum, np.maximum, "promote"),
    "minimum": (jnp.minimum, np.minimum, "promote"),
    "less": (jnp.less, np.less, "bool"),
    "greater_equal": (jnp.greater_equal, np.greater_equal, "bool"),
    "equal": (jnp.equal, np.equal, "bool"),
    "not_equal": (jnp.not_equal, np.not_equal, "bool"),
}
BINARY_BOOL = {
    "logical_and": (jnp.logical_and, np.logical_and, "bool"),
    "logical_or": (jnp.logical_or, np.logical_or, "bool"),
}

# Reductions: result dtype as a function of the input dtype.
REDUCTIONS = {
    "sum": (jnp.sum, np.sum, lambda d: I32 if d == BOOL else d),
    "prod": (jnp.prod, np.prod, lambda d: I32 if d == BOOL else d),
    "max": (jnp.max, np.max, lambda d: d),
    "min": (jnp.min, np.min, lambda d: d),
    "mean": (jnp.mean, np.mean, lambda d: F32),
    "any": (jnp.any, np.any, lambda d: BOOL),
    "all": (jnp.all, np.all, lambda d: BOOL),
}


# --- program representation ------------------------------------------------------------------


class Value:
    """A program value: its shape and dtype (known statically, like an aval)."""

    def __init__(self, shape, dtype):
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)

    def __repr__(self):
        return f"{self.dtype.name}{list(self.shape)}"


class Step:
    """One statement: `kind` and `name` select the op; `ins` index earlier values."""

    def __init__(self, kind, name, ins, out, scalar=None, axis=None, keepdims=False, scalar_left=False):
        self.kind, self.name, self.ins, self.out = kind, name, ins, out
        self.scalar, self.axis, self.keepdims, self.scalar_left = scalar, axis, keepdims, scalar_left

    def __repr__(self):
        extra = f" scalar={self.scalar!r}" if self.scalar is not None else ""
        if self.kind == "reduce":
            extra += f" axis={self.axis} keepdims={self.keepdims}"
        return f"{self.name}{self.ins}{extra} -> {self.out}"


def _broadcastable(a, b):
    try:
        np.broadcast_shapes(a, b)
        return True
    except ValueError:
        return False


@st.composite
def input_values(draw):
    """1-3 inputs whose shapes are broadcast-compatible views of one base shape."""
    base = draw(st.lists(st.integers(1, 4), min_size=0, max_size=3))
    values = []
    for _ in range(draw(st.integers(1, 3))):
        rank = draw(st.integers(0, len(base)))
        shape = [d if draw(st.booleans()) else 1 for d in base[len(base) - rank:]]
        values.append(Value(shape, draw(st.sampled_from([F32, I32, BOOL]))))
    return values


def _unary_step(draw, pool):
    i = draw(st.integers(0, len(pool) - 1))
    v = pool[i]
    if v.dtype == BOOL:
        table = UNARY_BOOL
    elif v.dtype == F32:
        table = {**UNARY_NUMERIC, **UNARY_FLOAT_ONLY}
    else:
        table = UNARY_NUMERIC
    name = draw(st.sampled_from(sorted(table)))
    rule = table[name][2]
    return Step("unary", name, [i], Value(v.shape, v.dtype if rule == "same" else F32))


def _binary_step(draw, pool):
    pairs = [(i, j) for i in range(len(pool)) for j in range(len(pool))
             if _broadcastable(pool[i].shape, pool[j].shape)]
    i, j = draw(st.sampled_from(pairs))
    a, b = pool[i], pool[j]
    shape = np.broadcast_shapes(a.shape, b.shape)
    table = dict(BINARY)
    if a.dtype == BOOL and b.dtype == BOOL:
        table.pop("subtract")  # NumPy and JAX reject boolean subtraction
        table.update(BINARY_BOOL)
    name = draw(st.sampled_from(sorted(table)))
    rule = table[name][2]
    return Step("binary", name, [i, j], Value(shape, BOOL if rule == "bool" else promote(a.dtype, b.dtype)))


def _scalar_step(draw, pool):
    """A binary op with a weakly typed Python scalar on either side."""
    i = draw(st.integers(0, len(pool) - 1))
    v = pool[i]
    scalar = draw(st.one_of(st.integers(-3, 3), st.sampled_from([0.5, -1.5, 2.0])))
    names = ["add", "multiply", "maximum", "less", "equal"]
    if v.dtype != BOOL:
        names.append("subtract")
    name = draw(st.sampled_from(names))
    rule = BINARY[name][2]
    out_dtype = BOOL if rule == "bool" else weak_promote(v.dtype, scalar)
    return Step("scalar", name, [i], Value(v.shape, out_dtype), scalar=scalar,
                scalar_left=draw(st.booleans()))


def _where_step(draw, pool):
    conds = [k for k, v in enumerate(pool) if v.dtype == BOOL]
    c = draw(st.sampled_from(conds))
    candidates = [(i, j) for i in range(len(pool)) for j in range(len(pool))
                  if _broadcastable(pool[i].shape, pool[j].shape)
                  and _broadcastable(np.broadcast_shapes(pool[i].shape, pool[j].shape), pool[c].shape)]
    i, j = draw(st.sampled_from(candidates))
    shape = np.broadcast_shapes(pool[c].shape, pool[i].shape, pool[j].shape)
    return Step("where", "where", [c, i, j], Value(shape, promote(pool[i].dtype, pool[j].dtype)))


def _reduce_step(draw, pool):
    i = draw(st.integers(0, len(pool) - 1))
    v = pool[i]
    name = draw(st.sampled_from(sorted(REDUCTIONS)))
    rank = len(v.shape)
    if rank == 0:
        axis = None
    else:
        axis = draw(st.one_of(
            st.none(),
            st.integers(-rank, rank - 1),
            st.lists(st.integers(0, rank - 1), min_size=1, max_size=rank, unique=True).map(tuple),
        ))
    keepdims = draw(st.booleans())
    axes = range(rank) if axis is None else [a % rank for a in (axis if isinstance(axis, tuple) else (axis,))]
    shape = [1 if k in axes else d for k, d in enumerate(v.shape)] if keepdims else \
        [d for k, d in enumerate(v.shape) if k not in axes]
    return Step("reduce", name, [i], Value(shape, REDUCTIONS[name][2](v.dtype)), axis=axis, keepdims=keepdims)


@st.composite
def programs(draw):
    inputs = draw(input_values())
    pool = list(inputs)
    steps = []
    for _ in range(draw(st.integers(1, 6))):
        makers = [_unary_step, _binary_step, _scalar_step, _reduce_step]
        if any(v.dtype == BOOL for v in pool):
            makers.append(_where_step)
        step = draw(st.sampled_from(makers))(draw, pool)
        steps.append(step)
        pool.append(step.out)
    n_out = draw(st.integers(1, min(2, len(steps))))
    return inputs, steps, list(range(len(pool) - n_out, len(pool)))


def array_for(value):
    """A strategy for NumPy data of `value`'s shape and dtype, small enough not to overflow."""
    if value.dtype == F32:
        elements = st.floats(-3, 3, width=32, allow_nan=False)
    elif value.dtype == I32:
        elements = st.integers(-5, 5)
    else:
        elements = st.booleans()
    return hnp.arrays(value.dtype, value.shape, elements=elements)


# --- running a program with jnp and with NumPy -----------------------------------------------------


def _table(step):
    for table in (UNARY_NUMERIC, UNARY_FLOAT_ONLY, UNARY_BOOL, BINARY, BINARY_BOOL, REDUCTIONS):
        if step.name in table:
            return table[step.name]
    raise KeyError(step.name)


def run_jnp(steps, outs, args):
    env = list(args)
    for step in steps:
        fn = _table(step)[0] if step.kind != "where" else jnp.where
        x = [env[i] for i in step.ins]
        if step.kind == "scalar":
            env.append(fn(step.scalar, x[0]) if step.scalar_left else fn(x[0], step.scalar))
        elif step.kind == "reduce":
            env.append(fn(x[0], axis=step.axis, keepdims=step.keepdims))
        else:
            env.append(fn(*x))
    return tuple(env[i] for i in outs)


def run_numpy(inputs, steps, outs, args):
    """The same program in NumPy, each op computed in the dtype JAX promotes to."""
    env = [np.asarray(a) for a in args]
    vals = list(inputs)
    for step in steps:
        x = [env[i] for i in step.ins]
        out = step.out
        with np.errstate(all="ignore"):
            if step.kind == "where":
                dt = out.dtype
                r = np.where(x[0], x[1].astype(dt), x[2].astype(dt))
            elif step.kind == "reduce":
                fn = _table(step)[1]
                src = x[0].astype(out.dtype) if step.name in ("sum", "prod", "mean") else x[0]
                kwargs = {"dtype": out.dtype} if step.name in ("sum", "prod", "mean") else {}
                r = fn(src, axis=step.axis, keepdims=step.keepdims, **kwargs)
            elif step.kind == "scalar":
                fn = _table(step)[1]
                dt = weak_promote(vals[step.ins[0]].dtype, step.scalar)
                a, s = x[0].astype(dt), np.asarray(step.scalar).astype(dt)
                r = fn(s, a) if step.scalar_left else fn(a, s)
            elif step.kind == "binary":
                fn = _table(step)[1]
                dt = promote(vals[step.ins[0]].dtype, vals[step.ins[1]].dtype)
                r = fn(x[0].astype(dt), x[1].astype(dt))
            else:
                fn, _, rule = _table(step)
                r = fn(x[0] if rule == "same" else x[0].astype(F32))
        env.append(np.asarray(r).astype(out.dtype))
        vals.append(out)
    return tuple(env[i] for i in outs)


def _assert_matches_numpy(got, expected, inputs, steps):
    for g, e in zip(got, expected):
        g = np.asarray(g)
        context = f"inputs={inputs} steps={steps}"
        assert g.dtype == e.dtype, (g.dtype, e.dtype, context)
        assert g.shape == e.shape, (g.shape, e.shape, context)
        if e.dtype == F32:
            scale = max(1.0, float(np.max(np.abs(e[np.isfinite(e)]), initial=0.0)))
            np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-4 * scale, equal_nan=True, err_msg=context)
        else:
            np.testing.assert_array_equal(g, e, err_msg=context)


SETTINGS = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow],
                    derandomize=True)


@SETTINGS
@given(st.data())
def test_random_programs_staged_eager_and_numpy_agree(data):
    inputs, steps, outs = data.draw(programs())
    args = [jnp.asarray(data.draw(array_for(v))) for v in inputs]

    def program(*xs):
        return run_jnp(steps, outs, xs)

    eager = check_staged(program, *args, rtol=1e-5, atol=1e-5)
    expected = run_numpy(inputs, steps, outs, args)
    _assert_matches_numpy(eager, expected, inputs, steps)


def _python_scalar(array):
    """A rank-0 input as the Python number a user would pass (weakly typed, bool strong)."""
    return array.item() if array.ndim == 0 else jnp.asarray(array)


@SETTINGS
@given(st.data())
def test_random_programs_with_python_scalar_arguments(data):
    """Rank-0 inputs are passed to jit as Python scalars. Within bool < int32 < float32 weak
    and strong promotion give the same dtypes, so the NumPy oracle still applies."""
    inputs, steps, outs = data.draw(programs())
    arrays = [data.draw(array_for(v)) for v in inputs]
    args = [_python_scalar(a) for a in arrays]

    def program(*xs):
        return run_jnp(steps, outs, xs)

    jitted = omnistage.jit(program)(*args)
    eager = program(*args)
    for j, e in zip(jitted, eager):
        assert np.asarray(j).dtype == np.asarray(e).dtype
        assert j.weak_type == e.weak_type, (steps, j, e)
    expected = run_numpy(inputs, steps, outs, arrays)
    _assert_matches_numpy(jitted, expected, inputs, steps)
