"""The vmap API: axis specifications, errors with JAX's messages, nesting, and composition
with jit and grad in every order."""
import numpy as np
import pytest

import omnistage
import omnistage.numpy as jnp
from omnistage import lax
from tests.helpers import assert_same
from tests.vectorize.check import check_vmap


def rand(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


# --- axes -----------------------------------------------------------------------------------------


def test_negative_in_axes_count_from_the_end(rng):
    x = rand(rng, 3, 4)
    check_vmap(lambda a: a * 2, x, in_axes=-1)
    check_vmap(lambda a: a * 2, x, in_axes=-2)


def test_none_in_axes_broadcast_the_argument(rng):
    x, y = rand(rng, 3, 4), rand(rng, 4)
    out = omnistage.vmap(lambda a, b: a + b, in_axes=(0, None))(x, y)
    assert_same(out, x + y)


def test_list_in_axes_are_tuples():
    x = np.ones((2, 3), np.float32)
    out = omnistage.vmap(lambda a, b: a - b, in_axes=[0, 1])(x, x.T)
    assert out.shape == (2, 3)


def test_pytree_in_axes_prefix(rng):
    params = {"w": rand(rng, 3, 2), "b": rand(rng, 2)}
    xs = rand(rng, 5, 3)

    def predict(p, x):
        return jnp.tanh(x @ p["w"] + p["b"])

    out = omnistage.vmap(predict, in_axes=({"w": None, "b": None}, 0))(params, xs)
    assert_same(out, np.tanh(xs @ params["w"] + params["b"]), rtol=1e-5)
    out = omnistage.vmap(predict, in_axes=(None, 0))(params, xs)
    assert_same(out, np.tanh(xs @ params["w"] + params["b"]), rtol=1e-5)
    batched_b = {"w": params["w"], "b": rand(rng, 5, 2)}
    out = omnistage.vmap(predict, in_axes=({"w": None, "b": 0}, 0))(batched_b, xs)
    assert_same(out, np.tanh(xs @ params["w"] + batched_b["b"]), rtol=1e-5)


def test_tuple_inputs_and_outputs_with_out_axes(rng):
    x, y = rand(rng, 4, 3), rand(rng, 4, 2)
    a, b = omnistage.vmap(lambda p: (p[0].sum(), p[1] * 2), out_axes=(0, 1))((x, y))
    assert_same(a, x.sum(1), rtol=1e-5)
    assert_same(b, (y * 2).T)


def test_keyword_arguments_are_mapped_over_axis_0(rng):
    x, y = rand(rng, 4, 3), rand(rng, 4, 3)
    out = omnistage.vmap(lambda a, scale: a * scale, in_axes=(1,))(x.T, scale=y)
    assert_same(out, x * y)


def test_out_axes_none_for_unbatched_output(rng):
    x = rand(rng, 4, 3)
    out, c = omnistage.vmap(lambda a: (a * 2, jnp.ones(2)), out_axes=(0, None))(x)
    assert_same(out, x * 2)
    assert_same(c, np.ones(2, np.float32))


def test_unbatched_output_is_broadcast_and_negative_out_axes(rng):
    x = rand(rng, 4, 3)
    assert omnistage.vmap(lambda a: jnp.zeros(2))(x).shape == (4, 2)
    assert omnistage.vmap(lambda a: a, out_axes=-1)(x).shape == (3, 4)


def test_axis_size_without_mapped_arguments():
    out = omnistage.vmap(lambda: jnp.arange(3), axis_size=2)()
    assert_same(out, np.stack([np.arange(3, dtype=np.int32)] * 2))


def test_weak_types_survive_vmap():
    out = omnistage.vmap(lambda a: a * 2)(jnp.ones(3))
    assert out.dtype == np.float32
    z = omnistage.vmap(lambda a, s: a + s, in_axes=(0, None))(jnp.ones(3, dtype=np.int32), 2)
    assert z.dtype == np.int32


# --- errors ----------------------------------------------------------------------------------------


def test_inconsistent_sizes_are_listed_like_jax():
    def f(x, y):
        return x + y

    with pytest.raises(ValueError) as e:
        omnistage.vmap(f)(np.ones(2, np.float32), np.ones(3, np.float32))
    msg = str(e.value)
    assert msg.startswith("vmap got inconsistent sizes for array axes to be mapped:")
    assert "* one axis had size 2: axis 0 of argument x of type f32[2]" in msg
    assert "* one axis had size 3: axis 0 of argument y of type f32[3]" in msg


def test_most_axes_message_for_majority_size():
    with pytest.raises(ValueError, match=r"most axes \(2 of them\) had size 2, e.g. axis 0 of argument a"):
        omnistage.vmap(lambda a, b, c: a)(np.ones(2), np.ones(2), np.ones(5))


def test_axis_out_of_range():
    with pytest.raises(ValueError, match="vmap was requested to map its argument along axis 2, which implies "
                                         r"that its rank should be at least 3, but is only 2 \(its shape is \(2, 3\)\)"):
        omnistage.vmap(lambda a: a, in_axes=2)(np.ones((2, 3)))


def test_in_axes_length_must_match_arguments():
    with pytest.raises(ValueError, match=r"len\(in_axes\)=2, len\(args\)=1"):
        omnistage.vmap(lambda a: a, in_axes=(0, 0))(np.ones(2))


def test_in_axes_leaves_must_be_ints_or_none():
    with pytest.raises(TypeError, match="vmap in_axes must be an int, None, or"):
        omnistage.vmap(lambda a: a, in_axes=0.5)
    with pytest.raises(TypeError, match=r"vmap in_axes must be an int, None, or \(nested\) container"):
        omnistage.vmap(lambda a: a, in_axes=("x",))
    with pytest.raises(TypeError, match="vmap out_axes must be an int, None, or"):
        omnistage.vmap(lambda a: a, out_axes=[0.5])


def test_in_axes_must_be_a_tree_prefix():
    with pytest.raises(ValueError, match="vmap in_axes specification must be a tree prefix"):
        omnistage.vmap(lambda a: a, in_axes=((0, 0),))(np.ones(2))


def test_all_none_in_axes_need_axis_size():
    with pytest.raises(ValueError, match="vmap must have at least one non-None value in in_axes"):
        omnistage.vmap(lambda a: a, in_axes=None)(np.ones(2))


def test_mapped_output_with_out_axes_none():
    with pytest.raises(ValueError, match="vmap has mapped output but out_axes is None"):
        omnistage.vmap(lambda a: a, out_axes=None)(np.ones(2))


def test_non_callable():
    with pytest.raises(TypeError, match="Expected a callable value"):
        omnistage.vmap(3)


def test_shape_error_inside_vmap_names_the_user_line():
    with pytest.raises(TypeError) as e:
        omnistage.vmap(lambda a, b: lax.add(a, b))(np.ones((2, 3), np.float32), np.ones((2, 4), np.float32))
    assert "test_api.py" in str(e.value)


# --- printing ----------------------------------------------------------------------------------------


def test_make_jaxpr_prints_runnable_batched_program_marked_vmap(rng):
    x = rand(rng, 4, 3)

    def f(a):
        return jnp.sin(a).sum()

    program = omnistage.make_jaxpr(omnistage.vmap(f))(x)
    text = str(program)
    assert "(vmap)" in text and "test_api.py" in text
    ns = {}
    exec(compile(text, "<vmap program>", "exec"), ns)  # noqa: S102
    (got,) = ns[program.name](jnp.asarray(x))
    assert_same(got, np.sin(x).sum(1), rtol=1e-5)


# --- nesting and composition -----------------------------------------------------------------------------


def test_nested_vmap_pairwise_distances(rng):
    a, b = rand(rng, 4, 3), rand(rng, 5, 3)

    def dist(p, q):
        return jnp.sqrt(jnp.sum((p - q) ** 2))

    d = omnistage.vmap(omnistage.vmap(dist, (None, 0)), (0, None))(a, b)
    expected = np.sqrt(((a[:, None] - b[None]) ** 2).sum(-1))
    assert_same(d, expected, rtol=1e-5)
    d = omnistage.jit(omnistage.vmap(omnistage.vmap(dist, (None, 0)), (0, None)))(a, b)
    assert_same(d, expected, rtol=1e-5)


def _loss(w, x):
    return jnp.tanh(jnp.dot(w, x)) ** 2


def _per_example_grads(w, xs):
    return np.stack([np.asarray(omnistage.grad(_loss)(w, x)) for x in xs])


def test_per_example_gradients_in_every_order(rng):
    w, xs = rand(rng, 3), rand(rng, 6, 3)
    expected = _per_example_grads(w, xs)
    grad, vmap, jit = omnistage.grad, omnistage.vmap, omnistage.jit
    assert_same(vmap(grad(_loss), (None, 0))(w, xs), expected, rtol=1e-5)
    assert_same(jit(vmap(grad(_loss), (None, 0)))(w, xs), expected, rtol=1e-5)
    assert_same(vmap(jit(grad(_loss)), (None, 0))(w, xs), expected, rtol=1e-5)
    assert_same(vmap(grad(jit(_loss)), (None, 0))(w, xs), expected, rtol=1e-5)


def test_gradient_of_a_vmapped_loss(rng):
    w, xs = rand(rng, 3), rand(rng, 6, 3)
    expected = _per_example_grads(w, xs).sum(0)
    grad, vmap, jit = omnistage.grad, omnistage.vmap, omnistage.jit
    total = lambda v: vmap(_loss, (None, 0))(v, xs).sum()  # noqa: E731
    assert_same(grad(total)(w), expected, rtol=1e-5, atol=1e-6)
    assert_same(jit(grad(total))(w), expected, rtol=1e-5, atol=1e-6)
    assert_same(grad(lambda v: vmap(jit(_loss), (None, 0))(v, xs).sum())(w), expected, rtol=1e-5, atol=1e-6)


def test_jacobian_rows_by_vmap_of_vjp(rng):
    x = rand(rng, 3)
    f = lambda v: jnp.sin(v) * v.sum()  # noqa: E731
    _, pullback = omnistage.vjp(f, x)
    jac = omnistage.vmap(pullback)(np.eye(3, dtype=np.float32))[0]
    assert_same(jac, np.asarray(omnistage.jacrev(f)(x)), rtol=1e-5)


def test_jit_of_vmap_compiles_with_numba(rng):
    xs = rand(rng, 8, 3, 3)

    def f(m):
        return jnp.trace(m @ m.T) + jnp.max(m)

    got = omnistage.jit(omnistage.vmap(f))(xs)
    expected = np.stack([np.trace(m @ m.T) + m.max() for m in xs])
    assert_same(got, expected, rtol=1e-5)


def test_closures_over_outer_traced_values(rng):
    w, xs = rand(rng, 3), rand(rng, 4, 3)

    @omnistage.jit
    def g(v, batch):
        return omnistage.vmap(lambda x: jnp.dot(v, x))(batch)

    assert_same(g(w, xs), xs @ w, rtol=1e-5)


def test_python_control_flow_on_batched_values(rng):
    xs = rand(rng, 6, 3)

    def f(x):
        total = jnp.zeros(())
        for v in x:
            if v > 0:
                total = total + v
            else:
                total = total - 2 * v
        return total

    check_vmap(f, xs)


def test_unmapped_arguments_reach_the_function_unchanged(rng):
    from functools import partial

    @partial(omnistage.jit, static_argnums=1)
    def scale(x, n):
        return x * n

    xs = rand(rng, 3, 2)
    assert_same(omnistage.vmap(scale, in_axes=(0, None))(xs, 3), xs * 3)
    seen = []
    omnistage.vmap(lambda a, b: seen.append(type(b)) or a, in_axes=(0, None))(xs, np.ones(2))
    assert seen == [np.ndarray]


def test_seed_spectral_radius_of_128_matrices_with_jit_of_vmap(rng):
    # the seeds' example (004): batched_spectral_radius = jax.vmap(jax_spectral_radius), jitted
    def jax_spectral_radius(mat):
        eigvals = jnp.linalg.eigvals(mat)
        spectral_radius = jnp.max(jnp.abs(eigvals))
        return spectral_radius

    batch = jnp.asarray(rand(rng, 128, 3, 3))
    assert jax_spectral_radius(batch).shape != (128,)
    batched_spectral_radius = omnistage.vmap(jax_spectral_radius)
    jit_batched_spectral_radius = omnistage.jit(batched_spectral_radius)
    expected = np.abs(np.linalg.eigvals(np.asarray(batch))).max(-1)
    np.testing.assert_allclose(np.asarray(batched_spectral_radius(batch)), expected, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(jit_batched_spectral_radius(batch)), expected, rtol=1e-5)
