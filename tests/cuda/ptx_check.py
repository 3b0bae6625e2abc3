"""Compile every kernel the CUDA tests generate to PTX for sm_90 with the real Numba CUDA
target (no GPU needed, only the toolkit's NVVM). Run as a script in a process without the
simulator; prints one line per kernel and exits non-zero if any fails.

    python -m tests.cuda.ptx_check
"""
import os
import sys

assert not os.environ.get("NUMBA_ENABLE_CUDASIM"), "run without NUMBA_ENABLE_CUDASIM"


def kernels_of(fun, args):
    import omnistage
    from omnistage.codegen import disk_cache
    from omnistage.codegen.cuda.emit import emit_module
    from omnistage.staging.cleanup import cleanup

    program = cleanup(omnistage.make_jaxpr(fun)(*args))
    source, _, params = emit_module(program)
    module = disk_cache.load_module(source)
    for name, sig in params.items():
        yield name, getattr(module, name), sig


def argument_types(sig):
    from numba import from_dtype, types

    return tuple(types.Array(from_dtype(__import__("numpy").dtype(dt)), ndim, "A") for dt, ndim in sig)


def toolkit_missing():
    """Why PTX cannot be produced here (None when a trivial kernel compiles): the toolkit's
    libNVVM, or with the numba-cuda package also NVRTC (the nvidia-cuda-nvrtc wheel)."""
    try:
        from numba import cuda, float32
        from numba.cuda.cudadrv import nvvm

        if not nvvm.is_available():
            return "the CUDA toolkit's libNVVM was not found (set CUDA_HOME or install the toolkit)"

        def probe(a):
            a[0] = float32(1)

        cuda.compile_ptx(probe, (float32[:],), cc=(9, 0))
    except Exception as e:  # noqa: BLE001 - a missing library means no PTX here, said once
        text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        return f"the CUDA toolkit cannot compile here ({type(e).__name__}: {text[:200]})"
    return None


def main():
    from numba import cuda, float32, int32, uint16

    from omnistage.codegen.cuda import runtime
    from tests.cuda.programs import PROGRAMS

    missing = toolkit_missing()
    if missing:
        print(f"SKIP: {missing}")
        return 0
    failures = 0
    count = 0
    runtime_kernels = [  # the scan-step copy; bfloat16 parameters and results to and from bits
        (runtime._copy_kernel(), (float32[:], float32[:])), (runtime._copy_kernel(), (int32[:], int32[:])),
        (runtime._bits_kernel("bfloat16_from_bits"), (float32[:], uint16[:])),
        (runtime._bits_kernel("bfloat16_to_bits"), (uint16[:], float32[:]))]
    for kernel, sig in runtime_kernels:
        count += 1
        cuda.compile_ptx(kernel.py_func, sig, cc=(9, 0))
    for name, fun, make_args in PROGRAMS:
        for kname, kernel, sig in kernels_of(fun, make_args()):
            count += 1
            try:
                ptx, _ = cuda.compile_ptx(kernel.py_func, argument_types(sig), cc=(9, 0))
                assert ".target sm_90" in ptx
            except Exception as e:  # noqa: BLE001 - reported per kernel
                failures += 1
                print(f"FAIL {name}.{kname}: {type(e).__name__}: {str(e).strip().splitlines()[0][:300]}")
    print(f"{count - failures}/{count} kernels compiled to PTX for sm_90")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
