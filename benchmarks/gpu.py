"""GPU benchmarks of the CUDA backend (issue 8): achieved bandwidth of fused elementwise
kernels (GB/s and % of the device's peak), a reduction, and a matmul (TFLOP/s), each next to
CuPy's equivalent and to JAX on the GPU when those are installed.

    python benchmarks/gpu.py            # full sizes
    python benchmarks/gpu.py --quick    # small sizes, few repeats

Without a usable NVIDIA GPU it prints why and exits with status 0 (nothing to measure). Timings
are medians of repeated calls on device-resident inputs, each synchronized; the first call
(compilation included) is its own column. A failing implementation prints its error in its row
and the script exits with status 1.
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# peak DRAM bandwidth (GB/s) of common data-centre GPUs, by a substring of the device name
PEAK_BANDWIDTH = {"H200": 4800.0, "H100 SXM": 3350.0, "H100 PCIe": 2000.0, "H100": 3350.0,
                  "A100-SXM4-80GB": 2039.0, "A100": 1555.0, "L4": 300.0, "A10G": 600.0, "T4": 320.0,
                  "V100": 900.0}


def gpu_or_reason():
    """(device name, None) when a real GPU is usable, else (None, the reason)."""
    if os.environ.get("NUMBA_ENABLE_CUDASIM"):
        return None, "NUMBA_ENABLE_CUDASIM is set (the simulator measures nothing)"
    from omnistage.codegen.cuda import runtime

    try:
        runtime.check()
    except runtime.CudaUnavailableError as e:
        return None, str(e)
    from numba import cuda

    name = cuda.get_current_device().name
    return name.decode() if isinstance(name, bytes) else str(name), None


def peak_bandwidth(name):
    for key, value in PEAK_BANDWIDTH.items():
        if key in name:
            return value
    return None


def timed(fn, sync, repeats):
    """(first call's seconds, compile included; median of the next `repeats` calls)."""
    t0 = time.perf_counter()
    fn()
    sync()
    first = time.perf_counter() - t0
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        sync()
        samples.append(time.perf_counter() - t0)
    return first, statistics.median(samples)


# --- the workloads: (name, what, bytes moved, flops, builders) ------------------------------------


def selu(xnp):
    def f(x):
        return 1.05 * xnp.where(x > 0, x, 1.67 * xnp.exp(x) - 1.67)

    return f


def axpy_tanh(xnp):
    def f(x, y):
        return xnp.tanh(2.0 * x + y) * y

    return f


def total(xnp):
    def f(x):
        return xnp.sum(x * x)

    return f


def matmul(xnp):
    def f(a, b):
        return a @ b

    return f


def cases(quick):
    n = 1 << (20 if quick else 26)
    m = 512 if quick else 4096
    rng = np.random.default_rng(0)
    vec = rng.standard_normal(n).astype(np.float32)
    vec2 = rng.standard_normal(n).astype(np.float32)
    a = rng.standard_normal((m, m)).astype(np.float32)
    b = rng.standard_normal((m, m)).astype(np.float32)
    f4 = 4
    return [
        ("selu", f"fused elementwise, {n:,} float32", selu, (vec,), 2 * n * f4, 0),
        ("axpy_tanh", f"fused elementwise, 2 x {n:,} float32", axpy_tanh, (vec, vec2), 3 * n * f4, 0),
        ("sum_squares", f"reduction of {n:,} float32", total, (vec,), n * f4, 0),
        ("matmul", f"{m}x{m} @ {m}x{m} float32", matmul, (a, b), 3 * m * m * f4, 2 * m ** 3),
    ]


def runners(builder, args):
    """{implementation: (call, sync)} for omnistage, CuPy and JAX where available."""
    import omnistage
    import omnistage.numpy as jnp
    from omnistage.codegen.cuda import runtime

    out = {}
    dev = [omnistage.device_put(a, "gpu") for a in args]
    f = omnistage.jit(builder(jnp), backend="cuda")
    out["omnistage"] = (lambda: f(*dev), runtime.synchronize)
    try:
        import cupy as cp

        cargs = [cp.asarray(a) for a in args]
        cf = builder(cp)
        out["cupy"] = (lambda: cf(*cargs), lambda: cp.cuda.Device().synchronize())
    except ImportError:
        pass
    except Exception as e:  # noqa: BLE001 - a broken CuPy install: say so, measure the rest
        print(f"cupy not measured: {type(e).__name__}: {e}", file=sys.stderr)
    try:
        import jax

        if jax.default_backend() == "gpu":
            import jax.numpy as jjnp

            jargs = [jax.device_put(a) for a in args]
            jf = jax.jit(builder(jjnp))
            holder = {}

            def call():
                holder["r"] = jf(*jargs)

            out["jax"] = (call, lambda: holder.get("r") is not None and holder["r"].block_until_ready())
    except ImportError:
        pass
    except Exception as e:  # noqa: BLE001 - a broken JAX install: say so, measure the rest
        print(f"jax not measured: {type(e).__name__}: {e}", file=sys.stderr)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, few repeats")
    opts = parser.parse_args(argv)
    name, reason = gpu_or_reason()
    if name is None:
        print(f"benchmarks/gpu.py: not run: {reason}")
        return 0
    peak = peak_bandwidth(name)
    repeats = 5 if opts.quick else 20
    print(f"device: {name} (peak DRAM bandwidth {f'{peak:.0f} GB/s' if peak else 'unknown'})")
    print(f"{'case':<12} {'impl':<10} {'first':>9} {'time':>10} {'GB/s':>8} {'% peak':>7} {'TFLOP/s':>8}  what")
    failed = 0
    for case, what, builder, args, nbytes, flops in cases(opts.quick):
        for impl, (call, sync) in runners(builder, args).items():
            try:
                first, t = timed(call, sync, repeats)
            except Exception as e:  # noqa: BLE001 - one failing implementation must not hide the rest
                failed += 1
                print(f"{case:<12} {impl:<10} failed: {type(e).__name__}: {str(e).splitlines()[0][:150] if str(e) else ''}")
                continue
            gbs = nbytes / t / 1e9
            pct = f"{100 * gbs / peak:6.1f}%" if peak else "      -"
            tflops = f"{flops / t / 1e12:8.2f}" if flops else "       -"
            print(f"{case:<12} {impl:<10} {first:8.3f}s {t * 1e3:8.3f}ms {gbs:8.1f} {pct} {tflops}  {what}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
