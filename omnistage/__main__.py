"""The guided tour: `python -m omnistage`.

Stages a few functions, prints the staged Python source omnistage generates, runs them,
shows the errors JAX users know, and times a jitted function against NumPy.
"""
import statistics
import sys
import time

import numpy as np


def _banner(title):
    print()
    print(title)
    print("-" * len(title))


def _median_ms(fn, *args, repeats=7):
    fn(*args)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn(*args)
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def selu(x, alpha=1.67, lambda_=1.05):
    import omnistage.numpy as jnp

    return lambda_ * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


def selu_numpy(x, alpha=1.67, lambda_=1.05):
    return lambda_ * np.where(x > 0, x, alpha * np.exp(x) - alpha)


def norm(X):
    X = X - X.mean(0)
    return X / X.std(0)


def log2(x):
    import omnistage.numpy as jnp

    ln_x = jnp.log(x)
    ln_2 = jnp.log(2.0)
    return ln_x / ln_2


def main(argv=None):
    import omnistage
    import omnistage.numpy as jnp

    print(f"omnistage {omnistage.__version__}: NumPy-style functions staged into readable Python")

    _banner("1. make_jaxpr shows the staged program: runnable Python, one primitive per line")
    program = omnistage.make_jaxpr(log2)(3.0)
    print(program)
    ns = {}
    exec(compile(str(program), "<tour>", "exec"), ns)
    print(f"running that printed source: log2(8.0) = {ns['log2'](jnp.float32(8.0))[0]}")

    _banner("2. jit: trace once per shape/dtype, compile the staged program with Numba")
    x = jnp.arange(1_000_000, dtype=jnp.float32) / 1e5 - 5.0
    selu_jit = omnistage.jit(selu)
    lowered = selu_jit.lower(x)
    print(lowered.as_text())
    print("...which compiles to this Numba kernel (one fused pass over memory):\n")
    print(lowered.compile().as_text())
    y = selu_jit(x)
    print(f"selu(x)[:4] = {y[:4]}   dtype={y.dtype}   shape={y.shape}")
    print(f"matches NumPy (float32 tolerance): {np.allclose(np.asarray(y), selu_numpy(np.asarray(x)), rtol=1e-5, atol=1e-6)}")

    _banner("3. timings (median of 7, milliseconds)")
    xn = np.asarray(x)
    rows = [
        ("selu, NumPy", _median_ms(selu_numpy, xn)),
        ("selu, omnistage eager (op by op)", _median_ms(selu, x)),
        ("selu, omnistage jit", _median_ms(selu_jit, x)),
    ]
    X = jnp.asarray(np.random.default_rng(0).random((10000, 10), dtype=np.float32))
    Xn = np.asarray(X)
    rows += [
        ("norm 10000x10, NumPy", _median_ms(norm, Xn)),
        ("norm 10000x10, omnistage jit", _median_ms(omnistage.jit(norm), X)),
    ]
    f = omnistage.jit(lambda a: a + 1.0)
    s = jnp.float32(1.0)
    f(s)
    t0 = time.perf_counter()
    for _ in range(10000):
        f(s)
    rows.append(("cached jit call on a scalar (dispatch)", (time.perf_counter() - t0) / 10000 * 1e3))
    width = max(len(r[0]) for r in rows)
    for name, ms in rows:
        print(f"  {name:<{width}}  {ms:9.4f}")
    print("  (benchmarks/cpu.py compares against hand-written Numba and JAX as well)")

    _banner("4. errors point at your line")

    def g(x, n):
        i = 0
        while i < n:
            i += 1
        return x + i

    try:
        omnistage.jit(g, python_control_flow=False)(10, 20)
    except omnistage.errors.TracerBoolConversionError as e:
        print(f"{type(e).__name__}: {e}")
    print("\nmark the argument static and it works:")
    print(f"jit(g, static_argnames='n')(10, 20) = {omnistage.jit(g, static_argnames='n')(10, 20)}")

    _banner("5. derivatives are programs too")
    print("grad(log2) is staged like any function: each adjoint statement names the line it")
    print("differentiates, and the whole thing is still runnable Python:\n")
    print(omnistage.make_jaxpr(omnistage.grad(log2))(8.0))
    d3 = omnistage.grad(omnistage.grad(omnistage.grad(lambda x: x**4)))
    print(f"grad(grad(grad(x**4)))(1.0) = {d3(1.0)}   jit(grad(log2))(8.0) = {omnistage.jit(omnistage.grad(log2))(8.0)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
