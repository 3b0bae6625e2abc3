"""Python control flow on traced values is converted wherever the traced call reaches the
user's function: through lambdas, callable objects, `functools.partial`, bound methods,
decorators, functions passed as arguments, closure variables and globals, and recursion
(issue #16 "friction", #19), under `jit`, `grad`, `vmap`, `jacfwd`/`jacrev` and `pmap`, and
not where `python_control_flow=False` asks for JAX's behaviour."""
import functools

import numpy as np
import pytest

import omnistage as jax
import omnistage.numpy as jnp
from omnistage import errors


def bump(x):
    if x > 1.0:
        return x * 2.0
    return x - 1.0


def bump_above(x, k):
    if x > k:
        return x * 2.0
    return x - 1.0


def apply_to(fn, x):
    return fn(x)


def decorated(fn):
    @functools.wraps(fn)
    def wrapper(*args):
        return fn(*args) + 10.0

    return wrapper


class Bumper:
    def __init__(self, k):
        self.k = k

    def __call__(self, x):
        if x > self.k:
            return x * 2.0
        return x - 1.0

    def method(self, x):
        return bump_above(x, self.k)


def doubled(x, n):
    """Recursion on a static depth: JAX traces it (the `if` is on a Python int)."""
    if n == 0:
        return x
    return doubled(x * 2.0, n - 1)


def nested_recursion(x):
    def countdown(y, n):
        if n == 0:
            return y
        return countdown(y + 1.0, n - 1)

    return countdown(x, 3)


def ijit(fun, **kw):
    return jax.jit(fun, backend="interpreter", **kw)  # tracing is the subject: no Numba build


WRAPPERS = {
    "lambda": lambda: (lambda v: bump(v)),
    "callable object": lambda: Bumper(1.0),
    "partial": lambda: functools.partial(bump_above, k=1.0),
    "bound method": lambda: Bumper(1.0).method,
    "lambda calling an object": lambda: (lambda v: Bumper(1.0)(v)),
    "function passed as an argument": lambda: functools.partial(apply_to, bump),
    "lambda passing a function": lambda: (lambda v: apply_to(bump, v)),
    "closure variable": lambda: (lambda inner: (lambda v: inner(v)))(bump),
    "decorator with functools.wraps": lambda: (lambda v: decorated(bump)(v) - 10.0),
}


@pytest.mark.parametrize("name", list(WRAPPERS))
def test_jit_grad_vmap_convert_through_wrappers(name):
    fun = WRAPPERS[name]()
    assert float(ijit(fun)(2.0)) == 4.0
    assert float(ijit(fun)(0.5)) == -0.5
    assert float(jax.grad(fun)(2.0)) == 2.0
    assert float(jax.grad(fun)(0.5)) == 1.0
    np.testing.assert_array_equal(jax.vmap(fun)(jnp.array([2.0, 0.5])), [4.0, -0.5])


def test_default_jit_converts_through_a_lambda_and_an_object():
    np.testing.assert_array_equal(jax.jit(lambda v: bump(v))(jnp.float32(2.0)), 4.0)
    np.testing.assert_array_equal(jax.jit(Bumper(1.0))(jnp.float32(0.5)), -0.5)


def test_jacobians_and_pmap_convert_the_users_function():
    assert float(jax.jacfwd(lambda v: bump(v))(2.0)) == 2.0
    assert float(jax.jacrev(Bumper(1.0))(0.5)) == 1.0
    assert float(jax.hessian(lambda v: bump(v) ** 2)(2.0)) == 8.0
    out = jax.pmap(lambda v: bump(v))(jnp.array([2.0]))
    np.testing.assert_array_equal(out, [4.0])


def test_python_control_flow_false_keeps_jaxs_error_through_a_lambda():
    with pytest.raises(errors.TracerBoolConversionError):
        ijit(lambda v: bump(v), python_control_flow=False)(2.0)


def test_lambda_wrapper_stages_the_same_program_as_the_function():
    def plain(x):
        return jnp.sin(x) * 2.0 + x

    direct = [e.prim for e in jax.make_jaxpr(plain)(1.0).eqns()]
    wrapped = jax.make_jaxpr(lambda v: plain(v))(1.0)
    wrapped.check()
    assert [e.prim for e in wrapped.eqns()] == direct
    staged_if = jax.make_jaxpr(lambda v: bump(v))(1.0)
    assert [e.prim for e in staged_if.eqns()] == ["gt", "cond"]


def test_lambdas_made_in_a_loop_share_one_rewrite():
    from omnistage.staging import convert

    made = [lambda v, k=k: bump_above(v, k) for k in (1.0, 3.0)]
    converted = [convert(f) for f in made]
    assert converted[0].__code__ is converted[1].__code__
    assert [float(ijit(f)(2.0)) for f in made] == [4.0, 1.0]


def test_recursion_on_a_static_depth_traces_as_in_jax():
    assert float(ijit(doubled, static_argnums=1)(1.5, 3)) == 12.0
    assert float(jax.grad(doubled)(1.5, 3)) == 8.0  # grad closes over the int, as JAX
    assert float(ijit(nested_recursion)(2.0)) == 5.0
    program = jax.make_jaxpr(doubled, static_argnums=1)(1.5, 3)
    assert [e.prim for e in program.eqns()] == ["mul", "mul", "mul"]


def test_nested_recursive_helper_converts_without_warnings(recwarn):
    ijit(nested_recursion)(2.0)
    assert not [w for w in recwarn if "omnistage" in str(w.message)]


def test_grad_closes_over_non_differentiated_arguments_as_jax():
    def ones_times(x, n):
        return jnp.sum(jnp.ones(n) * x)  # n must stay a Python int: it is a shape

    assert float(jax.grad(ones_times)(2.0, 3)) == 3.0
    assert float(jax.grad(ones_times)(2.0, n=4)) == 4.0
    value, g = jax.value_and_grad(lambda x, n: bump(x) * n)(2.0, 3)
    assert (float(value), float(g)) == (12.0, 6.0)
    assert float(jax.jit(jax.grad(lambda x, y: bump(x) * y))(2.0, 3.0)) == 6.0


def test_python_control_flow_false_holds_through_grad_vmap_and_nested_jit():
    inner = jax.jit(bump)  # default: converts when traced on its own
    for fun, x in ((jax.grad(bump), 2.0), (jax.vmap(bump), jnp.ones(2)), (lambda v: inner(v), 2.0)):
        with pytest.raises(errors.TracerBoolConversionError):
            ijit(fun, python_control_flow=False)(x)
    assert float(inner(2.0)) == 4.0  # its own conversion is untouched
    assert float(ijit(jax.grad(bump))(2.0)) == 2.0


def test_error_in_an_unconvertible_function_says_why_it_was_not_converted():
    namespace = {}
    exec("def typed_at_a_prompt(x):\n    if x > 0:\n        return x\n    return -x\n", namespace)
    with pytest.raises(errors.TracerBoolConversionError) as info:
        ijit(namespace["typed_at_a_prompt"])(1.0)
    message = str(info.value)
    assert "could not convert the Python control flow of typed_at_a_prompt" in message
    assert "source is not available" in message and "Define typed_at_a_prompt in a file" in message
    with pytest.raises(errors.TracerBoolConversionError) as info:
        ijit(bump, python_control_flow=False)(1.0)  # converted, just not asked to be: no note
    assert "could not convert" not in str(info.value)
