"""The CUDA backend under Numba's CUDA simulator: generated kernels agree with the CPU
backend (values and dtypes), arrays stay on the device, control flow runs on the host."""
import os

import numpy as np
import pytest

import omnistage
import omnistage.numpy as jnp
from omnistage import lax
from omnistage.codegen.cuda import runtime
from omnistage.core.array import GpuArray
from omnistage.core.devices import DeviceBuffer

from .programs import PROGRAMS

pytestmark = pytest.mark.skipif(not runtime.is_usable(), reason="neither a GPU nor Numba's CUDA simulator is usable")


def _leaves(tree):
    return omnistage.tree_util.tree_leaves(tree)


def _assert_agree(got, want, rtol=2e-6, atol=2e-6):
    got, want = _leaves(got), _leaves(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert isinstance(g, GpuArray), type(g)
        g_host, w_host = np.asarray(g), np.asarray(w)
        assert g_host.dtype == w_host.dtype and g_host.shape == w_host.shape
        if w_host.dtype.kind in "fc":
            np.testing.assert_allclose(g_host, w_host, rtol=rtol, atol=atol, equal_nan=True)
        else:
            np.testing.assert_array_equal(g_host, w_host)


@pytest.mark.parametrize("name,fun,make_args", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_cuda_backend_agrees_with_cpu_backend(name, fun, make_args):
    args = make_args()
    want = omnistage.jit(fun, backend="cpu")(*args)
    got = omnistage.jit(fun, backend="cuda")(*args)
    _assert_agree(got, want)


def test_every_generated_kernel_is_a_grid_stride_loop_or_a_block_loop():
    text = omnistage.jit(PROGRAMS[0][1], backend="cuda").lower(*PROGRAMS[0][2]()).compile().as_text()
    assert "@cuda.jit" in text and "def selu(x):" in text
    assert "for _f in range(cuda.grid(1), 20, cuda.gridsize(1)):" in text
    assert "_cd.expf(" in text  # libdevice, float32
    # typed constants: the simulator follows NumPy's promotion, compiled CUDA its own
    assert "np.float32(1.67)" in text and "1.67 " not in text.replace("np.float32(1.67)", "")


def test_selu_is_one_fused_kernel():
    text = omnistage.jit(PROGRAMS[0][1], backend="cuda").lower(*PROGRAMS[0][2]()).compile().as_text()
    assert text.count("@cuda.jit") == 1


def test_kernels_are_cached_on_disk_next_to_their_module():
    compiled = omnistage.jit(PROGRAMS[0][1], backend="cuda").lower(*PROGRAMS[0][2]()).compile()
    assert "@cuda.jit(cache=_OMNISTAGE_CACHED)" in compiled.as_text()
    module = compiled.executable.module
    assert module._OMNISTAGE_CACHED is True and os.path.isfile(module.__file__)


def test_large_reductions_use_a_second_pass_and_are_reproducible():
    n = max(300, 3 * runtime.THREADS_PER_BLOCK * runtime.ITEMS_PER_THREAD)  # several blocks' worth
    x = np.random.default_rng(3).standard_normal((1, n)).astype(np.float32)
    f = omnistage.jit(lambda x: x.sum(), backend="cuda")
    text = f.lower(x).compile().as_text()
    assert "pass 2" in text and "cuda.shared.array" in text and "atomic" not in text
    first, second = np.asarray(f(x)), np.asarray(f(x))
    assert first.tobytes() == second.tobytes()
    np.testing.assert_allclose(first, x.astype(np.float64).sum(), rtol=1e-5)


def test_argmax_follows_numpy_on_nan_and_ties():
    x = np.array([[1, 3, 3, 0], [np.nan, 1, np.nan, 2], [2, 2, 2, 2]], np.float32)
    got = omnistage.jit(lambda x: (jnp.argmax(x, axis=1), jnp.argmin(x, axis=1)), backend="cuda")(x)
    np.testing.assert_array_equal(np.asarray(got[0]), np.argmax(x, axis=1))
    np.testing.assert_array_equal(np.asarray(got[1]), np.argmin(x, axis=1))


def test_results_stay_on_the_device_between_jitted_calls(monkeypatch):
    f = omnistage.jit(lambda x: x * 2.0 + 1.0, backend="cuda")
    y = f(np.arange(4, dtype=np.float32))
    assert isinstance(y, GpuArray) and isinstance(y._value, DeviceBuffer)
    assert y.device.platform == "gpu" and "Cuda" in repr(y.device)
    copies = []
    original = runtime.to_host
    monkeypatch.setattr(runtime, "to_host", lambda a: copies.append(a) or original(a))
    z = f(f(y))
    assert isinstance(z, GpuArray) and copies == []  # no host round trip inside or between calls
    np.testing.assert_allclose(np.asarray(z), ((np.arange(4) * 2 + 1) * 2 + 1) * 2 + 1)
    assert len(copies) == 1  # np.asarray copies to the host once


def test_default_jit_follows_its_inputs_device():
    f = omnistage.jit(lambda x: jnp.sin(x) + 1.0)
    x = np.linspace(0, 1, 5, dtype=np.float32)
    on_cpu = f(x)
    on_gpu = f(omnistage.device_put(x, "gpu"))
    assert type(on_cpu) is omnistage.Array and isinstance(on_gpu, GpuArray)
    np.testing.assert_allclose(np.asarray(on_gpu), np.asarray(on_cpu), rtol=1e-6)


def test_devices_lists_the_gpu_and_device_put_moves_data():
    gpus = omnistage.devices("gpu")
    # as JAX's: devices() lists the default backend's (the CPU here); the GPU is asked for by name
    assert gpus and gpus[0] not in omnistage.devices() and omnistage.devices()[0].platform == "cpu"
    assert gpus[0] in omnistage.numpy.__array_namespace_info__().devices()
    x = omnistage.device_put(np.arange(3, dtype=np.int32), gpus[0])
    assert isinstance(x, GpuArray) and x.dtype == np.int32 and x.shape == (3,)
    assert x.block_until_ready() is x
    assert repr(x) == "Array([0, 1, 2], dtype=int32)" and x.tolist() == [0, 1, 2]
    back = omnistage.device_put(x, "cpu")
    assert type(back) is omnistage.Array and back.tolist() == [0, 1, 2]
    assert omnistage.device_put(jnp.ones(2), "gpu").device == gpus[0]


def test_device_arrays_are_accepted_as_inputs():
    from numba import cuda

    d = cuda.to_device(np.arange(6, dtype=np.float32).reshape(2, 3))
    x = omnistage.device_put(d, "gpu")
    assert isinstance(x, GpuArray) and x._value.data is d  # adopted, not copied
    out = omnistage.jit(lambda v: v.sum(axis=0), backend="cuda")(x)
    np.testing.assert_allclose(np.asarray(out), [3, 5, 7])


def test_eager_operations_on_gpu_arrays_use_a_host_copy():
    x = omnistage.device_put(np.array([1.0, 2.0], np.float32), "gpu")
    assert (x + 1).tolist() == [2.0, 3.0]
    assert float(jnp.sum(x)) == 3.0 and bool(x[1] == 2.0)


def test_rank0_inputs_and_outputs():
    f = omnistage.jit(lambda s, x: (s * 2.0, (x * s).sum()), backend="cuda")
    a, b = f(np.float32(3.0), np.ones(4, np.float32))
    assert a.shape == () and b.shape == () and float(a) == 6.0 and float(b) == 12.0


def test_statements_without_a_kernel_say_they_run_on_the_host(monkeypatch):
    # every primitive has a kernel now: without eig's, eig runs its NumPy implementation
    from omnistage.codegen.cuda import emit

    monkeypatch.delitem(emit.OPAQUE_KERNELS, "eig")
    fun, make = next((p[1], p[2]) for p in PROGRAMS if p[0] == "host_fallback")
    on_host = omnistage.jit(lambda x: fun(x), backend="cuda")  # a new function: not the cached kernel build
    text = on_host.lower(*make()).compile().as_text()
    assert "no CUDA kernel for 'eig' yet: it runs on the host" in text
    _assert_agree(on_host(*make()), omnistage.jit(fun, backend="cpu")(*make()))


def test_control_flow_reads_back_only_the_predicate():
    text = omnistage.jit(lambda x, p: lax.cond(p > 0, jnp.sin, jnp.cos, x), backend="cuda").lower(
        np.ones(3, np.float32), np.float32(1)).compile().as_text()
    assert "if _cu.truth(" in text and "reads the predicate back" in text


def test_x64_float64_and_int64(x64):
    f = lambda x, n: (jnp.exp(x) * 2.0, n * 3 + 1, x.sum())  # noqa: E731
    args = (np.linspace(-1, 1, 6), np.arange(6, dtype=np.int64))
    _assert_agree(omnistage.jit(f, backend="cuda")(*args), omnistage.jit(f)(*args), rtol=1e-12, atol=1e-12)
    assert "_cd.exp(" in omnistage.jit(f, backend="cuda").lower(*args).compile().as_text()


def test_empty_arrays():
    f = omnistage.jit(lambda x: (x * 2.0, x.sum(axis=0), x.sum(axis=1)), backend="cuda")
    a, b, c = f(np.zeros((0, 3), np.float32))
    assert a.shape == (0, 3) and np.asarray(b).tolist() == [0.0, 0.0, 0.0] and c.shape == (0,)


def test_a_function_compiled_for_the_cpu_follows_a_later_gpu_input(recwarn):
    f = omnistage.jit(lambda x: jnp.sin(x) * 2.0)
    x = np.arange(4, dtype=np.float32)
    cpu_out = f(x)
    gpu_out = f(omnistage.device_put(x, "gpu"))
    assert isinstance(gpu_out, GpuArray)
    np.testing.assert_allclose(np.asarray(gpu_out), np.asarray(cpu_out), rtol=1e-6)
    assert not [w for w in recwarn if "interpreter" in str(w.message)]
