"""Gradients: omnistage against JAX (when installed) and a hand-written NumPy backward pass.

    python benchmarks/grad.py [--repeats N] [--no-jax]

Cases (issue 5's closing note asks for the first two):
- `mlp_step`: one jitted gradient step of a 2-layer MLP (batch 128, 32-64-10, tanh, mean
  squared error): `jit(value_and_grad(loss))(params, x, y)`;
- `eager_grad`: the same gradient without jit (omnistage: stage + reverse pass run on NumPy;
  JAX: its eager grad), i.e. the overhead of differentiating op by op;
- `scan_grad`: jitted gradient through a 100-step `lax.scan` recurrence (reverse mode
  saves the carries).
Each number is the median of repeats, each repeat timing enough back-to-back calls to last
>= 50 ms, JAX outputs waited for. Ratios are omnistage / other (< 1: omnistage faster).
One thread each (set before NumPy/JAX load), like benchmarks/cpu.py.
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

MIN_SAMPLE_S = 0.05


def median_time(call, repeats):
    call()
    call()
    bench_env.settle()
    number, elapsed = 1, 0.0
    while True:
        t0 = time.perf_counter()
        for _ in range(number):
            call()
        elapsed = time.perf_counter() - t0
        if elapsed >= MIN_SAMPLE_S:
            break
        number *= 2
    samples = [elapsed / number]
    for _ in range(repeats - 1):
        t0 = time.perf_counter()
        for _ in range(number):
            call()
        samples.append((time.perf_counter() - t0) / number)
    return statistics.median(samples)


def make_data(seed=0):
    rng = np.random.default_rng(seed)
    params = {
        "w1": (rng.standard_normal((32, 64)) * 0.2).astype(np.float32), "b1": np.zeros(64, np.float32),
        "w2": (rng.standard_normal((64, 10)) * 0.2).astype(np.float32), "b2": np.zeros(10, np.float32),
    }
    x = rng.standard_normal((128, 32)).astype(np.float32)
    y = rng.standard_normal((128, 10)).astype(np.float32)
    xs = rng.standard_normal((100, 16)).astype(np.float32)
    return params, x, y, xs


def loss_fn(np_like):
    def loss(params, x, y):
        h = np_like.tanh(x @ params["w1"] + params["b1"])
        out = h @ params["w2"] + params["b2"]
        return ((out - y) ** 2).mean()

    return loss


def scan_loss(lax, np_like):
    def loss(w, xs):
        def body(c, x):
            c = np_like.tanh(c * w + x)
            return c, c.sum()

        c, ys = lax.scan(body, np_like.zeros(16, np_like.float32), xs)
        return ys.sum() + c.sum()

    return loss


def numpy_step(params, x, y):
    """The MLP's loss and gradient written by hand in NumPy (the floor to beat eagerly)."""
    z = x @ params["w1"] + params["b1"]
    h = np.tanh(z)
    out = h @ params["w2"] + params["b2"]
    d = out - y
    loss = (d**2).mean()
    g_out = 2.0 * d / d.size
    g_w2 = h.T @ g_out
    g_b2 = g_out.sum(0)
    g_h = g_out @ params["w2"].T
    g_z = g_h * (1 - h * h)
    return loss, {"w1": x.T @ g_z, "b1": g_z.sum(0), "w2": g_w2, "b2": g_b2}


def make_cases(jax, jnp, lax, params, x, y, xs):
    """The three timed calls for a framework with JAX's API (omnistage or JAX itself); each
    waits for its result, and the MLP gradient is checked against the NumPy one first."""
    loss = loss_fn(jnp)
    p = {k: jnp.asarray(v) for k, v in params.items()}
    xj, yj, xsj = jnp.asarray(x), jnp.asarray(y), jnp.asarray(xs)
    step = jax.jit(jax.value_and_grad(loss))
    eager = jax.value_and_grad(loss)
    sgrad = jax.jit(jax.grad(scan_loss(lax, jnp)))
    w = jnp.ones(16, jnp.float32) * 0.5
    ref = numpy_step(params, x, y)
    np.testing.assert_allclose(np.asarray(step(p, xj, yj)[1]["w1"]), ref[1]["w1"], rtol=2e-3, atol=1e-5)

    def ready(f):
        return lambda: jax.block_until_ready(f())

    return {
        "mlp_step": ready(lambda: step(p, xj, yj)),
        "eager_grad": ready(lambda: eager(p, xj, yj)),
        "scan_grad": ready(lambda: sgrad(w, xsj)),
    }


def omnistage_cases(*data):
    import omnistage
    import omnistage.numpy as jnp
    from omnistage import lax

    return make_cases(omnistage, jnp, lax, *data)


def jax_cases(*data):
    import jax
    import jax.numpy as jnp
    from jax import lax

    return make_cases(jax, jnp, lax, *data)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--no-jax", action="store_true")
    args = ap.parse_args(argv)
    data = make_data()
    ours = omnistage_cases(*data)
    theirs = {}
    if not args.no_jax:
        try:
            theirs = jax_cases(*data)
        except ImportError:
            theirs = {}
    numpy_ref = {"mlp_step": lambda: numpy_step(*data[:3]), "eager_grad": lambda: numpy_step(*data[:3])}
    print(f"{'case':<12} {'omnistage':>12} {'JAX':>12} {'NumPy by hand':>14} {'vs JAX':>8} {'vs NumPy':>9}")
    print("-" * 72)
    for name, call in ours.items():
        t = median_time(call, args.repeats)
        tj = median_time(theirs[name], args.repeats) if name in theirs else None
        tn = median_time(numpy_ref[name], args.repeats) if name in numpy_ref else None
        cells = [
            f"{name:<12}", f"{t * 1e6:>10.1f}us",
            f"{tj * 1e6:>10.1f}us" if tj else f"{'n/a':>12}",
            f"{tn * 1e6:>12.1f}us" if tn else f"{'n/a':>14}",
            f"{t / tj:>8.2f}" if tj else f"{'n/a':>8}",
            f"{t / tn:>9.2f}" if tn else f"{'n/a':>9}",
        ]
        print(" ".join(cells))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
