"""The collector is paused while a program compiles, and only then."""
import gc

import numpy as np

import omnistage
import omnistage.numpy as jnp
from omnistage.core import gc_pause


def test_nested_pauses_resume_once_at_the_outermost():
    assert gc.isenabled()
    with gc_pause.paused():
        assert not gc.isenabled()
        with gc_pause.paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_collector_the_user_disabled_stays_disabled():
    gc.disable()
    try:
        with gc_pause.paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_an_error_in_the_compile_resumes_the_collector():
    try:
        with gc_pause.paused():
            raise ValueError("boom")
    except ValueError:
        pass
    assert gc.isenabled()


def test_a_compile_runs_no_collection_and_frees_its_garbage_after():
    seen = []

    def watch(phase, info):
        if phase == "start":  # (while a pause is on, generation)
            seen.append((gc_pause._depth > 0, info["generation"]))

    def f(x, w):  # distinct from other tests' programs: this one compiles here
        h = jnp.tanh(x @ w + 0.25)
        return jnp.sum(jnp.exp(h) * jnp.sin(h), axis=0) / 3.5 + jnp.max(h)

    x = np.random.RandomState(0).rand(17, 13).astype(np.float32)
    w = np.random.RandomState(1).rand(13, 11).astype(np.float32)
    gc.callbacks.append(watch)
    try:
        got = omnistage.jit(f)(x, w)
    finally:
        gc.callbacks.remove(watch)
    h = np.tanh(x @ w + 0.25)
    np.testing.assert_allclose(np.asarray(got), np.sum(np.exp(h) * np.sin(h), axis=0) / 3.5 + h.max(), rtol=2e-5)
    # none during the compile (a collection before it, in argument handling, may happen: the
    # counters are the process's), and the young collection that ends it
    assert [g for paused, g in seen if paused] == []
    assert 0 in [g for paused, g in seen if not paused]
    assert gc.isenabled()
