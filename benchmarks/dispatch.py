"""Dispatch overhead of cached jit calls, for every kind of argument users pass: median
microseconds per call (the call returns once the result is computed).

Cases: an omnistage Array, a Python float, a NumPy scalar, a NumPy array, and `jit(grad(loss))`
of a small MLP with its parameters as a pytree of NumPy arrays (lists of (W, b) tuples) and a
NumPy batch. Each is compared with JAX (same process, when importable) and with calling the
plain Python function on NumPy values.

Run: python benchmarks/dispatch.py
"""
import statistics
import time

import numpy as np


def median_us(fn, args, repeats=7, number=1000):
    fn(*args)  # warm: trace and compile
    fn(*args)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(number):
            fn(*args)
        times.append((time.perf_counter() - t0) / number * 1e6)
    return statistics.median(times)


def _mlp_params(rng, sizes=(16, 32, 10)):
    return [(rng.standard_normal((m, n)).astype(np.float32) * 0.1, np.zeros(n, np.float32))
            for m, n in zip(sizes[:-1], sizes[1:])]


def cases(np_mod, jit, grad, asarray, block):
    """(name, callable, args) for one library; `asarray` makes that library's own array."""

    def add_one(a):
        return a + 1.0

    def loss(params, x, y):
        h = x
        for w, b in params[:-1]:
            h = np_mod.tanh(h @ w + b)
        w, b = params[-1]
        return np_mod.mean((h @ w + b - y) ** 2)

    rng = np.random.default_rng(0)
    f = jit(add_one)
    g = jit(grad(loss))
    params = _mlp_params(rng)
    x = rng.standard_normal((8, 16)).astype(np.float32)
    y = rng.standard_normal((8, 10)).astype(np.float32)
    return [
        ("jit(a + 1)(own Array f32[])", lambda a: block(f(a)), (asarray(np.float32(1.0)),)),
        ("jit(a + 1)(Python float)", lambda a: block(f(a)), (1.0,)),
        ("jit(a + 1)(np.float32 scalar)", lambda a: block(f(a)), (np.float32(1.0),)),
        ("jit(a + 1)(np.ndarray f32[1000])", lambda a: block(f(a)), (np.ones(1000, np.float32),)),
        ("jit(grad(mlp loss))(NumPy pytree)", lambda p, a, b: block(g(p, a, b)), (params, x, y)),
    ]


def main():
    import omnistage
    import omnistage.numpy as jnp

    ours = cases(jnp, omnistage.jit, omnistage.grad, jnp.asarray, lambda r: r)
    rows = [(name, median_us(fn, args)) for name, fn, args in ours]
    theirs = {}
    try:
        import jax
        import jax.numpy as jjnp

        def block(r):
            return jax.block_until_ready(r)

        for name, fn, args in cases(jjnp, jax.jit, jax.grad, jjnp.asarray, block):
            theirs[name] = median_us(fn, args)
    except ImportError:
        pass
    width = max(len(r[0]) for r in rows)
    print(f"{'case':<{width}}  {'omnistage µs':>12}  {'JAX µs':>8}  ratio")
    for name, us in rows:
        j = theirs.get(name, float("nan"))
        print(f"{name:<{width}}  {us:12.2f}  {j:8.2f}  {us / j:5.2f}")


if __name__ == "__main__":
    main()
