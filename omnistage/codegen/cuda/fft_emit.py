"""The CUDA lowering of `fft`: cuFFT through CuPy (`cupy.fft`'s n-dimensional functions, in
the operand's precision, as the CPU's rocket-fft call) when CuPy runs on a real GPU, else the
NumPy implementation on a host copy (the simulator, or no CuPy):

    if _cu.have_cublas():
        fft_1 = _cufft.transform(x, 'rfftn', (4, 6), (1, 2), np.complex64)  # cuFFT
    else:
        fft_1, = _cu.host_call('fft', ...)

`KERNELS` maps the primitive to its rule `rule(driver, e)` (a `HostDriver` and the statement);
`emit.py` merges it into `OPAQUE_KERNELS`."""
import ast

from ..emit_cpu import dtype_expr
from ..provenance import loc_comment

_FUNCTION = {"FFT": "fftn", "IFFT": "ifftn", "RFFT": "rfftn", "IRFFT": "irfftn"}


def _emit_fft(driver, e):
    (x,), (out,) = e.ins, e.outs
    aval = driver.program.avals[out]
    lengths = tuple(int(n) for n in e.params["fft_lengths"])
    if aval.size == 0 or 0 in lengths:
        return driver.emit_host_call(e)
    ndim = driver.aval(x).ndim
    axes = tuple(range(ndim - len(lengths), ndim))
    driver.module.require("from omnistage.codegen.cuda import fft_runtime as _cufft")
    function = _FUNCTION[e.params["fft_type"]]
    driver.line(f"if _cu.have_cublas():{loc_comment(e.stmt)}")
    driver.line(f"{out} = _cufft.transform({ast.unparse(x)}, {function!r}, {lengths!r}, {axes!r}, {dtype_expr(aval.dtype)})  # cuFFT", 2)
    driver.line("else:")
    start = len(driver.lines)
    driver.emit_host_call(e)
    driver.lines[start:] = ["    " + line for line in driver.lines[start:]]


KERNELS = {"fft": _emit_fft}
