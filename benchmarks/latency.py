"""First-call latency of `jit(selu)` on 1M float32 elements, in fresh processes.

cold: an empty compile cache (OMNISTAGE_CACHE_DIR is a new directory): trace, emit, write the
module, Numba compiles; after the call a background builder links the native library (the
process waits for it at exit, which is not part of the first call). warm: a second fresh
process on the cache the first one filled: it loads the native library with ctypes and never
imports Numba (codegen/aot.py). "warm, Numba cache" is the same with OMNISTAGE_AOT=0: Numba
loads its cached machine code. Also `import omnistage` alone. Median of `--runs` runs each (default 3),
then instrumented cold and warm runs (median of `--runs` too) showing where the time goes, and
the floor any Numba-based first call pays: a hand-written `@njit(cache=True)` loop, warm.

Issue 3's targets: cold first call <= 700 ms, warm first call <= 350 ms (both measured after
`import omnistage`, which is reported separately).

Run: python benchmarks/latency.py [--runs N]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

TARGETS_MS = {"cold": 700.0, "warm": 350.0}

SELU = '''
import numpy as np
import omnistage
import omnistage.numpy as jnp


def selu(x, alpha=1.67, lambda_=1.05):
    return lambda_ * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


x = np.linspace(-3.0, 3.0, 1_000_000, dtype=np.float32)
'''

# End to end: what a user sees.
PLAIN = '''
import json, time
t0 = time.perf_counter()
import omnistage
t1 = time.perf_counter()
exec(SELU)
t2 = time.perf_counter()
import sys
f = omnistage.jit(selu)
y = np.asarray(f(x))
t3 = time.perf_counter()
assert y.dtype == np.float32 and y.shape == x.shape
path = type(f.lower(x).compile().executable).__name__
print(json.dumps({"import omnistage": t1 - t0, "first call": t3 - t2, "path": path,
                  "numba imported": "numba" in sys.modules}))
'''

# The same work, one step at a time (uses codegen internals; benchmarks only).
STEPS = '''
import json, sys, time
stamps = [("start", time.perf_counter())]
def mark(label):
    stamps.append((label, time.perf_counter()))
import omnistage
mark("import omnistage")
exec(SELU)
import numba
mark("import numba")
from omnistage.codegen import disk_cache, emit_cpu, support, vmath
mark("import runtime (support, vmath)")
lowered = omnistage.jit(selu).lower(x)
mark("trace")
inner = {"emit": 0.0, "load module": 0.0}
def timed(label, fn):
    def wrapper(*args, **kwargs):
        t = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            inner[label] += time.perf_counter() - t
    return wrapper
emit_cpu.emit_module = timed("emit", emit_cpu.emit_module)
disk_cache.load_module = timed("load module", disk_cache.load_module)
compiled = lowered.compile()
mark("compile (emit + load module)")
from numba.core.registry import cpu_target
cpu_target.target_context.refresh()
mark("Numba target init")
fn = compiled.executable._fn
args = (x, *compiled.executable._consts)
fn.compile(tuple(numba.typeof(a) for a in args))
mark("Numba load/compile")
y = np.asarray(compiled(x))
mark("first run")
out = {label: t - stamps[i][1] for i, (label, t) in enumerate(stamps[1:])}
compile_step = out.pop("compile (emit + load module)")
steps = {}
for label, value in out.items():
    steps[label] = value
    if label == "trace":
        steps["emit"] = inner["emit"]
        steps["load module (name, write, exec)"] = inner["load module"]
        steps["other compile"] = compile_step - inner["emit"] - inner["load module"]
steps["cache hits"] = sum(fn.stats.cache_hits.values())
print(json.dumps(steps))
'''


# The floor: a hand-written @njit(cache=True) selu loop in a module on disk, warm Numba cache.
# No omnistage; what any Numba-based first call pays (import numba, target init, cache load).
NUMBA_MODULE = '''import numpy as np
import numba


@numba.njit(cache=True, error_model="numpy")
def selu(x):
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        v = x[i]
        out[i] = np.float32(1.05) * (v if v > 0 else np.float32(1.67) * np.exp(v) - np.float32(1.67))
    return out
'''

NUMBA_FLOOR = '''
import json, sys, time
import numpy as np
x = np.linspace(-3.0, 3.0, 1_000_000, dtype=np.float32)
sys.path.insert(0, CACHE_DIR)
t0 = time.perf_counter()
import numba
t1 = time.perf_counter()
import handwritten_selu
from numba.core.registry import cpu_target
cpu_target.target_context.refresh()
t2 = time.perf_counter()
handwritten_selu.selu(x)
t3 = time.perf_counter()
print(json.dumps({"import numba": t1 - t0, "Numba target init": t2 - t1, "load + first run": t3 - t2,
                  "first call": t3 - t0}))
'''


def run(script, cache_dir, **extra_env):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMNISTAGE_", "NUMBA_CACHE_DIR"))}
    env["OMNISTAGE_CACHE_DIR"] = cache_dir
    env.update(extra_env)
    code = f"SELU = {SELU!r}\nCACHE_DIR = {cache_dir!r}\n{script}"
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"benchmark child failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def cold_and_warm(script, runs, root, **env):
    """`runs` cold results (each on a new cache) and `runs` warm ones (on one filled cache)."""
    cold = [run(script, tempfile.mkdtemp(prefix="cold-", dir=root), **env) for _ in range(runs)]
    warm_dir = tempfile.mkdtemp(prefix="warm-", dir=root)
    run(script, warm_dir, **env)  # fills the cache
    warm = [run(script, warm_dir, **env) for _ in range(runs)]
    return cold, warm


def warm_only(script, runs, root, **env):
    warm_dir = tempfile.mkdtemp(prefix="warm-", dir=root)
    run(script, warm_dir, **env)  # fills the cache
    return [run(script, warm_dir, **env) for _ in range(runs)]


def median(results, key):
    return statistics.median(r[key] for r in results)


def verdict(ms, target):
    return "ok" if ms <= target else f"missed by {ms - target:.0f} ms ({ms / target:.1f}x)"


def _path(results):
    paths = sorted({r["path"] for r in results})
    numba = "numba imported" if any(r["numba imported"] for r in results) else "no numba"
    return f"{'/'.join(paths)}, {numba}"


def print_summary(cold, warm, warm_numba):
    imp = statistics.median([r["import omnistage"] for r in cold + warm]) * 1e3
    c, w = median(cold, "first call") * 1e3, median(warm, "first call") * 1e3
    wn = median(warm_numba, "first call") * 1e3
    print(f"{'jit(selu) on 1M float32, fresh process':44}{'median ms':>10}{'target':>10}   verdict / path")
    print(f"{'import omnistage':44}{imp:10.0f}{'-':>10}")
    print(f"{'cold first call (empty cache)':44}{c:10.0f}{'<= 700':>10}   {verdict(c, TARGETS_MS['cold'])}"
          f"   [{_path(cold)}]")
    print(f"{'warm first call (second fresh process)':44}{w:10.0f}{'<= 350':>10}   {verdict(w, TARGETS_MS['warm'])}"
          f"   [{_path(warm)}]")
    print(f"{'warm, import included':44}{w + imp:10.0f}")
    print(f"{'warm, Numba cache (OMNISTAGE_AOT=0)':44}{wn:10.0f}{'-':>10}   [{_path(warm_numba)}]")


def numba_floor(runs, root):
    directory = tempfile.mkdtemp(prefix="numba-", dir=root)
    with open(os.path.join(directory, "handwritten_selu.py"), "w") as f:
        f.write(NUMBA_MODULE)
    run(NUMBA_FLOOR, directory)  # fills Numba's cache
    return [run(NUMBA_FLOOR, directory) for _ in range(runs)]


def print_floor(results):
    print(f"\n{'floor: hand-written @njit(cache=True), warm (ms)':44}{'median':>10}")
    for label in results[0]:
        print(f"{label:44}{median(results, label) * 1e3:10.1f}")


def print_breakdown(cold, warm):
    labels = [k for k in cold[0] if k != "cache hits"]
    print(f"\n{'where the time goes (ms, median)':44}{'cold':>10}{'warm':>10}")
    for label in labels:
        print(f"{label:44}{median(cold, label) * 1e3:10.1f}{median(warm, label) * 1e3:10.1f}")
    total_c = sum(median(cold, k) for k in labels) * 1e3
    total_w = sum(median(warm, k) for k in labels) * 1e3
    print(f"{'sum':44}{total_c:10.1f}{total_w:10.1f}")
    print(f"{'Numba cache hits (warm must be > 0)':44}{median(cold, 'cache hits'):10.0f}{median(warm, 'cache hits'):10.0f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="omnistage-latency-") as root:
        cold, warm = cold_and_warm(PLAIN, args.runs, root)
        warm_numba = warm_only(PLAIN, args.runs, root, OMNISTAGE_AOT="0")
        print_summary(cold, warm, warm_numba)
        print("\nthe Numba path step by step (OMNISTAGE_AOT=0):")
        print_breakdown(*cold_and_warm(STEPS, args.runs, root, OMNISTAGE_AOT="0"))
        print_floor(numba_floor(args.runs, root))


if __name__ == "__main__":
    main()
