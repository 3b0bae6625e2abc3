"""Eager jnp functions run as one cached program (numpy/eager_programs.py): the op-by-op bits,
one program per avals and static arguments, and the op-by-op path wherever a program cannot
serve (its errors included)."""
import numpy as np
import pytest

import omnistage
import omnistage.nn
import omnistage.numpy as jnp
import omnistage.scipy as jsp
from omnistage.core import primitive
from omnistage.numpy import eager_programs, ufuncs

rng = np.random.default_rng(0)
A = rng.standard_normal((5, 4)).astype(np.float32)
B = rng.standard_normal((4, 3)).astype(np.float32)
COL = rng.standard_normal((5, 1)).astype(np.float32)
ONE = np.abs(rng.standard_normal((1, 1))).astype(np.float32) + 0.5
SPD = (lambda m: m @ m.T + 5 * np.eye(5, dtype=np.float32))(rng.standard_normal((5, 5)).astype(np.float32))
L = np.linalg.cholesky(SPD).astype(np.float32)

CALLS = [
    ("divide, broadcast", ufuncs.divide, (A, ONE), {}),
    ("subtract, NumPy scalar", ufuncs.subtract, (jnp.asarray(A), np.float32(2.5)), {}),
    ("multiply, int and float", ufuncs.multiply, (np.arange(4, dtype=np.int32), A[0]), {}),
    ("add, Python int", ufuncs.add, (COL, 3), {}),
    ("sum, axis", jnp.sum, (A,), {"axis": 0}),
    ("sum, keepdims and dtype", jnp.sum, (A,), {"axis": (1,), "keepdims": True, "dtype": np.float32}),
    ("mean", jnp.mean, (A,), {}),
    ("var, ddof", jnp.var, (A,), {"axis": 1, "ddof": 1}),
    ("argmax", jnp.argmax, (A,), {"axis": 0}),
    ("max, initial", jnp.max, (A,), {"initial": 1.5}),
    ("cumsum", jnp.cumsum, (A,), {"axis": 1}),
    ("dot", jnp.dot, (A, B), {}),
    ("matmul", jnp.matmul, (A, B), {}),
    ("tensordot", jnp.tensordot, (A, B), {"axes": 1}),
    ("outer", jnp.outer, (A[0], B[0]), {}),
    ("cholesky", jnp.linalg.cholesky, (SPD,), {}),
    ("solve", jnp.linalg.solve, (SPD, A), {}),
    ("det", jnp.linalg.det, (SPD,), {}),
    ("norm", jnp.linalg.norm, (A,), {"axis": 1}),
    ("scipy cholesky", jsp.linalg.cholesky, (SPD,), {"lower": True}),
    ("solve_triangular", jsp.linalg.solve_triangular, (L, A), {"lower": True}),
    ("diag", jnp.diag, (SPD,), {}),
    ("where, Python float", jnp.where, (A > 0, A, 0.0), {}),
    ("log_softmax", omnistage.nn.log_softmax, (A,), {"axis": 1}),
    ("logsumexp", omnistage.nn.logsumexp, (A,), {"axis": 0, "keepdims": True}),
    ("one_hot", omnistage.nn.one_hot, (np.array([0, 2, 1], np.int32), 3), {}),
    ("gelu", omnistage.nn.gelu, (A,), {"approximate": False}),
    ("trace", jnp.trace, (SPD,), {}),
]


def _same(got, want):
    got, want = omnistage.tree_util.tree_leaves(got), omnistage.tree_util.tree_leaves(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert type(g) is type(w)
        assert (g.dtype, g.weak_type, g.shape) == (w.dtype, w.weak_type, w.shape)
        assert np.asarray(g).tobytes() == np.asarray(w).tobytes()  # the same bits


@pytest.mark.parametrize("label,fn,args,kwargs", CALLS, ids=[c[0] for c in CALLS])
def test_an_eager_call_gives_the_op_by_op_bits_and_runs_one_cached_program(label, fn, args, kwargs, monkeypatch):
    _same(fn(*args, **kwargs), fn.__wrapped__(*args, **kwargs))
    dispatched = []
    eager_apply = primitive.eager_apply
    monkeypatch.setattr(primitive, "eager_apply", lambda *a: dispatched.append(a[0].name) or eager_apply(*a))
    with omnistage.no_tracing():  # the second call with the same avals runs the cached program
        again = fn(*args, **kwargs)
    assert dispatched == []  # one program, not a primitive at a time
    _same(again, fn.__wrapped__(*args, **kwargs))


def test_a_broadcast_division_is_a_true_division_as_numpy_not_a_reciprocal_product():
    x = np.array([[1.0], [3.0], [10.0], [7.0]], np.float32)
    y = np.array([[3.0]], np.float32)
    assert np.asarray(jnp.divide(x, y)).tobytes() == (x / y).tobytes()
    # jit is free to multiply by the reciprocal (XLA's rewrite, one rounding apart)
    np.testing.assert_allclose(omnistage.jit(jnp.divide)(x, y), x / y, rtol=1e-6)


def test_arguments_a_program_cannot_take_run_op_by_op():
    a = jnp.asarray(A)
    mask = A > 0
    np.testing.assert_allclose(jnp.sum(a, where=mask), A[mask].sum(), rtol=1e-6)  # an array keyword
    np.testing.assert_allclose(jnp.sum(a, axis=[0, 1]), A.sum(), rtol=1e-6)  # an unhashable static
    np.testing.assert_allclose(jnp.add(a, 2 ** 40), A + np.float32(2 ** 40))  # a Python int past int32
    with pytest.raises(TypeError, match="requires ndarray or scalar arguments"):
        jnp.sum([1.0, 2.0])
    with pytest.raises(TypeError, match="not aligned"):
        jnp.dot(A, A)
    with pytest.raises(ValueError, match="argmax of an empty sequence"):
        jnp.argmax(jnp.zeros(0))


def test_under_a_trace_the_function_is_staged_inline():
    text = str(omnistage.make_jaxpr(lambda x, y: jnp.mean(x / y, axis=0))(A, ONE))
    assert "div(" in text and "reduce_sum(" in text  # its primitives, in the caller's program
    grad = omnistage.grad(lambda x: jnp.sum(jnp.dot(x, B) / ONE))(A)
    np.testing.assert_allclose(grad, np.broadcast_to(B.sum(1) / ONE[0, 0], A.shape), rtol=1e-5)


def test_new_shapes_under_no_tracing_and_log_compiles_are_not_the_users_traces(capsys):
    x = rng.standard_normal((3, 7)).astype(np.float32)
    with omnistage.no_tracing():  # the user's no_tracing is about their functions
        np.testing.assert_allclose(jnp.mean(x, axis=1), x.mean(1), rtol=1e-6)
    with omnistage.log_compiles():
        jnp.mean(rng.standard_normal((2, 9)).astype(np.float32), axis=0)
    assert "compiled" not in capsys.readouterr().err  # the user compiled nothing


def test_a_function_that_needs_concrete_values_keeps_the_op_by_op_path():
    calls = []

    def first_positive(x):
        calls.append(1)
        return x[int(jnp.argmax(x > 0))]  # reads a value: cannot be traced

    wrapped = eager_programs.one_program(first_positive)
    x = np.array([-1.0, 2.0, 3.0], np.float32)
    assert float(wrapped(x)) == 2.0
    assert float(wrapped(x)) == 2.0
    assert len(calls) == 3  # the failed trace once, then op by op each time (no retrace)


def test_cached_python_float_constants_keep_the_sign_of_zero_and_nan():
    a = jnp.asarray(np.array([1.0, -1.0], np.float32))
    for _ in range(2):  # the second time the constants come from the cache
        assert np.signbit(np.asarray(a * 0.0)).tolist() == [False, True]
        assert np.signbit(np.asarray(a * -0.0)).tolist() == [True, False]
        assert np.isnan(np.asarray(a + float("nan"))).all()
        assert np.asarray(0.9 * a).tobytes() == (np.float32(0.9) * np.asarray(a)).tobytes()


def test_eager_code_over_ever_new_shapes_keeps_a_bounded_number_of_programs(monkeypatch):
    monkeypatch.setattr(eager_programs, "MAX_PROGRAMS", 4)
    traced = []
    mean = eager_programs.one_program(lambda x: traced.append(x.shape) or jnp.mean(x))
    for n in range(1, 11):
        np.testing.assert_allclose(mean(np.arange(n, dtype=np.float32)), (n - 1) / 2)
    assert len(traced) == 10
    (jitted,) = mean.programs.values()
    assert jitted._cache_size() <= 2 * 4  # a key per avals (and one per fast-path key), at most 4 shapes
    np.testing.assert_allclose(mean(np.arange(10, dtype=np.float32)), 4.5)  # the newest shapes stay cached
    assert len(traced) == 10
