"""omnistage.debug.print on the CUDA backend: the host driver copies the operands back and
prints them in program order (also from control-flow bodies, which run on the host), with the
same lines as the CPU backend; kernels around it stay on the device."""
import numpy as np
import pytest

import omnistage
from omnistage import debug, lax
from omnistage.codegen.cuda import runtime

pytestmark = pytest.mark.skipif(not runtime.is_usable(), reason="neither a GPU nor Numba's CUDA simulator is usable")


def _f(x, n):
    debug.print("x={x} n={}", n, x=x)

    def body(i, c):
        lax.cond(c.sum() > 3, lambda v: debug.print("big {}", v), lambda v: None, c)
        return c * 2

    y = lax.fori_loop(0, n, body, x)
    debug.print("total {t:.1f}", t=y.sum())
    return y


def test_prints_equal_the_cpu_backends_and_results_stay_on_the_device(capsys):
    x = np.array([1.0, 2.0], np.float32)
    f = omnistage.jit(_f, backend="cuda")
    text = f.lower(x, 3).compile().as_text()
    assert text.count("_cu.debug_print(") == 3 and "host_call" not in text
    out = f(x, 3)
    got = capsys.readouterr().out
    assert out.device.platform == "gpu"
    omnistage.jit(_f, backend="cpu")(x, 3)
    assert got == capsys.readouterr().out == "x=[1. 2.] n=3\nbig [2. 4.]\nbig [4. 8.]\ntotal 24.0\n"


def test_vmap_and_narrow_floats_on_the_device(capsys):
    omnistage.jit(omnistage.vmap(lambda v: debug.print("{}", v)), backend="cuda")(np.arange(4.0).reshape(2, 2))
    assert capsys.readouterr().out == "[0. 1.]\n[2. 3.]\n"
    x = np.array([0.1, 1 / 3], "bfloat16")
    omnistage.jit(lambda v: debug.print("{} {}", v * 3, 2.5), backend="cuda")(omnistage.device_put(x, "gpu"))
    assert capsys.readouterr().out == f"{x * np.asarray(3, x.dtype)} 2.5\n"
