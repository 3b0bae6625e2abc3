"""Growth (issue #19): what Numba and llvmlite keep of a program in native memory is freed with
its last jit cache entry (codegen/cache_release.py): the LLVM module leaves Numba's execution
engine, and llvmlite's pass managers are deleted when collected."""
import ctypes
import gc

import numpy as np
import pytest

import omnistage
from omnistage.codegen import cache_release


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost".split()]


def _malloc_in_use():
    """Bytes malloc has handed out and not had back (glibc's mallinfo2), or skip."""
    try:
        mallinfo2 = ctypes.CDLL(None).mallinfo2
    except (OSError, AttributeError):
        pytest.skip("needs glibc's mallinfo2")
    mallinfo2.restype = _MallInfo2
    return mallinfo2().uordblks


def _run_distinct_programs(count, base):
    """Jit, call and drop `count` programs no other test compiles."""
    x = np.arange(4, dtype=np.float32)
    for k in range(count):
        c = float(base + k) + 0.375
        f = omnistage.jit(lambda v, c=c: v * c - 0.5)
        np.testing.assert_array_equal(np.asarray(f(x)), x * np.float32(c) - np.float32(0.5))
        del f
    gc.collect()


def test_a_dropped_programs_llvm_module_leaves_numbas_execution_engine():
    _run_distinct_programs(1, 7100)  # the runtime's own first compiles (they stay)
    before = cache_release.engine_module_count()
    _run_distinct_programs(4, 7200)
    # Numba on its own keeps one optimized module per program (here +4) for the process's life
    assert cache_release.engine_module_count() - before <= 1


def test_a_live_programs_module_stays_and_runs():
    x = np.arange(4, dtype=np.float32)
    f = omnistage.jit(lambda v: v * 7300.375 - 0.5)
    expected = x * np.float32(7300.375) - np.float32(0.5)
    np.testing.assert_array_equal(np.asarray(f(x)), expected)
    _run_distinct_programs(3, 7310)  # others come and go around it
    np.testing.assert_array_equal(np.asarray(f(x)), expected)


def test_llvmlite_pass_managers_are_deleted_when_collected():
    from numba.core.registry import cpu_target

    omnistage.jit(lambda v: v + 7400.5)(np.float32(1))  # installs the fixes
    codegen = cpu_target.target_context.codegen()
    for _ in range(3):  # warm up: LLVM's own one-time allocations
        pm, pb = codegen._function_pass_manager()
        del pm, pb
    start = _malloc_in_use()
    for _ in range(100):
        pm, pb = codegen._function_pass_manager()
        del pm, pb
    per_manager = (_malloc_in_use() - start) / 100
    # undeleted, a function pipeline keeps ~16 KB; what stays is llvmlite's PassBuilder
    # callbacks (~1.5 KB, cache_release's docstring)
    assert per_manager < 6 * 1024


@pytest.mark.slow
def test_native_memory_per_dropped_program_is_bounded():
    _run_distinct_programs(2, 7500)
    start = _malloc_in_use()
    _run_distinct_programs(8, 7600)
    per_program = (_malloc_in_use() - start) / 8
    # measured: ~1.4 MB per program without cache_release, ~140 KB with it (its docstring)
    assert per_program < 600 * 1024, f"{per_program / 1024:.0f} KB of native memory per program"


def test_numba_builds_function_pipelines_for_definitions_only(monkeypatch):
    from llvmlite import ir
    from numba.core.registry import cpu_target

    omnistage.jit(lambda v: v + 7700.5)(np.float32(1))  # installs the fixes
    codegen = cpu_target.target_context.codegen()
    module = codegen._create_empty_module("pipelines")
    double = ir.DoubleType()
    callee = ir.Function(module, ir.FunctionType(double, [double]), "declared_only")
    caller = ir.Function(module, ir.FunctionType(double, [double]), "defined")
    builder = ir.IRBuilder(caller.append_basic_block())
    builder.ret(builder.call(callee, caller.args))
    built = []
    numba_manager = type(codegen)._function_pass_manager
    monkeypatch.setattr(type(codegen), "_function_pass_manager",
                        lambda self, **kw: built.append(1) or numba_manager(self, **kw))
    codegen.create_library("pipelines").add_ir_module(module)
    # one pipeline (and one never-freed PassBuilder) for the definition, none for the declaration
    assert len(built) == 1
