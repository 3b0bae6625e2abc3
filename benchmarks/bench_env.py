"""Environment settings shared by the benchmark scripts, applied before NumPy, Numba or JAX
load (they read them at import): one thread each by default, and JAX on the CPU only.

One thread each compares the code, not the thread pools: on a small shared machine two BLAS
thread pools (NumPy's and SciPy's, which Numba's np.dot uses) spinning against each other made
matmul times swing 2-30 ms, and NUMBA_NUM_THREADS=1 turns omnistage's parallel loops off.
`--threads default` in the scripts that offer it leaves every pool at its own default.
"""
import os

SINGLE_THREAD_ENV = {
    "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1",
    "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
}
CPU_ONLY_ENV = {
    "JAX_PLATFORMS": "cpu",  # a CPU benchmark: never probe accelerators
    "TF_CPP_MIN_LOG_LEVEL": "3",  # XLA's slow-constant-folding alarms
}


def apply(single_thread=True):
    """Set the variables the user has not set already."""
    for k, v in {**(SINGLE_THREAD_ENV if single_thread else {}), **CPU_ONLY_ENV}.items():
        os.environ.setdefault(k, v)
