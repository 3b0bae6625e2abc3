"""The rewrite of Python control flow on traced values (`omnistage.staging.convert`).

Converted functions match plain Python on concrete values, stage cond / while_loop where a
condition is traced, keep plain Python semantics where it is static, and reject what cannot
be staged with errors that name the construct, the variable and the user's line."""
import ast
import functools
import importlib.util
import inspect
import os
import traceback

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import omnistage
import omnistage.numpy as jnp
from omnistage import errors
from omnistage.staging import convert, converted_source
from omnistage.staging.control_flow_runtime import (
    ControlFlowConversionTypeError, UndefinedVariableError, UnsupportedControlFlowError,
)
from tests.helpers import check_staged

THIS_FILE = os.path.basename(__file__)


def jit(f):
    return omnistage.jit(convert(f))


def line_of(f, text):
    lines, first = inspect.getsourcelines(f)
    return first + next(i for i, l in enumerate(lines) if text in l)


def prims(f, *args):
    program = omnistage.make_jaxpr(convert(f))(*args)
    program.check()
    return [e.prim for e in program.eqns()]


# --- the examples JAX rejects -------------------------------------------------------------------


def absneg(x, neg):
    return -x if neg else x


def count_to(n):
    i = 0
    while i < n:
        i += 1
    return i


def double_above(x, threshold):
    if x > threshold:
        return x * 2
    return x


def newton_sqrt(a, steps):
    x = a
    for _ in range(steps):
        x = x - (x * x - a) / (2 * x)
    return x


def alternate(x, n):
    total = 0.0
    for i in range(n):
        if i % 2 == 0:
            if x > 0:
                total = total + x
            else:
                total = total - x
        else:
            total = total * 0.5
    return total


@pytest.mark.parametrize("neg", [True, False])
def test_conditional_expression_on_traced_flag(neg):
    assert float(jit(absneg)(np.float32(3.0), neg)) == absneg(3.0, neg)
    assert "cond" in prims(absneg, 3.0, neg)
    with pytest.raises(errors.TracerBoolConversionError):
        omnistage.jit(absneg, python_control_flow=False)(3.0, neg)  # unconverted: JAX's behaviour


@pytest.mark.parametrize("n", [0, 1, 7])
def test_while_with_traced_bound(n):
    out = jit(count_to)(n)
    assert int(out) == count_to(n) and out.dtype == np.int32
    assert "while_loop" in prims(count_to, n)


def test_traced_while_stages_its_test_only_inside_the_loop():
    # the first evaluation of the test (which finds it traced) leaves no dead statement
    assert prims(count_to, 5) == ["while_loop"]


@pytest.mark.parametrize("x", [3.0, 0.5])
def test_return_inside_traced_if(x):
    assert float(jit(double_above)(np.float32(x), 1.0)) == double_above(x, 1.0)
    assert "return_value = x * 2" in converted_source(double_above)


@pytest.mark.parametrize("steps", [0, 1, 5])
def test_traced_number_of_newton_steps(steps):
    np.testing.assert_allclose(jit(newton_sqrt)(np.float32(2.0), steps), newton_sqrt(2.0, steps), rtol=1e-6)
    assert "while_loop" in prims(newton_sqrt, 2.0, steps)


@pytest.mark.parametrize("x, n", [(1.5, 5), (-1.5, 4), (2.0, 0)])
def test_nested_ifs_inside_traced_loop(x, n):
    np.testing.assert_allclose(jit(alternate)(np.float32(x), n), alternate(x, n), rtol=1e-6)


def test_converted_function_passes_check_staged():
    check_staged(convert(alternate), np.float32(1.5), 5)
    check_staged(convert(double_above), np.float32(3.0), np.float32(1.0))
    check_staged(convert(newton_sqrt), np.float32(2.0), 3)


# --- static conditions keep Python semantics ---------------------------------------------------


def test_static_condition_runs_only_the_taken_branch():
    log = []

    def f(x, flag):
        if flag:
            log.append("true")
            y = x + 1
        else:
            log.append("false")
            y = x - 1
        return y

    out = omnistage.jit(convert(f), static_argnums=1)(np.float32(1.0), True)
    assert log == ["true"] and float(out) == 2.0
    assert "cond" not in prims(lambda x: convert(f)(x, False), 1.0)


def test_static_loops_run_in_python():
    def f(x):
        for i in range(3):
            x = x * 2.0
        k = 0
        while k < 2:
            k += 1
            x = x + k
        return x

    assert prims(f, 1.0).count("mul") == 3
    assert "while_loop" not in prims(f, 1.0)
    assert float(jit(f)(1.0)) == f(1.0)


def test_static_and_or_not_short_circuit():
    log = []

    def side(v):
        log.append(v)
        return v

    def f(x):
        a = False and side(1)
        b = True or side(2)
        c = not a
        return x if c else -x

    assert float(jit(f)(2.0)) == 2.0 and log == []


def test_loop_condition_becoming_traced_switches_to_a_staged_loop():
    def f(x):
        y = 1.0
        while y < 100.0:
            y = y * x
        return y

    assert float(jit(f)(np.float32(3.0))) == f(3.0)


def test_traced_and_or_not():
    def f(x, y):
        if x > 0 and y > 0:
            return x + y
        if not (x > 0) or y < -5:
            return x - y
        return x * y

    for a, b in [(1.0, 2.0), (-1.0, 2.0), (1.0, -2.0), (1.0, -6.0), (-3.0, -9.0)]:
        assert float(jit(f)(np.float32(a), np.float32(b))) == f(a, b)


def test_traced_and_of_numbers_keeps_python_value_semantics():
    def f(x, y):
        return (x and y), (x or y)

    for a, b in [(0.0, 2.0), (3.0, 2.0), (3.0, 0.0)]:
        got = jit(f)(np.float32(a), np.float32(b))
        assert [float(g) for g in got] == list(f(a, b))


def test_elif_chain():
    def classify(x):
        if x < -1:
            r = -1.0
        elif x < 1:
            r = 0.0
        else:
            r = 1.0
        return r

    for v in (-3.0, 0.0, 5.0):
        assert float(jit(classify)(np.float32(v))) == classify(v)


def test_variables_unchanged_by_branches_stay_static():
    def f(x):
        n = 3
        if x > 0:
            y = x * n
        else:
            y = x
        return jnp.zeros(n) + y  # n is still a Python int here

    np.testing.assert_allclose(jit(f)(np.float32(2.0)), np.full(3, 6.0))


def test_python_scalar_branches_are_promoted_like_jnp():
    def f(x):
        if x > 0:
            y = 1
        else:
            y = 2.5
        return y

    out = jit(f)(np.float32(1.0))
    assert float(out) == 1.0 and out.dtype == np.float32


# --- rejected constructs -------------------------------------------------------------------------


def test_variable_defined_in_one_branch_and_used_after():
    def f(x):
        if x > 0:
            y = x * 2
        return y + 1

    with pytest.raises(UndefinedVariableError) as info:
        jit(f)(1.0)
    msg = str(info.value)
    assert "'y'" in msg and "only in the true branch" in msg and "`if`" in msg
    assert f"{THIS_FILE}:{line_of(f, 'if x > 0')}" in msg


def test_variable_defined_in_one_branch_and_unused_is_fine():
    def f(x):
        if x > 0:
            tmp = x * 2
            x = tmp
        return x

    assert float(jit(f)(np.float32(2.0))) == 4.0


@pytest.mark.parametrize("other, what", [("x.astype(jnp.int32)", "dtypes differ"), ("x[:2]", "shapes differ")])
def test_branches_with_different_types(other, what):
    namespace = {"jnp": jnp}
    exec(  # noqa: S102 - a function written to a real file would be the same; exec keeps the test short
        "def f(x):\n    if x[0] > 0:\n        y = x\n    else:\n        y = " + other + "\n    return y\n",
        namespace,
    )
    f = namespace["f"]  # exec-made code has no source: convert leaves it unchanged
    assert convert(f) is f

    def g(x):
        if x[0] > 0:
            y = x
        else:
            y = x.astype(jnp.int32) if what == "dtypes differ" else x[:2]
        return y

    with pytest.raises(ControlFlowConversionTypeError) as info:
        jit(g)(jnp.ones(3))
    msg = str(info.value)
    assert "Variable 'y'" in msg and what in msg and "true branch" in msg and "false branch" in msg
    assert f"{THIS_FILE}:{line_of(g, 'if x[0] > 0')}" in msg


def while_with_break(x, n):
    i = 0
    while i < n:
        i += 1
        if i > 1:
            break
    return x + i


def while_with_continue(x, n):
    i = 0
    while i < n:
        i += 1
        if i > 1:
            continue
        x = x + 1
    return x + i


def while_with_return(x, n):
    i = 0
    while i < n:
        i += 1
        if i > 1:
            return x
    return x + i


@pytest.mark.parametrize("stmt, f", [
    ("break", while_with_break), ("continue", while_with_continue), ("return", while_with_return),
])
def test_exits_inside_traced_while_loop(stmt, f):
    # static bounds: plain Python, exits work
    assert float(omnistage.jit(convert(f), static_argnums=1)(np.float32(1.0), 3)) == f(1.0, 3)
    with pytest.raises(UnsupportedControlFlowError) as info:
        jit(f)(1.0, 3)
    msg = str(info.value)
    assert f"`{stmt}` inside a `while`" in msg and f"{THIS_FILE}:{line_of(f, 'while i < n')}" in msg
    assert isinstance(info.value, errors.TracerBoolConversionError)


def test_break_inside_traced_for_range():
    def f(x, n):
        for i in range(n):
            if i > 2:
                break
            x = x + 1
        return x

    with pytest.raises(UnsupportedControlFlowError, match=r"`break` inside a `for`(.|\n)*lax.fori_loop"):
        jit(f)(1.0, 5)
    assert float(omnistage.jit(convert(f), static_argnums=1)(1.0, 5)) == f(1.0, 5)


def test_raise_inside_traced_if():
    def f(x):
        if x < 0:
            raise ValueError("negative")
        return x

    with pytest.raises(UnsupportedControlFlowError, match=r"`raise` inside an `if`"):
        jit(f)(1.0)
    with pytest.raises(ValueError, match="negative"):
        convert(f)(-1.0)  # static: plain Python


def test_traced_condition_must_be_scalar():
    def f(x):
        if x > 0:
            x = x * 2
        return x

    with pytest.raises(ControlFlowConversionTypeError, match=r"traced array of shape \(3,\)(.|\n)*jnp.where"):
        jit(f)(jnp.ones(3))


def test_loop_carry_changing_dtype():
    def f(x, n):
        i = 0
        while i < n:
            x = x > 0
            i += 1
        return x

    with pytest.raises(ControlFlowConversionTypeError) as info:
        jit(f)(np.float32(1.0), 3)
    msg = str(info.value)
    assert "variable 'x': f32[] before an iteration vs bool[] after it" in msg
    assert f"{THIS_FILE}:{line_of(f, 'while i < n')}" in msg


def test_loop_temporary_is_undefined_after_a_traced_loop():
    def f(x, n):
        i = 0
        while i < n:
            t = x * 2
            i += 1
        return t

    with pytest.raises(UndefinedVariableError, match=r"'t'(.|\n)*first assigned inside the `while` loop"):
        jit(f)(1.0, 3)


# --- the converted function ----------------------------------------------------------------------


SCALE = 3.0


def uses_global(x):
    if x > 0:
        x = x * SCALE
    return x


def test_globals_and_closures_keep_working():
    offset = np.float32(10.0)

    def f(x):
        if x > 0:
            x = x + offset
        return x

    assert float(jit(f)(np.float32(1.0))) == 11.0
    assert float(jit(uses_global)(np.float32(1.0))) == 3.0


def helper(x):
    if x > 1:
        return x - 1
    return x + 1


def test_called_user_functions_are_converted():
    def f(x):
        return helper(x) * 2

    assert float(jit(f)(np.float32(3.0))) == 4.0
    assert float(jit(f)(np.float32(0.0))) == 2.0


class Model:
    def __init__(self, k):
        self.k = k

    def __call__(self, x):
        return self.apply(x)

    def apply(self, x):
        if x > self.k:
            return x * self.k
        return x


class Child(Model):
    def apply(self, x):
        y = super().apply(x)
        if y < 0:
            y = -y
        return y


def test_methods_and_super_are_converted():
    m = Child(2.0)
    assert float(omnistage.jit(convert(m.apply))(np.float32(3.0))) == 6.0
    assert float(omnistage.jit(convert(m.apply))(np.float32(-1.0))) == 1.0


def test_partial_is_converted():
    f = functools.partial(double_above, threshold=1.0)
    assert float(omnistage.jit(convert(f))(np.float32(3.0))) == 6.0


def test_convert_is_cached_and_idempotent():
    c = convert(absneg)
    assert convert(absneg) is c and convert(c) is c
    assert c.__wrapped__ is absneg and c.__name__ == "absneg"


def test_functions_without_source_are_unchanged():
    assert convert(len) is len
    assert convert(np.sum) is np.sum
    lam = eval("lambda x: x")  # made from a string: no file to read its source from
    assert convert(lam) is lam
    with pytest.raises(ValueError, match="not converted"):
        converted_source(lam)


def test_converted_source_is_readable_python():
    src = converted_source(count_to)
    assert "_omni.while_stmt(while_test_1, while_body_1, locals(), ('i',)" in src
    compile(src, "<check>", "exec")


def test_converted_source_of_a_jitted_function_is_its_functions():
    assert converted_source(omnistage.jit(count_to)) == converted_source(count_to)


def test_tracebacks_and_staged_lines_point_at_the_users_lines():
    def f(x):
        y = x * 2
        if y > 0:
            z = y + 1
        else:
            z = 1 / 0
        return z

    with pytest.raises(ZeroDivisionError) as info:
        convert(f)(-1.0)
    frames = traceback.extract_tb(info.tb)
    assert frames[-1].filename == __file__ and frames[-1].lineno == line_of(f, "z = 1 / 0")
    text = str(omnistage.make_jaxpr(convert(double_above))(1.0, 2.0))
    assert f"{THIS_FILE}:{line_of(double_above, 'return x * 2')}" in text


def test_make_jaxpr_of_converted_if_is_a_cond_with_closure_free_branches():
    program = omnistage.make_jaxpr(convert(double_above))(1.0, 2.0)
    assert [e.prim for e in program.eqns()] == ["gt", "cond"]
    program.check()


# --- differential: converted + jit == plain Python on concrete values ---------------------------


def clip_and_count(x, lo, hi, n):
    hits = 0
    for _ in range(n):
        if x < lo:
            x = x + 1.5
            hits += 1
        elif x > hi:
            x = x - 2.0
            hits += 1
        else:
            x = x * 1.25 if x > 0 else x * 0.5
    return x, hits


def collatz_steps(n, limit):
    steps = 0
    while n != 1 and steps < limit:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


@settings(max_examples=30, deadline=None)
@given(st.floats(-8, 8, width=32), st.integers(0, 6))
def test_differential_clip_and_count(x, n):
    got_x, got_hits = jit(clip_and_count)(np.float32(x), np.float32(-1.0), np.float32(2.0), n)
    want_x, want_hits = clip_and_count(np.float32(x), np.float32(-1.0), np.float32(2.0), n)
    np.testing.assert_allclose(got_x, want_x, rtol=1e-5, atol=1e-6)
    assert int(got_hits) == want_hits


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 200), st.integers(0, 40))
def test_differential_collatz(n, limit):
    assert int(jit(collatz_steps)(n, limit)) == collatz_steps(n, limit)


@settings(max_examples=30, deadline=None)
@given(st.floats(-5, 5, width=32), st.floats(-5, 5, width=32))
def test_differential_return_in_nested_ifs(a, b):
    def f(x, y):
        if x > y:
            if x > 0:
                return x - y
            return y
        elif x * y > 1:
            return x * y
        z = x + y
        return z

    got = jit(f)(np.float32(a), np.float32(b))
    np.testing.assert_allclose(got, f(np.float32(a), np.float32(b)), rtol=1e-6)


# --- lambdas: found by line, parameters and columns ---------------------------------------------


def test_lambdas_sharing_a_line_are_told_apart():
    pair = (lambda x: double_above(x, 1.0), lambda x: double_above(x, 5.0))  # noqa: E731
    assert [float(jit(f)(np.float32(3.0))) for f in pair] == [6.0, 3.0]
    nested = lambda x: (lambda y: double_above(y, 1.0))(x) + 1.0  # noqa: E731
    assert float(jit(nested)(np.float32(3.0))) == 7.0


def test_multiline_lambda_with_defaults_and_conditional_expression():
    f = (lambda x, k=2.0:
         x * k
         if x > 0 else -x)
    assert [float(jit(f)(np.float32(v))) for v in (3.0, -2.0)] == [6.0, 2.0]
    assert "if_exp" in converted_source(f)


def test_source_blocks_found_by_indentation_match_the_tokenizers(tmp_path):
    """A def's source is cut at the first line indented no deeper than its `def` (no
    tokenize); where a string, bracket, continuation or comment crosses that line the cut does
    not parse, and the tokenizer's block is used: each function converts, with its lines."""
    source = '''import functools

def decorated(f):
    return functools.wraps(f)(lambda *a: f(*a))

@decorated
def after_a_decorator(x):
    if x > 0:
        return x
    return -x

def with_a_string_at_column_zero(x):
    doc = """
not code
"""
    if x > 0:
        return x + len(doc)
    return -x

def with_a_bracket_at_column_zero(x):
    y = (x +
1)
    if y > 0:
        return y
    return -y

def with_a_comment_at_column_zero(x):
# a comment inside the body
    if x > 0:
        return x
    return -x

def one_line(x): return x * 2
def after_one_line(x):
    if x > 0:
        return x
    return -x
'''
    path = tmp_path / "blocks_by_indentation.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("blocks_by_indentation", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    expected = {"after_a_decorator": (3.0, 3.0), "with_a_string_at_column_zero": (13.0, 3.0),
                "with_a_bracket_at_column_zero": (4.0, 2.0), "with_a_comment_at_column_zero": (3.0, 3.0),
                "one_line": (6.0, -6.0), "after_one_line": (3.0, 3.0)}
    for name, (at_3, at_minus_3) in expected.items():
        f = getattr(module, name)
        f = getattr(f, "__wrapped__", f)
        assert "def " in converted_source(f), name
        g = jit(f)
        assert (float(g(np.float32(3.0))), float(g(np.float32(-3.0)))) == (at_3, at_minus_3), name
        fndef = ast.parse(converted_source(f)).body[0]
        assert fndef.name == name
