"""What generated CUDA host drivers call (`_cu.<name>`): availability of CUDA, launch
configurations, device allocation and transfers, cuBLAS contractions through CuPy, and the
host round trip for statements that have no kernel yet.

Works on a real GPU (Numba's CUDA target, CuPy when installed) and under Numba's CUDA simulator
(`NUMBA_ENABLE_CUDASIM=1`, where device arrays are NumPy arrays in disguise and kernels run as
Python threads). Importing this module never touches the CUDA driver; `check()` does.
"""
import functools

import numpy as np
from numba import config as _numba_config

from ...core.devices import storage_dtype

try:
    from numba import cuda
except ImportError:  # a Numba without its CUDA target (newer Numba ships it as numba-cuda)
    cuda = None

SIMULATED = bool(_numba_config.ENABLE_CUDASIM) and cuda is not None
# small arrays get small grids on purpose: no "under-utilization" warning for them
_numba_config.CUDA_LOW_OCCUPANCY_WARNINGS = 0

# Launch geometry. The simulator runs every thread as a Python thread, so it gets tiny blocks
# and few of them (grid-stride loops make results independent of the geometry).
THREADS_PER_BLOCK = 8 if SIMULATED else 256
MAX_BLOCKS = 4 if SIMULATED else 65535
# a reduction splits each output's elements over at most this many blocks (then a second pass)
MAX_PARTIALS = 4 if SIMULATED else 1024
# elements each thread sums before the block reduction, when choosing how many blocks to use
ITEMS_PER_THREAD = 2 if SIMULATED else 16
# enough blocks to fill the device without splitting reductions
BUSY_BLOCKS = 2 if SIMULATED else 528

_INSTALL = 'install the CUDA extra with pip install -e ".[cuda]"'


class CudaUnavailableError(RuntimeError):
    """CUDA cannot be used here: no GPU, no driver or no toolkit (the message says which)."""


@functools.lru_cache(maxsize=None)
def _probe():
    """None when CUDA is usable, else the one-sentence reason."""
    if SIMULATED:
        return None
    if cuda is None:
        return "Numba's CUDA target (numba.cuda) is not installed"
    try:
        available = cuda.is_available()
    except Exception as e:  # noqa: BLE001 - any driver failure means "not usable"
        return f"the CUDA driver failed to start ({type(e).__name__}: {_first_line(e)}); check the NVIDIA driver installation"
    if available:
        return _target_loads()
    error = cuda.cuda_error()
    text = str(error or "")
    if "driver library cannot be found" in text or "libcuda" in text:
        return "no NVIDIA driver was found (libcuda.so could not be loaded): this machine has no usable NVIDIA GPU"
    if "no CUDA-capable device" in text or "CUDA_ERROR_NO_DEVICE" in text or not text.strip():
        return "the NVIDIA driver found no CUDA-capable GPU"
    return f"CUDA could not be initialized ({_first_line(text)})"


def _target_loads():
    """None when Numba's CUDA lowering imports, else why not. It is imported at the first kernel
    compile, and a numba-cuda release older than the NumPy beside it fails there (numba-cuda
    0.30.4 with NumPy 2.5: `np.row_stack` is gone), which would surface as an AttributeError
    from deep inside the first jitted call."""
    import importlib

    try:
        importlib.import_module("numba.cuda.cudaimpl")
    except Exception as e:  # noqa: BLE001 - any failure here means no kernel can be compiled
        try:
            from importlib.metadata import version

            target = f"numba-cuda {version('numba-cuda')}"
        except Exception:  # noqa: BLE001 - a Numba that bundles its CUDA target
            target = "numba.cuda"
        return (f"Numba's CUDA target ({target}) fails to load with NumPy {np.__version__} "
                f"({type(e).__name__}: {_first_line(e)}); install a NumPy release it supports")
    return None


def _first_line(e):
    lines = [line.strip() for line in str(e).splitlines() if line.strip()]
    return lines[0] if lines else type(e).__name__


def is_usable():
    return _probe() is None


def check():
    """Raise CudaUnavailableError (one sentence: what is missing, how to fix) unless usable."""
    reason = _probe()
    if reason is not None:
        raise CudaUnavailableError(
            f"The CUDA backend cannot run: {reason}. Use a machine with an NVIDIA GPU and "
            f"{_INSTALL}, or run on the CPU (backend='cpu')."
        )


def toolkit_error(exc):
    """The one-sentence error for a kernel that cannot be compiled because NVVM is missing,
    or None when `exc` is some other failure."""
    text = str(exc)
    if "NVVM" in text or "libnvvm" in text or "libNVVM" in text or "CUDA_HOME" in text:
        return CudaUnavailableError(
            f"The CUDA toolkit's compiler (libNVVM) was not found, so kernels cannot be "
            f"compiled: {_INSTALL} (or set CUDA_HOME to a CUDA toolkit)."
        )
    return None


@functools.lru_cache(maxsize=None)
def _cupy():
    """CuPy when it is installed and a real GPU runs (cuBLAS, CuPy-backed arrays), else None."""
    if SIMULATED:
        return None
    try:
        import cupy
    except ImportError:
        return None
    return cupy


def have_cublas():
    return _cupy() is not None


# --- launch configuration ----------------------------------------------------------------


def grid(n):
    """(blocks, threads) for a grid-stride loop over `n` elements (n >= 1)."""
    blocks = min(MAX_BLOCKS, -(-n // THREADS_PER_BLOCK))
    return max(blocks, 1), THREADS_PER_BLOCK


def partials(outputs, size):
    """How many blocks share one reduction output: enough to fill the device, one when the
    outputs alone do, never more than the elements need."""
    if outputs >= BUSY_BLOCKS:
        return 1
    need = -(-size // (THREADS_PER_BLOCK * ITEMS_PER_THREAD))
    want = -(-BUSY_BLOCKS // max(outputs, 1))
    return max(1, min(need, want, MAX_PARTIALS))


def blocks(n):
    """Blocks for a block-per-item loop over `n` items."""
    return max(1, min(MAX_BLOCKS, n)), THREADS_PER_BLOCK


# --- memory ------------------------------------------------------------------------------


def empty(shape, dtype):
    """A new device array (CuPy's allocator when CuPy runs, so results are CuPy-backed)."""
    cp = _cupy()
    if cp is not None:
        return cp.empty(shape, dtype=dtype)
    return cuda.device_array(shape, dtype=np.dtype(dtype))


def to_device(value):
    """A host value copied to a new device array (rank 0 included); a bfloat16 one as its bits
    (`storage_dtype`: the DeviceBuffer that holds the result carries the dtype)."""
    value = np.ascontiguousarray(value)
    value = value.view(storage_dtype(value.dtype))
    cp = _cupy()
    if cp is not None:
        return cp.asarray(value)
    return cuda.to_device(value)


def scalar(value, dtype):
    """A rank-0 value as the 1-element device array the kernels read (`x[0]`)."""
    return to_device(np.asarray([value], dtype=dtype))


def to_host(array):
    """A device array's contents as a NumPy array (synchronizes)."""
    if isinstance(array, np.ndarray):
        return array
    if hasattr(array, "get") and _cupy() is not None and isinstance(array, _cupy().ndarray):
        return array.get()
    if hasattr(array, "copy_to_host"):
        return array.copy_to_host()
    return cuda.as_cuda_array(array).copy_to_host()


def as_kernel_arg(array):
    """What a kernel accepts for a device array given by the user (anything with
    `__cuda_array_interface__`, or a simulator array)."""
    if SIMULATED or hasattr(array, "__cuda_array_interface__"):
        return array
    raise TypeError(f"expected a device array, got {type(array).__name__}")


def rank1(array):
    """A rank-0 device array as the 1-element array kernels read."""
    return array.reshape((1,))


def rank0(array):
    """A 1-element kernel result as the rank-0 array the program returns."""
    return array.reshape(())


def truth(array):
    """The boolean value of a device scalar (the one read-back a host branch needs)."""
    return bool(to_host(array).reshape(-1)[0])


def index(array):
    return int(to_host(array).reshape(-1)[0])


def synchronize():
    if not SIMULATED:
        cuda.synchronize()


# --- scan steps ----------------------------------------------------------------------------


def step(xs, t):
    """Slice `t` of the stacked `xs` as a device array (a rank-0 slice stays a 1-element array)."""
    return xs[t:t + 1] if xs.ndim == 1 else xs[t]


@functools.lru_cache(maxsize=None)
def _copy_kernel():
    @cuda.jit
    def copy_flat(dst, src):
        for i in range(cuda.grid(1), dst.shape[0], cuda.gridsize(1)):
            dst[i] = src[i]

    return copy_flat


def store_step(ys, t, y):
    """ys[t] = y on the device (ys is contiguous: a fresh allocation)."""
    dst = step(ys, t).reshape(-1)
    src = y.reshape(-1) if y.ndim != 1 else y
    if dst.shape[0]:
        _copy_kernel()[grid(dst.shape[0])](dst, src)


def bitcast(array, dtype, shape=None):
    """The same bits as `dtype`, a view on the device (no copy), of device shape `shape`.

    Viewing as a narrower or wider type rescales the last axis (its bytes are regrouped), which
    the reshape to `shape` turns into lax's extra or dropped trailing axis. Regrouping bytes needs
    C-contiguous memory, so a strided device array given by the user is first copied densely, on
    the device."""
    dtype = np.dtype(dtype)
    if shape is not None and not int(np.prod(shape)):
        return empty(shape, dtype)  # no bits to keep (and Numba cannot reshape an empty view)
    if dtype.itemsize != array.dtype.itemsize:
        array = _dense(array)
    view = array.view(dtype)
    if isinstance(view, np.ndarray):  # a NumPy array given to the simulator
        view = cuda.to_device(view)
    return view if shape is None or tuple(view.shape) == tuple(shape) else view.reshape(shape)


def _dense(array):
    """`array`, or a C-contiguous copy of it made on the device (regrouping bytes and flat
    loops need contiguous memory; a device array given by the user may be strided)."""
    if array.flags["C_CONTIGUOUS"]:
        return array
    cp = _cupy()
    if cp is not None:
        return cp.ascontiguousarray(cp.asarray(array))  # any device array, through its interface
    dense = empty(tuple(array.shape), array.dtype)
    dense[:] = np.asarray(array) if SIMULATED else array  # Numba: an assignment kernel
    return dense


# Both directions move bits, never convert values: the GPU's float16 <-> float32 conversion
# (cvt) turns every NaN into 0x7FFF, so a bitcast of a float16 parameter or result would lose
# its NaN's payload, which the CPU backend and NumPy's views keep (seen on an H200).
def from_narrow(array, dtype):
    """The float32 values a program computed in float32 (`narrow_floats`) takes for its
    float16/bfloat16 (`dtype`) parameter held in device array `array` (exact, on the device)."""
    if np.dtype(dtype).name == "bfloat16":
        return _map_bits(array, np.float32, "bfloat16_from_bits")
    return _map_bits(_dense(array).view(np.uint16), np.float32, "float16_from_bits")


def to_narrow(array, dtype):
    """A float32 result on the value set of float16/bfloat16 `dtype` as the device memory that
    holds `dtype` (`storage_dtype`; exact, on the device)."""
    if np.dtype(dtype).name == "bfloat16":
        return _map_bits(array, storage_dtype(dtype), "bfloat16_to_bits")
    return _map_bits(array, np.uint16, "float16_to_bits").view(np.float16)


def _map_bits(array, dtype, helper):
    out = empty(tuple(array.shape), dtype)
    n = int(np.prod(array.shape))
    if n:
        _bits_kernel(helper)[grid(n)](out.reshape(n), _dense(array).reshape(n))
    return out


@functools.lru_cache(maxsize=None)
def _bits_kernel(helper):
    """dst[i] = device_support.<helper>(src[i]) over flat arrays: float16's or bfloat16's bits
    <-> float32."""
    from . import device_support

    convert = getattr(device_support, helper)

    @cuda.jit
    def map_bits(dst, src):
        for i in range(cuda.grid(1), dst.shape[0], cuda.gridsize(1)):
            dst[i] = convert(src[i])

    return map_bits


def astype(array, dtype):
    """A device array's values as `dtype` (a new device array), converted on the device (CuPy's
    astype, or a copy kernel whose assignment casts)."""
    dtype = np.dtype(dtype)
    if SIMULATED:  # the simulator's device arrays are host memory
        return to_device(to_host(array).astype(dtype))
    cp = _cupy()
    if cp is not None:
        return cp.asarray(array).astype(dtype)
    out = empty(tuple(array.shape), dtype)
    n = int(np.prod(array.shape))
    if n:
        _copy_kernel()[grid(n)](out.reshape(n), _dense(array).reshape(n))
    return out


# --- contractions through cuBLAS -------------------------------------------------------------


def dot_general_cublas(lhs, rhs, lperm, rperm, bmkn, out_shape, dtype):
    """dot_general as one batched matmul by CuPy (cuBLAS): operands transposed to
    (batch, free, contracting) and (batch, contracting, free)."""
    cp = _cupy()
    B, M, K, N = bmkn
    lhs3 = cp.ascontiguousarray(cp.asarray(lhs).transpose(lperm)).reshape((B, M, K))
    rhs3 = cp.ascontiguousarray(cp.asarray(rhs).transpose(rperm)).reshape((B, K, N))
    return cp.matmul(lhs3, rhs3).astype(dtype, copy=False).reshape(out_shape)


# --- the host round trip ---------------------------------------------------------------------


def _host_copies(operands, shapes):
    """NumPy copies of device arrays (or literals) holding values of `shapes`."""
    return [np.asarray(o) if np.isscalar(o) else to_host(o).reshape(shape) for o, shape in zip(operands, shapes)]


def debug_print(shapes, *operands, **params):
    """omnistage.debug.print on the device: host copies of `operands` (device arrays of
    `shapes`, or literals) printed by the primitive's implementation; returns the token."""
    from ...core.primitive import registry

    registry["debug_print"].impl(*_host_copies(operands, shapes), **params)
    return scalar(True, np.bool_)


def host_call(prim, params, in_shapes, out_avals, *operands):
    """Run primitive `prim` with its NumPy implementation on host copies of `operands` (of
    shapes `in_shapes`) and copy the results (`out_avals`: (shape, dtype) pairs) back: the
    statements that have no CUDA kernel yet."""
    from ...core.primitive import registry

    outs = registry[prim].impl(*_host_copies(operands, in_shapes), **params)
    if not registry[prim].multiple_results:
        outs = [outs]
    results = []
    for value, (shape, dtype) in zip(outs, out_avals):
        value = np.asarray(value, dtype=dtype).reshape(shape)
        results.append(to_device(value.reshape((1,)) if value.ndim == 0 else value))
    return results
