"""Starting real MPI jobs from tests: `run_job(worker, *args)` runs `mpiexec -n 2 python worker`
with a timeout and a private cache (omnistage's and Numba's), and returns the finished process.

Tests that use it skip when mpi4py or mpiexec is missing (the `distributed` extra is not
installed). Workers report one line per check (`report.py`), `<rank> ok <name>` or
`<rank> FAIL <name>: <why>`, and `<rank> info <name>: <value>` for what a test inspects.
"""
import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


def mpiexec():
    """The mpiexec of this Python's environment (MPICH's wheel puts it next to python), else PATH's."""
    pytest.importorskip("mpi4py")
    found = shutil.which("mpiexec", path=os.path.dirname(sys.executable)) or shutil.which("mpiexec")
    if found is None:
        pytest.skip("no mpiexec: pip install -e '.[distributed]'")
    return found


def job_env(cache_dir, **extra):
    env = dict(os.environ)
    # tests/cuda/conftest.py turns Numba's CUDA simulator on for the whole session; these are
    # CPU jobs, where a simulated GPU would count as a second local device
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    env.update(
        OMNISTAGE_CACHE_DIR=os.path.join(cache_dir, "omnistage"),
        NUMBA_CACHE_DIR=os.path.join(cache_dir, "numba"),
        OMNISTAGE_AOT="0",  # no background library builders competing for the two cores
        OMNISTAGE_LOG_COMPILES="0",
        PYTHONPATH=os.pathsep.join([os.path.dirname(os.path.dirname(HERE)), env.get("PYTHONPATH", "")]),
    )
    env.update(extra)
    return env


def frozen_copy(directory):
    """A copy of the package and of these workers under `directory`, for jobs whose result
    depends on omnistage's sources staying the same between them (the native-library key
    hashes every source file; a checkout being edited changes it)."""
    root = os.path.dirname(os.path.dirname(HERE))
    copy = os.path.join(str(directory), "frozen")
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(os.path.join(root, "omnistage"), os.path.join(copy, "omnistage"), ignore=ignore)
    shutil.copytree(HERE, os.path.join(copy, "tests", "distributed"), ignore=ignore)
    open(os.path.join(copy, "tests", "__init__.py"), "w").close()
    return copy


def run_job(worker, *args, cache_dir, n=2, timeout=300, root=None, **env):
    """The finished `mpiexec -n n python worker args` (the worker and omnistage of `root`, a
    `frozen_copy`, when given); its ranks' reports are in `.results`."""
    results = os.path.join(str(cache_dir), f"results-{len(os.listdir(str(cache_dir)))}")
    os.makedirs(results)
    here = HERE if root is None else os.path.join(root, "tests", "distributed")
    if root is not None:
        env["PYTHONPATH"] = root
    command = [mpiexec(), "-n", str(n), sys.executable, os.path.join(here, worker), *args]
    proc = subprocess.run(command, env=job_env(str(cache_dir), OMNISTAGE_TEST_RESULTS=results, **env),
                          capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    proc.results = results
    return proc


def checks(proc, n=2):
    """{rank: {check name: 'ok' or the failure}} from a job's output; fails the test on a
    crashed job or a rank that did not finish."""
    results = {rank: {} for rank in range(n)}
    lines = []
    for rank in range(n):
        path = os.path.join(proc.results, f"rank{rank}.txt")
        if os.path.exists(path):
            with open(path) as f:
                lines += f.read().splitlines()
    for line in lines:
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[0].isdigit() and parts[1] in ("ok", "FAIL", "info"):
            name, _, text = parts[2].partition(": ")
            results[int(parts[0])][name] = {"ok": "ok", "FAIL": f"FAIL: {text}", "info": text}[parts[1]]
    done = [r for r in range(n) if results[r].get("done") == "ok"]
    assert proc.returncode == 0 and len(done) == n, (
        f"MPI job failed (exit {proc.returncode}, finished ranks {done})\n--- stdout\n{proc.stdout[-4000:]}"
        f"\n--- stderr\n{proc.stderr[-4000:]}")
    return results


def failures(results):
    return {f"rank {r} {name}": why for r, checks_ in results.items() for name, why in checks_.items()
            if why.startswith("FAIL: ")}
