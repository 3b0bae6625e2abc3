"""Python side effects inside a traced `if` or loop body (list.append, d[k] = v, obj.attr =
traced) raise one clear error at the construct, naming the user's line and the changed object,
instead of a leaked tracer failing later inside control_flow_runtime (issue #16 friction)."""
import functools
import os

import pytest

import omnistage as jax
from omnistage import errors
from omnistage.staging.mutation_watch import TracedSideEffectError

FILE = os.path.basename(__file__)


def line_of(fun, text):
    import inspect

    lines, first = inspect.getsourcelines(fun)
    return first + next(i for i, l in enumerate(lines) if text in l)


def appends_in_if(x):
    out = []
    if x > 0:
        out.append(x * 2)
    return x


def appends_constant_in_if(x):
    hits = []
    if x > 0:
        hits.append(1)  # not even traced: it would run whatever the condition
    return x + len(hits)


def appends_in_loop(x, n):
    out = []
    for i in range(n):
        out.append(x * i)
    return x


def appends_in_while(x, n):
    seen = []
    i = 0
    while i < n:
        seen.append(i)
        i += 1
    return x + i


class Model:
    def __init__(self):
        self.cache = {}
        self.last = None

    def stores_in_dict(self, x):
        if x > 0:
            self.cache["y"] = x * 3
        return x

    def stores_attribute(self, x):
        if x > 0:
            self.last = x * 3
        return x


CASES = [
    (appends_in_if, (1.0,), "`if`", "if x > 0:", "list `out`", "out.append(x * 2)"),
    (appends_constant_in_if, (1.0,), "`if`", "if x > 0:", "list `hits`", None),
    (appends_in_loop, (1.0, 3), "`for` loop", "for i in range(n):", "list `out`", "out.append(x * i)"),
    (appends_in_while, (1.0, 3), "`while` loop", "while i < n:", "list `seen`", None),
    (Model().stores_in_dict, (1.0,), "`if`", "if x > 0:", "dict `self.cache`", "self.cache[\"y\"] = x * 3"),
    (Model().stores_attribute, (1.0,), "`if`", "if x > 0:", "Model object `self`", "self.last = x * 3"),
]


@pytest.mark.parametrize("fun, args, construct, header, changed, made", CASES)
def test_side_effect_in_traced_construct_is_named_at_its_line(fun, args, construct, header, changed, made):
    with pytest.raises(TracedSideEffectError) as info:
        jax.jit(fun, backend="interpreter")(*args)
    message = str(info.value)
    assert message.startswith(f"The {construct} at {FILE}:{line_of(fun, header)} has a traced "), message
    assert f"changed the {changed}" in message and "control_flow_runtime" not in message
    if made is not None:
        assert f"traced value computed at {FILE}:{line_of(fun, made)}" in message
    assert isinstance(info.value, errors.TracerBoolConversionError)  # JAX's error family


def test_side_effects_under_grad_are_caught_too():
    with pytest.raises(TracedSideEffectError, match="list `out`"):
        jax.grad(appends_in_if)(1.0)


def test_static_conditions_and_changes_outside_the_construct_are_fine():
    def f(x, flag):
        out = [x]
        if flag:  # static: plain Python
            out.append(x * 2)
        if x > 0:  # traced, but the list changes after it
            y = out[-1] * 2
        else:
            y = x
        out.append(y)
        return out

    got = jax.jit(f, static_argnums=1, backend="interpreter")(1.0, True)
    assert [float(v) for v in got] == [1.0, 2.0, 4.0]


def test_lazily_computed_attributes_are_no_side_effect():
    class Config:
        @functools.cached_property
        def scale(self):
            return 2.0

    def f(x, cfg):
        if x > 0:
            y = x * cfg.scale  # the first access stores the cached value in cfg.__dict__
        else:
            y = x
        return y

    cfg = Config()
    assert float(jax.jit(lambda x: f(x, cfg), backend="interpreter")(1.5)) == 3.0
