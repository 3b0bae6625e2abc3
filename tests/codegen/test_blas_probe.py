"""A program that calls no BLAS does not import SciPy's linear algebra (Numba's import-time
BLAS probe is answered without it: codegen/blas_probe.py); BLAS still works for our programs
and for the user's own Numba code in the same process."""
import pytest
import os
import subprocess
import sys
import textwrap

pytestmark = pytest.mark.numba_path  # tests of the Numba build (tests/conftest.py)

_CHILD = textwrap.dedent("""
    import sys, numpy as np, numba
    import omnistage, omnistage.numpy as jnp
    selu = omnistage.jit(lambda x: 1.05 * jnp.where(x > 0, x, 1.67 * jnp.exp(x) - 1.67), backend="cpu")
    x = np.linspace(-2, 2, 1000).astype(np.float32)
    np.testing.assert_allclose(np.asarray(selu(x)), 1.05 * np.where(x > 0, x, 1.67 * np.exp(x) - 1.67), rtol=1e-5, atol=1e-6)
    assert "numba.np.arraymath" in sys.modules
    print("linalg after selu:", "scipy.linalg" in sys.modules)
    a = np.random.RandomState(0).rand(16, 8).astype(np.float32)
    np.testing.assert_allclose(np.asarray(omnistage.jit(lambda a: a.T @ a, backend="cpu")(a)), a.T @ a, rtol=1e-5)
    @numba.njit
    def users_own(m):
        return np.dot(m, m.T), np.cov(m)
    d, c = users_own(a.astype(np.float64))
    np.testing.assert_allclose(d, a.astype(np.float64) @ a.T, rtol=1e-12)
    np.testing.assert_allclose(c, np.cov(a.astype(np.float64)), rtol=1e-12)
    print("ok")
""")


def test_selu_does_not_import_scipy_linalg_and_blas_still_works(tmp_path):
    env = dict(os.environ, OMNISTAGE_CACHE_DIR=str(tmp_path / "c"), NUMBA_CACHE_DIR=str(tmp_path / "n"),
               OMNISTAGE_AOT="0")
    done = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "linalg after selu: False" in done.stdout and "ok" in done.stdout, done.stdout
