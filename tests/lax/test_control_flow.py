"""lax control flow: `cond`, `switch`, `while_loop`, `fori_loop`, `scan`, `map`.

Each runs eagerly, under jit, from its printed program and through the checked interpreter
(`check_staged`); bodies are nested closure-free functions in the printed program; branch
and carry mismatches raise TypeErrors that show both sides, as in JAX."""
import ast

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import omnistage
import omnistage.numpy as jnp
from omnistage import lax
from omnistage.staging import interpret_checked
from omnistage.staging.program import ProgramCheckError
from tests.helpers import assert_same, check_staged, run_printed_program

X = np.arange(6, dtype=np.float32).reshape(2, 3)


# --- cond -------------------------------------------------------------------------------------


@pytest.mark.parametrize("pred", [True, False])
def test_cond_picks_the_branch(pred):
    f = lambda p, x: lax.cond(p, lambda a: a * 2.0, lambda a: a - 1.0, x)
    out = check_staged(f, pred, X)
    np.testing.assert_allclose(out, X * 2 if pred else X - 1)


@pytest.mark.parametrize("pred", [0, 3, -1])
def test_cond_integer_predicate_is_nonzero_test(pred):
    out = check_staged(lambda p, x: lax.cond(p, lambda: x + 1.0, lambda: x), pred, X)
    np.testing.assert_allclose(out, X + 1 if pred else X)


def test_cond_pytree_operands_and_outputs():
    def f(p, d):
        return lax.cond(p, lambda t: {"a": t["a"] + 1, "b": (t["b"], t["a"])},
                        lambda t: {"a": t["a"] * 3, "b": (t["b"] * 0, t["a"])}, d)

    d = {"a": np.float32(2.0), "b": np.arange(3, dtype=np.int32)}
    out = check_staged(f, True, d)
    assert float(out["a"]) == 3.0 and out["b"][0].dtype == np.int32


def test_cond_captured_values_become_operands():
    def f(p, x, y):
        return lax.cond(p, lambda: x * y, lambda: x)

    program = omnistage.make_jaxpr(f)(True, X, X)
    program.check()
    for node in ast.walk(program.fn):
        if isinstance(node, ast.FunctionDef) and node is not program.fn:
            free = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
            bound = {a.arg for a in node.args.args} | {
                t.id for s in node.body if isinstance(s, ast.Assign) for t in ast.walk(s.targets[0]) if isinstance(t, ast.Name)}
            assert free <= bound | set(omnistage.core.primitive.registry) | {"np"}, "bodies are closure-free"
    check_staged(f, False, X, X)


def test_cond_printed_program_has_nested_bodies_above_the_statement():
    program = omnistage.make_jaxpr(lambda p, x: lax.cond(p, jnp.sin, jnp.cos, x))(True, X)
    names = [type(s).__name__ for s in program.body]
    assert names[:2] == ["FunctionDef", "FunctionDef"]
    text = str(program)
    assert "cond(p, x, branches=(" in text
    assert run_printed_program(program, jnp.asarray(False), jnp.asarray(X))[0].dtype == np.float32


def test_cond_operand_keyword():
    assert float(lax.cond(True, lambda a: a + 1, lambda a: a, operand=1.0)) == 2.0
    with pytest.raises(TypeError, match="no positional operands"):
        lax.cond(True, lambda a: a, lambda a: a, 1.0, operand=1.0)


def test_nested_cond():
    def f(p, q, x):
        return lax.cond(p, lambda: lax.cond(q, lambda: x * 3.0, lambda: x + 1.0), lambda: x)

    for p in (True, False):
        for q in (True, False):
            check_staged(f, p, q, X)


def test_cond_weak_types_join():
    out = omnistage.jit(lambda p, x: lax.cond(p, lambda: x, lambda: jnp.float32(1.0)))(True, 2.0)
    assert out.dtype == np.float32 and not out.weak_type


def test_cond_branch_dtype_mismatch_shows_both_sides():
    with pytest.raises(TypeError, match=r"identical types(.|\n)*i32\[3\] in false_fun vs f32\[3\] in true_fun"):
        lax.cond(True, lambda x: x, lambda x: x.astype(jnp.int32), jnp.ones(3))


def test_cond_branch_shape_mismatch_shows_both_sides():
    with pytest.raises(TypeError, match=r"f32\[2\] in false_fun vs f32\[3\] in true_fun \(shapes differ\)"):
        omnistage.jit(lambda x: lax.cond(x[0] > 0, lambda: x, lambda: x[:2]))(jnp.ones(3))


def test_cond_branch_structure_mismatch():
    with pytest.raises(TypeError, match="same type structure"):
        lax.cond(True, lambda x: (x, x), lambda x: x, 1.0)


@pytest.mark.parametrize("pred, msg", [
    (np.ones(2, bool), "Pred must be a scalar"),
    (1.5, "Pred type must be either boolean or number"),
    (None, "cond predicate is None"),
])
def test_cond_predicate_checks(pred, msg):
    with pytest.raises(TypeError, match=msg):
        lax.cond(pred, lambda: 1.0, lambda: 2.0)


def test_cond_requires_callables():
    with pytest.raises(TypeError, match="should be callable"):
        lax.cond(True, 1.0, lambda: 2.0)


def test_program_check_catches_disagreeing_branches():
    program = omnistage.make_jaxpr(lambda p, x: lax.cond(p, lambda: x + 1.0, lambda: x))(True, X)
    body = program.subprogram(program.eqns()[-1].params["branches"][1])
    body.fn.body[-1].value.elts[0] = ast.Name(body.in_names[0], ast.Load())  # still fine
    program.check()
    program.avals[body.in_names[0]] = omnistage.core.aval.ShapedArray((5,), np.float32)
    with pytest.raises(ProgramCheckError):
        program.check()


# --- switch -----------------------------------------------------------------------------------


@pytest.mark.parametrize("index", [-3, 0, 1, 2, 7])
def test_switch_clamps_the_index(index):
    branches = [lambda a: a + 1.0, lambda a: a * 2.0, lambda a: -a]
    out = check_staged(lambda i, x: lax.switch(i, branches, x), index, X)
    k = min(max(index, 0), 2)
    np.testing.assert_allclose(out, [X + 1, X * 2, -X][k])


def test_switch_checks():
    with pytest.raises(ValueError, match="Empty branch sequence"):
        lax.switch(0, [], 1.0)
    with pytest.raises(TypeError, match="Index type must be an integer"):
        lax.switch(1.0, [lambda x: x], 1.0)
    with pytest.raises(TypeError, match="sequence of callables"):
        lax.switch(0, lambda x: x, 1.0)
    assert float(lax.switch(5, [lambda x: x + 1], 1.0)) == 2.0


# --- while_loop -------------------------------------------------------------------------------


def test_while_loop_counts():
    f = lambda x, n: lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 2.0), (0, x))
    i, y = check_staged(f, X, 5)
    assert int(i) == 5
    np.testing.assert_allclose(y, X * 32)


def test_while_loop_zero_iterations():
    out = check_staged(lambda x: lax.while_loop(lambda c: c > 100.0, lambda c: c + 1.0, x), np.float32(3.0))
    assert float(out) == 3.0


def test_while_loop_statement_form():
    program = omnistage.make_jaxpr(lambda x, n: lax.while_loop(lambda c: c < n, lambda c: c * 2.0, x))(1.0, 10.0)
    e = program.eqns()[-1]
    assert e.prim == "while_loop"
    assert set(e.params) == {"cond_fun", "body_fun", "cond_nconsts", "body_nconsts"}
    assert e.params["cond_nconsts"] == 1 and e.params["body_nconsts"] == 0


def test_while_loop_cond_fun_must_return_bool_scalar():
    with pytest.raises(TypeError, match="cond_fun must return a boolean scalar"):
        omnistage.jit(lambda x: lax.while_loop(lambda c: c, lambda c: c + 1, x))(1.0)


def test_while_loop_carry_mismatch_shows_both_sides():
    with pytest.raises(TypeError, match=r"f32\[\] in the input carry vs f32\[2\] in the body_fun output"):
        omnistage.jit(lambda x: lax.while_loop(lambda c: c < 3, lambda c: jnp.ones(2) * c, x))(1.0)


def test_while_loop_promotes_weak_inputs_like_jax():
    out = omnistage.jit(lambda: lax.while_loop(lambda c: c < 3.5, lambda c: c + jnp.float32(1), 0))()
    assert out.dtype == np.float32 and float(out) == 4.0


# --- fori_loop --------------------------------------------------------------------------------


def test_fori_loop_static_bounds_stage_a_scan():
    f = lambda x: lax.fori_loop(0, 4, lambda i, v: v + i, x)
    assert float(check_staged(f, np.float32(1.5))) == 7.5
    assert [e.prim for e in omnistage.make_jaxpr(f)(1.5).eqns()][-1] == "scan"


def test_fori_loop_traced_bounds_stage_a_while_loop():
    f = lambda x, n: lax.fori_loop(0, n, lambda i, v: v * 2.0, x)
    assert float(check_staged(f, np.float32(1.0), 5)) == 32.0
    assert float(check_staged(f, np.float32(1.0), -2)) == 1.0
    assert "while_loop" in [e.prim for e in omnistage.make_jaxpr(f)(1.0, 3).eqns()]


def test_fori_loop_unroll_needs_static_bounds():
    with pytest.raises(ValueError, match="statically known"):
        omnistage.jit(lambda n: lax.fori_loop(0, n, lambda i, v: v, 1.0, unroll=2))(3)


@settings(max_examples=25, deadline=None)
@given(st.integers(-3, 12), st.lists(st.floats(-10, 10, width=32), min_size=3, max_size=3))
def test_fori_loop_matches_python(n, xs):
    x = np.asarray(xs, np.float32)

    def body(i, v):
        return v * np.float32(0.5) + i

    expected = x
    for i in range(n):
        expected = (expected * np.float32(0.5) + np.float32(i)).astype(np.float32)
    got = omnistage.jit(lambda v, k: lax.fori_loop(0, k, body, v))(x, n)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


# --- scan and map -----------------------------------------------------------------------------


def test_scan_carry_and_stacked_outputs():
    def f(xs, c0):
        def body(c, x):
            c = c + x
            return c, (c * 2.0, x > 0)
        return lax.scan(body, c0, xs)

    c, (ys, pos) = check_staged(f, X, np.zeros(3, np.float32))
    np.testing.assert_allclose(c, X.sum(0))
    np.testing.assert_allclose(ys, np.cumsum(X, 0) * 2)
    assert pos.dtype == np.bool_ and pos.shape == (2, 3)


def test_scan_reverse():
    c, ys = check_staged(lambda xs: lax.scan(lambda c, x: (c + x, c), np.float32(0), xs, reverse=True),
                         np.arange(4, dtype=np.float32))
    np.testing.assert_allclose(ys, [6, 5, 3, 0])


def test_scan_with_length_and_no_xs():
    c, ys = check_staged(lambda x: lax.scan(lambda c, _: (c * 2.0, c), x, None, length=3), np.float32(1))
    assert float(c) == 8.0
    np.testing.assert_allclose(ys, [1, 2, 4])


def test_scan_of_length_zero():
    f = lambda c: lax.scan(lambda c, x: (c + x, x * 2), c, jnp.zeros((0, 2)))
    c, ys = check_staged(f, np.zeros(2, np.float32))
    assert ys.shape == (0, 2)


@pytest.mark.parametrize("kwargs, xs, msg", [
    ({}, None, "no values to scan over"),
    ({"length": 3}, np.ones(4), "disagrees with leading axis sizes"),
    ({}, (np.ones(2), np.ones(3)), "different leading axis sizes"),
    ({"unroll": 0}, np.ones(2), "positive `int`"),
])
def test_scan_argument_checks(kwargs, xs, msg):
    with pytest.raises(ValueError, match=msg):
        lax.scan(lambda c, x: (c, x), 0.0, xs, **kwargs)


def test_scan_carry_mismatch():
    with pytest.raises(TypeError, match=r"carry input and carry output must have identical types(.|\n)*f32\[\]"):
        omnistage.jit(lambda x: lax.scan(lambda c, x: (c.astype(jnp.int32), None), x[0], x))(jnp.ones(3))


def test_scan_body_must_return_a_pair():
    with pytest.raises(TypeError, match="must be a pair"):
        lax.scan(lambda c, x: c, 0.0, jnp.ones(3))


def test_map():
    out = check_staged(lambda xs: lax.map(lambda x: (x * 2.0, x.sum()), xs), X)
    np.testing.assert_allclose(out[0], X * 2)
    np.testing.assert_allclose(out[1], X.sum(1))
    np.testing.assert_allclose(lax.map(lambda x: x + 1, jnp.arange(3.0), batch_size=2), [1, 2, 3])


# --- eager, printed programs, disable_jit -------------------------------------------------------


def test_printed_program_runs_under_jit_again():
    def f(p, x):
        return lax.cond(p, lambda: lax.fori_loop(0, 3, lambda i, v: v * 2.0, x), lambda: x)

    program = omnistage.make_jaxpr(f)(True, X)
    ns = {}
    exec(compile(str(program), "<printed>", "exec"), ns)  # noqa: S102
    assert_same(omnistage.jit(ns["f"])(True, X), (f(True, X),))
    restaged = omnistage.make_jaxpr(ns["f"])(True, X)
    restaged.check()
    assert [e.prim for e in restaged.eqns()] == ["cond"]


def test_interpret_checked_runs_nested_bodies():
    program = omnistage.make_jaxpr(
        lambda x, n: lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, lax.cond(c[0] > 1, lambda: c[1] * 2.0, lambda: c[1])), (0, x))
    )(X, 4)
    out = interpret_checked(program, X, np.int32(4))
    np.testing.assert_allclose(out[1], X * 4)


def test_disable_jit_runs_python_control_flow():
    calls = []

    def true_fun(x):
        calls.append("true")
        return x

    with omnistage.disable_jit():
        lax.cond(True, true_fun, lambda x: x, 1.0)
        c, ys = lax.scan(lambda c, x: (c + x, c), 0.0, jnp.arange(3.0))
    assert calls == ["true"]
    np.testing.assert_allclose(ys, [0, 0, 1])
