"""The `fft` primitive (JAX's `lax.fft`): a complex-to-complex (FFT/IFFT), real-to-complex
(RFFT) or complex-to-real (IRFFT) discrete Fourier transform over the trailing
`len(fft_lengths)` dimensions, unnormalized forward and 1/n-normalized inverse, as XLA's.

Parameters as staged: `fft_type` is the type's name ('FFT', 'IFFT', 'RFFT', 'IRFFT') and
`fft_lengths` a tuple of ints (the logical lengths: for IRFFT the last is the real output's).
The NumPy implementation is `numpy.fft`'s n-dimensional functions, computing in the input's
precision as XLA does. Imports core and the lax modules beside it only.
"""
import enum

import numpy as np

from ..core import dtypes
from ..core.aval import ShapedArray
from ..core.primitive import Primitive
from . import _rules as R
from . import elementwise as E


class FftType(enum.IntEnum):
    """Which transform `fft` computes (JAX's `lax.FftType`)."""

    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3


def _fft_type_name(fft_type):
    if isinstance(fft_type, str):
        name = fft_type.upper()
        if name not in FftType.__members__:
            raise ValueError(f"Unknown FFT type {fft_type!r}: use 'FFT', 'IFFT', 'RFFT' or 'IRFFT'.")
        return name
    if isinstance(fft_type, (FftType, int, np.integer)) and int(fft_type) in FftType._value2member_map_:
        return FftType(int(fft_type)).name
    raise TypeError(f"Unknown FFT type value {fft_type!r}: use lax.FftType or its name.")


_COMPLEX_OF = {np.dtype("float32"): np.dtype("complex64"), np.dtype("float64"): np.dtype("complex128")}
_REAL_OF = {v: k for k, v in _COMPLEX_OF.items()}


def _fft_abstract(x, *, fft_type, fft_lengths):
    k = len(fft_lengths)
    if k > x.ndim:
        raise ValueError(f"FFT input shape {x.shape} must have at least as many dimensions as fft_lengths {fft_lengths}.")
    if any(n < 0 for n in fft_lengths):
        raise ValueError(f"fft_lengths must be non-negative, got {fft_lengths}.")
    lead, minor = x.shape[:x.ndim - k], x.shape[x.ndim - k:]
    if fft_type == "RFFT":
        if x.dtype not in _COMPLEX_OF:
            raise ValueError(f"RFFT input must be float32 or float64, got {x.dtype}.")
        if minor != fft_lengths:
            raise ValueError(f"RFFT input shape {x.shape} minor dimensions must be equal to fft_lengths {fft_lengths}.")
        return ShapedArray(lead + fft_lengths[:-1] + (fft_lengths[-1] // 2 + 1,), _COMPLEX_OF[x.dtype])
    if x.dtype not in _REAL_OF:
        raise ValueError(f"{fft_type} input must be complex64 or complex128, got {x.dtype}.")
    if fft_type == "IRFFT":
        if minor[:-1] != fft_lengths[:-1] or minor[-1] != fft_lengths[-1] // 2 + 1:
            raise ValueError(
                f"IRFFT input shape {x.shape} minor dimensions must be fft_lengths {fft_lengths} with the "
                f"last one n // 2 + 1."
            )
        return ShapedArray(lead + fft_lengths, _REAL_OF[x.dtype])
    if minor != fft_lengths:
        raise ValueError(f"{fft_type} input shape {x.shape} minor dimensions must be equal to fft_lengths {fft_lengths}.")
    return ShapedArray(x.shape, x.dtype)


_NUMPY_FFT = {"FFT": np.fft.fftn, "IFFT": np.fft.ifftn, "RFFT": np.fft.rfftn, "IRFFT": np.fft.irfftn}


@R.quiet
def _fft_impl(x, *, fft_type, fft_lengths):
    x = np.asarray(x)
    out = _fft_abstract(ShapedArray(x.shape, x.dtype), fft_type=fft_type, fft_lengths=fft_lengths)
    if out.size == 0 or 0 in fft_lengths:
        return np.zeros(out.shape, out.dtype)
    axes = tuple(range(x.ndim - len(fft_lengths), x.ndim))
    return np.asarray(_NUMPY_FFT[fft_type](x, s=fft_lengths, axes=axes), dtype=out.dtype)


fft_p = Primitive("fft", _fft_abstract, _fft_impl)


def fft(x, fft_type, fft_lengths):
    """The DFT of type `fft_type` over the trailing `len(fft_lengths)` dimensions of `x`
    (JAX's `lax.fft`); real inputs of FFT/IFFT/IRFFT are made complex, integers inexact."""
    (x,) = R.operands(x)
    name = _fft_type_name(fft_type)
    lengths = tuple(int(n) for n in fft_lengths)
    if name == "RFFT":
        if dtypes.is_complex(x.dtype):
            raise ValueError("only real valued inputs supported for rfft")
        target = dtypes.real_dtype(dtypes.complex_dtype(dtypes.to_inexact(x.dtype)))  # float16 -> float32
    else:
        target = dtypes.complex_dtype(dtypes.to_inexact(x.dtype))
    if x.dtype != target:
        x = E.convert_element_type(x, target)
    if not lengths:
        return x
    return fft_p.bind(x, fft_type=name, fft_lengths=lengths)


__all__ = ["fft", "fft_p", "FftType"]
