"""codegen/numba_extensions.py: rocket-fft's Numba extension (which imports scipy.fft and
scipy.special) is loaded when a program has an FFT, not at every process's first compile, and
a user's own @njit code still finds numpy.fft inside njit as Numba alone would give it."""
import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("rocket_fft")

SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    import numba
    import omnistage, omnistage.numpy as jnp
    from omnistage.codegen import numba_extensions

    omnistage.jit(lambda x: x * 2)(np.ones(3, np.float32))
    print("plain", "rocket_fft" in sys.modules, numba_extensions.loaded("rocket_fft"))
    ORDER
    print("done")
""")

FFT = """
y = omnistage.jit(lambda x: jnp.fft.rfft(x))(np.arange(8.0, dtype=np.float32))
assert np.allclose(np.asarray(y), np.fft.rfft(np.arange(8.0)), atol=1e-5)
print("fft", numba_extensions.loaded("rocket_fft"))
"""

USER = """
@numba.njit
def user(x):
    return np.fft.rfft(x)
assert np.allclose(user(np.arange(8.0)), np.fft.rfft(np.arange(8.0)))
print("user", numba_extensions.loaded("rocket_fft"))
"""


def _run(tmp_path, order):
    env = dict(os.environ, OMNISTAGE_CACHE_DIR=str(tmp_path / "c"), NUMBA_CACHE_DIR=str(tmp_path / "n"),
               OMNISTAGE_AOT="0", OMNISTAGE_LOG_COMPILES="0")
    code = SCRIPT.replace("ORDER", "\n".join(order))
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout.split("\n")


def test_a_plain_program_does_not_load_rocket_fft_and_an_fft_program_does(tmp_path):
    lines = _run(tmp_path, [FFT])
    assert "plain False False" in lines
    assert "fft True" in lines


def test_a_users_own_njit_fft_still_compiles_after_ours(tmp_path):
    lines = _run(tmp_path, [USER, FFT])
    assert "plain False False" in lines
    assert "user True" in lines and "done" in lines
