"""omnistage.debug.print (omnistage/debug.py): prints at once outside transformations, at every
run of a jitted program (never at trace time), inside control-flow bodies, once per example
under vmap, with primal values under grad; compiled on the CPU (an object-mode block) and kept
by clean-up although nothing uses its result."""
import numpy as np
import pytest

import omnistage
import omnistage.numpy as jnp
from omnistage import debug, lax
from omnistage.staging.cleanup import cleanup
from tests.helpers import run_printed_program


def _lines(capsys):
    return capsys.readouterr().out.splitlines()


def test_eager_prints_at_once(capsys):
    debug.print("x={} y={y:.2f}", jnp.arange(3), y=jnp.float32(1.5))
    assert _lines(capsys) == ["x=[0 1 2] y=1.50"]


def test_jit_prints_at_every_call_not_at_trace_time_and_is_compiled(capsys):
    calls = []

    def f(x):
        calls.append(1)
        debug.print("x={x} sum={}", x.sum(), x=x * 2)
        return x + 1

    g = omnistage.jit(f, backend="cpu")  # not FollowDevice, once a CUDA test made a GPU array here
    compiled = g.lower(np.ones(2, np.float32)).compile()
    assert type(compiled.executable).__name__ == "NumbaProgram" and "numba.objmode()" in compiled.as_text()
    capsys.readouterr()
    for v in (1.0, 2.0):
        out = g(np.full(2, v, np.float32))
    assert calls == [1]  # traced once
    assert _lines(capsys) == ["x=[2. 2.] sum=2.0", "x=[4. 4.] sum=4.0"]
    np.testing.assert_array_equal(np.asarray(out), [3.0, 3.0])


def test_containers_format_specs_and_no_arguments(capsys):
    f = omnistage.jit(lambda x: debug.print("{a[1]} {b[k]:.3f} {c} {0}!", x[0], a=[x, x + 1], b={"k": x.sum()}, c=None))
    f(np.array([1.0, 2.0], np.float32))
    omnistage.jit(lambda x: (debug.print("hello", ordered=True), x)[1])(1.0)
    assert _lines(capsys) == ["[2. 3.] 3.000 None 1.0!", "hello"]


def test_a_program_that_only_prints_returns_none(capsys):
    assert omnistage.jit(lambda x: debug.print("{}", x))(np.int32(4)) is None
    assert _lines(capsys) == ["4"]


@pytest.mark.parametrize("fmt, args, kwargs, error, match", [
    ("{y}", (1.0,), {}, ValueError, "names 'y', which is not a keyword argument"),
    ("{} {}", (1.0,), {}, IndexError, "more {} fields than the 1 positional"),
    ("{3}", (1.0,), {}, IndexError, "names positional argument 3"),
    ("{", (1.0,), {}, ValueError, "bad format string"),
    ("{}", ("text",), {}, TypeError, "put it in the format string"),
])
def test_bad_calls_fail_when_staged_naming_the_users_line(fmt, args, kwargs, error, match):
    def f(x):
        debug.print(fmt, *[x if a == 1.0 else a for a in args], **kwargs)
        return x

    with pytest.raises(error, match=match) as info:
        omnistage.jit(f)(1.0)
    assert "test_debug_print.py" in str(info.value)


def test_a_non_string_format_is_a_type_error():
    with pytest.raises(TypeError, match="format must be a str"):
        debug.print(3)


def test_prints_inside_control_flow_run_when_the_body_runs(capsys):
    def f(x, n):
        def body(i, c):
            lax.cond(c.sum() > 3, lambda v: debug.print("big {}", v), lambda v: None, c)
            return c * 2

        y = lax.fori_loop(0, n, body, x)
        lax.scan(lambda c, v: (debug.print("c={} v={}", c, v) or c + v, None), 0.0, y)
        return y.sum()

    x = np.array([1.0, 2.0], np.float32)
    want = ["big [2. 4.]", "big [4. 8.]", "c=0.0 v=8.0", "c=8.0 v=16.0"]
    for backend in ("interpreter", "cpu"):
        assert float(omnistage.jit(f, backend=backend)(x, 3)) == 24.0
        assert _lines(capsys) == want, backend
    f(x, 3)  # eager, as the reference
    assert _lines(capsys) == want


def test_clean_up_keeps_prints_and_the_control_flow_around_them():
    def f(x):
        lax.cond(x > 0, lambda v: debug.print("pos {}", v), lambda v: None, x)
        lax.fori_loop(0, 2, lambda i, c: (debug.print("{}", i), c)[1], x)
        debug.print("{}", x)
        lax.cond(x > 0, lambda v: v + 1, lambda v: v, x)  # no effect, unused: dropped
        return x * 2

    text = str(cleanup(omnistage.make_jaxpr(f)(1.0)))
    assert text.count("debug_print(") == 3 and text.count("cond(") == 1 and "scan(" in text  # fori_loop: a scan


def test_grad_and_jvp_print_the_primal_values(capsys):
    def f(x):
        debug.print("x={}", x)
        return jnp.sin(x).sum()

    x = np.array([0.5, 1.0], np.float32)
    for fun in (omnistage.grad(f), omnistage.jit(omnistage.grad(f))):
        np.testing.assert_allclose(np.asarray(fun(x)), np.cos(x), rtol=1e-6)
        assert _lines(capsys) == ["x=[0.5 1. ]"]
    omnistage.jvp(f, (x,), (np.ones(2, np.float32),))
    assert _lines(capsys) == ["x=[0.5 1. ]"]


def test_vmap_prints_each_example(capsys):
    def f(x, s):
        debug.print("x={} s={s}", x, s=s)
        return x * s

    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    for fun in (omnistage.vmap(f, in_axes=(0, None)), omnistage.jit(omnistage.vmap(f, in_axes=(0, None)))):
        fun(x, 2.0)
        assert _lines(capsys) == ["x=[0. 1. 2.] s=2.0", "x=[3. 4. 5.] s=2.0"]
    # JAX's order: the inner vmap (over rows here) unrolls outermost
    omnistage.vmap(omnistage.vmap(f, in_axes=(0, None)), in_axes=(1, None))(x, 2.0)
    assert _lines(capsys) == [f"x={v} s=2.0" for v in (0.0, 1.0, 2.0, 3.0, 4.0, 5.0)]
    omnistage.vmap(omnistage.vmap(f, in_axes=(0, None)), in_axes=(0, None))(x, 2.0)
    assert _lines(capsys) == [f"x={v} s=2.0" for v in (0.0, 3.0, 1.0, 4.0, 2.0, 5.0)]


@pytest.mark.parametrize("dtype", [np.float16, "bfloat16"])
def test_narrow_floats_print_as_themselves_from_compiled_code(capsys, dtype):
    pytest.importorskip("ml_dtypes")
    x = np.array([0.1, 1 / 3], dtype)
    f = omnistage.jit(lambda v: debug.print("{}", v * 3), backend="cpu")
    assert type(f.lower(x).compile().executable).__name__ == "NumbaProgram"
    f(x)
    assert _lines(capsys) == [str(x * np.asarray(3, dtype))]


def test_the_staged_program_prints_as_runnable_python(capsys):
    program = omnistage.make_jaxpr(lambda x: (debug.print("v={v}", v=x), x + 1)[1])(np.float32(2.0))
    out = run_printed_program(program, np.float32(2.0))
    assert _lines(capsys) == ["v=2.0"]
    assert float(np.asarray(out[0] if isinstance(out, tuple) else out)) == 3.0


def test_programs_that_print_get_no_native_library():
    from omnistage.codegen import aot

    compiled = omnistage.jit(lambda x: (debug.print("{}", x), x * 2)[1], backend="cpu").lower(np.ones(3)).compile()
    assert aot.schedule_build(compiled.executable) is None


def test_the_same_lines_as_jax(capsys):
    jax = pytest.importorskip("jax")

    def program(lib, dbg, lax_):
        def f(x, s):
            dbg.print("x={} s={s:.2f} {t[0]}", x, s=s, t=(x.sum(),))
            y = lax_.fori_loop(0, 2, lambda i, c: (dbg.print("i={} c={}", i, c), c * 2)[1], x)
            return (y * s).sum()
        return f

    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    outputs = []
    for lib, api in ((jax, jax), (jnp, omnistage)):
        f = program(lib, api.debug, api.lax)
        # not under jit: JAX runs unordered prints of a compiled program in any order
        api.vmap(api.vmap(f, in_axes=(0, None)), in_axes=(1, None))(x, 2.0)
        api.grad(f)(x[0], 1.5)
        outputs.append(capsys.readouterr().out.splitlines())
    # JAX compiles a loop even outside jit, and runs its unordered prints in any order
    assert outputs[1][:6] == outputs[0][:6] and sorted(outputs[1]) == sorted(outputs[0])


def test_reverse_mode_recomputation_does_not_print_again(capsys):
    def f(x):
        def body(c):
            i, v = c
            debug.print("w i={} v={}", i, v)
            lax.cond(i == 1, lambda u: debug.print("one {}", u), lambda u: None, v)
            return i + 1, v * 1.5

        _, v = lax.while_loop(lambda c: c[0] < 3, body, (0, x))
        v = lax.cond(v.sum() > 0, lambda u: (debug.print("pos {}", u), u * 2)[1], lambda u: u, v)
        v, _ = lax.scan(lambda c, t: ((debug.print("s {}", t), c * t)[1], None), v, jnp.arange(1.0, 3.0))
        return jnp.sin(v).sum()

    x = np.array([0.5, 1.0], np.float32)
    f(x)
    once = capsys.readouterr().out
    assert once.count("\n") == 7
    for fun in (omnistage.grad(f), omnistage.jit(omnistage.grad(f))):
        fun(x)
        assert capsys.readouterr().out == once
