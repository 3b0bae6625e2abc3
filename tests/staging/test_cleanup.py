"""Clean-up passes: dead-code elimination keeps results, bodies and checks intact."""
import numpy as np

import omnistage
import omnistage.numpy as jnp
from omnistage import lax
from omnistage.staging.cleanup import dce
from omnistage.staging.interpret import interpret


def _prims(program):
    return [e.prim for e in program.eqns()]


def test_dce_drops_unused_statements_and_keeps_used_ones():
    def f(x):
        unused = jnp.sin(x) * 2.0  # noqa: F841
        return jnp.cos(x) + 1.0

    program = omnistage.make_jaxpr(f)(np.float32(1.0))
    assert "sin" in _prims(program)  # make_jaxpr shows everything that was staged
    cleaned = dce(program).check()
    assert _prims(cleaned) == ["cos", "add"]
    assert np.allclose(interpret(cleaned, np.float32(1.0))[0], np.cos(1.0) + 1.0)


def test_dce_keeps_every_output_of_a_multi_output_statement_that_is_partly_used():
    def f(x):
        q, r = jnp.linalg.qr(x)
        return q

    program = dce(omnistage.make_jaxpr(f)(np.eye(3, dtype=np.float32))).check()
    assert "qr" in _prims(program)


def test_dce_removes_unused_bodies_and_cleans_inside_used_ones():
    def f(x, n):
        dead = lax.fori_loop(0, n, lambda i, c: c + 1.0, x)  # noqa: F841

        def body(i, c):
            waste = jnp.exp(c)  # noqa: F841
            return c * 2.0

        return lax.fori_loop(0, n, body, x)

    program = omnistage.make_jaxpr(f)(np.float32(1.0), 3)
    cleaned = dce(program).check()
    text = str(cleaned)
    assert text.count("def ") == 1 + 2  # the program and one loop's test and body
    assert "exp(" not in text
    assert float(interpret(cleaned, np.float32(1.0), np.int32(3))[0]) == 8.0


def test_dce_drops_unused_constants():
    table = np.arange(10.0, dtype=np.float32)

    def f(x):
        jnp.asarray(table) * x  # result unused
        return x + 1.0

    cleaned = dce(omnistage.make_jaxpr(f)(np.float32(1.0))).check()
    assert cleaned.consts == {}


def test_jit_runs_the_cleaned_program():
    calls = []

    def f(x):
        calls.append(1)
        jnp.sin(x)
        return x * 3.0

    compiled = omnistage.jit(f).lower(np.float32(2.0)).compile()
    assert "sin" not in compiled.as_text()
    assert float(omnistage.jit(f)(np.float32(2.0))) == 6.0


def test_cse_merges_repeated_statements_and_keeps_results():
    from omnistage.staging.cleanup import cleanup, cse

    def f(x):
        a = jnp.sin(x) * 2.0
        b = jnp.sin(x) * 2.0  # the same two statements again
        c = jnp.sin(x) * 3.0  # same sin, different multiplier
        return a + b + c

    program = omnistage.make_jaxpr(f)(np.float32(0.5))
    merged = cse(program).check()
    assert _prims(merged).count("sin") == 1
    assert _prims(merged).count("mul") == 2
    cleaned = cleanup(program).check()
    x = np.float32(0.5)
    expected = 4 * np.sin(x) + 3 * np.sin(x)
    assert np.allclose(interpret(cleaned, x)[0], expected)


def test_cse_leaves_control_flow_alone_and_renames_its_operands():
    from omnistage.staging.cleanup import cleanup

    def f(x, n):
        y = jnp.exp(x)
        z = jnp.exp(x)
        return lax.fori_loop(0, n, lambda i, c: c + z, y)

    program = cleanup(omnistage.make_jaxpr(f)(np.float32(1.0), 3)).check()
    assert _prims(program).count("exp") == 1
    assert np.allclose(float(interpret(program, np.float32(1.0), np.int32(3))[0]), 4 * np.e)
    assert np.isclose(float(omnistage.jit(f)(np.float32(1.0), 3)), 4 * np.e, rtol=1e-6)


def test_division_by_a_broadcast_becomes_one_reciprocal_per_divisor_element():
    from omnistage.staging.cleanup import cleanup, reciprocal_divisors

    def softmax(x):
        e = jnp.exp(x - x.max(1, keepdims=True))
        return e / e.sum(1, keepdims=True)

    x = np.random.default_rng(0).standard_normal((6, 7)).astype(np.float32)
    program = omnistage.make_jaxpr(softmax)(x)
    rewritten = reciprocal_divisors(program).check()
    divs = [e for e in rewritten.eqns() if e.prim == "div"]
    assert len(divs) == 1 and rewritten.atom_aval(divs[0].ins[1]).shape == (6,)  # 6 divisions, not 42
    assert _prims(rewritten)[-1] == "mul" and "div" in _prims(program)  # make_jaxpr shows what was staged
    e = np.exp(x - x.max(1, keepdims=True))
    got = interpret(cleanup(program), x)[0]
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, e / e.sum(1, keepdims=True), rtol=3e-7)  # a rounding or two apart


def test_only_real_float_divisions_by_a_smaller_broadcast_are_rewritten():
    from omnistage.staging.cleanup import reciprocal_divisors

    cases = [
        (lambda x, s: x // s, np.arange(6, dtype=np.int32).reshape(2, 3), np.int32(4)),  # integers
        (lambda x, s: x / s, np.ones((2, 3), np.complex64), np.complex64(2)),  # complex
        (lambda x, y: x / y, np.ones((2, 3), np.float32), np.full((2, 3), 3, np.float32)),  # no broadcast
        (lambda x, s: x / s, np.ones((2, 3), np.float32), np.float32(3)),  # a literal divisor: no broadcast
    ]
    for f, *args in cases:
        program = omnistage.make_jaxpr(f)(*args)
        assert _prims(reciprocal_divisors(program).check()) == _prims(program)


# --- constant folding and pow strength reduction (cleanup.fold_constants) ------------------


def test_a_gradient_of_a_square_folds_to_multiplies_without_pow_or_select():
    from omnistage.staging.cleanup import cleanup

    def objective(v):
        return 0.5 * jnp.sum(v ** 2.0) + 0.01 * jnp.sum(v ** 2.0 * v ** 1.0)

    v = np.linspace(-2, 3, 7).astype(np.float32)
    program = omnistage.make_jaxpr(omnistage.grad(objective))(v)
    assert "pow" in _prims(program) and "select_n" in _prims(program)  # as staged: sub(2.0, 1.0), eq(2.0, 0.0)
    cleaned = cleanup(program).check()
    assert "pow" not in _prims(cleaned) and "select_n" not in _prims(cleaned)
    want = v + 0.01 * 3 * v ** 2
    np.testing.assert_allclose(interpret(cleaned, v)[0], want, rtol=1e-6)
    np.testing.assert_allclose(omnistage.jit(omnistage.grad(objective))(v), want, rtol=1e-6)
    # the square is the correctly rounded one, NumPy's `power(v, 2.0)`
    assert np.asarray(omnistage.jit(lambda x: x ** 2.0)(v)).tobytes() == np.power(v, np.float32(2.0)).tobytes()


def test_exact_cleanup_folds_literals_but_keeps_pow():
    from omnistage.staging.cleanup import cleanup

    program = omnistage.make_jaxpr(omnistage.grad(lambda v: jnp.sum(v ** 2.0)))(np.ones(3, np.float32))
    prims = _prims(cleanup(program, exact=True).check())
    assert "pow" in prims and "select_n" not in prims and "eq" not in prims


def test_folding_leaves_statements_of_traced_values_and_inexact_functions():
    from omnistage.staging.cleanup import cleanup

    def f(x, y):
        return x ** y + jnp.exp(np.float32(1.0)) + (x ** 3.0)  # exp of a literal is the kernel's to compute

    program = cleanup(omnistage.make_jaxpr(f)(np.float32(2.0), np.float32(0.5))).check()
    assert _prims(program).count("pow") == 2 and "exp" in _prims(program)
    np.testing.assert_allclose(omnistage.jit(f)(np.float32(2.0), np.float32(0.5)), 2 ** 0.5 + np.e + 8, rtol=1e-6)


def test_a_literal_predicate_picks_its_case_and_folded_values_reach_loop_bodies():
    def f(x):
        c = lax.select(np.float32(2.0) > np.float32(1.0), x, -x)
        return lax.fori_loop(0, 3, lambda i, a: a * (np.float32(3.0) - np.float32(1.0)), c)

    x = np.arange(3, dtype=np.float32)
    program = omnistage.make_jaxpr(f)(x)
    from omnistage.staging.cleanup import cleanup

    cleaned = cleanup(program).check()
    assert "select_n" not in _prims(cleaned)
    np.testing.assert_array_equal(interpret(cleaned, x)[0], x * 8)
    np.testing.assert_array_equal(omnistage.jit(f)(x), x * 8)


def test_products_without_contraction_are_multiplies_that_keep_negative_zero():
    # dot_general(1.0, x) is what the transpose of a product with a unit cotangent stages;
    # summed from +0 (BLAS, a loop nest, np.matmul) it made -0.0 * 1.0 +0.0, as XLA does not
    from omnistage.staging.cleanup import cleanup

    x = np.array([-0.0, 1.0, -2.0, 0.0, np.inf, np.nan], np.float32)
    y = np.array([[-1.0, 0.5], [2.0, -0.0]], np.float32)
    cases = [
        (lambda x: lax.dot_general(np.float32(1.0), x, (((), ()), ((), ()))), (x,)),
        (lambda x, y: lax.dot_general(x, y, (((), ()), ((), ()))), (x, y)),  # an outer product
        (lambda y: lax.dot_general(y, y, (((), ()), ((0,), (0,)))), (y,)),  # batched
    ]
    for f, args in cases:
        program = omnistage.jit(f).lower(*args).program
        cleaned = cleanup(program).check()
        assert "dot_general" not in _prims(cleaned) and "mul" in _prims(cleaned)
        want = np.asarray(f(*args))  # the eager rule: products, no sum
        for got in (interpret(cleaned, *args)[0], omnistage.jit(f)(*args)):
            got = np.asarray(got)
            assert got.shape == want.shape and got.tobytes() == want.tobytes()
    eager = np.asarray(lax.dot_general(np.float32(1.0), x, (((), ()), ((), ()))))
    assert np.signbit(eager[0]) and np.isnan(eager[5]) and eager[4] == np.inf
    outer = np.asarray(lax.dot_general(x, y, (((), ()), ((), ()))))
    np.testing.assert_array_equal(np.signbit(outer), np.signbit(np.multiply.outer(x, y)))
    # a contraction stays a product
    assert "dot_general" in _prims(cleanup(omnistage.jit(lambda y: y @ y).lower(y).program))


def test_reductions_transposes_and_broadcasts_over_axes_of_size_one_are_reshapes():
    # what a pmap on one device stages around every value: the psum over the device axis,
    # the transpose of a (1, m, n) gradient, the broadcast of an update back to (1, m, n)
    from omnistage.staging.cleanup import cleanup

    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 4, 3)).astype(np.float32)
    m = rng.standard_normal((4, 3)).astype(np.float32)
    v = rng.standard_normal(3).astype(np.float32)
    cases = [  # (function, argument, the primitives left)
        (lambda x: lax.reduce_sum(x, (0,)), x, ["reshape"]),
        (lambda x: lax.reduce_max(x, (0,)), x, ["reshape"]),
        (lambda x: lax.transpose(x, (1, 0, 2)), x, ["reshape"]),  # the 4 and the 3 stay in order
        (lambda m: lax.broadcast_in_dim(m, (1, 4, 3), (1, 2)), m, ["reshape"]),
        (lambda x: lax.reduce_sum(x, ()), x, []),  # nothing reduced: x itself
        # what moves, reduces or adds an axis of more than one element stays itself
        (lambda x: lax.transpose(x, (0, 2, 1)), x, ["transpose"]),
        (lambda x: lax.reduce_sum(x, (0, 1)), x, ["reduce_sum"]),
        (lambda v: lax.broadcast_in_dim(v, (1, 4, 3), (2,)), v, ["broadcast_in_dim"]),
        # a unit axis inside a row is left to the row group (its reductions become scalars)
        (lambda v: lax.broadcast_in_dim(v, (3, 1), (0,)), v, ["broadcast_in_dim"]),
        (lambda m: lax.reduce_sum(m[:, :1], (1,)), m, ["slice", "reduce_sum"]),
        (lambda m: lax.broadcast_in_dim(m, (4, 3), (0, 1)), m, []),
    ]
    for f, a, prims in cases:
        cleaned = cleanup(omnistage.jit(f).lower(a).program).check()
        assert _prims(cleaned) == prims, (_prims(cleaned), prims)
        want = np.asarray(f(a))
        for got in (interpret(cleaned, a)[0], omnistage.jit(f)(a)):
            got = np.asarray(got)
            assert got.shape == want.shape
            np.testing.assert_array_equal(got, want)


def test_a_pmap_step_on_one_device_has_no_reduction_over_the_device_axis():
    from omnistage.staging.cleanup import cleanup

    def step(w, x):
        g = omnistage.grad(lambda w: jnp.sum(jnp.tanh(x @ w) ** 2))(w)
        return w - 0.1 * lax.psum(g, "d")

    w = np.random.default_rng(4).standard_normal((1, 5, 3)).astype(np.float32)
    x = np.random.default_rng(5).standard_normal((1, 2, 5)).astype(np.float32)
    program = omnistage.jit(omnistage.vmap(step, axis_name="d")).lower(w, x).program
    cleaned = cleanup(program).check()
    assert "reduce_sum" in _prims(program) and "reduce_sum" not in _prims(cleaned)
    got = np.asarray(omnistage.pmap(step, axis_name="d")(w, x))
    np.testing.assert_allclose(got, np.asarray(interpret(program, w, x)[0]), rtol=2e-6, atol=1e-6)
    np.testing.assert_allclose(got[0], np.asarray(omnistage.jit(lambda w, x: w - 0.1 * omnistage.grad(
        lambda w: jnp.sum(jnp.tanh(x @ w) ** 2))(w))(w[0], x[0])), rtol=2e-6, atol=1e-6)
