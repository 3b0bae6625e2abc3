"""Runner: every example port on JAX and on omnistage, each in a fresh subprocess, one table.

    python -m benchmarks.examples [--examples mnist_vae,advi] [--size full|small|tiny]
                                  [--backends jax,omnistage] [--threads 1|default]
                                  [--timeout S] [--warm-cache | --warm-machine] [--json FILE]

For each timed program of each example it prints the first call (tracing and compiling
included: omnistage starts from empty cache directories unless --warm-cache; with
--warm-machine, from cache directories that hold what omnistage compiles once per machine (its
GEMM pool, its float32 kernel, Numba's builds of its runtime kernels), filled by an untimed run
of the example, but no program: the first call of a program on a machine that has run
omnistage before, issue 17's measure, as compile_time.py's), the steady time
per call (the median of the calls after the first and a warm-up of common.WARMUP_S seconds of
calls, and the slowest of them; omnistage's warm-up lasts until its optimized builds arrive, at
most common.WARMUP_MAX_S, and one longer than WARMUP_S is listed under the table), and the ratio
omnistage / JAX of the steady medians (< 1: omnistage is faster), and the cores each backend
kept busy in its steady calls (process CPU time over wall time: XLA's CPU runtime runs its
matmuls on more than one core even under --threads 1, whose flags it does not apply to them).
Examples that cannot run on a backend say why (a missing library name), as do runs that fail
(exit status 1) or pass --timeout. Both backends run on the same machine in the same run, one after the other, so their numbers compare;
on a shared machine only medians mean much.

One example alone: `python -m benchmarks.examples.mnist_vae --backend omnistage [--size small]`;
with OMNISTAGE_PROFILE=1 it also prints where each compiled program spent its time, statement
by statement. The contractions in isolation: `python -m benchmarks.examples.gemm`.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

EXAMPLES = (
    "mnist_classifier", "mnist_classifier_fromscratch", "spmd_mnist_classifier_fromscratch", "mnist_vae",
    "differentially_private_sgd", "kernel_lsq", "advi", "gaussian_process_regression", "control",
)
BACKENDS = ("jax", "omnistage")
from benchmarks import bench_env  # noqa: E402 - (no settings applied: each example applies its own)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_example(example, backend, args, cache_dir):
    """(records, notes, problem) of one example on one backend, in a fresh process."""
    env = dict(os.environ)
    cmd = [args.python, "-m", f"benchmarks.examples.{example}", "--backend", backend,
           "--size", args.size, "--threads", args.threads]
    if not args.warm_cache:
        run_dir = os.path.join(cache_dir, f"{example}-{backend}")
        if args.warm_machine:  # an untimed run fills the directories; its programs are dropped
            warm = dict(env, OMNISTAGE_CACHE_DIR=os.path.join(run_dir + "-warmup", "omnistage"),
                        NUMBA_CACHE_DIR=os.path.join(run_dir + "-warmup", "numba"))
            subprocess.run(cmd + ["--repeats", "1"], cwd=ROOT, env=warm, capture_output=True, timeout=args.timeout)
            _settle(warm["OMNISTAGE_CACHE_DIR"])
            for kind in ("omnistage", "numba"):
                if os.path.isdir(os.path.join(run_dir + "-warmup", kind)):
                    bench_env.copy_without_programs(os.path.join(run_dir + "-warmup", kind), os.path.join(run_dir, kind))
        env["OMNISTAGE_CACHE_DIR"] = os.path.join(run_dir, "omnistage")
        env["NUMBA_CACHE_DIR"] = os.path.join(run_dir, "numba")
    if args.repeats:
        cmd += ["--repeats", str(args.repeats)]
    start = time.perf_counter()
    try:
        done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=args.timeout)
        out, problem = done.stdout, None
        if done.returncode:
            problem = f"failed (exit {done.returncode}): " + _last_line(done.stderr)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        problem = f"did not finish in {args.timeout:.0f} s"
    records, notes = [], []
    for line in out.splitlines():
        tag, _, payload = line.partition(" ")
        if tag == "EXAMPLE_RESULT":
            records.append(json.loads(payload))
        elif tag in ("EXAMPLE_NOTE", "EXAMPLE_SKIP"):
            item = json.loads(payload)
            notes.append(("skipped: " if tag == "EXAMPLE_SKIP" else "") + item.get("note", item.get("reason", "")))
    print(f"  {example} on {backend}: {time.perf_counter() - start:.0f} s{'; ' + problem if problem else ''}",
          file=sys.stderr, flush=True)
    return records, notes, problem


def _settle(cache_dir, timeout=120.0):
    """Wait until no omnistage helper of the warm-up run holds a build lock in `cache_dir` (a
    helper finishing an optimized build there must not write into what the timed run copies)."""
    import fcntl
    import glob

    deadline = time.monotonic() + timeout
    for path in glob.glob(os.path.join(cache_dir, "**", "*.lock"), recursive=True):
        try:
            with open(path) as f:
                while time.monotonic() < deadline:
                    try:
                        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                        break
                    except OSError:
                        time.sleep(0.05)
        except OSError:
            continue


def _last_line(text):
    lines = [line for line in (text or "").strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


def _seconds(x):
    if x is None:
        return "-"
    return f"{x * 1e3:.3g} ms" if x < 1 else f"{x:.3g} s"


def _cores(record):
    cores = record.get("steady_cores") if record else None
    return "-" if cores is None else f"{cores:.2f}"


def table(results, backends):
    """Rows: one per (example, program), in the order the programs ran."""
    order, by_key = [], {}
    for (example, backend), (records, _, _) in results.items():
        for r in records:
            key = (example, r["program"])
            if key not in by_key:
                order.append(key)
                by_key[key] = {}
            by_key[key][backend] = r
    cols = ["example", "program"]
    for b in backends:
        cols += [f"{b} first", f"{b} steady (max)"]
    if set(BACKENDS) <= set(backends):
        cols.append("ratio")
    cols.append("cores (" + " / ".join(backends) + ")")
    rows = []
    for key in order:
        row = list(key)
        for b in backends:
            r = by_key[key].get(b)
            row += [_seconds(r["first_s"]) if r else "-",
                    f"{_seconds(r['median_s'])} ({_seconds(max(r['steady_s'], default=None))})" if r else "-"]
        if "ratio" in cols:
            j, o = by_key[key].get("jax"), by_key[key].get("omnistage")
            row.append(f"{o['median_s'] / j['median_s']:.2f}x" if j and o and j["median_s"] and o["median_s"] else "-")
        row.append(" / ".join(_cores(by_key[key].get(b)) for b in backends))
        rows.append(row)
    return cols, rows


def print_table(cols, rows):
    print("| " + " | ".join(cols) + " |")
    print("|" + "|".join("---" for _ in cols) + "|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", default=",".join(EXAMPLES))
    parser.add_argument("--backends", default=",".join(BACKENDS))
    parser.add_argument("--size", choices=("full", "small", "tiny"), default="full")
    parser.add_argument("--threads", choices=("1", "default"), default="1")
    parser.add_argument("--repeats", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per example and backend")
    parser.add_argument("--warm-cache", action="store_true", help="use the usual cache directories")
    parser.add_argument("--warm-machine", action="store_true",
                        help="start from cache directories holding what omnistage compiles once per machine, no program")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--json", help="also write every record to this file")
    args = parser.parse_args(argv)
    examples = [e for e in args.examples.split(",") if e]
    unknown = sorted(set(examples) - set(EXAMPLES))
    if unknown:
        parser.error(f"unknown example(s) {', '.join(unknown)}; choose from {', '.join(EXAMPLES)}")
    backends = [b for b in args.backends.split(",") if b]
    results = {}
    with tempfile.TemporaryDirectory(prefix="omnistage-examples-") as cache_dir:
        for example in examples:
            for backend in backends:
                results[(example, backend)] = run_example(example, backend, args, cache_dir)
    sys.stderr.flush()
    print(f"\nJAX's example programs, --size {args.size}, --threads {args.threads} "
          f"({'warm' if args.warm_cache else 'machine-warm (no program)' if args.warm_machine else 'empty'} "
          f"omnistage cache), times per call:\n")
    print_table(*table(results, backends))
    remarks = [f"- {ex} on {b}: {text}" for (ex, b), (_, notes, problem) in results.items()
               for text in notes + ([problem] if problem else [])]
    remarks += [f"- {ex} {r['program']} on {b}: warmed up {sum(r['warmup_s']):.1f} s ({len(r['warmup_s'])} calls, "
                f"median {_seconds(statistics.median(r['warmup_s']))}) until its optimized build arrived"
                for (ex, b), (records, _, _) in results.items() for r in records
                if r.get("warmup_s") and sum(r["warmup_s"]) > r.get("warmup_target_s", 0.0) + 0.5]
    if remarks:
        print("\n" + "\n".join(remarks))
    if args.json:
        with open(args.json, "w") as f:
            json.dump([r for recs, _, _ in results.values() for r in recs], f, indent=1)
    # a port that crashes is a bug to see; a skip or a timeout is a measurement
    return int(any(problem and problem.startswith("failed") for _, _, problem in results.values()))


if __name__ == "__main__":
    sys.exit(main())
