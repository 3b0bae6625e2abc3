"""Eager (un-jitted) jnp calls on small arrays: median microseconds per call, against JAX (same
process, when importable) and plain NumPy.

This is what the seeds' tutorials and JAX's examples run outside `jit`: parameter updates in a
Python loop, a marginal likelihood evaluated for printing, an accuracy over a test set. On
small arrays the cost is dispatch: promotion, shape rules, one Array per result. JAX jits its
own jnp functions (one compiled call each); omnistage runs a composite as one cached program
(numpy/eager_programs.py) and a single primitive directly.

Run: python benchmarks/eager.py [--quick]
"""
import os
import statistics
import time

import numpy as np


def median_us(fn, repeats=7, number=500):
    fn()  # warm: a library may trace and cache on the first call
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number * 1e6)
    return statistics.median(times)


def cases(jnp, linalg, asarray, block):
    """(name, zero-argument callable) for one library; `asarray` makes its own arrays."""
    rng = np.random.default_rng(0)
    a = asarray(rng.standard_normal((64, 64)).astype(np.float32))
    b = asarray(rng.standard_normal((64, 64)).astype(np.float32))
    row = asarray(rng.standard_normal(64).astype(np.float32))
    col = asarray(rng.standard_normal((7, 1)).astype(np.float32))
    one = asarray(np.full((1, 1), 1.5, np.float32))
    m = rng.standard_normal((7, 7)).astype(np.float32)
    spd = asarray(m @ m.T + 7 * np.eye(7, dtype=np.float32))
    rhs = asarray(rng.standard_normal((7, 1)).astype(np.float32))
    chol = linalg.cholesky(spd, lower=True)
    return [
        ("a + b (64x64)", lambda: block(a + b)),
        ("0.9 * a (Python float)", lambda: block(0.9 * a)),
        ("col / one ((7,1) by (1,1))", lambda: block(col / one)),
        ("a + row (broadcast row)", lambda: block(a + row)),
        ("exp(a)", lambda: block(jnp.exp(a))),
        ("sum(a)", lambda: block(jnp.sum(a))),
        ("mean(a, axis=0)", lambda: block(jnp.mean(a, axis=0))),
        ("a @ b", lambda: block(a @ b)),
        ("a[0]", lambda: block(a[0])),
        ("a[:, 1:3]", lambda: block(a[:, 1:3])),
        ("a.T", lambda: block(a.T)),
        ("concatenate([a, b])", lambda: block(jnp.concatenate([a, b]))),
        ("where(a > 0, a, 0.0)", lambda: block(jnp.where(a > 0, a, 0.0))),
        ("cholesky (7x7)", lambda: block(linalg.cholesky(spd, lower=True))),
        ("solve_triangular (7x7)", lambda: block(linalg.solve_triangular(chol, rhs, lower=True))),
        ("logaddexp(one, 0.0) (softplus)", lambda: block(jnp.logaddexp(one, 0.0))),
        ("zeros((64, 64))", lambda: block(jnp.zeros((64, 64)))),
    ]


def main():
    import argparse

    import scipy.linalg

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few calls per case (a smoke test)")
    args = parser.parse_args()
    global median_us
    if args.quick:
        median_us = lambda fn, _time=median_us: _time(fn, repeats=1, number=5)  # noqa: E731

    columns = {}
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    try:  # JAX first, before omnistage is imported: each library's calls run alone
        import jax
        import jax.numpy as jjnp
        import jax.scipy.linalg as jlinalg
    except ImportError:
        print("(JAX not installed: no JAX column)")
    else:
        columns["JAX"] = {name: median_us(fn) for name, fn in cases(jjnp, jlinalg, jjnp.asarray, jax.block_until_ready)}
    numpy_like = type("numpy_linalg", (), {"cholesky": staticmethod(scipy.linalg.cholesky),
                                           "solve_triangular": staticmethod(scipy.linalg.solve_triangular)})
    columns["NumPy"] = {name: median_us(fn) for name, fn in cases(np, numpy_like, np.asarray, lambda r: r)}

    import omnistage.numpy as onp
    import omnistage.scipy.linalg as olinalg

    columns["omnistage"] = {name: median_us(fn) for name, fn in cases(onp, olinalg, onp.asarray, lambda r: r)}
    names = list(columns["omnistage"])
    heads = ["omnistage"] + [h for h in ("NumPy", "JAX") if h in columns]
    print("Eager calls, median microseconds per call" + (" (ratio: omnistage / JAX)" if "JAX" in columns else ""))
    print(f"{'call':<34}" + "".join(f"{h:>12}" for h in heads) + ("   ratio" if "JAX" in columns else ""))
    for name in names:
        cells = "".join(f"{columns[h][name]:>12.1f}" for h in heads)
        ratio = f"   {columns['omnistage'][name] / columns['JAX'][name]:.2f}x" if "JAX" in columns else ""
        print(f"{name:<34}{cells}{ratio}")


if __name__ == "__main__":
    main()
