"""Derivative rules of `fft`, as JAX's: the transform is linear, so its tangent is the same
transform of the tangent and its cotangent is its transpose. The DFT matrix is symmetric, so
FFT and IFFT transpose to themselves; RFFT and IRFFT transpose to each other, with a mask
weighting the Hermitian-symmetric bins the real transform stores once (JAX's
`_rfft_transpose`/`_irfft_transpose`, JAX's complex convention included)."""
import math

import numpy as np

from ..core.array import aval_of
from ..lax import elementwise as E
from ..lax import shapes as S
from ..lax.fourier import fft
from .rules import def_linear


def _bin_weights(shape, n, dtype):
    """(1, 2, ..., 2, 1 if n is even) along the last axis of an rfft output of `shape`: the
    bins that stand for two conjugate ones count twice."""
    w = np.full(shape[-1], 2.0)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    return S.broadcast_in_dim(np.asarray(w, dtype=dtype), shape, (len(shape) - 1,))


def _rfft_transpose(ct, fft_lengths):
    aval = aval_of(ct)
    scaled = E.div(E.conj(ct), _bin_weights(aval.shape, fft_lengths[-1], aval.dtype))
    out = fft(scaled, "IRFFT", fft_lengths)
    return E.mul(out, np.asarray(math.prod(fft_lengths), dtype=aval_of(out).dtype))


def _irfft_transpose(ct, fft_lengths):
    x = fft(ct, "RFFT", fft_lengths)
    aval = aval_of(x)
    scale = np.asarray(1 / math.prod(fft_lengths), dtype=aval.dtype)
    return E.conj(E.mul(E.mul(x, _bin_weights(aval.shape, fft_lengths[-1], aval.dtype)), scale))


def _fft_transpose(ct, x, *, fft_type, fft_lengths):
    if fft_type == "RFFT":
        return _rfft_transpose(ct, fft_lengths)
    if fft_type == "IRFFT":
        return _irfft_transpose(ct, fft_lengths)
    return fft(ct, fft_type, fft_lengths)


def_linear("fft", _fft_transpose)
