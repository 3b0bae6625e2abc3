"""Devices: the CPU always; GPUs arrive with the CUDA backend."""
import functools


class Device:
    """A place arrays live and computations run."""

    def __init__(self, platform, id_):
        self.platform = platform
        self.id = id_
        self.device_kind = platform
        self.process_index = 0

    def __repr__(self):
        return f"{self.platform.capitalize()}Device(id={self.id})" if self.platform != "cpu" else f"CpuDevice(id={self.id})"


@functools.lru_cache(maxsize=None)
def cpu_device():
    return Device("cpu", 0)


def devices(backend=None):
    if backend not in (None, "cpu"):
        raise RuntimeError(f"Backend {backend!r} is not available; available backends: ['cpu']")
    return [cpu_device()]


def local_devices(process_index=None, backend=None):
    return devices(backend)


def device_count(backend=None):
    return len(devices(backend))


def local_device_count(backend=None):
    return device_count(backend)


def process_count():
    return 1


def process_index():
    return 0


def default_backend():
    return "cpu"
