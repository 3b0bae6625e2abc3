"""What every example port shares: the one backend switch, synthetic MNIST-shaped data, and the
timing records the runner reads.

An example is a script, run as `python -m benchmarks.examples.<name> --backend jax|omnistage`.
It imports this module first: the command line is read here, at import, so the script can pick
its imports (`import jax` or `import omnistage as jax`, under the same names) before any of its
module-level definitions, just as the original reads `jax`. Thread settings are environment
variables that NumPy, Numba and JAX read when they load, so they are applied here too, before
those imports (benchmarks/bench_env.py says why one thread each by default).

Each timed program prints one line `EXAMPLE_RESULT {json}` (first call, every steady call);
an example that cannot run on a backend prints `EXAMPLE_SKIP {json}` with the reason, and a
stand-in or a part left out is said by `EXAMPLE_NOTE {json}`.
"""
import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import bench_env  # noqa: E402

SIZES = ("full", "small", "tiny")


def _parse(argv):
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--backend", choices=("jax", "omnistage"), default="omnistage")
    parser.add_argument("--threads", choices=("1", "default"), default="1")
    parser.add_argument(
        "--size", choices=SIZES, default="full",
        help="full: the original's shapes and data counts; small: the original's shapes, "
             "a tenth of the data per epoch; tiny: small shapes, for smoke tests")
    parser.add_argument("--repeats", type=int, default=0, help="steady calls per program (0: the example's own)")
    return parser.parse_known_args(argv)[0]


ARGS = _parse(sys.argv[1:])
BACKEND, SIZE = ARGS.backend, ARGS.size
bench_env.apply(single_thread=ARGS.threads == "1")

import numpy as np  # noqa: E402 - after the thread settings


def pick(full, small=None, tiny=None):
    """The value for this run's --size (small defaults to full, tiny to small)."""
    small = full if small is None else small
    return {"full": full, "small": small, "tiny": small if tiny is None else tiny}[SIZE]


def repeats(default):
    return ARGS.repeats or (2 if SIZE == "tiny" else default)


def mnist(n_train=60000, n_test=10000, seed=0):
    """Synthetic stand-in for `datasets.mnist()`: float32 pixels in [0, 1) of shape (n, 784)
    and one-hot float32 labels of shape (n, 10), no download."""
    rng = np.random.RandomState(seed)
    def images(n):
        return rng.random_sample((n, 28 * 28)).astype(np.float32)
    def labels(n):
        return np.eye(10, dtype=np.float32)[rng.randint(0, 10, n)]
    return images(n_train), labels(n_train), images(n_test), labels(n_test)


def batches(images, labels, batch_size, seed=0):
    """The examples' endless `data_stream()`: each epoch a fresh permutation, cut into batches
    (the last one short), as JAX's examples write it."""
    rng = np.random.RandomState(seed)
    num_train = images.shape[0]
    num_batches = -(-num_train // batch_size)
    while True:
        perm = rng.permutation(num_train)
        for i in range(num_batches):
            batch_idx = perm[i * batch_size:(i + 1) * batch_size]
            yield images[batch_idx], labels[batch_idx]


def skip(example, reason):
    """Say why this example cannot run on this backend, and end the process successfully."""
    print("EXAMPLE_SKIP " + json.dumps({"example": example, "backend": BACKEND, "reason": reason}), flush=True)
    sys.exit(0)


def note(example, text):
    """A remark the runner prints under the table (a stand-in used, a part left out)."""
    print("EXAMPLE_NOTE " + json.dumps({"example": example, "backend": BACKEND, "note": text}), flush=True)


def missing_names(module, names):
    """The subset of `names` that `module` lacks (dotted names are looked up attribute by attribute)."""
    out = []
    for name in names:
        obj = module
        for part in name.split("."):
            obj = getattr(obj, part, None)
        if obj is None:
            out.append(f"{getattr(module, '__name__', module)}.{name}")
    return out


def block(tree):
    """Wait for every array in `tree` (JAX dispatches asynchronously; omnistage returns done)."""
    if isinstance(tree, dict):
        tree = list(tree.values())
    if isinstance(tree, (list, tuple)):
        for leaf in tree:
            block(leaf)
    elif hasattr(tree, "block_until_ready"):
        tree.block_until_ready()
    return tree


# Calls between the first and the timed steady ones, for this long: a warm-up, as benchmarks of
# a JIT have. omnistage answers its first calls with a quick build while the optimized one
# compiles in the background (codegen/c_background.py); a big module's (the private SGD step's
# 737 lines) takes longer than WARMUP_S on a loaded 2-core machine, so omnistage's warm-up goes
# on while such a build is pending, up to WARMUP_MAX_S: the steady calls are the optimized
# build's, and the record says how long the warm-up took (`warmup_s`, each call's time; the
# runner reports the ones longer than WARMUP_S with the quick build's median). JAX's calls are
# steady from the second.
WARMUP_S = 2.0
WARMUP_MAX_S = 60.0
WARMUP_CALLS = 50000


def _builds_pending():
    """Whether omnistage is still compiling an optimized build this process asked for."""
    background = sys.modules.get("omnistage.codegen.c_background")
    return BACKEND == "omnistage" and background is not None and background.pending()


def time_program(example, program, call, n_steady):
    """Time `call()` once (the first call: tracing and compiling included), call it for
    WARMUP_S seconds more, then time `n_steady` more calls; print the record and return the
    last result. `call` gets the previous result (None at first), so a training step can feed
    its state forward."""
    result, times, cpu, warmup = None, [], [], []
    for k in range(1 + n_steady):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = block(call(result))
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
        if k == 0 and n_steady:
            began = time.perf_counter()
            until = began + (0.0 if SIZE == "tiny" else WARMUP_S)
            while len(warmup) < WARMUP_CALLS and (time.perf_counter() < until or (
                    SIZE != "tiny" and _builds_pending() and time.perf_counter() < began + WARMUP_MAX_S)):
                start = time.perf_counter()
                result = block(call(result))
                warmup.append(time.perf_counter() - start)
    record = {
        "example": example, "program": program, "backend": BACKEND, "size": SIZE,
        "first_s": times[0], "steady_s": times[1:], "warmup_s": warmup, "warmup_target_s": WARMUP_S,
        "median_s": statistics.median(times[1:]) if n_steady else None,
        # the process's CPU time over its wall time in the steady calls: how many cores the
        # backend kept busy (JAX's CPU runtime uses more than one under --threads 1)
        "steady_cores": sum(cpu[1:]) / sum(times[1:]) if n_steady and sum(times[1:]) > 0 else None,
    }
    print("EXAMPLE_RESULT " + json.dumps(record), flush=True)
    return result
