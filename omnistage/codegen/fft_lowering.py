"""Numba CPU lowering of the `fft` primitive: a call of `numpy.fft`'s n-dimensional function
inside the generated njit function, which rocket-fft (a maintained pocketfft binding, an
install requirement) makes compilable; it transforms in the operand's precision, as the
NumPy implementation does:

    fft_1 = np.fft.rfftn(np.ascontiguousarray(x), s=(4, 6), axes=(1, 2))  # rfft over the last two

Without rocket-fft installed a program with an FFT has no Numba lowering and runs on the
interpreter (`Unsupported`). Registered in `emit_cpu.OPAQUE_RULES` (emit_cpu imports this
module); imports nothing else of the code generator's.
"""
import ast
import functools
import importlib.util

from . import emit_cpu, numba_extensions
from .provenance import loc_comment

_FUNCTION = {"FFT": "fftn", "IFFT": "ifftn", "RFFT": "rfftn", "IRFFT": "irfftn"}


@functools.lru_cache(maxsize=None)
def have_rocket_fft():
    """Whether numpy.fft compiles inside @njit (rocket-fft registers it with Numba)."""
    return importlib.util.find_spec("rocket_fft") is not None


def _emit_fft(em, e):
    (x,) = e.ins
    (out,) = e.outs
    if not have_rocket_fft():
        raise emit_cpu.Unsupported("fft (install rocket-fft to compile numpy.fft inside Numba)")
    numba_extensions.require("rocket_fft")  # deferred at other programs' compiles
    p = e.params
    aval = em.program.avals[out]
    lengths = tuple(int(n) for n in p["fft_lengths"])
    if aval.size == 0 or 0 in lengths:
        em.line(f"{out} = {emit_cpu.zeros_expr(aval.shape, aval.dtype)}{loc_comment(e.stmt)}")
        return
    ndim = em.aval(x).ndim
    axes = tuple(range(ndim - len(lengths), ndim))
    call = f"np.fft.{_FUNCTION[p['fft_type']]}(_rt.contiguous({ast.unparse(x)}), s={lengths!r}, axes={axes!r})"
    em.line(f"{out} = {call}{loc_comment(e.stmt)}")


emit_cpu.OPAQUE_RULES["fft"] = _emit_fft
