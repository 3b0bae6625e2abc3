"""Generated functions compile with a shorter Numba pipeline (codegen/numba_pipeline.py): the
results are the same bits as with Numba's own pipeline, the skipped passes do not run, and
functions that need Numba's whole pipeline (parallel loops, object-mode callbacks) keep it."""
import numba
import numpy as np
import pytest

import omnistage
import omnistage.numpy as jnp
from omnistage.codegen import emit_cpu, parallel

pytestmark = pytest.mark.numba_path  # tests of the Numba build (tests/conftest.py)

_PROGRAMS = {
    # a max reduction's accumulator holds an integer key, then the float it stands for
    "softmax": (lambda x: jnp.exp(x - x.max(1, keepdims=True)) / jnp.exp(x - x.max(1, keepdims=True)).sum(1, keepdims=True),
                lambda rng: rng.standard_normal((64, 33)).astype(np.float32)),
    "stats": (lambda x: (jnp.argmax(x, axis=0), x.min(), jnp.sqrt(jnp.var(x, axis=1)), jnp.cumsum(x, axis=1)),
              lambda rng: rng.standard_normal((40, 24)).astype(np.float64)),
    "while": (lambda x: omnistage.lax.while_loop(lambda c: c[0] < 7, lambda c: (c[0] + 1, jnp.tanh(c[1]) * 1.5), (0, x))[1],
              lambda rng: rng.standard_normal(50).astype(np.float32)),
}


def _entry_of(source, keep_pipeline):
    if not keep_pipeline:
        source = source.replace(f", pipeline_class={emit_cpu.PIPELINE_NAME}", "")
    namespace = {}
    exec(compile(source.replace("cache=_OMNISTAGE_CACHED", "cache=False"), "<generated>", "exec"), namespace)
    return [v for v in namespace.values() if isinstance(v, numba.core.registry.CPUDispatcher)][-1]


@pytest.mark.parametrize("name", sorted(_PROGRAMS))
def test_same_bits_as_numbas_own_pipeline(name, monkeypatch):
    monkeypatch.setattr(parallel, "_ENABLED", False)
    f, make = _PROGRAMS[name]
    x = make(np.random.default_rng(3))
    source = omnistage.jit(f, backend="cpu").lower(x).compile().as_text()
    assert f"pipeline_class={emit_cpu.PIPELINE_NAME}" in source
    lean, full = _entry_of(source, True), _entry_of(source, False)
    got, want = lean(x), full(x)
    for g, w in zip(got, want):
        assert np.asarray(g).tobytes() == np.asarray(w).tobytes()
    (lean_overload,) = lean.overloads.values()
    passes = " ".join(k for times in lean_overload.metadata["pipeline_times"].values() for k in times)
    assert "inline_closure_likes" not in passes and "nopython_rewrites" not in passes
    assert "ssa" in passes and "native_lowering" in passes


def test_loops_keep_their_reference_counting_out_of_the_loop(monkeypatch):
    # IRLegalization places the `del`s; without it every array read in a loop was increfed per
    # iteration (an atomic instruction), and the mnist momentum update ran 5x slower
    monkeypatch.setattr(parallel, "_ENABLED", False)

    def momentum(p, v, g):
        v = 0.9 * v + g
        return p - 0.1 * v, v

    args = [np.random.default_rng(i).standard_normal((64, 48)).astype(np.float32) for i in range(3)]
    source = omnistage.jit(momentum, backend="cpu").lower(*args).compile().as_text()
    counts = []
    for keep in (True, False):
        entry = _entry_of(source, keep)
        entry(*args)
        (llvm,) = entry.inspect_llvm().values()
        body = llvm.split("define ", 2)[1]  # the function itself, not its wrappers
        counts.append(body.count("call void @NRT_incref"))
    assert counts[0] <= counts[1], counts


def test_object_mode_blocks_compile_and_parallel_functions_keep_numbas_pipeline(monkeypatch, capsys):
    monkeypatch.setattr(parallel, "_ENABLED", False)
    x = np.arange(4.0, dtype=np.float32)

    def shout(x):
        omnistage.debug.print("x = {}", x)
        return x * 2

    compiled = omnistage.jit(shout, backend="cpu").lower(x).compile()
    assert "numba.objmode" in compiled.as_text() and "pipeline_class" in compiled.as_text()
    np.testing.assert_array_equal(compiled(x), x * 2)  # the rest of the function arrives as IR
    assert "x = [0. 1. 2. 3.]" in capsys.readouterr().out
    monkeypatch.setattr(parallel, "_ENABLED", True)
    monkeypatch.setattr(parallel, "TIER_UP_S", -1.0)
    compiled = omnistage.jit(lambda x: jnp.exp(x) * 3.0, backend="cpu").lower(np.ones(1 << 18, np.float32)).compile()
    compiled(np.ones(1 << 18, np.float32))
    text = compiled.as_text()
    assert "numba.prange(" in text and "pipeline_class" not in text
