"""Benchmark: 10**6 standard normals (float32, shape (1000, 1000)).

Times `omnistage.jit(lambda k: random.normal(k, (1000, 1000)))` against NumPy's
`default_rng().standard_normal((1000, 1000), dtype=np.float32)` (a different algorithm:
ziggurat on PCG64) and, when importable, JAX's jitted `jax.random.normal` (the same
algorithm as omnistage). Prints a table of the median of repeats, and checks that omnistage
and JAX agree bit for bit.

    python benchmarks/random_normal.py [--repeats 15]
"""
import argparse
import statistics
import time

import numpy as np

import omnistage
from omnistage import random as orandom

SHAPE = (1000, 1000)


def median_seconds(fn, repeats):
    fn()  # warm-up: compilation / first-call costs are not part of the steady state
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def omnistage_case():
    sample = omnistage.jit(lambda k: orandom.normal(k, SHAPE))
    key = orandom.PRNGKey(0)
    return lambda: np.asarray(sample(key).block_until_ready())


def numpy_case():
    rng = np.random.default_rng(0)
    return lambda: rng.standard_normal(SHAPE, dtype=np.float32)


def jax_case():
    try:
        import jax
    except ImportError:
        return None
    sample = jax.jit(lambda k: jax.random.normal(k, SHAPE))
    key = jax.random.PRNGKey(0)
    return lambda: np.asarray(sample(key).block_until_ready())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()

    cases = {"omnistage.jit(random.normal)": omnistage_case(), "numpy default_rng": numpy_case()}
    jax_fn = jax_case()
    if jax_fn is not None:
        cases["jax.jit(random.normal)"] = jax_fn
    results = {name: median_seconds(fn, args.repeats) for name, fn in cases.items()}

    base = results["numpy default_rng"]
    print(f"normal{SHAPE} float32, median of {args.repeats} (device: {omnistage.default_backend()})")
    print(f"{'implementation':32s} {'ms':>10s} {'vs numpy':>10s}")
    for name, t in results.items():
        print(f"{name:32s} {t * 1e3:10.2f} {t / base:9.2f}x")
    if jax_fn is not None:
        a, b = cases["omnistage.jit(random.normal)"](), jax_fn()
        differ = np.count_nonzero(a.view(np.uint32) != b.view(np.uint32))
        print(f"omnistage vs jax: {differ} of {a.size} values differ (bit patterns compared)")


if __name__ == "__main__":
    main()
