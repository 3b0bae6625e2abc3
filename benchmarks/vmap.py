"""Benchmark: omnistage's `jit(vmap(f))` against JAX's on a 128 x 3x3 batch (issue 6).

    python benchmarks/vmap.py [--batch 128] [--repeats 15] [--cases spectral_radius,...]

For each small matrix function f (one 3x3 matrix in, a scalar or a small array out) prints
the steady-state time per call of omnistage's and JAX's `jit(vmap(f))` on the same batch
(median of repeats; each repeat times enough back-to-back calls to last >= 20 ms; warm-up
calls, which compile, are excluded; JAX outputs are waited for with `block_until_ready`),
and the median of the per-repeat ratios omnistage / JAX (< 1: omnistage is faster). The
two are timed in alternating repeats so a shared machine's noise hits both alike. Both results are checked to agree
before timing. One thread each (BLAS, Numba, XLA), as benchmarks/cpu.py does, so the ratio
compares code, not thread pools.
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_env  # noqa: E402 - before NumPy

bench_env.apply()

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import omnistage  # noqa: E402


def cases(jnp):
    """name -> f(matrix) written against a jnp module (omnistage.numpy or jax.numpy)."""

    def spectral_radius(m):  # the seed's example (jnp.linalg.eigvals of each matrix)
        return jnp.max(jnp.abs(jnp.linalg.eigvals(m)))

    def gram_trace(m):  # matmul, transcendental, reductions
        g = m @ m.T
        return jnp.trace(jnp.tanh(g)) + jnp.sum(g * g)

    def normalize_rows(m):  # reductions broadcast back, elementwise
        return m / jnp.sqrt(jnp.sum(m * m, axis=1, keepdims=True) + 1e-6)

    def det_inv(m):  # small dense linear algebra
        a = m @ m.T + 3.0 * jnp.eye(3, dtype=m.dtype)
        return jnp.linalg.det(a) * jnp.linalg.inv(a)

    return {f.__name__: f for f in (spectral_radius, gram_trace, normalize_rows, det_inv)}


def _calls_per_repeat(fn, min_time):
    """Back-to-back calls that last >= min_time (after two warm-up calls)."""
    fn()
    fn()
    bench_env.settle()
    n = 1
    while True:
        start = time.perf_counter()
        for _ in range(n):
            fn()
        if time.perf_counter() - start >= min_time:
            return n
        n *= 2


def _time_per_call(fn, n):
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n


def compare(ours, theirs, repeats, min_time=0.02):
    """Median time per call of each, timed in alternating repeats (a shared machine's noise
    then hits both alike), and the median of the per-repeat ratios ours / theirs."""
    n_ours, n_theirs = _calls_per_repeat(ours, min_time), _calls_per_repeat(theirs, min_time)
    t_ours, t_theirs = [], []
    for _ in range(repeats):
        t_ours.append(_time_per_call(ours, n_ours))
        t_theirs.append(_time_per_call(theirs, n_theirs))
    ratios = [a / b for a, b in zip(t_ours, t_theirs)]
    return statistics.median(t_ours), statistics.median(t_theirs), statistics.median(ratios)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--cases", default=None, help="comma-separated case names")
    args = parser.parse_args(argv)
    try:
        import jax
        import jax.numpy as jjnp
    except ImportError:
        jax = None
    batch = np.random.default_rng(0).standard_normal((args.batch, 3, 3)).astype(np.float32)
    ours = cases(omnistage.numpy)
    theirs = cases(jjnp) if jax is not None else {}
    names = args.cases.split(",") if args.cases else list(ours)
    print(f"jit(vmap(f)) on a {args.batch} x 3x3 float32 batch; median of {args.repeats} repeats")
    print(f"{'case':18s} {'omnistage':>12s} {'jax':>12s} {'ratio':>8s}")
    for name in names:
        f_ours = omnistage.jit(omnistage.vmap(ours[name]))
        x_ours = omnistage.numpy.asarray(batch)
        got = np.asarray(f_ours(x_ours))
        if jax is None:
            t_ours = _time_per_call(lambda: f_ours(x_ours), _calls_per_repeat(lambda: f_ours(x_ours), 0.02))
            print(f"{name:18s} {t_ours * 1e6:10.1f}us {'n/a':>12s} {'n/a':>8s}")
            continue
        f_jax = jax.jit(jax.vmap(theirs[name]))
        x_jax = jax.device_put(batch)
        want = np.asarray(f_jax(x_jax))
        np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-4)
        t_ours, t_jax, ratio = compare(lambda: f_ours(x_ours), lambda: f_jax(x_jax).block_until_ready(), args.repeats)
        print(f"{name:18s} {t_ours * 1e6:10.1f}us {t_jax * 1e6:10.1f}us {ratio:8.2f}")


if __name__ == "__main__":
    main()
