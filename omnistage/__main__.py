"""The guided tour: `python -m omnistage`.

Stages a few functions, prints the staged Python source omnistage generates, runs them,
converts Python control flow on traced values (and shows the error JAX users know when
that is turned off), and times a jitted function against NumPy.
"""
import inspect
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


def count_up(x, n):
    i = 0
    while i < n:
        i += 1
    return x + i


_PRANGE_NOTE = """\
`numba.prange` splits that loop over Numba's threads. A process starts on the same kernel
without prange (the serial build, half the compile time) and tries this one once its calls
have taken {tier_up_s} s in total, so a function called a few times never pays for the parallel
compile. It keeps whichever build its calls measure faster (on a machine whose cores are busy
that is often the serial one) and checks again now and then; both give the same bits
(OMNISTAGE_PARALLEL=0: serial always). The text shown is the same in every run.
"""


def _tier_up_s():
    from omnistage.codegen import parallel

    return parallel.TIER_UP_S


def main(argv=None):
    import omnistage
    import omnistage.numpy as jnp

    print(f"omnistage {omnistage.__version__}: NumPy-style functions staged into readable Python")

    _banner("1. make_jaxpr shows the staged program: runnable Python, one primitive per line")
    program = omnistage.make_jaxpr(log2)(3.0)
    print(program)
    ns = {}
    exec(compile(str(program), "<tour>", "exec"), ns)
    print("(each parameter is annotated with its shape and dtype, as JAX prints avals; the")
    print("annotations are strings, so the text still runs)")
    print(f"running that printed source: log2(8.0) = {ns['log2'](jnp.float32(8.0))[0]}")

    _banner("2. jit: trace once per shape/dtype, compile the staged program with Numba")
    x = jnp.arange(1_000_000, dtype=jnp.float32) / 1e5 - 5.0
    selu_jit = omnistage.jit(selu)
    lowered = selu_jit.lower(x)
    print(lowered.as_text())
    print("...which compiles to this Numba kernel (one fused pass over memory):\n")
    kernel = lowered.compile().as_text()
    print(kernel)
    if "prange" in kernel:
        print(_PRANGE_NOTE.format(tier_up_s=_tier_up_s()))
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
    print("  (these few calls run the serial build, see 2; benchmarks/cpu.py compares against")
    print("  hand-written Numba and JAX as well)")

    _banner("4. Python control flow on traced values, and errors that point at your line")
    print("jit converts Python `if`/`while`/`for` whose condition is traced into staged control")
    print("flow (here a while_loop), so count_up runs as written, with n traced:\n")
    print(inspect.getsource(count_up))
    print(omnistage.make_jaxpr(count_up)(10, 20))
    print(f"jit(count_up)(10, 20) = {omnistage.jit(count_up)(10, 20)}")
    print("\njit(count_up, python_control_flow=False) traces as JAX's jit does: a traced value in a Python")
    print("condition is an error, and it points at your line:\n")
    try:
        omnistage.jit(count_up, python_control_flow=False)(10, 20)
    except omnistage.errors.TracerBoolConversionError as e:
        print(f"{type(e).__name__}: {e}")
    print("\nmark the argument static and it works in both modes (the loop runs in Python at trace time):")
    g_static = omnistage.jit(count_up, static_argnames="n", python_control_flow=False)
    print(f"jit(count_up, static_argnames='n', python_control_flow=False)(10, 20) = {g_static(10, 20)}")

    _banner("5. derivatives are programs too")
    print("grad(log2) is staged like any function: each adjoint statement names the line it")
    print("differentiates, and the whole thing is still runnable Python:\n")
    print(omnistage.make_jaxpr(omnistage.grad(log2))(8.0))
    d3 = omnistage.grad(omnistage.grad(omnistage.grad(lambda x: x**4)))
    print(f"grad(grad(grad(x**4)))(1.0) = {d3(1.0)!s}   jit(grad(log2))(8.0) = {omnistage.jit(omnistage.grad(log2))(8.0)!s}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
