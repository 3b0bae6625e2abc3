"""benchmarks/vmap.py runs (one case, one repeat) and prints its table, so it cannot rot."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "benchmarks", "vmap.py")


def test_vmap_benchmark_prints_a_row_with_a_ratio(tmp_path):
    env = dict(os.environ, OMNISTAGE_CACHE_DIR=str(tmp_path / "cache"))
    done = subprocess.run([sys.executable, SCRIPT, "--repeats", "1", "--batch", "8", "--cases", "normalize_rows"],
                          env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    row = next(line for line in done.stdout.splitlines() if line.startswith("normalize_rows"))
    assert len(row.split()) == 4
