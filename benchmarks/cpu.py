"""omnistage on CPU against NumPy, hand-written Numba and JAX's XLA, in one table (issue 3).

    python benchmarks/cpu.py [--quick] [--cases selu,norm,...] [--repeats N] [--no-jax]

Prints:
1. steady-state time per case (median of repeats, warm-up calls excluded; each repeat times
   enough back-to-back calls to last >= 50 ms, JAX outputs waited for with
   `block_until_ready`), the backend omnistage used (read from `Compiled.as_text()`), and
   omnistage's ratio to each other implementation (omnistage / other: < 1 means omnistage is
   faster);
2. first-call latency of selu in fresh processes: cold (empty omnistage and Numba cache
   directories) and warm (same directories, already filled), with JAX's first call beside it;
3. the issue's targets next to the measured numbers, each marked met or MISSED.

Case names for --cases: see benchmarks/cases.py, plus `first_call` for section 2.
`--no-jax` behaves as if JAX were not installed (its columns print "n/a").
Everything runs in one process and one run, so ratios compare like with like; the machine
may be shared, which is why every number is a median.
"""
import argparse
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

# Thread settings are environment variables read when NumPy/Numba/JAX load, so they are
# applied here, before those imports (bench_env.py says why one thread each by default).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_env  # noqa: E402

THREAD_CHOICES = ("1", "pinned", "default")


def _apply_thread_setting(argv):
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--threads", choices=THREAD_CHOICES, default="1")
    threads = pre.parse_known_args(argv)[0].threads
    bench_env.apply(single_thread=threads in ("1", "pinned"))
    if threads == "pinned" and hasattr(os, "sched_setaffinity"):
        # XLA's CPU runtime keeps a second thread busy despite the flags above (measured
        # process CPU time / wall time on this 2-core machine: 1.26 for selu, 1.57 for the
        # MLP); pinning the process, before any thread pool exists, makes "one thread each"
        # true for every implementation (threads inherit the affinity of their creator).
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    return threads


THREADS = _apply_thread_setting(sys.argv[1:])

import numpy as np  # noqa: E402 - after the thread settings

HERE = os.path.dirname(os.path.abspath(__file__))
from cases import BY_NAME, CASES, staged_selu  # noqa: E402 - after the path set-up

MIN_SAMPLE_S = 0.05
TARGET_WARM_S, TARGET_COLD_S, TARGET_SELU_VS_NUMPY = 0.350, 0.700, 8.0
FIRST_CALL = "first_call"
INTERPRETED_MARK = "# interpreted by NumPy"


# --- timing ------------------------------------------------------------------------------


def _sample(call, number):
    gc_was_on = gc.isenabled()
    gc.disable()  # as timeit does: a collection in one sample is noise, not the workload
    try:
        t0 = time.perf_counter()
        for _ in range(number):
            call()
        return time.perf_counter() - t0
    finally:
        if gc_was_on:
            gc.enable()


def _calls_per_sample(call, min_sample):
    """How many back-to-back calls make one sample last at least `min_sample` seconds."""
    number = 1
    while min_sample:
        t = _sample(call, number)
        if t >= min_sample or number >= 1 << 22:
            break
        number *= max(2, min(100, int(min_sample / max(t, 1e-9)) + 1))
    return number


def interleaved_medians(calls, repeats, min_sample):
    """{name: median seconds per call} for the zero-argument `calls`.

    Each call is warmed up twice (compile, caches: not timed). The repeats are interleaved
    round-robin (A B C, B C A, ...) so that a burst of load from other processes on a shared
    machine lands on every contestant alike instead of on whichever ran at that moment.
    """
    for call in calls.values():
        call()
        call()
    bench_env.settle()
    numbers = {name: _calls_per_sample(call, min_sample) for name, call in calls.items()}
    samples = {name: [] for name in calls}
    order = list(calls)
    for r in range(repeats):
        for name in order[r % len(order):] + order[:r % len(order)]:
            samples[name].append(_sample(calls[name], numbers[name]) / numbers[name])
    return {name: statistics.median(s) for name, s in samples.items()}


# --- the implementations of one case -------------------------------------------------------


class Measured:
    """One timing cell: seconds, whether it was extrapolated, and a correctness note."""

    def __init__(self, seconds, extrapolated_from=None, error=None):
        self.seconds, self.error = seconds, error
        self.extrapolated_from = extrapolated_from  # (timed size, reported size) or None


def _import_jax(disabled):
    if disabled:
        return None
    try:
        import jax
    except ImportError:
        return None
    return jax


def _traced_positions(case, args):
    return [k for k in range(len(args)) if k not in case.static_argnums]


def _convert(case, args, to_array):
    return tuple(to_array(a) if k in _traced_positions(case, args) else a for k, a in enumerate(args))


def _check(out, expected):
    """None when `out` equals the NumPy reference (to float tolerance), else a short note."""
    out, expected = np.asarray(out), np.asarray(expected)
    if out.shape != expected.shape:
        return f"shape {out.shape} != NumPy's {expected.shape}"
    if expected.dtype.kind in "iub":
        return None if np.array_equal(out, expected) else "integer result differs from NumPy"
    if np.allclose(out, expected, rtol=1e-3, atol=1e-5):
        return None
    return f"max abs error {np.max(np.abs(out.astype(np.float64) - expected)):.3g}"


def _first_output(out):
    return out[0] if isinstance(out, (tuple, list)) else out


def _waiter(tree_ready):
    """Waits for a result: the array method when there is one (the same cheap call for omnistage
    and JAX, so dispatch is compared like with like), else the framework's pytree function."""

    def ready(out):
        method = getattr(out, "block_until_ready", None)
        return method() if method is not None else tree_ready(out)

    return ready


def backend_of(compiled_text):
    return "numpy-interp" if compiled_text.startswith(INTERPRETED_MARK) else "numba"


def omnistage_backend(case, args):
    """Which backend omnistage compiles the case for, from `Compiled.as_text()`.

    Asked of a separate closure (its own jit cache), so the timed function is only ever called
    the way a user calls it: `.lower().compile()` first currently leaves a function off
    `JitFunction`'s fast dispatch path.
    """
    import omnistage
    import omnistage.numpy as onp
    from omnistage import lax as olax

    probe = omnistage.jit(case.staged(onp, olax), static_argnums=case.static_argnums)
    return backend_of(probe.lower(*_convert(case, args, onp.asarray)).compile().as_text())


class Contestant:
    """One column of a case: a zero-argument call, how to check it, how to scale its time."""

    def __init__(self, call, expected, scale=1.0, extrapolated_from=None):
        self.call, self.expected = call, expected
        self.scale, self.extrapolated_from = scale, extrapolated_from


def _contestant(fn, args, ready, expected, **scaling):
    return Contestant(lambda: ready(fn(*args)), expected, **scaling)


def measure_case(case, quick, repeats, jax):
    """({column: Measured}, the backend omnistage used) for one case."""
    import omnistage
    import omnistage.numpy as onp
    from omnistage import lax as olax

    args = case.inputs(quick)
    expected = case.numpy(*args)
    contestants = {
        "numpy": Contestant(lambda: case.numpy(*args), expected),
        "numba": _contestant(case.numba_impl(), args, lambda o: o, expected),
    }
    backend = omnistage_backend(case, args)
    ours = omnistage.jit(case.staged(onp, olax), static_argnums=case.static_argnums)
    ours_args, ours_expected, scaling = _convert(case, args, onp.asarray), expected, {}
    if backend == "numpy-interp" and case.small_inputs is not None:
        # an interpreted loop is linear in its trip count: time it at a small size and scale up
        small = case.small_inputs(quick)
        ours_args, ours_expected = _convert(case, small, onp.asarray), case.numpy(*small)
        scaling = {"scale": float(args[0]) / float(small[0]), "extrapolated_from": (int(small[0]), int(args[0]))}
    contestants["omnistage"] = _contestant(ours, ours_args, _waiter(omnistage.block_until_ready),
                                           ours_expected, **scaling)
    if jax is not None:
        theirs = jax.jit(case.staged(jax.numpy, jax.lax), static_argnums=case.static_argnums)
        contestants["jax"] = _contestant(theirs, _convert(case, args, jax.device_put),
                                         _waiter(jax.block_until_ready), expected)
    errors = {k: _check(_first_output(c.call()), c.expected) for k, c in contestants.items()}
    medians = interleaved_medians({k: c.call for k, c in contestants.items()}, repeats,
                                  0 if quick else MIN_SAMPLE_S)
    row = {k: Measured(medians[k] * c.scale, c.extrapolated_from, errors[k]) for k, c in contestants.items()}
    return row, backend


# --- first-call latency in fresh processes ------------------------------------------------


def first_call_child(framework, quick):
    """Runs in a fresh process: import time, first and second call of selu, as JSON."""
    x = BY_NAME["selu"].inputs(quick)[0]
    t0 = time.perf_counter()
    if framework == "omnistage":
        import omnistage as fw
        import omnistage.numpy as xnp
        from omnistage import lax
    else:
        import jax as fw
        import jax.numpy as xnp
        from jax import lax
    t1 = time.perf_counter()
    f = fw.jit(staged_selu(xnp, lax))
    fw.block_until_ready(f(x))
    t2 = time.perf_counter()
    fw.block_until_ready(f(x))
    t3 = time.perf_counter()
    print(json.dumps({"import_s": t1 - t0, "first_s": t2 - t1, "second_s": t3 - t2}))


def _child(framework, quick, env_extra):
    cmd = [sys.executable, os.path.abspath(__file__), "--_first-call", framework] + (["--quick"] if quick else [])
    env = dict(os.environ, **env_extra)
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"first-call child ({framework}) failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _median_of(runs, key):
    return statistics.median(r[key] for r in runs)


def measure_first_call(quick, repeats, jax_available):
    """Medians over `repeats` fresh processes: cold (new empty cache dirs each), warm, JAX."""
    with tempfile.TemporaryDirectory(prefix="omnistage-bench-") as root:
        def dirs(tag):
            return {"OMNISTAGE_CACHE_DIR": os.path.join(root, tag, "omnistage"),
                    "NUMBA_CACHE_DIR": os.path.join(root, tag, "numba")}

        try:
            cold = [_child("omnistage", quick, dirs(f"cold{k}")) for k in range(repeats)]
            warm = [_child("omnistage", quick, dirs("cold0")) for _ in range(repeats)]
        except (RuntimeError, subprocess.TimeoutExpired, ValueError) as e:
            return {"error": str(e)}
    result = {"cold": cold, "warm": warm, "numba_import_s": _numba_import_seconds()}
    if jax_available:
        try:
            result["jax"] = [_child("jax", quick, {}) for _ in range(repeats)]
        except (RuntimeError, subprocess.TimeoutExpired, ValueError) as e:
            result["jax_error"] = str(e)
    return result


def _numba_import_seconds():
    code = "import time; t = time.perf_counter(); import numba; print(time.perf_counter() - t)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    return float(done.stdout.strip()) if done.returncode == 0 else None


# --- printing -------------------------------------------------------------------------------


def fmt_time(seconds):
    if seconds is None:
        return "n/a"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def _cell(m):
    if m is None or m.seconds is None:
        return "n/a"
    return ("~" if m.extrapolated_from else "") + fmt_time(m.seconds) + ("!" if m.error else "")


def ratio(ours, other):
    if ours is None or other is None or ours.seconds is None or other.seconds is None:
        return None
    return ours.seconds / other.seconds


def _fmt_ratio(r):
    return "n/a" if r is None else f"{r:.3g}x"


def _status(ok):
    return "n/a" if ok is None else ("met" if ok else "MISSED")


def describe(case, quick):
    """The case's label plus its first input's size, as this run used it."""
    first = case.inputs(quick)[0]
    if isinstance(first, (int, np.integer)):
        return f"{case.what}, n={int(first):.0e}".replace("e+0", "e")
    a = np.asarray(first)
    return f"{case.what}, {a.dtype.name}[{','.join(map(str, a.shape))}]".replace("float", "f").replace("[]", " scalar")


def print_table(results, quick):
    head = ["case", "workload", "backend", "omnistage", "NumPy", "Numba", "JAX",
            "/NumPy", "/Numba", "/JAX", "<= JAX"]
    rows = []
    for case, (row, backend) in results.items():
        r_jax = ratio(row.get("omnistage"), row.get("jax"))
        rows.append([case.name, describe(case, quick), backend]
                    + [_cell(row.get(k)) for k in ("omnistage", "numpy", "numba", "jax")]
                    + [_fmt_ratio(ratio(row["omnistage"], row.get(k))) for k in ("numpy", "numba", "jax")]
                    + [_status(None if r_jax is None else r_jax <= 1.0)])
    widths = [max(len(str(r[k])) for r in rows + [head]) for k in range(len(head))]
    for r in [head, ["-" * w for w in widths]] + rows:
        print("  ".join(str(c).ljust(w) if k < 3 else str(c).rjust(w) for k, (c, w) in enumerate(zip(r, widths))))
    errors = [(c.name, col, m.error) for c, (row, _) in results.items() for col, m in row.items() if m.error]
    for name, col, err in errors:
        print(f"  ! {name}/{col}: result differs from NumPy's ({err})")


def print_first_call(fc):
    print("\nFirst call of jit(selu)(x) in a fresh process (median over processes; excludes "
          "interpreter start-up; 'import' is the framework's import, 'first' the first call "
          "including tracing, code generation, Numba's import and compile or cache load):")
    if "error" in fc:
        print(f"  could not be measured: {fc['error']}")
        return
    lines = [("omnistage cold (empty cache dirs)", fc["cold"]), ("omnistage warm (cache filled)", fc["warm"])]
    if "jax" in fc:
        lines.append(("JAX (no persistent cache)", fc["jax"]))
    for label, runs in lines:
        print(f"  {label:36s} import {fmt_time(_median_of(runs, 'import_s')):>8s}   first call "
              f"{fmt_time(_median_of(runs, 'first_s')):>8s}   second call {fmt_time(_median_of(runs, 'second_s')):>8s}")
    if fc.get("numba_import_s") is not None:
        print(f"  ('import numba' alone in a fresh process: {fmt_time(fc['numba_import_s'])}, part of both first calls)")


def _target_line(name, measured, ok, by=None):
    miss = f" (by {by})" if (ok is False and by) else ""
    print(f"  {name:48s} {measured:42s} {_status(ok)}{miss}")


def print_targets(results, fc):
    print("\nTargets (issue 3):")
    by_name = {c.name: row for c, (row, _) in results.items()}
    pairs = [(n, ratio(r["omnistage"], r.get("jax"))) for n, r in by_name.items()]
    measured = [(n, q) for n, q in pairs if q is not None]
    if measured:
        missed = [f"{n} {q:.2g}x" for n, q in measured if q > 1.0]
        text = f"{len(measured) - len(missed)}/{len(measured)} cases" + (f"; over: {', '.join(missed)}" if missed else "")
        _target_line("steady time <= JAX's, every case", text, not missed)
    else:
        _target_line("steady time <= JAX's, every case", "JAX not importable", None)
    if "selu" in by_name:
        speedup = 1.0 / ratio(by_name["selu"]["omnistage"], by_name["selu"]["numpy"])
        _target_line(">= 8x NumPy on selu", f"NumPy time / omnistage time = {speedup:.3g}x", speedup >= TARGET_SELU_VS_NUMPY,
                     f"{TARGET_SELU_VS_NUMPY / speedup:.2g}x")
    if fc is not None and "error" not in fc:
        warm, cold = _median_of(fc["warm"], "first_s"), _median_of(fc["cold"], "first_s")
        _target_line("warm-cache fresh-process first call <= 350 ms", fmt_time(warm), warm <= TARGET_WARM_S,
                     f"{warm / TARGET_WARM_S:.2g}x")
        _target_line("cold compile of selu <= 700 ms", fmt_time(cold), cold <= TARGET_COLD_S,
                     f"{cold / TARGET_COLD_S:.2g}x")
    if "dispatch" in by_name:
        row = by_name["dispatch"]
        q = ratio(row["omnistage"], row.get("jax"))
        text = f"{fmt_time(row['omnistage'].seconds)} vs JAX {_cell(row.get('jax'))}"
        _target_line("dispatch overhead <= JAX's", text, None if q is None else q <= 1.0, f"{q:.2g}x" if q else None)


def print_header(quick, repeats, jax):
    import numba

    jax_text = f"jax {jax.__version__}" if jax is not None else "jax n/a"
    print(f"omnistage CPU benchmark{' (--quick: tiny sizes, not meaningful)' if quick else ''}: "
          f"python {platform.python_version()}, numpy {np.__version__}, numba {numba.__version__}, {jax_text}; "
          f"{os.cpu_count()} CPUs ({platform.processor() or platform.machine()})")
    threads = {
        "1": "one thread each for BLAS, Numba and XLA requested by environment variables (--threads 1; "
             "XLA still keeps a second core partly busy)",
        "pinned": "the whole process pinned to one CPU (--threads pinned): one core for everything",
        "default": "thread counts as the environment sets them (--threads default)",
    }[THREADS]
    print(f"Threads: {threads}. {_load_text()}")
    print(f"BLAS for omnistage's contractions: {_openblas_text()}")
    print(f"Times are medians of {repeats} repeat(s) per cell (shared, noisy machine: read medians, not "
          f"single runs); ratios are omnistage / other, < 1 means omnistage is faster.\n")


def _openblas_text():
    """Which OpenBLAS kernels NumPy's OpenBLAS runs (SciPy's, which Numba's np.dot calls, reads
    the same OPENBLAS_CORETYPE). The MLP row depends on it: on an AVX-512 machine the AVX2
    "Haswell" kernels take ~1.8x as long for the 784x512 sgemm as the "SkylakeX" ones."""
    import ctypes
    import glob

    forced = os.environ.get("OPENBLAS_CORETYPE")
    core = None
    for lib in glob.glob(os.path.join(os.path.dirname(np.__file__), os.pardir, "numpy.libs", "*openblas*")):
        try:
            dll = ctypes.CDLL(lib)
        except OSError:
            continue
        for name in ("scipy_openblas_get_corename64_", "scipy_openblas_get_corename", "openblas_get_corename"):
            fn = getattr(dll, name, None)
            if fn is not None:
                fn.restype = ctypes.c_char_p
                core = fn().decode()
                break
    text = f"OpenBLAS core {core or 'unknown'}"
    if forced:
        text += f" (forced by OPENBLAS_CORETYPE={forced} in the environment)"
    return text


def _load_text():
    try:
        return "Load average (1 min): {:.1f} on {} CPUs.".format(os.getloadavg()[0], os.cpu_count())
    except OSError:  # not available on this platform
        return ""


def print_notes(results):
    for case, (row, _) in results.items():
        m = row.get("omnistage")
        if m is not None and m.extrapolated_from:
            small, big = m.extrapolated_from
            print(f"\n~ {case.name}: the NumPy interpreter ran the traced loop; timed at n={small} and "
                  f"scaled linearly to n={big} (the interpreter is O(n)).")
    print(f"\nAt the end: {_load_text()}")
    print("Notes: NumPy column for sum_arange/fori_sum is "
          "np.arange(n, dtype=int32).sum(); Numba column is a hand-written serial @njit loop, "
          "error_model='numpy', no fastmath, libm exp/tanh, np.dot for the MLP; 'dispatch' times a "
          "call of x + 1.0 on a float32 scalar (plain Python for NumPy). Under --threads 1 omnistage's "
          "parallel loops are off (NUMBA_NUM_THREADS=1); under --threads default, omnistage's prange loops, "
          "XLA and OpenBLAS may use every core.")


# --- main -------------------------------------------------------------------------------------


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="tiny sizes and 1 repeat (smoke test)")
    p.add_argument("--cases", default=",".join([c.name for c in CASES] + [FIRST_CALL]),
                   help="comma-separated case names (default: all)")
    p.add_argument("--repeats", type=int, default=None, help="repeats per cell (default 7, --quick 1)")
    p.add_argument("--threads", choices=THREAD_CHOICES, default="1",
                   help="1 (default): ask BLAS, Numba and XLA for one thread each (environment variables); "
                        "pinned: also pin the process to one CPU (XLA ignores the variables in part); "
                        "default: leave the environment alone")
    p.add_argument("--no-jax", action="store_true", help="behave as if JAX were not installed")
    p.add_argument("--_first-call", dest="first_call_child", choices=("omnistage", "jax"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    names = [n.strip() for n in args.cases.split(",") if n.strip()]
    unknown = [n for n in names if n not in BY_NAME and n != FIRST_CALL]
    if unknown:
        p.error(f"unknown case(s) {', '.join(unknown)}; choose from {', '.join(list(BY_NAME) + [FIRST_CALL])}")
    args.names = names
    args.repeats = args.repeats or (1 if args.quick else 7)
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.first_call_child:
        return first_call_child(args.first_call_child, args.quick)
    jax = _import_jax(args.no_jax)
    print_header(args.quick, args.repeats, jax)
    results = {}
    for name in args.names:
        if name != FIRST_CALL:
            case = BY_NAME[name]
            results[case] = measure_case(case, args.quick, args.repeats, jax)
    if results:
        print_table(results, args.quick)
    fc = None
    if FIRST_CALL in args.names:
        fc = measure_first_call(args.quick, 1 if args.quick else 3, jax is not None)
        print_first_call(fc)
    print_targets(results, fc)
    print_notes(results)


if __name__ == "__main__":
    main()
