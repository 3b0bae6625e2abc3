"""Every cached Numba function of ours names its fast-math flags and error model
(codegen/numba_flags.py): unset, Numba builds a callee with its caller's flags but caches it under
its argument types alone, so which build a process loaded depended on which process compiled it
first (a complex product fused into multiply-adds after a program had compiled it)."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from numba.core.registry import CPUDispatcher

from omnistage.codegen import kernels, numba_flags, support


def _cached_dispatchers(module):
    for name, value in vars(module).items():
        if isinstance(value, CPUDispatcher) and value._cache.__class__.__name__ != "NullCache":
            yield name, value


@pytest.mark.parametrize("module", [kernels, support], ids=lambda m: m.__name__)
def test_every_cached_function_names_its_flags(module):
    found = dict(_cached_dispatchers(module))
    assert len(found) > 5
    unset = sorted(name for name, d in found.items()
                   if "fastmath" not in d.targetoptions or "error_model" not in d.targetoptions)
    assert not unset


def test_the_kernels_and_the_helpers_get_their_own_builds():
    assert kernels.lu.targetoptions["fastmath"] == numba_flags.CONTRACTED["fastmath"]
    assert kernels.eig.targetoptions["fastmath"] is False
    assert support.complex_mul.targetoptions["fastmath"] is False
    assert support.complex_mul.targetoptions["error_model"] == "numpy"


# One process compiles a contracted program that multiplies complex numbers (so support.complex_mul
# is compiled inside it), the next calls the helper directly from the same cache.
PROGRAM = """
import numpy as np, omnistage, omnistage.numpy as jnp
x = np.full(64, 1.0000001 + 1.0000001j)
omnistage.jit(lambda a, b: a * b + a)(x, x).block_until_ready()
"""
DIRECT = """
import numpy as np
from omnistage.codegen import support
z = np.complex64(1.0000001 + 1.0000001j)  # the program's dtype (64-bit mode is off)
print(repr(float(support.complex_mul(z, z).real)))
"""


def test_a_direct_call_after_a_program_gets_the_helpers_own_build(tmp_path):
    env = dict(os.environ, OMNISTAGE_CACHE_DIR=str(tmp_path / "omnistage"),
               NUMBA_CACHE_DIR=str(tmp_path / "numba"), OMNISTAGE_C_TIER="0")
    for code in (PROGRAM, DIRECT):
        done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True,
                              text=True, timeout=600)
        assert done.returncode == 0, done.stderr
    # each product rounded, then their difference: exactly 0 (a fused multiply-add leaves the
    # product's rounding error, ~1e-7)
    assert float(done.stdout) == 0.0


# Numba's complex product is a subroutine cached per process: before numba_flags.install, the first
# caller's fast-math flags decided every later caller's bits.
SUBROUTINES = """
import numba, numpy as np
from omnistage.codegen import numba_flags
numba_flags.install()
fused = numba.njit(fastmath={'contract'})(lambda a, b: a * b)
plain = numba.njit(lambda a, b: a * b)
z = np.complex64(1.0000001 + 1.0000001j)
print(repr(float(fused(z, z).real)), repr(float(plain(z, z).real)))
"""


def test_a_subroutine_compiled_for_a_contracted_caller_is_not_reused_by_others():
    done = subprocess.run([sys.executable, "-c", SUBROUTINES], capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, NUMBA_CACHE_DIR=os.devnull))
    assert done.returncode == 0, done.stderr
    fused, plain = map(float, done.stdout.split())
    assert fused != 0.0 and plain == 0.0


def test_generated_modules_and_vmath_say_the_contracted_flags():
    from omnistage.codegen import emit_cpu
    from omnistage.codegen import vmath

    assert numba_flags.decorator_text(numba_flags.CONTRACTED) == "fastmath={'contract'}, error_model='numpy'"
    assert numba_flags.decorator_text(numba_flags.ROUNDED) == "fastmath=False, error_model='numpy'"
    assert emit_cpu.FLOAT_OPTIONS == numba_flags.decorator_text(numba_flags.CONTRACTED)
    kernels_ = [vmath.lookup("exp", "float32"), vmath.lookup("log1p", "float64"), vmath.lookup("tanh", "float32")]
    for kernel in kernels_:
        assert kernel.targetoptions["fastmath"] == numba_flags.CONTRACTED["fastmath"]
        assert kernel.targetoptions["error_model"] == "numpy"
