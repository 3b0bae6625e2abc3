"""Dispatch overhead of a cached jit call on a scalar: median microseconds per call.

Compares omnistage with calling the plain Python function, and with JAX when importable.
Run: python benchmarks/dispatch.py
"""
import statistics
import time

import numpy as np


def median_us(fn, arg, repeats=7, number=2000):
    fn(arg)  # warm: trace and compile
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(number):
            fn(arg)
        times.append((time.perf_counter() - t0) / number * 1e6)
    return statistics.median(times)


def main():
    import omnistage
    import omnistage.numpy as jnp

    rows = []

    def f(x):
        return x + 1.0

    x = jnp.float32(1.0)
    rows.append(("omnistage jit(f)(x), x: f32[]", median_us(omnistage.jit(f), x)))
    rows.append(("omnistage jit(f)(1.0), Python scalar", median_us(omnistage.jit(f), 1.0)))
    rows.append(("plain Python f(np.float32)", median_us(f, np.float32(1.0))))
    try:
        import jax
        import jax.numpy as jjnp

        jx = jjnp.float32(1.0)
        rows.append(("JAX jit(f)(x)", median_us(lambda a: jax.jit(f)(a).block_until_ready(), jx)))
        jf = jax.jit(f)
        rows.append(("JAX jitted(x).block_until_ready()", median_us(lambda a: jf(a).block_until_ready(), jx)))
    except ImportError:
        rows.append(("JAX", float("nan")))
    width = max(len(r[0]) for r in rows)
    print(f"{'case':<{width}}  median µs/call")
    for name, us in rows:
        print(f"{name:<{width}}  {us:8.2f}")
    ours = rows[0][1]
    jax_row = [r for r in rows if r[0].startswith("JAX jitted")]
    if jax_row:
        print(f"ratio omnistage/JAX: {ours / jax_row[0][1]:.2f}")


if __name__ == "__main__":
    main()
