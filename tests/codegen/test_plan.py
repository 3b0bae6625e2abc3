"""Fusion planning (omnistage/codegen/plan.py) and what it does to compile size: a value read by
several statements of one loop nest is a scalar there, not an array or an unrolled row."""
import numpy as np

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
    assert len(text.splitlines()) < 150
    want = omnistage.jit(lambda k: random.normal(k, (10, 3)), backend="interpreter")(key)
    np.testing.assert_array_equal(np.asarray(f(key)), np.asarray(want))
