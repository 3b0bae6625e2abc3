"""Generated programs call runtime kernels through function pointers (`codegen/kernel_calls`):
the kernel's IR is not linked into the program, a program loaded from Numba's disk cache in a
fresh process finds its kernels' cells registered before its machine code is linked, and the
AOT builder (which needs self-contained code) links kernels in as before."""
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import omnistage
import omnistage.numpy as jnp
from omnistage.codegen import kernel_calls
from omnistage.codegen import kernels as kn
from omnistage.codegen.executable import NumbaProgram

pytestmark = pytest.mark.numba_path  # the Numba build's kernel cells (the native tier builds eig in C)


def _radius_and_transpose(w):
    return jnp.max(jnp.abs(jnp.linalg.eigvals(w)), axis=-1), jnp.swapaxes(w, 1, 2) * 2.0


def _expected(w):
    return np.max(np.abs(np.linalg.eigvals(w)), axis=-1), np.swapaxes(w, 1, 2) * 2.0


def _check(got, w):
    for g, e in zip(got, _expected(w)):
        np.testing.assert_allclose(np.asarray(g), e, rtol=1e-5)


def test_program_ir_declares_the_kernel_cell_and_holds_no_kernel_code():
    w = np.random.RandomState(0).rand(8, 3, 3).astype(np.float32)
    # a program no earlier run compiled (machine code loaded from the disk cache has no IR)
    unique = float(time.time_ns() % 997 + 2)
    compiled = omnistage.jit(lambda w: _radius_and_transpose(w * unique), backend="cpu").lower(w).compile()
    _check(compiled(w / unique), w)
    program = compiled.executable
    assert isinstance(program, NumbaProgram) and program.cache_status == "compiled (cache miss)"
    (llvm,) = program._fn.inspect_llvm().values()
    assert "@omnistage_kernel_" in llvm
    # the eig kernel's own functions are declared nowhere and defined nowhere in the program
    for cres in kn.eig.overloads.values():
        assert cres.fndesc.llvm_func_name not in llvm


def test_symbols_are_stable_and_distinct_per_overload():
    a = kernel_calls.Rebind("omnistage.codegen.kernels", "eig", ("array(float64, 3d, C)",)).symbol
    assert a == kernel_calls.Rebind("omnistage.codegen.kernels", "eig", ("array(float64, 3d, C)",)).symbol
    assert a != kernel_calls.Rebind("omnistage.codegen.kernels", "eig", ("array(complex128, 3d, C)",)).symbol
    assert a != kernel_calls.Rebind("omnistage.codegen.kernels", "eigh", ("array(float64, 3d, C)",)).symbol


def test_rebind_entries_pickle_by_value():
    import pickle

    entry = kernel_calls.Rebind("omnistage.codegen.kernels", "strided_copy", ())
    again = pickle.loads(pickle.dumps(entry))
    assert again == entry and hash(again) == hash(entry)


_CHILD = textwrap.dedent("""
    import sys, numpy as np
    sys.path.insert(0, {root!r})
    import omnistage
    from tests.codegen.test_kernel_calls import _radius_and_transpose, _check
    w = np.random.RandomState(1).rand(5, 3, 3).astype(np.float32)
    _check(omnistage.jit(_radius_and_transpose, backend="cpu")(w), w)
    from omnistage.codegen import kernel_calls
    print("cells", len(kernel_calls._cells))
""")


def test_a_cached_program_finds_its_kernels_in_a_fresh_process(tmp_path):
    """The second process loads the program's machine code from the disk cache: its kernel
    cells must be registered by the program's reload hooks before that code is linked (an
    unresolved symbol aborts the process)."""
    env = dict(os.environ, OMNISTAGE_CACHE_DIR=str(tmp_path / "cache"), OMNISTAGE_AOT="0",
               OMNISTAGE_LOG_COMPILES="1")
    code = _CHILD.format(root=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    runs = [subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
            for _ in range(2)]
    for run in runs:
        assert run.returncode == 0, run.stderr[-3000:]
        assert "cells" in run.stdout
    assert "disk cache" in runs[1].stderr, runs[1].stderr[-2000:]


def test_big_loop_bodies_are_called_by_pointer_and_small_ones_stay_inlinable():
    from omnistage import lax, random

    small = omnistage.jit(lambda n: lax.fori_loop(0, n, lambda i, s: s + i, 0), backend="cpu")
    text = small.lower(10).compile().as_text()
    assert "called_by_pointer" not in text and "@numba.njit" in text
    assert int(small(10)) == 45

    big = omnistage.jit(lambda k: random.gamma(k, 2.5, (50,)), backend="cpu").lower(random.PRNGKey(0)).compile()
    assert "@called_by_pointer(" in big.as_text()
    sample = np.asarray(big(random.PRNGKey(0)))
    assert sample.shape == (50,) and np.all(sample > 0) and 1.0 < sample.mean() < 4.5


def test_read_only_arguments_share_one_overload_for_inputs_and_intermediates():
    """A program's inputs are read-only arrays and its intermediates writable ones: matmul and
    strided_copy type both as read-only, so one compile serves both."""
    a = np.random.RandomState(2).rand(48, 32).astype(np.float32)
    c = np.float32(time.time_ns() % 997 + 2)  # a program no earlier run cached (its kernels load with it)
    fn = omnistage.jit(lambda a: (a.T @ (a * c), jnp.concatenate([a.T, a.T * c], 1)), backend="cpu")
    got = fn(a)
    np.testing.assert_allclose(np.asarray(got[0]), a.T @ (a * c), rtol=1e-5)
    np.testing.assert_array_equal(np.asarray(got[1]), np.concatenate([a.T, a.T * c], 1))
    for kernel, positions in ((kn.matmul, (0, 1)), (kn.strided_copy, (0,))):
        signatures = [s for s in kernel.signatures if str(s[0].dtype) == "float32"]
        assert signatures and all(not s[i].mutable for s in signatures for i in positions), signatures


def test_linked_mode_still_binds_cells():
    """The library builder links kernels in (set_linked), but runtime kernels it loads from the
    cache may call others through their cells: an unbound cell made LLVM abort the builder
    ("Symbol not found: omnistage_kernel_..."), on every process running DP-SGD's step."""
    import numba

    def twice(x):
        return x * 2

    kernel = kernel_calls.entry_kernel(cache=False)(twice)
    was = kernel_calls.set_linked(True)
    try:
        kernel.compile((numba.types.float64,))
    finally:
        kernel_calls.set_linked(was)
    rebind = kernel_calls.Rebind(twice.__module__, twice.__qualname__, (numba.types.float64,))
    assert rebind.symbol in kernel_calls._cells and kernel_calls._cells[rebind.symbol].value
