"""JAX's top-level names beyond the transformations (issue 21): checkpoint/remat,
custom_gradient, closure_convert, the jax.tree module, the config context managers with the
debug_nans/debug_infs checks, ensure_compile_time_eval and the small utilities."""
import functools
import os

import numpy as np
import pytest

import omnistage as jax
import omnistage.numpy as jnp

HERE = os.path.basename(__file__)


def interp_jit(f, **kw):
    return jax.jit(f, backend="interpreter", **kw)


# --- checkpoint / remat -----------------------------------------------------------------


def _net(w, x):
    h = jnp.tanh(w * x)
    return jnp.sum(jnp.sin(h) * h)


def test_checkpoint_gradient_equals_the_plain_gradient_eager_jit_and_vmap():
    w, x = jnp.float32(0.7), jnp.arange(4.0)
    want = jax.grad(_net)(w, x)
    remat_net = jax.checkpoint(_net)
    np.testing.assert_allclose(jax.grad(remat_net)(w, x), want, rtol=1e-6)
    np.testing.assert_allclose(interp_jit(jax.grad(remat_net))(w, x), want, rtol=1e-6)
    ws = jnp.array([0.1, 0.5, -0.3])
    batched = jax.vmap(jax.grad(remat_net), in_axes=(0, None))(ws, x)
    np.testing.assert_allclose(batched, [jax.grad(_net)(v, x) for v in ws], rtol=1e-6)
    assert jax.remat is jax.checkpoint


def test_checkpoint_accepts_policies_prevent_cse_and_static_argnums():
    @functools.partial(jax.checkpoint, static_argnums=(1,), prevent_cse=False,
                       policy=jax.checkpoint_policies.dots_with_no_batch_dims_saveable)
    def f(x, n):
        for _ in range(n):  # a Python loop over the static argument
            x = jnp.sin(x)
        return x

    np.testing.assert_allclose(jax.grad(f)(0.5, 2), np.cos(np.sin(0.5)) * np.cos(0.5), rtol=1e-6)
    np.testing.assert_allclose(interp_jit(jax.grad(f), static_argnums=1)(0.5, 3), jax.grad(f)(0.5, 3), rtol=1e-6)
    for name in ("everything_saveable", "nothing_saveable", "dots_saveable", "checkpoint_dots"):
        assert callable(getattr(jax.checkpoint_policies, name))
    assert callable(jax.checkpoint_policies.save_only_these_names("a", "b"))


def test_checkpoint_rejects_a_bad_policy_and_a_traced_static_argument():
    with pytest.raises(TypeError, match="policy"):
        jax.checkpoint(_net, policy="dots")
    f = jax.checkpoint(lambda x, n: x * n, static_argnums=(1,))
    with pytest.raises(TypeError, match=r"(?s)static_argnums.*" + HERE):
        interp_jit(f)(1.0, 2.0)


# --- custom_gradient / closure_convert ------------------------------------------------------


@jax.custom_gradient
def _log1pexp(x):
    e = jnp.exp(x)

    def grad(g):
        return g * (1.0 - 1.0 / (1.0 + e))

    return jnp.log(1.0 + e), grad


@jax.custom_gradient
def _scaled_mul(x, y):
    return x * y, lambda ct: (ct * y, 10.0 * ct * x)


def test_custom_gradient_uses_the_rule_eager_jit_and_vmap():
    assert float(jax.grad(_log1pexp)(100.0)) == 1.0  # the naive gradient is nan here
    np.testing.assert_allclose(jax.grad(_log1pexp)(0.3), 1 / (1 + np.exp(-0.3)), rtol=1e-6)
    np.testing.assert_allclose(interp_jit(jax.grad(_log1pexp))(0.3), 1 / (1 + np.exp(-0.3)), rtol=1e-6)
    xs = jnp.array([-1.0, 0.0, 2.0])
    np.testing.assert_allclose(jax.vmap(jax.grad(_log1pexp))(xs), [jax.grad(_log1pexp)(v) for v in xs], rtol=1e-6)
    gx, gy = jax.grad(_scaled_mul, argnums=(0, 1))(2.0, 3.0)
    assert (float(gx), float(gy)) == (3.0, 20.0)
    assert float(_scaled_mul(2.0, 3.0)) == 6.0


def test_custom_gradient_has_no_forward_mode_and_checks_what_the_function_returns():
    with pytest.raises(TypeError, match="forward-mode"):
        jax.jvp(_log1pexp, (1.0,), (1.0,))
    bad = jax.custom_gradient(lambda x: x * 2)
    with pytest.raises(TypeError, match=r"(?s)pair.*" + HERE):
        jax.grad(bad)(1.0)


def test_closure_convert_hoists_traced_float_values_for_custom_vjp():
    def outer(a, x):
        converted, consts = jax.closure_convert(lambda z: a * jnp.sin(z), x)
        assert len(consts) == (1 if isinstance(a, jax.core.tracer.Tracer) else 0)
        return converted(x, *consts)

    np.testing.assert_allclose(outer(2.0, 1.0), 2 * np.sin(1.0), rtol=1e-6)
    np.testing.assert_allclose(jax.grad(outer)(2.0, 1.0), np.sin(1.0), rtol=1e-6)
    np.testing.assert_allclose(interp_jit(outer)(2.0, 1.0), 2 * np.sin(1.0), rtol=1e-6)
    converted, _ = jax.closure_convert(jnp.sin, 1.0)
    with pytest.raises(TypeError, match="same pytree structure"):
        converted((1.0, 2.0))


# --- jax.tree -------------------------------------------------------------------------------


def test_tree_module_matches_tree_util():
    t = {"a": 1, "b": (2, [3, None])}
    assert jax.tree.leaves(t) == [1, 2, 3]
    assert jax.tree.map(lambda x, y: x + y, t, t) == {"a": 2, "b": (4, [6, None])}
    leaves, treedef = jax.tree.flatten(t)
    assert jax.tree.unflatten(treedef, leaves) == t and jax.tree.structure(t) == treedef
    assert jax.tree.reduce(lambda a, b: a * b, t) == 6 and jax.tree.reduce(lambda a, b: a + b, [], 7) == 7
    assert jax.tree.reduce_associative(lambda a, b: a + b, [1, 2, 3, 4, 5]) == 15
    assert jax.tree.all([1, True]) and not jax.tree.all([1, 0])
    inner = jax.tree.structure((0, 0))
    assert jax.tree.transpose(jax.tree.structure([0, 0]), inner, [(1, 2), (3, 4)]) == ([1, 3], [2, 4])
    assert jax.tree.broadcast([1, 2], [(3, 4), {"a": 5}]) == [(1, 1), {"a": 2}]
    assert jax.tree.map_with_path(lambda p, x: p, {"a": 1, "b": 2}) == {"a": ("a",), "b": ("b",)}
    assert jax.tree.leaves_with_path([5]) == [((0,), 5)]


# --- config context managers and the NaN/inf checks -----------------------------------------


def test_debug_nans_names_the_op_and_the_users_line_in_eager_and_in_jit():
    f = interp_jit(lambda x: jnp.log(x) * 2.0)
    with jax.debug_nans(True):
        with pytest.raises(FloatingPointError, match=r"(?s)nan.*log.*" + HERE):
            jnp.log(jnp.float32(-1.0))
        with pytest.raises(FloatingPointError, match=r"(?s)nan.*in log.*" + HERE):
            f(-1.0)
        assert float(f(1.0)) == 0.0
    assert np.isnan(f(-1.0))  # the check ends with the block
    assert not jax.debug_nans.value


def test_debug_nans_by_config_update_reaches_cached_jit_calls():
    f = interp_jit(lambda x: jnp.sqrt(x) + 1.0)
    assert np.isnan(f(-1.0)) and np.isnan(f(-1.0))  # cached on the fast path
    jax.config.update("jax_debug_nans", True)
    try:
        with pytest.raises(FloatingPointError, match="sqrt"):
            f(-1.0)
    finally:
        jax.config.update("jax_debug_nans", False)
    assert np.isnan(f(-1.0))
    assert jax.config.overrides_open == 0


def test_debug_infs_raises_on_inf_and_not_on_nan():
    with jax.debug_infs(True):
        with pytest.raises(FloatingPointError, match="inf.*div"):
            jnp.float32(1.0) / jnp.float32(0.0)
        assert np.isnan(jnp.log(jnp.float32(-1.0)))


def test_config_states_set_their_flag_inside_the_block_only():
    with jax.enable_x64(True):
        assert jnp.arange(3.0).dtype == np.float64
        assert jax.enable_x64.value
    assert jnp.arange(3.0).dtype == np.float32
    with jax.numpy_rank_promotion("raise"), jax.default_matmul_precision("highest"), jax.checking_leaks():
        assert jax.numpy_rank_promotion.value == "raise"
        assert jax.config.jax_default_matmul_precision == "highest"
        assert jax.check_tracer_leaks.value
    assert jax.numpy_rank_promotion.value == "allow"
    for state in (jax.enable_checks, jax.log_compiles, jax.debug_key_reuse, jax.explain_cache_misses,
                  jax.no_tracing, jax.no_execution, jax.numpy_dtype_promotion, jax.default_device):
        with state(state.value if state.value is not None else None):
            pass
    with pytest.raises(TypeError, match="requires a value"):
        jax.numpy_rank_promotion()


# --- small utilities ------------------------------------------------------------------------


def test_ensure_compile_time_eval_computes_concrete_values_while_tracing():
    def f(x):
        with jax.ensure_compile_time_eval():
            y = jnp.sin(2.0)
            assert isinstance(y, jax.Array)  # concrete: Python may branch on it
            z = x + 1.0 if y > 0 else x - 1.0
        return z * y

    text = str(jax.make_jaxpr(f)(1.0))
    assert "sin" not in text and "sub" not in text
    np.testing.assert_allclose(interp_jit(f)(1.0), 2 * np.sin(2.0), rtol=1e-6)


def test_small_utilities():
    got = jax.device_get({"a": jnp.ones(2), "b": 3})
    assert type(got["a"]) is np.ndarray and got["b"] == 3
    assert jax.typeof(jnp.ones((2, 3))) == jnp.ones((2, 3)).aval and jax.typeof(jnp.ones((2, 3))).shape == (2, 3)
    assert jax.typeof(1.0).weak_type
    assert jax.float0 == np.dtype([("float0", np.void, 0)])
    assert isinstance(jax.devices()[0], jax.Device)
    assert jax.version.__version__ == jax.__version__
    assert jax.jacobian is jax.jacrev
    f = jax.named_call(jnp.sin, name="s")
    assert float(f(0.0)) == 0.0
    with jax.named_scope("block"):
        pass
    with pytest.raises(TypeError):
        jax.named_scope(3).__enter__()
    g = jax.jit(lambda x: x + 1, backend="interpreter")
    g(1.0)
    assert g._cache_size() > 0
    jax.clear_caches()
    assert g._cache_size() == 0


# --- linear_transpose -----------------------------------------------------------------------


def test_linear_transpose_of_a_matrix_product_is_the_transposed_product():
    a = jnp.arange(6.0).reshape(2, 3)
    t = jax.linear_transpose(lambda v: a @ v, jax.ShapeDtypeStruct((3,), np.float32))
    ct = jnp.array([1.0, -2.0])
    (got,) = t(ct)
    np.testing.assert_allclose(got, np.asarray(a).T @ np.asarray(ct))
    np.testing.assert_allclose(interp_jit(t)(ct)[0], got)
    cts = jnp.stack([ct, 2 * ct, -ct])
    np.testing.assert_allclose(jax.vmap(t)(cts)[0], np.stack([t(c)[0] for c in cts]), rtol=1e-6)


def test_linear_transpose_over_pytrees_and_its_errors():
    t = jax.linear_transpose(lambda x, y: (0.5 * x - 2.0 * y, x), 1.0, 1.0)
    gx, gy = t((1.0, 2.0))
    assert (float(gx), float(gy)) == (2.5, -2.0)
    with pytest.raises(TypeError, match=r"(?s)cotangent tree.*" + HERE):
        t(1.0)
    with pytest.raises(TypeError, match="cotangent type"):
        jax.linear_transpose(lambda v: 2.0 * v, jnp.ones(3))(jnp.ones(2))
    with pytest.raises(TypeError, match="float or complex"):
        jax.linear_transpose(lambda v: v * 2, jnp.arange(3))


def test_numpy_rank_promotion_raise_and_warn_are_honoured():
    with jax.numpy_rank_promotion("raise"):
        np.testing.assert_array_equal(jnp.ones((2, 3)) + jnp.ones((1, 3)), np.full((2, 3), 2.0))  # same rank: fine
        np.testing.assert_array_equal(jnp.ones(3) + 1.0, np.full(3, 2.0))  # scalars: fine
        with pytest.raises(ValueError, match=r"(?s)jax_numpy_rank_promotion='raise'.*" + HERE):
            jnp.ones((2, 3)) + jnp.ones(3)
        with pytest.raises(ValueError, match="rank_promotion"):
            interp_jit(lambda a, b: a * b)(jnp.ones((2, 3)), jnp.ones(3))
    with jax.numpy_rank_promotion("warn"):
        with pytest.warns(UserWarning, match="rank promotion"):
            jnp.ones((2, 3)) - jnp.ones(3)
    assert (jnp.ones((2, 3)) + jnp.ones(3)).shape == (2, 3)


def test_custom_gradient_binds_keyword_arguments_through_the_signature():
    @jax.custom_gradient
    def f(x, scale=2.0):
        return x * scale, lambda g: (g * 100.0, g * 0.0)

    assert float(f(3.0, scale=4.0)) == 12.0
    assert float(jax.grad(lambda x: f(x, scale=4.0))(3.0)) == 100.0


def test_enable_checks_type_checks_what_jit_compiles(monkeypatch):
    from omnistage.staging.program import Program

    checked = []
    original = Program.check
    monkeypatch.setattr(Program, "check", lambda self: checked.append(self.name) or original(self))
    f = interp_jit(lambda x: jnp.sin(x) * 2.0)
    f(1.0)
    assert checked == []
    with jax.enable_checks(True):
        np.testing.assert_allclose(f(1.0), 2 * np.sin(1.0), rtol=1e-6)
    assert len(checked) == 1


def test_no_tracing_raises_on_a_jit_cache_miss_only():
    f = interp_jit(lambda x: x * 2.0)
    f(1.0)
    with jax.no_tracing(True):
        assert float(f(3.0)) == 6.0  # cached: no tracing
        with pytest.raises(RuntimeError, match="re-tracing function.*no_tracing"):
            f(jnp.ones(3))


def test_explain_cache_misses_logs_what_changed(caplog):
    f = interp_jit(lambda x, n: x * n, static_argnums=1)
    with jax.explain_cache_misses(True), caplog.at_level("WARNING", logger="omnistage"):
        f(jnp.ones(2), 3)
        f(jnp.ones(3), 3)
        f(jnp.ones(3), 4)
    text = caplog.text
    assert "never traced before" in text
    assert "argument 0: f32[2] -> f32[3]" in text.replace("float32", "f32")
    assert "static arguments changed" in text and HERE in text


# --- flatten_util ---------------------------------------------------------------------------


def test_ravel_pytree_round_trips_and_works_under_grad_jit_and_vmap():
    from omnistage.flatten_util import ravel_pytree

    tree = {"w": jnp.arange(6.0).reshape(2, 3), "b": (jnp.float32(5.0), np.arange(2, dtype=np.int32))}
    flat, unravel = ravel_pytree(tree)
    assert flat.shape == (9,) and flat.dtype == np.float32
    back = unravel(flat)
    assert back["b"][1].dtype == np.int32 and back["w"].shape == (2, 3)
    np.testing.assert_array_equal(back["w"], tree["w"])
    np.testing.assert_array_equal(back["b"][1], [0, 1])
    params = {"w": jnp.ones((2, 2)), "b": jnp.zeros(2)}
    flat, unravel = ravel_pytree(params)
    loss = lambda v: jnp.sum(unravel(v)["w"] ** 2) + jnp.sum(unravel(v)["b"])  # noqa: E731
    np.testing.assert_array_equal(jax.grad(loss)(flat), [1, 1, 2, 2, 2, 2])  # keys sorted: b, then w
    np.testing.assert_array_equal(interp_jit(lambda v: ravel_pytree(unravel(v))[0])(flat), flat)
    np.testing.assert_array_equal(jax.vmap(lambda v: unravel(v)["b"])(jnp.stack([flat, flat + 1])), [[0, 0], [1, 1]])
    with pytest.raises(ValueError, match=r"(?s)shape \(6,\).*" + HERE):
        unravel(jnp.ones(5))
    empty, un = ravel_pytree({})
    assert empty.shape == (0,) and un(empty) == {}
