"""The BLAS thread rule of compiled code (codegen/blas_threads.py): OMNISTAGE_BLAS_THREADS
wins, a user's OpenBLAS/OpenMP variable is respected, one thread while Numba's parallel loops
are on, and the first program that calls BLAS applies it to SciPy's OpenBLAS."""
import os
import subprocess
import sys

import pytest

from omnistage.codegen import blas_threads

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.parametrize("environ, parallel_loops, want", [
    ({"OMNISTAGE_BLAS_THREADS": "3"}, True, 3),
    ({"OMNISTAGE_BLAS_THREADS": "2", "OPENBLAS_NUM_THREADS": "1"}, False, 2),
    ({"OPENBLAS_NUM_THREADS": "4"}, True, None),
    ({"OMP_NUM_THREADS": "4"}, True, None),
    ({}, True, 1),
    ({}, False, None),
])
def test_rule(environ, parallel_loops, want):
    assert blas_threads.wanted_threads(environ, parallel_loops) == want


def test_a_bad_count_warns_and_changes_nothing():
    with pytest.warns(RuntimeWarning, match="OMNISTAGE_BLAS_THREADS=1"):
        assert blas_threads.wanted_threads({"OMNISTAGE_BLAS_THREADS": "many"}, True) is None


_SCRIPT = """
import numpy as np, omnistage
from omnistage.codegen import blas_threads
before = blas_threads.current_threads()
a = np.ones((16, 16), np.float32)  # above the emitter's loop-nest size: a BLAS call
omnistage.jit(lambda a, b: a.T @ b)(a, a)
print(before, blas_threads.current_threads())
"""


def _threads_before_and_after(tmp_path, **env):
    clean = {k: v for k, v in os.environ.items() if k not in blas_threads.USER_VARIABLES + (blas_threads.ENV,)}
    clean.update(OMNISTAGE_CACHE_DIR=str(tmp_path / "c"), NUMBA_CACHE_DIR=str(tmp_path / "n"), **env)
    done = subprocess.run([sys.executable, "-c", _SCRIPT], env=clean, cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    before, after = done.stdout.split()
    if before == "None":
        pytest.skip("SciPy's BLAS is not an OpenBLAS this module can reach")
    return int(before), int(after)


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="OpenBLAS runs one thread on one CPU anyway")
def test_the_first_blas_program_applies_the_rule(tmp_path):
    assert _threads_before_and_after(tmp_path, OMNISTAGE_BLAS_THREADS="1")[1] == 1
    before, after = _threads_before_and_after(tmp_path, OPENBLAS_NUM_THREADS="2")
    assert before == after == 2
