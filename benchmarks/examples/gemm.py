"""The contractions of issue 18 in isolation, ours against JAX and NumPy in one process:
`jit(lambda a, b: a.T @ b)` on 128x1024 float32 operands, and `jit(grad(loss))` of a
784-1024-1024-10 ReLU MLP with softmax cross-entropy, batch 128.

    python -m benchmarks.examples.gemm [--repeats N] [--blas-threads 1,default]

Each case runs once per OpenBLAS thread setting (threadpoolctl's `threadpool_limits` on every
BLAS library loaded: SciPy's, which Numba's np.dot calls, and NumPy's), with the thread count
and the kernel (OpenBLAS's core type) each library reported, so a run with and without the
OPENBLAS_CORETYPE environment variable says which kernel ran. Implementations are called in turn (one call each per round), and steady times are
medians and minima over the rounds.
Without threadpoolctl only the default setting runs. Thread pools other than BLAS are left at
their defaults (this measures what a user gets), unless the environment sets them.
"""
import argparse
import os
import statistics
import tempfile
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("OMNISTAGE_CACHE_DIR", tempfile.mkdtemp(prefix="omnistage-gemm-"))
os.environ.setdefault("NUMBA_CACHE_DIR", tempfile.mkdtemp(prefix="numba-gemm-"))

import numpy as np  # noqa: E402


def interleaved_times(fns, repeats):
    """{name: (median, min)} of `fns` called in turn, one call each per round: on a shared
    machine a burst of load then hits every implementation alike."""
    times = {name: [] for name in fns}
    for fn in fns.values():
        fn()
    for _ in range(repeats):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: (statistics.median(t), min(t)) for name, t in times.items()}


def mlp_loss(jnp, params, x, y):
    for w, b in params[:-1]:
        x = jnp.maximum(jnp.dot(x, w) + b, 0.0)
    w, b = params[-1]
    logits = jnp.dot(x, w) + b
    logits = logits - jnp.max(logits, axis=1, keepdims=True)
    logp = logits - jnp.log(jnp.sum(jnp.exp(logits), axis=1, keepdims=True))
    return -jnp.mean(jnp.sum(logp * y, axis=1))


def cases():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((128, 1024), dtype=np.float32)
    b = rng.standard_normal((128, 1024), dtype=np.float32)
    sizes = [784, 1024, 1024, 10]
    params = [(rng.standard_normal((m, n), dtype=np.float32) * 0.05, np.zeros(n, np.float32))
              for m, n in zip(sizes[:-1], sizes[1:])]
    x = rng.random((128, 784), dtype=np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 128)]
    impls = {}
    import omnistage
    import omnistage.numpy as onp
    at_b = omnistage.jit(lambda a, b: a.T @ b)
    grad_mlp = omnistage.jit(omnistage.grad(lambda p, x, y: mlp_loss(onp, p, x, y)))
    impls["omnistage"] = {"a.T @ b": lambda: at_b(a, b), "grad MLP": lambda: grad_mlp(params, x, y)}
    try:
        import jax
        import jax.numpy as jjnp
    except ImportError:
        jax = None
    if jax is not None:
        j_at_b = jax.jit(lambda a, b: a.T @ b)
        j_grad = jax.jit(jax.grad(lambda p, x, y: mlp_loss(jjnp, p, x, y)))
        impls["jax"] = {"a.T @ b": lambda: j_at_b(a, b).block_until_ready(),
                        "grad MLP": lambda: jax.block_until_ready(j_grad(params, x, y))}
    impls["numpy"] = {"a.T @ b": lambda: a.T @ b}
    flops = {"a.T @ b": 2 * 128 * 1024 * 1024, "grad MLP": 3 * 2 * 128 * (784 * 1024 + 1024 * 1024 + 1024 * 10)}
    return impls, flops


def blas_info():
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return []
    return [f"{os.path.basename(i['filepath'])}: {i.get('internal_api')} {i.get('version')}, "
            f"{i['num_threads']} threads, kernel {i.get('architecture')}"
            for i in threadpool_info() if i.get("user_api") == "blas"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--blas-threads", default="default,1")
    args = parser.parse_args()
    impls, flops = cases()
    for fns in impls.values():  # compile and load every BLAS library first
        for fn in fns.values():
            fn()
    print("OPENBLAS_CORETYPE=%s OPENBLAS_L2_SIZE=%s cpus=%d" % (
        os.environ.get("OPENBLAS_CORETYPE", "(unset)"), os.environ.get("OPENBLAS_L2_SIZE", "(unset)"),
        len(os.sched_getaffinity(0))))
    for setting in args.blas_threads.split(","):
        if setting == "default":
            limiter = None
        else:
            try:
                from threadpoolctl import threadpool_limits
            except ImportError:
                print(f"(no threadpoolctl: --blas-threads {setting} skipped)")
                continue
            limiter = threadpool_limits(limits=int(setting), user_api="blas")
        print(f"\nBLAS threads: {setting}")
        for line in blas_info():
            print("  " + line)
        for case in ("a.T @ b", "grad MLP"):
            fns = {impl: fns[case] for impl, fns in impls.items() if case in fns}
            for impl, (med, best) in interleaved_times(fns, args.repeats).items():
                print(f"  {case:8s} {impl:9s} median {med * 1e3:7.2f} ms  min {best * 1e3:7.2f} ms  "
                      f"({flops[case] / med / 1e9:5.1f} GFLOP/s at the median)")
        if limiter is not None:
            limiter.restore_original_limits()


if __name__ == "__main__":
    main()
