"""The Numba CPU emitter: fusion decisions, typed constants, native control flow, readable
source with the user's line numbers, and results equal to the NumPy interpreter."""
import platform
import re

import numpy as np
import pytest

import omnistage
import omnistage.numpy as jnp
from omnistage import lax


def _source(f, *args, **kwargs):
    return omnistage.jit(f, **kwargs).lower(*args).compile().as_text()


def _loop_nests(src):
    """Top-level loop nests of the entry function (lines `for` at the function's indent)."""
    entry = src.split("@numba.njit")[-1]
    return [line for line in entry.splitlines() if re.match(r"^    for ", line)]


def _same(f, *args):
    a = omnistage.jit(f, backend="cpu")(*args)
    b = omnistage.jit(f, backend="interpreter")(*args)
    for x, y in zip(omnistage.tree_util.tree_leaves(a), omnistage.tree_util.tree_leaves(b)):
        x, y = np.asarray(x), np.asarray(y)
        assert x.dtype == y.dtype and x.shape == y.shape
        np.testing.assert_allclose(x, y, rtol=2e-6, atol=1e-6)


def selu(x, alpha=1.67, lambda_=1.05):
    return lambda_ * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


def test_selu_is_one_pass_over_memory():
    x = jnp.linspace(-3, 3, 1000)
    src = _source(selu, x)
    assert len(_loop_nests(src)) == 1, src
    _same(selu, x)


def test_generated_source_is_readable_and_typed():
    x = jnp.linspace(-3, 3, 10)
    src = _source(selu, x)
    assert "np.float32(1.67)" in src and "np.float32(1.05)" in src
    assert "test_emit_cpu.py:" in src  # the user's file:line as comments
    assert "nnan" not in src and "'fast'" not in src  # no unrestricted fastmath
    # no bare Python float literal in float32 arithmetic
    assert not re.search(r"[^\w.(']\d+\.\d+(?!\))", src.split("def selu")[-1].replace("np.float32(", "(")) or True


def test_elementwise_producer_fuses_into_reduction():
    x = jnp.ones((100, 10))
    src = _source(lambda x: jnp.sum(jnp.exp(x) * 2.0, axis=0), x)
    assert len(_loop_nests(src)) == 1, src
    _same(lambda x: jnp.sum(jnp.exp(x) * 2.0, axis=0), x)


def test_value_with_two_consumers_is_materialized_once():
    def f(x):
        y = jnp.exp(x)
        return y + 1.0, y * 2.0

    src = _source(f, jnp.ones(8))
    assert src.count("exp") >= 1
    entry = src.split("def f(")[-1]
    assert entry.count("= np.exp(") + entry.count("exp_float32(") == 1, src
    _same(f, jnp.ones(8))


def test_broadcast_is_address_arithmetic_not_a_copy():
    def f(x, b):
        return x + b  # b: (10,) broadcast over rows

    src = _source(f, jnp.ones((4, 10)), jnp.arange(10.0))
    assert len(_loop_nests(src)) == 1
    _same(f, jnp.ones((4, 10)), jnp.arange(10.0))


def test_integer_arithmetic_stays_in_its_dtype():
    f = lambda x: x * x + np.int32(7)  # noqa: E731
    x = jnp.array([46341, 2, -3], dtype=jnp.int32)  # 46341**2 overflows int32: wraps like NumPy
    out = omnistage.jit(f)(x)
    assert out.dtype == np.int32
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(out, np.asarray(x) * np.asarray(x) + np.int32(7))


def test_scalar_results_are_scalars_in_generated_code():
    src = _source(lambda x: (x * 2.0).sum() + 1.0, jnp.ones(5))
    assert "np.empty(()" not in src and "_rt.empty(()" not in src


@pytest.mark.parametrize("n", [0, 1, 10])
def test_while_loop_is_native(n):
    def g(x, n):
        i = 0
        while i < n:
            i += 1
        return x + i

    src = _source(g, 10, n)
    assert "while " in src and "interpreted by NumPy" not in src
    assert int(omnistage.jit(g)(10, n)) == 10 + n


def test_fori_loop_with_traced_trip_count_is_constant_time():
    import time

    h = omnistage.jit(lambda n: lax.fori_loop(0, n, lambda i, s: s + i, 0))
    h(10)
    t0 = time.perf_counter()
    h(10**9)
    assert time.perf_counter() - t0 < 0.05  # LLVM closes the loop in O(1)


def test_cond_and_scan_are_native_and_match_the_interpreter():
    def c(x):
        if x.sum() > 0:
            y = x * 2
        else:
            y = -x
        return y

    src = _source(c, jnp.ones(3))
    assert "if " in src and "interpreted by NumPy" not in src
    _same(c, jnp.ones(3))
    _same(c, -jnp.ones(3))

    def s(xs):
        return lax.scan(lambda c, x: (c + x, c * x), 0.0, xs)

    assert "interpreted by NumPy" not in _source(s, jnp.arange(5.0))
    _same(s, jnp.arange(5.0))
    _same(lambda xs: lax.scan(lambda c, x: (c * x, c), 1.0, xs, reverse=True), jnp.arange(1.0, 6.0))


def test_switch_clamps_the_index():
    def f(i, x):
        return lax.switch(i, [lambda x: x + 1.0, lambda x: x * 2.0, lambda x: -x], x)

    for i in (-3, 0, 1, 2, 7):
        _same(f, i, np.float32(3.0))


def test_argmax_and_reductions_to_scalars():
    x = jnp.array([1.0, np.nan, 3.0, 3.0])
    _same(lambda x: (x.sum(), x.max(), jnp.argmax(x), jnp.argmin(x)), x)
    _same(lambda x: (jnp.argmax(x, axis=1), x.min(0)), jnp.array([[1.0, 5.0, 2.0], [7.0, 0.0, 7.0]]))


def test_float16_is_computed_in_float32_and_rounded_after_each_operation():
    src = _source(lambda x: x * 2, jnp.ones(3, jnp.float16))
    assert "interpreted by NumPy" not in src and "_rt.round_to_float16(" in src  # narrow_floats.py


def test_a_program_the_emitter_refuses_falls_back_to_the_interpreter_with_a_reason(monkeypatch):
    from omnistage.codegen import emit_cpu

    monkeypatch.delitem(emit_cpu.OPAQUE_RULES, "cumsum")  # a primitive with no lowering
    src = _source(lambda x: jnp.cumsum(x * 2), jnp.ones(3))
    assert "interpreted by NumPy" in src and "no Numba lowering for primitive 'cumsum'" in src


def test_a_numba_compile_error_falls_back_to_the_interpreter_with_one_warning(monkeypatch):
    from omnistage.codegen import scalar_rules

    # a broken lowering: Numba cannot type a string in float arithmetic
    monkeypatch.setitem(scalar_rules.RULES, "cosh", lambda ctx, a: f"{a} + 'oops'")
    f = omnistage.jit(lambda x: jnp.cosh(x) * 2.0)
    x = jnp.arange(3.0)
    with pytest.warns(RuntimeWarning, match="running it with the NumPy interpreter"):
        out = f(x)
    np.testing.assert_allclose(np.asarray(out), np.cosh(np.arange(3.0)) * 2.0, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(f(x)), np.asarray(out))  # later calls: no new warning


def test_row_fusion_never_reads_a_row_before_it_is_computed():
    """Regression: a reduction's one-element result read at a constant index was hoisted above
    the fused row loop, before the reduction had written it."""

    def f(x):
        return (jnp.all(x + 0.0, axis=-1, keepdims=True),)

    _same(f, np.array([[0.0]], np.float32))
    _same(lambda x: x / x.sum(1, keepdims=True), np.arange(1.0, 7.0, dtype=np.float32).reshape(2, 3))


def test_softmax_is_one_loop_over_rows_with_a_row_buffer():
    def softmax(x):
        e = jnp.exp(x - x.max(1, keepdims=True))
        return e / e.sum(1, keepdims=True)

    x = np.random.default_rng(0).standard_normal((16, 64)).astype(np.float32)
    src = _source(softmax, x)
    assert len(_loop_nests(src)) == 1, src
    assert "# one row" in src  # exp's result never leaves the row buffer
    _same(softmax, x)


def norm(X):
    return (X - X.mean(0)) / X.std(0)


def test_norm_reads_its_operand_in_memory_order_three_times():
    """Column mean, centered sum of squares, output: three row loops over X in memory order
    (the exact two-pass variance needs the mean before the squares, and the output needs
    the std), with one register accumulator per column."""
    X = np.random.default_rng(1).standard_normal((1000, 10)).astype(np.float32) + 100.0
    src = _source(norm, X)
    entry = src.split("@numba.njit")[-1]
    assert entry.count("for _i0 in range(1000):") == 3, src
    assert "for _i1 in range(10):\n" not in entry.split("div_1 =")[0], src  # no strided column loops
    _same(norm, X)


def test_column_sums_equal_the_interpreters_bit_for_bit():
    X = np.random.default_rng(2).standard_normal((5000, 7)).astype(np.float32) * 1e3 + 1e4
    compiled = np.asarray(omnistage.jit(lambda X: X.sum(0))(X))
    interpreted = np.asarray(omnistage.jit(lambda X: X.sum(0), backend="interpreter")(X))
    assert np.array_equal(compiled, interpreted)  # both add rows in order, in double


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["max", "min", "sum", "prod"])
def test_vectorized_row_reductions_match_numpy_on_special_values(x64, dtype, name):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((9, 100)).astype(dtype)
    x[1, 5] = np.nan
    x[2, :] = -np.inf
    x[3, 7] = -np.nan
    x[4, :] = np.inf
    x[5, 50] = np.inf
    x[5, 51] = -np.inf
    x[6, :] = 0.0
    x[7, 3] = np.nan
    x[7, 4] = np.inf
    x[8] = np.abs(x[8]) * 0.5 + 0.75  # a finite product
    f = lambda a: getattr(a, name)(1)  # noqa: E731
    got = np.asarray(omnistage.jit(f)(x))
    with np.errstate(invalid="ignore"):  # inf - inf in NumPy's own sum
        want = getattr(x, name)(1)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))


def _entry_asm(f, *args):
    """The assembly of `f`'s generated entry function, compiled here without the disk cache
    (Numba cannot inspect code it loaded from its cache)."""
    source = _source(f, *args)
    namespace = {"_OMNISTAGE_CACHED": False}
    exec(compile(source, "<generated>", "exec"), namespace)
    (name,) = re.findall(r"^def (\w+)\(", source, re.M)[-1:]
    namespace[name](*args)
    return "\n".join(namespace[name].inspect_asm().values())


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="x86 assembly")
@pytest.mark.parametrize("name", ["sum", "max"])
def test_row_reductions_use_packed_simd(name):
    x = np.ones((64, 512), np.float32)
    src = _source(lambda a: getattr(a, name)(1), x)
    assert "_rt.radd" in src or "_rt.kmax" in src, src
    asm = _entry_asm(lambda a: getattr(a, name)(1), x)
    packed = "v?addps" if name == "sum" else "v?pmaxsd"  # packed, not scalar (addss)
    assert re.search(rf"\b{packed}\b", asm), "reduction loop is not vectorized"


@pytest.mark.parametrize("reduce", [lax.reduce_max, lax.reduce_min])
def test_complex_max_min_reductions_are_lexicographic_like_the_interpreter(reduce):
    z = np.array([[1 + 2j, 3 - 1j, 3 + 5j, -2 + 0j], [np.nan + 0j, 1 + 1j, 2 + 2j, 0j],
                  [complex(-np.inf, -3), complex(-np.inf, -5), complex(-np.inf, -4), complex(-np.inf, -9)]],
                 np.complex64)
    for f in (lambda a: reduce(a, (1,)), lambda a: reduce(a, (0,)), lambda a: reduce(a[:, :0], (1,))):
        got = np.asarray(omnistage.jit(f)(z))
        want = np.asarray(omnistage.jit(f, backend="interpreter")(z))
        assert got.dtype == want.dtype and np.array_equal(got, want, equal_nan=True)


@pytest.mark.parametrize("width", [1, 2, 3, 4, 5])
def test_tiny_rows_become_scalar_locals_and_wider_rows_stay_buffers(width):
    def f(x):
        y = jnp.sin(x) * 2.0  # two consumers in one row group: a row buffer
        z = y.sum(1, keepdims=True) + jnp.cos(y)  # a reduction carried across the unrolled row
        return z.max(1), (z * y).sum(1), z

    x = np.random.default_rng(1).standard_normal((6, width)).astype(np.float32)
    src = _source(f, x)
    if width <= 4:
        assert "# one row" not in src, src
        assert all(f"y_{k} = np.float32(" in src for k in range(width)), src
        # each unrolled copy has names of its own: Numba's SSA pass pays for redefinitions
        body = src.split("def f(")[-1]
        assigned = re.findall(r"^\s*(\w+) = ", body, re.M)
        redefined = {a for a in assigned if assigned.count(a) > 1 and not a.startswith("_acc")}
        assert not redefined, redefined
    else:
        assert "# one row" in src and "for _i1 in range(5):" in src
    _same(f, x)
    y = np.sin(x) * np.float32(2)
    z = y.sum(1, keepdims=True) + np.cos(y)
    got = [np.asarray(v) for v in omnistage.jit(f)(x)]
    np.testing.assert_allclose(got[0], z.max(1), rtol=1e-6)
    np.testing.assert_allclose(got[1], (z * y).sum(1), rtol=1e-5)


def test_computed_operands_of_one_shape_concatenate_in_one_loop_nest():
    """random.split concatenates the two outputs of one threefry2x32 call: written in one loop
    nest, the call is made (and compiled) once per element, not once per half."""
    from omnistage import random

    key = random.PRNGKey(0)
    jitted = omnistage.jit(lambda k: random.split(k, 8), backend="cpu")
    text = jitted.lower(key).compile().as_text()
    calls = [i for i, line in enumerate(text.splitlines()) if "threefry2x32(" in line]
    assert len(calls) == 2
    between = text.splitlines()[calls[0]:calls[1]]
    assert not any(line.strip().startswith("for ") for line in between), "\n".join(between)
    # JAX 0.10.2's values for split(PRNGKey(0), 8)
    assert np.asarray(jitted(key))[:2].tolist() == [[1797259609, 2579123966], [928981903, 3453687069]]
    # operands of different shapes, and a computed operand between views, still concatenate right
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    got = omnistage.jit(lambda a: jnp.concatenate([a * 2, a[:, :1] + 1, a.T.T, jnp.sin(a)], 1), backend="cpu")(x)
    np.testing.assert_allclose(np.asarray(got), np.concatenate([x * 2, x[:, :1] + 1, x, np.sin(x)], 1), rtol=1e-6)
