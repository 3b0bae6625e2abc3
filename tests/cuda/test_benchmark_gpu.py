"""benchmarks/gpu.py runs everywhere: without a usable GPU it says why and exits cleanly."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_gpu_benchmark_exits_cleanly_with_its_reason_or_its_table():
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    done = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "gpu.py"), "--quick"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith("benchmarks/gpu.py: not run: ") or "GB/s" in done.stdout
