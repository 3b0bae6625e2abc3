"""A transformed function whose output (return value) is not an array gets an error that calls
it the output, names its type, where it sits in the pytree and the function's file:line, and
says what to do (issue #16: it used to say "Argument 'result' ..." as if it were an argument)."""
import os

import pytest

import omnistage as jax
import omnistage.numpy as jnp

HERE = os.path.abspath(__file__)


def returns_str(x):
    return "result"


def yields(x):
    yield x


def returns_named(x):
    return {"a": x, "b": [x, "name"]}


TRANSFORMS = {
    "jit": lambda f: jax.jit(f, backend="interpreter")(jnp.ones(())),
    "grad": lambda f: jax.grad(f)(jnp.ones(())),
    "value_and_grad": lambda f: jax.value_and_grad(f)(jnp.ones(())),
    "vmap": lambda f: jax.vmap(f)(jnp.ones(2)),
    "make_jaxpr": lambda f: jax.make_jaxpr(f)(jnp.ones(())),
}


@pytest.mark.parametrize("transform", list(TRANSFORMS))
@pytest.mark.parametrize("fun, what, hint", [
    (returns_str, "is a str ('result')", "from outside the transformed function"),
    (yields, "is a generator (<generator object", "instead of yielding"),
    (returns_named, "holds a str at ['b'][1] ('name')", "from outside the transformed function"),
])
def test_non_array_output_is_named_as_the_output(transform, fun, what, hint):
    with pytest.raises(TypeError) as info:
        TRANSFORMS[transform](fun)
    message = str(info.value)
    line = fun.__code__.co_firstlineno
    assert message.startswith(f"The output (return value) of {fun.__name__} at {HERE}:{line} {what}"), message
    assert hint in message and "Argument" not in message
    assert f"transformed by {transform} must" in message  # the transformation the user called
