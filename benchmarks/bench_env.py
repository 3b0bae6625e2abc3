"""Environment settings shared by the benchmark scripts, applied before NumPy, Numba or JAX
load (they read them at import): one thread each by default, and JAX on the CPU only.

One thread each compares the code, not the thread pools: on a small shared machine two BLAS
thread pools (NumPy's and SciPy's, which Numba's np.dot uses) spinning against each other made
matmul times swing 2-30 ms, and NUMBA_NUM_THREADS=1 turns omnistage's parallel loops off.
`--threads default` in the scripts that offer it leaves every pool at its own default.
"""
import os
import shutil
import sys
import time

SINGLE_THREAD_ENV = {
    "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1",
    "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
}
CPU_ONLY_ENV = {
    "JAX_PLATFORMS": "cpu",  # a CPU benchmark: never probe accelerators
    "TF_CPP_MIN_LOG_LEVEL": "3",  # XLA's slow-constant-folding alarms
}


# what an omnistage cache directory holds of the programs themselves (generated modules, native
# libraries, their records and build locks: program keys are hex); the rest (the GEMM pool, the
# float32 kernel object, the op-by-op tier's kernels `omnistage_aot_ops-*`/`omnistage_ops_*`, the
# runtime kernels' machine code) is compiled once per machine
PROGRAM_FILES = ("omnistage_gen_*", "omnistage_aot_[0-9a-f]*", "omnistage_c_*")


def copy_without_programs(warm, fresh):
    """Copy cache directory `warm` to `fresh` without its programs: a machine that has run
    omnistage before, compiling these programs for the first time (issue 17's first call)."""
    shutil.copytree(warm, fresh, ignore=shutil.ignore_patterns(*PROGRAM_FILES))


def settle(limit_s=60.0):
    """Wait for what omnistage compiles in the background (optimized builds, a program's fused
    library while the op-by-op tier answers), so the calls timed next are the steady state's."""
    background = sys.modules.get("omnistage.codegen.c_background")
    deadline = time.monotonic() + limit_s
    while background is not None and background.pending() and time.monotonic() < deadline:
        time.sleep(0.01)


def apply(single_thread=True):
    """Set the variables the user has not set already."""
    for k, v in {**(SINGLE_THREAD_ENV if single_thread else {}), **CPU_ONLY_ENV}.items():
        os.environ.setdefault(k, v)
