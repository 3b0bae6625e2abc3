"""Devices and device memory: the CPU always; a CUDA GPU when one is usable (a real NVIDIA GPU
with Numba's CUDA target, or Numba's CUDA simulator when `NUMBA_ENABLE_CUDASIM=1`).

Several CPU devices per process (`configured_cpu_devices`: `OMNISTAGE_CPU_DEVICES=N` or
`XLA_FLAGS=--xla_force_host_platform_device_count=N`): `local_devices()` lists N CPU devices
and pmap maps an axis of up to N; they share the process's cores (the compiled kernel's
parallel loops), and their collectives combine in the kernel before any MPI step.

Processes: after `omnistage.distributed.initialize()` (multi-process mode on MPI) this process
is one of `process_count()`; `devices()` lists every device of every process, ordered by
process, and `local_devices()` this process's, as in JAX's multi-process mode. The layout is
set by `set_process_layout` (the distributed package calls it; core never imports MPI).

Owns `Device`, the device list, and `DeviceBuffer`, the GPU memory behind a GPU `Array`. Finding
out whether CUDA is usable imports `numba.cuda` (through the CUDA backend's runtime), so it
happens only when GPU devices are asked for, never on the CPU path.
"""
import os
import re

import numpy as np

_FLAG = re.compile(r"--xla_force_host_platform_device_count=(\S*)")


def configured_cpu_devices(environ=os.environ):
    """CPU devices per process: `OMNISTAGE_CPU_DEVICES=N`, else XLA's flag
    `--xla_force_host_platform_device_count=N` in `XLA_FLAGS` (what JAX programs set to get
    several CPU devices), else 1. Read when omnistage is imported, as JAX reads it."""
    for name, text in (("OMNISTAGE_CPU_DEVICES", environ.get("OMNISTAGE_CPU_DEVICES")),
                       ("XLA_FLAGS --xla_force_host_platform_device_count", _flag(environ.get("XLA_FLAGS", "")))):
        if text is None or text == "":
            continue
        if not text.isdigit() or int(text) < 1:
            raise ValueError(f"{name}={text!r}: expected a positive number of CPU devices per process")
        return int(text)
    return 1


def _flag(flags):
    found = _FLAG.findall(flags)
    return found[-1] if found else None


class Device:
    """A place arrays live and computations run."""

    def __init__(self, platform, id_, process_index=0):
        self.platform = platform
        self.id = id_
        self.device_kind = platform
        self.process_index = process_index

    def __repr__(self):
        name = {"cpu": "CpuDevice", "gpu": "CudaDevice"}.get(self.platform, self.platform.capitalize() + "Device")
        return f"{name}(id={self.id})"


class ProcessLayout:
    """This process's place among the processes of a multi-process job: its index, the number
    of processes, and how many CPU devices each has (the same for all)."""

    __slots__ = ("index", "count", "local_count", "cpu_devices", "group")

    def __init__(self, index=0, count=1, local_count=None, group=None):
        local_count = _cpu_devices if local_count is None else local_count
        if not (count >= 1 and 0 <= index < count and local_count >= 1):
            raise ValueError(f"bad process layout: process {index} of {count}, {local_count} devices each")
        self.index, self.count, self.local_count = index, count, local_count
        # the collectives on NumPy arrays across processes (the interpreter's), None alone
        self.group = group
        # global ids: process p's devices are p * local_count + i, as JAX numbers CPU devices
        self.cpu_devices = tuple(Device("cpu", p * local_count + i, p) for p in range(count) for i in range(local_count))

    def local(self, devices):
        return [d for d in devices if d.process_index == self.index]


_cpu_devices = configured_cpu_devices()
_layout = ProcessLayout()

# Set by the first compiled computation (api._make_executable): distributed.initialize() must
# come before it, as in JAX.
computation_started = False


def set_process_layout(index, count, local_count=None, group=None):
    """Make this process number `index` of `count`, with `local_count` CPU devices (default:
    `configured_cpu_devices()`); distributed.initialize/shutdown call it."""
    global _layout
    _layout = ProcessLayout(index, count, local_count, group)


def process_layout():
    return _layout


def cpu_device():
    """This process's (first) CPU device: the default device of arrays and computations."""
    return _layout.local(_layout.cpu_devices)[0]


_gpu_by_process = {}


def gpu_device():
    """This process's GPU (one per process; its id is global in a multi-process job)."""
    dev = _gpu_by_process.get(_layout.index)
    if dev is None:
        dev = _gpu_by_process[_layout.index] = Device("gpu", _layout.index, _layout.index)
    return dev


def _cuda_runtime():
    from ..codegen.cuda import runtime

    return runtime


def gpu_devices():
    """The usable GPUs: one device (the current CUDA device) or none."""
    try:
        runtime = _cuda_runtime()
    except ImportError:
        return []
    return [gpu_device()] if runtime.is_usable() else []


_GPU_NAMES = ("gpu", "cuda")


def devices(backend=None):
    """Devices of `backend` ('cpu', 'gpu'/'cuda'); with none, the default backend's (the CPU's:
    `jit` compiles for the CPU unless told otherwise), as JAX lists its default backend's only.
    A GPU is `devices('gpu')`."""
    if backend is None:
        return list(_layout.cpu_devices)
    if backend == "cpu":
        return list(_layout.cpu_devices)
    if backend in _GPU_NAMES:
        gpus = gpu_devices()
        if not gpus:
            _cuda_runtime().check()  # raises the one-sentence reason
        return gpus
    raise RuntimeError(f"Unknown backend {backend!r}; available backends: {available_backends()}")


def available_backends():
    return ["cpu"] + (["gpu"] if gpu_devices() else [])


def local_devices(process_index=None, backend=None):
    """The devices of process `process_index` (default: this one)."""
    index = _layout.index if process_index is None else int(process_index)
    if not 0 <= index < _layout.count:
        raise ValueError(f"process_index {process_index} is out of range: there are {_layout.count} processes")
    return [d for d in devices(backend) if d.process_index == index]


def device_count(backend=None):
    """The number of devices of every process."""
    return len(devices(backend))


def local_device_count(backend=None):
    """The number of this process's devices."""
    return len(local_devices(backend=backend))


def process_count():
    return _layout.count


def process_index():
    return _layout.index


def default_backend():
    return "cpu"


def resolve(device):
    """A Device from a Device, a platform name ('cpu', 'gpu', 'cuda') or None (the CPU)."""
    if device is None:
        return cpu_device()
    if isinstance(device, Device):
        return device
    if isinstance(device, str):
        return devices(device)[0]
    raise TypeError(f"expected a Device or a platform name ('cpu', 'gpu'), got {device!r}")


# --- GPU memory ------------------------------------------------------------------------------

# Set once a GPU array exists in this process: from then on jit's default executables follow
# their inputs' device (before that they skip the check; see api._make_executable).
gpu_arrays_exist = False


def storage_dtype(dtype):
    """The dtype of the device memory that holds `dtype` values: bfloat16, which CuPy and Numba
    lack, is held as its 16 bits (uint16); every other dtype as itself."""
    dtype = np.dtype(dtype)
    return _UINT16 if dtype.name == "bfloat16" else dtype


_UINT16 = np.dtype(np.uint16)


class DeviceBuffer:
    """An immutable array in GPU memory: a CuPy array, a Numba device array, anything with
    `__cuda_array_interface__`, or a simulator array. A GPU `Array` holds one as its value.

    `dtype` is the array's own dtype, which is `data`'s except for bfloat16: CuPy and Numba have
    no bfloat16, so its device memory is a uint16 array of its bits (`storage_dtype`),
    converted on the device by the programs that take or return it. Such a buffer offers no
    `__cuda_array_interface__` or DLPack export, which would call its bits uint16.

    Eager (un-jitted) operations on a GPU array run the NumPy implementation on a host copy:
    attribute reads it does not define itself (`astype`, `reshape`, ...) and `__array__` see
    that copy (made once, arrays being immutable). Jitted calls never do.
    """

    __slots__ = ("data", "shape", "dtype", "_host")

    def __init__(self, data, dtype=None):
        global gpu_arrays_exist
        gpu_arrays_exist = True
        self.data = data
        self.shape = tuple(data.shape)
        self.dtype = np.dtype(data.dtype)
        if dtype is not None and np.dtype(dtype) != self.dtype:  # bfloat16, held as its bits
            if storage_dtype(dtype) != self.dtype:
                raise AssertionError(f"internal: {np.dtype(dtype).name} array held in {self.dtype.name} device memory")
            self.dtype = np.dtype(dtype)
        self._host = None

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))
    itemsize = property(lambda self: self.dtype.itemsize)
    nbytes = property(lambda self: self.size * self.dtype.itemsize)
    device = property(lambda self: gpu_device())

    @property
    def __cuda_array_interface__(self):
        return self.shared_data().__cuda_array_interface__

    def shared_data(self):
        """`data`, for other libraries to use without a copy (not for bfloat16: see the class)."""
        if self.dtype != np.dtype(self.data.dtype):
            raise AttributeError(
                f"a {self.dtype.name} GPU array cannot be shared with CuPy or Numba, which have no "
                f"{self.dtype.name} type; share its bits instead: "
                f"lax.bitcast_convert_type(x, jnp.uint16)")
        return self.data

    def to_host(self):
        """The contents as a read-only NumPy array (copied once)."""
        if self._host is None:
            host = np.asarray(_cuda_runtime().to_host(self.data)).view(self.dtype).reshape(self.shape)
            host.flags.writeable = False
            self._host = host
        return self._host

    def block_until_ready(self):
        _cuda_runtime().synchronize()
        return self

    def __array__(self, dtype=None, copy=None):
        host = self.to_host()
        if copy or (dtype is not None and np.dtype(dtype) != host.dtype):
            return np.array(host, dtype=dtype)
        return host

    def __getattr__(self, name):
        if name == "__cuda_array_interface__":
            self.shared_data()  # raises why (Python retries a property's AttributeError here)
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.to_host(), name)

    def __getitem__(self, idx):
        return self.to_host()[idx]

    def __len__(self):
        return self.shape[0]

    def __iter__(self):
        return iter(self.to_host())

    def __repr__(self):
        return f"DeviceBuffer(shape={self.shape}, dtype={self.dtype.name}, on {type(self.data).__name__})"


def is_device_buffer(value):
    return type(value) is DeviceBuffer


def to_gpu(value):
    """A DeviceBuffer holding `value` (a host array, or a device array adopted without a copy)."""
    runtime = _cuda_runtime()
    runtime.check()
    if isinstance(value, DeviceBuffer):
        return value
    if hasattr(value, "__cuda_array_interface__") or _is_simulator_array(value):
        return DeviceBuffer(value)
    value = np.asarray(value)
    return DeviceBuffer(runtime.to_device(value), value.dtype)


def _is_simulator_array(value):
    return type(value).__name__ == "FakeCUDAArray"


def is_device_array(value):
    """Whether `value` lives in GPU memory: a DeviceBuffer, anything with
    `__cuda_array_interface__`, or a simulator device array."""
    return type(value) is DeviceBuffer or hasattr(value, "__cuda_array_interface__") or _is_simulator_array(value)
