"""Parallel loops (omnistage/codegen/parallel.py): which loops become prange, and parallel
results identical to serial ones (each iteration computes exactly what the serial loop does)."""
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import omnistage
import omnistage.numpy as jnp
from omnistage import lax
from omnistage.codegen import parallel

pytestmark = pytest.mark.numba_path  # tests of the Numba build (tests/conftest.py)

BIG = parallel.PARALLEL_MIN_WORK


def body(*lines):
    return ["    " + line for line in lines]


# --- the rewrite on emitted lines ---------------------------------------------------------------


def test_an_independent_loop_above_the_threshold_becomes_prange():
    lines = body("y = _rt.empty((%d,), np.float32)" % BIG,
                 "for _i0 in range(%d):" % BIG,
                 "    t = x[_i0] * np.float32(2.0)",
                 "    y[_i0] = t + np.float32(1.0)",
                 "return (y,)")
    out, changed = parallel.parallelize(lines)
    assert changed
    assert out[1].startswith(f"    for _i0 in numba.prange({BIG}):  # parallel: {2 * BIG} statements")
    assert out[2:4] == lines[2:4] and out[-1] == lines[-1]


def test_a_loop_below_the_threshold_stays_serial():
    n = BIG // 2 - 1
    lines = body(f"for _i0 in range({n}):", "    a = x[_i0] + np.float32(1.0)", "    y[_i0] = a")
    assert parallel.parallelize(lines) == (lines, False)


def test_the_work_counts_inner_loops():
    lines = body("for _i0 in range(64):", f"    for _i1 in range({BIG // 64}):", "        y[_i0, _i1] = x[_i0, _i1]")
    assert parallel.parallelize(lines)[1]
    lines = body("for _i0 in range(64):", f"    for _i1 in range({BIG // 128}):", "        y[_i0, _i1] = x[_i0, _i1]")
    assert not parallel.parallelize(lines)[1]


@pytest.mark.parametrize("inner", [
    # a column sum accumulated into the output row, but the swapped loop reads a neighbour
    ["for _i1 in range(%d):" % BIG, "    s[_i1] = s[_i1 - 1] + x[_i0, _i1]"],
    # a column sum of a matrix: swapped, its inner loop would stride down the columns
    ["for _i1 in range(%d):" % BIG, "    s[_i1] = s[_i1] + x[_i0, _i1]"],
    # two loops under the first: not swapped
    ["for _i1 in range(%d):" % BIG, "    s[_i1] = s[_i1] + x[_i0, _i1]", "for _i1 in range(2):", "    y[_i1] = x[_i0, _i1]"],
    # a scalar carried from one iteration to the next
    ["acc = acc + x[_i0]", "y[_i0] = acc"],
    ["y[_i0] = t", "t = x[_i0]"],
    # reads another iteration's result
    ["y[_i0] = x[_i0]", "z[_i0] = y[_i0 - 1]"],
    # BLAS writing into an argument
    ["np.dot(a[_i0], b[_i0], c[_i0])"],
    # an opaque kernel writing into an argument
    ["_kn.sort_rows(x, y)", "y[_i0] = np.float32(0.0)"],
    # statement forms the analysis does not reason about
    ["y[_i0] += x[_i0]"],
    ["print(x[_i0])"],
    ["y[_i0].x = 1"],
])
def test_loops_whose_iterations_share_data_stay_serial(inner):
    lines = body("acc = np.float32(0.0)", f"for _i0 in range({BIG}):", *["    " + x for x in inner], "return (y,)")
    assert parallel.parallelize(lines) == (lines, False)


def test_tuple_assignments_of_locals_and_stores_are_understood():
    lines = body(f"for _i0 in range({BIG}):", "    a, b = x[_i0], x[_i0]", "    y[_i0], z[_i0] = _rt.threefry2x32(a, b, a, b)")
    assert parallel.parallelize(lines)[1]
    lines = body(f"for _i0 in range({BIG}):", "    y[_i0], z[0] = _rt.threefry2x32(x[_i0], x[_i0], x[_i0], x[_i0])")
    assert not parallel.parallelize(lines)[1]


def test_random_bits_of_a_big_array_are_drawn_in_parallel(monkeypatch):
    key = omnistage.random.PRNGKey(3)
    _parallel_equals_serial(lambda k: omnistage.random.uniform(k, (1 << 18,)), (key,), monkeypatch)


def test_a_local_read_after_the_loop_keeps_it_serial():
    lines = body(f"for _i0 in range({BIG}):", "    last = x[_i0]", "    y[_i0] = last", "return (y, last)")
    assert not parallel.parallelize(lines)[1]


def test_a_row_buffer_is_allocated_per_thread_inside_the_loop():
    lines = body("m = _rt.empty((64,), np.float32)  # f.py:1",
                 "e = _rt.empty((512,), np.float32)  # f.py:2  # one row",
                 "y = _rt.empty((512, 512), np.float32)  # f.py:3",
                 "for _i0 in range(512):",
                 "    for _i1 in range(512):",
                 "        e[_i1] = x[_i0, _i1] * np.float32(2.0)",
                 "    for _i1 in range(512):",
                 "        y[_i0, _i1] = e[_i1] + np.float32(1.0)",
                 "return (y,)")
    out, changed = parallel.parallelize(lines)
    assert changed
    assert "e = " not in "\n".join(out[:out.index(next(x for x in out if "prange" in x))])
    assert "        e = np.empty((512,), np.float32)  # f.py:2  # one row, per thread" in out
    assert out[0] == lines[0] and out[1] == lines[2]


def test_a_row_buffer_used_after_the_loop_is_shared_and_keeps_the_loop_serial():
    lines = body("e = _rt.empty((512,), np.float32)  # f.py:2  # one row",
                 "for _i0 in range(512):",
                 "    for _i1 in range(512):",
                 "        e[_i1] = x[_i0, _i1] * np.float32(2.0)",
                 "    for _i1 in range(512):",
                 "        y[_i0, _i1] = e[_i1]",
                 "return (e,)")
    assert not parallel.parallelize(lines)[1]


def test_a_sum_over_the_leading_axis_is_parallel_over_the_next_with_each_row_added_in_order():
    """`g.sum(0)` adds each row into the whole result: not parallel over rows, but each
    result element's sum is, over the next axis, with the rows still added in order."""
    lines = body("s = _rt.full((512, 32), np.float32(0.0), np.float32)",
                 "for _i0 in range(256):",
                 "    w = scale[_i0]",
                 "    for _i1 in range(512):",
                 "        for _i2 in range(32):",
                 "            t = x[_i0, _i1, _i2] * w",
                 "            s[_i1, _i2] = s[_i1, _i2] + t",
                 "return (s,)")
    out, changed = parallel.parallelize(lines)
    assert changed
    assert out[1:4] == [f"    for _i1 in numba.prange(512):  # parallel: {256 + 2 * 256 * 512 * 32} statements over Numba's threads",
                        "        for _i0 in range(256):", "            w = scale[_i0]"]
    assert out[4:] == lines[4:]


def test_a_leading_axis_sum_gives_the_serial_bits(monkeypatch):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((256, 64, 40)).astype(np.float32)
    scale = (rng.random(256) + 0.5).astype(np.float32)
    src = _parallel_equals_serial(lambda x, s: (x * s[:, None, None]).sum(0), (x, scale), monkeypatch)
    assert "for _i1 in numba.prange(64):" in src


def test_a_loop_of_one_iteration_is_peeled_and_the_next_loop_is_split():
    """A mapped axis of size 1 (pmap on one device): the nest over (1, rows, cols) runs its
    rows on threads, the unit index written as the literal 0."""
    lines = body("y = _rt.empty((1, 512, %d), np.float32)" % (BIG // 256),
                 "for _i0 in range(1):",
                 "    for _i1 in range(512):",
                 "        for _i2 in range(%d):" % (BIG // 256),
                 "            y[_i0, _i1, _i2] = x[_i0, _i1, _i2] * np.float32(2.0)",
                 "return (y,)")
    out, changed = parallel.parallelize(lines)
    assert changed
    assert out[1].startswith("    for _i1 in numba.prange(512):")
    assert out[2:] == ["        for _i2 in range(%d):" % (BIG // 256),
                       "            y[0, _i1, _i2] = x[0, _i1, _i2] * np.float32(2.0)", "    return (y,)"]


@pytest.mark.parametrize("store", [
    "y[_i0, _i1] = y[_i1, _i0] + np.float32(1.0)",  # y[0, 5] and y[5, 0]: two rows' elements
    "y[_i0, _i0] = x[_i0, _i1]",  # every row writes the same element
])
def test_a_peeled_loop_whose_rows_share_elements_stays_serial(store):
    lines = body("for _i0 in range(1):", f"    for _i1 in range({BIG}):", "        " + store, "return (y,)")
    out, changed = parallel.parallelize(lines)
    assert not changed and not any("prange" in line for line in out)


def test_a_loop_of_one_iteration_that_assigns_its_index_is_kept():
    lines = body("for _i0 in range(1):", "    _i0 = k[()]", f"    for _i1 in range({BIG}):", "        y[_i0, _i1] = x[_i1]")
    assert parallel.parallelize(lines) == (lines, False)


def test_a_pmap_on_one_device_splits_its_loops_and_gives_the_serial_bits(monkeypatch):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, 512, 768)).astype(np.float32)
    src = _parallel_equals_serial(
        lambda x: omnistage.vmap(lambda r: jnp.tanh(r) * 2.0 - lax.psum(r, "d"), axis_name="d")(x), (x,), monkeypatch)
    assert "for _i1 in numba.prange(512):" in src, src


def test_a_loop_with_a_non_literal_extent_stays_serial():
    lines = body(f"for _i0 in range({BIG}):", "    for _i1 in range(n):", "        y[_i0] = x[_i1]")
    assert not parallel.parallelize(lines)[1]


def test_disabled_by_environment(monkeypatch):
    monkeypatch.setattr(parallel, "_ENABLED", None)
    monkeypatch.setenv("OMNISTAGE_PARALLEL", "0")
    assert parallel.enabled() is False
    monkeypatch.setattr(parallel, "_ENABLED", None)
    monkeypatch.setenv("NUMBA_THREADING_LAYER", "workqueue")  # read by numba.core.config at import
    monkeypatch.delenv("OMNISTAGE_PARALLEL")
    from numba.core import config

    monkeypatch.setattr(config, "THREADING_LAYER", "workqueue")
    assert parallel.enabled() is False  # not safe for concurrent callers: never chosen by us


# --- generated programs: parallel equals serial, bit for bit --------------------------------------


def _compile(f, args, enabled, monkeypatch, min_work=None):
    monkeypatch.setattr(parallel, "_ENABLED", enabled)
    monkeypatch.setattr(parallel, "TIER_UP_S", -1.0)  # the first call already runs the parallel build
    if min_work is not None:
        monkeypatch.setattr(parallel, "PARALLEL_MIN_WORK", min_work)
    compiled = omnistage.jit(lambda *a: f(*a), backend="cpu").lower(*args).compile()  # a new function: no cached compile
    results = [np.asarray(r) for r in omnistage.tree_util.tree_leaves(compiled(*args))]
    assert compiled.executable._fallback is None, "Numba failed to compile the build: the interpreter ran it"
    return compiled.as_text(), results


def _parallel_equals_serial(f, args, monkeypatch, min_work=None, expect_prange=True):
    src_p, par = _compile(f, args, True, monkeypatch, min_work)
    src_s, ser = _compile(f, args, False, monkeypatch, min_work)
    assert ("numba.prange(" in src_p) == expect_prange, src_p
    assert "prange" not in src_s
    for p, s in zip(par, ser):
        assert p.dtype == s.dtype and p.shape == s.shape
        assert p.tobytes() == s.tobytes()
    return src_p


def selu(x, alpha=1.67, lambda_=1.05):
    return lambda_ * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


def softmax(x):
    e = jnp.exp(x - x.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def test_selu_and_softmax_at_benchmark_sizes(monkeypatch):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(1 << 18).astype(np.float32)
    src = _parallel_equals_serial(selu, (x,), monkeypatch)
    assert "parallel={'prange': True" in src
    m = rng.standard_normal((1024, 512)).astype(np.float32)
    src = _parallel_equals_serial(softmax, (m,), monkeypatch)
    assert re.search(r"\n        e = np\.empty\(\(512,\), np\.float32\).*one row, per thread", src), src


def test_column_statistics_and_argmax(monkeypatch):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3000, 100)).astype(np.float32)
    _parallel_equals_serial(lambda x: ((x - x.mean(0)) / x.std(0), jnp.argmax(x, axis=1), x.sum()), (x,), monkeypatch)


def test_a_loop_with_nothing_big_enough_compiles_serially(monkeypatch):
    _parallel_equals_serial(selu, (np.ones(100, np.float32),), monkeypatch, expect_prange=False)


def test_control_flow_bodies_stay_serial(monkeypatch):
    def f(x):
        return lax.fori_loop(0, 3, lambda i, v: v * jnp.float32(0.5) + jnp.tanh(v), x)

    src = _parallel_equals_serial(f, (np.ones((600, 600), np.float32),), monkeypatch, expect_prange=False)
    assert src.count("@numba.njit") >= 1


_ops = st.sampled_from([
    lambda x: jnp.exp(x) * 2 - x,
    lambda x: x / x.sum(-1, keepdims=True),
    lambda x: x - x.max(-1, keepdims=True),
    lambda x: jnp.where(x > 0, jnp.log1p(jnp.abs(x)), x * x),
    lambda x: jnp.cumsum(x, axis=-1) + 1,
    lambda x: x.T[::-1] * 3,
    lambda x: jnp.sort(x, axis=-1) - x.min(),
])


@settings(max_examples=12, deadline=None)
@given(rows=st.integers(1, 40), cols=st.integers(1, 40), ops=st.lists(_ops, min_size=1, max_size=3),
       dtype=st.sampled_from([np.float32, np.float64]), seed=st.integers(0, 2**31 - 1))
def test_parallel_equals_serial_on_random_programs(rows, cols, ops, dtype, seed):
    # a threshold of one statement makes every independent loop parallel, whatever its size
    x = np.random.default_rng(seed).standard_normal((rows, cols)).astype(dtype)

    def f(x):
        for op in ops:
            x = op(x)
        return x

    with pytest.MonkeyPatch.context() as mp:
        src_p, par = _compile(f, (x,), True, mp, 1)
        _, ser = _compile(f, (x,), False, mp, 1)
    for p, s in zip(par, ser):
        assert p.tobytes() == s.tobytes(), src_p


def test_a_process_runs_the_serial_build_until_its_calls_have_cost_enough(monkeypatch):
    from omnistage.codegen import executable

    monkeypatch.setattr(parallel, "_ENABLED", True)
    monkeypatch.setattr(executable, "_builder_busy", lambda: False)  # a library builder left by another test
    x = np.random.default_rng(2).standard_normal(1 << 18).astype(np.float32)
    compiled = omnistage.jit(lambda x: selu(x), backend="cpu").lower(x).compile()
    ex = compiled.executable
    assert "numba.prange(" in compiled.as_text()
    monkeypatch.setattr(parallel, "TIER_UP_S", 1e9)
    results = [np.asarray(compiled(x)) for _ in range(3)]
    assert not ex._tier.parallel and not ex._parallel_fn.overloads and "parallel" not in ex._fn.targetoptions
    monkeypatch.setattr(parallel, "TIER_UP_S", 0.0)
    results += [np.asarray(compiled(x)) for _ in range(2)]  # the first ends the rent, the second starts the compile
    assert not ex._parallel_ready or ex.tier_up_thread is not None
    ex.tier_up_thread.join()  # the parallel build compiles in the background, calls running serial meanwhile
    results.append(np.asarray(compiled(x)))
    assert ex._tier.parallel and ex._parallel_fn.overloads and "parallel" in ex._parallel_fn.targetoptions  # (Numba empties the dict)
    assert all(r.tobytes() == results[0].tobytes() for r in results)


def test_calls_run_serial_while_the_parallel_build_compiles_in_the_background(monkeypatch):
    import threading

    from omnistage.codegen import executable

    monkeypatch.setattr(parallel, "_ENABLED", True)
    monkeypatch.setattr(executable, "_builder_busy", lambda: False)  # a library builder left by another test
    x = np.random.default_rng(5).standard_normal(3 << 17).astype(np.float32)
    compiled = omnistage.jit(lambda x: selu(x) * 0.5, backend="cpu").lower(x).compile()
    ex = compiled.executable
    assert "numba.prange(" in compiled.as_text()
    release, numba_compile = threading.Event(), executable._compile_once

    def held(dispatcher, signature, pause_gc=True):
        release.wait(60)  # the parallel build's compile, held until the calls below are done
        return numba_compile(dispatcher, signature, pause_gc)

    monkeypatch.setattr(executable, "_compile_once", held)
    monkeypatch.setattr(parallel, "TIER_UP_S", 0.0)
    results = [np.asarray(compiled(x)) for _ in range(6)]  # rent ends at once; the compile starts and waits
    assert ex._tier.parallel and not ex._parallel_ready and ex.tier_up_thread.is_alive()
    release.set()
    ex.tier_up_thread.join()
    assert ex._parallel_ready
    results += [np.asarray(compiled(x)) for _ in range(2)]
    assert all(r.tobytes() == results[0].tobytes() for r in results)


def test_rows_of_long_float_sums_are_parallel(monkeypatch):
    """A long float32 row sum accumulates in blocks (`range(0, n, B)`, `acc += block`, for
    its accuracy): the rows are still independent."""
    rng = np.random.default_rng(6)
    x = rng.standard_normal((256, 8192)).astype(np.float32)
    src = _parallel_equals_serial(lambda x: (x * x).sum(1), (x,), monkeypatch)
    assert re.search(r"for _\w+ in range\(0, 8192, \d+\):", src) and "for _i0 in numba.prange(256):" in src, src
