"""Executables for the CUDA backend: a Program's generated kernels and host driver
(`CudaProgram`), and the default executable that follows its inputs' device
(`FollowDevice`: the CPU executable for host inputs, the CUDA one for GPU inputs)."""
import warnings

import numpy as np

from ...core.devices import DeviceBuffer
from .. import disk_cache, narrow_floats
from . import runtime


class CudaProgram:
    """A Program compiled to Numba CUDA kernels plus a host driver. Takes host or device
    arrays, returns DeviceBuffers (results stay on the GPU)."""

    backend = "cuda"

    def __init__(self, program):
        from .emit import emit_module

        runtime.check()
        self.program = program
        widened = narrow_floats.widen(program)  # float16/bfloat16 computed in float32
        narrow_in, narrow_out = narrow_floats.narrow_boundary(program)
        self._narrow_in = [(i, n) for i, n in enumerate(narrow_in) if n]
        self._narrow_out = [(i, n) for i, n in enumerate(narrow_out) if n]
        self._out_dtypes = list(narrow_out)  # bfloat16 results are held as their bits
        self.source, self.fn_name, self.kernel_params = emit_module(widened)
        self.module = disk_cache.load_module(self.source, owner=self)  # freed with its last owner
        self._fn = getattr(self.module, self.fn_name)
        self._consts = [_device_operand(np.asarray(c)) for c in widened.consts.values()]
        self._scalar_out = [a.ndim == 0 for a in program.out_avals]
        self._fallback = None  # the interpreter, if a kernel failed to compile

    def __call__(self, *args):
        if self._fallback is not None:
            return self._run_on_host(args)
        operands = [_device_operand(a) for a in args]
        for i, dtype in self._narrow_in:
            operands[i] = runtime.from_narrow(operands[i], dtype)
        try:
            if runtime.SIMULATED:
                # simulated kernels do NumPy scalar arithmetic, which warns on the integer
                # wraparound and float overflow that compiled kernels do silently
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    outs = self._fn(*operands, *self._consts)
            else:
                outs = self._fn(*operands, *self._consts)
        except Exception as e:  # noqa: BLE001 - only compile errors are handled
            if not _is_numba_compile_error(e):
                raise
            missing = runtime.toolkit_error(e)
            if missing is not None:
                raise missing from None
            warnings.warn(
                f"omnistage: a CUDA kernel of the program {self.program.name!r} failed to compile "
                f"({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}); running the program "
                f"with the NumPy interpreter on the host instead. Please report this with the output "
                f"of jit(f, backend='cuda').lower(...).compile().as_text().",
                RuntimeWarning,
                stacklevel=3,
            )
            from ..executable import InterpretedProgram

            self._fallback = InterpretedProgram(self.program)
            return self._run_on_host(args)
        if self._narrow_out:
            outs = list(outs)
            for i, dtype in self._narrow_out:
                outs[i] = runtime.to_narrow(outs[i], dtype)  # exact: the values are on the narrow set
        return [DeviceBuffer(runtime.rank0(o) if s else o, dtype)
                for o, s, dtype in zip(outs, self._scalar_out, self._out_dtypes)]

    def _run_on_host(self, args):
        host = [np.asarray(a) for a in args]
        outs = [np.asarray(o) for o in self._fallback(*host)]
        return [DeviceBuffer(runtime.to_device(o), o.dtype) for o in outs]

    def as_text(self):
        return self.source


def _device_operand(value):
    """A kernel operand: device arrays pass through, host values are copied to the device;
    rank-0 values become the 1-element arrays the kernels read."""
    if type(value) is DeviceBuffer:
        data = value.data
    elif isinstance(value, (np.ndarray, np.generic)) or np.isscalar(value):
        data = runtime.to_device(np.asarray(value))
    else:
        data = runtime.as_kernel_arg(value)
    return runtime.rank1(data) if len(data.shape) == 0 else data


def _is_numba_compile_error(exc):
    from numba.core.errors import NumbaError

    return isinstance(exc, NumbaError) or type(exc).__name__ in ("NvvmSupportError", "NvvmError", "CudaSupportError")


class FollowDevice:
    """jit's default executable once GPU arrays exist: computation follows its inputs' device,
    as in JAX. Host inputs run the CPU executable; any GPU input runs the CUDA one (built on
    first use), with host inputs copied over."""

    def __init__(self, program, cpu):
        self.program = program
        self.cpu = cpu
        self.backend = cpu.backend
        self._cuda = None

    def __call__(self, *args):
        for a in args:
            if type(a) is DeviceBuffer:
                if self._cuda is None:
                    self._cuda = CudaProgram(self.program)
                return self._cuda(*args)
        return self.cpu(*args)

    def as_text(self):
        return self.cpu.as_text()


def compile_for_cuda(program):
    return CudaProgram(program)
