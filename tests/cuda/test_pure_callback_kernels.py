"""omnistage.pure_callback on the CUDA backend: the host driver copies the operands back and
calls the function (a host call), the result goes back to the device, and values equal the
CPU backend's."""
import numpy as np
import pytest

import omnistage
from omnistage.codegen.cuda import runtime

pytestmark = pytest.mark.skipif(not runtime.is_usable(), reason="neither a GPU nor Numba's CUDA simulator is usable")


def _f(x):
    y = omnistage.pure_callback(lambda a: np.sin(a), omnistage.ShapeDtypeStruct(x.shape, x.dtype), x)
    return y * 2.0 + x


def test_callback_runs_on_the_host_and_results_return_to_the_device():
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    f = omnistage.jit(_f, backend="cuda")
    assert "host_call('pure_callback'" in f.lower(x).compile().as_text()
    out = f(x)
    assert out.device.platform == "gpu"
    np.testing.assert_allclose(np.asarray(out), np.asarray(omnistage.jit(_f, backend="cpu")(x)), rtol=1e-6)
