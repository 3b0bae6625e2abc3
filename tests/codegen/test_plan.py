"""Fusion planning (omnistage/codegen/plan.py) and what it does to compile size: a value read by
several statements of one loop nest is a scalar there, not an array or an unrolled row."""
import numpy as np
import pytest

import omnistage
import omnistage.numpy as jnp
from omnistage import random
from omnistage.codegen.emit_cpu import kind_of
from omnistage.codegen.plan import Plan


def plan_of(f, *args, share=True):
    program = omnistage.jit(f).lower(*args).compile().program
    return program, Plan(program, kind_of, share_elementwise=share)


def producer_of(program, prim):
    return next(e.outs[0] for e in program.eqns() if e.prim == prim)


def test_a_value_read_twice_in_one_loop_nest_is_fused():
    program, plan = plan_of(lambda x: jnp.exp(x) * jnp.exp(x) + jnp.exp(x), np.ones(8, np.float32))
    exp = producer_of(program, "exp")
    assert not plan.materialized(exp)
    assert Plan(program, kind_of).materialized(exp)  # the rule is the CPU emitter's choice


def test_a_value_read_by_two_loop_nests_stays_materialized():
    def softmax(x):
        e = jnp.exp(x - x.max(1, keepdims=True))
        return e / e.sum(1, keepdims=True)

    program, plan = plan_of(softmax, np.ones((4, 8), np.float32))
    assert plan.materialized(producer_of(program, "exp"))


def test_a_value_read_at_another_shape_stays_materialized():
    program, plan = plan_of(lambda x: (jnp.sin(x) + jnp.sin(x)[:, None]).sum(), np.ones(8, np.float32))
    assert plan.materialized(producer_of(program, "sin"))


def test_a_normal_sampler_is_one_loop_nest_without_unrolled_copies():
    f = omnistage.jit(lambda k: random.normal(k, (10, 3)), backend="cpu")
    key = random.PRNGKey(0)
    text = f.lower(key).compile().as_text()
    # one threefry call per output word, once per element (not once per column of a row)
    assert text.count("_rt.threefry2x32(") == 2 and text.count("_rt.empty(") == 1
    code = [ln for ln in text.splitlines() if not ln.startswith("_c")]  # hoisted constants aside
    assert len(code) < 150
    want = omnistage.jit(lambda k: random.normal(k, (10, 3)), backend="interpreter")(key)
    np.testing.assert_array_equal(np.asarray(f(key)), np.asarray(want))


def test_typed_literals_are_module_constants_numba_freezes():
    f = omnistage.jit(lambda x: jnp.where(x > 0.5, x * 1.67, -x * 1.67), backend="cpu")
    x = np.linspace(-1, 1, 7, dtype=np.float32)
    text = f.lower(x).compile().as_text()
    (name,) = [ln.split(" = ")[0] for ln in text.splitlines() if ln.endswith("= np.float32(1.67)")]
    body = text.split("def ")[1]
    assert "np.float32(1.67)" not in body and body.count(name) == 2  # defined once, used twice
    np.testing.assert_array_equal(np.asarray(f(x)), np.where(x > 0.5, x * np.float32(1.67), -x * np.float32(1.67)))


def test_a_tiny_last_axis_is_the_outer_loop_so_the_long_one_vectorizes():
    f = omnistage.jit(lambda k: random.normal(k, (100, 3)), backend="cpu")
    key = random.PRNGKey(1)
    loops = [ln.strip() for ln in f.lower(key).compile().as_text().splitlines() if ln.strip().startswith("for ")]
    assert loops == ["for _i1 in range(3):", "for _i0 in range(100):"]
    want = omnistage.jit(lambda k: random.normal(k, (100, 3)), backend="interpreter")(key)
    np.testing.assert_array_equal(np.asarray(f(key)), np.asarray(want))


@pytest.mark.filterwarnings("error::RuntimeWarning")  # no interpreter fallback
def test_a_loop_nest_with_its_tiny_axis_outermost_runs_after_the_row_group_it_reads():
    def f(x, w):
        y = jnp.sin(x) * 3.0  # a (16, 8) row group member, still pending...
        return y.max(1), jnp.cos(y[:, :3]) + w  # ...when this (16, 3) nest is emitted

    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((16, 8)).astype(np.float32), rng.standard_normal((16, 3)).astype(np.float32)
    got = omnistage.jit(f, backend="cpu")(x, w)
    want = omnistage.jit(f, backend="interpreter")(x, w)
    for g, v in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(v), rtol=2e-6, atol=1e-6)


def test_hoisted_constants_never_take_a_program_variables_name():
    from omnistage.codegen.emit_cpu import hoist_constants

    (code,), constants = hoist_constants(["def f(x):\n    _c0_float32 = x * np.float32(2.0)\n"
                                          "    return _c0_float32 + np.float32(2.0) + np.uint32(3)"])
    assert constants == ["_c1_float32 = np.float32(2.0)", "_c2_uint32 = np.uint32(3)"]
    assert code.endswith("return _c0_float32 + _c1_float32 + _c2_uint32")
