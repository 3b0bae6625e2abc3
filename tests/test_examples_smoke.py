"""Smoke test for benchmarks/examples (issue 18): the runner runs one tiny example port on
omnistage in a fresh subprocess and prints its row, so the ports and the runner cannot rot
unnoticed. JAX is not needed (the JAX column is left out)."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_runner_times_a_tiny_mnist_classifier_on_omnistage(tmp_path):
    env = dict(os.environ, OMNISTAGE_CACHE_DIR=str(tmp_path / "cache"), NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    cmd = [sys.executable, "-m", "benchmarks.examples", "--examples", "mnist_classifier",
           "--backends", "omnistage", "--size", "tiny", "--repeats", "1", "--warm-cache"]
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [line for line in done.stdout.splitlines() if line.startswith("| mnist_classifier |")]
    assert [row.split(" | ")[1] for row in rows] == ["update (batch 128)", "accuracy, eager (256 images)"]
    for row in rows:
        first, steady = row.strip(" |").split(" | ")[2:4]
        assert first.endswith(" s") or first.endswith(" ms"), row
        assert steady != "-", row
        cores = float(row.strip(" |").split(" | ")[-1])  # CPU time over wall time of the steady calls
        assert 0.1 < cores <= os.cpu_count() + 0.5, row
    assert "failed" not in done.stdout and "skipped" not in done.stdout, done.stdout
