"""The native tier's quick build and the optimized build that follows it (codegen/c_background.py):
the first call runs a -O1 build, a helper process compiles and publishes the -O2 one, the
program switches to it, and every build gives the same bits."""
import os
import subprocess
import sys
import textwrap
import time

import pytest

from omnistage.codegen import aot, c_tier

pytestmark = pytest.mark.skipif(aot.compiler() is None or not c_tier.enabled(), reason="no C compiler")

# a training step: products, vectorizable elementwise loops, reductions (not a "small" program)
_PROGRAM = textwrap.dedent("""
    import hashlib, sys, time
    import numpy as np, omnistage as fw, omnistage.numpy as xnp
    from omnistage.codegen import aot, c_background

    def loss(params, x, y):
        (w1, b1), (w2, b2) = params
        h = xnp.tanh(x @ w1 + b1)
        z = h @ w2 + b2
        z = z - z.max(1, keepdims=True)
        return -xnp.mean(xnp.sum((z - xnp.log(xnp.sum(xnp.exp(z), 1, keepdims=True))) * y, 1))

    @fw.jit
    def update(params, x, y):
        g = fw.grad(loss)(params, x, y)
        return [(w - 0.1 * gw, b - 0.1 * gb) for (w, b), (gw, gb) in zip(params, g)]

    rng = np.random.default_rng(0)
    params = [(rng.standard_normal((64, 256)).astype(np.float32) * 0.1, np.zeros(256, np.float32)),
              (rng.standard_normal((256, 10)).astype(np.float32) * 0.1, np.zeros(10, np.float32))]
    x = rng.standard_normal((300, 64)).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 300)]
    if sys.argv[1] == "large":  # the quick build of a large module: -Og
        from omnistage.codegen import c_tier
        c_tier.QUICK_LARGE_LINES = c_tier.QUICK_LINES
    if sys.argv[1] in ("no-helper", "look"):
        c_background.request = lambda *a: False
    if sys.argv[1] in ("exit", "look"):  # two programs, then exit at once (or only look at them)
        for rows in (300, 200):
            ex = update.lower(params, x[:rows], y[:rows]).compile().executable
            print(f"STATUS{rows}", "quick" if "optimize" in ex.record else "optimized")
        sys.exit(0)
    def digest():
        return hashlib.sha256(b"".join(np.asarray(a).tobytes() for p in update(params, x, y) for a in p)).hexdigest()
    first = digest()
    ex = update.lower(params, x, y).compile().executable
    print("STATUS", ex.cache_status, "|", "quick" if "optimize" in ex.record else "optimized")
    deadline = time.monotonic() + 120
    while ex.optimizing and time.monotonic() < deadline:
        assert digest() == first
        time.sleep(0.01)
    print("NOW", "quick" if "optimize" in ex.record else "optimized")
    import ctypes  # calls go to the library now adopted, through its own entry
    entry = getattr(ex._lib, aot.OBJECT_CALL)
    print("CALLS", ctypes.cast(ex._call_objects, ctypes.c_void_p).value == ctypes.cast(entry, ctypes.c_void_p).value)
    print("DIGEST", first, digest())
""")


def _run(tmp_path, mode):
    # (no op-by-op tier: when it answers a first call, `compile()` returns its program, not the quick build)
    env = {**os.environ, "OMNISTAGE_CACHE_DIR": str(tmp_path / "cache"), "OMNISTAGE_C_BACKGROUND": "1",
           "OMNISTAGE_C_TIER": "1", "OMNISTAGE_OP_TIER": "0"}
    done = subprocess.run([sys.executable, "-c", _PROGRAM, mode], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = {line.split(" ", 1)[0]: line.split(" ", 1)[1] for line in done.stdout.splitlines() if " " in line}
    return lines


def test_the_first_call_runs_a_quick_build_then_the_optimized_one_with_the_same_bits(tmp_path):
    one = _run(tmp_path, "helper")
    assert "-O1" in one["STATUS"] and one["STATUS"].endswith("quick"), one
    assert one["NOW"] == "optimized" and one["CALLS"] == "True", one
    quick_bits, optimized_bits = one["DIGEST"].split()
    assert quick_bits == optimized_bits
    two = _run(tmp_path, "helper")  # a later process loads the optimized build at once
    assert two["STATUS"].endswith("optimized") and two["DIGEST"].split() == [quick_bits] * 2, two
    # the quick build's record and library went once the optimized one was published
    cached = os.listdir(tmp_path / "cache")
    assert not [n for n in cached if n.endswith("-quick.json")], cached
    assert len([n for n in cached if n.startswith("omnistage_c_") and n.endswith(".so")]) == 1, cached


def test_a_large_modules_quick_build_is_minus_og_with_the_optimized_builds_bits(tmp_path):
    one = _run(tmp_path, "large")
    assert "-Og" in one["STATUS"] and one["STATUS"].endswith("quick"), one
    assert one["NOW"] == "optimized", one
    quick_bits, optimized_bits = one["DIGEST"].split()
    assert quick_bits == optimized_bits


def test_a_quick_build_left_in_the_cache_asks_for_its_optimized_build_again(tmp_path):
    one = _run(tmp_path, "no-helper")  # exits before any optimized build (none was asked for)
    assert one["STATUS"].endswith("quick") and one["NOW"] == "quick", one
    two = _run(tmp_path, "helper")
    assert "loaded from the disk cache" in two["STATUS"] and two["STATUS"].endswith("quick"), two
    assert two["NOW"] == "optimized", two
    assert two["DIGEST"].split() == one["DIGEST"].split()[:1] * 2


def test_the_helper_finishes_its_queue_after_its_process_exits(tmp_path):
    one = _run(tmp_path, "exit")
    assert one == {"STATUS300": "quick", "STATUS200": "quick"}, one
    deadline = time.monotonic() + 180
    while True:  # a later process finds both optimized builds, which it did not ask for
        later = _run(tmp_path, "look")
        if later == {"STATUS300": "optimized", "STATUS200": "optimized"} or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert later == {"STATUS300": "optimized", "STATUS200": "optimized"}, later


def _compiler_planting(monkeypatch, instruction):
    """c_tier._compile replaced by one that writes `instruction` as the assembly and fails to
    link; the calls it got, as (flags, assembly, assembled)."""
    calls = []

    def fake_compile(cc, flags, translated, work, assembly=False, assembled=None):
        calls.append((tuple(flags), assembly, assembled))
        if assembly:
            with open(os.path.join(work, "program.s"), "w") as f:
                f.write(f"\t{instruction}\t%ymm1, %ymm2, %ymm0\n")
            return "program.s", []
        return None, ["stop here"]

    monkeypatch.setattr(c_tier, "_compile", fake_compile)
    return calls


def test_vectorized_fused_multiply_add_pairs_make_the_optimized_build_scalar(monkeypatch):
    # GCC's SLP vfmaddsub ignores -ffp-contract=off: the one way -O2 could change a value
    calls = _compiler_planting(monkeypatch, "vfmaddsub231ps")
    assert c_tier.build_optimized("k", "int x;", {}) is False
    assert calls[0][1] and calls[1][0][-2:] == ("-fno-tree-vectorize", "-fno-tree-slp-vectorize") and calls[1][2] is None
    assert c_tier._FUSED_PAIR.search("vfmsubadd132pd") and not c_tier._FUSED_PAIR.search("vfmadd231ps")


_SMALL_PROGRAM = textwrap.dedent("""
    import hashlib, time
    import numpy as np, omnistage as fw, omnistage.numpy as xnp
    from omnistage.codegen import aot, c_tier

    real_build, used = c_tier._build, []
    c_tier._build = lambda *a: used.append(a[4]) or real_build(*a)
    f = fw.jit(lambda x: 1.05 * xnp.where(x > 0, x, 1.67 * xnp.exp(x) - 1.67))  # selu: one loop
    x = np.random.default_rng(0).random(300000).astype(np.float32) - 0.5
    first = hashlib.sha256(np.asarray(f(x)).tobytes()).hexdigest()
    ex = f.lower(x).compile().executable
    print("STATUS", ex.cache_status, "|", "quick" if "optimize" in ex.record else "optimized")
    print("FLAGS", "vectorized" if used == [c_tier.QUICK_VECTORIZED] else used)
    deadline = time.monotonic() + 120
    while ex.optimizing and time.monotonic() < deadline:
        time.sleep(0.01)
    print("NOW", "quick" if "optimize" in ex.record else "optimized")
    import ctypes  # calls go to the library now adopted, through its own entry
    entry = getattr(ex._lib, aot.OBJECT_CALL)
    print("CALLS", ctypes.cast(ex._call_objects, ctypes.c_void_p).value == ctypes.cast(entry, ctypes.c_void_p).value)
    print("DIGEST", first, hashlib.sha256(np.asarray(f(x)).tobytes()).hexdigest())
""")


def test_a_small_module_answers_with_a_vectorized_quick_build_then_the_optimized_one(tmp_path):
    """Under QUICK_LINES lines the quick build is -O1 with the loop vectorizer (selu's exp loop
    as fast as -O2's, compiled in ~0.75 of the time); the -O2 build follows, with its bits."""
    env = {**os.environ, "OMNISTAGE_CACHE_DIR": str(tmp_path / "cache"), "OMNISTAGE_C_BACKGROUND": "1",
           "OMNISTAGE_C_TIER": "1"}
    done = subprocess.run([sys.executable, "-c", _SMALL_PROGRAM], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    out = {line.split(" ", 1)[0]: line.split(" ", 1)[1] for line in done.stdout.splitlines() if " " in line}
    assert out["STATUS"].endswith("quick") and out["FLAGS"] == "vectorized" and out["NOW"] == "optimized" and out["CALLS"] == "True", out
    quick_bits, optimized_bits = out["DIGEST"].split()
    assert quick_bits == optimized_bits


def test_a_vectorized_quick_build_with_fused_pairs_is_compiled_scalar(monkeypatch):
    """The quick build that vectorizes goes through assembly as the optimized build does: a
    vfmaddsub there would round differently from an optimized build made scalar for it."""
    calls = _compiler_planting(monkeypatch, "vfmsubadd231ps")
    assert c_tier._build(None, "k", ["cc"], "int x;", c_tier.QUICK_VECTORIZED, {}) is None
    assert calls[0][0] == c_tier.QUICK_VECTORIZED and calls[0][1]
    assert calls[1][0] == c_tier.QUICK_VECTORIZED + ("-fno-tree-vectorize", "-fno-tree-slp-vectorize")
    calls.clear()
    c_tier._build(None, "k", ["cc"], "int x;", c_tier.QUICK, {})  # plain -O1 does not vectorize: straight through
    assert len(calls) == 1 and not calls[0][1]
