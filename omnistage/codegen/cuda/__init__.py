"""The CUDA backend: Numba CUDA kernels generated from a Program (`emit.py`), the host-side
runtime they call (`runtime.py`), libdevice math for kernels (`device_support.py`) and the
executables jit runs (`executable.py`). Tested under Numba's CUDA simulator where no GPU is
present (`NUMBA_ENABLE_CUDASIM=1`)."""
