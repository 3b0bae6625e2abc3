"""Growth (issue #19), CUDA backend: a program's generated module and its kernels are freed
with its last jit cache entry (CudaProgram loads its module with itself as owner)."""
import gc
import sys
import weakref

import numpy as np
import pytest

import omnistage
from omnistage.codegen.cuda import runtime

pytestmark = pytest.mark.skipif(not runtime.is_usable(), reason="neither a GPU nor Numba's CUDA simulator is usable")


def test_a_programs_kernels_and_module_are_freed_with_its_last_jit_cache_entry():
    x = np.arange(8, dtype=np.float32)
    f = omnistage.jit(lambda v: v * 5123.25 + 1.0, backend="cuda")
    compiled = f.lower(x).compile()
    np.testing.assert_array_equal(np.asarray(compiled(x)), x * np.float32(5123.25) + np.float32(1))
    module = compiled.executable.module
    name = module.__name__
    kernels = [weakref.ref(v) for k, v in vars(module).items() if not k.startswith("_") and callable(v)
               and type(v).__module__.startswith("numba")]
    assert kernels and name in sys.modules
    refs = weakref.ref(module), weakref.ref(compiled.executable)
    del f, compiled, module
    gc.collect()
    assert [r() for r in refs] == [None, None]
    assert [k() for k in kernels] == [None] * len(kernels)
    assert name not in sys.modules


def test_a_module_shared_by_two_programs_stays_until_both_go():
    x = np.arange(8, dtype=np.float32)
    f, g = [omnistage.jit(lambda v: v * 5124.5, backend="cuda") for _ in range(2)]
    cf, cg = f.lower(x).compile(), g.lower(x).compile()
    name = cf.executable.module.__name__
    del f, cf
    gc.collect()
    assert name in sys.modules
    np.testing.assert_array_equal(np.asarray(cg(x)), x * np.float32(5124.5))
    del g, cg
    gc.collect()
    assert name not in sys.modules
