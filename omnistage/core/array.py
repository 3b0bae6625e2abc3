"""`omnistage.Array`: an immutable array backed by a NumPy ndarray on the CPU.

Operators and the array methods (`sum`, `reshape`, ...) are installed by the op library
(`omnistage.numpy`) on both `Array` and the `Tracer` base, so the two behave alike.
"""
import numpy as np

from . import dtypes
from .aval import ShapedArray
from .devices import DeviceBuffer
from .sequence_protocol import LeadingAxisSequence
from .tracer import Tracer

_SET_MSG = (
    "'{}' object does not support item assignment. omnistage arrays are immutable. Instead "
    "of x[idx] = y, use x = x.at[idx].set(y) or another .at[] method "
    "(set, add, multiply, divide, min, max, get)."
)


class Array(LeadingAxisSequence):
    """An immutable, strongly or weakly typed, concrete array."""

    __slots__ = ("_value", "weak_type", "_aval", "__weakref__")
    __array_priority__ = 100
    __hash__ = None  # unhashable, as in JAX

    def __init__(self, value, weak_type=False):
        v = np.asarray(value)
        if v.flags.writeable:  # never alias a buffer the caller can still mutate
            v = v.copy()
            v.flags.writeable = False
        self._value = v
        self.weak_type = bool(weak_type)
        self._aval = None

    @classmethod
    def from_numpy(cls, value, aval):
        """Wrap an impl's output, forcing the dtype its aval says (impls are checked)."""
        if type(value) is np.ndarray:
            v = value
        elif type(value) is DeviceBuffer:  # a CUDA executable's output stays on the GPU
            return GpuArray.from_buffer(value, aval)
        else:
            v = np.asarray(value)
        dt = v.dtype
        if dt is not aval.dtype and dt != aval.dtype:  # (NumPy's built-in dtypes are singletons)
            v = v.astype(aval.dtype)
        if v.shape != aval.shape:
            raise AssertionError(f"internal: impl gave shape {v.shape}, abstract eval {aval.shape}")
        obj = cls.__new__(cls)
        v.flags.writeable = False  # (unconditionally: each `flags` read builds an object; every eager op wraps one)
        obj._value = v
        obj.weak_type = aval.weak_type
        obj._aval = aval
        return obj

    @property
    def aval(self):
        if self._aval is None:
            self._aval = ShapedArray(self._value.shape, self._value.dtype, self.weak_type)
        return self._aval

    shape = property(lambda self: self._value.shape)
    dtype = property(lambda self: self._value.dtype)
    ndim = property(lambda self: self._value.ndim)
    size = property(lambda self: self._value.size)
    nbytes = property(lambda self: self._value.nbytes)
    itemsize = property(lambda self: self._value.itemsize)

    @property
    def device(self):
        from .devices import cpu_device

        return cpu_device()

    def devices(self):
        return {self.device}

    def block_until_ready(self):
        return self

    def is_fully_addressable(self):
        return True

    def __array__(self, dtype=None, copy=None):
        if copy:
            return np.array(self._value, dtype=dtype)
        return self._value if dtype is None else self._value.astype(dtype, copy=False)

    def __setitem__(self, idx, value):
        raise TypeError(_SET_MSG.format(type(self).__name__))

    def __bool__(self):
        return bool(self._value)

    def __int__(self):
        return int(self._value)

    def __float__(self):
        return float(self._value)

    def __complex__(self):
        return complex(self._value)

    def __index__(self):
        if not dtypes.is_integer(self.dtype) and not dtypes.is_bool(self.dtype):
            raise TypeError(f"only integer arrays can be used as an index, got {self.dtype}")
        return int(self._value)

    def __format__(self, spec):
        if self.ndim == 0:
            return format(self._value[()], spec)
        return format(str(self), spec)

    def item(self, *args):
        return self._value.item(*args)

    def tolist(self):
        return self._value.tolist()

    def copy(self):
        return Array(self._value.copy(), self.weak_type)

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        return (Array, (np.array(self._value), self.weak_type))

    def __str__(self):
        return str(self._value)

    def __repr__(self):
        body = np.array2string(self._value, separator=", ", prefix="Array(")
        weak = ", weak_type=True" if self.weak_type else ""
        return f"Array({body}, dtype={self.dtype.name}{weak})"

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        value = self._value
        if not value.flags.writeable and (max_version is None or tuple(max_version) < (1, 0)):
            # DLPack before 1.0 cannot say "read-only": such a consumer gets a copy to own
            value = value.copy()
        given = {"max_version": max_version, "dl_device": dl_device, "copy": copy}
        return value.__dlpack__(stream=stream, **{k: v for k, v in given.items() if v is not None})

    def __dlpack_device__(self):
        return self._value.__dlpack_device__()

    def to_device(self, device, /, *, stream=None):
        """The array on `device` (the Array API's method): itself for the host; a GPU copy is
        made by omnistage.device_put (core does not reach the device runtime)."""
        if device is None or device == self.device:
            return self
        raise ValueError(f"Array.to_device({device}): use omnistage.device_put(x, device) to copy a host array to a GPU.")


def aval_of(x):
    """The aval of an operand: Array, Tracer, or a NumPy value (canonical dtype)."""
    if isinstance(x, (Array, Tracer)):
        return x.aval
    dt, weak = dtypes.dtype_and_weak(x)
    return ShapedArray(np.shape(x), dt, weak)


def is_array_like(x):
    return isinstance(x, (Array, Tracer, np.ndarray, np.generic, bool, int, float, complex))


class GpuArray(Array):
    """An Array in GPU memory: its `_value` is a `DeviceBuffer` (the CPU `Array` keeps a NumPy
    array). jit passes the buffer to the executable as it is, so jitted chains stay on the
    device; everything that needs the values (printing, `np.asarray`, `.item()`, eager
    operations) works on a host copy."""

    __slots__ = ()

    @classmethod
    def from_buffer(cls, buffer, aval):
        if buffer.dtype != aval.dtype or buffer.shape != aval.shape:
            raise AssertionError(f"internal: device result {buffer.shape} {buffer.dtype}, abstract eval {aval}")
        obj = cls.__new__(cls)
        obj._value = buffer
        obj.weak_type = aval.weak_type
        obj._aval = aval
        return obj

    @property
    def device(self):
        return self._value.device

    def block_until_ready(self):
        self._value.block_until_ready()
        return self

    @property
    def __cuda_array_interface__(self):
        """Zero-copy access for CuPy, Numba and PyTorch (a real GPU only)."""
        return self._value.__cuda_array_interface__

    def _host_array(self):
        return Array.from_numpy(self._value.to_host(), self.aval)

    def __array__(self, dtype=None, copy=None):
        return self._value.__array__(dtype, copy)

    def copy(self):
        return self  # immutable: a copy on the same device is indistinguishable

    def __reduce__(self):
        return (Array, (np.array(self._value.to_host()), self.weak_type))

    def __dlpack__(self, *args, **kwargs):
        return self._value.shared_data().__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._value.shared_data().__dlpack_device__()


def _on_host_copy(name):
    def method(self, *args, **kwargs):
        return getattr(self._host_array(), name)(*args, **kwargs)

    method.__name__ = name
    return method


for _name in ("__bool__", "__int__", "__float__", "__complex__", "__index__", "__format__",
              "item", "tolist", "__str__", "__repr__"):
    setattr(GpuArray, _name, _on_host_copy(_name))
