"""Threads: tracing is per thread and a jit cache key compiles once.

Many threads (a Barrier makes them really race) make first calls of jitted functions, eager
`jnp` calls, `grad`/`vmap` with and without `jit`, nested jit; every result is compared with
the single-thread result and no thread may get a tracer back. Deterministic interleavings
(one thread paused in the middle of its trace while another works) pin each piece of
per-thread state: the trace stack, `disable_jit`, custom derivative rules, and the
single-flight first compile.
"""
import functools
import sys
import threading
import time

import numpy as np
import pytest

import omnistage
import omnistage.numpy as jnp
from omnistage import api, errors, lax
from omnistage.core.tracer import Tracer

N_THREADS = 8
ROUNDS = 3
JOIN_S = 120  # a thread still alive after this is deadlocked


@pytest.fixture(autouse=True)
def frequent_thread_switches():
    """Switch threads every few microseconds (not every 5 ms), so races show up."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(old)


def race(calls):
    """Run each of `calls` in its own thread, all released at once; their results (an
    exception is returned as the result)."""
    barrier = threading.Barrier(len(calls))
    results = [None] * len(calls)

    def worker(i):
        barrier.wait()
        try:
            results[i] = calls[i]()
        except Exception as e:  # noqa: BLE001 - reported by the assertions
            results[i] = e

    threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(JOIN_S)
    assert not any(t.is_alive() for t in threads), "a thread is deadlocked"
    return results


def assert_all_match(results, expected):
    """Every result is a concrete value equal to its expected value (no exception, no tracer)."""
    for i, (got, want) in enumerate(zip(results, expected)):
        if isinstance(got, Exception):
            raise AssertionError(f"thread {i} raised {type(got).__name__}: {got}") from got
        for leaf in omnistage.tree_util.tree_leaves(got):
            assert not isinstance(leaf, Tracer), f"thread {i} got a tracer back: {leaf!r}"
        for g, w in zip(omnistage.tree_util.tree_leaves(got), omnistage.tree_util.tree_leaves(want)):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6)


@pytest.fixture
def compiles(monkeypatch):
    """A list that gets one entry per executable `jit` builds (per key compiled)."""
    made = []

    class CountingCompiled(api.Compiled):
        def __init__(self, *args, **kwargs):
            made.append(threading.get_ident())
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(api, "Compiled", CountingCompiled)
    return made


def chain(x, n=40, c=1.0):
    """Enough statements that a trace takes a while, so threads overlap inside it."""
    y = x
    for _ in range(n):
        y = jnp.sin(y) * 0.9 + c
    return y


def chain_np(x, n=40, c=1.0):
    y = np.asarray(x, np.float32)
    for _ in range(n):
        y = (np.sin(y) * np.float32(0.9) + np.float32(c)).astype(np.float32)
    return y


X = np.linspace(-1.0, 1.0, 16, dtype=np.float32)


# --- races: first calls from many threads ----------------------------------------------------


def test_first_calls_of_one_jitted_function_agree_and_compile_once(compiles):
    for r in range(ROUNDS):
        del compiles[:]
        f = omnistage.jit(lambda x: chain(x, c=float(r)), backend="interpreter")
        results = race([lambda: f(X)] * N_THREADS)
        assert_all_match(results, [chain_np(X, c=r)] * N_THREADS)
        assert len(compiles) == 1, f"round {r}: one key compiled {len(compiles)} times"


def test_first_calls_of_one_numba_jitted_function_compile_once(compiles):
    f = omnistage.jit(lambda x: jnp.tanh(x) * 2.0 + 1.0)
    results = race([lambda: f(X)] * N_THREADS)
    assert_all_match(results, [np.tanh(X) * 2 + 1] * N_THREADS)
    assert len(compiles) == 1


def test_different_functions_compiling_one_program_share_its_module():
    # eight jit caches, one generated module: its import and Numba compile race in codegen
    fs = [omnistage.jit(lambda x: jnp.tanh(x) * 3.0 - 0.5) for _ in range(N_THREADS)]
    results = race([lambda f=f: f(X) for f in fs])
    assert_all_match(results, [np.tanh(X) * 3 - 0.5] * N_THREADS)


def test_first_calls_of_different_jitted_functions_agree():
    for r in range(ROUNDS):
        fs = [omnistage.jit(lambda x, i=i: chain(x, c=float(i)), backend="interpreter") for i in range(N_THREADS)]
        results = race([lambda f=f: f(X) for f in fs])
        assert_all_match(results, [chain_np(X, c=i) for i in range(N_THREADS)])


def test_eager_calls_beside_tracing_threads_stay_eager():
    for r in range(ROUNDS):
        f = omnistage.jit(lambda x: chain(x, n=80), backend="interpreter")

        def eager():
            y = jnp.asarray(X)
            for _ in range(30):
                y = jnp.cos(y) + 1.0
            return y

        want_eager = X
        for _ in range(30):
            want_eager = np.cos(want_eager) + np.float32(1.0)
        calls = [eager if i % 2 else (lambda: f(X)) for i in range(N_THREADS)]
        want = [want_eager if i % 2 else chain_np(X, n=80) for i in range(N_THREADS)]
        assert_all_match(race(calls), want)


def loss(w, x):
    return jnp.sum(jnp.tanh(chain(x * w, n=10)) ** 2)


def test_jit_of_grad_from_many_threads(compiles):
    w = np.float32(0.7)
    want = omnistage.grad(loss)(w, X)
    for r in range(ROUNDS):
        del compiles[:]
        g = omnistage.jit(omnistage.grad(loss), backend="interpreter")
        assert_all_match(race([lambda: g(w, X)] * N_THREADS), [want] * N_THREADS)
        assert len(compiles) == 1


def test_grad_and_vmap_without_jit_from_many_threads():
    w = np.float32(0.7)
    xs = np.stack([X, 2 * X, -X])
    want_grad = omnistage.grad(loss)(w, X)
    want_vmap = omnistage.vmap(lambda x: chain(x, n=20))(xs)
    for r in range(ROUNDS):
        calls = [
            (lambda: omnistage.grad(loss)(w, X)) if i % 2 else (lambda: omnistage.vmap(lambda x: chain(x, n=20))(xs))
            for i in range(N_THREADS)
        ]
        want = [want_grad if i % 2 else want_vmap for i in range(N_THREADS)]
        assert_all_match(race(calls), want)


def test_vmap_collectives_in_threads_see_their_own_axis_size():
    # the same axis name bound to a different size in each thread
    def mean_over_axis(x):
        y = chain(x, n=30)  # a while inside the axis binding, so threads overlap there
        return y - lax.pmean(y, "i") + lax.psum(jnp.ones(()), "i")

    batches = [np.linspace(0, 1, n * 3, dtype=np.float32).reshape(n, 3) for n in range(2, 2 + N_THREADS)]
    want = [chain_np(b, n=30) - chain_np(b, n=30).mean(0) + len(b) for b in batches]
    for r in range(ROUNDS):
        calls = [lambda b=b: omnistage.vmap(mean_over_axis, axis_name="i")(b) for b in batches]
        assert_all_match(race(calls), want)


def test_nested_jit_traced_in_some_threads_and_called_in_others(compiles):
    for r in range(ROUNDS):
        inner = omnistage.jit(lambda x: chain(x, n=20), backend="interpreter")
        outer = omnistage.jit(lambda x: inner(x) * 2.0 + inner(x + 1.0), backend="interpreter")
        want_inner = chain_np(X, n=20)
        want_outer = want_inner * 2 + chain_np(X + 1, n=20)
        calls = [(lambda: inner(X)) if i % 2 else (lambda: outer(X)) for i in range(N_THREADS)]
        want = [want_inner if i % 2 else want_outer for i in range(N_THREADS)]
        del compiles[:]
        assert_all_match(race(calls), want)
        assert len(compiles) == 2  # one key of inner, one of outer


def test_recursive_jitted_function_from_many_threads(compiles):
    @functools.partial(omnistage.jit, static_argnums=1, backend="interpreter")
    def power(x, n):
        if n == 0:
            return jnp.ones_like(x)
        return x * power(x, n - 1)

    depths = [i % 4 + 2 for i in range(N_THREADS)]
    results = race([lambda n=n: power(X, n) for n in depths])
    assert_all_match(results, [X.astype(np.float64) ** n for n in depths])
    assert len(compiles) == len(set(depths))  # one compile per static depth


# --- single flight: failures and re-entrancy --------------------------------------------------


def test_waiters_retry_when_the_compiling_thread_fails(compiles):
    failed = []

    def flaky(x):
        if not failed:  # the first trace fails, once
            failed.append(threading.get_ident())
            time.sleep(0.2)  # others arrive and wait for this compile meanwhile
            raise ValueError("first trace fails")
        return x * 3.0

    f = omnistage.jit(flaky, backend="interpreter", python_control_flow=False)
    results = race([lambda: f(X)] * N_THREADS)
    errors_ = [r for r in results if isinstance(r, Exception)]
    assert len(errors_) == 1 and "first trace fails" in str(errors_[0])
    assert_all_match([r for r in results if not isinstance(r, Exception)], [X * 3] * (N_THREADS - 1))
    assert len(compiles) == 1


def test_a_failing_trace_fails_in_every_thread_without_hanging():
    def bad(x):
        time.sleep(0.05)
        return jnp.dot(x, jnp.ones((3, 3)))  # shape mismatch, at trace time

    f = omnistage.jit(bad, backend="interpreter", python_control_flow=False)
    results = race([lambda: f(X)] * N_THREADS)
    assert all(isinstance(r, (TypeError, ValueError)) for r in results), results


def test_a_trace_that_compiles_its_own_key_does_not_wait_for_itself():
    def f(x):
        if isinstance(x, Tracer) and not f.inner_done:
            f.inner_done = True
            jf.lower(x).compile()  # the key this very trace is compiling
        return x + 1.0

    f.inner_done = False
    jf = omnistage.jit(f, backend="interpreter", python_control_flow=False)
    results = race([lambda: jf(X)])
    assert_all_match(results, [X + 1])


# --- deterministic interleavings: one thread paused inside its trace -------------------------


def paused_trace(body_while_paused):
    """Trace a jitted function in thread A, pause it in the middle of its trace, run
    `body_while_paused()` in this thread, then let A finish. Returns (A's result, the body's)."""
    inside, resume = threading.Event(), threading.Event()

    def traced(x):
        y = jnp.sin(x)
        inside.set()
        assert resume.wait(JOIN_S)
        return y + 1.0

    f = omnistage.jit(traced, backend="interpreter", python_control_flow=False)
    box = {}
    t = threading.Thread(target=lambda: box.setdefault("a", f(X)), daemon=True)
    t.start()
    assert inside.wait(JOIN_S)
    try:
        mine = body_while_paused()
    finally:
        resume.set()
        t.join(JOIN_S)
    assert not t.is_alive()
    assert_all_match([box["a"]], [np.sin(X) + 1])
    return mine


def test_eager_op_while_another_thread_traces_is_eager():
    got = paused_trace(lambda: jnp.cos(jnp.asarray(X)) * 2.0)
    assert not isinstance(got, Tracer)
    np.testing.assert_allclose(np.asarray(got), np.cos(X) * 2, rtol=1e-6)


def test_jit_call_while_another_thread_traces_compiles_its_own():
    g = omnistage.jit(lambda x: jnp.multiply(x, 5.0), backend="interpreter")
    got = paused_trace(lambda: g(X))
    assert not isinstance(got, Tracer)
    np.testing.assert_allclose(np.asarray(got), X * 5)
    np.testing.assert_allclose(np.asarray(g(X)), X * 5)  # and what it cached is right


def test_disable_jit_is_per_thread():
    traces = []

    def f(x):
        traces.append(threading.get_ident())
        return x * 2.0

    jf = omnistage.jit(f, backend="interpreter", python_control_flow=False)
    inside, resume = threading.Event(), threading.Event()

    def in_disable_jit():
        with omnistage.disable_jit():
            jf(X)
            jf(X)  # eager: the body runs again
            inside.set()
            assert resume.wait(JOIN_S)

    t = threading.Thread(target=in_disable_jit, daemon=True)
    t.start()
    assert inside.wait(JOIN_S)
    try:
        me = threading.get_ident()
        jf(X)
        jf(X)  # this thread compiled: the body ran once
        assert traces.count(me) == 1
    finally:
        resume.set()
        t.join(JOIN_S)
    assert traces.count(t.ident) == 2
    assert not omnistage.config.read("jax_disable_jit")


def test_custom_jvp_rule_applies_while_another_thread_stages_it():
    @omnistage.custom_jvp
    def f(x):
        return jnp.sin(x)

    inside, resume = threading.Event(), threading.Event()

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        if threading.current_thread().name == "stager":
            inside.set()  # thread A is staging this rule; B computes grad(f) meanwhile
            assert resume.wait(JOIN_S)
        return f(x), 42.0 * t  # not sin's derivative: shows the custom rule was used

    box = {}
    t = threading.Thread(target=lambda: box.setdefault("a", omnistage.grad(f)(1.0)), name="stager", daemon=True)
    t.start()
    assert inside.wait(JOIN_S)
    try:
        mine = omnistage.grad(f)(1.0)
    finally:
        resume.set()
        t.join(JOIN_S)
    assert float(mine) == 42.0
    assert float(box["a"]) == 42.0


def test_tracer_leaked_to_another_thread_raises_unexpected_tracer_error():
    leaked, inside, resume = [], threading.Event(), threading.Event()

    def leaks(x):
        leaked.append(x)
        inside.set()
        assert resume.wait(JOIN_S)
        return x

    f = omnistage.jit(leaks, backend="interpreter", python_control_flow=False)
    t = threading.Thread(target=lambda: f(X), daemon=True)
    t.start()
    assert inside.wait(JOIN_S)
    try:
        g = omnistage.jit(lambda y: y + leaked[0], backend="interpreter", python_control_flow=False)
        with pytest.raises(errors.UnexpectedTracerError, match="another thread"):
            g(X)
        with pytest.raises(errors.UnexpectedTracerError, match="another thread"):
            jnp.sin(leaked[0])
    finally:
        resume.set()
        t.join(JOIN_S)
