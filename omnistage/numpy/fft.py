"""`omnistage.numpy.fft`: NumPy's discrete Fourier transforms as JAX has them (`fft`, `ifft`,
`rfft`, `irfft`, `hfft`, `ihfft`, their 2-D and n-D forms with `s`/`axes`/`norm`,
`fftfreq`, `rfftfreq`, `fftshift`, `ifftshift`).

Each transform moves its axes last, crops or zero-pads them to `s`, and binds the `fft`
primitive over the trailing dimensions (at most three at a time, as XLA: more are done three
and the rest in turn, as JAX does), then scales for `norm`. Results are complex64/float32 for
32-bit inputs, as JAX's. Imports core and lax only (and this package's public functions).
"""
import math
import operator

import numpy as np

from .. import lax
from ..core import dtypes
from ..lax.fourier import FftType

_NORMS = ("backward", "ortho", "forward")


def _asarray(a):
    from . import asarray  # noqa: PLC0415 - the package imports this module

    return asarray(a)


def _norm_scale(func_name, s, norm):
    """The factor `norm` multiplies the unnormalized (forward) or 1/n-normalized (inverse)
    transform by, or None for none."""
    if norm is None or norm == "backward":
        return None
    if norm not in _NORMS:
        raise ValueError(f'Invalid norm value {norm!r}; should be "backward", "ortho" or "forward".')
    n = float(math.prod(s))
    inverse = func_name.startswith("i")
    if norm == "ortho":
        return math.sqrt(n) if inverse else 1 / math.sqrt(n)
    return n if inverse else 1 / n


def _scaled(x, factor):
    if factor is None:
        return x
    return lax.mul(x, np.asarray(factor, dtype=x.dtype))


def _fft_core(func_name, fft_type, a, s, axes, norm):
    from . import moveaxis, pad  # noqa: PLC0415

    full_name = f"omnistage.numpy.fft.{func_name}"
    arr = _asarray(a)
    if s is not None:
        s = tuple(operator.index(n) for n in s)
        if any(n <= 0 for n in s):
            raise ValueError(f"{full_name}: the lengths s={s} must be positive.")
    if s is not None and axes is not None and len(s) != len(axes):
        raise ValueError(f"{full_name}: s={s} and axes={tuple(axes)} have different lengths.")
    orig_axes = axes
    if axes is None:
        axes = range(arr.ndim) if s is None else range(arr.ndim - len(s), arr.ndim)
    axes = tuple(operator.index(ax) for ax in axes)
    norm_axes = tuple(ax % arr.ndim if arr.ndim else ax for ax in axes)
    if len(set(norm_axes)) != len(norm_axes):
        raise ValueError(f"{full_name} does not support repeated axes. Got axes {tuple(orig_axes)}.")
    if any(not -arr.ndim <= ax < max(arr.ndim, 1) for ax in axes) or (axes and arr.ndim == 0):
        raise ValueError(f"{full_name}: axes {axes} out of range for an array of rank {arr.ndim}.")
    if orig_axes is not None:
        axes = tuple(range(arr.ndim - len(axes), arr.ndim))
        arr = moveaxis(arr, norm_axes, axes)
    if s is not None:
        in_s = list(arr.shape)
        for axis, n in zip(axes, s):
            in_s[axis] = n
        if fft_type == FftType.IRFFT:
            in_s[-1] = in_s[-1] // 2 + 1
        if any(d < c for d, c in zip(in_s, arr.shape)):
            arr = arr[tuple(slice(n) for n in in_s)]
        if any(d > c for d, c in zip(in_s, arr.shape)):
            arr = pad(arr, [(0, n - c) for n, c in zip(in_s, arr.shape)])
    elif fft_type == FftType.IRFFT:
        s = [arr.shape[axis] for axis in axes[:-1]]
        if axes:
            s += [max(0, 2 * (arr.shape[axes[-1]] - 1))]
    else:
        s = [arr.shape[axis] for axis in axes]
    out = _scaled(_fft_core_nd(arr, fft_type, tuple(s)), _norm_scale(func_name, s, norm))
    if orig_axes is not None:
        out = moveaxis(out, axes, norm_axes)
    return out


def _fft_core_nd(arr, fft_type, s):
    """The transform over the trailing len(s) axes, three at a time (XLA's limit, JAX's split)."""
    from . import moveaxis  # noqa: PLC0415

    if len(s) <= 3:
        return lax.fft(arr, fft_type, s)
    n = 2 if len(s) == 4 else 3
    src = tuple(range(arr.ndim - len(s), arr.ndim - n))
    dst = tuple(range(arr.ndim - len(s) + n, arr.ndim))
    if fft_type in (FftType.RFFT, FftType.FFT):
        arr = lax.fft(arr, fft_type, s[-n:])
        arr = moveaxis(arr, src, dst)
        arr = _fft_core_nd(arr, FftType.FFT, s[:-n])
        return moveaxis(arr, dst, src)
    arr = moveaxis(arr, src, dst)
    arr = _fft_core_nd(arr, FftType.IFFT, s[:-n])
    arr = moveaxis(arr, dst, src)
    return lax.fft(arr, fft_type, s[-n:])


def fftn(a, s=None, axes=None, norm=None):
    """n-dimensional discrete Fourier transform (`numpy.fft.fftn`)."""
    return _fft_core("fftn", FftType.FFT, a, s, axes, norm)


def ifftn(a, s=None, axes=None, norm=None):
    """n-dimensional inverse discrete Fourier transform (`numpy.fft.ifftn`)."""
    return _fft_core("ifftn", FftType.IFFT, a, s, axes, norm)


def rfftn(a, s=None, axes=None, norm=None):
    """n-dimensional transform of real input, last axis halved (`numpy.fft.rfftn`)."""
    return _fft_core("rfftn", FftType.RFFT, a, s, axes, norm)


def irfftn(a, s=None, axes=None, norm=None):
    """Inverse of `rfftn`: real output of lengths `s` (`numpy.fft.irfftn`)."""
    return _fft_core("irfftn", FftType.IRFFT, a, s, axes, norm)


def _check_1d(func_name, axis):
    if isinstance(axis, (list, tuple)):
        raise ValueError(
            f"omnistage.numpy.fft.{func_name} does not support multiple axes. Please use "
            f"omnistage.numpy.fft.{func_name}n. Got axis = {axis!r}."
        )


def _fft_core_1d(func_name, fft_type, a, n, axis, norm):
    _check_1d(func_name, axis)
    return _fft_core(func_name, fft_type, a, None if n is None else [n], None if axis is None else [axis], norm)


def fft(a, n=None, axis=-1, norm=None):
    """One-dimensional discrete Fourier transform (`numpy.fft.fft`)."""
    return _fft_core_1d("fft", FftType.FFT, a, n, axis, norm)


def ifft(a, n=None, axis=-1, norm=None):
    """One-dimensional inverse discrete Fourier transform (`numpy.fft.ifft`)."""
    return _fft_core_1d("ifft", FftType.IFFT, a, n, axis, norm)


def rfft(a, n=None, axis=-1, norm=None):
    """One-dimensional transform of real input: the n // 2 + 1 non-negative frequencies."""
    return _fft_core_1d("rfft", FftType.RFFT, a, n, axis, norm)


def irfft(a, n=None, axis=-1, norm=None):
    """Inverse of `rfft`: real output of length n (default 2 * (m - 1))."""
    return _fft_core_1d("irfft", FftType.IRFFT, a, n, axis, norm)


def hfft(a, n=None, axis=-1, norm=None):
    """Transform of a Hermitian-symmetric signal given by its first half: real output."""
    conj_a = lax.conj(_complex(a))
    _check_1d("hfft", axis)
    nn = (conj_a.shape[axis] - 1) * 2 if n is None else n
    out = _fft_core_1d("hfft", FftType.IRFFT, conj_a, n, axis, norm)
    return lax.mul(out, np.asarray(nn, dtype=out.dtype))


def ihfft(a, n=None, axis=-1, norm=None):
    """Inverse of `hfft`: the first half of the Hermitian spectrum of a real signal."""
    _check_1d("ihfft", axis)
    arr = _asarray(a)
    nn = arr.shape[axis] if n is None else n
    out = lax.conj(_fft_core_1d("ihfft", FftType.RFFT, arr, n, axis, norm))
    return lax.mul(out, np.asarray(1 / nn, dtype=out.dtype))


def _complex(a):
    arr = _asarray(a)
    target = dtypes.complex_dtype(dtypes.to_inexact(arr.dtype))
    return arr if arr.dtype == target else lax.convert_element_type(arr, target)


def _check_2d(func_name, axes):
    if len(axes) != 2:
        raise ValueError(f"omnistage.numpy.fft.{func_name} only supports 2 axes. Got axes = {axes!r}.")


def fft2(a, s=None, axes=(-2, -1), norm=None):
    """Two-dimensional discrete Fourier transform (`numpy.fft.fft2`)."""
    _check_2d("fft2", axes)
    return _fft_core("fft2", FftType.FFT, a, s, axes, norm)


def ifft2(a, s=None, axes=(-2, -1), norm=None):
    """Two-dimensional inverse discrete Fourier transform (`numpy.fft.ifft2`)."""
    _check_2d("ifft2", axes)
    return _fft_core("ifft2", FftType.IFFT, a, s, axes, norm)


def rfft2(a, s=None, axes=(-2, -1), norm=None):
    """Two-dimensional transform of real input (`numpy.fft.rfft2`)."""
    _check_2d("rfft2", axes)
    return _fft_core("rfft2", FftType.RFFT, a, s, axes, norm)


def irfft2(a, s=None, axes=(-2, -1), norm=None):
    """Inverse of `rfft2` (`numpy.fft.irfft2`)."""
    _check_2d("irfft2", axes)
    return _fft_core("irfft2", FftType.IRFFT, a, s, axes, norm)


def _check_freq_args(name, n, d):
    if isinstance(n, (list, tuple)):
        raise ValueError(f"The n argument of omnistage.numpy.fft.{name} only takes an int. Got n = {list(n)}.")
    if isinstance(d, (list, tuple)):
        raise ValueError(f"The d argument of omnistage.numpy.fft.{name} only takes a single value. Got d = {list(d)}.")


def fftfreq(n, d=1.0, *, dtype=None, device=None):
    """Sample frequencies of an n-point transform with sample spacing d: [0, 1, ..., -1] / (d n)."""
    from . import arange, asarray, true_divide  # noqa: PLC0415

    _check_freq_args("fftfreq", n, d)
    out_dtype = dtypes.canonicalize_dtype(dtype or dtypes.default_float_dtype())
    dt = dtypes.real_dtype(dtypes.to_inexact(out_dtype))
    i = arange(n, dtype=dt)
    k = lax.sub(lax.rem(lax.add(i, np.asarray(n // 2, dt)), np.asarray(max(n, 1), dt)), np.asarray(n // 2, dt))
    out = true_divide(k, asarray(d * n, dtype=dt))
    return out if out.dtype == out_dtype else lax.convert_element_type(out, out_dtype)


def rfftfreq(n, d=1.0, *, dtype=None, device=None):
    """Sample frequencies of `rfft`'s bins: [0, 1, ..., n // 2] / (d n)."""
    from . import arange, asarray, true_divide  # noqa: PLC0415

    _check_freq_args("rfftfreq", n, d)
    dt = dtypes.canonicalize_dtype(dtype or dtypes.default_float_dtype())
    return true_divide(arange(0, n // 2 + 1, dtype=dt), asarray(d * n, dtype=dt))


def _shifts(x, axes, sign):
    if axes is None:
        axes = tuple(range(x.ndim))
        return axes, [sign * (dim // 2) for dim in x.shape]
    if isinstance(axes, int):
        return axes, sign * (x.shape[axes] // 2)
    return tuple(axes), [sign * (x.shape[ax] // 2) for ax in axes]


def fftshift(x, axes=None):
    """Moves the zero frequency to the centre (`numpy.fft.fftshift`)."""
    from . import roll  # noqa: PLC0415

    x = _asarray(x)
    axes, shift = _shifts(x, axes, 1)
    return roll(x, shift, axes)


def ifftshift(x, axes=None):
    """Inverse of `fftshift` (`numpy.fft.ifftshift`)."""
    from . import roll  # noqa: PLC0415

    x = _asarray(x)
    axes, shift = _shifts(x, axes, -1)
    return roll(x, shift, axes)


__all__ = [
    "fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn",
    "rfftn", "irfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift",
]
