"""First-call (compile) time of bigger programs, omnistage against JAX, in fresh processes.

`benchmarks/latency.py` times the smallest program (selu); this times the programs where
Numba's compile time is the user's problem: a training step (grad through a 3-layer MLP plus
an Adam update), a vmapped gradient through `eig`, a gradient through a 100-step `scan`, and
`random.gamma` (nested while loops of threefry rounds). Each cell is one fresh process whose
omnistage cache is empty (tracing, code generation and Numba's compile of the program all
count); omnistage's own runtime kernels (`kernels.py`, `vmath`) come from Numba's cache,
warmed by a first untimed run, as they are on any machine after first use. JAX has no
persistent cache here. Steady-state call times are in cpu.py/grad.py/vmap.py.

Run: python benchmarks/compile_time.py [--runs N] [--cases a,b]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

PRELUDE = {
    "omnistage": "import omnistage as fw, omnistage.numpy as xnp\n"
                 "from omnistage import lax, random\n"
                 "from omnistage.example_libraries import optimizers, stax\n",
    "jax": "import jax as fw, jax.numpy as xnp\n"
           "from jax import lax, random\n"
           "from jax.example_libraries import optimizers, stax\n",
}

CASES = {
    "train_step": ("grad + adam, MLP 32-64-64-10, batch 128", """
init, apply = stax.serial(stax.Dense(64), stax.Relu, stax.Dense(64), stax.Relu, stax.Dense(10), stax.LogSoftmax)
_, params = init(random.PRNGKey(0), (-1, 32))
opt_init, opt_update, get_params = optimizers.adam(1e-3)
def loss(p, x, y):
    return -xnp.mean(xnp.sum(apply(p, x) * y, -1))
@fw.jit
def step(i, st, x, y):
    return opt_update(i, fw.grad(loss)(get_params(st), x, y), st)
x = np.random.rand(128, 32).astype(np.float32)
y = np.eye(10, dtype=np.float32)[np.random.randint(0, 10, 128)]
st = opt_init(params)
RUN = lambda: step(0, st, x, y)
"""),
    "vmap_grad_eig": ("vmap(grad(spectral radius)), 16 x 3x3", """
def radius(w):
    return xnp.max(xnp.abs(xnp.linalg.eigvals(w)))
step = fw.jit(lambda ws: ws - 0.1 * fw.vmap(fw.grad(radius))(ws))
ws = np.random.rand(16, 3, 3).astype(np.float32)
RUN = lambda: step(ws)
"""),
    "scan_grad": ("grad through a 100-step scan (grad.py's)", """
from grad import scan_loss
step = fw.jit(fw.value_and_grad(scan_loss(lax, xnp)))
w, xs = np.full(16, 0.5, np.float32), np.random.rand(100, 16).astype(np.float32)
RUN = lambda: step(w, xs)
"""),
    "gamma": ("random.gamma(key, 2.5, (1000,))", """
f = fw.jit(lambda k: random.gamma(k, 2.5, (1000,)))
key = random.PRNGKey(0)
RUN = lambda: f(key)
"""),
}

CHILD = """
import json, sys, time
sys.path.insert(0, {here!r})
import numpy as np
{prelude}
{setup}
t0 = time.perf_counter()
fw.block_until_ready(RUN())
t1 = time.perf_counter()
fw.block_until_ready(RUN())
print(json.dumps({{"first_s": t1 - t0, "second_s": time.perf_counter() - t1}}))
"""


def run_child(framework, case, env):
    code = CHILD.format(here=os.path.dirname(os.path.abspath(__file__)), prelude=PRELUDE[framework], setup=CASES[case][1])
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "failed"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def _jax_available():
    return subprocess.run([sys.executable, "-c", "import jax"], capture_output=True).returncode == 0


def _fmt(seconds):
    if seconds is None:
        return "-"
    if seconds >= 1:
        return f"{seconds:.2f} s"
    return f"{seconds * 1e3:.0f} ms" if seconds >= 1e-2 else f"{seconds * 1e6:.0f} µs"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1, help="fresh processes per cell (median)")
    parser.add_argument("--cases", default=",".join(CASES))
    args = parser.parse_args()
    cases = [c for c in args.cases.split(",") if c]
    jax = _jax_available()
    base = dict(os.environ, OMNISTAGE_AOT="0", JAX_PLATFORMS="cpu", TF_CPP_MIN_LOG_LEVEL="3")
    with tempfile.TemporaryDirectory(prefix="omnistage-compile-") as root:
        numba_cache = os.path.join(root, "numba")
        rows = []
        for case in cases:
            # untimed: fills Numba's cache of omnistage's runtime kernels for this case
            run_child("omnistage", case, dict(base, OMNISTAGE_CACHE_DIR=os.path.join(root, case, "warmup"),
                                              NUMBA_CACHE_DIR=numba_cache))
            ours = []
            for k in range(args.runs):
                # a fresh module cache: the program itself is compiled from scratch (the
                # generated module's file name differs per cache dir, so Numba misses too)
                env = dict(base, OMNISTAGE_CACHE_DIR=os.path.join(root, case, f"run{k}"), NUMBA_CACHE_DIR=numba_cache)
                ours.append(run_child("omnistage", case, env))
            theirs = [run_child("jax", case, base) for _ in range(args.runs)] if jax else []
            rows.append((case, ours, theirs))

    def med(runs, key):
        values = [r[key] for r in runs if key in r]
        return statistics.median(values) if values else None

    print(f"First call (compile) time in fresh processes, median of {args.runs} run(s); JAX {'installed' if jax else 'not installed'}.")
    print(f"{'case':<15} {'program':<42} {'omnistage':>10} {'JAX':>9} {'ratio':>7}   second call (ours / JAX)")
    for case, ours, theirs in rows:
        a, b = med(ours, "first_s"), med(theirs, "first_s")
        ratio = f"{a / b:.1f}x" if a and b else "-"
        errors = [r["error"] for r in ours + theirs if "error" in r]
        print(f"{case:<15} {CASES[case][0]:<42} {_fmt(a):>10} {_fmt(b):>9} {ratio:>7}   "
              f"{_fmt(med(ours, 'second_s'))} / {_fmt(med(theirs, 'second_s'))}" + (f"   errors: {errors}" if errors else ""))


if __name__ == "__main__":
    main()
