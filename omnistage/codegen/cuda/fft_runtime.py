"""What the generated CUDA host drivers call for `fft` (imported by them as `_cufft`):
cuFFT through CuPy's n-dimensional transforms. Used only when `runtime.have_cublas()`."""


def transform(x, function, lengths, axes, dtype):
    """`cupy.fft.<function>` of device array `x` over `axes` with lengths `lengths`, as `dtype`
    (CuPy keeps single precision, as numpy.fft does)."""
    import cupy as cp  # noqa: PLC0415 - present whenever runtime.have_cublas() is true

    result = getattr(cp.fft, function)(cp.asarray(x), s=lengths, axes=axes)
    return result.astype(dtype, copy=False)
