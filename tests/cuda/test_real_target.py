"""The CUDA backend against the real Numba CUDA target, in subprocesses without the simulator:
every kernel the tests generate compiles to PTX for sm_90 (where the toolkit's NVVM is
present), and a machine without a GPU gets a one-sentence error naming what is missing."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _run(code_or_module, *, module=False, timeout=300):
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    env["OMNISTAGE_AOT"] = "0"
    cmd = [sys.executable, "-m", code_or_module] if module else [sys.executable, "-c", code_or_module]
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)


def test_every_generated_kernel_compiles_to_ptx_for_sm90():
    # ~400 kernels: about two minutes on a quiet 2-core machine, more on a loaded one
    result = _run("tests.cuda.ptx_check", module=True, timeout=900)
    out = result.stdout.strip()
    if out.startswith("SKIP:"):
        pytest.skip(out[len("SKIP: "):])
    assert result.returncode == 0, out + result.stderr[-3000:]
    assert "kernels compiled to PTX for sm_90" in out


_NO_GPU = """
import numpy as np, omnistage
from omnistage.codegen.cuda import runtime
if runtime.is_usable():
    print("GPU")
else:
    for attempt in (lambda: omnistage.jit(lambda x: x + 1, backend="cuda")(np.ones(2)),
                    lambda: omnistage.devices("gpu"),
                    lambda: omnistage.device_put(np.ones(2), "gpu")):
        try:
            attempt()
        except runtime.CudaUnavailableError as e:
            print(type(e).__name__, "|", e)
    print(omnistage.devices())
"""


def test_without_a_gpu_cuda_requests_fail_with_one_sentence():
    result = _run(_NO_GPU)
    assert result.returncode == 0, result.stderr[-3000:]
    if result.stdout.startswith("GPU"):
        pytest.skip("this machine has a usable GPU")
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 4
    for line in lines[:3]:
        name, message = line.split(" | ")
        assert name == "CudaUnavailableError"
        assert 'pip install -e ".[cuda]"' in message and "backend='cpu'" in message
        assert "\n" not in message and message.count(". ") <= 1  # one sentence, no CUDA internals
    assert lines[3] == "[CpuDevice(id=0)]"


def test_a_cuda_target_that_cannot_load_beside_this_numpy_is_named_before_any_kernel(monkeypatch):
    # seen on an H200 image: numba-cuda 0.30.4 beside NumPy 2.5 fails at its first kernel compile
    # with "module 'numpy' has no attribute 'row_stack'"; check() must say so in one sentence
    import importlib
    import types

    from omnistage.codegen.cuda import runtime

    real_import = importlib.import_module

    def import_module(name, *args):
        if name == "numba.cuda.cudaimpl":
            raise AttributeError("module 'numpy' has no attribute 'row_stack'")
        return real_import(name, *args)

    monkeypatch.setattr(runtime, "SIMULATED", False)
    monkeypatch.setattr(runtime, "cuda", types.SimpleNamespace(is_available=lambda: True))
    monkeypatch.setattr(importlib, "import_module", import_module)
    reason = runtime._probe.__wrapped__()
    assert "fails to load with NumPy" in reason and "row_stack" in reason
    monkeypatch.setattr(runtime, "_probe", lambda: reason)
    with pytest.raises(runtime.CudaUnavailableError, match="install a NumPy release it supports") as e:
        runtime.check()
    assert "\n" not in str(e.value)
