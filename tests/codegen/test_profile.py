"""OMNISTAGE_PROFILE=1 (codegen/profile.py): the generated entry function gets a timer mark per
program statement, and the report names each statement group's line, names and kind."""
import os
import subprocess
import sys

from omnistage.codegen import profile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

MODULE = '''# Numba CPU kernel for the omnistage program 'f'.
import numpy as np
import numba
from omnistage.codegen import support as _rt
from omnistage.codegen import kernels as _kn
_params0 = np.array([1, 4, 4, 1, 4, 4, 0, 0], dtype=np.int64)


@numba.njit(cache=_OMNISTAGE_CACHED, nogil=True, fastmath={'contract'})
def f(a, b):
    f = _rt.empty((1, 4, 4), np.float32)  # user.py:3
    _kn.matmul(a, b, f, _params0)  # BLAS
    g = _rt.empty((4, 4), np.float32)  # user.py:4
    for _i0 in range(4):
        for _i1 in range(4):
            g[_i0, _i1] = f[_i0, _i1] + 1
    return (g,)
'''


def test_instrument_marks_each_statement_group():
    text = profile.instrument(MODULE, "f")
    compile(text, "<instrumented>", "exec")
    assert text.count("_prof_cycles()") == 3 and text.count("with numba.objmode():") == 1  # dot, loop, return
    assert "nogil" not in text and "from omnistage.codegen import profile as _prof" in text
    key = int(text.split("_prof.record(")[1].split(",")[0])
    labels = profile._programs[key]["labels"]
    assert "user.py:3" in labels[0] and "BLAS" in labels[0]
    assert "user.py:4" in labels[1] and "g" in labels[1] and "loop" in labels[1]


_SCRIPT = """
import sys
import numpy as np, omnistage, omnistage.numpy as jnp
from omnistage.codegen import profile
def step(a, b):
    return jnp.tanh(a.T @ b) + 1.0
f = omnistage.jit(step)
a = np.ones((16, 8), np.float32)
for _ in range(3):
    f(a, a)
profile.report(file=sys.stdout)
profile.reset()
"""


def test_a_profiled_run_reports_its_statements(tmp_path):
    env = dict(os.environ, OMNISTAGE_PROFILE="1", OMNISTAGE_CACHE_DIR=str(tmp_path / "c"),
               NUMBA_CACHE_DIR=str(tmp_path / "n"))
    done = subprocess.run([sys.executable, "-c", _SCRIPT], env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    assert "omnistage profile: step, 3 calls" in out, out
    assert "[BLAS]" in out and "<string>:6" in out  # the line of `return jnp.tanh(a.T @ b) + 1.0`
    assert "omnistage profile" not in done.stderr  # reset: nothing left for the exit report
