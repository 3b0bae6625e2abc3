"""omnistage.pure_callback: host Python functions called from eager, interpreted and compiled
programs, batched by vmap_method as JAX does, with JAX's errors for grad and for vmap without a
method."""
import os

import numpy as np
import pytest

import omnistage as jax
import omnistage.numpy as jnp
from tests.helpers import run_printed_program

HERE = os.path.basename(__file__)


def host_sin(a):
    assert isinstance(a, np.ndarray)  # the callback sees NumPy arrays
    return np.sin(a)


def sin_twice(x):
    return jax.pure_callback(host_sin, jax.ShapeDtypeStruct(x.shape, x.dtype), x) * 2.0


def test_pure_callback_eager_interpreted_and_from_the_printed_program():
    x = jnp.arange(3.0)
    want = 2 * np.sin(np.arange(3.0, dtype=np.float32))
    np.testing.assert_allclose(sin_twice(x), want, rtol=1e-6)
    np.testing.assert_allclose(jax.jit(sin_twice, backend="interpreter")(x), want, rtol=1e-6)
    program = jax.make_jaxpr(sin_twice)(x)
    assert "pure_callback(x, callback='host_sin#" in str(program)
    np.testing.assert_allclose(run_printed_program(program, x)[0], want, rtol=1e-6)


def test_pure_callback_compiled_with_several_results_of_every_rank_and_dtype():
    def host(a, b):
        return {"sum": np.float32(a.sum() + b), "flags": a > 1, "count": np.arange(4, dtype=np.int64).reshape(2, 2)}

    spec = {"sum": jax.ShapeDtypeStruct((), np.float32), "flags": jax.ShapeDtypeStruct((3,), np.bool_),
            "count": jax.ShapeDtypeStruct((2, 2), np.int32)}

    def f(x, y):
        out = jax.pure_callback(host, spec, x, b=y)
        return out["sum"] + 1.0, out["flags"], out["count"] * 2

    args = (jnp.arange(3.0), jnp.float32(0.5))
    compiled = jax.jit(f)
    got, want = compiled(*args), f(*args)
    assert "numba.objmode" in compiled.lower(*args).compile().as_text()
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
        assert g.dtype == w.dtype
    assert float(got[0]) == 4.5 and got[2].dtype == np.int32


def test_same_callback_gives_the_same_program_on_retrace():
    texts = {str(jax.make_jaxpr(sin_twice)(jnp.ones(2))) for _ in range(2)}
    assert len(texts) == 1


@pytest.mark.parametrize("method,seen", [
    ("sequential", [(2,), (2,)] * 3),
    ("expand_dims", [(3, 2), (1, 2)]),
    ("broadcast_all", [(3, 2), (3, 2)]),
    ("legacy_vectorized", [(3, 2), (2,)]),
])
def test_vmap_methods_call_the_function_as_jax_does(method, seen):
    shapes = []

    def host_mul(a, b):
        shapes.extend([a.shape, b.shape])
        return a * b

    def f(x, y):
        return jax.pure_callback(host_mul, jax.ShapeDtypeStruct(x.shape, x.dtype), x, y, vmap_method=method)

    xs, y = jnp.arange(6.0).reshape(2, 3), jnp.array([1.0, 10.0])
    got = jax.vmap(f, in_axes=(1, None))(xs, y)  # batch on axis 1: moved to the front
    assert shapes == seen
    np.testing.assert_allclose(got, np.stack([f(xs[:, i], y) for i in range(3)]), rtol=1e-6)
    np.testing.assert_allclose(jax.jit(jax.vmap(f, in_axes=(1, None)), backend="interpreter")(xs, y), got)


def test_grad_and_vmap_without_a_method_raise_naming_the_users_line():
    with pytest.raises(ValueError, match=r"(?s)Pure callbacks do not support JVP.*" + HERE):
        jax.grad(lambda x: sin_twice(x).sum())(jnp.ones(2))
    with pytest.raises(NotImplementedError, match=r"(?s)vmap_method.*" + HERE):
        jax.vmap(sin_twice)(jnp.ones((3, 2)))


def test_results_of_the_wrong_shape_raise_and_dtypes_are_converted():
    def f(x):
        return jax.pure_callback(lambda a: np.ones(5), jax.ShapeDtypeStruct((2,), np.float32), x)

    with pytest.raises(ValueError, match=r"shape \(5,\).*declares \(2,\)"):
        f(jnp.ones(2))
    g = lambda x: jax.pure_callback(lambda a: np.sin(a).astype(np.float64), jax.ShapeDtypeStruct((2,), np.float32), x)
    assert g(jnp.ones(2)).dtype == np.float32
    with pytest.raises(ValueError, match=r"(?s)vmap_method.*" + HERE):
        jax.pure_callback(host_sin, jax.ShapeDtypeStruct((), np.float32), 1.0, vmap_method="loop")
    with pytest.raises(TypeError, match=r"(?s)result_shape_dtypes.*" + HERE):
        jax.pure_callback(host_sin, 3, 1.0)


def test_compiled_loop_calls_back_every_iteration_and_errors_propagate():
    from omnistage import lax

    def step(c, x):
        y = jax.pure_callback(lambda a, b: np.float32(a * 2 + b), jax.ShapeDtypeStruct((), np.float32), c, x)
        return y, y

    last, ys = jax.jit(lambda xs: lax.scan(step, jnp.float32(0.0), xs))(jnp.arange(4.0))
    np.testing.assert_array_equal(ys, [0.0, 1.0, 4.0, 11.0])
    assert float(last) == 11.0

    def bad(x):
        return jax.pure_callback(lambda a: 1 / 0, jax.ShapeDtypeStruct((), np.float32), x)

    with pytest.raises(ZeroDivisionError):
        jax.jit(bad)(1.0)
