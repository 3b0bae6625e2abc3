"""The differentiation API: JAX's signatures, return conventions, errors, pytrees, nesting,
composition with jit, derivative programs that read well."""
import numpy as np
import pytest

import omnistage as jax
import omnistage.numpy as jnp
from omnistage import lax

from .check import check_grads


def f_poly(x):
    return x**4


def test_nested_grad_gives_24():
    assert jax.grad(jax.grad(jax.grad(f_poly)))(1.0).item() == 24.0


def test_grad_matches_closed_form_and_jit_both_orders():
    def f(x):
        return jnp.sin(x) * jnp.exp(-x)

    x = 0.7
    expected = np.cos(x) * np.exp(-x) - np.sin(x) * np.exp(-x)
    np.testing.assert_allclose(jax.grad(f)(x), expected, rtol=1e-6)
    np.testing.assert_allclose(jax.jit(jax.grad(f))(x), expected, rtol=1e-6)
    np.testing.assert_allclose(jax.grad(jax.jit(f))(x), expected, rtol=1e-6)
    np.testing.assert_allclose(jax.jit(jax.grad(jax.jit(jax.grad(f))))(x), jax.grad(jax.grad(f))(x), rtol=1e-5)


def test_grad_over_pytrees_returns_the_argument_structure():
    def loss(params, x):
        h = jnp.tanh(x @ params["w"] + params["b"])
        return (h**2).sum()

    params = {"w": jnp.ones((3, 2)) * 0.1, "b": jnp.zeros(2)}
    x = jnp.arange(6.0).reshape(2, 3)
    g = jax.grad(loss)(params, x)
    assert set(g) == {"w", "b"}
    assert g["w"].shape == (3, 2) and g["b"].shape == (2,)
    eps = 1e-3
    w = np.asarray(params["w"], np.float64)
    num = np.zeros_like(w)
    for i in np.ndindex(w.shape):
        wp, wm = w.copy(), w.copy()
        wp[i] += eps
        wm[i] -= eps
        lp = np.sum(np.tanh(np.asarray(x) @ wp) ** 2)
        lm = np.sum(np.tanh(np.asarray(x) @ wm) ** 2)
        num[i] = (lp - lm) / (2 * eps)
    np.testing.assert_allclose(g["w"], num, rtol=1e-3, atol=1e-4)


def test_grad_errors_match_jax():
    with pytest.raises(TypeError, match="requires real- or complex-valued inputs"):
        jax.grad(lambda n: n * 2.0)(3)
    with pytest.raises(TypeError, match="Gradient only defined for scalar-output functions"):
        jax.grad(lambda x: x * 2)(jnp.ones(3))
    with pytest.raises(TypeError, match="requires real-valued outputs"):
        jax.grad(lambda z: z * z)(1.0 + 1j)
    with pytest.raises(TypeError, match="argnums"):
        jax.grad(lambda x: x, argnums=2)(1.0)
    with pytest.raises(TypeError, match="has_aux=True"):
        jax.grad(lambda x: x, has_aux=True)(1.0)


def test_integer_inputs_get_float0_cotangents_from_vjp():
    out, pullback = jax.vjp(lambda x, n: x * n, 2.0, 3)
    ct_x, ct_n = pullback(1.0)
    assert ct_x.item() == 3.0
    assert ct_n.dtype == jax.dtypes.float0
    g = jax.grad(lambda x, n: x * n, allow_int=True, argnums=(0, 1))(2.0, 3)
    assert g[1].dtype == jax.dtypes.float0


def test_holomorphic_grad():
    z = 1.0 + 2.0j
    g = jax.grad(lambda z: z**2, holomorphic=True)(z)
    np.testing.assert_allclose(g, 2 * z, rtol=1e-6)
    with pytest.raises(TypeError, match="holomorphic=True requires inputs with complex dtype"):
        jax.grad(lambda x: x**2, holomorphic=True)(1.0)


def test_complex_input_real_output_follows_jax_convention():
    # JAX: grad(|z|^2)(3+4j) = 6-8j (no conjugation of cotangents)
    g = jax.grad(lambda z: jnp.abs(z) ** 2)(3.0 + 4.0j)
    np.testing.assert_allclose(g, 6 - 8j, rtol=1e-6)


def test_jvp_and_linearize_and_vjp_agree():
    def f(x, y):
        return jnp.sin(x) * y, x + y

    x, y = jnp.array([0.1, 0.5]), jnp.array([2.0, 3.0])
    tx, ty = jnp.array([1.0, 0.0]), jnp.array([0.5, 1.0])
    out, t_out = jax.jvp(f, (x, y), (tx, ty))
    out2, f_jvp = jax.linearize(f, x, y)
    np.testing.assert_allclose(out[0], out2[0])
    for a, b in zip(t_out, f_jvp(tx, ty)):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    _, pullback = jax.vjp(f, x, y)
    ct = (jnp.array([1.0, 2.0]), jnp.array([0.5, 0.25]))
    gx, gy = pullback(ct)
    # <ct, J t> == <J^T ct, t>
    lhs = sum(float((np.asarray(c) * np.asarray(t)).sum()) for c, t in zip(ct, t_out))
    rhs = float((np.asarray(gx) * np.asarray(tx)).sum() + (np.asarray(gy) * np.asarray(ty)).sum())
    np.testing.assert_allclose(lhs, rhs, rtol=1e-5)


def test_jvp_tangent_checks():
    with pytest.raises(TypeError, match="do not match"):
        jax.jvp(jnp.sin, (1.0,), (np.float64(1.0).astype(np.float16),))
    with pytest.raises(ValueError, match="different primal and tangent shapes"):
        jax.jvp(jnp.sin, (jnp.ones(3),), (jnp.ones(2),))


def test_vjp_cotangent_checks():
    _, pullback = jax.vjp(jnp.sin, jnp.ones(3))
    with pytest.raises(ValueError, match="Shape of cotangent"):
        pullback(jnp.ones(2))


def test_jacobians_and_hessian(x64):
    def f(x):
        return jnp.array([x[0] ** 2 * x[1], jnp.sin(x[1]) * x[2]])

    x = jnp.array([1.0, 2.0, 3.0])
    expected = np.array([[2 * 1 * 2, 1.0, 0.0], [0.0, np.cos(2.0) * 3, np.sin(2.0)]])
    np.testing.assert_allclose(jax.jacfwd(f)(x), expected, rtol=1e-12)
    np.testing.assert_allclose(jax.jacrev(f)(x), expected, rtol=1e-12)
    h = jax.hessian(lambda x: (x**3).sum() + x[0] * x[1])(x)
    np.testing.assert_allclose(h, np.diag(6 * np.asarray(x)) + np.array([[0, 1, 0], [1, 0, 0], [0, 0, 0]]), rtol=1e-12)


def test_stop_gradient():
    g = jax.grad(lambda x: x * lax.stop_gradient(x))(3.0)
    assert g.item() == 3.0
    assert jax.jit(lambda x: lax.stop_gradient(x) * 2)(3.0).item() == 6.0


def test_derivative_program_is_readable_and_runnable():
    def f(x):
        y = jnp.sin(x)
        return y * x

    program = jax.make_jaxpr(jax.grad(f))(1.0)
    text = str(program)
    assert "(vjp)" in text and "test_api.py" in text
    namespace = {}
    exec(compile(text, "<grad program>", "exec"), namespace)  # noqa: S102
    fn = namespace[program.name]
    np.testing.assert_allclose(fn(np.float32(1.0))[0], jax.grad(f)(1.0), rtol=1e-6)


def test_closure_over_outer_traced_value():
    # the inner function closes over `x`, traced by the outer grad
    def outer(x):
        return jax.grad(lambda y: jnp.sin(x * y))(1.0)

    # d/dx [x cos(x)] = cos(x) - x sin(x)
    x = 0.3
    np.testing.assert_allclose(jax.grad(outer)(x), np.cos(x) - x * np.sin(x), rtol=1e-5)
    np.testing.assert_allclose(jax.jit(jax.grad(outer))(x), np.cos(x) - x * np.sin(x), rtol=1e-5)


def test_control_flow_derivatives(x64):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(3)

    def f_cond(x):
        return lax.cond(x.sum() > 0, lambda x: jnp.sin(x) * 2, lambda x: jnp.cos(x), x)

    check_grads(f_cond, (np.abs(x),))
    check_grads(f_cond, (-np.abs(x),))

    def f_scan(c, xs):
        return lax.scan(lambda c, x: (jnp.tanh(c * x + 1.0), c * x), c, xs)

    check_grads(f_scan, (x, rng.standard_normal((4, 3))))
    check_grads(lambda x: lax.fori_loop(0, 4, lambda i, c: jnp.sin(c) * 1.1, x), (x,))


def newton_sqrt_times(x):
    y = x
    while jnp.abs(y * y - 2.0).sum() > 1e-9:
        y = 0.5 * (y + 2.0 / y)
    return (y * x).sum()


def test_reverse_mode_through_a_python_while_loop(x64):
    x = np.array([1.0, 3.0])
    g = jax.grad(newton_sqrt_times)(x)
    np.testing.assert_allclose(g, np.sqrt(2.0) * np.ones(2), rtol=1e-6)
    np.testing.assert_allclose(jax.jit(jax.grad(newton_sqrt_times))(x), g, rtol=1e-9)


def test_while_loop_reverse_mode_matches_unrolled(x64):
    def f(x):
        def body(c):
            i, v = c
            return i + 1, jnp.sin(v) * 1.5

        return lax.while_loop(lambda c: c[0] < 3, body, (0, x))[1].sum()

    def unrolled(x):
        for _ in range(3):
            x = jnp.sin(x) * 1.5
        return x.sum()

    x = np.array([0.3, -0.7])
    np.testing.assert_allclose(jax.grad(f)(x), jax.grad(unrolled)(x), rtol=1e-12)
    np.testing.assert_allclose(jax.jvp(f, (x,), (np.ones(2),))[1], jax.jvp(unrolled, (x,), (np.ones(2),))[1], rtol=1e-12)


def test_custom_jvp():
    @jax.custom_jvp
    def log1pexp(x):
        return jnp.log(1.0 + jnp.exp(x))

    @log1pexp.defjvp
    def log1pexp_jvp(primals, tangents):
        (x,), (x_dot,) = primals, tangents
        return log1pexp(x), (1 - 1 / (1 + jnp.exp(x))) * x_dot

    assert jax.grad(log1pexp)(100.0).item() == 1.0
    assert jax.jit(jax.grad(log1pexp))(100.0).item() == 1.0
    np.testing.assert_allclose(jax.grad(jax.grad(log1pexp))(1.0), 0.19661194, rtol=1e-6)
    np.testing.assert_allclose(jax.jvp(log1pexp, (0.0,), (2.0,))[1], 1.0, rtol=1e-6)
    assert "custom_jvp_call" not in jax.jit(log1pexp).lower(1.0).compile().as_text()


def test_custom_vjp():
    @jax.custom_vjp
    def clip_gradient(lo, hi, x):
        return x

    def fwd(lo, hi, x):
        return x, (lo, hi)

    def bwd(res, g):
        lo, hi = res
        return (None, None, jnp.clip(g, lo, hi))

    clip_gradient.defvjp(fwd, bwd)

    def clip_sin(x):
        return jnp.sin(clip_gradient(-0.75, 0.75, x))

    assert jax.grad(clip_sin)(0.0).item() == 0.75
    np.testing.assert_allclose(jax.jit(jax.grad(clip_sin))(2.0), np.cos(2.0), rtol=1e-6)
    with pytest.raises(TypeError, match="forward-mode"):
        jax.jvp(clip_sin, (0.0,), (1.0,))


def test_missing_rule_names_the_users_line():
    from omnistage.autodiff import rules

    saved = rules.VJP.pop("sin")
    try:
        with pytest.raises(NotImplementedError, match="(?s)sin.*test_api.py"):
            jax.grad(lambda x: jnp.sin(x))(1.0)
    finally:
        rules.VJP["sin"] = saved


# Primitives whose outputs are integers or booleans: nothing to differentiate (debug_print's is
# a bool token: its tangent is zero and the print sees the primal values).
NON_DIFFERENTIABLE = {
    "and_", "argmax", "argmin", "axis_index", "bitcast_convert_type", "debug_print", "eq", "ge", "gt", "is_finite",
    "le", "lt", "ne", "not_", "or_", "population_count", "process_index", "reduce_and", "reduce_or", "reduce_xor",
    "shift_left", "shift_right_arithmetic", "shift_right_logical", "xor",
}


def test_every_primitive_has_a_jvp_and_a_vjp_rule():
    from omnistage.autodiff import rules
    from omnistage.core.primitive import registry

    missing = sorted(n for n in registry if n not in NON_DIFFERENTIABLE and not rules.has_rules(n))
    assert missing == []


def test_collectives_differentiate_like_jax():
    xs = jnp.array([1.0, 3.0, 2.0])
    # JAX 0.10.2 gives these values
    np.testing.assert_allclose(jax.vmap(jax.grad(lambda x: lax.psum(x, "i")), axis_name="i")(xs), [3, 3, 3])
    g = jax.grad(lambda xs: jax.vmap(lambda x: lax.psum(x * x, "i"), axis_name="i")(xs).sum())(xs)
    np.testing.assert_allclose(g, [6, 18, 12])
    g = jax.grad(lambda xs: jax.vmap(lambda x: lax.all_gather(x, "i")[1], axis_name="i")(xs).sum())(xs)
    np.testing.assert_allclose(g, [0, 3, 0])
    g = jax.grad(lambda xs: jax.vmap(lambda x: lax.pmax(x, "i"), axis_name="i")(xs).sum())(xs)
    np.testing.assert_allclose(g, [0, 3, 0])


def test_jacobians_of_pytrees_have_jax_layout():
    def f(x, y):
        return jnp.sin(x) * y, {"s": (x**2).sum()}

    x, y = jnp.arange(3.0), jnp.ones(3)
    j_fwd = jax.jacfwd(f, argnums=(0, 1))(x, y)
    j_rev = jax.jacrev(f, argnums=(0, 1))(x, y)
    shapes = jax.tree_util.tree_map(lambda a: a.shape, j_fwd)
    assert shapes == (((3, 3), (3, 3)), {"s": ((3,), (3,))})
    for a, b in zip(jax.tree_util.tree_leaves(j_fwd), jax.tree_util.tree_leaves(j_rev)):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    np.testing.assert_allclose(j_fwd[0][0], np.diag(np.cos(np.arange(3.0))), rtol=1e-6)
    assert jax.jacfwd(lambda x: jnp.outer(x, x))(x).shape == (3, 3, 3)
    np.testing.assert_allclose(jax.jit(jax.hessian(lambda x: (x**3).sum()))(x), np.diag(6 * np.arange(3.0)))


@pytest.mark.parametrize("capacity", [64, 3, 1])
def test_while_loop_tape_with_checkpoint_strides(capacity, monkeypatch, x64):
    """A tape smaller than the trip count (stride > 1) recomputes from checkpoints and
    gives the same gradient as the unrolled loop."""
    from omnistage.autodiff import control_flow_rules

    monkeypatch.setattr(control_flow_rules, "TAPE_CAPACITY", capacity)

    def f(x, n):
        def body(c):
            i, v = c
            return i + 1, jnp.sin(v) * 1.3 + 0.1 * v * v

        return lax.while_loop(lambda c: c[0] < n, body, (0, x))[1].sum()

    def unrolled(x, n):
        for _ in range(n):
            x = jnp.sin(x) * 1.3 + 0.1 * x * x
        return x.sum()

    x = np.array([0.3, -0.7, 1.1])
    for n in (0, 1, 7, 10):
        np.testing.assert_allclose(jax.grad(f)(x, n), jax.grad(unrolled)(x, n), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(jax.jit(jax.grad(f))(x, 10), jax.grad(unrolled)(x, 10), rtol=1e-12)


def test_custom_jvp_eager_call_runs_the_function_only():
    """As JAX: outside every transformation a custom_jvp function is just the function (the
    rule was staged on each eager call: ~0.3 s per lax.igamma call)."""
    calls = []

    @jax.custom_jvp
    def f(x):
        return jnp.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        calls.append(1)
        (x,), (t,) = primals, tangents
        return jnp.sin(x), 2.0 * t  # a deliberately different derivative

    assert float(f(0.5)) == float(np.sin(np.float32(0.5)))
    assert calls == []
    assert float(jax.grad(f)(0.5)) == 2.0  # transformations still use the rule
    assert calls
    assert float(jax.jit(jax.grad(f))(0.25)) == 2.0
