"""Smoke test for benchmarks/examples (issue 18): the runner runs tiny example ports on omnistage
in a fresh subprocess and prints their rows, so the ports and the runner cannot rot unnoticed.
JAX is not needed (the JAX column is left out)."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_tiny(example, tmp_path):
    """The runner's stdout for one example at --size tiny, one steady call per program."""
    env = dict(os.environ, OMNISTAGE_CACHE_DIR=str(tmp_path / "cache"), NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    cmd = [sys.executable, "-m", "benchmarks.examples", "--examples", example,
           "--backends", "omnistage", "--size", "tiny", "--repeats", "1", "--warm-cache"]
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "failed" not in done.stdout, done.stdout
    return done.stdout


def timed_programs(stdout, example):
    """The program names of `example`'s table rows, each row checked for a first and a steady time."""
    rows = [line for line in stdout.splitlines() if line.startswith(f"| {example} |")]
    for row in rows:
        first, steady = row.strip(" |").split(" | ")[2:4]
        assert first.endswith(" s") or first.endswith(" ms"), row
        assert steady != "-", row
        cores = float(row.strip(" |").split(" | ")[-1])  # CPU time over wall time of the steady calls
        assert 0.1 < cores <= os.cpu_count() + 0.5, row
    return [row.split(" | ")[1] for row in rows]


def test_runner_times_a_tiny_mnist_classifier_on_omnistage(tmp_path):
    stdout = run_tiny("mnist_classifier", tmp_path)
    assert timed_programs(stdout, "mnist_classifier") == ["update (batch 128)", "accuracy, eager (256 images)"]
    assert "skipped" not in stdout, stdout


PROGRAMS = {
    "gaussian_process_regression": [
        "grad_fun (jitted gradient)", "train_step (jitted gradient, eager update)",
        "marginal_likelihood, eager", "predict, eager (200 test points)"],
    "control": [
        "trajectory (T=10)", "lqr_solve (T=10, 2-D)", "lqr_predict (T=10, 2-D)",
        "ilqr (non-linear, T=10, 7 iterations)",
        "mpc_predict (non-linear, T=10, iLQR 7 iterations per step)",
        "mpc_predict (2-D LQR as a general cost, T=10, iLQR 3 iterations per step)"],
    "spmd_mnist_classifier_fromscratch": ["spmd_update (batch 128, 1 device)", "accuracy (256 images)"],
}


@pytest.mark.parametrize("example", sorted(PROGRAMS))
def test_runner_times_a_tiny_example_port_on_omnistage(example, tmp_path):
    stdout = run_tiny(example, tmp_path)
    programs = timed_programs(stdout, example)
    assert "skipped" not in stdout, stdout
    assert programs == PROGRAMS[example], stdout
